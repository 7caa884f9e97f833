// SPDX-License-Identifier: GPL-2.0
/*
 * Which kernel functions rcvfix hooks (strategy "callers", see rcvbuf.c):
 * the table of candidate hooks in arming order, resolving them at load,
 * and the "strategy" and "targets" lines of /proc/net/rcvfix.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include "bpf_legacy.h"
#include "hook.h"
#include "mptcp.h"
#include "mptcp_datafin.h"
#include "mptcp_lowat.h"
#include "mptcp_recv.h"
#include "mptcp_setlowat.h"
#include "mptcp_sock.h"
#include "mptcp_window.h"
#include "rcvbuf.h"
#include "status_keys.h"
#include "targets.h"

/*
 * The hooks that together see every path setting a receive buffer. They
 * are resolved at load (a missing one refuses the load, an optional one
 * is left to the kernel and not listed; a redirected one with a traceable
 * copy of its function, such as NAME.constprop.0, refuses the load, but
 * for MPTCP's parts, which are then off and say why) and armed and
 * disarmed all or nothing by arm.c, only while some namespace has the fix
 * enabled.
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
	 * MPTCP's SO_RCVLOWAT rule as TCP's (mptcp_lowat.c): the first four
	 * where the fix is on, on the receive path, so armed only once an
	 * MPTCP socket has set a mark (arm.c: on demand); the fifth, where
	 * the kernel has its own rule (6.7+), to which rcvfix adds TCP's net.
	 */
	{ .name = RCVFIX_MPTCP_SUBFLOW_DATA_READY,
	  .entry = rcvfix_mptcp_lowat_entry_data_ready, .optional = true,
	  .on_demand = true },
	{ .name = RCVFIX_MPTCP_STATE_CHANGE,
	  .entry = rcvfix_mptcp_lowat_entry_state_change, .optional = true,
	  .on_demand = true },
	{ .name = RCVFIX_MPTCP_POLL,
	  .entry = rcvfix_mptcp_lowat_entry_poll, .optional = true,
	  .on_demand = true },
	{ .name = RCVFIX_MPTCP_RELEASE_CB,
	  .entry = rcvfix_mptcp_window_entry_release_cb, .optional = true,
	  .on_demand = true },
	{ .name = RCVFIX_MPTCP_SET_RCVLOWAT,
	  .entry = rcvfix_mptcp_lowat_entry_set_rcvlowat, .optional = true },
};

#define RCVFIX_HOOK_MPTCP_SYNC 0
#define RCVFIX_HOOK_SET_RCVLOWAT (ARRAY_SIZE(rcvfix_candidate_hooks) - 1)
#define RCVFIX_HOOK_RELEASE_CB (RCVFIX_HOOK_SET_RCVLOWAT - 1)
#define RCVFIX_HOOK_POLL (RCVFIX_HOOK_RELEASE_CB - 1)
#define RCVFIX_HOOK_STATE_CHANGE (RCVFIX_HOOK_POLL - 1)
#define RCVFIX_HOOK_DATA_READY (RCVFIX_HOOK_STATE_CHANGE - 1)
#define RCVFIX_HOOK_DATA_FIN (RCVFIX_HOOK_DATA_READY - 1)
#define RCVFIX_HOOK_LISTEN (RCVFIX_HOOK_DATA_FIN - 1)
#define RCVFIX_HOOK_CONNECT (RCVFIX_HOOK_LISTEN - 1)

/* The resolved ones, set once at load before any namespace can arm them. */
static struct rcvfix_hook *rcvfix_hooks[ARRAY_SIZE(rcvfix_candidate_hooks)];
static unsigned int rcvfix_nr_hooks;

/* The hooked functions, ", "-separated for the load log line. */
static char rcvfix_targets[384];

/*
 * The parts of the fix that depend on the kernel, each "in-force",
 * "not-needed", "none" (no MPTCP) or "off:WHY": set at load, shown by
 * /proc/net/rcvfix. A part that is off never leaves another acting in a
 * way that needs it: see rcvfix_targets_rcvbuf_mptcp().
 */
static const char *rcvfix_part_rcvbuf_mptcp = "none";
static const char *rcvfix_part_data_fin = "none";
static const char *rcvfix_part_rcvlowat_mptcp = "none";

/* Why a hook could not be had, one word for the status. */
static const char *rcvfix_targets_why(int err)
{
	switch (err) {
	case -ENOENT:
		return "off:no-such-function";
	case -EINVAL:
		return "off:not-traceable";
	case -ENOTUNIQ:
		return "off:function-has-a-copy";
	case -EPERM:
		return "off:refused-by-refuse_hooks";
	case -ENOEXEC:
		return "off:sealed-entry";
	default:
		return "off:unreadable";
	}
}

