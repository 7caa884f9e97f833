// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix-bench: a TCP bulk (or rate-limited) transfer that reports what the
 * receive-buffer rules did to it: throughput, window scales, receive buffer
 * and its lock, wakeups and CPU per MB. Modelled on the kernel's tcp_mmap.
 *
 * One connection carries, in order: a hello from the client (its options),
 * the data from the sender until it shuts down writing, and the receiver's
 * measurements back to the sender. Both ends print a report; the sender's
 * has both halves, so the client's report is complete unless -R is given.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72 /* since Linux 5.15 */
#endif
#define BUF_LOCK_RCV 2 /* SOCK_RCVBUF_LOCK as SO_BUF_LOCK reports it */

enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_FAIL = 2,
	EXIT_TIMEOUT = 3,
};

static const char hello_magic[8] = "RCVFXB1";
static const char result_magic[8] = "RCVFXR1";
static const double mb = 1048576.0; /* "MB" in every per-MB figure */

/* Where --rcvbuf is applied. */
enum where { ON_NONE, ON_LISTENER, ON_ACCEPTED, ON_CLIENT };
static const char *const where_name[] = { "none", "listener", "accepted",
					  "client" };

/* Client options the server needs, sent in the hello (u64, big endian). */
enum hello_field {
	H_FLAGS, /* bit 0: reverse, the server sends; bit 1: TCP_NODELAY */
	H_DURATION_US,
	H_BYTES,
	H_RATE_BPS,
	H_WRITE_SIZE,
	H_RCVLOWAT, /* 0: the server's own */
	H_RCVBUF_ACCEPTED, /* 0: the server's own */
	H_N
};

/* The receiver's measurements, sent back to the sender. -1: unknown. */
enum rx_field {
	RX_BYTES,
	RX_USEC,
	RX_RCV_WSCALE, /* the receiver's announced shift */
	RX_SND_WSCALE, /* the sender's announced shift */
	RX_WSCALE_OK, /* both sides agreed on window scaling */
	RX_RCVBUF_REQ, /* --rcvbuf value on the receiving side, 0 if none */
	RX_RCVBUF_ON, /* enum where */
	RX_RCVBUF_START,
	RX_RCVBUF_END,
	RX_BUF_LOCK, /* SO_BUF_LOCK bits at the end, -1 if unsupported */
	RX_RCVLOWAT, /* requested */
	RX_RCVLOWAT_EFF, /* SO_RCVLOWAT read back */
	RX_WAKEUPS, /* poll() returns with data */
	RX_READS,
	RX_NVCSW,
	RX_NIVCSW,
	RX_UTIME_US,
	RX_STIME_US,
	RX_RCV_RTT_US,
	RX_RCV_SPACE,
	RX_N
};

/* The sender's own view. */
enum tx_field {
	TX_BYTES,
	TX_USEC,
	TX_SND_WSCALE, /* tcpi_snd_wscale on the sending socket */
	TX_RCV_WSCALE,
	TX_RTT_US,
	TX_RETRANS,
	TX_SNDBUF_END,
	TX_RATE_BPS,
	TX_WRITE_SIZE,
	TX_N
};

struct cfg {
	bool server;
	const char *host;
	const char *bind;
	int port;
	long long rcvbuf;
	enum where rcvbuf_on;
	long long rcvlowat;
	double seconds;
	long long bytes;
	long long rate;
	long long write_size;
	long long read_size;
	bool reverse;
	bool once;
	bool json;
	bool csv;
	bool quiet;
	bool nodelay;
	double timeout;
	double wait;
};

static struct cfg cfg = {
	.port = 8787,
	.rcvbuf_on = ON_NONE,
	.seconds = 5.0,
	.write_size = 0,
	.read_size = 512 * 1024,
	.timeout = 10.0,
	.wait = -1.0,
};

