// SPDX-License-Identifier: GPL-2.0
/*
 * Redirects a kernel function to a replacement, the way the livepatch core
 * does: an ftrace_ops with FTRACE_OPS_FL_IPMODIFY at the function's fentry
 * site whose callback may rewrite the saved instruction pointer. Owns the
 * address lookup, arming and disarming, and the in-flight accounting that
 * keeps module text alive while any task still runs a replacement.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>

#include "hook.h"

atomic_t rcvfix_hook_inflight = ATOMIC_INIT(0);

/**
 * rcvfix_hook_resolve - find the ftrace location of hook->name
 * @hook: the hook to resolve
 *
 * kallsyms_lookup_name() is not exported; registering a kprobe by symbol
 * name performs the same lookup (including the adjustment past an ENDBR
 * instruction) and tells us the address, or -ENOENT where the compiler
 * inlined the function away. The probe is dropped at once.
 */
int rcvfix_hook_resolve(struct rcvfix_hook *hook)
{
	struct kprobe kp = { .symbol_name = hook->name };
	int ret;

	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	hook->addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return 0;
}

/**
 * rcvfix_hook_arm - start redirecting calls of a resolved function
 * @hook: the hook, after rcvfix_hook_resolve()
 *
 * IPMODIFY makes ftrace refuse a second IP-modifying user of the same
 * function (a livepatch, another redirecting module, a kprobe with a
 * post_handler) with -EBUSY instead of letting the two fight. PERMANENT
 * keeps kernel.ftrace_enabled=0 from silently switching the fix off. On
 * x86 with DYNAMIC_FTRACE_WITH_ARGS the argument registers and the
 * resume address are saved without SAVE_REGS, which is cheaper.
 */
int rcvfix_hook_arm(struct rcvfix_hook *hook)
{
	int ret;

	hook->ops.func = hook->entry;
	hook->ops.flags = FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_PERMANENT;
	if (!IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_ARGS))
		hook->ops.flags |= FTRACE_OPS_FL_SAVE_REGS;

	ret = ftrace_set_filter_ip(&hook->ops, hook->addr, 0, 0);
	if (ret)
		return ret;

	ret = register_ftrace_function(&hook->ops);
	if (ret) {
		rcvfix_ftrace_free_filter(&hook->ops);
		return ret;
	}
	hook->armed = true;
	return 0;
}

/**
 * rcvfix_hook_disarm - stop redirecting; no task runs the entry callback
 *	or its trampoline once this returns
 * @hook: the hook (no-op when not armed)
 *
 * Our ops lives in module data, so ftrace marks it DYNAMIC and waits for
 * an RCU-tasks grace period in unregister_ftrace_function() before it
 * frees the trampoline. Tasks already sent to a replacement may still be
 * running it: see rcvfix_hook_quiesce().
 */
void rcvfix_hook_disarm(struct rcvfix_hook *hook)
{
	if (!hook->armed)
		return;
	WARN_ON_ONCE(unregister_ftrace_function(&hook->ops));
	rcvfix_ftrace_free_filter(&hook->ops);
	hook->armed = false;
}

/**
 * rcvfix_hook_quiesce - wait until no task executes a replacement
 *
 * Call after every hook is disarmed, before the module text can go away.
 *
 * A replacement may sleep (it takes the socket lock), and a sleeping task
 * counts as quiescent for RCU-tasks, so a grace period alone does not
 * prove it has left our text. Hence the counter: the entry callback
 * increments it before it sends a task to a replacement, and the
 * replacement decrements it as its last act. Once disarmed, no new task
 * can be sent, so the count only falls; wait for zero. A task may still
 * be preempted between that decrement and its return instruction; being
 * preempted (not sleeping) is not quiescent for RCU-tasks, so one more
 * grace period covers that last stretch.
 */
void rcvfix_hook_quiesce(void)
{
	while (atomic_read(&rcvfix_hook_inflight))
		msleep(20);
	synchronize_rcu_tasks();
}
