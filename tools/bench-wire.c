// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix-bench's wire protocol: blocks of big-endian 64-bit values behind
 * an 8-byte magic (the client's hello, the receiver's results), every wait
 * bounded by --timeout, and what its errors mean to the user.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "rcvfix-bench.h"

const char hello_magic[8] = "RCVFXB1";
const char result_magic[8] = "RCVFXR1";

/* Write or read exactly len bytes, each wait bounded by cfg.timeout. */
int io_all(int fd, void *buf, size_t len, bool out)
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

int send_block(int fd, const char *magic, const int64_t *v, size_t n)
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
int recv_block(int fd, const char *magic, int64_t *v, size_t n)
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

const char *io_error(int err)
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

int exit_for(int err)
{
	return err == ETIMEDOUT ? EXIT_TIMEOUT : EXIT_FAIL;
}
