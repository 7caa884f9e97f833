/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers of the rcvfix test programs (tests/progs, and tests/stress
 * through stress.h), on top of the shared tools/lib/util.h (name and
 * messages, number parsing, the clock): errno names, buffer locks before
 * SO_BUF_LOCK, the tests' exit codes, a whole-run watchdog, capabilities,
 * TCP setup and the stream pattern every receiver checks its bytes
 * against. Header-only so that every program stays one translation unit.
 */
#ifndef RCVFIX_TEST_COMMON_H
#define RCVFIX_TEST_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pattern.h"
#include "sock.h"
#include "util.h"

/* "EPERM" for EPERM, "0" for 0: stable tokens for test scripts. */
static inline const char *errno_name(int e)
{
	const char *n;

	if (!e)
		return "0";
	n = strerrorname_np(e);
	return n ? n : "E?";
}

/* Served by tests/kmod/rcvfix_test_buflock.ko (lib.sh loads it if needed). */
#define BUF_LOCK_PROC "/proc/rcvfix_test_buflock"

/*
 * The buffer locks of socket @fd, SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK as
 * getsockopt(SO_BUF_LOCK) reports them (2 = receive buffer locked). That
 * option exists since Linux 5.15; before (ENOPROTOOPT) the test module's
 * /proc file reads them: write the descriptor's number, read the same
 * open file. -1 (errno set) if neither can.
 */
/* Does this kernel have SO_BUF_LOCK (5.15)? */
static inline int have_so_buf_lock(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), v, ok;
	socklen_t len = sizeof(v);

	if (fd < 0)
		return 0;
	ok = !getsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &v, &len);
	close(fd);
	return ok;
}

static inline int sock_buf_lock(int fd)
{
	socklen_t len = sizeof(int);
	char buf[16];
	int lock, f, n;

	if (!getsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &lock, &len))
		return lock;
	if (errno != ENOPROTOOPT)
		return -1;
	f = open(BUF_LOCK_PROC, O_RDWR | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d", fd);
	if (write(f, buf, n) != n)
		n = -1;
	else
		n = pread(f, buf, sizeof(buf) - 1, 0);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

/* Exit codes: 0 ok, 1 the measured thing failed, 2 usage, 3 setup error. */
enum { EXIT_USAGE = 2, EXIT_SETUP = 3, EXIT_TIMEOUT = 124 };

/* Parse a decimal (or 0x hex) signed 64-bit number, or die. */
static inline long long parse_ll(const char *what, const char *s)
{
	long long v;

	if (num_parse(s, 0, 0, LLONG_MIN, LLONG_MAX, &v))
		die(EXIT_USAGE, "%s: not a number: '%s'", what, s);
	return v;
}

/* Parse an int, accepting the spellings INT_MAX, INT_MIN. */
static inline int parse_int(const char *what, const char *s)
{
	long long v;

	if (!strcmp(s, "INT_MAX"))
		return INT_MAX;
	if (!strcmp(s, "INT_MIN"))
		return INT_MIN;
	v = parse_ll(what, s);
	if (v < INT_MIN || v > INT_MAX)
		die(EXIT_USAGE, "%s: out of int range: '%s'", what, s);
	return (int)v;
}

/* What the watchdog prints after "prog: " (stress.h has its own). */
#ifndef WATCHDOG_MSG
#define WATCHDOG_MSG "timeout, giving up"
#endif

static inline void on_alarm(int sig)
{
	static const char text[] = ": " WATCHDOG_MSG "\n";

	(void)sig;
	if (write(2, prog, strlen(prog)) >= 0)
		(void)!write(2, text, sizeof(text) - 1);
	_exit(EXIT_TIMEOUT);
}

/* Kill the whole program after @seconds, whatever it is blocked in. */
static inline void watchdog(unsigned int seconds)
{
	signal(SIGALRM, on_alarm);
	alarm(seconds);
}

/* Drop CAP_NET_ADMIN from the calling thread (capabilities are per thread). */
static inline void drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned int bit = CAP_TO_MASK(CAP_NET_ADMIN);
	int i = CAP_TO_INDEX(CAP_NET_ADMIN);

	if (syscall(SYS_capget, &hdr, data))
		die(EXIT_SETUP, "capget: %s", strerror(errno));
	data[i].effective &= ~bit;
	data[i].permitted &= ~bit;
	data[i].inheritable &= ~bit;
	if (syscall(SYS_capset, &hdr, data))
		die(EXIT_SETUP, "capset: %s", strerror(errno));
}

