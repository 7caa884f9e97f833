// SPDX-License-Identifier: GPL-2.0
/*
 * lowat: measure how often a poll()+recv() reader of a TCP or MPTCP socket
 * is woken, with or without SO_RCVLOWAT, while a sender streams a bounded
 * amount of data (bulk, or small paced segments), and check when such a
 * socket is reported readable. Proves the SO_RCVLOWAT wakeup property.
 */
#include "common.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

static const char usage[] =
"usage: lowat recv [-m] [-r] [-d] [-a ADDR] [-p PORT] [-l LOWAT] [-T SECONDS]\n"
"       lowat send [-m] [-r] [-d] [-a ADDR] [-p PORT] -n BYTES|-S FILE\n"
"                  [-c CHUNK] [-g GAP_US] [-T SECONDS]\n"
"       lowat ready [-m] [-a ADDR] [-p PORT] [-l LOWAT] [-T SECONDS]\n"
"  recv: listen on ADDR:PORT (default 0.0.0.0:40001), accept one connection,\n"
"        set SO_RCVLOWAT to LOWAT (0: leave unset), then poll()+recv() until\n"
"        EOF; prints 'listening' once ready, then one result line:\n"
"        lowat=.. bytes=.. polls=.. recvs=.. short=.. nvcsw=.. nivcsw=..\n"
"        seconds=.. polls_per_mb=.. nvcsw_per_mb=.. poll_nvcsw=..\n"
"        poll_nvcsw_per_mb=..  (nvcsw: voluntary context switches of the\n"
"        reader, i.e. how often it slept and was woken; poll_nvcsw: those\n"
"        inside poll(), the wakeups SO_RCVLOWAT decides, without recv()'s\n"
"        sleeps on a socket lock another thread holds; short: wakeups\n"
"        whose reads got less than LOWAT, EOF aside)\n"
"  send: connect to ADDR:PORT (default 127.0.0.1:40001), send BYTES in\n"
"        writes of CHUNK bytes (default 256 KiB); with -g, TCP_NODELAY and\n"
"        a pause of GAP_US microseconds after each write; with -S, until\n"
"        FILE exists (looked for before each write; -n then the most),\n"
"        for a stream that lasts as long as what another program does\n"
"  ready: both ends in this process, connected over ADDR:PORT (default\n"
"        127.0.0.1:40001); the reader sets SO_RCVLOWAT LOWAT (default 512 KiB)\n"
"        and checks when it is reported readable; one result line:\n"
"        below_poll=0|1 below_epoll=0|1 (LOWAT/2 queued: readable?)\n"
"        lowered_ms=N (blocked in poll() until the mark was lowered to\n"
"        LOWAT/4 by another thread 300 ms in; -1: not woken in 3 s)\n"
"        above_ms=N above_read=BYTES (the rest sent: woken, read at once)\n"
"        wait_read=BYTES wait_ms=N (a blocking recv() while 64 KiB, then\n"
"        300 ms later LOWAT, arrive) eof_ms=N (1000 bytes and a FIN)\n"
"  -r    reversed: recv connects to ADDR:PORT (retrying until it listens),\n"
"        send listens there, prints 'listening', and sends on the\n"
"        connection it accepts (a reader that is the client: with -m on\n"
"        recv alone, an MPTCP client of a TCP server)\n"
"  -d    (both) full duplex: recv also writes 16 KiB every 2 ms on the same\n"
"        socket from a second thread while it reads; send reads and drops\n"
"        what arrives, from a second thread\n"
"  Every byte read (recv, ready, and send -d's reads) is checked against\n"
"        the pattern its sender wrote at that stream offset: at the first\n"
"        that differs, a message on stderr, no result line, exit 1\n"
"        (ready: also when the end of the stream comes short of what was sent)\n"
"  -m    MPTCP sockets (IPPROTO_MPTCP) instead of TCP; ADDR may be IPv6\n"
"  -T    give up after this long (default 60), exit 124\n";

static int use_mptcp;
static int family = AF_INET;	/* of -a ADDR */

static int new_socket(void)
{
	return inet_stream_socket(family, use_mptcp);
}

/* The listener @fd's first connection, once 'listening' is printed. */
static int accept_one(int fd)
{
	int conn;

	printf("listening\n");
	fflush(stdout);
	conn = accept(fd, NULL, NULL);
	if (conn < 0)
		die(EXIT_SETUP, "accept: %s", strerror(errno));
	return conn;
}