/*
 * The functions of MPTCP's SO_RCVLOWAT fix (mptcp_lowat.c), resolved
 * first: all or none. Their wrappers call them: they need their entry,
 * and that entry must take an indirect call (ENDBR64 on IBT kernels).
 */
static bool rcvfix_targets_lowat(void)
{
	struct rcvfix_hook *lowat[] = {
		&rcvfix_candidate_hooks[RCVFIX_HOOK_DATA_READY],
		&rcvfix_candidate_hooks[RCVFIX_HOOK_STATE_CHANGE],
		&rcvfix_candidate_hooks[RCVFIX_HOOK_POLL],
		&rcvfix_candidate_hooks[RCVFIX_HOOK_RELEASE_CB],
		&rcvfix_candidate_hooks[RCVFIX_HOOK_SET_RCVLOWAT],
	};
	unsigned int i, n = ARRAY_SIZE(lowat);
	int ret;

	if (!rcvfix_mptcp_lowat_wanted()) {
		if (rcvfix_mptcp_lowat_mptcp_exists())
			rcvfix_part_rcvlowat_mptcp = "off:mptcp-unreadable";
		return false;
	}
	if (!rcvfix_mptcp_lowat_wants_set_rcvlowat())
		n--;
	for (i = 0; i < n; i++) {
		ret = rcvfix_hook_resolve(lowat[i]);
		if (!ret)
			ret = rcvfix_hook_find_entry(lowat[i]);
		if (ret) {
			rcvfix_mptcp_lowat_unavailable(lowat[i]->name, ret);
			rcvfix_part_rcvlowat_mptcp = rcvfix_targets_why(ret);
			return false;
		}
	}
	rcvfix_mptcp_lowat_hooked(lowat[0], lowat[1], lowat[2], lowat[3],
				  n > 4 ? lowat[4] : NULL);
	rcvfix_part_rcvlowat_mptcp = "in-force";
	return true;
}

/*
 * The DATA_FIN hook (mptcp_datafin.c), resolved apart: it needs only the
 * calls from one caller, so a copy of the function elsewhere does not
 * matter, and it calls nothing. Returns 0, or why it cannot be had.
 */
static int rcvfix_targets_datafin(struct rcvfix_hook *hook)
{
	int ret;

	if (!rcvfix_mptcp_datafin_init())
		return -ENOENT;
	ret = rcvfix_hook_resolve(hook);
	return ret == -ENOTUNIQ ? 0 : ret;
}

#define RCVFIX_NO_DATA_FIN \
	"no DATA_FIN placement, and an unlocked buffer can lose a byte without it"

/*
 * The SO_RCVBUF rule on MPTCP sockets: the sync of their subflows, and
 * where the kernel records a fallen-back socket's DATA_FIN while data may
 * still be queued on its subflow (6.12's shape), the DATA_FIN placement,
 * without which an unlocked buffer loses a byte (issue 50): no placement,
 * no rule, and MPTCP sockets keep the kernel's lock. Resolves both hooks;
 * true where the rule is in force.
 */
static bool rcvfix_targets_rcvbuf_mptcp(void)
{
	struct rcvfix_hook *sync = &rcvfix_candidate_hooks[RCVFIX_HOOK_MPTCP_SYNC];
	struct rcvfix_hook *fin = &rcvfix_candidate_hooks[RCVFIX_HOOK_DATA_FIN];
	int ret;

	if (!rcvfix_mptcp_lowat_mptcp_exists())
		return false;
	/* the DATA_FIN placement serves this rule alone */
	rcvfix_part_data_fin = "not-needed";
	if (!rcvfix_mptcp_rcvbuf_init()) {
		rcvfix_part_rcvbuf_mptcp = "off:mptcp-unreadable";
		return false;
	}
	ret = rcvfix_hook_resolve(sync);
	if (ret) {
		rcvfix_mptcp_rcvbuf_unavailable(ret == -ENOENT ?
			"no " RCVFIX_MPTCP_TARGET " in this kernel" :
			ret == -EPERM ? RCVFIX_MPTCP_TARGET " refused" :
			ret == -ENOTUNIQ ? RCVFIX_MPTCP_TARGET " has a traceable copy" :
			"ftrace cannot attach to " RCVFIX_MPTCP_TARGET);
		rcvfix_part_rcvbuf_mptcp = rcvfix_targets_why(ret);
		return false;
	}
	ret = rcvfix_targets_datafin(fin);
	if (!ret) {
		rcvfix_part_data_fin = "in-force";
	} else if (!rcvfix_mptcp_datafin_needed(fin)) {
		pr_info("%s: not hooked (%d), and not needed: this kernel records a fallen-back MPTCP socket's DATA_FIN only once its subflow's queue is empty\n",
			fin->name, ret);
		rcvfix_part_data_fin = "not-needed";
	} else {
		pr_info("%s: cannot hook it (%d): rcvfix cannot place a fallen-back MPTCP socket's DATA_FIN after the data still queued on its subflow, where this kernel places it before\n",
			fin->name, ret);
		rcvfix_part_data_fin = rcvfix_targets_why(ret);
		rcvfix_mptcp_rcvbuf_unavailable(RCVFIX_NO_DATA_FIN);
		rcvfix_part_rcvbuf_mptcp = "off:needs-mptcp_data_fin";
		return false;
	}
	rcvfix_part_rcvbuf_mptcp = "in-force";
	return true;
}

