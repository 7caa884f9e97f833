// SPDX-License-Identifier: GPL-2.0
/*
 * A livepatch always wins: stepping aside for livepatch modules. Follows
 * them with a module notifier, names the one that holds a hooked function,
 * and retries arming while aside. Calls the arming unit (arm.c) only
 * through the rcvfix_livepatch_arming it is handed at load.
 *
 * A module the kernel marks as a livepatch may patch a hooked function,
 * and ftrace lets only one IP-modifying user own it. So when a livepatch
 * module is coming, rcvfix steps aside: it disarms before the livepatch's
 * init registers its handlers (also in the hold-off), and keeps every
 * namespace's switch as it is. Once the livepatch is live, rcvfix arms
 * again; if ftrace refuses (a livepatch owns a hooked function), it stays
 * aside, says so in one log line and in /proc/net/rcvfix (stepped_aside,
 * and stepped_aside_for naming the livepatch that holds the function),
 * and tries again until it can. A livepatch's handlers do not always go
 * with a module event: one disabled through
 * /sys/kernel/livepatch/NAME/enabled, or replaced by an atomic-replace
 * livepatch, lets go at the end of that transition, its module still
 * loaded, and the kernel announces neither. So while aside, with
 * namespaces wanting the fix, rcvfix tries again (rcvfix_retry_work) 1 s
 * after a failed attempt, then after 2, 4, ... up to 60 s, and soon (at
 * most once a second) when a namespace turns the fix on or the host reads
 * /proc/net/rcvfix, as well as at every livepatch module's live and going
 * events. An attempt first tries the function that was refused last:
 * while it is still held, nothing else is armed. While aside, enabling a
 * namespace succeeds and counts it; the fix comes into force when rcvfix
 * arms again.
 *
 * Everything here but the reader's copy of stepped_aside_for is under the
 * arming lock (rcvfix_livepatch_arming.lock).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/printk.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "hook.h"
#include "livepatch.h"
#include "status_keys.h"

/* What arm.c lent at load (rcvfix_livepatch_init()), never changed. */
static const struct rcvfix_livepatch_arming *rcvfix_lp_arming;
static bool rcvfix_lp_closed;		/* the module is unloading */

/*
 * Under the arming lock: whether rcvfix stays disarmed for a livepatch,
 * why (also under a spinlock, for the reader),
 * the livepatch modules between coming and live, during which nothing
 * arms, and every livepatch module loaded since rcvfix was (oldest
 * first), to name the one that holds a function.
 */
static bool rcvfix_aside;
static char rcvfix_aside_for[MODULE_NAME_LEN + 80] = "none";
static DEFINE_SPINLOCK(rcvfix_aside_for_lock);	/* for the reader */
static unsigned long rcvfix_asides;	/* times rcvfix stepped aside */
static const struct module *rcvfix_lp_coming[8];
static char rcvfix_lp_loaded[16][MODULE_NAME_LEN];

/*
 * While aside: the hook ftrace refused at the last attempt (tried first
 * at the next), its error, and the livepatch found to hold it ("" if
 * none was); when to try again (rcvfix_retry_work), and when the last
 * attempt was (read without the lock by rcvfix_livepatch_kick()).
 */
static struct rcvfix_hook *rcvfix_aside_hook;
static int rcvfix_aside_err;
static char rcvfix_aside_owner[MODULE_NAME_LEN];
static unsigned long rcvfix_retry_delay = HZ;
static unsigned long rcvfix_retry_last;

#define RCVFIX_RETRY_MAX (60 * HZ)

static void rcvfix_retry_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(rcvfix_retry_work, rcvfix_retry_work_fn);

/* Try again soon while aside, at most once a second. Any context. */
void rcvfix_livepatch_kick(void)
{
	unsigned long next = READ_ONCE(rcvfix_retry_last) + HZ;
	unsigned long now = jiffies;

	if (!READ_ONCE(rcvfix_aside) || READ_ONCE(rcvfix_lp_closed))
		return;
	mod_delayed_work(system_wq, &rcvfix_retry_work,
			 time_before(now, next) ? min(next - now, (unsigned long)HZ) : 0);
}

/* Does rcvfix stand aside for a livepatch? Under the arming lock. */
bool rcvfix_livepatch_aside(void)
{
	return rcvfix_aside;
}

/* Adds or removes a livepatch module between coming and live. */
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

