// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of the receive-buffer rule (module/rule.h), compiled as
 * plain user-space C: a table of requests around the tcp_rmem[1] threshold
 * and the limits, with the size and outcome each must give. Prints TAP.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "rule.h"

#define MIN	2304		/* SOCK_MIN_RCVBUF on Debian 6.1 and 6.12 */
#define DEF	131072		/* default tcp_rmem[1] */

struct rule_case {
	const char *what;
	struct rcvfix_rcvbuf_req req;	/* val, min, tcp_rmem[1], locked, on */
	int size;			/* expected sk_rcvbuf */
	enum rcvfix_outcome outcome;	/* expected outcome */
};

#define C(what, val, def, locked, on, size, out) \
	{ what, { val, MIN, def, locked, on }, size, out }

static const struct rule_case cases[] = {
	/* Threshold, even tcp_rmem[1]: doubled value -2 / equal / +2. */
	C("2*val = tcp_rmem[1]-2 locks", 65535, DEF, false, true,
	  131070, RCVFIX_LOCK_SET),
	C("2*val = tcp_rmem[1] does not lock", 65536, DEF, false, true,
	  131072, RCVFIX_LOCK_AVOIDED),
	C("2*val = tcp_rmem[1]+2 does not lock", 65537, DEF, false, true,
	  131074, RCVFIX_LOCK_AVOIDED),
	/* Odd tcp_rmem[1]: the doubled value one below and one above. */
	C("2*val = tcp_rmem[1]-1 locks", 65536, DEF + 1, false, true,
	  131072, RCVFIX_LOCK_SET),
	C("2*val = tcp_rmem[1]+1 does not lock", 65536, DEF - 1, false, true,
	  131072, RCVFIX_LOCK_AVOIDED),
	/* The original report: tcp_rmem[1] = 425984. */
	C("report: 212992 -> 425984 unlocked", 212992, 425984, false, true,
	  425984, RCVFIX_LOCK_AVOIDED),
	C("report: 212991 -> 425982 locked", 212991, 425984, false, true,
	  425982, RCVFIX_LOCK_SET),
	/* Minimum. */
	C("0 gives SOCK_MIN_RCVBUF, locked", 0, DEF, false, true,
	  MIN, RCVFIX_LOCK_SET),
	C("2*val = SOCK_MIN_RCVBUF", MIN / 2, DEF, false, true,
	  MIN, RCVFIX_LOCK_SET),
	C("2*val one below SOCK_MIN_RCVBUF is raised", MIN / 2 - 1, DEF,
	  false, true, MIN, RCVFIX_LOCK_SET),
	C("SOCK_MIN_RCVBUF above tcp_rmem[1]: not locked", 0, MIN, false,
	  true, MIN, RCVFIX_LOCK_AVOIDED),
	C("SOCK_MIN_RCVBUF one below tcp_rmem[1]: locked", 0, MIN + 1, false,
	  true, MIN, RCVFIX_LOCK_SET),
	/* Upper limit: val is capped at INT_MAX / 2 before doubling. */
	C("INT_MAX capped to INT_MAX/2*2", INT_MAX, DEF, false, true,
	  INT_MAX - 1, RCVFIX_LOCK_AVOIDED),
	C("INT_MAX/2 doubled", INT_MAX / 2, DEF, false, true,
	  INT_MAX - 1, RCVFIX_LOCK_AVOIDED),
	C("INT_MAX/2+1 capped", INT_MAX / 2 + 1, DEF, false, true,
	  INT_MAX - 1, RCVFIX_LOCK_AVOIDED),
	C("INT_MAX with tcp_rmem[1] = INT_MAX locks", INT_MAX, INT_MAX, false,
	  true, INT_MAX - 1, RCVFIX_LOCK_SET),
	/* Negative values (SO_RCVBUFFORCE passes max(val, 0); a negative
	 * value reaching the rule still gives the minimum, as in stock). */
	C("-1 gives SOCK_MIN_RCVBUF", -1, DEF, false, true,
	  MIN, RCVFIX_LOCK_SET),
	C("INT_MIN gives SOCK_MIN_RCVBUF", INT_MIN, DEF, false, true,
	  MIN, RCVFIX_LOCK_SET),
	C("-1 with tiny tcp_rmem[1]: not locked", -1, 1, false, true,
	  MIN, RCVFIX_LOCK_AVOIDED),
	/* A lock already set stays, big or small. */
	C("locked + big stays locked", 1 << 20, DEF, true, true,
	  2 << 20, RCVFIX_LOCK_KEPT),
	C("locked + at threshold stays locked", 65536, DEF, true, true,
	  131072, RCVFIX_LOCK_KEPT),
	C("locked + small stays locked", 100, DEF, true, true,
	  MIN, RCVFIX_LOCK_KEPT),
	/* Disabled: stock, always locked, same size. */
	C("disabled, big: stock", 1 << 20, DEF, false, false,
	  2 << 20, RCVFIX_STOCK),
	C("disabled, at threshold: stock", 65536, DEF, false, false,
	  131072, RCVFIX_STOCK),
	C("disabled, small: stock", 1000, DEF, false, false,
	  MIN, RCVFIX_STOCK),
	C("disabled, INT_MAX: stock", INT_MAX, DEF, false, false,
	  INT_MAX - 1, RCVFIX_STOCK),
	C("disabled, negative: stock", -7, DEF, false, false,
	  MIN, RCVFIX_STOCK),
	C("disabled, locked: stock", 65536, DEF, true, false,
	  131072, RCVFIX_STOCK),
};

static const char *const outcome_names[] = {
	[RCVFIX_STOCK] = "STOCK",
	[RCVFIX_LOCK_SET] = "LOCK_SET",
	[RCVFIX_LOCK_AVOIDED] = "LOCK_AVOIDED",
	[RCVFIX_LOCK_KEPT] = "LOCK_KEPT",
};

static const char *outcome_name(enum rcvfix_outcome o)
{
	return (unsigned int)o < RCVFIX_OUTCOME_NR ? outcome_names[o] : "?";
}

int main(void)
{
	unsigned int n = sizeof(cases) / sizeof(cases[0]), i;
	unsigned int passed = 0, failed = 0;

	printf("1..%u\n", n);
	for (i = 0; i < n; i++) {
		const struct rule_case *c = &cases[i];
		int size = -12345;
		enum rcvfix_outcome o = rcvfix_rcvbuf_rule(&c->req, &size);

		if (size == c->size && o == c->outcome) {
			printf("ok %u - %s\n", i + 1, c->what);
			passed++;
		} else {
			printf("not ok %u - %s\n", i + 1, c->what);
			printf("#   val=%d tcp_rmem[1]=%d locked=%d enabled=%d\n",
			       c->req.val, c->req.rmem_default,
			       c->req.was_locked, c->req.enabled);
			printf("#   expected size=%d %s, got size=%d %s\n",
			       c->size, outcome_name(c->outcome), size,
			       outcome_name(o));
			failed++;
		}
	}
	printf("# %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