const char *prog = "rcvfix-bench";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s -s [OPTIONS]            run the server\n"
		"       %s -c ADDRESS [OPTIONS]    run the client\n"
		"Measure a TCP transfer: throughput, window scales, the receive buffer and\n"
		"its lock, wakeups and CPU per MB received. By default the client sends and\n"
		"the server receives; the client's report holds both sides' figures.\n"
		"\n"
		"Roles:\n"
		"  -s, --server           listen, receive (or send with a -R client)\n"
		"  -c, --client ADDRESS   connect to ADDRESS (IPv4, IPv6 or a host name)\n"
		"  -p, --port PORT        TCP port (default 8787)\n"
		"  -B, --bind ADDRESS     server: listen on ADDRESS only (default: all)\n"
		"  -R, --reverse          client: the server sends, the client receives\n"
		"  -1, --once             server: exit after one connection\n"
		"\n"
		"Receive side:\n"
		"      --rcvbuf SIZE      setsockopt(SO_RCVBUF, SIZE) (default: not set,\n"
		"                         autotuning)\n"
		"      --rcvbuf-on WHERE  listener: on the server's listening socket, before\n"
		"                         listen() (server default); accepted: on the\n"
		"                         accepted socket; client: on the client's socket,\n"
		"                         before connect() (client default)\n"
		"      --rcvlowat SIZE    setsockopt(SO_RCVLOWAT) on the receiving socket;\n"
		"                         given to the client, it applies on the receiver\n"
		"      --read-size SIZE   bytes per read (default 512K)\n"
		"\n"
		"Send side (client options; the server follows them with -R):\n"
		"  -t, --time SECONDS     send for SECONDS (default 5)\n"
		"  -n, --bytes SIZE       send SIZE bytes (stops at whichever of -t, -n\n"
		"                         comes first; -n alone sets no time limit)\n"
		"      --rate RATE        rate-limited sender: RATE bit/s (suffix k, M, G:\n"
		"                         powers of 1000), small writes with TCP_NODELAY\n"
		"      --write-size SIZE  bytes per write (default 128K, 1000 with --rate)\n"
		"      --nodelay          TCP_NODELAY without --rate\n"
		"\n"
		"Output and limits:\n"
		"      --json             one JSON object per connection on stdout\n"
		"      --csv              a CSV header and one row per connection on stdout\n"
		"  -q, --quiet            no human-readable lines (with --json/--csv they go\n"
		"                         to stderr, otherwise to stdout)\n"
		"  -T, --timeout SECONDS  give up when connecting or any transfer stalls\n"
		"                         this long (default 10); the client retries a\n"
		"                         refused connection until then\n"
		"  -w, --wait SECONDS     server: give up waiting for a connection after\n"
		"                         SECONDS (default: 30 with --once, else forever; 0:\n"
		"                         forever)\n"
		"  -h, --help             show this help\n"
		"  -V, --version          show the version\n"
		"\n"
		"SIZE takes a suffix K, M or G (powers of 1024). MB in per-MB figures is\n"
		"1048576 bytes; Gbit/s is 10^9 bit/s.\n"
		"\n"
		"Exit status: 0 success, 1 bad usage, 2 connection or transfer failed,\n"
		"3 timed out.\n",
		prog, prog);
}

/* ---- small helpers ---- */

__attribute__((format(printf, 1, 2), noreturn)) static void
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	exit(EXIT_USAGE);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int ms_left(double deadline)
{
	double left = deadline - now();

	if (left <= 0)
		return 0;
	if (left > INT_MAX / 1000)
		return INT_MAX;
	return (int)ceil(left * 1000);
}

static long long tv_us(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000 + tv->tv_usec;
}

/*
 * A number with an optional suffix: K/M/G are powers of `base` (1024 for
 * sizes, 1000 for rates). The whole string must be used.
 */
static long long parse_num(const char *opt, const char *s, long long min,
			   long long max, long long base, const char *what)
{
	long long v, mult = 1;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || errno == ERANGE)
		goto bad;
	if (*end) {
		switch (*end) {
		case 'k':
		case 'K':
			mult = base;
			break;
		case 'm':
		case 'M':
			mult = base * base;
			break;
		case 'g':
		case 'G':
			mult = base * base * base;
			break;
		default:
			goto bad;
		}
		if (end[1])
			goto bad;
	}
	if (v > max / mult || v < min / mult || v * mult < min ||
	    v * mult > max)
		usage_error(
			"%s: '%s' is out of range: it must be between %lld and %lld",
			opt, s, min, max);
	return v * mult;
bad:
	usage_error("%s: '%s' is not %s", opt, s, what);
	return 0;
}

static long long parse_size(const char *opt, const char *s, long long min,
			    long long max)
{
	return parse_num(opt, s, min, max, 1024,
			 "a size (bytes, with an optional K, M or G suffix)");
}

static double parse_seconds(const char *opt, const char *s, double min,
			    double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		usage_error("%s: '%s' is not a number of seconds", opt, s);
	if (v < min || v > max)
		usage_error(
			"%s: '%s' is out of range: it must be between %g and %g seconds",
			opt, s, min, max);
	return v;
}

/* Write or read exactly len bytes, each wait bounded by cfg.timeout. */
static int io_all(int fd, void *buf, size_t len, bool out)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd,
				      .events = out ? POLLOUT : POLLIN };
		ssize_t n;
		int r;

		r = poll(&pfd, 1, (int)(cfg.timeout * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ETIMEDOUT;
		n = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
			  recv(fd, p, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EPIPE; /* the peer closed early */
		p += n;
		len -= n;
	}
	return 0;
}

static int send_block(int fd, const char *magic, const int64_t *v, size_t n)
{
	uint64_t wire[2 + RX_N + H_N];
	size_t i;

	memcpy(&wire[0], magic, 8);
	wire[1] = htobe64(n);
	for (i = 0; i < n; i++)
		wire[2 + i] = htobe64((uint64_t)v[i]);
	return io_all(fd, wire, (2 + n) * 8, true);
}

/*
 * Read a block of at most n values. A newer peer may send more values than
 * we know: read and drop them. Missing ones stay -1.
 */
static int recv_block(int fd, const char *magic, int64_t *v, size_t n)
{
	uint64_t head[2], x;
	size_t i, count;
	int ret;

	ret = io_all(fd, head, sizeof(head), false);
	if (ret)
		return ret;
	if (memcmp(&head[0], magic, 8))
		return -EPROTO;
	count = be64toh(head[1]);
	if (count > 4096)
		return -EPROTO;
	for (i = 0; i < n; i++)
		v[i] = -1;
	for (i = 0; i < count; i++) {
		ret = io_all(fd, &x, 8, false);
		if (ret)
			return ret;
		if (i < n)
			v[i] = (int64_t)be64toh(x);
	}
	return 0;
}

static const char *io_error(int err)
{
	switch (err) {
	case ETIMEDOUT:
		return "timed out (see --timeout)";
	case EPROTO:
		return "the peer does not speak rcvfix-bench (version mismatch?)";
	case EPIPE:
		return "the peer closed the connection early";
	default:
		return strerror(err);
	}
}

static int exit_for(int err)
{
	return err == ETIMEDOUT ? EXIT_TIMEOUT : EXIT_FAIL;
}

static int get_int(int fd, int level, int opt)
{
	socklen_t len = sizeof(int);
	int v;

	if (getsockopt(fd, level, opt, &v, &len))
		return -1;
	return v;
}

static int set_int(int fd, int level, int opt, long long v, const char *name)
{
	int i = (int)v;

	if (setsockopt(fd, level, opt, &i, sizeof(i))) {
		msg("setsockopt(%s, %lld): %s", name, v, strerror(errno));
		return -1;
	}
	return 0;
}

static void set_timeouts(int fd)
{
	struct timeval tv = {
		.tv_sec = (time_t)cfg.timeout,
		.tv_usec = (suseconds_t)((cfg.timeout - (time_t)cfg.timeout) *
					 1e6),
	};

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int set_blocking(int fd, bool blocking)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl);
}