/*
 * The stream patterns (tools/lib/pattern.h) of the two directions: what send (and
 * ready's writing end) sends, and what recv -d sends back. Every byte
 * read is checked against its sender's, at its offset in the stream.
 */
enum { SEED_DATA, SEED_DUPLEX };

/* -d: the other direction of a connection, in a thread of its own. */
struct duplex {
	int fd;
	volatile int stop;
	uint64_t off;		/* bytes of SEED_DUPLEX written, or read */
	pthread_t thread;
};

/* recv -d: write 16 KiB every 2 ms until told to stop. */
static void *duplex_write_fn(void *arg)
{
	static char out[16384];
	struct timespec gap = { 0, 2000000L };
	struct duplex *d = arg;
	ssize_t n;

	while (!d->stop) {
		pattern_fill(out, sizeof(out), d->off, SEED_DUPLEX);
		n = send(d->fd, out, sizeof(out), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			d->off += n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		nanosleep(&gap, NULL);
	}
	return NULL;
}

/* send -d: read what arrives until EOF, checking it, and drop it. */
static void *duplex_drain_fn(void *arg)
{
	static char in[65536];
	struct duplex *d = arg;
	ssize_t n;

	while ((n = recv(d->fd, in, sizeof(in), 0)) > 0) {
		pattern_check("duplex recv", in, n, d->off, SEED_DUPLEX);
		d->off += n;
	}
	return NULL;
}

static void duplex_start(struct duplex *d, int fd, void *(*fn)(void *))
{
	d->fd = fd;
	d->stop = 0;
	d->off = 0;
	if (pthread_create(&d->thread, NULL, fn, d))
		die(EXIT_SETUP, "pthread_create failed");
}

static int duplex;	/* -d */

/* Reads from @conn, a connected socket, until EOF. */
static void do_recv(int conn, int lowat)
{
	static char buf[4 << 20];
	long long bytes = 0, polls = 0, recvs = 0, shorts = 0;
	struct rusage ru0, ru1, rp0, rp1;
	long poll_nvcsw = 0;
	struct duplex d;
	double t0, secs, mb;

	if (lowat > 0 &&
	    setsockopt(conn, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)))
		die(EXIT_SETUP, "setsockopt(SO_RCVLOWAT): %s", strerror(errno));
	if (duplex)
		duplex_start(&d, conn, duplex_write_fn);
	t0 = now_s();
	getrusage(RUSAGE_THREAD, &ru0);
	for (;;) {
		struct pollfd p = { .fd = conn, .events = POLLIN };
		long long got = 0;
		ssize_t n;
		int eof = 0;

		getrusage(RUSAGE_THREAD, &rp0);
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die(EXIT_SETUP, "poll: %s", strerror(errno));
		}
		getrusage(RUSAGE_THREAD, &rp1);
		poll_nvcsw += rp1.ru_nvcsw - rp0.ru_nvcsw;
		polls++;
		for (;;) {
			n = recv(conn, buf, sizeof(buf), MSG_DONTWAIT);
			recvs++;
			if (n > 0) {
				pattern_check("recv", buf, n, bytes, SEED_DATA);
				bytes += n;
				got += n;
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
		if (lowat > 0 && got < lowat)
			shorts++;
	}
	getrusage(RUSAGE_THREAD, &ru1);
	secs = now_s() - t0;
	if (duplex) {
		d.stop = 1;
		pthread_join(d.thread, NULL);
		shutdown(conn, SHUT_WR);
	}
	mb = bytes / 1048576.0;
	if (mb <= 0)
		mb = 1e-9;
	printf("lowat=%d bytes=%lld polls=%lld recvs=%lld short=%lld nvcsw=%ld "
	       "nivcsw=%ld seconds=%.3f polls_per_mb=%.2f nvcsw_per_mb=%.2f "
	       "poll_nvcsw=%ld poll_nvcsw_per_mb=%.2f\n",
	       lowat, bytes, polls, recvs, shorts, ru1.ru_nvcsw - ru0.ru_nvcsw,
	       ru1.ru_nivcsw - ru0.ru_nivcsw, secs, polls / mb,
	       (ru1.ru_nvcsw - ru0.ru_nvcsw) / mb, poll_nvcsw, poll_nvcsw / mb);
}

/* Sends on @fd, a connected socket, and closes it. */
static void do_send(int fd, long long total, int chunk, int gap_us,
		    const char *stop)
{
	static char buf[4 << 20];
	struct timespec gap = { gap_us / 1000000, (gap_us % 1000000) * 1000L };
	long long sent = 0;
	struct duplex d;
	double t0;

	if (chunk <= 0 || chunk > (int)sizeof(buf))
		die(EXIT_USAGE, "-c: chunk must be 1..%zu", sizeof(buf));
	if (gap_us > 0) {
		int one = 1;

		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	if (duplex)
		duplex_start(&d, fd, duplex_drain_fn);
	t0 = now_s();
	while ((total < 0 || sent < total) && !(stop && !access(stop, F_OK))) {
		size_t len = total >= 0 && total - sent < chunk ?
				     (size_t)(total - sent) :
				     (size_t)chunk;
		ssize_t n;

		pattern_fill(buf, len, sent, SEED_DATA);
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die(1, "send: %s", strerror(errno));
		}
		sent += n;
		if (gap_us > 0)
			nanosleep(&gap, NULL);
	}
	if (duplex) {
		shutdown(fd, SHUT_WR);
		pthread_join(d.thread, NULL);
	}
	close(fd);
	printf("sent=%lld seconds=%.3f\n", sent, now_s() - t0);
}

/* ---- lowat ready ---- */

static double ms_since(double t0)
{
	return (now_s() - t0) * 1000.0;
}

/*
 * ready's stream: bytes sent (by one thread at a time: pthread_create()
 * and pthread_join() order them) and bytes read and checked.
 */
static uint64_t ready_tx, ready_rx;

/* Sends @len bytes, giving up after 3 s of a full window; returns sent. */
static long long send_some(int fd, long long len)
{
	static char buf[64 << 10];
	double t0 = now_s();
	long long sent = 0;

	while (sent < len && now_s() - t0 < 3.0) {
		size_t n = len - sent < (long long)sizeof(buf) ?
			   (size_t)(len - sent) : sizeof(buf);
		ssize_t r;

		pattern_fill(buf, n, ready_tx, SEED_DATA);
		r = send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			ready_tx += r;
			sent += r;
		} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
			die(1, "send: %s", strerror(errno));
		} else {
			usleep(2000);
		}
	}
	return sent;
}

