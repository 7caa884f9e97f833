// SPDX-License-Identifier: GPL-2.0
/*
 * Pay nothing while unused: the strategy's hooks (handed over at load,
 * rcvfix_arm_init()) are armed when the first namespace turns
 * net.rcvfix.enable on, and disarmed disarm_holdoff_s seconds (10 by
 * default) after the last one has turned it off or was destroyed. With
 * nothing enabled (after the hold-off) the kernel runs its own code with
 * no ftrace callback at all, and a livepatch of the hooked functions can
 * be applied at any time (below).
 *
 * In force, or not at all. ftrace registers the hooks one by one, so
 * arming and disarming are not atomic: for a moment some hooks are armed
 * and others are not. rcvfix_hooks_in_force (arm.h) is what the entry
 * callbacks go by: set only once every hook is armed, cleared before the
 * first is disarmed; rcvfix_net_enabled() (netns.h) is false while it is
 * clear, so no callback applies the rule, and a replacement that reads
 * the switch again under the socket lock acts as stock. (The MPTCP sync
 * hook does not ask: it acts only on an MPTCP socket whose buffer the rule
 * left unlocked, which a stock setsockopt() never does.) So the rule holds
 * on every path that sets a buffer or on none, never on some (setsockopt
 * unlocking while sock_set_rcvbuf() or a BPF program still locks, or an
 * MPTCP socket unlocked while the stock sync locks its subflows). Before
 * it disarms while namespaces still want the fix (stepping aside for a
 * livepatch), rcvfix also waits for an RCU-tasks grace period after
 * clearing the flag: a task that applied the rule just before, under its
 * socket lock, reaches the MPTCP sync hook (which leaves the subflows of
 * an unlocked MPTCP socket alone) before that hook goes, since it cannot
 * sleep voluntarily on the way (it only releases its socket lock).
 *
 * Locking and ordering:
 *  - rcvfix_arm_users counts the namespaces with the fix on. It becomes
 *    non-zero only under rcvfix_arm_lock once every hook is armed (or
 *    while rcvfix stands aside for a livepatch, below): so "users > 0"
 *    implies "armed" unless rcvfix stands aside. With a hold-off it drops
 *    to zero without the mutex, the hooks staying armed. A namespace
 *    joining or leaving while others stay enabled changes the count
 *    without the mutex (atomic_inc_not_zero(), atomic_add_unless()):
 *    sysctl writers in other namespaces never wait for a transition they
 *    do not cause.
 *  - rcvfix_arm_lock serialises the transitions (arm, disarm, stepping
 *    aside and back), which register and unregister the same ftrace_ops.
 *    A writer that has to arm waits for a disarm in progress: it needs
 *    the ops back.
 *  - A namespace's switch is set to 1 only after rcvfix_arm_get() has
 *    armed the hooks, and set to 0 before rcvfix_arm_put() lets them go
 *    (netns.c, under the namespace's own mutex). A setter racing with a
 *    transition meets no callback (stock), a callback that finds the
 *    switch off or the hooks not in force (stock), or a replacement that
 *    reads both again under the socket lock and applies the rule or stock
 *    code accordingly.
 *  - Disarming waits until no task runs a callback or trampoline
 *    (unregister_ftrace_function()) under the mutex, and no longer: a
 *    task still in a replacement may sleep there for as long as someone
 *    holds its socket lock, and a sysctl writer must not hang on that.
 *    Nothing requires the wait: the hooks are not in force any more, and a
 *    replacement reads that again under the socket lock, so it acts as
 *    stock; its code stays until module unload, which waits for every
 *    such task (rcvfix_arm_close()).
 *  - The last namespace to turn the switch off, or to be destroyed (in
 *    cleanup_net(), which every namespace teardown on the host waits for),
 *    gives its share back without the mutex and without disarming, and it
 *    schedules the disarm disarm_holdoff_s later (rcvfix_disarm_work), so
 *    a switch turned off and on again, or pods that come and go, do not
 *    patch kernel text each time (under emulation a disarm takes about
 *    0.9 s, an arm 0.1 s), and a namespace enabled within the hold-off
 *    finds the hooks still armed. The work disarms only if the count is
 *    still zero. With disarm_holdoff_s=0 a sysctl write disarms at once,
 *    and a destroyed namespace schedules the work without delay. While
 *    the hooks are held, another IP-modifying ftrace user of a hooked
 *    function (a kprobe with a post_handler, a module like rcvfix) is
 *    refused with EBUSY; a livepatch is not (below).
 *
 * On demand: hooks on a per-segment path (hook->on_demand: MPTCP's receive
 * path, for SO_RCVLOWAT) are left out of the arming until a socket needs
 * them: rcvfix_arm_demand(), called by the setsockopt-time replacement
 * that sets a mark, before that setsockopt() returns. From then on, until
 * unload, they are armed and disarmed with the others (the hold-off,
 * stepping aside, arm failures and rcvfix_arm_close() alike): a socket
 * whose mark was seen keeps its rule across a disarm and a new arming.
 * Until then an MPTCP segment meets no callback of rcvfix's.
 *
 * A livepatch always wins: while one loads or holds a hooked function,
 * rcvfix stands aside (livepatch.c), handed this file's lock and
 * transitions at load (rcvfix_arm_arming). Enabling a namespace then
 * succeeds and counts it; the fix comes into force when rcvfix arms again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "arm.h"
#include "hook.h"
#include "livepatch.h"
#include "status_keys.h"

/* Set only while every hook is armed: see the top of this file. */
bool rcvfix_hooks_in_force __read_mostly;

