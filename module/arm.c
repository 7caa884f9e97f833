// SPDX-License-Identifier: GPL-2.0
/*
 * Pay nothing while unused: the strategy's hooks (handed over at load,
 * rcvfix_arm_init()) are armed when the first namespace turns
 * net.rcvfix.enable on and disarmed when the last one turns it off or is
 * destroyed. With nothing enabled the kernel runs its own code with no
 * ftrace callback at all, and a livepatch of the hooked functions can be
 * applied.
 *
 * Locking and ordering:
 *  - rcvfix_arm_users counts the namespaces with the fix on. It becomes
 *    non-zero only under rcvfix_arm_lock once every hook is armed (or
 *    while rcvfix stands aside for a livepatch, below), and drops to zero
 *    before the hooks are disarmed: so "users > 0" implies "armed" unless
 *    rcvfix stands aside, and a namespace joining or leaving
 *    while others stay enabled changes the count without the mutex
 *    (atomic_inc_not_zero(), atomic_add_unless()): sysctl writers in
 *    other namespaces never wait for a transition they do not cause.
 *  - rcvfix_arm_lock serialises the transitions 0 -> 1 (arm) and 1 -> 0
 *    (disarm), which register and unregister the same ftrace_ops. A
 *    writer that has to arm waits for a disarm in progress: it needs the
 *    ops back.
 *  - A namespace's switch is set to 1 only after rcvfix_arm_get() has
 *    armed the hooks, and set to 0 before rcvfix_arm_put() disarms them
 *    (netns.c, under the namespace's own mutex): an enabled namespace
 *    always has armed hooks. A setter racing with a transition meets
 *    either no callback (stock), or a callback that finds the switch off
 *    (stock), or a replacement that reads the switch again under the
 *    socket lock and applies the rule or stock code accordingly; it never
 *    runs a half-armed strategy, since arming is all or nothing and
 *    happens while no namespace is enabled.
 *  - Disarming waits until no task runs a callback or trampoline
 *    (unregister_ftrace_function()) under the mutex, and no longer: a
 *    task still in a replacement may sleep there for as long as someone
 *    holds its socket lock, and a sysctl writer must not hang on that.
 *    Nothing requires the wait: every namespace is off by then, and a
 *    replacement reads its namespace's switch again under the socket
 *    lock, so it acts as stock; its code stays until module unload,
 *    which waits for every such task (rcvfix_arm_close()).
 *  - A destroyed namespace gives its share back in cleanup_net(), which
 *    every namespace teardown on the host waits for, without the mutex and
 *    without disarming: the last one schedules the disarm
 *    rcvfix_disarm_holdoff_s later (rcvfix_disarm_work), so pods that come
 *    and go do not patch kernel text each time, and a namespace enabled
 *    within the hold-off finds the hooks still armed. This is the one
 *    place the count drops to zero outside the mutex, with the hooks
 *    armed. Turning the switch off with a sysctl write disarms at once.
 *
 * A livepatch always wins. A module the kernel marks as a livepatch may
 * patch a hooked function, and ftrace lets only one IP-modifying user own
 * it. So when a livepatch module is coming, rcvfix steps aside: it
 * disarms before the livepatch's init registers its handlers, and keeps
 * every namespace's switch as it is. Once the livepatch is live, rcvfix
 * arms again; if ftrace refuses (the livepatch owns a hooked function),
 * it stays aside, says so in one log line and in /proc/net/rcvfix
 * (stepped_aside), and tries again each time a livepatch module goes.
 * All or nothing here too: the rule holds on every path that sets a
 * buffer or on none, never on some (setsockopt unlocked while
 * sock_set_rcvbuf() locks, or an MPTCP socket unlocked while stock sync
 * locks its subflows). While aside, enabling a namespace succeeds and
 * counts it; the fix comes into force when rcvfix arms again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/printk.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "arm.h"
#include "hook.h"
#include "status_keys.h"

static DEFINE_MUTEX(rcvfix_arm_lock);

/* The strategy's hooks, handed over by rcvfix_arm_init(), never changed. */
static struct rcvfix_hook *const *rcvfix_arm_hooks;
static unsigned int rcvfix_arm_nr_hooks;
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

/* How long the hooks stay armed after the last enabled namespace died. */
static const unsigned int rcvfix_disarm_holdoff_s = 10;

static void rcvfix_disarm_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(rcvfix_disarm_work, rcvfix_disarm_work_fn);

/*
 * Stepping aside for livepatches, under rcvfix_arm_lock: whether rcvfix
 * stays disarmed for one, why (also under a spinlock, for the reader),
 * and the livepatch modules between coming and live, during which nothing
 * arms.
 */