/* Adds or removes a loaded livepatch module, kept oldest first. */
static void rcvfix_lp_loaded_track(const char *name, bool add)
{
	const unsigned int n = ARRAY_SIZE(rcvfix_lp_loaded);
	unsigned int i;

	for (i = 0; i < n && rcvfix_lp_loaded[i][0]; i++) {
		if (!add && !strcmp(rcvfix_lp_loaded[i], name)) {
			memmove(rcvfix_lp_loaded[i], rcvfix_lp_loaded[i + 1],
				(n - i - 1) * sizeof(rcvfix_lp_loaded[0]));
			rcvfix_lp_loaded[n - 1][0] = '\0';
			return;
		}
	}
	if (add && i < n)
		strscpy(rcvfix_lp_loaded[i], name, sizeof(rcvfix_lp_loaded[i]));
}

/*
 * Does the livepatch module @name patch @func of vmlinux? Its sysfs tree
 * says so (Documentation/ABI/testing/sysfs-kernel-livepatch):
 * /sys/kernel/livepatch/NAME/vmlinux/FUNC,1 exists from the livepatch's
 * init until its patch is freed at the end of the transition that
 * disables or replaces it, which is when its ftrace handler goes. The
 * functions rcvfix hooks have one symbol of their name (sympos 0 and 1
 * both show as 1). During an atomic replace the new patch holds a "nop"
 * entry for each function only the old one patches.
 */
static bool rcvfix_lp_patches(const char *name, const char *func)
{
	char leaf[96];
	const char *const path[] = { "livepatch", name, "vmlinux", leaf };
	struct kernfs_node *kn = NULL, *next;
	unsigned int i;

	if (!kernel_kobj || !kernel_kobj->sd ||
	    snprintf(leaf, sizeof(leaf), "%s,1", func) >= sizeof(leaf))
		return false;
	for (i = 0; i < ARRAY_SIZE(path); i++) {
		next = kernfs_find_and_get(kn ? kn : kernel_kobj->sd, path[i]);
		if (kn)
			kernfs_put(kn);
		if (!next)
			return false;
		kn = next;
	}
	kernfs_put(kn);
	return true;
}

/*
 * The livepatch module that holds @func: the oldest loaded since rcvfix
 * was that patches it (during an atomic replace, the one being replaced:
 * the other has a nop there), or NULL if none does (one loaded before
 * rcvfix, or another ftrace user). Under the arming lock.
 */
static const char *rcvfix_lp_owner(const char *func)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rcvfix_lp_loaded); i++) {
		if (!rcvfix_lp_loaded[i][0])
			break;
		if (rcvfix_lp_patches(rcvfix_lp_loaded[i], func))
			return rcvfix_lp_loaded[i];
	}
	return NULL;
}

/* Sets the stepped_aside_for value, "none" for a NULL @kind. */
static void rcvfix_aside_set(const char *kind, const char *mod,
			     const char *func)
{
	spin_lock(&rcvfix_aside_for_lock);
	if (!kind)
		strscpy(rcvfix_aside_for, "none", sizeof(rcvfix_aside_for));
	else
		scnprintf(rcvfix_aside_for, sizeof(rcvfix_aside_for),
			  "%s:%s%s%s", kind, mod, func ? ":" : "",
			  func ? func : "");
	spin_unlock(&rcvfix_aside_for_lock);
}

/* No longer aside. Under the arming lock. */
static void rcvfix_aside_clear(void)
{
	WRITE_ONCE(rcvfix_aside, false);
	rcvfix_aside_hook = NULL;
	rcvfix_aside_err = 0;
	rcvfix_aside_owner[0] = '\0';
	rcvfix_aside_set(NULL, NULL, NULL);
}

/*
 * Who holds what rcvfix could not arm: @failed refused with @err. Sets
 * stepped_aside_for ("livepatch:MODULE:FUNCTION", or
 * "livepatch-or-ftrace-ops:FUNCTION" when no livepatch loaded since
 * rcvfix was patches it). Returns true if that changed. Under
 * the arming lock.
 */
static bool rcvfix_aside_blocked(struct rcvfix_hook *failed, int err)
{
	const char *owner = rcvfix_lp_owner(failed->name);

	if (failed == rcvfix_aside_hook && err == rcvfix_aside_err &&
	    !strcmp(owner ? owner : "", rcvfix_aside_owner))
		return false;
	rcvfix_aside_hook = failed;
	rcvfix_aside_err = err;
	strscpy(rcvfix_aside_owner, owner ? owner : "",
		sizeof(rcvfix_aside_owner));
	if (owner)
		rcvfix_aside_set("livepatch", owner, failed->name);
	else
		rcvfix_aside_set(err == -EBUSY ? "livepatch-or-ftrace-ops" :
						 rcvfix_hook_errno_name(err),
				 failed->name, NULL);
	return true;
}