static DEFINE_MUTEX(rcvfix_arm_lock);

/*
 * The strategy's hooks, handed over by rcvfix_arm_init() and never
 * changed: those armed for the first enabled namespace, and those armed
 * on demand (see the top).
 */
#define RCVFIX_ARM_MAX_HOOKS 16
static struct rcvfix_hook *rcvfix_arm_hooks[RCVFIX_ARM_MAX_HOOKS];
static unsigned int rcvfix_arm_nr_hooks;
static struct rcvfix_hook *rcvfix_demand_hooks[RCVFIX_ARM_MAX_HOOKS];
static unsigned int rcvfix_nr_demand_hooks;
/* A socket needed them: set once under rcvfix_arm_lock, never cleared. */
static bool rcvfix_demanded;
static atomic_t rcvfix_arm_users = ATOMIC_INIT(0);

/* Written under rcvfix_arm_lock, read by rcvfix_arm_show() without it. */
static bool rcvfix_armed;
static bool rcvfix_arm_closed;		/* the module is unloading */
static unsigned long rcvfix_arms;	/* times the hooks were armed */
static unsigned long rcvfix_disarms;
static unsigned long rcvfix_arm_failures;
static int rcvfix_arm_err;		/* of the last attempt, 0 if it armed */
static const char *rcvfix_arm_err_hook = "";
static const char *rcvfix_arm_err_owner = "";
static bool rcvfix_demand_armed;	/* the on-demand hooks are armed */
static u64 rcvfix_demand_since_s;	/* since then, boot time */

/* ---- disarm_holdoff_s: module parameter, 0 to 3600 ---- */

#define RCVFIX_HOLDOFF_MAX_S 3600

/* How long the hooks stay armed after the last enabled namespace left. */
static unsigned int rcvfix_holdoff_s = 10;

static int rcvfix_param_set_holdoff(const char *val,
				    const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 10, &v) || v > RCVFIX_HOLDOFF_MAX_S)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops rcvfix_param_holdoff_ops = {
	.set = rcvfix_param_set_holdoff,
	.get = param_get_uint,
};

module_param_cb(disarm_holdoff_s, &rcvfix_param_holdoff_ops,
		&rcvfix_holdoff_s, 0644);
MODULE_PARM_DESC(disarm_holdoff_s,
		 "seconds the hooks stay armed after the last namespace turned the fix off or was destroyed: 0 (a sysctl write disarms at once) to 3600, default 10");

static void rcvfix_disarm_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(rcvfix_disarm_work, rcvfix_disarm_work_fn);

/*
 * The on-demand hooks, where a socket has needed them (else nothing),
 * @first (if not NULL) before the others; all or none. Their callbacks
 * act only while the whole strategy is in force (rcvfix_arm_in_force()),
 * so they may come before or after the others. Under rcvfix_arm_lock.
 */
