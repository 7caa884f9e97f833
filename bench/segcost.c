// SPDX-License-Identifier: GPL-2.0
/*
 * bench-segcost: the cost of receiving one segment on a TCP or MPTCP
 * socket, from a timed loop in one process over 127.0.0.1: send SIZE bytes
 * (TCP_NODELAY), poll() the receiving socket until it is readable, recv()
 * them. Loopback delivers within send(), so each turn is one segment
 * through the receive path (tcp_data_ready(), and for MPTCP
 * mptcp_data_ready() and mptcp_poll()). Under QEMU -icount shift=0 the
 * guest clock advances one nanosecond per executed instruction, so "ns
 * per segment" is instructions per segment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_FAIL = 2 };

#include "util.h" /* tools/lib: die(), parse_long() */

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define WARMUP_SEGS 1000

const char *prog = "bench-segcost";

static const char usage[] =
"usage: bench-segcost [-m] [-l LOWAT] [-s SIZE] [-n SEGMENTS] [-r ROUNDS]\n"
"  Receive SEGMENTS segments of SIZE bytes (default 20000 of 1000) on one\n"
"  TCP connection over 127.0.0.1 (-m: MPTCP), each sent, polled for and read\n"
"  in turn; with -l, the receiver sets SO_RCVLOWAT to LOWAT first (at most\n"
"  SIZE, so that every segment makes it readable). Prints the median over\n"
"  ROUNDS rounds (default 5) of nanoseconds per segment, which under QEMU\n"
"  -icount shift=0 are guest instructions per segment:\n"
"    segment_ns=N min_ns=N max_ns=N\n"
"  Exit status: 0 measured, 1 usage, 2 a socket call failed.\n";

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void turn(int snd, int rcv, char *buf, int size)
{
	struct pollfd p = { .fd = rcv, .events = POLLIN };
	int got = 0;

	if (send(snd, buf, size, 0) != size)
		die(EXIT_FAIL, "send: %s", strerror(errno));
	while (got < size) {
		ssize_t n;

		if (poll(&p, 1, 5000) != 1)
			die(EXIT_FAIL, "poll: %s", errno ? strerror(errno) :
							   "not readable in 5 s");
		n = recv(rcv, buf, size - got, MSG_DONTWAIT);
		if (n > 0)
			got += n;
		else if (n == 0 || errno != EAGAIN)
			die(EXIT_FAIL, "recv: %s", n ? strerror(errno) : "EOF");
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	long segs = 20000, lowat = 0, size = 1000, i;
	int rounds = 5, proto = 0, one = 1, lfd, snd, rcv, c, r;
	double *ns;
	char *buf;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	while ((c = getopt(argc, argv, "ml:s:n:r:h")) != -1) {
		switch (c) {
		case 'm': proto = IPPROTO_MPTCP; break;
		case 'l': lowat = parse_long("-l", optarg, 1, 1 << 20, EXIT_USAGE); break;
		case 's': size = parse_long("-s", optarg, 1, 1 << 16, EXIT_USAGE); break;
		case 'n': segs = parse_long("-n", optarg, 1, 10000000, EXIT_USAGE); break;
		case 'r': rounds = (int)parse_long("-r", optarg, 1, 1000, EXIT_USAGE); break;
		case 'h': fputs(usage, stdout); return EXIT_OK;
		default: fprintf(stderr, "Try '%s --help'.\n", prog); return EXIT_USAGE;
		}
	}
	if (optind != argc)
		die(EXIT_USAGE, "unexpected argument '%s' (try --help)", argv[optind]);
	if (lowat > size)
		die(EXIT_USAGE, "-l %ld: at most the segment size %ld", lowat, size);

	lfd = socket(AF_INET, SOCK_STREAM, proto);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, salen) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&sa, &salen))
		die(EXIT_FAIL, "listen on 127.0.0.1: %s%s", strerror(errno),
		    proto ? " (net.mptcp.enabled=0?)" : "");
	snd = socket(AF_INET, SOCK_STREAM, proto);
	if (snd < 0 || connect(snd, (struct sockaddr *)&sa, salen))
		die(EXIT_FAIL, "connect: %s", strerror(errno));
	rcv = accept(lfd, NULL, NULL);
	if (rcv < 0)
		die(EXIT_FAIL, "accept: %s", strerror(errno));
	setsockopt(snd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (lowat && setsockopt(rcv, SOL_SOCKET, SO_RCVLOWAT, &(int){ lowat },
				sizeof(int)))
		die(EXIT_FAIL, "setsockopt(SO_RCVLOWAT): %s", strerror(errno));

	buf = calloc(1, size);
	ns = calloc(rounds, sizeof(*ns));
	if (!buf || !ns)
		die(EXIT_FAIL, "out of memory");
	for (i = 0; i < WARMUP_SEGS; i++)
		turn(snd, rcv, buf, size);
	for (r = 0; r < rounds; r++) {
		double t0 = now_ns();

		for (i = 0; i < segs; i++)
			turn(snd, rcv, buf, size);
		ns[r] = (now_ns() - t0) / segs;
	}
	qsort(ns, rounds, sizeof(*ns), cmp_double);
	printf("segment_ns=%.1f min_ns=%.1f max_ns=%.1f\n", ns[rounds / 2],
	       ns[0], ns[rounds - 1]);
	return EXIT_OK;
}