/* The next retry while aside, each one later than the last (to 60 s). */
static void rcvfix_retry_schedule_locked(void)
{
	unsigned long delay = READ_ONCE(rcvfix_retry_delay);

	if (rcvfix_lp_closed)
		return;
	mod_delayed_work(system_wq, &rcvfix_retry_work, delay);
	WRITE_ONCE(rcvfix_retry_delay, min(delay * 2, RCVFIX_RETRY_MAX));
}

/*
 * Aside, with namespaces wanting the fix and no livepatch loading: arm
 * again, the function refused last first. On failure stay aside, naming
 * who holds the function, and try again later. Returns true if armed.
 * Under the arming lock.
 */
static bool rcvfix_aside_retry_locked(void)
{
	struct rcvfix_hook *failed = NULL;
	char owner[MODULE_NAME_LEN];
	const char *func;
	int ret;

	if (!rcvfix_aside || rcvfix_lp_closed || rcvfix_lp_any_coming() ||
	    !rcvfix_lp_arming->wanted())
		return false;
	WRITE_ONCE(rcvfix_retry_last, jiffies);
	ret = rcvfix_lp_arming->arm(rcvfix_aside_hook, &failed);
	if (!ret) {
		func = rcvfix_aside_hook ? rcvfix_aside_hook->name : NULL;
		strscpy(owner, rcvfix_aside_owner, sizeof(owner));
		rcvfix_aside_clear();
		if (func)
			pr_info("%s%s no longer holds %s: the fix is in force again\n",
				owner[0] ? "livepatch " : "an ftrace user",
				owner, func);
		return true;
	}
	if (rcvfix_aside_blocked(failed, ret)) {
		if (rcvfix_aside_owner[0])
			pr_info("%s is held by livepatch %s: the fix stays aside\n",
				failed->name, rcvfix_aside_owner);
		else
			pr_info("%s is still owned (%s): the fix stays aside\n",
				failed->name, rcvfix_hook_errno_name(ret));
	}
	rcvfix_retry_schedule_locked();
	return false;
}

static void rcvfix_retry_work_fn(struct work_struct *work)
{
	mutex_lock(rcvfix_lp_arming->lock);
	rcvfix_aside_retry_locked();
	mutex_unlock(rcvfix_lp_arming->lock);
}

/*
 * A livepatch module is coming: step aside before its init registers its
 * handlers. Already aside for an earlier one: its reason stays until this
 * one is live. Nothing enabled (the hooks may still be armed in the
 * hold-off): only keep an enable from arming until then.
 */