static int rcvfix_demand_arm_locked(struct rcvfix_hook *first,
				    struct rcvfix_hook **failed)
{
	int ret;

	if (!rcvfix_demanded || rcvfix_demand_armed)
		return 0;
	ret = rcvfix_hooks_arm(rcvfix_demand_hooks, rcvfix_nr_demand_hooks,
			       first, failed);
	if (ret)
		return ret;
	WRITE_ONCE(rcvfix_demand_since_s, ktime_get_boottime_seconds());
	WRITE_ONCE(rcvfix_demand_armed, true);
	return 0;
}

/* Under rcvfix_arm_lock. */
static void rcvfix_demand_disarm_locked(void)
{
	rcvfix_hooks_disarm(rcvfix_demand_hooks, rcvfix_nr_demand_hooks);
	WRITE_ONCE(rcvfix_demand_armed, false);
}

/*
 * Arms every hook of the strategy, or none, @first (if not NULL) before
 * the others; then, and only then, the hooks are in force. Under
 * rcvfix_arm_lock.
 */
static int rcvfix_try_arm_locked(struct rcvfix_hook *first,
				 struct rcvfix_hook **failed)
{
	bool first_on_demand = first && first->on_demand;
	int ret;

	ret = rcvfix_demand_arm_locked(first_on_demand ? first : NULL, failed);
	if (ret)
		return ret;
	ret = rcvfix_hooks_arm(rcvfix_arm_hooks, rcvfix_arm_nr_hooks,
			       first_on_demand ? NULL : first, failed);
	if (ret) {
		rcvfix_demand_disarm_locked();
		return ret;
	}
	WRITE_ONCE(rcvfix_armed, true);
	WRITE_ONCE(rcvfix_arms, rcvfix_arms + 1);
	/* only now: every hook is registered and its text patched */
	WRITE_ONCE(rcvfix_hooks_in_force, true);
	return 0;
}

/* Records why @failed was refused, for /proc/net/rcvfix and the log. */
static void rcvfix_arm_failed_locked(struct rcvfix_hook *failed, int ret,
				     const char *outcome)
{
	WRITE_ONCE(rcvfix_arm_err_hook, failed->name);
	WRITE_ONCE(rcvfix_arm_err_owner, rcvfix_hook_owner(failed, ret));
	WRITE_ONCE(rcvfix_arm_err, ret);
	WRITE_ONCE(rcvfix_arm_failures, rcvfix_arm_failures + 1);
	pr_err_ratelimited("cannot hook %s: %s (%d), owner: %s; %s\n",
			   failed->name, rcvfix_hook_errno_name(ret), ret,
			   rcvfix_arm_err_owner, outcome);
}

/*
 * Arms for a namespace turning the fix on, recording why it failed for
 * /proc/net/rcvfix and the log. Under rcvfix_arm_lock.
 */
static int rcvfix_arm_locked(void)
{
	struct rcvfix_hook *failed = NULL;
	int ret;

	if (rcvfix_arm_closed)
		return -ENODEV;
	ret = rcvfix_try_arm_locked(NULL, &failed);
	if (ret) {
		rcvfix_arm_failed_locked(failed, ret,
					 "net.rcvfix.enable stays 0");
		return ret;
	}
	WRITE_ONCE(rcvfix_arm_err, 0);
	return 0;
}

/*
 * Disarms every hook of the strategy, the hooks out of force first.
 * @settle: namespaces still want the fix (stepping aside): wait for a
 * task that applied the rule just before to pass the hooks its call
 * meets next (see the top of this file). Under rcvfix_arm_lock.
 */
static void rcvfix_disarm_locked(bool settle)
{
	WRITE_ONCE(rcvfix_hooks_in_force, false);
	if (settle)
		synchronize_rcu_tasks();
	rcvfix_hooks_disarm(rcvfix_arm_hooks, rcvfix_arm_nr_hooks);
	rcvfix_demand_disarm_locked();
	WRITE_ONCE(rcvfix_armed, false);
	WRITE_ONCE(rcvfix_disarms, rcvfix_disarms + 1);
}