static bool rcvfix_aside;
static char rcvfix_aside_for[MODULE_NAME_LEN + 80] = "none";
static DEFINE_SPINLOCK(rcvfix_aside_for_lock);	/* for the reader */
static unsigned long rcvfix_asides;	/* times rcvfix stepped aside */
static const struct module *rcvfix_lp_coming[8];

static const char *rcvfix_errno_name(int err)
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

/* Arms every hook of the strategy, or none. Under rcvfix_arm_lock. */
static int rcvfix_try_arm_locked(struct rcvfix_hook **failed)
{
	int ret;

	ret = rcvfix_hooks_arm(rcvfix_arm_hooks, rcvfix_arm_nr_hooks, failed);
	if (ret)
		return ret;
	WRITE_ONCE(rcvfix_armed, true);
	WRITE_ONCE(rcvfix_arms, rcvfix_arms + 1);
	return 0;
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
	ret = rcvfix_try_arm_locked(&failed);
	if (ret) {
		WRITE_ONCE(rcvfix_arm_err_hook, failed->name);
		WRITE_ONCE(rcvfix_arm_err_owner,
			   rcvfix_hook_owner(failed, ret));
		WRITE_ONCE(rcvfix_arm_err, ret);
		WRITE_ONCE(rcvfix_arm_failures, rcvfix_arm_failures + 1);
		pr_err_ratelimited("cannot hook %s: %s (%d), owner: %s; net.rcvfix.enable stays 0\n",
				   failed->name, rcvfix_errno_name(ret), ret,
				   rcvfix_arm_err_owner);
		return ret;
	}
	WRITE_ONCE(rcvfix_arm_err, 0);
	return 0;
}

/* Disarms every hook of the strategy. Under rcvfix_arm_lock. */
static void rcvfix_disarm_locked(void)
{
	rcvfix_hooks_disarm(rcvfix_arm_hooks, rcvfix_arm_nr_hooks);
	WRITE_ONCE(rcvfix_armed, false);
	WRITE_ONCE(rcvfix_disarms, rcvfix_disarms + 1);
}

/**
 * rcvfix_arm_get - a namespace is about to turn the fix on
 *
 * Arms the hooks if no namespace had the fix on. Returns 0 with the hooks
 * armed, or the error of the hook ftrace refused (-EBUSY where another
 * IP-modifying user owns it): then nothing is armed and the caller must
 * leave its switch off. May sleep.
 */
int rcvfix_arm_get(void)
{
	int ret = 0;

	if (atomic_inc_not_zero(&rcvfix_arm_users))
		return 0;
	mutex_lock(&rcvfix_arm_lock);
	if (!atomic_inc_not_zero(&rcvfix_arm_users)) {
		/* armed already: the hold-off after a destroyed namespace */
		if (!rcvfix_armed && !rcvfix_aside)
			ret = rcvfix_arm_locked();
		if (!ret)
			atomic_set_release(&rcvfix_arm_users, 1);
	}
	mutex_unlock(&rcvfix_arm_lock);
	return ret;
}

/*
 * The last namespace's share: true if the caller holds rcvfix_arm_lock
 * and must disarm (hooks armed, no namespace enabled any more).
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

/**
 * rcvfix_arm_put - a namespace has turned the fix off
 *
 * The last one disarms the hooks: no task runs a callback or trampoline
 * of rcvfix's once this returns. The writer does not wait for tasks
 * still in a replacement: one may sleep on a socket lock for as long as
 * its owner likes, and it reads its namespace's switch again under that
 * lock, so it acts as stock (see the top of this file); module unload
 * waits for every such task in rcvfix_arm_close(). May sleep.
 */
void rcvfix_arm_put(void)
{
	if (!rcvfix_arm_put_last())
		return;
	rcvfix_disarm_locked();
	mutex_unlock(&rcvfix_arm_lock);
}

/**
 * rcvfix_arm_put_deferred - an enabled namespace is being destroyed
 *
 * As rcvfix_arm_put(), but the last one only schedules the disarm, and
 * without rcvfix_arm_lock (an arm or disarm may hold it for grace
 * periods): cleanup_net() never waits for ftrace. The count may reach
 * zero outside the lock with the hooks armed: rcvfix_arm_get() finds
 * them armed, and the work disarms only under the lock and only if the
 * count is still zero. rcvfix_arm_exit() cancels a work still pending.
 */
