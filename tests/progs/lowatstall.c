// SPDX-License-Identifier: GPL-2.0
/*
 * lowatstall: a request/response exchange whose reader has an SO_RCVLOWAT
 * mark its receive buffer cannot hold. The server waits for readiness one
 * of five ways, reads, and lowers its mark to what is left of the request
 * after each read; the client sends the request and waits for a one-byte
 * reply. TCP wakes such a reader when its queue cannot grow; a reader
 * that is never woken leaves both ends waiting: "stalled".
 */
#include "common.h"

#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

static const char usage[] =
"usage: lowatstall server [-m] [-a ADDR] [-p PORT] -n BYTES [-w WAIT] [-l LOWAT]\n"
"                         [-b RCVBUF] [-F] [-L] [-D MS] [-R BYTES] [-t SECONDS]\n"
"                         [-T SECONDS]\n"
"       lowatstall client [-m] [-a ADDR] [-p PORT] -n BYTES [-T SECONDS]\n"
"  -r    (both) reversed: the server connects to ADDR:PORT (retrying until\n"
"        it listens), the client listens there and prints 'listening'\n"
"        (a reader that is the client: with -m on the server alone, an\n"
"        MPTCP client of a TCP server); -L is then not for the server\n"
"  server: listen on ADDR:PORT (default 0.0.0.0:40002), print 'listening',\n"
"        accept one connection and set SO_RCVLOWAT LOWAT (default 524288;\n"
"        0: not set, a reader that does not ask),\n"
"        then SO_RCVBUF RCVBUF (default 32768; -F: SO_RCVBUFFORCE; 0: none)\n"
"        on it, or with -L on the listener before listen(), for the\n"
"        connection to inherit. Read BYTES, waiting before each read with WAIT: poll,\n"
"        epoll (level-triggered), epollet (edge-triggered), block (a blocking\n"
"        recv()) or uring (io_uring's recv, poll-driven); after each read the\n"
"        mark is lowered to what is left when that is less (to 1 for block:\n"
"        a blocking recv() that copied part of the tail waits for a full\n"
"        mark of new bytes). With -D, sleep MS milliseconds before the first\n"
"        wait: the request arrives while nobody reads (what the buffer cannot\n"
"        hold is left on the subflows: 'parked'). With -R, read at most\n"
"        BYTES after each wakeup (socat's 8192-byte buffer: -R 8192). Then\n"
"        reply one\n"
"        byte. One result line:\n"
"        result=done|stalled bytes=N wakeups=N seconds=S lowat=M rcvbuf=B\n"
"        ready=0|1 (ready: poll() reported the socket readable at once when\n"
"        the reader first looked, after -D's sleep)\n"
"        (lowat, rcvbuf: as the kernel reports them once the options are\n"
"        set). stalled: no readiness for SECONDS (-t, default 10) while\n"
"        bytes were missing; exit 3.\n"
"  client: connect, send BYTES, wait for the one-byte reply; prints\n"
"        result=done|noreply seconds=S\n"
"  The request is the stream pattern of common.h: the server checks every\n"
"        byte it reads at its offset, the client the reply ('k'); at the\n"
"        first that differs, a message on stderr, no result line, exit 1\n"
"  -m    MPTCP sockets (IPPROTO_MPTCP) instead of TCP\n"
"  -T    give up after this long (default 60), exit 124\n";

#define EXIT_STALLED 3

enum wait_kind { WAIT_POLL, WAIT_EPOLL, WAIT_EPOLLET, WAIT_BLOCK, WAIT_URING };
static const char *const wait_names[] = {
	[WAIT_POLL] = "poll", [WAIT_EPOLL] = "epoll",
	[WAIT_EPOLLET] = "epollet", [WAIT_BLOCK] = "block",
	[WAIT_URING] = "uring",
};

struct server {
	enum wait_kind wait;
	int fd, ep, lowat, stall_ms, delay_ms;
	size_t chunk;		/* -R: at most this much per wakeup, or 0 */
	struct io_uring ring;
};

static char buf[1 << 20];

static void set_int(int fd, int opt, int val, const char *name)
{
	if (setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val)))
		die(EXIT_SETUP, "setsockopt(%s, %d): %s", name, val,
		    strerror(errno));
}

static int get_int(int fd, int opt)
{
	socklen_t len = sizeof(int);
	int val = -1;

	getsockopt(fd, SOL_SOCKET, opt, &val, &len);
	return val;
}

static void set_options(int fd, int lowat, int rcvbuf, int force)
{
	if (lowat > 0)
		set_int(fd, SO_RCVLOWAT, lowat, "SO_RCVLOWAT");
	if (rcvbuf <= 0)
		return;
	if (force)
		set_int(fd, SO_RCVBUFFORCE, rcvbuf, "SO_RCVBUFFORCE");
	else
		set_int(fd, SO_RCVBUF, rcvbuf, "SO_RCVBUF");
}

