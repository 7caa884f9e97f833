// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_ksock: test-only module for the in-kernel sock_set_rcvbuf()
 * path. Writing "[lock] VAL" to /proc/rcvfix_test_ksock creates a kernel TCP
 * socket in the writer's network namespace, optionally locks its receive
 * buffer first, calls sock_set_rcvbuf(sk, VAL), and records the result;
 * reading the file prints "val=VAL rcvbuf=<sk_rcvbuf> lock=<sk_userlocks>"
 * (lock bits as SO_BUF_LOCK reports them: 2 = receive buffer locked).
 * The /proc file itself is rcvfix_test_proc.h.
 */
#include <linux/module.h>

#include "rcvfix_test_proc.h"

/* sock_set_rcvbuf() takes the socket lock itself. */
static void test_proc_call(struct sock *sk, int val, bool prelock)
{
	if (prelock) {
		lock_sock(sk);
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
		release_sock(sk);
	}
	sock_set_rcvbuf(sk, val);
}

static int __init ksock_init(void)
{
	return test_proc_create("rcvfix_test_ksock");
}

static void __exit ksock_exit(void)
{
	test_proc_remove();
}

module_init(ksock_init);
module_exit(ksock_exit);
MODULE_DESCRIPTION("rcvfix test helper: sock_set_rcvbuf() on a kernel socket");
MODULE_AUTHOR("rcvfix developers");
MODULE_LICENSE("GPL");