void rcvfix_arm_put_deferred(void)
{
	if (atomic_dec_and_test(&rcvfix_arm_users) &&
	    !READ_ONCE(rcvfix_arm_closed))
		mod_delayed_work(system_wq, &rcvfix_disarm_work,
				 rcvfix_disarm_holdoff_s * HZ);
}

static void rcvfix_disarm_work_fn(struct work_struct *work)
{
	mutex_lock(&rcvfix_arm_lock);
	if (!rcvfix_arm_closed && rcvfix_armed &&
	    !atomic_read(&rcvfix_arm_users))
		rcvfix_disarm_locked();
	mutex_unlock(&rcvfix_arm_lock);
}

/* ---- a livepatch always wins ---- */

static bool rcvfix_lp_track(const struct module *mod, bool add)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rcvfix_lp_coming); i++) {
		if (add && !rcvfix_lp_coming[i]) {
			rcvfix_lp_coming[i] = mod;
			return true;
		}
		if (!add && rcvfix_lp_coming[i] == mod) {
			rcvfix_lp_coming[i] = NULL;
			return true;
		}
	}
	return false;
}

static bool rcvfix_lp_any_coming(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rcvfix_lp_coming); i++)
		if (rcvfix_lp_coming[i])
			return true;
	return false;
}

/* Sets the stepped_aside_for value, "none" for a NULL @kind. */
static void rcvfix_aside_set(const char *kind, const char *mod,
			     const char *func)
{
	spin_lock(&rcvfix_aside_for_lock);
	if (!kind)
		strscpy(rcvfix_aside_for, "none", sizeof(rcvfix_aside_for));
	else
		snprintf(rcvfix_aside_for, sizeof(rcvfix_aside_for),
			 "%s:%s%s%s", kind, mod, func ? ":" : "",
			 func ? func : "");
	spin_unlock(&rcvfix_aside_for_lock);
}

/* No longer aside. Under rcvfix_arm_lock. */
static void rcvfix_aside_clear(void)
{
	WRITE_ONCE(rcvfix_aside, false);
	rcvfix_aside_set(NULL, NULL, NULL);
}

/*
 * A livepatch module is coming: step aside before its init registers its
 * handlers. Already aside for an earlier one: its reason stays until this
 * one is live. Nothing enabled: only keep an enable from arming until
 * then.
 */
static void rcvfix_lp_coming_locked(struct module *mod)
{
	bool enabled = atomic_read(&rcvfix_arm_users);

	if (!rcvfix_lp_track(mod, true))
		pr_warn("livepatch %s: too many livepatches loading at once to follow; rcvfix may arm before it is live\n",
			mod->name);
	if (rcvfix_armed)
		rcvfix_disarm_locked();
	if (rcvfix_aside)
		return;
	WRITE_ONCE(rcvfix_aside, true);
	rcvfix_aside_set("livepatch-loading", mod->name, NULL);
	if (!enabled)
		return;
	WRITE_ONCE(rcvfix_asides, rcvfix_asides + 1);
	pr_info("livepatch %s is loading: the fix steps aside (net.rcvfix.enable stays as it is in every namespace)\n",
		mod->name);
}

/*
 * A livepatch module is live or going: arm again where namespaces want
 * the fix, unless another livepatch is still loading. Stays aside, with
 * the function ftrace refused, if a livepatch owns one.
 */
static void rcvfix_lp_settled_locked(struct module *mod, bool live)
{
	struct rcvfix_hook *failed = NULL;
	bool was_loading = rcvfix_lp_track(mod, false);
	int ret;

	if (!rcvfix_aside || rcvfix_lp_any_coming())
		return;
	if (!atomic_read(&rcvfix_arm_users)) {
		rcvfix_aside_clear();
		return;
	}
	ret = rcvfix_try_arm_locked(&failed);
	if (!ret) {
		rcvfix_aside_clear();
		pr_info("livepatch %s %s: the fix is in force again\n",
			mod->name, live ? "patches no function rcvfix hooks" :
					  "is gone");
		return;
	}
	if (live && was_loading) {
		rcvfix_aside_set("livepatch", mod->name, failed->name);
		pr_info("livepatch %s patches %s: the fix steps aside while it is loaded (%s); net.rcvfix.enable stays as it is\n",
			mod->name, failed->name, rcvfix_errno_name(ret));
	} else {
		/* another livepatch (or ftrace user) still owns it */
		rcvfix_aside_set(ret == -EBUSY ? "livepatch-or-ftrace-ops" :
						 rcvfix_errno_name(ret),
				 failed->name, NULL);
		pr_info("livepatch %s is gone, but %s is still owned (%s): the fix stays aside\n",
			mod->name, failed->name, rcvfix_errno_name(ret));
	}
}