/* ---- receiving ---- */

/* Socket facts for the report, read after the transfer. */
static void rx_sockinfo(int fd, int64_t *rx)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
		rx[RX_RCV_WSCALE] = ti.tcpi_rcv_wscale;
		rx[RX_SND_WSCALE] = ti.tcpi_snd_wscale;
		rx[RX_WSCALE_OK] = !!(ti.tcpi_options & TCPI_OPT_WSCALE);
		rx[RX_RCV_RTT_US] = ti.tcpi_rcv_rtt;
		rx[RX_RCV_SPACE] = ti.tcpi_rcv_space;
	}
	rx[RX_RCVBUF_END] = get_int(fd, SOL_SOCKET, SO_RCVBUF);
	rx[RX_BUF_LOCK] = get_int(fd, SOL_SOCKET, SO_BUF_LOCK);
	rx[RX_RCVLOWAT_EFF] = get_int(fd, SOL_SOCKET, SO_RCVLOWAT);
}

/*
 * Receive until the sender shuts down: poll() for data, then read what is
 * there without blocking, as tcp_mmap does. With SO_RCVLOWAT set, poll()
 * returns only once that much is queued (or at the end).
 */
static int do_receive(int fd, int64_t *rx)
{
	struct rusage ru0, ru1;
	double t0, t1;
	char *buf;
	int err = 0;

	buf = malloc(cfg.read_size);
	if (!buf) {
		msg("out of memory for a %lld-byte read buffer", cfg.read_size);
		return -ENOMEM;
	}
	rx[RX_BYTES] = rx[RX_WAKEUPS] = rx[RX_READS] = 0;
	getrusage(RUSAGE_THREAD, &ru0);
	t0 = now();
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		r = poll(&pfd, 1, (int)(cfg.timeout * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			break;
		}
		if (!r) {
			err = ETIMEDOUT;
			break;
		}
		rx[RX_WAKEUPS]++;
		for (;;) {
			n = recv(fd, buf, cfg.read_size, MSG_DONTWAIT);
			if (n > 0) {
				rx[RX_BYTES] += n;
				rx[RX_READS]++;
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		if (!n)
			break; /* the end */
		if (errno != EAGAIN) {
			err = errno;
			break;
		}
	}
	t1 = now();
	getrusage(RUSAGE_THREAD, &ru1);
	free(buf);
	rx[RX_USEC] = (int64_t)((t1 - t0) * 1e6);
	rx[RX_NVCSW] = ru1.ru_nvcsw - ru0.ru_nvcsw;
	rx[RX_NIVCSW] = ru1.ru_nivcsw - ru0.ru_nivcsw;
	rx[RX_UTIME_US] = tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime);
	rx[RX_STIME_US] = tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime);
	rx_sockinfo(fd, rx);
	if (err)
		msg("receiving: %s after %lld bytes", io_error(err),
		    (long long)rx[RX_BYTES]);
	return -err;
}

/* ---- sending ---- */

