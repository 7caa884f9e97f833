// SPDX-License-Identifier: GPL-2.0
/*
 * wscale: one TCP (or MPTCP) connection between a server and a client (run
 * each mode in its own network namespace), with an optional SO_RCVBUF before
 * bind() or connect(), after listen() or on the connected socket; prints the
 * window scales from TCP_INFO (MPTCP: of the first subflow, MPTCP_TCPINFO),
 * the buffer lock and TCP_WINDOW_CLAMP.
 */
#include "common.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/mptcp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

static const char usage[] =
"usage: wscale server|client [-a ADDR] [-p PORT] [-r RCVBUF] [-s BYTES]\n"
"              [-T SECONDS] [-m] [-w socket|listen|conn] [-c CLAMP]\n"
"              [-R RCVBUF2] [-H FILE]\n"
"  server: listen on ADDR:PORT (IPv4 or IPv6; default 0.0.0.0:40000),\n"
"          accept one connection; prints 'listening' once ready\n"
"  client: connect to ADDR:PORT (default 127.0.0.1:40000), retrying while\n"
"          refused\n"
"  -r RCVBUF  setsockopt(SO_RCVBUF) on the listener before bind(), or on\n"
"             the client before connect()\n"
"  -w WHEN    when -r applies: socket (default, as above), listen (server:\n"
"             on the listener after listen()), conn (on the connected socket:\n"
"             the accepted one, or the client's after connect())\n"
"  -R RCVBUF2 a second setsockopt(SO_RCVBUF) right after that of -r\n"
"  -c CLAMP   setsockopt(TCP_WINDOW_CLAMP, CLAMP) right before each\n"
"             SO_RCVBUF of -r\n"
"  -m         MPTCP sockets (IPPROTO_MPTCP) instead of TCP\n"
"  -H FILE    once connected (and -r applied), print 'holding' and wait\n"
"             until FILE exists before the transfer (for ss to look)\n"
"  -s BYTES   send BYTES, then shut down writing; both sides read to EOF\n"
"             and check every byte read against the sender's pattern\n"
"             (by stream offset): at the first that differs, a message on\n"
"             stderr, no result line, exit 1\n"
"  -T SECONDS give up after this long (default 20), exit 124\n"
"Prints: side=<mode> rcv_wscale=<ours> snd_wscale=<peer's> rcvbuf=<at\n"
"  connect> lock=<SO_BUF_LOCK at connect> rcvbuf_end=.. lock_end=..\n"
"  sent=<bytes> received=<bytes> clamp=<TCP_WINDOW_CLAMP at connect, -1\n"
"  for MPTCP> [rx_ms=<first to last byte received> wait_ms=<from the\n"
"  transfer's start (connected, -r applied, held) to the last byte>\n"
"  ssthresh_max=<largest tcpi_rcv_ssthresh while receiving>] [subflows=N]\n"
"  [listener_rcvbuf=.. listener_lock=..]\n"
"  (\"at connect\": once connected and -r applied)\n";

static int use_mptcp;

static int family = AF_INET;	/* of -a ADDR */

static int new_socket(void)
{
	return inet_stream_socket(family, use_mptcp);
}

/* TCP_WINDOW_CLAMP, or -1 where the socket does not offer it (MPTCP). */
static int get_clamp(int fd)
{
	socklen_t len = sizeof(int);
	int v;

	if (getsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, &len))
		return -1;
	return v;
}

/*
 * TCP_INFO of a TCP socket, or of the first subflow of an MPTCP socket
 * (MPTCP_TCPINFO); returns the number of subflows (1 for TCP, 0 for an
 * MPTCP socket fallen back to TCP, whose TCP_INFO is its subflow's).
 */
static int get_tcp_info(int fd, struct tcp_info *ti)
{
	struct {
		struct mptcp_subflow_data d;
		struct tcp_info ti[4];
	} mi;
	socklen_t len = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	if (!use_mptcp) {
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len))
			die(EXIT_SETUP, "getsockopt(TCP_INFO): %s",
			    strerror(errno));
		return 1;
	}
	memset(&mi, 0, sizeof(mi));
	mi.d.size_subflow_data = sizeof(mi.d);
	mi.d.size_user = sizeof(struct tcp_info);
	len = sizeof(mi);
	if (getsockopt(fd, SOL_MPTCP, MPTCP_TCPINFO, &mi, &len)) {
		len = sizeof(*ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len))
			die(EXIT_SETUP, "getsockopt(MPTCP_TCPINFO, TCP_INFO): %s",
			    strerror(errno));
		return 0;
	}
	if (mi.d.num_subflows)
		memcpy(ti, &mi.ti[0], sizeof(*ti));
	return mi.d.num_subflows;
}

