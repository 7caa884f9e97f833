// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_livepatch: test-only livepatch of sock_set_rcvbuf() with a
 * copy of the stock function, or (func=sk_setsockopt,
 * func=mptcp_sol_socket_sync_intval, func=mptcp_poll,
 * func=sock_set_keepalive) of another
 * function with a replacement that runs the kernel's own body: to show
 * that a livepatch wins over rcvfix (rcvfix steps aside while it is
 * loaded) and that rcvfix refuses to enable over one that is already in
 * force. sock_set_keepalive is one rcvfix does not hook. replace=1 makes
 * it an atomic-replace livepatch, which takes over from every livepatch
 * in force (their handlers go at the end of its transition).
 * rcvfix_test_livepatch2 is the same module under another name, to have
 * two at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sockptr.h>
#include <asm/cpufeature.h>
#include <asm/ftrace.h>
#include <net/sock.h>

static char *func = "sock_set_rcvbuf";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "function to patch: sock_set_rcvbuf (default), sk_setsockopt, mptcp_sol_socket_sync_intval, mptcp_poll or sock_set_keepalive");

static bool replace;
module_param(replace, bool, 0444);
MODULE_PARM_DESC(replace, "1: an atomic-replace livepatch (klp_patch.replace)");

typedef int (*sk_setsockopt_t)(struct sock *sk, int level, int optname,
			       sockptr_t optval, unsigned int optlen);
/* sk_setsockopt() just past its fentry call: its body, not patched. */
static sk_setsockopt_t stock_sk_setsockopt;

static int livepatch_sk_setsockopt(struct sock *sk, int level, int optname,
				   sockptr_t optval, unsigned int optlen)
{
	return stock_sk_setsockopt(sk, level, optname, optval, optlen);
}

/* mptcp_sol_socket_sync_intval(struct mptcp_sock *, int, int), static */
typedef void (*sync_intval_t)(void *msk, int optname, int val);
static sync_intval_t stock_sync_intval;

static void livepatch_sync_intval(void *msk, int optname, int val)
{
	stock_sync_intval(msk, optname, val);
}

/* mptcp_poll(file, sock, wait), static: one of rcvfix's on-demand hooks */
typedef __poll_t (*mptcp_poll_t)(struct file *file, struct socket *sock,
				 struct poll_table_struct *wait);
static mptcp_poll_t stock_mptcp_poll;

static __poll_t livepatch_mptcp_poll(struct file *file, struct socket *sock,
				     struct poll_table_struct *wait)
{
	return stock_mptcp_poll(file, sock, wait);
}

/* sock_set_keepalive(struct sock *): exported, hooked by nobody */
typedef void (*keepalive_t)(struct sock *sk);
static keepalive_t stock_keepalive;

static void livepatch_keepalive(struct sock *sk)
{
	stock_keepalive(sk);
}

/*
 * The functions are not exported (or, for sock_set_keepalive, would call
 * themselves through the patch) and too large to copy: find the fentry
 * site as rcvfix does (a kprobe by name) and call past it. An indirect
 * call there has no ENDBR: refuse where IBT is enforced.
 */
static int livepatch_find_body(const char *name, unsigned long *body)
{
	struct kprobe kp = { .symbol_name = name };
	int ret;

#ifdef X86_FEATURE_IBT	/* since 5.18 */
	if (cpu_feature_enabled(X86_FEATURE_IBT))
		return -EOPNOTSUPP;
#endif
	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	*body = (unsigned long)kp.addr + MCOUNT_INSN_SIZE;
	unregister_kprobe(&kp);
	return 0;
}

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
	unsigned long body;
	int ret;

	if (!strcmp(func, "sk_setsockopt")) {
		ret = livepatch_find_body(func, &body);
		if (ret)
			return ret;
		stock_sk_setsockopt = (sk_setsockopt_t)body;
		livepatch_funcs[0].old_name = "sk_setsockopt";
		livepatch_funcs[0].new_func = livepatch_sk_setsockopt;
	} else if (!strcmp(func, "mptcp_sol_socket_sync_intval")) {
		ret = livepatch_find_body(func, &body);
		if (ret)
			return ret;
		stock_sync_intval = (sync_intval_t)body;
		livepatch_funcs[0].old_name = "mptcp_sol_socket_sync_intval";
		livepatch_funcs[0].new_func = livepatch_sync_intval;
	} else if (!strcmp(func, "mptcp_poll")) {
		ret = livepatch_find_body(func, &body);
		if (ret)
			return ret;
		stock_mptcp_poll = (mptcp_poll_t)body;
		livepatch_funcs[0].old_name = "mptcp_poll";
		livepatch_funcs[0].new_func = livepatch_mptcp_poll;
	} else if (!strcmp(func, "sock_set_keepalive")) {
		ret = livepatch_find_body(func, &body);
		if (ret)
			return ret;
		stock_keepalive = (keepalive_t)body;
		livepatch_funcs[0].old_name = "sock_set_keepalive";
		livepatch_funcs[0].new_func = livepatch_keepalive;
	} else if (strcmp(func, "sock_set_rcvbuf")) {
		return -EINVAL;
	}
	livepatch_patch.replace = replace;
	return klp_enable_patch(&livepatch_patch);
}

static void __exit livepatch_exit(void)
{
}

module_init(livepatch_init);
module_exit(livepatch_exit);
MODULE_DESCRIPTION("rcvfix test: a livepatch of sock_set_rcvbuf, sk_setsockopt, mptcp_sol_socket_sync_intval, mptcp_poll or sock_set_keepalive");
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
