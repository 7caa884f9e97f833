/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the rcvfix tools (rcvfixctl, rcvfix-bench): the version they
 * report and their messages on stderr. Header-only, so that each tool stays
 * one translation unit; tools/ builds on its own (it ships as rcvfix-tools).
 */
#ifndef RCVFIX_TOOLS_COMMON_H
#define RCVFIX_TOOLS_COMMON_H

#include <stdarg.h>
#include <stdio.h>

#ifndef RCVFIX_VERSION
#define RCVFIX_VERSION "unknown" /* the Makefile passes module/version.h's */
#endif

/* The tool's name, for messages: each tool defines it. */
extern const char *prog;

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

#endif /* RCVFIX_TOOLS_COMMON_H */
