/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receive-buffer rule, as one pure function shared by every path that
 * sets a socket's receive buffer. No kernel state is touched here, so the
 * host unit tests (tests/unit/) compile this header as it is.
 *
 * Stock Linux (__sock_set_rcvbuf() in net/core/sock.c):
 *
 *	val = min(val, INT_MAX / 2);
 *	sk_userlocks |= SOCK_RCVBUF_LOCK;
 *	sk_rcvbuf = max(val * 2, SOCK_MIN_RCVBUF);
 *
 * The lock stops receive-buffer autotuning and makes the window scale
 * offered at connect time follow the (small) buffer. rcvfix computes the
 * same size but locks only a buffer that the request made smaller than the
 * namespace's default, net.ipv4.tcp_rmem[1]:
 *
 *	size = max(min(val, INT_MAX / 2) * 2, SOCK_MIN_RCVBUF);
 *	if (size < tcp_rmem[1])
 *		sk_userlocks |= SOCK_RCVBUF_LOCK;
 *	sk_rcvbuf = size;
 *
 * A lock already set is never cleared. Worked example with tcp_rmem[1] =
 * 425984 (the original report): SO_RCVBUF 212992 gives 425984, not below
 * the default, so the buffer stays unlocked and autotunes up to
 * tcp_rmem[2]; SO_RCVBUF 212991 gives 425982 and is locked, as in stock.
 */
#ifndef _RCVFIX_RULE_H
#define _RCVFIX_RULE_H

#ifdef __KERNEL__
#include <linux/limits.h>
#include <linux/types.h>
#else
#include <limits.h>
#include <stdbool.h>
#endif

/* What a call did to the lock; counted per namespace and path. */
enum rcvfix_outcome {
	RCVFIX_STOCK,		/* namespace disabled: locked, as stock */
	RCVFIX_LOCK_SET,	/* size below tcp_rmem[1]: locked */
	RCVFIX_LOCK_AVOIDED,	/* stock would have locked; we did not */
	RCVFIX_LOCK_KEPT,	/* was locked before; stays locked */
	RCVFIX_OUTCOME_NR,
};

struct rcvfix_rcvbuf_req {
	int val;		/* after the caller's clamp (rmem_max, >= 0) */
	int min_rcvbuf;		/* SOCK_MIN_RCVBUF of the running kernel */
	int rmem_default;	/* tcp_rmem[1] of the socket's namespace */
	bool was_locked;	/* SOCK_RCVBUF_LOCK already set */
	bool enabled;		/* rcvfix enabled in the socket's namespace */
};

/**
 * rcvfix_rcvbuf_rule - the new receive buffer size and whether to lock it
 * @req: the request and the state it meets
 * @size: where the new sk_rcvbuf is stored
 *
 * Return: the outcome; the buffer must be locked for every outcome but
 * RCVFIX_LOCK_AVOIDED.
 */
static inline enum rcvfix_outcome
rcvfix_rcvbuf_rule(const struct rcvfix_rcvbuf_req *req, int *size)
{
	int val = req->val < INT_MAX / 2 ? req->val : INT_MAX / 2;

	/* Doubled as the kernel does it: it builds with wrapping overflow. */
	*size = (int)((unsigned int)val * 2u);
	if (*size < req->min_rcvbuf)
		*size = req->min_rcvbuf;

	if (!req->enabled)
		return RCVFIX_STOCK;
	if (req->was_locked)
		return RCVFIX_LOCK_KEPT;
	if (*size < req->rmem_default)
		return RCVFIX_LOCK_SET;
	return RCVFIX_LOCK_AVOIDED;
}

#endif /* _RCVFIX_RULE_H */
