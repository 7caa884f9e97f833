// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix-bench's socket options: read or set an int option (a failed set
 * is reported), the send/receive timeouts from --timeout, blocking mode,
 * --rcvbuf where it applies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "rcvfix-bench.h"

int get_int(int fd, int level, int opt)
{
	socklen_t len = sizeof(int);
	int v;

	if (getsockopt(fd, level, opt, &v, &len))
		return -1;
	return v;
}

int set_int(int fd, int level, int opt, long long v, const char *name)
{
	int i = (int)v;

	if (setsockopt(fd, level, opt, &i, sizeof(i))) {
		msg("setsockopt(%s, %lld): %s", name, v, strerror(errno));
		return -1;
	}
	return 0;
}

void set_timeouts(int fd)
{
	struct timeval tv = {
		.tv_sec = (time_t)cfg.timeout,
		.tv_usec = (suseconds_t)((cfg.timeout - (time_t)cfg.timeout) *
					 1e6),
	};

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

int set_blocking(int fd, bool blocking)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl);
}

/* --rcvbuf on @fd if @here is where it applies: 0, or -1 if that failed. */
int apply_rcvbuf(int fd, enum where here)
{
	if (cfg.rcvbuf_on != here || cfg.rcvbuf <= 0)
		return 0;
	return set_int(fd, SOL_SOCKET, SO_RCVBUF, cfg.rcvbuf, "SO_RCVBUF");
}
