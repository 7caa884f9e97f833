// SPDX-License-Identifier: GPL-2.0
/*
 * Redirects kernel functions to replacements, the way the livepatch core
 * does: an ftrace_ops with FTRACE_OPS_FL_IPMODIFY at a function's fentry
 * site whose callback may rewrite the saved instruction pointer. Owns the
 * address lookup, arming and disarming a set of hooks all or nothing, and
 * the in-flight accounting that keeps module text alive while any task
 * still runs a replacement.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>

#include "hook.h"

atomic_t rcvfix_hook_inflight = ATOMIC_INIT(0);

/* How often a long quiesce wait says what it is waiting for. */
static const unsigned int rcvfix_quiesce_log_s = 10;	/* seconds */

/**
 * rcvfix_hook_resolve - find the ftrace location of hook->name
 * @hook: the hook to resolve
 *
 * kallsyms_lookup_name() is not exported; registering a kprobe by symbol
 * name performs the same lookup (including the adjustment past an ENDBR
 * instruction) and tells us the address, or -ENOENT where the compiler
 * inlined the function away. The probe is registered disabled, so it is
 * never armed (not even briefly on a per-packet function such as
 * tcp_data_ready()), and dropped at once.
 */
int rcvfix_hook_resolve(struct rcvfix_hook *hook)
{
	struct kprobe kp = {
		.symbol_name = hook->name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	int ret;

	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	hook->addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return 0;
}

/*
 * IPMODIFY makes ftrace refuse a second IP-modifying user of the same
 * function (a livepatch, another redirecting module, a kprobe with a
 * post_handler) with -EBUSY instead of letting the two fight. PERMANENT
 * keeps kernel.ftrace_enabled=0 from silently switching the fix off.
 * With HAVE_DYNAMIC_FTRACE_WITH_ARGS the argument registers and the
 * resume address are saved without SAVE_REGS, which is cheaper; without
 * it the resume address can only be set in full pt_regs (compat.h).
 */
static int rcvfix_hook_arm(struct rcvfix_hook *hook)
{
	int ret;

	/*
	 * A fresh ops every time, as the livepatch core allocates one:
	 * ftrace_free_filter() frees the filter hashes but leaves the
	 * pointers to them, which the next ftrace_set_filter_ip() on the
	 * same ops would copy from and free a second time. Before 6.0 the
	 * emptied hashes stay and are used again (compat.h): zeroing the
	 * ops there would leak them.
	 */
	if (!RCVFIX_FTRACE_OPS_REUSE)
		hook->ops = (struct ftrace_ops){};
	hook->ops.func = hook->entry;
	hook->ops.flags = FTRACE_OPS_FL_PERMANENT;
	/* An observing hook never moves the IP: it shares its function. */
	if (!hook->observe)
		hook->ops.flags |= FTRACE_OPS_FL_IPMODIFY;
	if (!IS_ENABLED(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS))
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

/*
 * Our ops live in module data, so ftrace marks them DYNAMIC and, before
 * unregister_ftrace_function() returns, waits for RCU-tasks(-rude) grace
 * periods: no task runs the entry callback or the trampoline any more.
 * Tasks already sent to a replacement may still run it: see
 * rcvfix_hook_quiesce().
 *
 * Should ftrace refuse (it does when it has shut itself down after an
 * internal error), it may still call the callback through the ops: then
 * nothing of it may be freed. The hook stays registered and the module is
 * pinned for good; the callback keeps honouring net.rcvfix.enable, so a
 * namespace with the fix off still gets the kernel's own code.
 */
static void rcvfix_hook_disarm(struct rcvfix_hook *hook)
{
	int ret;

	if (!hook->armed || hook->stuck)
		return;
	ret = unregister_ftrace_function(&hook->ops);
	if (ret) {
		pr_err("cannot unhook %s (%d): its ftrace_ops stays registered and the module stays loaded\n",
		       hook->name, ret);
		hook->stuck = true;
		__module_get(THIS_MODULE);
		return;
	}
	rcvfix_ftrace_free_filter(&hook->ops);
	hook->armed = false;
}

/**
 * rcvfix_hooks_disarm - stop redirecting any of @hooks
 * @hooks: the set, disarmed in reverse order
 * @n: how many
 *
 * Sleeps (RCU-tasks grace periods). Returns once no task runs an entry
 * callback or trampoline of the set.
 */
void rcvfix_hooks_disarm(struct rcvfix_hook *const *hooks, unsigned int n)
{
	while (n-- > 0)
		rcvfix_hook_disarm(hooks[n]);
}

/**
 * rcvfix_hooks_arm - start redirecting calls of every hook in @hooks
 * @hooks: resolved hooks (rcvfix_hook_resolve())
 * @n: how many
 * @failed: set to the hook ftrace refused, on error
 *
 * All or nothing: on error every hook armed here is disarmed again
 * before this returns. Callers arm only while every namespace has the
 * fix off, so the callbacks armed for a moment redirected nothing.
 */
int rcvfix_hooks_arm(struct rcvfix_hook *const *hooks, unsigned int n,
		     struct rcvfix_hook **failed)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		if (hooks[i]->armed)	/* a stuck one, still registered */
			continue;
		ret = rcvfix_hook_arm(hooks[i]);
		if (ret) {
			*failed = hooks[i];
			rcvfix_hooks_disarm(hooks, i);
			return ret;
		}
	}
	return 0;
}

