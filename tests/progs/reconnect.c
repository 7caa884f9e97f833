// SPDX-License-Identifier: GPL-2.0
/*
 * reconnect: one client socket used for several connections in a row, as
 * the kernel's mptcp_connect -I does (net/mptcp selftests, "full
 * disconnect"): connect, SO_RCVBUF, both ends send BYTES and read the
 * other's until EOF, connect(AF_UNSPEC), connect again. Every byte read is
 * checked against the pattern its sender wrote, at its offset in the
 * stream (common.h's pattern_*(), one stream per direction): a lost,
 * doubled or changed byte is found where it happened.
 *
 * The server (a child process, same namespace) accepts the connections of
 * every round on one listener; it reports what it read on a pipe, and the
 * client disconnects only after that report (so nothing of its own is
 * still in flight when disconnect drops what is pending).
 *
 *   reconnect -c mptcp|tcp -s mptcp|tcp [-a ADDR] [-p PORT] [-n CONNS]
 *             [-r ROUNDS] [-b BYTES] [-R RCVBUF] [-L RCVBUF] [-T SECONDS]
 *
 * -R sets the client's SO_RCVBUF after each connect (as mptcp_connect
 * does), -L the listener's after listen(). Prints one line per bad
 * connection and a summary:
 *   summary rounds=R conns=N bad=B client_bad=C server_bad=S
 * Exit 0 if every byte arrived intact, 1 if not, 2 usage, 3 setup, 124
 * timeout.
 */
#include "common.h"

#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>

const char *prog = "reconnect";

static int cfg_conns = 3, cfg_rounds = 1, cfg_rcvbuf, cfg_lrcvbuf;
static long long cfg_bytes = 2 << 20;

/* Where the client is, for the watchdog's message. */
static volatile int at_round, at_conn;
static const char *volatile at_step = "setup";
static volatile unsigned long long at_sent, at_got;

static void on_timeout(int sig)
{
	char msg[160];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg),
		     "%s: timeout in round %d conn %d at %s (sent %llu, read %llu)\n",
		     prog, at_round, at_conn, at_step, at_sent, at_got);
	if (write(2, msg, n) < 0)
		_exit(EXIT_TIMEOUT);
	_exit(EXIT_TIMEOUT);
}

struct xfer {
	uint64_t sent, got;	/* bytes written, bytes read */
	int64_t bad_off;	/* first offset that did not match, or -1 */
	int eof;		/* the peer's EOF was read */
};

static void set_rcvbuf(int fd, int v)
{
	if (v && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)))
		die(EXIT_SETUP, "SO_RCVBUF %d: %s", v, strerror(errno));
}

/*
 * Move the data of one connection both ways, as mptcp_connect's poll loop
 * does: read at most 8 KB (a random amount) per wakeup, write random
 * amounts, shut the write side once all is sent, end at the peer's EOF.
 */
static void transfer(const char *side, int fd, unsigned int out_dir,
		     struct xfer *x)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
	static uint8_t wbuf[65536];
	uint8_t rbuf[8192];

	memset(x, 0, sizeof(*x));
	x->bad_off = -1;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (p.events) {
		int r = poll(&p, 1, 10000);

		if (r < 0)
			die(1, "poll: %s", strerror(errno));
		if (!r)
			die(1, "%s stalled 10 s: sent %llu of %lld, read %llu, eof %d",
			    side, (unsigned long long)x->sent, cfg_bytes,
			    (unsigned long long)x->got, x->eof);
		if (p.revents & POLLIN) {
			size_t cap = (rand() & 0xffff) ?: 1;
			ssize_t n;

			n = read(fd, rbuf, cap < sizeof(rbuf) ? cap : sizeof(rbuf));
			if (n == 0) {
				x->eof = 1;
				p.events &= ~POLLIN;
			} else if (n < 0 && errno != EAGAIN) {
				die(1, "read: %s", strerror(errno));
			}
			if (!out_dir)
				at_got = x->got + (n > 0 ? n : 0);
			if (n > 0 && x->bad_off < 0) {
				long long b = pattern_bad(rbuf, n, x->got, !out_dir);

				if (b >= 0)
					x->bad_off = x->got + b;
			}
			if (n > 0)
				x->got += n;
		}
		if (p.revents & POLLOUT) {
			uint64_t left = cfg_bytes - x->sent;
			size_t len = (rand() & 0xffff) ?: 1;
			ssize_t n;

			if (len > left)
				len = left;
			pattern_fill(wbuf, len, x->sent, out_dir);
			n = len ? write(fd, wbuf, len) : 0;
			if (n < 0 && errno != EAGAIN)
				die(1, "write: %s", strerror(errno));
			if (n > 0)
				x->sent += n;
			if (!out_dir)
				at_sent = x->sent;
			if (x->sent == (uint64_t)cfg_bytes) {
				shutdown(fd, SHUT_WR);
				p.events &= ~POLLOUT;
			}
		}
		if (p.revents & (POLLERR | POLLNVAL))
			die(1, "poll: revents %#x", p.revents);
	}
}

