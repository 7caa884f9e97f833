// SPDX-License-Identifier: GPL-2.0
/*
 * bench-rcvbuf-cap: loader of rcvbuf_cap.bpf.c, the cgroup/setsockopt
 * program a user could deploy instead of the rcvfix module. Attaches it to
 * a cgroup v2 folder and either runs one command there (detached when the
 * command ends) or pins the attachment in bpffs to keep it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "rcvbuf_cap.skel.h"

/* EXIT_KILLED (124) is what run_in_cgroup() returns for a killed COMMAND. */
enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_SETUP = 2, EXIT_KILLED = 124 };

#include "cgroup.h" /* tools/lib: run_in_cgroup() */
#include "util.h" /* tools/lib: die(), parse_long() */

static const char usage[] =
	"Usage: bench-rcvbuf-cap [OPTIONS] -- COMMAND [ARG...]\n"
	"       bench-rcvbuf-cap [OPTIONS] --pin PATH\n"
	"Attach a cgroup/setsockopt BPF program that swallows\n"
	"setsockopt(SOL_SOCKET, SO_RCVBUF, val) when val >= MIN: the call\n"
	"returns 0, the socket keeps its default buffer (tcp_rmem[1]) and\n"
	"autotuning. Smaller requests reach the kernel as usual.\n"
	"With COMMAND: run it in CGROUP, then detach and print the counts.\n"
	"With --pin: pin the attachment at PATH in bpffs and exit; it stays\n"
	"until PATH is removed (rm PATH).\n"
	"\n"
	"  -g, --cgroup DIR   cgroup v2 folder (created if missing; default\n"
	"                     /sys/fs/cgroup/rcvbuf-cap with COMMAND, the root\n"
	"                     /sys/fs/cgroup with --pin)\n"
	"  -m, --min BYTES    smallest request to swallow (default: the second\n"
	"                     field of this namespace's net.ipv4.tcp_rmem / 2,\n"
	"                     rounded up: a request the kernel would double to\n"
	"                     the default or more)\n"
	"  -p, --pin PATH     pin and exit (bpffs, e.g. /sys/fs/bpf/rcvbuf_cap)\n"
	"  -T, --timeout SEC  kill COMMAND after SEC seconds (default 600)\n"
	"  -q, --quiet        no count line at the end\n"
	"  -h, --help         show this help\n"
	"\n"
	"One threshold serves every namespace the cgroup's tasks use.\n"
	"Exit status: COMMAND's; 1 bad usage, 2 setup failed (needs root and\n"
	"a kernel with CONFIG_CGROUP_BPF), 124 COMMAND killed at the timeout.\n";

/* tcp_rmem[1] of the caller's network namespace, halved, rounded up. */
static int default_min(void)
{
	const char *path = "/proc/sys/net/ipv4/tcp_rmem";
	long lo, def, hi;
	FILE *f = fopen(path, "r");

	if (!f || fscanf(f, "%ld %ld %ld", &lo, &def, &hi) != 3)
		die(EXIT_SETUP, "cannot read %s: give --min", path);
	fclose(f);
	return (int)((def + 1) / 2);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const char *prog = "bench-rcvbuf-cap";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cgroup", required_argument, NULL, 'g' },
		{ "min", required_argument, NULL, 'm' },
		{ "pin", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cgroup = NULL, *pin = NULL;
	struct rcvbuf_cap *skel;
	struct bpf_link *link;
	int min = -1, timeout = 600, cgfd, c, ret;
	bool quiet = false;

	while ((c = getopt_long(argc, argv, "+g:m:p:T:qh", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'g':
			cgroup = optarg;
			break;
		case 'm':
			min = (int)parse_long("--min", optarg, 0, INT_MAX,
					      EXIT_USAGE);
			break;
		case 'p':
			pin = optarg;
			break;
		case 'T':
			timeout = (int)parse_long("--timeout", optarg, 1, 86400,
						  EXIT_USAGE);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (!pin == (optind >= argc))
		die(EXIT_USAGE,
		    "give either -- COMMAND or --pin PATH (see --help)");
	if (!cgroup)
		cgroup = pin ? "/sys/fs/cgroup" : "/sys/fs/cgroup/rcvbuf-cap";
	if (min < 0)
		min = default_min();

	if (mkdir(cgroup, 0755) && errno != EEXIST)
		die(EXIT_SETUP, "mkdir %s: %s (is cgroup2 mounted there?)",
		    cgroup, strerror(errno));
	cgfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		die(EXIT_SETUP, "open %s: %s", cgroup, strerror(errno));

	libbpf_set_print(libbpf_quiet);
	skel = rcvbuf_cap__open();
	if (!skel)
		die(EXIT_SETUP, "cannot open the BPF object: %s",
		    strerror(errno));
	skel->rodata->min_val = min;
	if (rcvbuf_cap__load(skel))
		die(EXIT_SETUP,
		    "cannot load the BPF program: %s (root? a "
		    "kernel with CONFIG_CGROUP_BPF?)",
		    strerror(errno));
	link = bpf_program__attach_cgroup(skel->progs.rcvbuf_cap, cgfd);
	if (!link)
		die(EXIT_SETUP, "cannot attach to %s: %s", cgroup,
		    strerror(errno));

	if (pin) {
		if (bpf_link__pin(link, pin))
			die(EXIT_SETUP,
			    "cannot pin at %s: %s (is bpffs mounted "
			    "there?)",
			    pin, strerror(errno));
		if (!quiet)
			fprintf(stderr,
				"%s: attached to %s, SO_RCVBUF >= %d "
				"swallowed; pinned at %s (rm it to detach)\n",
				prog, cgroup, min, pin);
		return EXIT_OK;
	}
	ret = run_in_cgroup(cgroup, argv + optind, timeout, EXIT_SETUP);
	bpf_link__destroy(link);
	if (!quiet)
		fprintf(stderr,
			"%s: SO_RCVBUF >= %d: %llu swallowed, %llu "
			"passed on\n",
			prog, min,
			(unsigned long long)skel->bss->n_swallowed,
			(unsigned long long)skel->bss->n_passed);
	rcvbuf_cap__destroy(skel);
	close(cgfd);
	return ret;
}