static void server_prepare(struct server *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct timeval tv = { s->stall_ms / 1000, s->stall_ms % 1000 * 1000 };

	switch (s->wait) {
	case WAIT_EPOLLET:
		ev.events |= EPOLLET;
		/* fall through */
	case WAIT_EPOLL:
		s->ep = epoll_create1(0);
		if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->fd, &ev))
			die(EXIT_SETUP, "epoll: %s", strerror(errno));
		break;
	case WAIT_BLOCK:
		if (setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
			die(EXIT_SETUP, "SO_RCVTIMEO: %s", strerror(errno));
		break;
	case WAIT_URING:
		if (io_uring_queue_init(4, &s->ring, 0) < 0)
			die(EXIT_SETUP, "io_uring_queue_init failed (kernel.io_uring_disabled?)");
		break;
	default:
		break;
	}
}

/*
 * Wait as chosen, then read up to @want bytes: returns what was read, 0
 * at EOF, -1 when nothing made the socket readable for the stall time,
 * -2 when it was reported readable with nothing to read.
 */
static ssize_t server_read(struct server *s, size_t want)
{
	struct __kernel_timespec ts = { s->stall_ms / 1000,
					s->stall_ms % 1000 * 1000000L };
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	struct epoll_event ev;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	ssize_t n, got;
	int r = 0;
	double t0;

	if (want > sizeof(buf))
		want = sizeof(buf);
	if (s->chunk && want > s->chunk)
		want = s->chunk;
	switch (s->wait) {
	case WAIT_POLL:
		r = poll(&p, 1, s->stall_ms);
		break;
	case WAIT_EPOLL:
	case WAIT_EPOLLET:
		r = epoll_wait(s->ep, &ev, 1, s->stall_ms);
		break;
	case WAIT_BLOCK:
		/*
		 * SO_RCVTIMEO ends the wait; with some bytes copied recv()
		 * returns them: a stall too, not a wakeup.
		 */
		t0 = now_s();
		n = recv(s->fd, buf, want, 0);
		if ((n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ||
		    (now_s() - t0) * 1000 >= s->stall_ms)
			return -1;
		if (n < 0)
			die(1, "recv: %s", strerror(errno));
		return n;
	case WAIT_URING:
		sqe = io_uring_get_sqe(&s->ring);
		io_uring_prep_recv(sqe, s->fd, buf, want, 0);
		io_uring_submit(&s->ring);
		r = io_uring_wait_cqe_timeout(&s->ring, &cqe, &ts);
		if (r == -ETIME)
			return -1;
		if (r < 0)
			die(1, "io_uring_wait_cqe: %s", strerror(-r));
		n = cqe->res;
		io_uring_cqe_seen(&s->ring, cqe);
		if (n < 0)
			die(1, "io_uring recv: %s", strerror((int)-n));
		return n;
	}
	if (r < 0)
		die(1, "%s: %s", wait_names[s->wait], strerror(errno));
	if (!r)
		return -1;
	/* drain what is there, as an edge-triggered reader must */
	for (got = 0; (size_t)got < want; got += n) {
		n = recv(s->fd, buf + got, want - got, MSG_DONTWAIT);
		if (n == 0 && !got)
			return 0;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			die(1, "recv: %s", strerror(errno));
		if (n <= 0)
			break;
	}
	return got ? got : -2;
}

/*
 * The mark for the last @left bytes: what is left, but 1 for a blocking
 * reader. A recv() that copies part of the tail and then waits is woken
 * by the bytes queued reaching the mark (tcp_epollin_ready()), not by
 * what it copied plus what is queued: TCP itself leaves it asleep there
 * once the sender has sent the rest (seen on 6.1 and 6.12, stock).
 */
static int tail_lowat(const struct server *s, long long left)
{
	return s->wait == WAIT_BLOCK ? 1 : (int)left;
}

/* The listener @lfd's first connection, or die. */
static int accept_one(int lfd)
{
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		die(EXIT_SETUP, "accept: %s", strerror(errno));
	return fd;
}

/* Reads the request on @s->fd, a connected socket, and replies. */
static int do_server(struct server *s, long long total, int rcvbuf,
		     int force, int on_listener)
{
	struct pollfd first = { .fd = s->fd, .events = POLLIN };
	long long got = 0, wakeups = 0;
	int stalled = 0, lowat, buf_now, ready;
	double t0;
	ssize_t n;

	if (!on_listener)
		set_options(s->fd, s->lowat, rcvbuf, force);
	lowat = get_int(s->fd, SO_RCVLOWAT);
	buf_now = get_int(s->fd, SO_RCVBUF);
	server_prepare(s);
	if (s->delay_ms)
		usleep((useconds_t)s->delay_ms * 1000);
	/* readable now, without waiting? (TCP's rule: the mark, or a closed window) */
	ready = poll(&first, 1, 0) == 1 && (first.revents & POLLIN);
	t0 = now_s();
	while (got < total) {
		n = server_read(s, (size_t)(total - got));
		if (n == -1) {
			stalled = 1;
			break;
		}
		wakeups++;
		if (n == -2)	/* woken, nothing to read (yet) */
			continue;
		if (n == 0)
			break;
		pattern_check("server: recv", buf, n, got, 0);
		got += n;
		if (got < total && total - got < get_int(s->fd, SO_RCVLOWAT))
			set_int(s->fd, SO_RCVLOWAT, tail_lowat(s, total - got),
				"SO_RCVLOWAT");
	}
	if (!stalled && got == total && send(s->fd, "k", 1, MSG_NOSIGNAL) != 1)
		die(1, "send reply: %s", strerror(errno));
	printf("result=%s bytes=%lld wakeups=%lld seconds=%.3f lowat=%d rcvbuf=%d ready=%d\n",
	       stalled ? "stalled" : got == total ? "done" : "eof", got,
	       wakeups, now_s() - t0, lowat, buf_now, ready);
	fflush(stdout);
	return stalled ? EXIT_STALLED : got == total ? 0 : 1;
}

/* Sends the request on @fd, a connected socket, and waits for the reply. */
static int do_client(int fd, long long total)
{
	long long sent = 0;
	double t0 = now_s();
	char reply;
	ssize_t n;

	while (sent < total) {
		size_t len = total - sent < (long long)sizeof(buf) ?
			     (size_t)(total - sent) : sizeof(buf);

		pattern_fill(buf, len, sent, 0);
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(1, "send: %s", strerror(errno));
		sent += n;
	}
	n = recv(fd, &reply, 1, 0);
	if (n == 1 && reply != 'k')
		die(1, "client: reply corrupted: expected 0x%02x ('k'), got 0x%02x",
		    'k', (unsigned char)reply);
	printf("result=%s seconds=%.3f\n", n == 1 ? "done" : "noreply",
	       now_s() - t0);
	return n == 1 ? 0 : 1;
}

const char *prog = "lowatstall";

int main(int argc, char **argv)
{
	struct server s = { .wait = WAIT_POLL, .lowat = 524288,
			    .stall_ms = 10000 };
	int port = 40002, rcvbuf = 32768, force = 0, on_listener = 0;
	int timeout = 60, mptcp = 0, reversed = 0, fd, lfd = -1, c, ret;
	const char *mode, *addr = NULL;
	struct sockaddr_storage sa;
	long long total = -1;
	socklen_t salen;
	unsigned int i;

	mode = mode_arg(argc, argv, usage, "server", "client");
	while ((c = getopt(argc, argv, "mra:p:n:w:l:b:FLD:R:t:T:")) != -1) {
		switch (c) {
		case 'm': mptcp = 1; break;
		case 'r': reversed = 1; break;
		case 'a': addr = optarg; break;
		case 'p': port = parse_int("-p", optarg); break;
		case 'n': total = parse_ll("-n", optarg); break;
		case 'w':
			for (i = 0; i < sizeof(wait_names) / sizeof(*wait_names); i++)
				if (!strcmp(optarg, wait_names[i]))
					break;
			if (i == sizeof(wait_names) / sizeof(*wait_names))
				die(EXIT_USAGE, "-w: poll, epoll, epollet, block or uring, not '%s'",
				    optarg);
			s.wait = i;
			break;
		case 'l': s.lowat = parse_int("-l", optarg); break;
		case 'b': rcvbuf = parse_int("-b", optarg); break;
		case 'F': force = 1; break;
		case 'L': on_listener = 1; break;
		case 'D': s.delay_ms = parse_int("-D", optarg); break;
		case 'R': s.chunk = (size_t)parse_int("-R", optarg); break;
		case 't': s.stall_ms = parse_int("-t", optarg) * 1000; break;
		case 'T': timeout = parse_int("-T", optarg); break;
		default: die(EXIT_USAGE, "bad option (try --help)");
		}
	}
	if (optind != argc)
		die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (total <= 0)
		die(EXIT_USAGE, "-n BYTES is needed (more than 0)");
	if (reversed && on_listener)
		die(EXIT_USAGE, "-L: a reversed server has no listener");
	if (!addr)
		addr = (strcmp(mode, "server") == 0) != reversed ? "0.0.0.0" :
								  "127.0.0.1";
	salen = inet_any_addr(&sa, addr, port);
	watchdog(timeout);

	fd = inet_stream_socket(sa.ss_family, mptcp);
	if (reversed == (strcmp(mode, "server") == 0)) {
		fd = connect_retry(fd, &sa, salen, mptcp);
	} else {
		if (on_listener)
			set_options(fd, s.lowat, rcvbuf, force);
		tcp_listen_at(fd, (struct sockaddr *)&sa, salen, addr, port);
		printf("listening\n");
		fflush(stdout);
		/* the listener stays: MPTCP's joins arrive there */
		lfd = fd;
		fd = accept_one(lfd);
	}
	if (!strcmp(mode, "client"))
		return do_client(fd, total);
	s.fd = fd;
	ret = do_server(&s, total, rcvbuf, force, on_listener);
	close(fd);
	if (lfd >= 0)
		close(lfd);
	return ret;
}