static void sleep_until(double t)
{
	struct timespec ts;
	double d = t - now();

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Send zeros for a duration or a byte count; with a rate, pace the writes
 * so that byte N leaves at N * 8 / rate seconds.
 */
static int do_send(int fd, const int64_t *h, int64_t *tx)
{
	long long total = 0, limit = h[H_BYTES];
	double t0, end, dur = h[H_DURATION_US] / 1e6;
	size_t wsize = (size_t)h[H_WRITE_SIZE];
	struct tcp_info ti;
	socklen_t len;
	char *buf;
	int err = 0;

	if (h[H_RATE_BPS] > 0 || (h[H_FLAGS] & 2))
		set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
	set_timeouts(fd);
	buf = calloc(1, wsize);
	if (!buf) {
		msg("out of memory for a %zu-byte write buffer", wsize);
		return -ENOMEM;
	}
	t0 = now();
	end = dur > 0 ? t0 + dur : INFINITY;
	while (!limit || total < limit) {
		size_t chunk = wsize;
		ssize_t n;

		if (now() >= end)
			break;
		if (limit && (long long)chunk > limit - total)
			chunk = limit - total;
		if (h[H_RATE_BPS] > 0)
			sleep_until(t0 + total * 8.0 / h[H_RATE_BPS]);
		n = send(fd, buf, chunk, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno == EAGAIN ? ETIMEDOUT : errno;
			break;
		}
		total += n;
	}
	free(buf);
	tx[TX_BYTES] = total;
	tx[TX_USEC] = (int64_t)((now() - t0) * 1e6);
	tx[TX_RATE_BPS] = h[H_RATE_BPS];
	tx[TX_WRITE_SIZE] = h[H_WRITE_SIZE];
	if (err) {
		msg("sending: %s after %lld bytes%s", io_error(err), total,
		    err == ETIMEDOUT ? " (is the receiver reading?)" : "");
		return -err;
	}
	if (shutdown(fd, SHUT_WR)) {
		msg("shutdown: %s", strerror(errno));
		return -errno;
	}
	len = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
		tx[TX_SND_WSCALE] = ti.tcpi_snd_wscale;
		tx[TX_RCV_WSCALE] = ti.tcpi_rcv_wscale;
		tx[TX_RTT_US] = ti.tcpi_rtt;
		tx[TX_RETRANS] = ti.tcpi_total_retrans;
	}
	tx[TX_SNDBUF_END] = get_int(fd, SOL_SOCKET, SO_SNDBUF);
	return 0;
}

/* ---- reporting ---- */

enum ftype { F_INT, F_DBL, F_STR };

struct field {
	const char *name;
	enum ftype type;
	bool known;
	long long i;
	double d;
	const char *s;
};

#define MAX_FIELDS 48

struct report {
	struct field f[MAX_FIELDS];
	size_t n;
};

static void add_int(struct report *r, const char *name, long long v, bool known)
{
	r->f[r->n++] = (struct field){ name, F_INT, known, v, 0, NULL };
}

static void add_dbl(struct report *r, const char *name, double v, bool known)
{
	r->f[r->n++] = (struct field){ name, F_DBL, known, 0, v, NULL };
}

static void add_str(struct report *r, const char *name, const char *v)
{
	r->f[r->n++] = (struct field){ name, F_STR, v != NULL, 0, 0, v };
}

/* rx and tx hold -1 for what this end does not know. */
static void build_report(struct report *r, const char *role,
			 const char *receiver, const int64_t *rx,
			 const int64_t *tx)
{
	bool rk = rx[RX_BYTES] >= 0, tk = tx[TX_BYTES] >= 0;
	double secs = rx[RX_USEC] / 1e6, mbytes = rx[RX_BYTES] / mb;
	long long cpu = rx[RX_UTIME_US] + rx[RX_STIME_US];
	int on = rx[RX_RCVBUF_ON] >= 0 && rx[RX_RCVBUF_ON] <= ON_CLIENT ?
			 (int)rx[RX_RCVBUF_ON] :
			 ON_NONE;

	r->n = 0;
	add_str(r, "role", role);
	add_str(r, "receiver", receiver);
	add_int(r, "bytes", rx[RX_BYTES], rk);
	add_dbl(r, "seconds", secs, rk);
	add_dbl(r, "gbit_s",
		rx[RX_USEC] > 0 ? rx[RX_BYTES] * 8e-3 / rx[RX_USEC] : 0, rk);
	add_int(r, "rcv_wscale", rx[RX_RCV_WSCALE], rx[RX_RCV_WSCALE] >= 0);
	add_int(r, "snd_wscale", rx[RX_SND_WSCALE], rx[RX_SND_WSCALE] >= 0);
	add_int(r, "wscale_ok", rx[RX_WSCALE_OK], rx[RX_WSCALE_OK] >= 0);
	add_int(r, "rcvbuf_req", rx[RX_RCVBUF_REQ], rx[RX_RCVBUF_REQ] >= 0);
	add_str(r, "rcvbuf_on", rk ? where_name[on] : NULL);
	add_int(r, "rcvbuf_start", rx[RX_RCVBUF_START],
		rx[RX_RCVBUF_START] >= 0);
	add_int(r, "rcvbuf_end", rx[RX_RCVBUF_END], rx[RX_RCVBUF_END] >= 0);
	add_int(r, "rcvbuf_locked", !!(rx[RX_BUF_LOCK] & BUF_LOCK_RCV),
		rx[RX_BUF_LOCK] >= 0);
	add_int(r, "buf_lock", rx[RX_BUF_LOCK], rx[RX_BUF_LOCK] >= 0);
	add_int(r, "rcvlowat", rx[RX_RCVLOWAT] > 0 ? rx[RX_RCVLOWAT] : 0, rk);
	add_int(r, "rcvlowat_eff", rx[RX_RCVLOWAT_EFF],
		rx[RX_RCVLOWAT_EFF] >= 0);
	add_int(r, "wakeups", rx[RX_WAKEUPS], rk);
	add_dbl(r, "wakeups_per_mb", mbytes > 0 ? rx[RX_WAKEUPS] / mbytes : 0,
		rk);
	add_int(r, "reads", rx[RX_READS], rk);
	add_int(r, "nvcsw", rx[RX_NVCSW], rk);
	add_int(r, "nivcsw", rx[RX_NIVCSW], rk);
	add_dbl(r, "csw_per_mb", mbytes > 0 ? rx[RX_NVCSW] / mbytes : 0, rk);
	add_dbl(r, "user_s", rx[RX_UTIME_US] / 1e6, rk);
	add_dbl(r, "sys_s", rx[RX_STIME_US] / 1e6, rk);
	add_int(r, "cpu_usec", cpu, rk);
	add_dbl(r, "cpu_usec_per_mb", mbytes > 0 ? cpu / mbytes : 0, rk);
	add_int(r, "rcv_rtt_us", rx[RX_RCV_RTT_US], rx[RX_RCV_RTT_US] >= 0);
	add_int(r, "rcv_space", rx[RX_RCV_SPACE], rx[RX_RCV_SPACE] >= 0);
	add_int(r, "sent_bytes", tx[TX_BYTES], tk);
	add_dbl(r, "send_seconds", tx[TX_USEC] / 1e6, tk);
	add_int(r, "sender_snd_wscale", tx[TX_SND_WSCALE],
		tx[TX_SND_WSCALE] >= 0);
	add_int(r, "sender_rcv_wscale", tx[TX_RCV_WSCALE],
		tx[TX_RCV_WSCALE] >= 0);
	add_int(r, "rtt_us", tx[TX_RTT_US], tx[TX_RTT_US] >= 0);
	add_int(r, "retrans", tx[TX_RETRANS], tx[TX_RETRANS] >= 0);
	add_int(r, "sndbuf_end", tx[TX_SNDBUF_END], tx[TX_SNDBUF_END] >= 0);
	add_int(r, "rate_bps", tx[TX_RATE_BPS], tx[TX_RATE_BPS] >= 0);
	add_int(r, "write_size", tx[TX_WRITE_SIZE], tx[TX_WRITE_SIZE] >= 0);
}

