// SPDX-License-Identifier: GPL-2.0
/*
 * bench-manyconn: many concurrent TCP connections into one listener, to
 * measure the receive memory a receive-buffer policy costs. The server
 * sets SO_RCVBUF on its listener, reads every connection as fast as it can
 * and samples the memory of its sockets (SO_MEMINFO, as `ss -m` shows it)
 * and the TCP memory of the system (/proc/net/sockstat) while they run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/sock_diag.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55 /* since Linux 4.12 */
#endif

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_FAIL = 2, EXIT_TIMEOUT = 3 };

#include "sock.h" /* tools/lib: BUF_LOCK_RCV */
#include "util.h" /* tools/lib: msg(), now_s(), num_parse() */

static const int io_size = 128 * 1024; /* bytes per read() or write() */
static const long page_size = 4096; /* unit of sockstat's "mem" */

static struct {
	bool server;
	const char *host;
	int port;
	int conns;
	int rcvbuf;
	double seconds; /* client: sending time */
	double timeout; /* give up when nothing happens this long */
	double interval; /* server: memory sampling period */
	bool csv;
} cfg = {
	.port = 8790,
	.conns = 200,
	.seconds = 5,
	.timeout = 30,
	.interval = 0.25,
};

static const char usage[] =
	"Usage: bench-manyconn -s [OPTIONS]           server: accept and receive\n"
	"       bench-manyconn -c ADDRESS [OPTIONS]   client: connect and send\n"
	"Open CONNS concurrent TCP connections from the client to the server,\n"
	"send on all of them for SECONDS, and report on the server: throughput,\n"
	"receive buffers at the end, and the peak receive memory while running\n"
	"(sum over its sockets of SO_MEMINFO rmem_alloc, the 'r' of `ss -m`, and\n"
	"the TCP 'mem' pages of /proc/net/sockstat, system-wide).\n"
	"\n"
	"  -s, --server           listen, accept CONNS connections, receive\n"
	"  -c, --client ADDRESS   connect CONNS times to ADDRESS (IPv4) and send\n"
	"  -p, --port PORT        TCP port (default 8790)\n"
	"  -n, --conns N          connections (default 200)\n"
	"      --rcvbuf SIZE      server: SO_RCVBUF on the listener before\n"
	"                         listen() (default: not set)\n"
	"  -t, --time SECONDS     client: send for SECONDS (default 5)\n"
	"  -T, --timeout SECONDS  give up after SECONDS without progress\n"
	"                         (default 30)\n"
	"  -i, --interval SECONDS server: memory sampling period (default 0.25)\n"
	"      --csv              server: a CSV header and one row on stdout\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 success, 1 bad usage, 2 a socket call failed,\n"
	"3 timed out.\n";

static double parse_double(const char *what, const char *s, double lo,
			   double hi)
{
	double v;

	if (num_parse_double(s, lo, hi, &v))
		die(EXIT_USAGE, "%s: '%s' is not a number from %g to %g", what,
		    s, lo, hi);
	return v;
}

