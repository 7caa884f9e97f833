/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The small code every rcvfix program shares (tools/, bench/, tests/progs,
 * tests/stress): the program's name and its messages on stderr, allocation
 * that cannot fail, the monotonic clock, and the one strict number parser
 * (each program words its own errors). Header-only; includes libc only.
 */
#ifndef RCVFIX_LIB_UTIL_H
#define RCVFIX_LIB_UTIL_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The program's name, for messages: each program defines it. */
extern const char *prog;

/* Exit status when an allocation fails; a program may define its own. */
#ifndef UTIL_OOM_EXIT
#define UTIL_OOM_EXIT 1
#endif

/* "prog: MESSAGE" and a newline on stderr. */
__attribute__((format(printf, 1, 0))) static inline void vmsg(const char *fmt,
							      va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

__attribute__((format(printf, 1, 2))) static inline void msg(const char *fmt,
							     ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/* msg(), then exit with status @code. */
__attribute__((noreturn, format(printf, 2, 3))) static inline void
die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(code);
}

static inline void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(UTIL_OOM_EXIT, "out of memory");
	return p;
}

static inline char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die(UTIL_OOM_EXIT, "out of memory");
	return d;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What num_parse() and num_parse_double() found wrong. */
enum { NUM_OK = 0, NUM_BAD = -1, NUM_RANGE = -2 };

/*
 * The whole of @s as an integer from @min to @max into @v. @base as
 * strtoll(): 10, or 0 for 0x hex and 0 octal too. @unit, if not 0, allows
 * one suffix K, M or G (either case) multiplying by @unit, @unit^2 or
 * @unit^3. Returns NUM_OK, NUM_BAD (empty, trailing characters, beyond 64
 * bits) or NUM_RANGE (outside [@min, @max]); @v is set only on NUM_OK.
 */
static inline int num_parse(const char *s, int base, long long unit,
			    long long min, long long max, long long *v)
{
	long long x, mult = 1;
	char *end;

	errno = 0;
	x = strtoll(s, &end, base);
	if (end == s || errno == ERANGE)
		return NUM_BAD;
	if (*end) {
		switch (unit ? *end : 0) {
		case 'k':
		case 'K':
			mult = unit;
			break;
		case 'm':
		case 'M':
			mult = unit * unit;
			break;
		case 'g':
		case 'G':
			mult = unit * unit * unit;
			break;
		default:
			return NUM_BAD;
		}
		if (end[1])
			return NUM_BAD;
	}
	if (x > max / mult || x < min / mult || x * mult < min ||
	    x * mult > max)
		return NUM_RANGE;
	*v = x * mult;
	return NUM_OK;
}

/* num_parse() for a finite decimal fraction (strtod) from @min to @max. */
static inline int num_parse_double(const char *s, double min, double max,
				   double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(x))
		return NUM_BAD;
	if (!(x >= min && x <= max))
		return NUM_RANGE;
	*v = x;
	return NUM_OK;
}

/* A number from @lo to @hi (decimal or 0x hex), or die with status @code. */
static inline long long parse_long(const char *what, const char *s,
				   long long lo, long long hi, int code)
{
	long long v;

	if (num_parse(s, 0, 0, lo, hi, &v))
		die(code, "%s: '%s' is not a number from %lld to %lld", what, s,
		    lo, hi);
	return v;
}

#endif /* RCVFIX_LIB_UTIL_H */