static void print_value(FILE *f, const struct field *x, bool json)
{
	if (!x->known) {
		fputs(json ? "null" : "", f);
		return;
	}
	switch (x->type) {
	case F_INT:
		fprintf(f, "%lld", x->i);
		break;
	case F_DBL:
		fprintf(f, "%.6g", x->d);
		break;
	case F_STR:
		if (json)
			json_write_str(f, x->s);
		else
			csv_write_str(f, x->s);
		break;
	}
}

static void print_machine(const struct report *r)
{
	static bool csv_header_done;
	size_t i;

	if (cfg.json) {
		putchar('{');
		for (i = 0; i < r->n; i++) {
			printf("%s\"%s\":", i ? "," : "", r->f[i].name);
			print_value(stdout, &r->f[i], true);
		}
		printf("}\n");
	}
	if (cfg.csv) {
		if (!csv_header_done) {
			for (i = 0; i < r->n; i++)
				printf("%s%s", i ? "," : "", r->f[i].name);
			putchar('\n');
			csv_header_done = true;
		}
		for (i = 0; i < r->n; i++) {
			if (i)
				putchar(',');
			print_value(stdout, &r->f[i], false);
		}
		putchar('\n');
	}
	fflush(stdout);
}

/* tcp_mmap's two lines, extended with what rcvfix is about. */
static void print_human(const int64_t *rx, const int64_t *tx)
{
	FILE *f = cfg.json || cfg.csv ? stderr : stdout;
	double mbytes = rx[RX_BYTES] / mb, secs = rx[RX_USEC] / 1e6;
	char lowat[64] = "not set";

	if (cfg.quiet)
		return;
	if (rx[RX_BYTES] >= 0) {
		if (rx[RX_RCVLOWAT] > 0)
			snprintf(lowat, sizeof(lowat), "%lld (effective %lld)",
				 (long long)rx[RX_RCVLOWAT],
				 (long long)rx[RX_RCVLOWAT_EFF]);
		fprintf(f,
			"received %.6g MB in %.6g s, %.6g Gbit/s; window scale: receiver %lld, sender %lld\n"
			"  rcvbuf %lld -> %lld%s, SO_RCVBUF request %lld on %s, rcvlowat %s\n"
			"  cpu usage user:%.6g sys:%.6g, %.6g usec per MB, %lld c-switches (%.4g per MB), %lld wakeups\n",
			mbytes, secs,
			secs > 0 ? rx[RX_BYTES] * 8 / secs / 1e9 : 0.0,
			(long long)rx[RX_RCV_WSCALE],
			(long long)rx[RX_SND_WSCALE],
			(long long)rx[RX_RCVBUF_START],
			(long long)rx[RX_RCVBUF_END],
			rx[RX_BUF_LOCK] < 0	       ? " (lock unknown)" :
			rx[RX_BUF_LOCK] & BUF_LOCK_RCV ? " (locked)" :
							 " (not locked)",
			(long long)rx[RX_RCVBUF_REQ],
			rx[RX_RCVBUF_REQ] > 0 ?
				where_name[rx[RX_RCVBUF_ON] & 3] :
				"none",
			lowat, rx[RX_UTIME_US] / 1e6, rx[RX_STIME_US] / 1e6,
			mbytes > 0 ?
				(rx[RX_UTIME_US] + rx[RX_STIME_US]) / mbytes :
				0.0,
			(long long)rx[RX_NVCSW],
			mbytes > 0 ? rx[RX_NVCSW] / mbytes : 0.0,
			(long long)rx[RX_WAKEUPS]);
	}
	if (tx[TX_BYTES] >= 0)
		fprintf(f,
			"  sent %lld bytes in %.6g s%s, rtt %.6g ms, %lld retransmits, sndbuf %lld\n",
			(long long)tx[TX_BYTES], tx[TX_USEC] / 1e6,
			tx[TX_RATE_BPS] > 0 ? " rate-limited" : "",
			tx[TX_RTT_US] / 1e3, (long long)tx[TX_RETRANS],
			(long long)tx[TX_SNDBUF_END]);
	fflush(f);
}

