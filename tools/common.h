/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the rcvfix tools (rcvfixctl, rcvfix-bench): the version they
 * report, their messages on stderr, and the one way they write a string as
 * JSON or as a CSV field. Header-only, so that each tool stays
 * one translation unit; tools/ builds on its own (it ships as rcvfix-tools).
 */
#ifndef RCVFIX_TOOLS_COMMON_H
#define RCVFIX_TOOLS_COMMON_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* @s as a JSON string: quotes, backslashes and control characters escaped. */
static inline void json_write_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* @s as a CSV field (RFC 4180): quoted, quotes doubled, when it must be. */
static inline void csv_write_str(FILE *f, const char *s)
{
	const char *p;

	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

#endif /* RCVFIX_TOOLS_COMMON_H */
