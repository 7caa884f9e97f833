/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the rcvfix test programs: error reporting,
 * number parsing, errno names and a whole-run watchdog.
 * Header-only so that every program stays a single translation unit.
 */
#ifndef RCVFIX_TEST_COMMON_H
#define RCVFIX_TEST_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72		/* since Linux 5.15 */
#endif

static const char *prog_name __attribute__((unused)) = "rcvfix-test";

/* Exit codes: 0 ok, 1 the measured thing failed, 2 usage, 3 setup error. */
enum { EXIT_USAGE = 2, EXIT_SETUP = 3, EXIT_TIMEOUT = 124 };

static inline void __attribute__((noreturn, format(printf, 2, 3)))
die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* "EPERM" for EPERM, "0" for 0: stable tokens for test scripts. */
static inline const char *errno_name(int e)
{
	const char *n;

	if (!e)
		return "0";
	n = strerrorname_np(e);
	return n ? n : "E?";
}

/* Parse a decimal (or 0x hex) signed 64-bit number, or die. */
static inline long long parse_ll(const char *what, const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end)
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

static inline void on_alarm(int sig)
{
	static const char msg[] = ": timeout, giving up\n";

	(void)sig;
	if (write(2, prog_name, strlen(prog_name)) < 0 ||
	    write(2, msg, sizeof(msg) - 1) < 0)
		_exit(EXIT_TIMEOUT);
	_exit(EXIT_TIMEOUT);
}

/* Kill the whole program after @seconds, whatever it is blocked in. */
static inline void watchdog(unsigned int seconds)
{
	signal(SIGALRM, on_alarm);
	alarm(seconds);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* RCVFIX_TEST_COMMON_H */
