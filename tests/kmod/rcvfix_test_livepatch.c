// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_livepatch: test-only livepatch of sock_set_rcvbuf() with a
 * copy of the stock function, or (func=sk_setsockopt) of sk_setsockopt()
 * with a replacement that runs the kernel's own body, to show that a
 * livepatch and rcvfix on the same function refuse each other (whichever
 * comes second fails with -EBUSY) and that the first keeps working.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/sockptr.h>
#include <asm/cpufeature.h>
#include <asm/ftrace.h>
#include <net/sock.h>

static char *func = "sock_set_rcvbuf";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "function to patch: sock_set_rcvbuf (default) or sk_setsockopt");

typedef int (*sk_setsockopt_t)(struct sock *sk, int level, int optname,
			       sockptr_t optval, unsigned int optlen);
/* sk_setsockopt() just past its fentry call: its body, not patched. */
static sk_setsockopt_t stock_sk_setsockopt;

static int livepatch_sk_setsockopt(struct sock *sk, int level, int optname,
				   sockptr_t optval, unsigned int optlen)
{
	return stock_sk_setsockopt(sk, level, optname, optval, optlen);
}

/*
 * sk_setsockopt() is not exported and too large to copy: find its fentry
 * site as rcvfix does (a kprobe by name) and call past it. An indirect
 * call there has no ENDBR: refuse where IBT is enforced.
 */
static int livepatch_find_sk_setsockopt(void)
{
	struct kprobe kp = { .symbol_name = "sk_setsockopt" };
	int ret;

#ifdef X86_FEATURE_IBT	/* since 5.18 */
	if (cpu_feature_enabled(X86_FEATURE_IBT))
		return -EOPNOTSUPP;
#endif
	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	stock_sk_setsockopt = (sk_setsockopt_t)((unsigned long)kp.addr +
						MCOUNT_INSN_SIZE);
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
	int ret;

	if (!strcmp(func, "sk_setsockopt")) {
		ret = livepatch_find_sk_setsockopt();
		if (ret)
			return ret;
		livepatch_funcs[0].old_name = "sk_setsockopt";
		livepatch_funcs[0].new_func = livepatch_sk_setsockopt;
	} else if (strcmp(func, "sock_set_rcvbuf")) {
		return -EINVAL;
	}
	return klp_enable_patch(&livepatch_patch);
}

static void __exit livepatch_exit(void)
{
}

module_init(livepatch_init);
module_exit(livepatch_exit);
MODULE_DESCRIPTION("rcvfix test: a livepatch of sock_set_rcvbuf or sk_setsockopt");
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
