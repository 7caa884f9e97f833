// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of the tools' one string writer for JSON and CSV
 * (tools/lib/strout.h): what rcvfixctl --json and rcvfix-bench --json/--csv
 * print for strings with quotes, backslashes, commas and control
 * characters. Prints TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strout.h"

static const struct {
	const char *in, *json, *csv;
} cases[] = {
	{ "plain", "\"plain\"", "plain" },
	{ "", "\"\"", "" },
	{ "a\"b", "\"a\\\"b\"", "\"a\"\"b\"" },
	{ "back\\slash", "\"back\\\\slash\"", "back\\slash" },
	{ "a,b", "\"a,b\"", "\"a,b\"" },
	{ "line\nbreak\t", "\"line\\u000abreak\\u0009\"", "\"line\nbreak\t\"" },
	{ "EBUSY:sk_setsockopt:kernel.ftrace_enabled=0",
	  "\"EBUSY:sk_setsockopt:kernel.ftrace_enabled=0\"",
	  "EBUSY:sk_setsockopt:kernel.ftrace_enabled=0" },
};

/* What @write prints for @s, in @buf (256 bytes). */
static const char *written(void (*write)(FILE *, const char *), const char *s,
			   char *buf)
{
	FILE *f = fmemopen(buf, 256, "w");

	if (!f) {
		perror("fmemopen");
		exit(2);
	}
	write(f, s);
	fclose(f);
	return buf;
}

/* One TAP line: did @what of case @i print @want? */
static unsigned int check(unsigned int t, const char *what, unsigned int i,
			  const char *want, const char *got)
{
	if (!strcmp(got, want)) {
		printf("ok %u - %s of case %u\n", t, what, i);
		return 0;
	}
	printf("not ok %u - %s of case %u\n#   want %s\n#   got  %s\n", t, what,
	       i, want, got);
	return 1;
}

int main(void)
{
	unsigned int n = sizeof(cases) / sizeof(cases[0]), i, t = 0;
	unsigned int failed = 0;

	printf("1..%u\n", 2 * n);
	for (i = 0; i < n; i++) {
		char jbuf[256] = "", cbuf[256] = "";

		failed += check(++t, "json", i, cases[i].json,
				written(json_write_str, cases[i].in, jbuf));
		failed += check(++t, "csv", i, cases[i].csv,
				written(csv_write_str, cases[i].in, cbuf));
	}
	printf("# %u passed, %u failed\n", t - failed, failed);
	return failed ? 1 : 0;
}