/*
 * The mode of a two-mode program (argv[1], @a or @b) once -h or --help
 * there has printed @usage and exited 0; getopt() goes on from argv[2].
 */
static inline const char *mode_arg(int argc, char **argv, const char *usage,
				   const char *a, const char *b)
{
	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		exit(0);
	}
	if (argc < 2 || (strcmp(argv[1], a) && strcmp(argv[1], b)))
		die(EXIT_USAGE, "first argument must be %s or %s (try --help)",
		    a, b);
	optind = 2;
	return argv[1];
}

/* @sa for IPv4 address @addr (as -a gave it) and @port, or die. */
static inline void ipv4_addr(struct sockaddr_in *sa, const char *addr,
			     int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1)
		die(EXIT_USAGE, "-a: not an IPv4 address: '%s'", addr);
	sa->sin_port = htons(port);
}

/*
 * @addr, IPv4 or IPv6 (it has a ':'), and @port into @ss; returns the
 * length of the address, or dies.
 */
static inline socklen_t inet_any_addr(struct sockaddr_storage *ss,
				      const char *addr, int port)
{
	struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (!strchr(addr, ':')) {
		ipv4_addr((struct sockaddr_in *)ss, addr, port);
		return sizeof(struct sockaddr_in);
	}
	sa6->sin6_family = AF_INET6;
	if (inet_pton(AF_INET6, addr, &sa6->sin6_addr) != 1)
		die(EXIT_USAGE, "-a: not an IPv4 or IPv6 address: '%s'", addr);
	sa6->sin6_port = htons(port);
	return sizeof(*sa6);
}

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* An IPv4 or IPv6 stream socket of @family, MPTCP if @mptcp else TCP, or die. */
static inline int inet_stream_socket(int family, int mptcp)
{
	int fd = socket(family, SOCK_STREAM, mptcp ? IPPROTO_MPTCP : 0);

	if (fd < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	return fd;
}

/* A TCP socket over IPv4, or die. */
static inline int tcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	return fd;
}

/* SO_REUSEADDR, bind() to @sa and listen(), or die naming @addr:@port. */
static inline void tcp_listen_at(int fd, const struct sockaddr *sa,
				 socklen_t len, const char *addr, int port)
{
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, len) || listen(fd, 4))
		die(EXIT_SETUP, "bind/listen %s:%d: %s", addr, port,
		    strerror(errno));
}

/*
 * connect() @fd (of @family, MPTCP if @mptcp) to @sa, retrying on a fresh
 * socket every 20 ms while the peer is not listening yet; returns the
 * connected socket, or dies.
 */
static inline int connect_retry(int fd, const struct sockaddr_storage *sa,
				socklen_t len, int mptcp)
{
	while (connect(fd, (const struct sockaddr *)sa, len)) {
		if (errno != ECONNREFUSED && errno != EINTR)
			die(EXIT_SETUP, "connect: %s", strerror(errno));
		close(fd);
		usleep(20000);
		fd = inet_stream_socket(sa->ss_family, mptcp);
	}
	return fd;
}

static inline void tcp_listen(int fd, const struct sockaddr_in *sa,
			      const char *addr, int port)
{
	tcp_listen_at(fd, (const struct sockaddr *)sa, sizeof(*sa), addr, port);
}

/*
 * Check the @len bytes of @buf, read at offset @off of stream @seed; at
 * the first that differs, die (exit 1) naming @what, its stream offset,
 * the byte expected and the byte read.
 */
static inline void pattern_check(const char *what, const void *buf, size_t len,
				 uint64_t off, unsigned int seed)
{
	long long i = pattern_bad(buf, len, off, seed);

	if (i >= 0)
		die(1, "%s: data corrupted at stream offset %llu: expected 0x%02x, got 0x%02x",
		    what, (unsigned long long)(off + i),
		    pattern_byte(off + i, seed), ((const uint8_t *)buf)[i]);
}

#endif /* RCVFIX_TEST_COMMON_H */
