// SPDX-License-Identifier: GPL-2.0
/*
 * Which kernel functions rcvfix hooks (strategy "callers", see rcvbuf.c):
 * the table of candidate hooks in arming order, resolving them at load,
 * and the "strategy" and "targets" lines of /proc/net/rcvfix.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/seq_file.h>

#include "bpf_legacy.h"
#include "hook.h"
#include "mptcp.h"
#include "mptcp_datafin.h"
#include "mptcp_lowat.h"
#include "rcvbuf.h"
#include "status_keys.h"
#include "targets.h"

/*
 * The hooks that together see every path setting a receive buffer. They
 * are resolved at load (a missing one refuses the load, an optional one
 * is left to the kernel and not listed; a redirected one with a traceable
 * copy of its function, such as NAME.constprop.0, refuses the load) and armed and disarmed all or
 * nothing by arm.c, only while some namespace has the fix enabled.
 */
static struct rcvfix_hook rcvfix_candidate_hooks[] = {
	/*
	 * First, so that it is armed before and disarmed after the hooks
	 * that avoid an MPTCP socket's lock: with those armed alone, stock
	 * sync would lock the subflows of an unlocked MPTCP socket for the
	 * connection's life.
	 */
	{ .name = RCVFIX_MPTCP_TARGET, .entry = rcvfix_mptcp_entry_sync_intval,
	  .optional = true },
	{ .name = RCVFIX_SETSOCKOPT_NAME, .entry = rcvfix_entry_sk_setsockopt },
	{ .name = "sock_set_rcvbuf", .entry = rcvfix_entry_sock_set_rcvbuf },
	RCVFIX_BPF_LEGACY_HOOK_SOCK_OPS
	RCVFIX_BPF_LEGACY_HOOK_SOCK_ADDR
	/* The rest: MPTCP's subflows (mptcp.c), and SO_RCVLOWAT. */
	{ .name = RCVFIX_MPTCP_CONNECT,
	  .entry = rcvfix_mptcp_entry_finish_connect,
	  .optional = true, .observe = true },
	{ .name = RCVFIX_MPTCP_LISTEN, .entry = rcvfix_mptcp_entry_listen,
	  .optional = true, .observe = true },
	/* A fallen-back msk's DATA_FIN after its queued data (6.12). */
	{ .name = RCVFIX_MPTCP_DATA_FIN, .entry = rcvfix_mptcp_datafin_entry,
	  .optional = true },
	/*
	 * MPTCP's SO_RCVLOWAT rule as TCP's (mptcp_lowat.c): the first two
	 * where the fix is on, on the receive path, so armed only once an
	 * MPTCP socket has set a mark (arm.c: on demand); the third, where
	 * the kernel has its own rule (6.7+), to which rcvfix adds TCP's net.
	 */
	{ .name = RCVFIX_MPTCP_DATA_READY,
	  .entry = rcvfix_mptcp_lowat_entry_data_ready, .optional = true,
	  .on_demand = true },
	{ .name = RCVFIX_MPTCP_POLL,
	  .entry = rcvfix_mptcp_lowat_entry_poll, .optional = true,
	  .on_demand = true },
	{ .name = RCVFIX_MPTCP_SET_RCVLOWAT,
	  .entry = rcvfix_mptcp_lowat_entry_set_rcvlowat, .optional = true },
};

#define RCVFIX_HOOK_MPTCP_SYNC 0
#define RCVFIX_HOOK_SET_RCVLOWAT (ARRAY_SIZE(rcvfix_candidate_hooks) - 1)
#define RCVFIX_HOOK_POLL (RCVFIX_HOOK_SET_RCVLOWAT - 1)
#define RCVFIX_HOOK_DATA_READY (RCVFIX_HOOK_POLL - 1)
#define RCVFIX_HOOK_DATA_FIN (RCVFIX_HOOK_DATA_READY - 1)
#define RCVFIX_HOOK_LISTEN (RCVFIX_HOOK_DATA_FIN - 1)
#define RCVFIX_HOOK_CONNECT (RCVFIX_HOOK_LISTEN - 1)

/* The resolved ones, set once at load before any namespace can arm them. */
static struct rcvfix_hook *rcvfix_hooks[ARRAY_SIZE(rcvfix_candidate_hooks)];
static unsigned int rcvfix_nr_hooks;

/* The hooked functions, ", "-separated for the load log line. */
static char rcvfix_targets[256];

/*
 * The functions of MPTCP's SO_RCVLOWAT fix (mptcp_lowat.c), resolved
 * first: all or none. Their wrappers call them: they need their entry.
 */
static bool rcvfix_targets_lowat(void)
{
	struct rcvfix_hook *lowat[] = {
		&rcvfix_candidate_hooks[RCVFIX_HOOK_DATA_READY],
		&rcvfix_candidate_hooks[RCVFIX_HOOK_POLL],
		&rcvfix_candidate_hooks[RCVFIX_HOOK_SET_RCVLOWAT],
	};
	unsigned int i, n = ARRAY_SIZE(lowat);
	int ret;

	if (!rcvfix_mptcp_lowat_wanted())
		return false;
	if (!rcvfix_mptcp_lowat_wants_set_rcvlowat())
		n--;
	for (i = 0; i < n; i++) {
		ret = rcvfix_hook_resolve(lowat[i]);
		if (!ret)
			ret = rcvfix_hook_find_entry(lowat[i]);
		if (ret) {
			rcvfix_mptcp_lowat_unavailable(lowat[i]->name, ret);
			return false;
		}
	}
	rcvfix_mptcp_lowat_hooked(lowat[0], lowat[1], n > 2 ? lowat[2] : NULL);
	return true;
}

