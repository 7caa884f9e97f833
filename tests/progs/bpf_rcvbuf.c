// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_rcvbuf: attach the rcvfix_sockops BPF program to a cgroup v2 folder,
 * run a command inside that cgroup, then print what bpf_setsockopt(SO_RCVBUF)
 * returned at each hook. Drives the BPF-path test (tests/guest/30-bpf.t);
 * with -L, SO_RCVLOWAT is set by a cgroup setsockopt program instead of
 * the kernel (tests/guest/44-rcvlowat-mptcp-arming.t).
 */
#include "cgroup.h"
#include "common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "rcvfix_sockops.h"
#include "rcvfix_sockops.skel.h"

static const char usage[] =
"usage: bpf_rcvbuf -g CGROUP [-c VAL] [-P VAL] [-A VAL] [-R VAL] [-L]\n"
"                  [-p PORT] [-T SECONDS]\n"
"                  -- COMMAND [ARG...]\n"
"Attaches a sockops program to the cgroup v2 folder CGROUP (created if\n"
"missing), runs COMMAND in it, and prints one line per enabled hook:\n"
"  hook=<name> calls=<n> rc=<bpf_setsockopt return> rcvbuf=<SO_RCVBUF after>\n"
"  -c VAL  bpf_setsockopt(SO_RCVBUF, VAL) at TCP_CONNECT_CB (before the SYN)\n"
"  -P VAL  ... at PASSIVE_ESTABLISHED_CB (accepted socket, softirq)\n"
"  -A VAL  ... at ACTIVE_ESTABLISHED_CB (connecting socket, softirq)\n"
"  -R VAL  ... at TIMEOUT_INIT and RWND_INIT on a request socket (a SYN's)\n"
"  -L      a cgroup setsockopt program sets SO_RCVLOWAT with bpf_setsockopt()\n"
"          when COMMAND sets it (the kernel's handler skipped); its line's\n"
"          rcvbuf= is the mark read back\n"
"  -p PORT only for connections with that local or remote port\n"
"  -T SEC  kill COMMAND's process group after SEC seconds (default 30)\n"
"Exit: COMMAND's exit status; 124 if it was killed; 3 on a setup error.\n";

static const char *const hook_names[RCVFIX_HOOK_MAX] = {
	"connect", "passive", "active", "timeout", "rwnd", "lowat",
};

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const char *prog = "bpf_rcvbuf";

int main(int argc, char **argv)
{
	struct rcvfix_sockops_cfg cfg = { 0 };
	const char *cgroup = NULL;
	struct rcvfix_sockops *skel;
	int timeout = 30, cgfd, c, ret;
	bool lowat;
	__u32 key = 0, h;

	while ((c = getopt(argc, argv, "+g:c:P:A:R:Lp:T:h")) != -1) {
		switch (c) {
		case 'g': cgroup = optarg; break;
		case 'c':
			cfg.enabled |= 1U << RCVFIX_HOOK_CONNECT;
			cfg.val[RCVFIX_HOOK_CONNECT] = parse_int("-c", optarg);
			break;
		case 'P':
			cfg.enabled |= 1U << RCVFIX_HOOK_PASSIVE;
			cfg.val[RCVFIX_HOOK_PASSIVE] = parse_int("-P", optarg);
			break;
		case 'A':
			cfg.enabled |= 1U << RCVFIX_HOOK_ACTIVE;
			cfg.val[RCVFIX_HOOK_ACTIVE] = parse_int("-A", optarg);
			break;
		case 'R':
			cfg.enabled |= 1U << RCVFIX_HOOK_TIMEOUT |
				       1U << RCVFIX_HOOK_RWND;
			cfg.val[RCVFIX_HOOK_TIMEOUT] = parse_int("-R", optarg);
			cfg.val[RCVFIX_HOOK_RWND] = cfg.val[RCVFIX_HOOK_TIMEOUT];
			break;
		case 'L': cfg.enabled |= 1U << RCVFIX_HOOK_LOWAT; break;
		case 'p': cfg.port = parse_int("-p", optarg); break;
		case 'T': timeout = parse_int("-T", optarg); break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default: die(EXIT_USAGE, "bad option (try -h)");
		}
	}
	if (!cgroup || optind >= argc)
		die(EXIT_USAGE, "need -g CGROUP and a COMMAND (try -h)");

	if (mkdir(cgroup, 0755) && errno != EEXIST)
		die(EXIT_SETUP, "mkdir %s: %s (is cgroup2 mounted there?)",
		    cgroup, strerror(errno));
	cgfd = open(cgroup, O_RDONLY | O_DIRECTORY);
	if (cgfd < 0)
		die(EXIT_SETUP, "open %s: %s", cgroup, strerror(errno));

	libbpf_set_print(libbpf_quiet);
	skel = rcvfix_sockops__open();
	if (!skel)
		die(EXIT_SETUP, "cannot open the BPF object: %s", strerror(errno));
	/* older kernels cannot load the setsockopt program: only with -L */
	lowat = cfg.enabled & (1U << RCVFIX_HOOK_LOWAT);
	bpf_program__set_autoload(skel->progs.rcvfix_setsockopt, lowat);
	if (rcvfix_sockops__load(skel))
		die(EXIT_SETUP, "cannot load the BPF object: %s (is this kernel "
		    "built with CONFIG_CGROUP_BPF, and are we root?)",
		    strerror(errno));
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.rcvfix_cfg), &key, &cfg,
				BPF_ANY))
		die(EXIT_SETUP, "cannot write the config map: %s",
		    strerror(errno));
	skel->links.rcvfix_sockops =
		bpf_program__attach_cgroup(skel->progs.rcvfix_sockops, cgfd);
	if (!skel->links.rcvfix_sockops)
		die(EXIT_SETUP, "cannot attach to %s: %s", cgroup,
		    strerror(errno));

	if (lowat) {
		skel->links.rcvfix_setsockopt = bpf_program__attach_cgroup(
			skel->progs.rcvfix_setsockopt, cgfd);
		if (!skel->links.rcvfix_setsockopt)
			die(EXIT_SETUP, "cannot attach the setsockopt program to %s: %s",
			    cgroup, strerror(errno));
	}

	ret = run_in_cgroup(cgroup, argv + optind, timeout, EXIT_SETUP);

	for (h = 0; h < RCVFIX_HOOK_MAX; h++) {
		struct rcvfix_sockops_res res = { 0 };

		if (!(cfg.enabled & (1U << h)))
			continue;
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.rcvfix_res), &h,
					&res))
			die(EXIT_SETUP, "cannot read the result map: %s",
			    strerror(errno));
		printf("hook=%s calls=%u rc=%d rcvbuf=%d get_rc=%d\n",
		       hook_names[h], res.calls, res.rc, res.rcvbuf,
		       res.get_rc);
	}
	rcvfix_sockops__destroy(skel);
	close(cgfd);
	return ret;
}