static void report(const char *role, const char *receiver, const int64_t *rx,
		   const int64_t *tx)
{
	struct report r;

	build_report(&r, role, receiver, rx, tx);
	print_human(rx, tx);
	if (cfg.json || cfg.csv)
		print_machine(&r);
}

/* ---- one connection, either end ---- */

static void fill(int64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = -1;
}

/*
 * The receiving end: apply its options, receive, send the measurements to
 * the sender. rcvbuf_req/on say what was set on this socket before.
 */
static int run_receiver(int fd, const int64_t *h, int64_t *rx)
{
	long long lowat = h[H_RCVLOWAT] > 0 ? h[H_RCVLOWAT] : cfg.rcvlowat;
	int ret;

	if (lowat > 0) {
		if (set_int(fd, SOL_SOCKET, SO_RCVLOWAT, lowat, "SO_RCVLOWAT"))
			return -EINVAL;
		rx[RX_RCVLOWAT] = lowat;
	}
	ret = do_receive(fd, rx);
	if (ret)
		return ret;
	ret = send_block(fd, result_magic, rx, RX_N);
	if (ret)
		msg("sending the results: %s", io_error(-ret));
	return ret;
}

static int run_sender(int fd, const int64_t *h, int64_t *rx, int64_t *tx)
{
	int ret = do_send(fd, h, tx);

	if (ret)
		return ret;
	ret = recv_block(fd, result_magic, rx, RX_N);
	if (ret)
		msg("waiting for the receiver's results: %s", io_error(-ret));
	return ret;
}

static int serve_one(int fd)
{
	int64_t h[H_N], rx[RX_N], tx[TX_N];
	long long req;
	int ret;

	fill(rx, RX_N);
	fill(tx, TX_N);
	set_timeouts(fd);
	ret = recv_block(fd, hello_magic, h, H_N);
	if (ret) {
		msg("reading the client's hello: %s", io_error(-ret));
		return ret;
	}
	if (h[H_FLAGS] & 1) {
		ret = run_sender(fd, h, rx, tx);
		if (!ret)
			report("server", "client", rx, tx);
		return ret;
	}
	/* We receive: say what was set on this socket. */
	req = h[H_RCVBUF_ACCEPTED] > 0	   ? h[H_RCVBUF_ACCEPTED] :
	      cfg.rcvbuf_on == ON_ACCEPTED ? cfg.rcvbuf :
					     0;
	if (req > 0) {
		if (set_int(fd, SOL_SOCKET, SO_RCVBUF, req, "SO_RCVBUF"))
			return -EINVAL;
		rx[RX_RCVBUF_REQ] = req;
		rx[RX_RCVBUF_ON] = ON_ACCEPTED;
	} else if (cfg.rcvbuf_on == ON_LISTENER && cfg.rcvbuf > 0) {
		rx[RX_RCVBUF_REQ] = cfg.rcvbuf;
		rx[RX_RCVBUF_ON] = ON_LISTENER;
	} else {
		rx[RX_RCVBUF_REQ] = 0;
		rx[RX_RCVBUF_ON] = ON_NONE;
	}
	rx[RX_RCVBUF_START] = get_int(fd, SOL_SOCKET, SO_RCVBUF);
	ret = run_receiver(fd, h, rx);
	if (!ret)
		report("server", "server", rx, tx);
	return ret;
}

static int open_listener(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL, *a;
	char port[16];
	int fd = -1, one = 1, zero = 0, err = 0;

	snprintf(port, sizeof(port), "%d", cfg.port);
	if (cfg.bind) {
		err = getaddrinfo(cfg.bind, port, &hints, &ai);
		if (err) {
			msg("--bind %s: %s", cfg.bind, gai_strerror(err));
			return -1;
		}
	} else {
		/* [::] taking IPv4 too; plain 0.0.0.0 if IPv6 is off. */
		hints.ai_family = AF_INET6;
		if (getaddrinfo(NULL, port, &hints, &ai))
			ai = NULL;
		hints.ai_family = AF_INET;
		a = NULL;
		if (!getaddrinfo(NULL, port, &hints, &a)) {
			struct addrinfo **t = &ai;

			while (*t)
				t = &(*t)->ai_next;
			*t = a;
		}
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (a->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		if (cfg.rcvbuf_on == ON_LISTENER && cfg.rcvbuf > 0 &&
		    set_int(fd, SOL_SOCKET, SO_RCVBUF, cfg.rcvbuf,
			    "SO_RCVBUF")) {
			close(fd);
			freeaddrinfo(ai);
			return -1;
		}
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 16))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		msg("cannot listen on port %d: %s%s", cfg.port, strerror(err),
		    err == EADDRINUSE ? " (another server running? use -p)" :
					"");
	return fd;
}