/*
 * The DATA_FIN hook (mptcp_datafin.c), resolved apart: it calls the
 * function it redirects, and it needs only the calls from one caller, so
 * a copy of the function elsewhere does not matter. Where any of it is
 * missing the kernel's code runs, with one log line.
 */
static bool rcvfix_targets_datafin(struct rcvfix_hook *hook)
{
	int ret;

	if (!rcvfix_mptcp_datafin_init())
		return false;
	ret = rcvfix_hook_resolve(hook);
	if (ret == -ENOTUNIQ)
		ret = 0;
	if (!ret)
		ret = rcvfix_hook_find_entry(hook);
	if (ret) {
		pr_info("%s: cannot hook it (%d); left to the kernel\n",
			hook->name, ret);
		return false;
	}
	rcvfix_mptcp_datafin_hooked(hook);
	return true;
}

/* Resolves the hooks; arms nothing. */
int rcvfix_targets_init(void)
{
	bool mptcp = rcvfix_mptcp_lowat_mptcp_exists() &&
		     rcvfix_mptcp_rcvbuf_init();
	bool lowat = rcvfix_targets_lowat();
	bool set_rcvlowat = lowat && rcvfix_mptcp_lowat_wants_set_rcvlowat();
	struct rcvfix_hook *hook;
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < ARRAY_SIZE(rcvfix_candidate_hooks); i++) {
		hook = &rcvfix_candidate_hooks[i];
		if (!mptcp && (i == RCVFIX_HOOK_MPTCP_SYNC ||
			       i == RCVFIX_HOOK_CONNECT ||
			       i == RCVFIX_HOOK_LISTEN ||
			       i == RCVFIX_HOOK_DATA_FIN))
			continue;
		if (i == RCVFIX_HOOK_DATA_FIN && !rcvfix_targets_datafin(hook))
			continue;
		if (i == RCVFIX_HOOK_DATA_FIN) {
			ret = 0;	/* resolved by rcvfix_targets_datafin() */
		} else if (i == RCVFIX_HOOK_DATA_READY || i == RCVFIX_HOOK_POLL ||
			   i == RCVFIX_HOOK_SET_RCVLOWAT) {
			if (!lowat ||
			    (i == RCVFIX_HOOK_SET_RCVLOWAT && !set_rcvlowat))
				continue;
			ret = 0;	/* resolved by rcvfix_targets_lowat() */
		} else {
			ret = rcvfix_hook_resolve(hook);
		}
		if (ret == -ENOTUNIQ) {
			pr_err("cannot hook %s: the kernel has another copy of it (a traceable %s.*, as a compiler makes for some callers) whose callers would pass no hook\n",
			       hook->name, hook->name);
			return ret;
		}
		if (ret && i == RCVFIX_HOOK_MPTCP_SYNC) {
			rcvfix_mptcp_rcvbuf_unavailable(ret == -ENOENT ?
				"no " RCVFIX_MPTCP_TARGET " in this kernel" :
				"ftrace cannot attach to " RCVFIX_MPTCP_TARGET);
			mptcp = false;
			continue;
		}
		if ((ret == -ENOENT || ret == -EINVAL) && hook->optional) {
			pr_info("%s: %s; left to the kernel\n", hook->name,
				ret == -ENOENT ? "no such function in this kernel" :
						 "ftrace cannot attach to it");
			continue;
		}
		if (ret) {
			pr_err("cannot hook %s: %s (%d)\n", hook->name,
			       ret == -EINVAL ? "ftrace cannot attach to it" :
						"no such function in this kernel",
			       ret);
			return ret;
		}
		rcvfix_hooks[rcvfix_nr_hooks++] = hook;
		n += scnprintf(rcvfix_targets + n, sizeof(rcvfix_targets) - n,
			       "%s%s", n ? ", " : "", hook->name);
	}
	return 0;
}

/* The hooks arm.c arms and disarms, after rcvfix_targets_init(). */
struct rcvfix_hook *const *rcvfix_targets_hooks(unsigned int *n)
{
	*n = rcvfix_nr_hooks;
	return rcvfix_hooks;
}

const char *rcvfix_targets_names(void)
{
	return rcvfix_targets;
}

/*
 * "strategy NAME" and "targets F1,F2" lines of /proc/net/rcvfix. What they
 * read is written once at load, before the proc files exist, and never
 * cleared.
 */
void rcvfix_targets_show(struct seq_file *m)
{
	unsigned int i;

	seq_puts(m, RCVFIX_KEY_STRATEGY " callers\n");	/* the only one: see the top */
	seq_puts(m, RCVFIX_KEY_TARGETS " ");
	for (i = 0; i < rcvfix_nr_hooks; i++)
		seq_printf(m, "%s%s", i ? "," : "", rcvfix_hooks[i]->name);
	seq_putc(m, '\n');
}
