// SPDX-License-Identifier: GPL-2.0
/*
 * lowat: measure how often a poll()+recv() TCP reader is woken, with or
 * without SO_RCVLOWAT, while a sender streams a bounded amount of data
 * (bulk, or small paced segments). Proves the SO_RCVLOWAT wakeup property.
 */
#include "common.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

static const char usage[] =
"usage: lowat recv [-a ADDR] [-p PORT] [-l LOWAT] [-T SECONDS]\n"
"       lowat send [-a ADDR] [-p PORT] -n BYTES [-c CHUNK] [-g GAP_US]\n"
"                  [-T SECONDS]\n"
"  recv: listen on ADDR:PORT (default 0.0.0.0:40001), accept one connection,\n"
"        set SO_RCVLOWAT to LOWAT (0: leave unset), then poll()+recv() until\n"
"        EOF; prints 'listening' once ready, then one result line:\n"
"        lowat=.. bytes=.. polls=.. recvs=.. nvcsw=.. nivcsw=.. seconds=..\n"
"        polls_per_mb=.. nvcsw_per_mb=..  (nvcsw: voluntary context\n"
"        switches of the reader, i.e. how often it slept and was woken)\n"
"  send: connect to ADDR:PORT (default 127.0.0.1:40001), send BYTES in\n"
"        writes of CHUNK bytes (default 256 KiB); with -g, TCP_NODELAY and\n"
"        a pause of GAP_US microseconds after each write\n"
"  -T    give up after this long (default 60), exit 124\n";

static void do_recv(int fd, int lowat)
{
	static char buf[4 << 20];
	long long bytes = 0, polls = 0, recvs = 0;
	struct rusage ru0, ru1;
	double t0, secs, mb;
	int conn;

	printf("listening\n");
	fflush(stdout);
	conn = accept(fd, NULL, NULL);
	if (conn < 0)
		die(EXIT_SETUP, "accept: %s", strerror(errno));
	if (lowat > 0 &&
	    setsockopt(conn, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)))
		die(EXIT_SETUP, "setsockopt(SO_RCVLOWAT): %s", strerror(errno));
	t0 = now_s();
	getrusage(RUSAGE_THREAD, &ru0);
	for (;;) {
		struct pollfd p = { .fd = conn, .events = POLLIN };
		ssize_t n;
		int eof = 0;

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die(EXIT_SETUP, "poll: %s", strerror(errno));
		}
		polls++;
		for (;;) {
			n = recv(conn, buf, sizeof(buf), MSG_DONTWAIT);
			recvs++;
			if (n > 0) {
				bytes += n;
				continue;
			}
			if (n == 0)
				eof = 1;
			else if (errno != EAGAIN && errno != EINTR)
				die(1, "recv: %s", strerror(errno));
			break;
		}
		if (eof)
			break;
	}
	getrusage(RUSAGE_THREAD, &ru1);
	secs = now_s() - t0;
	mb = bytes / 1048576.0;
	if (mb <= 0)
		mb = 1e-9;
	printf("lowat=%d bytes=%lld polls=%lld recvs=%lld nvcsw=%ld "
	       "nivcsw=%ld seconds=%.3f polls_per_mb=%.2f nvcsw_per_mb=%.2f\n",
	       lowat, bytes, polls, recvs, ru1.ru_nvcsw - ru0.ru_nvcsw,
	       ru1.ru_nivcsw - ru0.ru_nivcsw, secs, polls / mb,
	       (ru1.ru_nvcsw - ru0.ru_nvcsw) / mb);
	close(conn);
}

static void do_send(int fd, struct sockaddr_in *sa, long long total,
		    int chunk, int gap_us)
{
	static char buf[4 << 20];
	struct timespec gap = { gap_us / 1000000, (gap_us % 1000000) * 1000L };
	long long sent = 0;
	double t0;

	if (chunk <= 0 || chunk > (int)sizeof(buf))
		die(EXIT_USAGE, "-c: chunk must be 1..%zu", sizeof(buf));
	while (connect(fd, (struct sockaddr *)sa, sizeof(*sa))) {
		if (errno != ECONNREFUSED && errno != EINTR)
			die(EXIT_SETUP, "connect: %s", strerror(errno));
		close(fd);
		usleep(20000);
		fd = tcp_socket();
	}
	if (gap_us > 0) {
		int one = 1;

		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	t0 = now_s();
	while (sent < total) {
		size_t len = total - sent < chunk ? (size_t)(total - sent) :
						    (size_t)chunk;
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die(1, "send: %s", strerror(errno));
		}
		sent += n;
		if (gap_us > 0)
			nanosleep(&gap, NULL);
	}
	close(fd);
	printf("sent=%lld seconds=%.3f\n", sent, now_s() - t0);
}

const char *prog = "lowat";

int main(int argc, char **argv)
{
	const char *mode, *addr = NULL;
	int port = 40001, lowat = 0, chunk = 256 * 1024, gap_us = 0;
	int timeout = 60, fd, c;
	long long total = -1;
	struct sockaddr_in sa;

	mode = mode_arg(argc, argv, usage, "recv", "send");
	while ((c = getopt(argc, argv, "a:p:l:n:c:g:T:")) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'p': port = parse_int("-p", optarg); break;
		case 'l': lowat = parse_int("-l", optarg); break;
		case 'n': total = parse_ll("-n", optarg); break;
		case 'c': chunk = parse_int("-c", optarg); break;
		case 'g': gap_us = parse_int("-g", optarg); break;
		case 'T': timeout = parse_int("-T", optarg); break;
		default: die(EXIT_USAGE, "bad option (try --help)");
		}
	}
	if (optind != argc)
		die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (!addr)
		addr = mode[0] == 'r' ? "0.0.0.0" : "127.0.0.1";
	ipv4_addr(&sa, addr, port);
	watchdog(timeout);

	fd = tcp_socket();
	if (mode[0] == 'r') {
		tcp_listen(fd, &sa, addr, port);
		do_recv(fd, lowat);
	} else {
		if (total < 0)
			die(EXIT_USAGE, "send needs -n BYTES");
		do_send(fd, &sa, total, chunk, gap_us);
	}
	close(fd);
	return 0;
}