static int rcvfix_arm_module_event(struct notifier_block *nb,
				   unsigned long state, void *data)
{
	struct module *mod = data;

	if (!rcvfix_module_is_livepatch(mod))
		return NOTIFY_DONE;
	mutex_lock(&rcvfix_arm_lock);
	if (!rcvfix_arm_closed) {
		if (state == MODULE_STATE_COMING)
			rcvfix_lp_coming_locked(mod);
		else if (state == MODULE_STATE_LIVE ||
			 state == MODULE_STATE_GOING)
			rcvfix_lp_settled_locked(mod,
						 state == MODULE_STATE_LIVE);
	}
	mutex_unlock(&rcvfix_arm_lock);
	return NOTIFY_OK;
}

static struct notifier_block rcvfix_arm_module_nb = {
	.notifier_call = rcvfix_arm_module_event,
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
	rcvfix_arm_hooks = hooks;
	rcvfix_arm_nr_hooks = n;
	return register_module_notifier(&rcvfix_arm_module_nb);
}

/**
 * rcvfix_arm_close - module unload: disarm for good, wait for every task
 *
 * First step of unloading, so that the wait runs before the namespaces'
 * state goes away and without holding the kernel's pernet lock. Later
 * rcvfix_arm_get() calls fail with -ENODEV; switches still on stay on
 * with no effect until their namespace's state is removed.
 */
void rcvfix_arm_close(void)
{
	unregister_module_notifier(&rcvfix_arm_module_nb);
	mutex_lock(&rcvfix_arm_lock);
	WRITE_ONCE(rcvfix_arm_closed, true);
	mutex_unlock(&rcvfix_arm_lock);
	cancel_delayed_work_sync(&rcvfix_disarm_work);
	mutex_lock(&rcvfix_arm_lock);
	if (rcvfix_armed)
		rcvfix_disarm_locked();
	mutex_unlock(&rcvfix_arm_lock);
	rcvfix_hook_quiesce();
}

/**
 * rcvfix_arm_exit - last step of unloading, once no namespace state is left
 *
 * A namespace destroyed while rcvfix_arm_close() ran may have scheduled
 * the disarm work after that cancelled it; none can be destroyed after
 * unregister_pernet_subsys() has returned, so cancelling here is final.
 * The work finds rcvfix_arm_closed set and does nothing if it runs.
 */
void rcvfix_arm_exit(void)
{
	cancel_delayed_work_sync(&rcvfix_disarm_work);
}

/* The module-wide arming lines of /proc/net/rcvfix. */
void rcvfix_arm_show(struct seq_file *m)
{
	char aside_for[sizeof(rcvfix_aside_for)];
	int err = READ_ONCE(rcvfix_arm_err);

	seq_printf(m, RCVFIX_KEY_ARMED " %s\n", READ_ONCE(rcvfix_armed) ? "yes" : "no");
	seq_printf(m, RCVFIX_KEY_ENABLED_NAMESPACES " %d\n",
		   atomic_read(&rcvfix_arm_users));
	seq_printf(m, RCVFIX_KEY_ARMS " %lu\n", READ_ONCE(rcvfix_arms));
	seq_printf(m, RCVFIX_KEY_DISARMS " %lu\n", READ_ONCE(rcvfix_disarms));
	seq_printf(m, RCVFIX_KEY_ARM_FAILURES " %lu\n", READ_ONCE(rcvfix_arm_failures));
	seq_printf(m, RCVFIX_KEY_STEPPED_ASIDE " %s\n",
		   READ_ONCE(rcvfix_aside) ? "yes" : "no");
	spin_lock(&rcvfix_aside_for_lock);
	strscpy(aside_for, rcvfix_aside_for, sizeof(aside_for));
	spin_unlock(&rcvfix_aside_for_lock);
	seq_printf(m, RCVFIX_KEY_STEPPED_ASIDE_FOR " %s\n", aside_for);
	seq_printf(m, RCVFIX_KEY_STEPS_ASIDE " %lu\n", READ_ONCE(rcvfix_asides));
	if (err)
		seq_printf(m, RCVFIX_KEY_LAST_ARM_ERROR " %s:%s:%s\n",
			   rcvfix_errno_name(err),
			   READ_ONCE(rcvfix_arm_err_hook),
			   READ_ONCE(rcvfix_arm_err_owner));
	else
		seq_puts(m, RCVFIX_KEY_LAST_ARM_ERROR " none\n");
}
