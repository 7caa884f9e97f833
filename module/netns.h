/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-network-namespace state: the net.rcvfix.enable switch, the counters
 * of what the fix did, and their views (the sysctl and /proc/net/rcvfix).
 */
#ifndef _RCVFIX_NETNS_H
#define _RCVFIX_NETNS_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "arm.h"
#include "rule.h"

/* Where a receive-buffer change came from. */
enum rcvfix_path {
	RCVFIX_PATH_SETSOCKOPT,	/* setsockopt() from user space */
	RCVFIX_PATH_BPF,	/* bpf_setsockopt() from a BPF program */
	RCVFIX_PATH_KERNEL,	/* sock_set_rcvbuf() from kernel code */
	RCVFIX_PATH_NR,
};

struct rcvfix_net {
	int enable;			/* net.rcvfix.enable */
	struct mutex switch_lock;	/* serialises writers of enable */
	struct ctl_table *table;	/* this namespace's copy */
	struct ctl_table_header *sysctl;
	atomic_long_t count[RCVFIX_PATH_NR][RCVFIX_OUTCOME_NR];
	atomic_long_t lowat_added;	/* MPTCP readers woken by rcvfix */
	atomic_long_t lowat_held;	/* MPTCP wakeups held below the mark */
	atomic_long_t lowat_window;	/* window updates sent after reads */
};

extern unsigned int rcvfix_net_id;
extern bool rcvfix_netns_ready;

/**
 * rcvfix_net - this module's state in @net, for the hooks
 * @net: a namespace kept alive by the caller (it owns a socket in it)
 *
 * NULL until every namespace has its state (rcvfix_netns_init() has
 * returned): while register_pernet_subsys() walks the namespaces, the
 * hooks may already be armed by one that default_enable turned on, and
 * the slot of a namespace it has not reached yet may point at the state
 * that the previous unload freed (the kernel frees it without clearing
 * the slot, and the next load usually gets the same id), often reused by
 * then for another namespace's new state. Later, NULL only while @net is
 * still being set up by earlier pernet subsystems.
 *
 * net_generic() without its rcu_read_lock(): under PREEMPT_RCU that is
 * two out-of-line calls, and this runs in the entry callback of every
 * setsockopt(SO_RCVBUF). A preempt-disabled region is an RCU read-side
 * critical section as well (since the RCU flavours were consolidated in
 * 4.20, on PREEMPT_RT too), and it only has to cover the load from
 * net->gen, which can be replaced and freed after a grace period; the
 * state it points to lives as long as @net.
 */
static __always_inline struct rcvfix_net *rcvfix_net(const struct net *net)
{
	struct rcvfix_net *rn;

	/* pairs with the release in rcvfix_netns_init() */
	if (!smp_load_acquire(&rcvfix_netns_ready))
		return NULL;
	preempt_disable_notrace();
	rn = rcu_dereference_sched(net->gen)->ptr[rcvfix_net_id];
	preempt_enable_notrace();
	return rn;
}

/*
 * Is the fix in force in the namespace whose state is @rn (may be NULL):
 * enabled there, and every hook armed? While hooks are being armed or
 * disarmed one by one (a namespace enabled meanwhile: stepping aside for
 * a livepatch and back) it is false everywhere, so no path applies the
 * rule while another still runs stock code (arm.c). A replacement that
 * waited for the socket lock while disarming began acts as stock.
 */
static __always_inline bool rcvfix_rn_enabled(const struct rcvfix_net *rn)
{
	return rn && READ_ONCE(rn->enable) && rcvfix_arm_in_force();
}

/*
 * Is the fix in force in @net (rcvfix_rn_enabled())? Safe from ftrace
 * entry callbacks.
 */
static __always_inline bool rcvfix_net_enabled(const struct net *net)
{
	return rcvfix_rn_enabled(rcvfix_net(net));
}

/* Count what a replacement did (RCVFIX_STOCK is the kernel's, not ours). */
static inline void rcvfix_net_count(struct rcvfix_net *rn,
				    enum rcvfix_path path,
				    enum rcvfix_outcome outcome)
{
	if (rn && outcome != RCVFIX_STOCK)
		atomic_long_inc(&rn->count[path][outcome]);
}

/*
 * Count an SO_RCVLOWAT wakeup of an MPTCP reader in @net that rcvfix
 * added (@held false) or held back (@held true) where the fix is on.
 */
static inline void rcvfix_net_count_lowat(const struct net *net, bool held)
{
	struct rcvfix_net *rn = rcvfix_net(net);

	if (rn)
		atomic_long_inc(held ? &rn->lowat_held : &rn->lowat_added);
}

/* A window update rcvfix sent after an MPTCP reader's read in @net. */
static inline void rcvfix_net_count_window(const struct net *net)
{
	struct rcvfix_net *rn = rcvfix_net(net);

	if (rn)
		atomic_long_inc(&rn->lowat_window);
}

int rcvfix_netns_init(void);
void rcvfix_netns_exit(void);
void rcvfix_netns_show(struct seq_file *m, const struct net *net);

#endif /* _RCVFIX_NETNS_H */
