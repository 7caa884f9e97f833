// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_direct: test-only module that provides a function named
 * __sock_set_rcvbuf, a copy of the stock one: rcvfix loaded after it must
 * not be misled by that symbol (it always redirects the callers of the
 * kernel's own, inlined copy; test 81). Writing "[lock] VAL" to
 * /proc/rcvfix_test_direct calls it on a fresh kernel TCP socket in the
 * writer's namespace; reading prints "val=VAL rcvbuf=N lock=BITS". The
 * /proc file itself is rcvfix_test_proc.h.
 */
#include <linux/module.h>

#include "rcvfix_test_proc.h"

/* Found by name through kallsyms; the stock body, always locking. */
noinline void __sock_set_rcvbuf(struct sock *sk, int val);
noinline void __sock_set_rcvbuf(struct sock *sk, int val)
{
	val = min_t(int, val, INT_MAX / 2);
	sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	WRITE_ONCE(sk->sk_rcvbuf, max_t(int, val * 2, SOCK_MIN_RCVBUF));
}

/* The caller of __sock_set_rcvbuf() holds the socket lock. */
static void test_proc_call(struct sock *sk, int val, bool prelock)
{
	lock_sock(sk);
	if (prelock)
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	__sock_set_rcvbuf(sk, val);
	release_sock(sk);
}

static int __init direct_init(void)
{
	return test_proc_create("rcvfix_test_direct");
}

static void __exit direct_exit(void)
{
	test_proc_remove();
}

module_init(direct_init);
module_exit(direct_exit);
MODULE_DESCRIPTION("rcvfix test: a decoy __sock_set_rcvbuf that must not change the strategy");
MODULE_LICENSE("GPL");