static int parse_int(const char *what, const char *s, int lo, int hi)
{
	long long v;

	if (num_parse(s, 10, 0, lo, hi, &v))
		die(EXIT_USAGE, "%s: '%s' is not a whole number from %d to %d",
		    what, s, lo, hi);
	return (int)v;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* TCP "mem" of /proc/net/sockstat in pages, -1 if unreadable. */
static long sockstat_tcp_mem(void)
{
	char line[256];
	long mem = -1;
	FILE *f = fopen("/proc/net/sockstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, " mem ");

		if (!strncmp(line, "TCP:", 4) && p)
			mem = strtol(p + 5, NULL, 10);
	}
	fclose(f);
	return mem;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* ---- server ---------------------------------------------------------- */

struct conn {
	int fd;
	bool done;
};

struct peaks {
	long long rmem_sum; /* bytes, sum of rmem_alloc over sockets */
	int rmem_max; /* bytes, one socket */
	int rcvbuf_max; /* bytes, one socket */
	long sockstat_pages; /* system-wide TCP memory */
	int samples;
};

static void sample(struct conn *c, int n, struct peaks *pk)
{
	long long sum = 0;
	long pages;
	int i;

	for (i = 0; i < n; i++) {
		uint32_t mi[SK_MEMINFO_VARS] = { 0 };
		socklen_t len = sizeof(mi);

		if (getsockopt(c[i].fd, SOL_SOCKET, SO_MEMINFO, mi, &len))
			continue;
		sum += mi[SK_MEMINFO_RMEM_ALLOC];
		if ((int)mi[SK_MEMINFO_RMEM_ALLOC] > pk->rmem_max)
			pk->rmem_max = mi[SK_MEMINFO_RMEM_ALLOC];
		if ((int)mi[SK_MEMINFO_RCVBUF] > pk->rcvbuf_max)
			pk->rcvbuf_max = mi[SK_MEMINFO_RCVBUF];
	}
	if (sum > pk->rmem_sum)
		pk->rmem_sum = sum;
	pages = sockstat_tcp_mem();
	if (pages > pk->sockstat_pages)
		pk->sockstat_pages = pages;
	pk->samples++;
}

static int open_listener(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(cfg.port) };
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		msg("socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (cfg.rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &cfg.rcvbuf,
					 sizeof(cfg.rcvbuf))) {
		msg("setsockopt(SO_RCVBUF, %d): %s", cfg.rcvbuf,
		    strerror(errno));
		close(fd);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, cfg.conns + 16)) {
		msg("cannot listen on port %d: %s", cfg.port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int accept_all(int lfd, struct conn *c)
{
	double deadline = now_s() + cfg.timeout;
	int n = 0;

	while (n < cfg.conns) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd >= 0) {
			c[n].fd = fd;
			c[n].done = false;
			n++;
			deadline = now_s() + cfg.timeout;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			msg("accept: %s", strerror(errno));
			return -EXIT_FAIL;
		}
		if (now_s() > deadline) {
			msg("only %d of %d connections within %g s", n,
			    cfg.conns, cfg.timeout);
			return -EXIT_TIMEOUT;
		}
		usleep(10000);
	}
	return n;
}

static void report_server(struct conn *c, int n, long long bytes, double secs,
			  const struct peaks *pk, long base_pages)
{
	int rb[n], locked = 0, wscale = -1, i;
	double gbit = secs > 0 ? bytes * 8 / secs / 1e9 : 0;

	for (i = 0; i < n; i++) {
		socklen_t len = sizeof(rb[i]);
		int lock = 0;

		rb[i] = -1;
		getsockopt(c[i].fd, SOL_SOCKET, SO_RCVBUF, &rb[i], &len);
		len = sizeof(lock);
		if (!getsockopt(c[i].fd, SOL_SOCKET, SO_BUF_LOCK, &lock,
				&len) &&
		    (lock & BUF_LOCK_RCV))
			locked++;
		if (i == 0) {
			struct tcp_info ti;

			len = sizeof(ti);
			if (!getsockopt(c[i].fd, IPPROTO_TCP, TCP_INFO, &ti,
					&len))
				wscale = ti.tcpi_rcv_wscale;
		}
	}
	qsort(rb, n, sizeof(rb[0]), cmp_int);
	if (cfg.csv) {
		printf("conns,bytes,seconds,gbit_s,rcv_wscale,rcvbuf_min,"
		       "rcvbuf_median,rcvbuf_max,rcvbuf_locked,rcvbuf_peak,"
		       "rmem_peak_sum,rmem_peak_max,sockstat_base_pages,"
		       "sockstat_peak_pages,samples\n");
		printf("%d,%lld,%.3f,%.6f,%d,%d,%d,%d,%d,%d,%lld,%d,%ld,%ld,%d\n",
		       n, bytes, secs, gbit, wscale, rb[0], rb[n / 2],
		       rb[n - 1], locked, pk->rcvbuf_max, pk->rmem_sum,
		       pk->rmem_max, base_pages, pk->sockstat_pages,
		       pk->samples);
	}
	fprintf(cfg.csv ? stderr : stdout,
		"%d connections: %.1f MB in %.2f s, %.1f Mbit/s; rcvbuf at end %d/%d/%d (min/median/max), %d locked, window scale %d;\n"
		"peak receive memory: %.1f MB over all sockets (%.0f KB on the fullest), sockstat TCP mem %ld pages (%.1f MB; %ld before)\n",
		n, bytes / 1048576.0, secs, gbit * 1000, rb[0], rb[n / 2],
		rb[n - 1], locked, wscale, pk->rmem_sum / 1048576.0,
		pk->rmem_max / 1024.0, pk->sockstat_pages,
		pk->sockstat_pages * page_size / 1048576.0, base_pages);
}