/* poll() for POLLIN up to @ms; returns the time it took, or -1. */
static long poll_in_ms(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	double t0 = now_s();

	while (poll(&p, 1, ms) < 0)
		if (errno != EINTR)
			die(1, "poll: %s", strerror(errno));
	return (p.revents & POLLIN) ? (long)ms_since(t0) : -1;
}

struct ready_later {
	int fd, lowat;		/* set SO_RCVLOWAT on fd, if lowat */
	long long send;		/* or send this much on fd */
};

static void *ready_later_fn(void *arg)
{
	struct ready_later *l = arg;

	usleep(300000);
	if (l->lowat &&
	    setsockopt(l->fd, SOL_SOCKET, SO_RCVLOWAT, &l->lowat,
		       sizeof(l->lowat)))
		die(1, "setsockopt(SO_RCVLOWAT): %s", strerror(errno));
	if (l->send)
		send_some(l->fd, l->send);
	return NULL;
}

/* recv() on ready's reading end; what it read is checked. */
static ssize_t ready_recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t n = recv(fd, buf, len, flags);

	if (n > 0) {
		pattern_check("ready: recv", buf, n, ready_rx, SEED_DATA);
		ready_rx += n;
	}
	return n;
}

static void later(pthread_t *t, struct ready_later *l)
{
	if (pthread_create(t, NULL, ready_later_fn, l))
		die(EXIT_SETUP, "pthread_create failed");
}