static void rcvfix_lp_coming_locked(struct module *mod)
{
	bool enabled = rcvfix_lp_arming->wanted();

	if (!rcvfix_lp_track(mod, true))
		pr_warn("livepatch %s: too many livepatches loading at once to follow; rcvfix may arm before it is live\n",
			mod->name);
	rcvfix_lp_loaded_track(mod->name, true);
	rcvfix_lp_arming->disarm(enabled);
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
 * the fix, unless another livepatch is still loading. Stays aside, naming
 * the livepatch that holds the function ftrace refused, and tries again
 * later (rcvfix_aside_retry_locked()).
 */
static void rcvfix_lp_settled_locked(struct module *mod, bool live)
{
	struct rcvfix_hook *failed = NULL;
	bool was_loading = rcvfix_lp_track(mod, false);
	int ret;

	if (!live)
		rcvfix_lp_loaded_track(mod->name, false);
	if (!rcvfix_aside || rcvfix_lp_any_coming())
		return;
	if (!rcvfix_lp_arming->wanted()) {
		rcvfix_aside_clear();
		return;
	}
	WRITE_ONCE(rcvfix_retry_delay, HZ);
	WRITE_ONCE(rcvfix_retry_last, jiffies);
	ret = rcvfix_lp_arming->arm(rcvfix_aside_hook, &failed);
	if (!ret) {
		rcvfix_aside_clear();
		pr_info("livepatch %s %s: the fix is in force again\n",
			mod->name, live ? "patches no function rcvfix hooks" :
					  "is gone");
		return;
	}
	rcvfix_aside_blocked(failed, ret);
	if (live && was_loading && !strcmp(rcvfix_aside_owner, mod->name))
		pr_info("livepatch %s patches %s: the fix steps aside while it is loaded (%s); net.rcvfix.enable stays as it is\n",
			mod->name, failed->name, rcvfix_hook_errno_name(ret));
	else if (rcvfix_aside_owner[0])
		pr_info("livepatch %s is %s, but %s is held by livepatch %s: the fix stays aside\n",
			mod->name, live ? "live" : "gone", failed->name,
			rcvfix_aside_owner);
	else
		pr_info("livepatch %s is %s, but %s is still owned (%s): the fix stays aside\n",
			mod->name, live ? "live" : "gone", failed->name,
			rcvfix_hook_errno_name(ret));
	rcvfix_retry_schedule_locked();
}

static int rcvfix_lp_module_event(struct notifier_block *nb,
				  unsigned long state, void *data)
{
	struct module *mod = data;

	if (!rcvfix_module_is_livepatch(mod))
		return NOTIFY_DONE;
	mutex_lock(rcvfix_lp_arming->lock);
	if (!rcvfix_lp_closed) {
		if (state == MODULE_STATE_COMING)
			rcvfix_lp_coming_locked(mod);
		else if (state == MODULE_STATE_LIVE ||
			 state == MODULE_STATE_GOING)
			rcvfix_lp_settled_locked(mod,
						 state == MODULE_STATE_LIVE);
	}
	mutex_unlock(rcvfix_lp_arming->lock);
	return NOTIFY_OK;
}

static struct notifier_block rcvfix_lp_module_nb = {
	.notifier_call = rcvfix_lp_module_event,
};

/**
 * rcvfix_livepatch_wanted_locked - a namespace turns the fix on while aside
 *
 * Tries to arm again now, the next retries 1 s, 2 s, ... after. Under the
 * arming lock, with the namespace counted already.
 */
void rcvfix_livepatch_wanted_locked(void)
{
	lockdep_assert_held(rcvfix_lp_arming->lock);
	WRITE_ONCE(rcvfix_retry_delay, HZ);
	rcvfix_aside_retry_locked();
}

/**
 * rcvfix_livepatch_init - start following livepatch modules
 * @arming: the arming unit's lock and transitions, kept until unload
 *
 * Before any namespace can arm the hooks (default_enable=1).
 */
int rcvfix_livepatch_init(const struct rcvfix_livepatch_arming *arming)
{
	rcvfix_lp_arming = arming;
	return register_module_notifier(&rcvfix_lp_module_nb);
}

/**
 * rcvfix_livepatch_close - module unload: stop following livepatches
 *
 * First step of unloading, before the arming unit disarms for good: no
 * module event, retry or kick arms after this returns.
 */
void rcvfix_livepatch_close(void)
{
	unregister_module_notifier(&rcvfix_lp_module_nb);
	mutex_lock(rcvfix_lp_arming->lock);
	WRITE_ONCE(rcvfix_lp_closed, true);
	mutex_unlock(rcvfix_lp_arming->lock);
	cancel_delayed_work_sync(&rcvfix_retry_work);
}

/**
 * rcvfix_livepatch_exit - last step of unloading
 *
 * A sysctl write or a read of /proc/net/rcvfix during
 * rcvfix_livepatch_close() may have scheduled a retry after it was
 * cancelled; none can come once no namespace state is left. The work
 * finds rcvfix_lp_closed set and does nothing if it runs.
 */
void rcvfix_livepatch_exit(void)
{
	cancel_delayed_work_sync(&rcvfix_retry_work);
}

/*
 * The stepping-aside lines of /proc/net/rcvfix. A read by the host also
 * has rcvfix try to arm again soon while aside (at most once a second):
 * the owner may be gone without a word (see the top).
 */
void rcvfix_livepatch_show(struct seq_file *m)
{
	char aside_for[sizeof(rcvfix_aside_for)];

	rcvfix_livepatch_kick();
	seq_printf(m, RCVFIX_KEY_STEPPED_ASIDE " %s\n",
		   READ_ONCE(rcvfix_aside) ? "yes" : "no");
	spin_lock(&rcvfix_aside_for_lock);
	strscpy(aside_for, rcvfix_aside_for, sizeof(aside_for));
	spin_unlock(&rcvfix_aside_for_lock);
	seq_printf(m, RCVFIX_KEY_STEPPED_ASIDE_FOR " %s\n", aside_for);
	seq_printf(m, RCVFIX_KEY_STEPS_ASIDE " %lu\n", READ_ONCE(rcvfix_asides));
}