/**
 * rcvfix_arm_get - a namespace is about to turn the fix on
 *
 * Arms the hooks if no namespace had the fix on (and they are not still
 * armed from the hold-off). Returns 0 with the hooks armed, or while
 * rcvfix stands aside for a livepatch (it tries to arm again first), or
 * the error of the hook ftrace refused (-EBUSY where another IP-modifying
 * user owns it): then nothing is armed and the caller must leave its
 * switch off. May sleep.
 */
int rcvfix_arm_get(void)
{
	int ret = 0;

	if (atomic_inc_not_zero(&rcvfix_arm_users)) {
		rcvfix_livepatch_kick();
		return 0;
	}
	mutex_lock(&rcvfix_arm_lock);
	if (!atomic_inc_not_zero(&rcvfix_arm_users)) {
		if (rcvfix_livepatch_aside()) {
			atomic_set_release(&rcvfix_arm_users, 1);
			rcvfix_livepatch_wanted_locked();
		} else {
			/* armed already: in the hold-off */
			if (!rcvfix_armed)
				ret = rcvfix_arm_locked();
			if (!ret)
				atomic_set_release(&rcvfix_arm_users, 1);
		}
	}
	mutex_unlock(&rcvfix_arm_lock);
	return ret;
}

/*
 * After ftrace refused the on-demand hooks, marks do not try again for a
 * while (5 s, doubling up to 60 s, back to none once they arm): each
 * attempt takes the arming lock and RCU grace periods, and a tenant's
 * every setsockopt() would pay them while a livepatch or a kprobe holds
 * one of the functions.
 */
static bool rcvfix_demand_refused;
static unsigned long rcvfix_demand_retry_at;	/* jiffies */
static unsigned int rcvfix_demand_backoff_s;
static const unsigned int rcvfix_demand_backoff_max_s = 60;

/**
 * rcvfix_arm_demand - a socket needs the on-demand hooks
 *
 * Called in task context, where it may sleep, by a replacement that is
 * about to set an SO_RCVLOWAT mark on an MPTCP socket in a namespace with
 * the fix on (a BPF program's mark: from task work, mptcp_lowat.c), so
 * the hooks are armed before its setsockopt() returns (a later arming
 * could miss its last wakeup for good). The first call arms them where
 * the others are armed (while rcvfix stands aside, the next arming takes
 * them), then waits for an RCU grace period, so that a call of a hooked
 * function that began before it (a softirq's) has ended before the mark
 * is set; later calls cost one read. If ftrace refuses one, nothing of
 * the set stays armed, the failure is counted and logged, and a mark
 * after the back-off above tries again: meanwhile MPTCP's receive path
 * keeps the kernel's wakeups. May sleep.
 */
void rcvfix_arm_demand(void)
{
	struct rcvfix_hook *failed = NULL;
	bool armed_now = false;
	int ret;

	if (likely(READ_ONCE(rcvfix_demand_armed)) ||
	    !rcvfix_nr_demand_hooks)
		return;
	if (READ_ONCE(rcvfix_demand_refused) &&
	    time_before(jiffies, READ_ONCE(rcvfix_demand_retry_at)))
		return;
	mutex_lock(&rcvfix_arm_lock);
	if (rcvfix_arm_closed)
		goto out;
	rcvfix_demanded = true;
	if (!rcvfix_armed)
		goto out;
	armed_now = !rcvfix_demand_armed;
	ret = rcvfix_demand_arm_locked(NULL, &failed);
	if (ret) {
		armed_now = false;
		rcvfix_demanded = false;
		rcvfix_demand_backoff_s = rcvfix_demand_backoff_s ?
			min(2 * rcvfix_demand_backoff_s,
			    rcvfix_demand_backoff_max_s) : 5;
		WRITE_ONCE(rcvfix_demand_retry_at,
			   jiffies + rcvfix_demand_backoff_s * HZ);
		WRITE_ONCE(rcvfix_demand_refused, true);
		rcvfix_arm_failed_locked(failed, ret,
					 "MPTCP's receive path keeps the kernel's wakeups; a later SO_RCVLOWAT tries again");
	} else if (rcvfix_demand_refused) {
		WRITE_ONCE(rcvfix_demand_refused, false);
		rcvfix_demand_backoff_s = 0;
		WRITE_ONCE(rcvfix_arm_err, 0);
	}
out:
	mutex_unlock(&rcvfix_arm_lock);
	if (armed_now)
		synchronize_rcu();
}