/*
 * Is there a kprobe on @addr? Registering one more aggregates it with an
 * existing probe: ours is then linked into the aggregate's list instead
 * of standing alone with an empty list (kernel/kprobes.c).
 */
static bool rcvfix_hook_has_kprobe(unsigned long addr)
{
	struct kprobe kp = { .addr = (kprobe_opcode_t *)addr };
	bool found;

	if (register_kprobe(&kp))
		return false;
	found = !list_empty(&kp.list);
	unregister_kprobe(&kp);
	return found;
}

/**
 * rcvfix_hook_owner - why ftrace refused @hook, one word for the log and
 *	/proc/net/rcvfix
 * @hook: the hook rcvfix_hooks_arm() reported
 * @err: its error
 *
 * For -EBUSY: the kind of IP-modifying ftrace user that owns the function.
 * A kprobe can be seen from here; a livepatch and another module's
 * ftrace_ops cannot be told apart (/sys/kernel/tracing/enabled_functions
 * and /sys/kernel/livepatch do).
 */
const char *rcvfix_hook_owner(const struct rcvfix_hook *hook, int err)
{
	switch (err) {
	case -EBUSY:
		if (rcvfix_hook_has_kprobe(hook->addr))
			return "kprobe";
		return "livepatch-or-ftrace-ops";
	case -EINVAL:
		return "not-traceable";
	case -ENODEV:
		return "ftrace-disabled";
	case -ENOMEM:
		return "no-memory";
	default:
		return "ftrace";
	}
}

/**
 * rcvfix_hook_quiesce - wait until no task executes a replacement
 *
 * Module unload calls it once the hooks are disarmed for good.
 *
 * A replacement may sleep (it takes the socket lock), and a sleeping task
 * counts as quiescent for RCU-tasks, so a grace period alone does not
 * prove it has left our text. Hence the counter: the entry callback
 * increments it before it sends a task to a replacement, and the
 * replacement decrements it as its last act. Once disarmed, no new task
 * can be sent, so the count only falls; wait for zero, saying so every
 * rcvfix_quiesce_log_s seconds. A task can still be between that
 * decrement and its return instruction:
 *  - in task context it may be preempted there, which RCU-tasks does not
 *    count as quiescent: synchronize_rcu_tasks() covers it;
 *  - bpf_setsockopt() from a sock_ops program runs the replacement in
 *    softirq, possibly on an idle task, which RCU-tasks never waits for;
 *    but softirq, like any BH- or preempt-disabled region, is an RCU
 *    read-side critical section, so synchronize_rcu() covers it.
 */
void rcvfix_hook_quiesce(void)
{
	unsigned long start = jiffies, next = start;
	int n;

	while ((n = atomic_read(&rcvfix_hook_inflight))) {
		if (time_after_eq(jiffies, next)) {
			if (next != start)
				pr_warn("still waiting for %d task(s) to leave a replacement (%u s)\n",
					n, jiffies_to_msecs(jiffies - start) / 1000);
			next += rcvfix_quiesce_log_s * HZ;
		}
		msleep(20);
	}
	synchronize_rcu_tasks();
	synchronize_rcu();
}