struct buf_state {
	int rcvbuf, lock, clamp;
};

static int get_tcp_info(int fd, struct tcp_info *ti);

static struct buf_state get_buf_state(int fd)
{
	struct buf_state st = { -1, -1, -1 };
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &st.rcvbuf, &len))
		die(EXIT_SETUP, "getsockopt(SO_RCVBUF): %s", strerror(errno));
	st.lock = sock_buf_lock(fd);
	st.clamp = get_clamp(fd);
	return st;
}

static int win_clamp = -1;	/* -c */
static int rcvbuf2 = -1;	/* -R */

static void set_rcvbuf(int fd, int val)
{
	if (win_clamp >= 0 && setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP,
					 &win_clamp, sizeof(win_clamp)))
		die(EXIT_SETUP, "setsockopt(TCP_WINDOW_CLAMP, %d): %s",
		    win_clamp, strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
		die(EXIT_SETUP, "setsockopt(SO_RCVBUF, %d): %s", val,
		    strerror(errno));
	if (rcvbuf2 >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf2,
				       sizeof(rcvbuf2)))
		die(EXIT_SETUP, "setsockopt(SO_RCVBUF, %d): %s", rcvbuf2,
		    strerror(errno));
}

/* What the receiving side saw over the transfer. */
static unsigned int rx_ssthresh_max;	/* largest tcpi_rcv_ssthresh */
static double rx_first, rx_last;	/* first and last byte, seconds */
static double rx_start;	/* the transfer began (after any hold), seconds */

/*
 * After every read: the receive window's ceiling, tcpi_rcv_ssthresh (of
 * the first subflow for MPTCP), which never exceeds the window clamp.
 */
static void rx_sample(int fd)
{
	struct tcp_info ti;

	if (get_tcp_info(fd, &ti) >= 0 && ti.tcpi_rcv_ssthresh > rx_ssthresh_max)
		rx_ssthresh_max = ti.tcpi_rcv_ssthresh;
}

/* The stream pattern each side sends (common.h): the client 0, the server 1. */
static unsigned int tx_seed;

/*
 * Send @to_send bytes and read to EOF at the same time; returns received.
 * What is sent is the stream pattern of @tx_seed, and every byte read is
 * checked against the peer's (exit 1 at the first that differs).
 */