/*
 * The last namespace's share, for an immediate disarm: true if the caller
 * holds rcvfix_arm_lock and must disarm (hooks armed, no namespace
 * enabled any more).
 */
static bool rcvfix_arm_put_last(void)
{
	if (atomic_add_unless(&rcvfix_arm_users, -1, 1))
		return false;
	mutex_lock(&rcvfix_arm_lock);
	if (!atomic_dec_and_test(&rcvfix_arm_users) || !rcvfix_armed) {
		mutex_unlock(&rcvfix_arm_lock);
		return false;
	}
	return true;
}

/* The last share went: disarm after the hold-off (@delay_s). */
static void rcvfix_disarm_later(unsigned int delay_s)
{
	if (!READ_ONCE(rcvfix_arm_closed))
		mod_delayed_work(system_wq, &rcvfix_disarm_work,
				 delay_s * HZ);
}

/**
 * rcvfix_arm_put - a namespace has turned the fix off
 *
 * The last one has the hooks disarmed disarm_holdoff_s later, by a work
 * item, without waiting; with disarm_holdoff_s=0 it disarms them itself:
 * no task runs a callback or trampoline of rcvfix's once this returns.
 * The writer does not wait for tasks still in a replacement: one may
 * sleep on a socket lock for as long as its owner likes, and it reads its
 * namespace's switch again under that lock, so it acts as stock (see the
 * top of this file); module unload waits for every such task in
 * rcvfix_arm_close(). May sleep.
 */
void rcvfix_arm_put(void)
{
	unsigned int holdoff = READ_ONCE(rcvfix_holdoff_s);

	if (holdoff) {
		if (atomic_dec_and_test(&rcvfix_arm_users))
			rcvfix_disarm_later(holdoff);
		return;
	}
	if (!rcvfix_arm_put_last())
		return;
	rcvfix_disarm_locked(false);
	mutex_unlock(&rcvfix_arm_lock);
}

/**
 * rcvfix_arm_put_deferred - an enabled namespace is being destroyed
 *
 * As rcvfix_arm_put(), but always through the work item, and without
 * rcvfix_arm_lock (an arm or disarm may hold it for grace periods):
 * cleanup_net() never waits for ftrace. The count may reach zero
 * outside the lock with the hooks armed: rcvfix_arm_get() finds them
 * armed, and the work disarms only under the lock and only if the count
 * is still zero. rcvfix_arm_exit() cancels a work still pending.
 */
void rcvfix_arm_put_deferred(void)
{
	if (atomic_dec_and_test(&rcvfix_arm_users))
		rcvfix_disarm_later(READ_ONCE(rcvfix_holdoff_s));
}

static void rcvfix_disarm_work_fn(struct work_struct *work)
{
	mutex_lock(&rcvfix_arm_lock);
	if (!rcvfix_arm_closed && rcvfix_armed &&
	    !atomic_read(&rcvfix_arm_users))
		rcvfix_disarm_locked(false);
	mutex_unlock(&rcvfix_arm_lock);
}

/* ---- what stepping aside for a livepatch may do (livepatch.c) ---- */

static void rcvfix_disarm_armed_locked(bool settle)
{
	if (rcvfix_armed)
		rcvfix_disarm_locked(settle);
}

static bool rcvfix_arm_wanted(void)
{
	return atomic_read(&rcvfix_arm_users);
}

static const struct rcvfix_livepatch_arming rcvfix_arm_arming = {
	.lock = &rcvfix_arm_lock,
	.arm = rcvfix_try_arm_locked,
	.disarm = rcvfix_disarm_armed_locked,
	.wanted = rcvfix_arm_wanted,
};

/**
 * rcvfix_arm_init - take the hooks to arm and start following livepatches
 * @hooks: the strategy's resolved hooks, armed in this order (disarmed in
 *	reverse), kept until unload
 * @n: how many
 *
 * Before any namespace can arm the hooks (default_enable=1).
 */
