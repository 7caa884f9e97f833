// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of the tools' one string writer for JSON and CSV
 * (tools/common.h): what rcvfixctl --json and rcvfix-bench --json/--csv
 * print for strings with quotes, backslashes, commas and control
 * characters. Prints TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

const char *prog = "strout_test";

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

int main(void)
{
	unsigned int n = sizeof(cases) / sizeof(cases[0]), i, t = 0;
	unsigned int passed = 0, failed = 0;

	printf("1..%u\n", 2 * n);
	for (i = 0; i < n; i++) {
		char jbuf[256] = "", cbuf[256] = "";
		const char *j = written(json_write_str, cases[i].in, jbuf);
		const char *c = written(csv_write_str, cases[i].in, cbuf);

		if (!strcmp(j, cases[i].json)) {
			printf("ok %u - json of case %u\n", ++t, i);
			passed++;
		} else {
			printf("not ok %u - json of case %u\n#   want %s\n#   got  %s\n",
			       ++t, i, cases[i].json, j);
			failed++;
		}
		if (!strcmp(c, cases[i].csv)) {
			printf("ok %u - csv of case %u\n", ++t, i);
			passed++;
		} else {
			printf("not ok %u - csv of case %u\n#   want %s\n#   got  %s\n",
			       ++t, i, cases[i].csv, c);
			failed++;
		}
	}
	printf("# %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