/* Is candidate @i part of MPTCP's SO_RCVBUF rule (sync, subflows, DATA_FIN)? */
static bool rcvfix_targets_is_rcvbuf_mptcp(unsigned int i)
{
	return i == RCVFIX_HOOK_MPTCP_SYNC || i == RCVFIX_HOOK_CONNECT ||
	       i == RCVFIX_HOOK_LISTEN || i == RCVFIX_HOOK_DATA_FIN;
}

/* Is candidate @i part of MPTCP's SO_RCVLOWAT fix? */
static bool rcvfix_targets_is_lowat(unsigned int i)
{
	return i == RCVFIX_HOOK_DATA_READY || i == RCVFIX_HOOK_STATE_CHANGE ||
	       i == RCVFIX_HOOK_POLL || i == RCVFIX_HOOK_RELEASE_CB ||
	       i == RCVFIX_HOOK_SET_RCVLOWAT;
}

/* Resolves the hooks; arms nothing. */
int rcvfix_targets_init(void)
{
	bool mptcp = rcvfix_targets_rcvbuf_mptcp();
	bool lowat = rcvfix_targets_lowat();
	bool set_rcvlowat = lowat && rcvfix_mptcp_lowat_wants_set_rcvlowat();
	bool fin = !strcmp(rcvfix_part_data_fin, "in-force");
	struct rcvfix_hook *hook;
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < ARRAY_SIZE(rcvfix_candidate_hooks); i++) {
		hook = &rcvfix_candidate_hooks[i];
		if (rcvfix_targets_is_rcvbuf_mptcp(i) && !mptcp)
			continue;
		if (rcvfix_targets_is_lowat(i) && !lowat)
			continue;
		if ((i == RCVFIX_HOOK_DATA_FIN && !fin) ||
		    (i == RCVFIX_HOOK_SET_RCVLOWAT && !set_rcvlowat))
			continue;
		if (i == RCVFIX_HOOK_MPTCP_SYNC || i == RCVFIX_HOOK_DATA_FIN ||
		    rcvfix_targets_is_lowat(i))
			ret = 0;	/* resolved above */
		else
			ret = rcvfix_hook_resolve(hook);
		if (ret == -ENOTUNIQ) {
			pr_err("cannot hook %s: the kernel has another copy of it (a traceable %s.*, as a compiler makes for some callers) whose callers would pass no hook\n",
			       hook->name, hook->name);
			return ret;
		}
		if ((ret == -ENOENT || ret == -EINVAL || ret == -EPERM) &&
		    hook->optional) {
			pr_info("%s: %s; left to the kernel\n", hook->name,
				ret == -ENOENT ? "no such function in this kernel" :
				ret == -EPERM ? "refused" :
						 "ftrace cannot attach to it");
			continue;
		}
		if (ret) {
			pr_err("cannot hook %s: %s (%d)\n", hook->name,
			       ret == -EINVAL ? "ftrace cannot attach to it" :
			       ret == -EPERM ? "refused" :
						"no such function in this kernel",
			       ret);
			return ret;
		}
		rcvfix_hooks[rcvfix_nr_hooks++] = hook;
		n += scnprintf(rcvfix_targets + n, sizeof(rcvfix_targets) - n,
			       "%s%s", n ? ", " : "", hook->name);
	}
	pr_info("parts: MPTCP SO_RCVBUF rule %s, MPTCP DATA_FIN placement %s, MPTCP SO_RCVLOWAT wakeups %s\n",
		rcvfix_part_rcvbuf_mptcp, rcvfix_part_data_fin,
		rcvfix_part_rcvlowat_mptcp);
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

/* The parts' lines of /proc/net/rcvfix, then the functions called through a pointer. */
void rcvfix_targets_show_parts(struct seq_file *m)
{
	seq_printf(m, RCVFIX_KEY_PART_RCVBUF_MPTCP " %s\n",
		   rcvfix_part_rcvbuf_mptcp);
	seq_printf(m, RCVFIX_KEY_PART_DATA_FIN " %s\n", rcvfix_part_data_fin);
	seq_printf(m, RCVFIX_KEY_PART_RCVLOWAT_MPTCP " %s\n",
		   rcvfix_part_rcvlowat_mptcp);
	rcvfix_hook_show_callees(m);
}