static int run_server(void)
{
	double wait = cfg.wait >= 0 ? cfg.wait : cfg.once ? 30.0 : 0.0;
	int lfd, ret = 0;

	signal(SIGPIPE, SIG_IGN);
	lfd = open_listener();
	if (lfd < 0)
		return EXIT_FAIL;
	if (!cfg.quiet)
		fprintf(stderr, "%s: listening on port %d\n", prog, cfg.port);
	for (;;) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int fd, r;

		r = poll(&pfd, 1, wait > 0 ? (int)(wait * 1000) : -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			msg("no connection within %g s (see --wait)", wait);
			ret = -ETIMEDOUT;
			break;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			msg("accept: %s", strerror(errno));
			continue;
		}
		ret = serve_one(fd);
		close(fd);
		if (cfg.once)
			break;
	}
	close(lfd);
	return ret ? exit_for(-ret) : EXIT_OK;
}

/* Connect, retrying a refused connection until the timeout. */
static int connect_client(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	double deadline = now() + cfg.timeout;
	struct addrinfo *ai, *a;
	char port[16];
	int fd = -1, err;

	snprintf(port, sizeof(port), "%d", cfg.port);
	err = getaddrinfo(cfg.host, port, &hints, &ai);
	if (err) {
		msg("%s: %s", cfg.host, gai_strerror(err));
		return -1;
	}
	for (;;) {
		for (a = ai; a; a = a->ai_next) {
			struct pollfd pfd;
			socklen_t len = sizeof(err);

			fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC,
				    0);
			if (fd < 0) {
				err = errno;
				continue;
			}
			if (cfg.rcvbuf_on == ON_CLIENT && cfg.rcvbuf > 0 &&
			    set_int(fd, SOL_SOCKET, SO_RCVBUF, cfg.rcvbuf,
				    "SO_RCVBUF")) {
				close(fd);
				freeaddrinfo(ai);
				return -1;
			}
			set_blocking(fd, false);
			err = 0;
			if (connect(fd, a->ai_addr, a->ai_addrlen)) {
				err = errno;
				if (err == EINPROGRESS) {
					pfd.fd = fd;
					pfd.events = POLLOUT;
					if (poll(&pfd, 1, ms_left(deadline)) <=
						    0 ||
					    getsockopt(fd, SOL_SOCKET, SO_ERROR,
						       &err, &len))
						err = ETIMEDOUT;
				}
			}
			if (!err) {
				set_blocking(fd, true);
				freeaddrinfo(ai);
				return fd;
			}
			close(fd);
			fd = -1;
		}
		if (err != ECONNREFUSED || now() + 0.1 >= deadline)
			break;
		usleep(100000);
	}
	freeaddrinfo(ai);
	msg("cannot connect to %s port %d: %s%s", cfg.host, cfg.port,
	    err == ETIMEDOUT ? "timed out" : strerror(err),
	    err == ECONNREFUSED ? " (is 'rcvfix-bench -s' running there?)" :
				  "");
	errno = err;
	return -1;
}

static int run_client(void)
{
	int64_t h[H_N], rx[RX_N], tx[TX_N];
	int fd, ret;

	signal(SIGPIPE, SIG_IGN);
	fill(rx, RX_N);
	fill(tx, TX_N);
	h[H_FLAGS] = (cfg.reverse ? 1 : 0) | (cfg.nodelay ? 2 : 0);
	h[H_DURATION_US] = (int64_t)(cfg.seconds * 1e6);
	h[H_BYTES] = cfg.bytes;
	h[H_RATE_BPS] = cfg.rate;
	h[H_WRITE_SIZE] = cfg.write_size;
	h[H_RCVLOWAT] = cfg.reverse ? 0 : cfg.rcvlowat;
	h[H_RCVBUF_ACCEPTED] = cfg.rcvbuf_on == ON_ACCEPTED ? cfg.rcvbuf : 0;

	fd = connect_client();
	if (fd < 0)
		return errno == ETIMEDOUT ? EXIT_TIMEOUT : EXIT_FAIL;
	set_timeouts(fd);
	ret = send_block(fd, hello_magic, h, H_N);
	if (ret) {
		msg("sending the hello: %s", io_error(-ret));
		close(fd);
		return exit_for(-ret);
	}
	if (cfg.reverse) {
		rx[RX_RCVBUF_REQ] = cfg.rcvbuf_on == ON_CLIENT ? cfg.rcvbuf : 0;
		rx[RX_RCVBUF_ON] = cfg.rcvbuf_on == ON_CLIENT &&
						   cfg.rcvbuf > 0 ?
					   ON_CLIENT :
					   ON_NONE;
		rx[RX_RCVBUF_START] = get_int(fd, SOL_SOCKET, SO_RCVBUF);
		ret = run_receiver(fd, h, rx);
		if (!ret)
			report("client", "client", rx, tx);
	} else {
		ret = run_sender(fd, h, rx, tx);
		if (!ret)
			report("client", "server", rx, tx);
	}
	close(fd);
	return ret ? exit_for(-ret) : EXIT_OK;
}

