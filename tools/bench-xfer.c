// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix-bench's transfer loops: the receiver polls and reads what is
 * queued (as tcp_mmap), counting wakeups, reads, context switches and CPU;
 * the sender writes for a time or a byte count, paced with --rate (zeros,
 * or with --verify the stream pattern the receiver checks); each end then
 * reads its socket's facts, and the receiver sends them back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/pattern.h"
#include "rcvfix-bench.h"

static long long tv_us(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000 + tv->tv_usec;
}

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

/* Is a byte of @buf not the pattern's at stream offset @off? Says which. */
static bool data_bad(const char *buf, size_t len, long long off)
{
	long long i = pattern_bad(buf, len, (uint64_t)off, 0);

	if (i < 0)
		return false;
	msg("receiving: data corrupted at stream offset %lld: expected 0x%02x, got 0x%02x",
	    off + i, pattern_byte((uint64_t)(off + i), 0),
	    (unsigned char)buf[i]);
	return true;
}

/*
 * Receive until the sender shuts down: poll() for data, then read what is
 * there without blocking, as tcp_mmap does. With SO_RCVLOWAT set, poll()
 * returns only once that much is queued (or at the end). With @verify,
 * every byte read is checked against the stream pattern at its offset.
 */
static int do_receive(int fd, int64_t *rx, bool verify)
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
	t0 = now_s();
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
			if (n > 0 && verify && data_bad(buf, n, rx[RX_BYTES])) {
				err = EBADMSG;
				break;
			}
			if (n > 0) {
				rx[RX_BYTES] += n;
				rx[RX_READS]++;
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		if (err || !n)
			break; /* corrupted, or the end */
		if (errno != EAGAIN) {
			err = errno;
			break;
		}
	}
	t1 = now_s();
	getrusage(RUSAGE_THREAD, &ru1);
	free(buf);
	rx[RX_USEC] = (int64_t)((t1 - t0) * 1e6);
	rx[RX_NVCSW] = ru1.ru_nvcsw - ru0.ru_nvcsw;
	rx[RX_NIVCSW] = ru1.ru_nivcsw - ru0.ru_nivcsw;
	rx[RX_UTIME_US] = tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime);
	rx[RX_STIME_US] = tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime);
	rx_sockinfo(fd, rx);
	if (err && err != EBADMSG)
		msg("receiving: %s after %lld bytes", io_error(err),
		    (long long)rx[RX_BYTES]);
	return -err;
}

static void sleep_until(double t)
{
	struct timespec ts;
	double d = t - now_s();

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Send zeros (the stream pattern with --verify) for a duration or a byte
 * count; with a rate, pace the writes so that byte N leaves at
 * N * 8 / rate seconds.
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
	t0 = now_s();
	end = dur > 0 ? t0 + dur : INFINITY;
	while (!limit || total < limit) {
		size_t chunk = wsize;
		ssize_t n;

		if (now_s() >= end)
			break;
		if (limit && (long long)chunk > limit - total)
			chunk = limit - total;
		if (h[H_RATE_BPS] > 0)
			sleep_until(t0 + total * 8.0 / h[H_RATE_BPS]);
		if (h[H_FLAGS] & 4)
			pattern_fill(buf, chunk, (uint64_t)total, 0);
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
	tx[TX_USEC] = (int64_t)((now_s() - t0) * 1e6);
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

/*
 * The receiving end: apply its options, receive, send the measurements to
 * the sender. rcvbuf_req/on say what was set on this socket before.
 */
int run_receiver(int fd, const int64_t *h, int64_t *rx)
{
	long long lowat = h[H_RCVLOWAT] > 0 ? h[H_RCVLOWAT] : cfg.rcvlowat;
	int ret;

	if (lowat > 0) {
		if (set_int(fd, SOL_SOCKET, SO_RCVLOWAT, lowat, "SO_RCVLOWAT"))
			return -EINVAL;
		rx[RX_RCVLOWAT] = lowat;
	}
	ret = do_receive(fd, rx, h[H_FLAGS] & 4);
	if (ret)
		return ret;
	ret = send_block(fd, result_magic, rx, RX_N);
	if (ret)
		msg("sending the results: %s", io_error(-ret));
	return ret;
}

int run_sender(int fd, const int64_t *h, int64_t *rx, int64_t *tx)
{
	int ret = do_send(fd, h, tx);

	if (ret)
		return ret;
	ret = recv_block(fd, result_magic, rx, RX_N);
	if (ret)
		msg("waiting for the receiver's results: %s", io_error(-ret));
	return ret;
}
