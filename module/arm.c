// SPDX-License-Identifier: GPL-2.0
/*
 * Pay nothing while unused: the strategy's hooks (rcvbuf.c) are armed
 * when the first namespace turns net.rcvfix.enable on and disarmed when
 * the last one turns it off or is destroyed. With nothing enabled the
 * kernel runs its own code with no ftrace callback at all, and a
 * livepatch of the hooked functions can be applied.
 *
 * Locking and ordering:
 *  - rcvfix_arm_users counts the namespaces with the fix on. It becomes
 *    non-zero only under rcvfix_arm_lock once every hook is armed, and
 *    drops to zero only under it, before the hooks are disarmed: so
 *    "users > 0" implies "armed", and a namespace joining or leaving
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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/mutex.h>
#include <linux/printk.h>

#include "arm.h"
#include "hook.h"
#include "rcvbuf.h"

static DEFINE_MUTEX(rcvfix_arm_lock);
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
static int rcvfix_arm_locked(void)
{
	struct rcvfix_hook *const *hooks;
	struct rcvfix_hook *failed = NULL;
	unsigned int n;
	int ret;

	if (rcvfix_arm_closed)
		return -ENODEV;
	hooks = rcvfix_rcvbuf_hooks(&n);
	ret = rcvfix_hooks_arm(hooks, n, &failed);
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
	WRITE_ONCE(rcvfix_armed, true);
	WRITE_ONCE(rcvfix_arms, rcvfix_arms + 1);
	return 0;
}

/* Disarms every hook of the strategy. Under rcvfix_arm_lock. */
static void rcvfix_disarm_locked(void)
{
	struct rcvfix_hook *const *hooks;
	unsigned int n;

	hooks = rcvfix_rcvbuf_hooks(&n);
	rcvfix_hooks_disarm(hooks, n);
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
		ret = rcvfix_arm_locked();
		if (!ret)
			atomic_set_release(&rcvfix_arm_users, 1);
	}
	mutex_unlock(&rcvfix_arm_lock);
	return ret;
}

/**
 * rcvfix_arm_put - a namespace has turned the fix off (or is destroyed)
 *
 * The last one disarms the hooks: no task runs a callback or trampoline
 * of rcvfix's once this returns. Neither the sysctl writer nor namespace
 * destruction waits for tasks still in a replacement: one may sleep on a
 * socket lock for as long as its owner likes, and it reads its
 * namespace's switch again under that lock, so it acts as stock (see the
 * top of this file); module unload waits for every such task in
 * rcvfix_arm_close(). May sleep.
 */
void rcvfix_arm_put(void)
{
	if (atomic_add_unless(&rcvfix_arm_users, -1, 1))
		return;
	mutex_lock(&rcvfix_arm_lock);
	if (!atomic_dec_and_test(&rcvfix_arm_users) || !rcvfix_armed) {
		mutex_unlock(&rcvfix_arm_lock);
		return;
	}
	rcvfix_disarm_locked();
	mutex_unlock(&rcvfix_arm_lock);
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
	mutex_lock(&rcvfix_arm_lock);
	WRITE_ONCE(rcvfix_arm_closed, true);
	if (rcvfix_armed)
		rcvfix_disarm_locked();
	mutex_unlock(&rcvfix_arm_lock);
	rcvfix_hook_quiesce();
}

/* The module-wide arming lines of /proc/net/rcvfix. */
void rcvfix_arm_show(struct seq_file *m)
{
	int err = READ_ONCE(rcvfix_arm_err);

	seq_printf(m, "armed %s\n", READ_ONCE(rcvfix_armed) ? "yes" : "no");
	seq_printf(m, "enabled_namespaces %d\n",
		   atomic_read(&rcvfix_arm_users));
	seq_printf(m, "arms %lu\n", READ_ONCE(rcvfix_arms));
	seq_printf(m, "disarms %lu\n", READ_ONCE(rcvfix_disarms));
	seq_printf(m, "arm_failures %lu\n", READ_ONCE(rcvfix_arm_failures));
	if (err)
		seq_printf(m, "last_arm_error %s:%s:%s\n",
			   rcvfix_errno_name(err),
			   READ_ONCE(rcvfix_arm_err_hook),
			   READ_ONCE(rcvfix_arm_err_owner));
	else
		seq_puts(m, "last_arm_error none\n");
}