static int xfer_bad(const struct xfer *x)
{
	return x->got != (uint64_t)cfg_bytes || x->bad_off >= 0;
}

static void server(int lfd, int report)
{
	for (int i = 0; i < cfg_rounds * cfg_conns; i++) {
		struct xfer x;
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			die(EXIT_SETUP, "accept: %s", strerror(errno));
		transfer("server", fd, 1, &x);
		close(fd);
		if (write(report, &x, sizeof(x)) != sizeof(x))
			die(EXIT_SETUP, "report: %s", strerror(errno));
	}
	exit(0);
}

static int proto_arg(const char *s)
{
	if (!strcmp(s, "mptcp"))
		return 1;
	if (!strcmp(s, "tcp"))
		return 0;
	die(EXIT_USAGE, "not mptcp or tcp: '%s'", s);
}

static void print_bad(const char *side, int round, int conn,
		      const struct xfer *x)
{
	printf("bad round=%d conn=%d reader=%s got=%llu of %lld first_bad=%lld eof=%d\n",
	       round, conn, side, (unsigned long long)x->got, cfg_bytes,
	       (long long)x->bad_off, x->eof);
}

int main(int argc, char **argv)
{
	const char *addr = "127.0.0.1";
	int cmptcp = 1, smptcp = 1, port = 42500, timeout = 600;
	int pipefd[2], lfd, bad = 0, cbad = 0, sbad = 0, opt, status;
	struct sockaddr_storage ss, unspec = { .ss_family = AF_UNSPEC };
	socklen_t sslen;
	pid_t pid;

	while ((opt = getopt(argc, argv, "c:s:a:p:n:r:b:R:L:T:")) != -1) {
		switch (opt) {
		case 'c': cmptcp = proto_arg(optarg); break;
		case 's': smptcp = proto_arg(optarg); break;
		case 'a': addr = optarg; break;
		case 'p': port = parse_int("-p", optarg); break;
		case 'n': cfg_conns = parse_int("-n", optarg); break;
		case 'r': cfg_rounds = parse_int("-r", optarg); break;
		case 'b': cfg_bytes = parse_ll("-b", optarg); break;
		case 'R': cfg_rcvbuf = parse_int("-R", optarg); break;
		case 'L': cfg_lrcvbuf = parse_int("-L", optarg); break;
		case 'T': timeout = parse_int("-T", optarg); break;
		default: die(EXIT_USAGE, "bad option");
		}
	}
	if (cfg_conns < 1 || cfg_rounds < 1 || cfg_bytes < 1)
		die(EXIT_USAGE, "-n, -r and -b must be positive");
	watchdog(timeout);
	signal(SIGALRM, on_timeout);
	srand(getpid());
	sslen = inet_any_addr(&ss, addr, port);
	lfd = inet_stream_socket(ss.ss_family, smptcp);
	tcp_listen_at(lfd, (struct sockaddr *)&ss, sslen, addr, port);
	set_rcvbuf(lfd, cfg_lrcvbuf);
	if (pipe(pipefd))
		die(EXIT_SETUP, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die(EXIT_SETUP, "fork: %s", strerror(errno));
	if (!pid) {
		/* Not left behind (holding the caller's output) by a client that died. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(EXIT_SETUP);
		close(pipefd[0]);
		srand(getpid());
		server(lfd, pipefd[1]);
	}
	close(pipefd[1]);
	close(lfd);

	for (int r = 0; r < cfg_rounds; r++) {
		int fd = inet_stream_socket(ss.ss_family, cmptcp);

		for (int c = 0; c < cfg_conns; c++) {
			struct xfer cx, sx;
			int flags = fcntl(fd, F_GETFL);

			at_round = r;
			at_conn = c;
			at_step = "connect";
			fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
			if (connect(fd, (struct sockaddr *)&ss, sslen))
				die(1, "round %d conn %d: connect: %s", r, c,
				    strerror(errno));
			set_rcvbuf(fd, cfg_rcvbuf);
			at_step = "transfer";
			transfer("client", fd, 0, &cx);
			at_step = "the server's report";
			if (read(pipefd[0], &sx, sizeof(sx)) != sizeof(sx))
				die(1, "server report missing");
			if (xfer_bad(&cx)) {
				print_bad("client", r, c, &cx);
				cbad++;
			}
			if (xfer_bad(&sx)) {
				print_bad("server", r, c, &sx);
				sbad++;
			}
			bad += xfer_bad(&cx) || xfer_bad(&sx);
			at_step = "disconnect";
			if (c + 1 < cfg_conns &&
			    connect(fd, (struct sockaddr *)&unspec, sizeof(unspec)))
				die(1, "connect(AF_UNSPEC): %s", strerror(errno));
		}
		close(fd);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		bad++;
	printf("summary rounds=%d conns=%d bad=%d client_bad=%d server_bad=%d\n",
	       cfg_rounds, cfg_conns, bad, cbad, sbad);
	return bad ? 1 : 0;
}