static int run_server(void)
{
	struct conn *c = calloc(cfg.conns, sizeof(*c));
	char *buf = malloc(io_size);
	struct epoll_event ev[256];
	struct peaks pk = { 0 };
	long long bytes = 0;
	double start = 0, end = 0, next_sample, last_progress;
	long base_pages = sockstat_tcp_mem();
	int lfd, ep, n, open_conns, i, ret = EXIT_OK;

	if (!c || !buf) {
		msg("out of memory");
		return EXIT_FAIL;
	}
	lfd = open_listener();
	if (lfd < 0 || set_nonblock(lfd))
		return EXIT_FAIL;
	n = accept_all(lfd, c);
	close(lfd);
	if (n < 0)
		return -n;
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &e)) {
			msg("epoll_ctl: %s", strerror(errno));
			return EXIT_FAIL;
		}
	}
	open_conns = n;
	next_sample = last_progress = now_s();
	while (open_conns > 0) {
		int k = epoll_wait(ep, ev, 256, (int)(cfg.interval * 1000));
		double t = now_s();

		if (k < 0 && errno != EINTR) {
			msg("epoll_wait: %s", strerror(errno));
			ret = EXIT_FAIL;
			break;
		}
		for (i = 0; i < k; i++) {
			struct conn *cn = &c[ev[i].data.u32];
			ssize_t r = read(cn->fd, buf, io_size);

			if (r > 0) {
				if (!start)
					start = t;
				bytes += r;
				last_progress = t;
			} else if (r == 0 ||
				   (errno != EAGAIN && errno != EINTR)) {
				epoll_ctl(ep, EPOLL_CTL_DEL, cn->fd, NULL);
				cn->done = true;
				open_conns--;
				end = t;
			}
		}
		if (t >= next_sample) {
			sample(c, n, &pk);
			next_sample = t + cfg.interval;
		}
		if (t - last_progress > cfg.timeout) {
			msg("no data for %g s, %d connections still open",
			    cfg.timeout, open_conns);
			ret = EXIT_TIMEOUT;
			break;
		}
	}
	if (ret == EXIT_OK)
		report_server(c, n, bytes, end - start, &pk, base_pages);
	for (i = 0; i < n; i++)
		close(c[i].fd);
	close(ep);
	free(c);
	free(buf);
	return ret;
}

/* ---- client ---------------------------------------------------------- */

