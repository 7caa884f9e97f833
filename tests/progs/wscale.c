// SPDX-License-Identifier: GPL-2.0
/*
 * wscale: one TCP connection between a server and a client (run each mode in
 * its own network namespace), with an optional SO_RCVBUF before listen() or
 * connect(); prints the window scales from TCP_INFO and the buffer lock.
 */
#include "common.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

static const char usage[] =
"usage: wscale server|client [-a ADDR] [-p PORT] [-r RCVBUF] [-s BYTES]\n"
"              [-T SECONDS]\n"
"  server: listen on ADDR:PORT (default 0.0.0.0:40000), accept one\n"
"          connection; prints 'listening' once ready\n"
"  client: connect to ADDR:PORT (default 127.0.0.1:40000), retrying while\n"
"          refused\n"
"  -r RCVBUF  setsockopt(SO_RCVBUF) on the listener before listen(), or on\n"
"             the client before connect()\n"
"  -s BYTES   send BYTES, then shut down writing; both sides read to EOF\n"
"  -T SECONDS give up after this long (default 20), exit 124\n"
"Prints: side=<mode> rcv_wscale=<ours> snd_wscale=<peer's> rcvbuf=<at\n"
"  connect> lock=<SO_BUF_LOCK at connect> rcvbuf_end=.. lock_end=..\n"
"  sent=<bytes> received=<bytes> [listener_rcvbuf=.. listener_lock=..]\n";

struct buf_state {
	int rcvbuf, lock;
};

static struct buf_state get_buf_state(int fd)
{
	struct buf_state st = { -1, -1 };
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &st.rcvbuf, &len))
		die(EXIT_SETUP, "getsockopt(SO_RCVBUF): %s", strerror(errno));
	st.lock = sock_buf_lock(fd);
	return st;
}

static void set_rcvbuf(int fd, int val)
{
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
		die(EXIT_SETUP, "setsockopt(SO_RCVBUF, %d): %s", val,
		    strerror(errno));
}

/* Send @to_send bytes and read to EOF at the same time; returns received. */
static long long transfer(int fd, long long to_send, long long *sent)
{
	static char buf[256 * 1024];
	long long received = 0;
	int eof = 0, wr_done = 0;

	*sent = 0;
	if (fcntl(fd, F_SETFL, O_NONBLOCK))
		die(EXIT_SETUP, "fcntl: %s", strerror(errno));
	if (to_send == 0) {
		shutdown(fd, SHUT_WR);
		wr_done = 1;
	}
	while (!eof || !wr_done) {
		struct pollfd p = { .fd = fd, .events = 0 };
		ssize_t n;

		if (!eof)
			p.events |= POLLIN;
		if (!wr_done)
			p.events |= POLLOUT;
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die(EXIT_SETUP, "poll: %s", strerror(errno));
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR) && !eof) {
			n = recv(fd, buf, sizeof(buf), 0);
			if (n > 0)
				received += n;
			else if (n == 0)
				eof = 1;
			else if (errno != EAGAIN && errno != EINTR)
				die(1, "recv: %s", strerror(errno));
		}
		if (p.revents & POLLOUT && !wr_done) {
			long long left = to_send - *sent;
			size_t len = left < (long long)sizeof(buf) ?
				     (size_t)left : sizeof(buf);

			n = send(fd, buf, len, MSG_NOSIGNAL);
			if (n > 0)
				*sent += n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				die(1, "send: %s", strerror(errno));
			if (*sent >= to_send) {
				shutdown(fd, SHUT_WR);
				wr_done = 1;
			}
		}
	}
	return received;
}

static void report(const char *side, int fd, struct buf_state at_start,
		   long long sent, long long received, const int *listener)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	struct buf_state end = get_buf_state(fd);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		die(EXIT_SETUP, "getsockopt(TCP_INFO): %s", strerror(errno));
	printf("side=%s rcv_wscale=%u snd_wscale=%u rcvbuf=%d lock=%d "
	       "rcvbuf_end=%d lock_end=%d sent=%lld received=%lld",
	       side, ti.tcpi_rcv_wscale, ti.tcpi_snd_wscale, at_start.rcvbuf,
	       at_start.lock, end.rcvbuf, end.lock, sent, received);
	if (listener)
		printf(" listener_rcvbuf=%d listener_lock=%d", listener[0],
		       listener[1]);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode, *addr = NULL;
	int port = 40000, rcvbuf = -1, timeout = 20, fd, c;
	long long to_send = 0, sent, received;
	struct sockaddr_in sa;
	struct buf_state st;

	prog_name = "wscale";
	mode = mode_arg(argc, argv, usage, "server", "client");
	while ((c = getopt(argc, argv, "a:p:r:s:T:")) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'p': port = parse_int("-p", optarg); break;
		case 'r': rcvbuf = parse_int("-r", optarg); break;
		case 's': to_send = parse_ll("-s", optarg); break;
		case 'T': timeout = parse_int("-T", optarg); break;
		default: die(EXIT_USAGE, "bad option (try --help)");
		}
	}
	if (optind != argc)
		die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (!addr)
		addr = mode[0] == 's' ? "0.0.0.0" : "127.0.0.1";
	ipv4_addr(&sa, addr, port);
	watchdog(timeout);

	fd = tcp_socket();
	if (rcvbuf >= 0)
		set_rcvbuf(fd, rcvbuf);

	if (mode[0] == 's') {
		int conn, listener[2];

		tcp_listen(fd, &sa, addr, port);
		st = get_buf_state(fd);
		listener[0] = st.rcvbuf;
		listener[1] = st.lock;
		printf("listening port=%d\n", port);
		fflush(stdout);
		conn = accept(fd, NULL, NULL);
		if (conn < 0)
			die(EXIT_SETUP, "accept: %s", strerror(errno));
		st = get_buf_state(conn);
		received = transfer(conn, to_send, &sent);
		report(mode, conn, st, sent, received, listener);
		close(conn);
	} else {
		while (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			if (errno != ECONNREFUSED && errno != EINTR)
				die(EXIT_SETUP, "connect %s:%d: %s", addr, port,
				    strerror(errno));
			/* Server not listening yet: new socket, same options. */
			close(fd);
			usleep(20000);
			fd = tcp_socket();
			if (rcvbuf >= 0)
				set_rcvbuf(fd, rcvbuf);
		}
		st = get_buf_state(fd);
		received = transfer(fd, to_send, &sent);
		report(mode, fd, st, sent, received, NULL);
	}
	close(fd);
	return 0;
}
