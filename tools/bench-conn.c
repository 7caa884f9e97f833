// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix-bench's two roles: the server listens (SO_RCVBUF on the listener
 * or the accepted socket), reads the client's hello and serves each
 * connection; the client connects (retrying a refused connection), sends
 * the hello and runs its end. Each end then prints its report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rcvfix-bench.h"

static int ms_left(double deadline)
{
	double left = deadline - now_s();

	if (left <= 0)
		return 0;
	if (left > INT_MAX / 1000)
		return INT_MAX;
	return (int)ceil(left * 1000);
}

static void fill(int64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = -1;
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
		if (apply_rcvbuf(fd, ON_LISTENER)) {
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

int run_server(void)
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
	double deadline = now_s() + cfg.timeout;
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
			if (apply_rcvbuf(fd, ON_CLIENT)) {
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
		if (err != ECONNREFUSED || now_s() + 0.1 >= deadline)
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

int run_client(void)
{
	int64_t h[H_N], rx[RX_N], tx[TX_N];
	int fd, ret;

	signal(SIGPIPE, SIG_IGN);
	fill(rx, RX_N);
	fill(tx, TX_N);
	h[H_FLAGS] = (cfg.reverse ? 1 : 0) | (cfg.nodelay ? 2 : 0) |
		     (cfg.verify ? 4 : 0);
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