int main(int argc, char **argv)
{
	enum {
		O_RCVBUF = 256,
		O_RCVBUF_ON,
		O_RCVLOWAT,
		O_READ_SIZE,
		O_RATE,
		O_WRITE_SIZE,
		O_NODELAY,
		O_JSON,
		O_CSV,
	};
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'B' },
		{ "reverse", no_argument, NULL, 'R' },
		{ "once", no_argument, NULL, '1' },
		{ "rcvbuf", required_argument, NULL, O_RCVBUF },
		{ "rcvbuf-on", required_argument, NULL, O_RCVBUF_ON },
		{ "rcvlowat", required_argument, NULL, O_RCVLOWAT },
		{ "read-size", required_argument, NULL, O_READ_SIZE },
		{ "time", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, O_RATE },
		{ "write-size", required_argument, NULL, O_WRITE_SIZE },
		{ "nodelay", no_argument, NULL, O_NODELAY },
		{ "json", no_argument, NULL, O_JSON },
		{ "csv", no_argument, NULL, O_CSV },
		{ "quiet", no_argument, NULL, 'q' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool time_set = false, rcvbuf_on_set = false, sender_opt = false;
	const char *rcvbuf_on = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sc:p:B:R1t:n:qT:w:hV", opts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			cfg.server = true;
			break;
		case 'c':
			cfg.host = optarg;
			break;
		case 'p':
			cfg.port = (int)parse_num("--port", optarg, 1, 65535, 1,
						  "a port number");
			break;
		case 'B':
			cfg.bind = optarg;
			break;
		case 'R':
			cfg.reverse = true;
			break;
		case '1':
			cfg.once = true;
			break;
		case O_RCVBUF:
			cfg.rcvbuf = parse_size("--rcvbuf", optarg, 1, INT_MAX);
			break;
		case O_RCVBUF_ON:
			rcvbuf_on = optarg;
			rcvbuf_on_set = true;
			break;
		case O_RCVLOWAT:
			cfg.rcvlowat =
				parse_size("--rcvlowat", optarg, 1, INT_MAX);
			break;
		case O_READ_SIZE:
			cfg.read_size =
				parse_size("--read-size", optarg, 1, 1LL << 30);
			break;
		case 't':
			cfg.seconds =
				parse_seconds("--time", optarg, 0.001, 86400);
			time_set = true;
			sender_opt = true;
			break;
		case 'n':
			cfg.bytes = parse_size("--bytes", optarg, 1, LLONG_MAX);
			sender_opt = true;
			break;
		case O_RATE:
			cfg.rate = parse_num(
				"--rate", optarg, 1000, 1000000000000LL, 1000,
				"a rate (bit/s, with an optional k, M or G suffix)");
			sender_opt = true;
			break;
		case O_WRITE_SIZE:
			cfg.write_size =
				parse_size("--write-size", optarg, 1, 64 << 20);
			sender_opt = true;
			break;
		case O_NODELAY:
			cfg.nodelay = true;
			break;
		case O_JSON:
			cfg.json = true;
			break;
		case O_CSV:
			cfg.csv = true;
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'T':
			cfg.timeout =
				parse_seconds("--timeout", optarg, 0.1, 86400);
			break;
		case 'w':
			cfg.wait = parse_seconds("--wait", optarg, 0, 86400);
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("%s %s\n", prog, RCVFIX_VERSION);
			return EXIT_OK;
		case ':':
			usage_error("option %s needs an argument",
				    argv[optind - 1]);
			break;
		default:
			if (optopt && optopt != '?')
				usage_error("unknown option -%c", optopt);
			usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (cfg.server == !!cfg.host)
		usage_error("give either -s (server) or -c ADDRESS (client)");

	if (rcvbuf_on_set) {
		if (!strcmp(rcvbuf_on, "listener"))
			cfg.rcvbuf_on = ON_LISTENER;
		else if (!strcmp(rcvbuf_on, "accepted"))
			cfg.rcvbuf_on = ON_ACCEPTED;
		else if (!strcmp(rcvbuf_on, "client"))
			cfg.rcvbuf_on = ON_CLIENT;
		else
			usage_error(
				"--rcvbuf-on: '%s' is not one of listener, accepted, client",
				rcvbuf_on);
		if (!cfg.rcvbuf)
			usage_error("--rcvbuf-on needs --rcvbuf SIZE");
		if (cfg.server && cfg.rcvbuf_on == ON_CLIENT)
			usage_error(
				"--rcvbuf-on client: give it to the client (-c), not the server");
		if (!cfg.server && cfg.rcvbuf_on == ON_LISTENER)
			usage_error(
				"--rcvbuf-on listener: give it to the server (-s); the listener exists before any client");
	} else if (cfg.rcvbuf) {
		cfg.rcvbuf_on = cfg.server ? ON_LISTENER : ON_CLIENT;
	}
	if (cfg.server) {
		if (sender_opt || cfg.reverse || cfg.nodelay)
			usage_error(
				"-t, -n, --rate, --write-size, --nodelay and -R are client options: the server follows the client's");
	} else {
		if (cfg.once || cfg.bind || cfg.wait >= 0)
			usage_error(
				"--once, --bind and --wait are server options");
		if (cfg.reverse && cfg.rcvbuf_on == ON_ACCEPTED)
			usage_error(
				"--rcvbuf-on accepted with -R would set the sender's buffer: use --rcvbuf-on client");
		if (cfg.bytes && !time_set)
			cfg.seconds = 0; /* -n alone: no time limit */
		if (!cfg.write_size)
			cfg.write_size = cfg.rate ? 1000 : 128 * 1024;
		if (cfg.rate && cfg.seconds == 0 && !cfg.bytes)
			usage_error("--rate needs -t or -n");
	}
	return cfg.server ? run_server() : run_client();
}