static long long transfer(int fd, long long to_send, long long *sent)
{
	static char buf[64 * 1024], wbuf[64 * 1024];
	long long received = 0;
	int eof = 0, wr_done = 0;

	*sent = 0;
	rx_start = now_s();
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
			if (n > 0) {
				rx_last = now_s();
				if (!received)
					rx_first = rx_last;
				pattern_check("recv", buf, n, received, !tx_seed);
				received += n;
				rx_sample(fd);
			} else if (n == 0)
				eof = 1;
			else if (errno != EAGAIN && errno != EINTR)
				die(1, "recv: %s", strerror(errno));
		}
		if (p.revents & POLLOUT && !wr_done) {
			long long left = to_send - *sent;
			size_t len = left < (long long)sizeof(wbuf) ?
				     (size_t)left : sizeof(wbuf);

			pattern_fill(wbuf, len, *sent, tx_seed);
			n = send(fd, wbuf, len, MSG_NOSIGNAL);
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

static void hold_open(const char *file)
{
	if (!file)
		return;
	printf("holding\n");
	fflush(stdout);
	while (access(file, F_OK))
		usleep(20000);
}

/*
 * @ti and @subflows were read at connect: an MPTCP socket that has closed
 * its subflows after the transfer has none left to read them from.
 */
static void report(const char *side, int fd, struct buf_state at_start,
		   const struct tcp_info *tip, int subflows, long long sent,
		   long long received, const int *listener)
{
	const struct tcp_info ti = *tip;
	struct buf_state end = get_buf_state(fd);

	printf("side=%s rcv_wscale=%u snd_wscale=%u rcvbuf=%d lock=%d "
	       "rcvbuf_end=%d lock_end=%d sent=%lld received=%lld clamp=%d",
	       side, ti.tcpi_rcv_wscale, ti.tcpi_snd_wscale, at_start.rcvbuf,
	       at_start.lock, end.rcvbuf, end.lock, sent, received,
	       at_start.clamp);
	if (received)
		printf(" rx_ms=%.0f wait_ms=%.0f ssthresh_max=%u",
		       (rx_last - rx_first) * 1e3,
		       (rx_last - rx_start) * 1e3, rx_ssthresh_max);
	if (use_mptcp)
		printf(" subflows=%d", subflows);
	if (listener)
		printf(" listener_rcvbuf=%d listener_lock=%d", listener[0],
		       listener[1]);
	printf("\n");
	fflush(stdout);
}

const char *prog = "wscale";

int main(int argc, char **argv)
{
	const char *mode, *addr = NULL;
	int port = 40000, rcvbuf = -1, timeout = 20, fd, c;
	const char *hold = NULL;
	char when = 's';
	long long to_send = 0, sent, received;
	struct sockaddr_storage sa;
	socklen_t salen;
	struct buf_state st;
	struct tcp_info ti;
	int subflows;

	mode = mode_arg(argc, argv, usage, "server", "client");
	while ((c = getopt(argc, argv, "a:p:r:s:T:mw:H:c:R:")) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'p': port = parse_int("-p", optarg); break;
		case 'r': rcvbuf = parse_int("-r", optarg); break;
		case 's': to_send = parse_ll("-s", optarg); break;
		case 'T': timeout = parse_int("-T", optarg); break;
		case 'm': use_mptcp = 1; break;
		case 'H': hold = optarg; break;
		case 'c': win_clamp = parse_int("-c", optarg); break;
		case 'R': rcvbuf2 = parse_int("-R", optarg); break;
		case 'w':
			if (strcmp(optarg, "socket") && strcmp(optarg, "listen") &&
			    strcmp(optarg, "conn"))
				die(EXIT_USAGE, "-w: socket, listen or conn");
			when = optarg[0] == 'c' ? 'c' : optarg[0] == 'l' ? 'l' : 's';
			break;
		default: die(EXIT_USAGE, "bad option (try --help)");
		}
	}
	if (optind != argc)
		die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (!addr)
		addr = mode[0] == 's' ? "0.0.0.0" : "127.0.0.1";
	salen = inet_any_addr(&sa, addr, port);
	family = sa.ss_family;
	tx_seed = mode[0] == 's';
	if (when == 'l' && mode[0] != 's')
		die(EXIT_USAGE, "-w listen: server only");
	watchdog(timeout);

	fd = new_socket();
	if (rcvbuf >= 0 && when == 's')
		set_rcvbuf(fd, rcvbuf);

	if (mode[0] == 's') {
		int conn, listener[2];

		tcp_listen_at(fd, (struct sockaddr *)&sa, salen, addr, port);
		if (rcvbuf >= 0 && when == 'l')
			set_rcvbuf(fd, rcvbuf);
		st = get_buf_state(fd);
		listener[0] = st.rcvbuf;
		listener[1] = st.lock;
		printf("listening port=%d\n", port);
		fflush(stdout);
		conn = accept(fd, NULL, NULL);
		if (conn < 0)
			die(EXIT_SETUP, "accept: %s", strerror(errno));
		if (rcvbuf >= 0 && when == 'c')
			set_rcvbuf(conn, rcvbuf);
		st = get_buf_state(conn);
		subflows = get_tcp_info(conn, &ti);
		hold_open(hold);
		received = transfer(conn, to_send, &sent);
		report(mode, conn, st, &ti, subflows, sent, received, listener);
		close(conn);
	} else {
		while (connect(fd, (struct sockaddr *)&sa, salen)) {
			if (errno != ECONNREFUSED && errno != EINTR)
				die(EXIT_SETUP, "connect %s:%d: %s", addr, port,
				    strerror(errno));
			/* Server not listening yet: new socket, same options. */
			close(fd);
			usleep(20000);
			fd = new_socket();
			if (rcvbuf >= 0 && when == 's')
				set_rcvbuf(fd, rcvbuf);
		}
		if (rcvbuf >= 0 && when == 'c')
			set_rcvbuf(fd, rcvbuf);
		st = get_buf_state(fd);
		subflows = get_tcp_info(fd, &ti);
		hold_open(hold);
		received = transfer(fd, to_send, &sent);
		report(mode, fd, st, &ti, subflows, sent, received, NULL);
	}
	close(fd);
	return 0;
}
