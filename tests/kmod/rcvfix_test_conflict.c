// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_conflict: test-only module that claims a function the way
 * another IP-modifying ftrace user would, to show that rcvfix and it
 * refuse each other cleanly instead of fighting. kind=kprobe registers a
 * kprobe with a post_handler (which ftrace accounts as IP-modifying);
 * kind=ftrace registers an empty ftrace_ops with FTRACE_OPS_FL_IPMODIFY.
 * Loading fails with the registration's error (-EBUSY when rcvfix owns
 * the function).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/string.h>

/* sk_setsockopt, or sock_setsockopt before 6.0 (module/compat.h) */
static char *func = RCVFIX_SETSOCKOPT_NAME;
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "function to claim (default: the SOL_SOCKET setsockopt entry rcvfix hooks)");

static char *kind = "kprobe";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind, "kprobe (with post_handler) or ftrace (IPMODIFY ops)");

static struct kprobe conflict_kp;
static struct ftrace_ops conflict_ops;
static bool conflict_is_kprobe;

static void conflict_post(struct kprobe *p, struct pt_regs *regs,
			  unsigned long flags)
{
}

static void notrace conflict_entry(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ftrace_regs *fregs)
{
}

static int conflict_claim_ftrace(void)
{
	struct kprobe kp = { .symbol_name = func };
	unsigned long addr;
	int ret;

	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);

	conflict_ops.func = conflict_entry;
	conflict_ops.flags = FTRACE_OPS_FL_IPMODIFY;
	if (!IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_ARGS))
		conflict_ops.flags |= FTRACE_OPS_FL_SAVE_REGS;
	ret = ftrace_set_filter_ip(&conflict_ops, addr, 0, 0);
	if (!ret)
		ret = register_ftrace_function(&conflict_ops);
	if (ret)
		rcvfix_ftrace_free_filter(&conflict_ops);
	return ret;
}

static int __init conflict_init(void)
{
	int ret;

	if (!strcmp(kind, "kprobe")) {
		conflict_is_kprobe = true;
		conflict_kp.symbol_name = func;
		conflict_kp.post_handler = conflict_post;
		ret = register_kprobe(&conflict_kp);
	} else if (!strcmp(kind, "ftrace")) {
		ret = conflict_claim_ftrace();
	} else {
		return -EINVAL;
	}
	if (ret)
		pr_info("cannot claim %s with a %s: %d\n", func, kind, ret);
	else
		pr_info("claimed %s with a %s\n", func, kind);
	return ret;
}

static void __exit conflict_exit(void)
{
	if (conflict_is_kprobe) {
		unregister_kprobe(&conflict_kp);
	} else {
		unregister_ftrace_function(&conflict_ops);
		rcvfix_ftrace_free_filter(&conflict_ops);
	}
}

module_init(conflict_init);
module_exit(conflict_exit);
MODULE_DESCRIPTION("rcvfix test: another IP-modifying user of a function");
MODULE_LICENSE("GPL");
