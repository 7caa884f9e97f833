// SPDX-License-Identifier: GPL-2.0
/*
 * Redirects kernel functions to replacements, the way the livepatch core
 * does: an ftrace_ops with FTRACE_OPS_FL_IPMODIFY at a function's fentry
 * site whose callback may rewrite the saved instruction pointer. Owns the
 * address lookup, arming and disarming a set of hooks (one by one: the
 * caller keeps the callbacks from acting until the whole set is armed),
 * and the in-flight accounting that keeps module text alive while any
 * task still runs a replacement.
 *
 * The ops have no FTRACE_OPS_FL_RECURSION: where an ops is alone on its
 * function, ftrace calls its callback straight from the trampoline, with
 * preemption enabled on a preemptible kernel (it is disabled only where
 * ftrace calls several ops through its list function, or adds its
 * recursion guard). A callback that needs an RCU read-side section must
 * take one (as rcvfix_net() does).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <linux/uaccess.h>

#include "hook.h"
#include "status_keys.h"

atomic_t rcvfix_hook_inflight = ATOMIC_INIT(0);

/* How often a long quiesce wait says what it is waiting for. */
static const unsigned int rcvfix_quiesce_log_s = 10;	/* seconds */

/*
 * A fresh ops every time a filter is set on them, as the livepatch core
 * allocates one: ftrace_free_filter() frees the filter hashes but leaves
 * the pointers to them, which the next ftrace_set_filter*() on the same
 * ops would copy from and free a second time. Before 6.0 the emptied
 * hashes stay and are used again (compat.h): zeroing the ops there would
 * leak them.
 */
static void rcvfix_hook_ops_fresh(struct rcvfix_hook *hook)
{
	if (!RCVFIX_FTRACE_OPS_REUSE)
		hook->ops = (struct ftrace_ops){};
}

/*
 * Can ftrace attach to @hook->addr? Setting the filter of the hook's own
 * ops (not registered: no callback can run) answers without arming
 * anything; the filter is dropped again, as rcvfix_hook_disarm() drops it.
 */
static int rcvfix_hook_probe_traceable(struct rcvfix_hook *hook)
{
	int ret;

	rcvfix_hook_ops_fresh(hook);
	ret = ftrace_set_filter_ip(&hook->ops, hook->addr, 0, 0);
	if (ret)
		return ret;
	rcvfix_ftrace_free_filter(&hook->ops);
	return 0;
}

/*
 * Is there another function named NAME.SUFFIX that ftrace can trace: a
 * copy the compiler made of @hook's function for some of its callers
 * (NAME.isra.N, NAME.constprop.N), the out-of-line rest of a partly
 * inlined one (NAME.part.N) or an LTO-local one (NAME.llvm.N)? Its callers
 * would pass no hook, and the rule would not hold there. ftrace matches
 * the glob against every function it can trace, in the kernel and in
 * modules, and answers -EINVAL when none matches. A .cold part is no entry
 * point (not traceable): it belongs to the function it was split from.
 * Returns 0 (no copy), -ENOTUNIQ (a copy) or ftrace's error.
 */
static int rcvfix_hook_find_copy(struct rcvfix_hook *hook)
{
	char *glob = kasprintf(GFP_KERNEL, "%s.*", hook->name);
	int ret;

	if (!glob)
		return -ENOMEM;
	rcvfix_hook_ops_fresh(hook);
	ret = ftrace_set_filter(&hook->ops, (unsigned char *)glob,
				strlen(glob), 1);
	kfree(glob);
	if (ret == -EINVAL)
		return 0;
	if (ret)
		return ret;
	rcvfix_ftrace_free_filter(&hook->ops);
	return -ENOTUNIQ;
}

/*
 * The kernel functions rcvfix calls through a pointer, and what their
 * first instruction said: for the load log and /proc/net/rcvfix
 * ("indirect_calls"). Written at load only, before the proc files exist.
 */
static struct {
	const char *name;
	const char *verdict;
} rcvfix_hook_callees[8];
static unsigned int rcvfix_hook_nr_callees;

static void rcvfix_hook_record_callee(const char *name, const char *verdict)
{
	if (rcvfix_hook_nr_callees < ARRAY_SIZE(rcvfix_hook_callees)) {
		rcvfix_hook_callees[rcvfix_hook_nr_callees].name = name;
		rcvfix_hook_callees[rcvfix_hook_nr_callees++].verdict = verdict;
	}
}

