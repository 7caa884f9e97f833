// SPDX-License-Identifier: GPL-2.0
/*
 * bench-sockcost: the cost of one setsockopt() call, from a timed loop of
 * CALLS calls on one TCP socket, and what getsockopt() reports after a
 * set. Under QEMU -icount shift=0 the guest clock advances one nanosecond
 * per executed instruction, so "ns per call" is instructions per call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_FAIL = 2 };

#include "sock.h" /* tools/lib: SO_BUF_LOCK */
#include "util.h" /* tools/lib: die(), parse_long() */

#define MAX_SPECS 16
#define WARMUP_CALLS 1000

/* The SOL_SOCKET options a spec may name. */
static const struct {
	const char *name;
	const char *label;
	int optname;
} options[] = {
	{ "rcvbuf", "SO_RCVBUF", SO_RCVBUF },
	{ "rcvbufforce", "SO_RCVBUFFORCE", SO_RCVBUFFORCE },
	{ "sndbuf", "SO_SNDBUF", SO_SNDBUF },
	{ "keepalive", "SO_KEEPALIVE", SO_KEEPALIVE },
	{ "reuseaddr", "SO_REUSEADDR", SO_REUSEADDR },
	{ "priority", "SO_PRIORITY", SO_PRIORITY },
};

struct spec {
	const char *name;
	const char *label;
	int optname;
	int val;
};

static const char usage[] =
	"Usage: bench-sockcost [OPTIONS] OPTION=VALUE...\n"
	"       bench-sockcost --show VALUE\n"
	"Time CALLS setsockopt(SOL_SOCKET, OPTION, VALUE) calls on one TCP\n"
	"socket per OPTION=VALUE, ROUNDS times, and print nanoseconds per call\n"
	"(minimum, median and maximum over the rounds). In a QEMU guest run with\n"
	"-icount shift=0, one nanosecond is one guest instruction.\n"
	"OPTION: rcvbuf, rcvbufforce, sndbuf, keepalive, reuseaddr, priority.\n"
	"\n"
	"  -n, --calls N      calls per round (default 20000)\n"
	"  -r, --rounds N     rounds (default 5)\n"
	"      --csv          CSV header and one row per OPTION=VALUE\n"
	"      --show VALUE   set SO_RCVBUF to VALUE on a new TCP socket and\n"
	"                     print what getsockopt(SO_RCVBUF) and SO_BUF_LOCK\n"
	"                     return (CSV with --csv)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 success, 1 bad usage, 2 a socket call failed.\n";

static void parse_spec(const char *arg, struct spec *sp)
{
	const char *eq = strchr(arg, '=');
	size_t i, len;

	if (!eq)
		die(EXIT_USAGE,
		    "'%s': expected OPTION=VALUE, e.g. rcvbuf=425984", arg);
	len = eq - arg;
	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		if (strlen(options[i].name) == len &&
		    !strncmp(arg, options[i].name, len)) {
			sp->name = options[i].name;
			sp->label = options[i].label;
			sp->optname = options[i].optname;
			sp->val = (int)parse_long(sp->name, eq + 1, INT_MIN,
						  INT_MAX, EXIT_USAGE);
			return;
		}
	}
	die(EXIT_USAGE, "'%.*s': unknown option (see --help)", (int)len, arg);
}

static int tcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die(EXIT_FAIL, "socket: %s", strerror(errno));
	return fd;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One round: @calls setsockopt() calls, nanoseconds per call. */
static double time_round(int fd, const struct spec *sp, long calls)
{
	double t0, t1;
	long i;
	int bad = 0;

	t0 = now_ns();
	for (i = 0; i < calls; i++)
		bad |= setsockopt(fd, SOL_SOCKET, sp->optname, &sp->val,
				  sizeof(sp->val));
	t1 = now_ns();
	if (bad)
		die(EXIT_FAIL, "setsockopt(%s, %d) failed: %s", sp->name,
		    sp->val, strerror(errno));
	return (t1 - t0) / calls;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void measure(const struct spec *sp, long calls, int rounds, bool csv)
{
	double t[rounds];
	int fd = tcp_socket(), r;

	/* The first calls may take other paths (first lock, cold caches). */
	time_round(fd, sp, WARMUP_CALLS);
	for (r = 0; r < rounds; r++)
		t[r] = time_round(fd, sp, calls);
	close(fd);
	qsort(t, rounds, sizeof(t[0]), cmp_double);
	if (csv)
		printf("%s,%d,%ld,%d,%.1f,%.1f,%.1f\n", sp->name, sp->val,
		       calls, rounds, t[0], t[rounds / 2], t[rounds - 1]);
	else
		printf("%-14s %-10d %ld calls x %d: %.1f ns/call (median %.1f, max %.1f)\n",
		       sp->label, sp->val, calls, rounds, t[0], t[rounds / 2],
		       t[rounds - 1]);
}

static void show(int val, bool csv)
{
	int fd = tcp_socket(), got = -1, lock = -1, rc, err = 0;
	socklen_t len = sizeof(got);

	rc = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val));
	if (rc)
		err = errno;
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len))
		die(EXIT_FAIL, "getsockopt(SO_RCVBUF): %s", strerror(errno));
	len = sizeof(lock);
	if (getsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &lock, &len))
		lock = -1; /* before 5.15 */
	close(fd);
	if (csv) {
		printf("requested,setsockopt_rc,rcvbuf,rcvbuf_locked\n");
		printf("%d,%d,%d,%d\n", val, rc ? -err : 0, got,
		       lock < 0 ? -1 : !!(lock & BUF_LOCK_RCV));
	} else {
		printf("setsockopt(SO_RCVBUF, %d) = %s; getsockopt(SO_RCVBUF) = %d, %s\n",
		       val, rc ? strerror(err) : "0", got,
		       lock < 0		   ? "lock unknown" :
		       lock & BUF_LOCK_RCV ? "locked" :
					     "not locked");
	}
	if (rc)
		exit(EXIT_FAIL);
}

const char *prog = "bench-sockcost";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "calls", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "csv", no_argument, NULL, 'C' },
		{ "show", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct spec specs[MAX_SPECS];
	long calls = 20000, show_val = 0;
	int rounds = 5, n = 0, c, i;
	bool csv = false, do_show = false;

	while ((c = getopt_long(argc, argv, "n:r:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			calls = parse_long("--calls", optarg, 1, 100000000,
					   EXIT_USAGE);
			break;
		case 'r':
			rounds = (int)parse_long("--rounds", optarg, 1, 1000,
						 EXIT_USAGE);
			break;
		case 'C':
			csv = true;
			break;
		case 'S':
			do_show = true;
			show_val = parse_long("--show", optarg, INT_MIN,
					      INT_MAX, EXIT_USAGE);
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (do_show) {
		if (optind < argc)
			die(EXIT_USAGE, "--show takes no OPTION=VALUE");
		show((int)show_val, csv);
		return EXIT_OK;
	}
	if (optind >= argc)
		die(EXIT_USAGE, "nothing to time: give OPTION=VALUE, e.g. "
				"rcvbuf=425984 keepalive=1 (see --help)");
	for (i = optind; i < argc; i++) {
		if (n == MAX_SPECS)
			die(EXIT_USAGE, "at most %d OPTION=VALUE", MAX_SPECS);
		parse_spec(argv[i], &specs[n++]);
	}
	if (csv)
		printf("option,value,calls,rounds,min_ns,median_ns,max_ns\n");
	for (i = 0; i < n; i++)
		measure(&specs[i], calls, rounds, csv);
	return EXIT_OK;
}