static void do_ready(int lfd, struct sockaddr_storage *sa, socklen_t salen,
		     int lowat)
{
	static char buf[4 << 20];
	struct epoll_event ev = { .events = EPOLLIN };
	struct ready_later l = {};
	long below_poll, below_epoll, lowered, above, wait_ms, eof;
	long long above_read, wait_read = 0;
	int cfd = new_socket(), fd, ep, one = 1;
	pthread_t t;
	double t0;
	ssize_t n;

	if (connect(cfd, (struct sockaddr *)sa, salen))
		die(EXIT_SETUP, "connect: %s", strerror(errno));
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die(EXIT_SETUP, "accept: %s", strerror(errno));
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)))
		die(EXIT_SETUP, "setsockopt(SO_RCVLOWAT): %s", strerror(errno));

	/* half the mark queued: not readable */
	if (send_some(cfd, lowat / 2) != lowat / 2)
		die(1, "could not queue %d bytes", lowat / 2);
	usleep(300000);
	below_poll = poll_in_ms(fd, 0) >= 0;
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die(EXIT_SETUP, "epoll: %s", strerror(errno));
	below_epoll = epoll_wait(ep, &ev, 1, 0) > 0;

	/* the mark lowered below what is queued, by another thread */
	l = (struct ready_later){ .fd = fd, .lowat = lowat / 4 };
	later(&t, &l);
	lowered = poll_in_ms(fd, 3000);
	pthread_join(t, NULL);

	/* back to the mark, then the rest arrives: readable, all of it */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)))
		die(1, "setsockopt(SO_RCVLOWAT): %s", strerror(errno));
	send_some(cfd, lowat / 2 + 4096);
	above = poll_in_ms(fd, 3000);
	n = ready_recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	above_read = n > 0 ? n : 0;

	/* a blocking recv() waits for the mark */
	send_some(cfd, 65536);
	l = (struct ready_later){ .fd = cfd, .send = lowat };
	later(&t, &l);
	t0 = now_s();
	n = ready_recv(fd, buf, sizeof(buf), 0);
	wait_ms = (long)ms_since(t0);
	wait_read = n > 0 ? n : 0;
	pthread_join(t, NULL);
	while (ready_recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;

	/* less than the mark, then the end of the stream: readable */
	send_some(cfd, 1000);
	shutdown(cfd, SHUT_WR);
	eof = poll_in_ms(fd, 3000);
	/* the rest, checked too; at the end of the stream, all of it */
	while ((n = ready_recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	if (!n && ready_rx != ready_tx)
		die(1, "ready: read %llu bytes to the end of the stream, sent %llu",
		    (unsigned long long)ready_rx,
		    (unsigned long long)ready_tx);

	printf("lowat=%d below_poll=%ld below_epoll=%ld lowered_ms=%ld "
	       "above_ms=%ld above_read=%lld wait_read=%lld wait_ms=%ld "
	       "eof_ms=%ld\n", lowat, below_poll, below_epoll, lowered, above,
	       above_read, wait_read, wait_ms, eof);
	close(ep);
	close(fd);
	close(cfd);
}

const char *prog = "lowat";

int main(int argc, char **argv)
{
	const char *mode, *addr = NULL, *stop = NULL;
	int port = 40001, lowat = 0, chunk = 256 * 1024, gap_us = 0;
	int timeout = 60, reversed = 0, fd, lfd = -1, c;
	long long total = -1;
	struct sockaddr_storage sa;
	socklen_t salen;

	if (argc > 1 && !strcmp(argv[1], "ready")) {
		mode = argv[1];
		optind = 2;
	} else {
		mode = mode_arg(argc, argv, usage, "recv", "send");
	}
	while ((c = getopt(argc, argv, "mrda:p:l:n:c:g:S:T:")) != -1) {
		switch (c) {
		case 'm': use_mptcp = 1; break;
		case 'r': reversed = 1; break;
		case 'd': duplex = 1; break;
		case 'a': addr = optarg; break;
		case 'p': port = parse_int("-p", optarg); break;
		case 'l': lowat = parse_int("-l", optarg); break;
		case 'n': total = parse_ll("-n", optarg); break;
		case 'c': chunk = parse_int("-c", optarg); break;
		case 'g': gap_us = parse_int("-g", optarg); break;
		case 'S': stop = optarg; break;
		case 'T': timeout = parse_int("-T", optarg); break;
		default: die(EXIT_USAGE, "bad option (try --help)");
		}
	}
	if (optind != argc)
		die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (!strcmp(mode, "send") && total < 0 && !stop)
		die(EXIT_USAGE, "send needs -n BYTES or -S FILE");
	if (!addr)
		addr = (strcmp(mode, "recv") == 0) != reversed ? "0.0.0.0" :
							  "127.0.0.1";
	salen = inet_any_addr(&sa, addr, port);
	family = sa.ss_family;
	watchdog(timeout);

	fd = new_socket();
	if (strcmp(mode, "ready") && reversed == (strcmp(mode, "recv") == 0)) {
		fd = connect_retry(fd, &sa, salen, use_mptcp);
	} else {
		tcp_listen_at(fd, (struct sockaddr *)&sa, salen, addr, port);
		if (strcmp(mode, "ready")) {
			/* the listener stays: MPTCP's joins arrive there */
			lfd = fd;
			fd = accept_one(lfd);
		}
	}
	if (!strcmp(mode, "recv")) {
		do_recv(fd, lowat);
	} else if (!strcmp(mode, "ready")) {
		do_ready(fd, &sa, salen, lowat > 0 ? lowat : 512 * 1024);
	} else {
		do_send(fd, total, chunk, gap_us, stop);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return 0;
}
