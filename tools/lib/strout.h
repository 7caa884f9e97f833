/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way rcvfix programs write a string as JSON or as a CSV field
 * (rcvfixctl --json, rcvfix-bench --json/--csv); tests/unit/strout_test
 * checks it. Header-only; includes libc only.
 */
#ifndef RCVFIX_LIB_STROUT_H
#define RCVFIX_LIB_STROUT_H

#include <stdio.h>
#include <string.h>

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

#endif /* RCVFIX_LIB_STROUT_H */