/**
 * rcvfix_hook_check_callee - may rcvfix call @name, at @entry, through a pointer?
 * @name: the function, for the log and the status
 * @entry: its first byte
 *
 * With x86's indirect branch tracking (CONFIG_X86_KERNEL_IBT: Debian's
 * 6.12 and 7.x) an indirect call must land on an ENDBR64, and at boot the
 * kernel seals (overwrites) that of every function whose address it never
 * takes, whatever the CPU: a call through a pointer traps there (#CP)
 * where the CPU enforces IBT (Intel since Tiger Lake and Sapphire
 * Rapids). A sealed entry is refused (-ENOEXEC) on every CPU, so that rcvfix
 * does the same everywhere and the refusal is what the tests run.
 * Recorded for the status either way.
 */
int rcvfix_hook_check_callee(const char *name, unsigned long entry)
{
#ifdef CONFIG_X86_KERNEL_IBT
	const u32 endbr64 = 0xfa1e0ff3;	/* f3 0f 1e fa */
	u32 insn;

	if (get_kernel_nofault(insn, (u32 *)entry)) {
		rcvfix_hook_record_callee(name, "unreadable");
		return -EFAULT;
	}
	if (insn != endbr64) {
		pr_info("%s: its entry is sealed (no ENDBR64: the kernel never takes its address), and a call through a pointer traps there on a CPU that enforces IBT: not used\n",
			name);
		rcvfix_hook_record_callee(name, "sealed");
		return -ENOEXEC;
	}
	rcvfix_hook_record_callee(name, "endbr64");
#else
	rcvfix_hook_record_callee(name, "no-ibt");
#endif
	return 0;
}

/* "indirect_calls NAME:endbr64,..." (no-ibt where the kernel has no IBT) */
void rcvfix_hook_show_callees(struct seq_file *m)
{
	unsigned int i;

	seq_puts(m, RCVFIX_KEY_INDIRECT_CALLS " ");
	for (i = 0; i < rcvfix_hook_nr_callees; i++)
		seq_printf(m, "%s%s:%s", i ? "," : "",
			   rcvfix_hook_callees[i].name,
			   rcvfix_hook_callees[i].verdict);
	seq_puts(m, i ? "\n" : "none\n");
}

/*
 * Sets @hook->func, the entry of the resolved function whose ftrace
 * location is @hook->addr, for a replacement that calls it: the location
 * may lie past the entry (after an ENDBR instruction, or arm64's
 * patchable NOPs), and only the entry is a valid target of an indirect
 * call. kallsyms says how far into its symbol the location is
 * ("name+0x4/0x1a0"). Only for such hooks (targets.c): no other needs it.
 */
int rcvfix_hook_find_entry(struct rcvfix_hook *hook)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned long off;
	char *plus, *slash;

	sprint_symbol(sym, hook->addr);
	plus = strrchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if (kstrtoul(plus + 1, 16, &off) || off > hook->addr)
		return -ENOENT;
	hook->func = hook->addr - off;
	return rcvfix_hook_check_callee(hook->name, hook->func);
}

/**
 * rcvfix_hook_symbol_range - where the code of function @name lies
 * @name: a function of the kernel
 * @start: set to its first byte
 * @end: set past its last byte
 *
 * For a hook that acts only when called from @name (its return address
 * in that range): a disabled kprobe finds the address, kallsyms its
 * offset and size ("name+0x4/0x1c0"). Returns 0, or -ENOENT.
 */
int rcvfix_hook_symbol_range(const char *name, unsigned long *start,
			     unsigned long *end)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr, off, size;
	char sym[KSYM_SYMBOL_LEN];
	char *plus, *slash;

	if (register_kprobe(&kp))
		return -ENOENT;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	sprint_symbol(sym, addr);
	plus = strrchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if (kstrtoul(plus + 1, 16, &off) || kstrtoul(slash + 1, 16, &size) ||
	    off > addr || !size)
		return -ENOENT;
	*start = addr - off;
	*end = *start + size;
	return 0;
}

/*
 * refuse_hooks=NAME[,NAME...]: a switch for tests. rcvfix acts at load as
 * on a host that refuses those hooks (a CPU enforcing IBT, where the entry
 * is sealed; a kernel without the function): each one named is refused
 * (-EPERM) and rcvfix does without it, exactly as it would there.
 */
static char *rcvfix_refuse_hooks;
module_param_named(refuse_hooks, rcvfix_refuse_hooks, charp, 0444);
MODULE_PARM_DESC(refuse_hooks,
		 "For tests: hooks (kernel function names, comma-separated) to refuse at load, as a host that cannot use them would");