static int run_client(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(cfg.port) };
	int *fds = calloc(cfg.conns, sizeof(int));
	char *buf = calloc(1, io_size);
	struct epoll_event ev[256];
	double t0, deadline;
	long long sent = 0;
	int ep, i, connected = 0, open_conns, ret = EXIT_OK;

	if (!fds || !buf) {
		msg("out of memory");
		return EXIT_FAIL;
	}
	if (inet_pton(AF_INET, cfg.host, &a.sin_addr) != 1) {
		msg("'%s' is not an IPv4 address", cfg.host);
		return EXIT_USAGE;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	/*
	 * The first connection retries until the server listens; the others
	 * connect in parallel (non-blocking): a write before the handshake
	 * ends returns EAGAIN, and EPOLLOUT comes once it has ended.
	 */
	deadline = now_s() + cfg.timeout;
	for (i = 0; i < cfg.conns; i++) {
		struct epoll_event e = { .events = EPOLLOUT, .data.u32 = i };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			msg("socket: %s", strerror(errno));
			return EXIT_FAIL;
		}
		if (i > 0)
			set_nonblock(fd);
		while (connect(fd, (struct sockaddr *)&a, sizeof(a)) &&
		       errno != EINPROGRESS) {
			if (i > 0 || errno != ECONNREFUSED ||
			    now_s() > deadline) {
				msg("connect %d to %s port %d: %s", i + 1,
				    cfg.host, cfg.port, strerror(errno));
				return errno == ECONNREFUSED ? EXIT_TIMEOUT :
							       EXIT_FAIL;
			}
			close(fd);
			usleep(100000);
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0) {
				msg("socket: %s", strerror(errno));
				return EXIT_FAIL;
			}
		}
		if (i == 0)
			set_nonblock(fd);
		fds[i] = fd;
		connected++;
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	}
	t0 = now_s();
	deadline = t0 + cfg.seconds;
	while (now_s() < deadline) {
		int k = epoll_wait(ep, ev, 256, 100);

		for (i = 0; i < k; i++) {
			ssize_t w = write(fds[ev[i].data.u32], buf, io_size);

			if (w > 0)
				sent += w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				msg("write: %s", strerror(errno));
				ret = EXIT_FAIL;
				goto out;
			}
		}
	}
	/* Done sending: FIN after the queued data, wait for the server. */
	open_conns = connected;
	for (i = 0; i < connected; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

		shutdown(fds[i], SHUT_WR);
		epoll_ctl(ep, EPOLL_CTL_MOD, fds[i], &e);
	}
	deadline = now_s() + cfg.timeout;
	while (open_conns > 0) {
		int k = epoll_wait(ep, ev, 256, 200);

		for (i = 0; i < k; i++) {
			int fd = fds[ev[i].data.u32];
			ssize_t r = read(fd, buf, io_size);

			if (r <= 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				open_conns--;
			}
		}
		if (now_s() > deadline) {
			msg("%d connections not closed by the server after %g s",
			    open_conns, cfg.timeout);
			ret = EXIT_TIMEOUT;
			break;
		}
	}
	fprintf(stderr, "%s: sent %.1f MB on %d connections in %.2f s\n",
		prog, sent / 1048576.0, connected, now_s() - t0);
out:
	for (i = 0; i < connected; i++)
		close(fds[i]);
	close(ep);
	free(fds);
	free(buf);
	return ret;
}

const char *prog = "bench-manyconn";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "conns", required_argument, NULL, 'n' },
		{ "rcvbuf", required_argument, NULL, 'B' },
		{ "time", required_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "interval", required_argument, NULL, 'i' },
		{ "csv", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "sc:p:n:t:T:i:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			cfg.server = true;
			break;
		case 'c':
			cfg.host = optarg;
			break;
		case 'p':
			cfg.port = parse_int("--port", optarg, 1, 65535);
			break;
		case 'n':
			cfg.conns = parse_int("--conns", optarg, 1, 10000);
			break;
		case 'B':
			cfg.rcvbuf = parse_int("--rcvbuf", optarg, 1, INT_MAX);
			break;
		case 't':
			cfg.seconds = parse_double("--time", optarg, 0.1, 3600);
			break;
		case 'T':
			cfg.timeout =
				parse_double("--timeout", optarg, 1, 3600);
			break;
		case 'i':
			cfg.interval =
				parse_double("--interval", optarg, 0.01, 60);
			break;
		case 'C':
			cfg.csv = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (optind < argc || cfg.server == !!cfg.host) {
		msg("give exactly one of -s and -c ADDRESS, and no other "
		    "arguments (see --help)");
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	return cfg.server ? run_server() : run_client();
}
