// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of the one number parser of the rcvfix programs
 * (tools/lib/util.h: num_parse(), num_parse_double()): whole strings only,
 * the K/M/G suffixes, ranges and overflow. Prints TAP.
 */
#include <limits.h>
#include <stdio.h>

#include "util.h"

const char *prog = "num_test";

static const struct {
	const char *s;
	int base;
	long long unit, min, max;
	int ret;
	long long v;
} ints[] = {
	{ "42", 10, 0, 0, 100, NUM_OK, 42 },
	{ "-5", 10, 0, -10, 10, NUM_OK, -5 },
	{ "", 10, 0, 0, 100, NUM_BAD, 0 },
	{ "12x", 10, 1024, 0, LLONG_MAX, NUM_BAD, 0 },
	{ "0x10", 0, 0, 0, 100, NUM_OK, 16 },
	{ "0x10", 10, 0, 0, 100, NUM_BAD, 0 },
	{ "8K", 10, 1024, 1, INT_MAX, NUM_OK, 8192 },
	{ "8k", 10, 1024, 1, INT_MAX, NUM_OK, 8192 },
	{ "20M", 10, 1000, 1000, 1000000000000LL, NUM_OK, 20000000 },
	{ "1G", 10, 1024, 1, INT_MAX, NUM_OK, 1073741824 },
	{ "16G", 10, 1024, 1, LLONG_MAX, NUM_OK, 17179869184LL },
	{ "8K", 10, 0, 1, INT_MAX, NUM_BAD, 0 },
	{ "1KB", 10, 1024, 1, INT_MAX, NUM_BAD, 0 },
	{ "K", 10, 1024, 1, INT_MAX, NUM_BAD, 0 },
	{ "8E", 10, 1024, 1, LLONG_MAX, NUM_BAD, 0 },
	{ "0", 10, 1024, 1, INT_MAX, NUM_RANGE, 0 },
	{ "3G", 10, 1024, 1, INT_MAX, NUM_RANGE, 0 },
	{ "9000000000G", 10, 1024, 1, LLONG_MAX, NUM_RANGE, 0 },
	{ "9223372036854775807", 10, 0, 0, LLONG_MAX, NUM_OK, LLONG_MAX },
	{ "99999999999999999999", 0, 0, LLONG_MIN, LLONG_MAX, NUM_BAD, 0 },
};

static const struct {
	const char *s;
	double min, max;
	int ret;
	double v;
} dbls[] = {
	{ "0.5", 0, 10, NUM_OK, 0.5 },	 { "1e3", 0, 86400, NUM_OK, 1000 },
	{ "", 0, 10, NUM_BAD, 0 },	 { "5s", 0, 10, NUM_BAD, 0 },
	{ "nan", 0, 10, NUM_BAD, 0 },	 { "inf", 0, 10, NUM_BAD, 0 },
	{ "0", 0.001, 10, NUM_RANGE, 0 }, { "11", 0, 10, NUM_RANGE, 0 },
};

int main(void)
{
	unsigned int ni = sizeof(ints) / sizeof(ints[0]);
	unsigned int nd = sizeof(dbls) / sizeof(dbls[0]);
	unsigned int i, t = 0, failed = 0;

	printf("1..%u\n", ni + nd);
	for (i = 0; i < ni; i++) {
		long long v = 0;
		int ret = num_parse(ints[i].s, ints[i].base, ints[i].unit,
				    ints[i].min, ints[i].max, &v);
		int ok = ret == ints[i].ret && (ret || v == ints[i].v);

		failed += !ok;
		printf("%s %u - num_parse(\"%s\", base %d, unit %lld)\n",
		       ok ? "ok" : "not ok", ++t, ints[i].s, ints[i].base,
		       ints[i].unit);
		if (!ok)
			printf("#   want %d %lld\n#   got  %d %lld\n",
			       ints[i].ret, ints[i].v, ret, v);
	}
	for (i = 0; i < nd; i++) {
		double v = 0;
		int ret = num_parse_double(dbls[i].s, dbls[i].min, dbls[i].max,
					   &v);
		int ok = ret == dbls[i].ret && (ret || v == dbls[i].v);

		failed += !ok;
		printf("%s %u - num_parse_double(\"%s\")\n",
		       ok ? "ok" : "not ok", ++t, dbls[i].s);
		if (!ok)
			printf("#   want %d %g\n#   got  %d %g\n", dbls[i].ret,
			       dbls[i].v, ret, v);
	}
	printf("# %u passed, %u failed\n", t - failed, failed);
	return failed ? 1 : 0;
}