/* Is @name in refuse_hooks= (see above)? */
static bool rcvfix_hook_refused(const char *name)
{
	const char *p = rcvfix_refuse_hooks;
	size_t len = strlen(name);

	while (p && *p) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/**
 * rcvfix_hook_resolve - find the ftrace location of hook->name
 * @hook: the hook to resolve
 *
 * kallsyms_lookup_name() is not exported; registering a kprobe by symbol
 * name performs the same lookup (including the adjustment past an ENDBR
 * instruction) and tells us the address, or -ENOENT where the compiler
 * inlined the function away. The probe is registered disabled, so it is
 * never armed (not even briefly on a per-packet function such as
 * tcp_data_ready()), and dropped at once. Returns -EINVAL for a function
 * that exists but that ftrace cannot attach to (notrace, no fentry site),
 * and -ENOTUNIQ where a redirected function has a traceable copy that some
 * callers would reach instead (rcvfix_hook_find_copy()), so that both are
 * found at load, not at the first enable; -EPERM for one refuse_hooks=
 * names.
 */
int rcvfix_hook_resolve(struct rcvfix_hook *hook)
{
	struct kprobe kp = {
		.symbol_name = hook->name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	int ret;

	if (rcvfix_hook_refused(hook->name)) {
		pr_info("%s: refused by refuse_hooks= (a test switch)\n",
			hook->name);
		return -EPERM;
	}
	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	hook->addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	if (rcvfix_hook_probe_traceable(hook))
		return -EINVAL;
	/*
	 * Only a redirect must see every call: a call that passes an
	 * observing hook loses an improvement, not the rule. Each search
	 * walks every traceable function (about 55000 on Debian), so the
	 * observing hooks are spared it.
	 */
	return hook->observe ? 0 : rcvfix_hook_find_copy(hook);
}

/* Set when ftrace would not let go of a hook: see rcvfix_hook_quiesce(). */
static bool rcvfix_hook_pinned;

/*
 * ftrace refused to unregister @hook's ops (it does that only once it has
 * shut itself down after an internal error) and may still call its
 * callback: nothing of it may be freed. The hook stays registered, a
 * module reference makes rmmod refuse from now on, and an unload already
 * running never finishes (rcvfix_hook_quiesce()).
 */
static void rcvfix_hook_pin(struct rcvfix_hook *hook)
{
	hook->armed = true;
	hook->stuck = true;
	if (!xchg(&rcvfix_hook_pinned, true))
		__module_get(THIS_MODULE);
}

/*
 * Registers @hook's ops at its function. IPMODIFY makes ftrace refuse a
 * second IP-modifying user of the same function (a livepatch, another
 * redirecting module, a kprobe with a post_handler) with -EBUSY instead of
 * letting the two fight. @permanent (FTRACE_OPS_FL_PERMANENT) keeps
 * kernel.ftrace_enabled=0 from silently switching the fix off. With
 * HAVE_DYNAMIC_FTRACE_WITH_ARGS the argument registers and the resume
 * address are saved without SAVE_REGS, which is cheaper; without it the
 * resume address can only be set in full pt_regs (compat.h).
 */
static int rcvfix_hook_register(struct rcvfix_hook *hook, bool permanent)
{
	int ret;

	rcvfix_hook_ops_fresh(hook);
	hook->ops.func = hook->entry;
	hook->ops.flags = permanent ? FTRACE_OPS_FL_PERMANENT : 0;
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
		/*
		 * A refused ops may have been on ftrace's list for a moment
		 * (6.1 ftrace_startup() links it, then unlinks it when
		 * IPMODIFY is refused, with no grace period): a CPU walking
		 * the list may still test its filter hash. Wait for every
		 * such walker, as ftrace_shutdown() does, before freeing it.
		 */
		rcvfix_sync_ftrace_walkers();
		rcvfix_ftrace_free_filter(&hook->ops);
	}
	return ret;
}

static int rcvfix_hook_arm(struct rcvfix_hook *hook)
{
	int ret = rcvfix_hook_register(hook, true);

	if (!ret)
		hook->armed = true;
	return ret;
}

/*
 * FTRACE_OPS_FL_PERMANENT is refused with -EBUSY while
 * kernel.ftrace_enabled is 0, the same error as a function owned by
 * another IP-modifying user, and ftrace_enabled is not exported. Tell the
 * two apart by registering the same ops once more without PERMANENT: that
 * succeeds only if ftrace_enabled was the reason (with ftrace disabled it
 * patches nothing), and is undone at once. Its set is not in force while
 * it is being armed (rcvfix_hooks_arm()), so the moment it is registered
 * redirects nothing.
 */
static bool rcvfix_hook_busy_for_ftrace_enabled(struct rcvfix_hook *hook)
{
	if (rcvfix_hook_register(hook, false))
		return false;
	if (unregister_ftrace_function(&hook->ops)) {
		rcvfix_hook_pin(hook);
		return true;
	}
	rcvfix_ftrace_free_filter(&hook->ops);
	return true;
}

/*
 * Our ops live in module data, so ftrace marks them DYNAMIC and, before
 * unregister_ftrace_function() returns, waits for RCU-tasks(-rude) grace
 * periods: no task runs the entry callback or the trampoline any more.
 * Tasks already sent to a replacement may still run it: see
 * rcvfix_hook_quiesce().
 *
 * Should ftrace refuse, the hook is pinned (rcvfix_hook_pin()); its
 * callback keeps honouring net.rcvfix.enable, so a namespace with the fix
 * off still gets the kernel's own code.
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
		rcvfix_hook_pin(hook);
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
 * @first: one of @hooks to arm before the others, or NULL: the one ftrace
 *	refused last time, so that nothing else is armed while it still is
 * @failed: set to the hook ftrace refused, on error
 *
 * All or nothing in the end, not at every moment: ftrace registers the
 * hooks one by one, and on error every hook armed here is disarmed again
 * before this returns. So the callbacks of a set being armed or disarmed
 * must not act until the caller says the whole set is in force (arm.c,
 * rcvfix_arm_in_force()).
 */
int rcvfix_hooks_arm(struct rcvfix_hook *const *hooks, unsigned int n,
		     struct rcvfix_hook *first, struct rcvfix_hook **failed)
{
	struct rcvfix_hook *hook;
	unsigned int i;
	int ret;

	for (i = 0; i <= n; i++) {
		/* @first, then the others in their order */
		hook = i ? hooks[i - 1] : first;
		if (!hook || hook->armed)	/* or a stuck one, still registered */
			continue;
		ret = rcvfix_hook_arm(hook);
		if (ret) {
			*failed = hook;
			rcvfix_hooks_disarm(hooks, n);
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
	/* disabled: it never runs, and does not enable an aggregate */
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)addr,
		.flags = KPROBE_FLAG_DISABLED,
	};
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
 * For -EBUSY: kernel.ftrace_enabled=0 (PERMANENT ops are refused then), or
 * the kind of IP-modifying ftrace user that owns the function. A kprobe
 * can be seen from here; a livepatch and another module's ftrace_ops
 * cannot be told apart (/sys/kernel/tracing/enabled_functions and
 * /sys/kernel/livepatch do). May sleep; under the caller's arming lock.
 */
const char *rcvfix_hook_owner(struct rcvfix_hook *hook, int err)
{
	switch (err) {
	case -EBUSY:
		if (rcvfix_hook_has_kprobe(hook->addr))
			return "kprobe";
		if (rcvfix_hook_busy_for_ftrace_enabled(hook))
			return "kernel.ftrace_enabled=0";
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

/* The name of a hook error, for the log and /proc/net/rcvfix. */
const char *rcvfix_hook_errno_name(int err)
{
	switch (err) {
	case -EBUSY:
		return "EBUSY";
	case -EINVAL:
		return "EINVAL";
	case -ENODEV:
		return "ENODEV";
	case -ENOMEM:
		return "ENOMEM";
	case -ENOENT:
		return "ENOENT";
	default:
		return "error";
	}
}

/**
 * rcvfix_hook_pin_module - this module's text must stay for good
 * @why: what keeps a pointer into this module, for the log line
 *
 * A replacement found that the kernel may keep a pointer into this module
 * (@why says which, in one log line): from now on rmmod refuses, and an
 * unload already running never finishes (rcvfix_hook_quiesce(), which
 * looks again once every replacement has returned).
 */
void rcvfix_hook_pin_module(const char *why)
{
	if (xchg(&rcvfix_hook_pinned, true))
		return;
	__module_get(THIS_MODULE);
	pr_warn("%s: rcvfix stays loaded\n", why);
}

/* An unload that must never finish (see rcvfix_hook_quiesce()). */
static void rcvfix_hook_stay_if_pinned(void)
{
	if (!READ_ONCE(rcvfix_hook_pinned))
		return;
	pr_emerg("ftrace or the kernel still holds a pointer into rcvfix: this unload cannot finish, rmmod sleeps until reboot; the module stays in memory and net.rcvfix.enable=0 still makes a namespace stock\n");
	for (;;)
		schedule_timeout_idle(MAX_SCHEDULE_TIMEOUT);
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
 *
 * If ftrace kept a hook registered (rcvfix_hook_pin()) while the module
 * is being unloaded, the reference taken there came too late to stop the
 * unload: ftrace may still call into this module, so its text and the
 * namespaces' state must stay. Then this never returns: the unload stays
 * where it is, in an idle sleep that trips no hung-task report.
 */
void rcvfix_hook_quiesce(void)
{
	unsigned long start = jiffies, next = start;
	int n;

	rcvfix_hook_stay_if_pinned();
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
	/* a replacement may have pinned the module on its way out */
	rcvfix_hook_stay_if_pinned();
}
