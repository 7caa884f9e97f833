// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_livepatch: test-only livepatch of sock_set_rcvbuf() with a
 * copy of the stock function, to show that a livepatch and rcvfix on the
 * same function refuse each other (whichever comes second fails to load
 * with -EBUSY) and that the first keeps working.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/livepatch.h>
#include <linux/module.h>
#include <net/sock.h>

/* Stock __sock_set_rcvbuf() and sock_set_rcvbuf(): always lock. */
static void livepatch_sock_set_rcvbuf(struct sock *sk, int val)
{
	lock_sock(sk);
	val = min_t(int, val, INT_MAX / 2);
	sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	WRITE_ONCE(sk->sk_rcvbuf, max_t(int, val * 2, SOCK_MIN_RCVBUF));
	release_sock(sk);
}

static struct klp_func livepatch_funcs[] = {
	{
		.old_name = "sock_set_rcvbuf",
		.new_func = livepatch_sock_set_rcvbuf,
	}, { }
};

static struct klp_object livepatch_objs[] = {
	{
		/* name NULL: vmlinux */
		.funcs = livepatch_funcs,
	}, { }
};

static struct klp_patch livepatch_patch = {
	.mod = THIS_MODULE,
	.objs = livepatch_objs,
};

static int __init livepatch_init(void)
{
	return klp_enable_patch(&livepatch_patch);
}

static void __exit livepatch_exit(void)
{
}

module_init(livepatch_init);
module_exit(livepatch_exit);
MODULE_DESCRIPTION("rcvfix test: a livepatch of sock_set_rcvbuf");
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