int rcvfix_arm_init(struct rcvfix_hook *const *hooks, unsigned int n)
{
	unsigned int i;

	if (n > RCVFIX_ARM_MAX_HOOKS)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		if (hooks[i]->on_demand)
			rcvfix_demand_hooks[rcvfix_nr_demand_hooks++] = hooks[i];
		else
			rcvfix_arm_hooks[rcvfix_arm_nr_hooks++] = hooks[i];
	}
	return rcvfix_livepatch_init(&rcvfix_arm_arming);
}

/* Are the on-demand hooks armed (one read, any context)? */
bool rcvfix_arm_demand_armed(void)
{
	return READ_ONCE(rcvfix_demand_armed) || !rcvfix_nr_demand_hooks;
}

/* Are there hooks armed on demand (for the load log line)? */
bool rcvfix_arm_has_demand_hooks(void)
{
	return rcvfix_nr_demand_hooks;
}

/**
 * rcvfix_arm_close - module unload: disarm for good, wait for every task
 *
 * First step of unloading, so that the wait runs before the namespaces'
 * state goes away and without holding the kernel's pernet lock. A disarm
 * held off or a retry pending is dropped: the hooks go now. Later
 * rcvfix_arm_get() calls fail with -ENODEV; switches still on stay on
 * with no effect until their namespace's state is removed.
 */
void rcvfix_arm_close(void)
{
	rcvfix_livepatch_close();
	mutex_lock(&rcvfix_arm_lock);
	WRITE_ONCE(rcvfix_arm_closed, true);
	mutex_unlock(&rcvfix_arm_lock);
	cancel_delayed_work_sync(&rcvfix_disarm_work);
	mutex_lock(&rcvfix_arm_lock);
	if (rcvfix_armed)
		rcvfix_disarm_locked(false);
	mutex_unlock(&rcvfix_arm_lock);
	rcvfix_hook_quiesce();
}

/**
 * rcvfix_arm_exit - last step of unloading, once no namespace state is left
 *
 * A namespace destroyed while rcvfix_arm_close() ran may have scheduled
 * the disarm work after that cancelled it, and a sysctl write or a read
 * of /proc/net/rcvfix a retry; none can come after
 * unregister_pernet_subsys() has returned for both, so cancelling here is
 * final. The works find their unit closed and do nothing if they run.
 */
void rcvfix_arm_exit(void)
{
	cancel_delayed_work_sync(&rcvfix_disarm_work);
	rcvfix_livepatch_exit();
}

/*
 * The module-wide arming lines of /proc/net/rcvfix, with the stepping
 * aside's (livepatch.c) before the last arming error.
 */
void rcvfix_arm_show(struct seq_file *m)
{
	int err = READ_ONCE(rcvfix_arm_err);

	seq_printf(m, RCVFIX_KEY_ARMED " %s\n", READ_ONCE(rcvfix_armed) ? "yes" : "no");
	seq_printf(m, RCVFIX_KEY_ENABLED_NAMESPACES " %d\n",
		   atomic_read(&rcvfix_arm_users));
	seq_printf(m, RCVFIX_KEY_ARMS " %lu\n", READ_ONCE(rcvfix_arms));
	seq_printf(m, RCVFIX_KEY_DISARMS " %lu\n", READ_ONCE(rcvfix_disarms));
	seq_printf(m, RCVFIX_KEY_ARM_FAILURES " %lu\n", READ_ONCE(rcvfix_arm_failures));
	seq_printf(m, RCVFIX_KEY_RECEIVE_HOOKS " %s\n",
		   READ_ONCE(rcvfix_demand_armed) ? "yes" : "no");
	seq_printf(m, RCVFIX_KEY_RECEIVE_HOOKS_SINCE " %llu\n",
		   READ_ONCE(rcvfix_demand_armed) ?
		   READ_ONCE(rcvfix_demand_since_s) : 0);
	rcvfix_livepatch_show(m);
	if (err)
		seq_printf(m, RCVFIX_KEY_LAST_ARM_ERROR " %s:%s:%s\n",
			   rcvfix_hook_errno_name(err),
			   READ_ONCE(rcvfix_arm_err_hook),
			   READ_ONCE(rcvfix_arm_err_owner));
	else
		seq_puts(m, RCVFIX_KEY_LAST_ARM_ERROR " none\n");
}
