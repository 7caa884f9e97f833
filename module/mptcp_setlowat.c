// SPDX-License-Identifier: GPL-2.0
/*
 * Setting an MPTCP socket's SO_RCVLOWAT mark (the rule: mptcp_lowat.c's
 * top comment): as TCP's tcp_set_rcvlowat() before 6.7 (from the
 * SOL_SOCKET setsockopt entry), TCP's net after the kernel's
 * mptcp_set_rcvlowat() on 6.7+, waking a reader that is ready, and the
 * arming of the receive-path hooks on demand at the first mark (at once,
 * or as task work or a work item where the mark comes from BPF).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/net.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sockptr.h>
#include <linux/task_work.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "arm.h"
#include "hook.h"
#include "mptcp_ready.h"
#include "mptcp_setlowat.h"
#include "netns.h"

/*
 * Task flags of user workers: io_uring's since 5.12 (PF_IO_WORKER), any
 * kernel thread cloned from a user thread (vhost) since 6.4
 * (PF_USER_WORKER); before, such threads are kernel threads (PF_KTHREAD).
 */
#ifndef PF_IO_WORKER
#define PF_IO_WORKER 0
#endif
#ifndef PF_USER_WORKER
#define PF_USER_WORKER 0
#endif

/* The kernel's mptcp_set_rcvlowat() (6.7+), called by its wrapper here. */
static int (*rcvfix_mptcp_set_rcvlowat_fn)(struct sock *sk, int val);

/* mptcp_set_rcvlowat's hook is resolved; before any arming. */
void rcvfix_mptcp_setlowat_hooked(const struct rcvfix_hook *set_rcvlowat)
{
	rcvfix_mptcp_set_rcvlowat_fn = (void *)set_rcvlowat->func;
}

/*
 * After a mark is set on @msk, which the caller owns: wake its reader if
 * it is ready, as TCP's tcp_set_rcvlowat() calls tcp_data_ready() (6.7+:
 * the kernel woke one whose mark is reached; TCP's net is added).
 */
static void rcvfix_mptcp_wake_if_ready(struct sock *msk)
{
	bool ready;

	if (rcvfix_mptcp_lowat_native) {
		ready = rcvfix_mptcp_ready_by_net(msk, NULL, true);
	} else {
		/*
		 * tcp_data_ready() also wakes a reader at the peer's FIN
		 * (SOCK_DONE, which MPTCP does not set on an msk)
		 */
		spin_lock_bh(&msk->sk_lock.slock);
		ready = rcvfix_mptcp_ready_locked(msk, NULL, false) ||
			(READ_ONCE(msk->sk_shutdown) & RCV_SHUTDOWN);
		spin_unlock_bh(&msk->sk_lock.slock);
	}
	if (ready) {
		msk->sk_data_ready(msk);
		rcvfix_net_count_lowat(sock_net(msk), false);
	}
}

/*
 * A mark set by a BPF program (bpf_setsockopt() from a cgroup setsockopt
 * or cgroup LSM program, which runs under rcu_read_lock()) cannot arm the
 * receive-path hooks where it is set: arming sleeps. The msk is kept (a
 * reference) and the arming runs as task work, before the setsockopt()
 * that ran the program returns to user space (from a work item where the
 * task is a kernel thread or exiting); then the msk is decided as a
 * setsockopt() by its owner would have. Until then the kernel's own rule
 * holds its reader: woken on every segment before 6.7, at the mark after;
 * the decision wakes one that TCP's net would have woken meanwhile. The
 * deferred part counts as a running replacement: an unload waits for it.
 */
/*
 * Does the current task run its task work soon, before it is back in
 * user space? A user task in a system call, and io_uring's workers (they
 * run it between items); not a kernel thread, nor another user worker
 * (vhost: only at a signal or at exit), nor an interrupt.
 */
static bool rcvfix_task_runs_task_work(void)
{
	unsigned int flags = current->flags;

	if (!in_task() || (flags & PF_KTHREAD))
		return false;
	return !(flags & PF_USER_WORKER) || (flags & PF_IO_WORKER);
}

struct rcvfix_mptcp_demand {
	struct callback_head twork;
	struct work_struct work;
	struct sock *msk;
};

static void rcvfix_mptcp_demand_run(struct rcvfix_mptcp_demand *d)
{
	struct sock *msk = d->msk;

	rcvfix_arm_demand();
	lock_sock(msk);
	if (rcvfix_net_enabled(sock_net(msk)) &&
	    READ_ONCE(msk->sk_rcvlowat) > 1)
		rcvfix_mptcp_wake_if_ready(msk);
	release_sock(msk);
	sock_put(msk);
	kfree(d);
	rcvfix_hook_done();
}

static void rcvfix_mptcp_demand_twork(struct callback_head *head)
{
	rcvfix_mptcp_demand_run(container_of(head, struct rcvfix_mptcp_demand,
					     twork));
}

static void rcvfix_mptcp_demand_work(struct work_struct *work)
{
	rcvfix_mptcp_demand_run(container_of(work, struct rcvfix_mptcp_demand,
					     work));
}

/*
 * An SO_RCVLOWAT mark above 1 is about to be set on @msk in a namespace
 * with the fix on: the receive-path hooks must be armed first (arm.c),
 * here where the caller may sleep, else as above. From a replacement.
 */
static void rcvfix_mptcp_demand(struct sock *msk)
{
	struct rcvfix_mptcp_demand *d;

	if (!has_current_bpf_ctx()) {
		rcvfix_arm_demand();
		return;
	}
	/* before 6.7 the decision is left to the work (see its setter) */
	if (rcvfix_mptcp_lowat_native && rcvfix_arm_demand_armed())
		return;
	d = kmalloc(sizeof(*d), GFP_ATOMIC);
	if (!d) {
		pr_warn_ratelimited("no memory to arm MPTCP's receive-path hooks for a mark set by BPF: the kernel's wakeups stay\n");
		return;
	}
	sock_hold(msk);
	d->msk = msk;
	rcvfix_hook_hold();
	init_task_work(&d->twork, rcvfix_mptcp_demand_twork);
	if (!rcvfix_task_runs_task_work() ||
	    task_work_add(current, &d->twork, TWA_RESUME)) {
		INIT_WORK(&d->work, rcvfix_mptcp_demand_work);
		schedule_work(&d->work);
	}
}

/*
 * A mark rcvfix leaves to the kernel's plain write, where it cannot act
 * (see rcvfix_mptcp_lowat_setsockopt_entry()), still needs the hooks:
 * armed from this work, which holds no socket.
 */
static void rcvfix_mptcp_demand_kick_fn(struct work_struct *work)
{
	rcvfix_arm_demand();
	rcvfix_hook_done();
}

static DECLARE_WORK(rcvfix_mptcp_demand_kick, rcvfix_mptcp_demand_kick_fn);

/* From an entry callback (the hook is armed): counted until it has run. */
static void rcvfix_mptcp_demand_later(void)
{
	if (rcvfix_arm_demand_armed())
		return;
	rcvfix_hook_hold();
	if (!schedule_work(&rcvfix_mptcp_demand_kick))
		rcvfix_hook_done();	/* pending already: that run counts */
}

/*
 * 6.7+: mptcp_set_rcvlowat(msk, val), which the kernel calls with the msk
 * owned, wakes a reader whose new mark is reached; TCP's
 * tcp_set_rcvlowat() also wakes one whose queue cannot grow.
 */
static int rcvfix_mptcp_set_rcvlowat_net(struct sock *msk, int val)
{
	int ret;

	if (val > 1)
		rcvfix_mptcp_demand(msk);
	ret = rcvfix_mptcp_set_rcvlowat_fn(msk, val);
	if (!ret)
		rcvfix_mptcp_wake_if_ready(msk);
	rcvfix_hook_done();
	return ret;
}

/* mptcp_set_rcvlowat(sk, val), 6.7+: only for an msk (BPF may pass a TCP sk). */
void notrace rcvfix_mptcp_lowat_entry_set_rcvlowat(unsigned long ip,
						   unsigned long parent_ip,
						   struct ftrace_ops *ops,
						   struct ftrace_regs *fregs)
{
	struct sock *msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (msk->sk_protocol != IPPROTO_MPTCP || !rcvfix_mptcp_lowat_fixing ||
	    rcvfix_hook_from_us(parent_ip) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_set_rcvlowat_net);
}

/*
 * SO_RCVLOWAT on @msk, which the caller owns (lock_sock()), as TCP's
 * tcp_set_rcvlowat() sets it (see the top); the stock line where the
 * namespace turned the fix off meanwhile.
 */
static void rcvfix_mptcp_set_rcvlowat(struct sock *msk, int val)
{
	const struct net *net = sock_net(msk);
	bool locked = msk->sk_userlocks & SOCK_RCVBUF_LOCK;
	int cap;

	if (!rcvfix_net_enabled(net)) {
		WRITE_ONCE(msk->sk_rcvlowat, val ? : 1);
		return;
	}
	cap = locked ? msk->sk_rcvbuf >> 1 :
		       READ_ONCE(net->ipv4.sysctl_tcp_rmem[2]) >> 1;
	val = min(val, cap);
	WRITE_ONCE(msk->sk_rcvlowat, val ? : 1);

	/*
	 * Not from a BPF program: it may run where the data lock must not
	 * be taken (a cgroup LSM program at sock_graft(), under
	 * sk_callback_lock); the work it queued decides (above).
	 */
	if (!has_current_bpf_ctx())
		rcvfix_mptcp_wake_if_ready(msk);

	if (!locked && val * 2 > msk->sk_rcvbuf)
		WRITE_ONCE(msk->sk_rcvbuf, val * 2);
}

/*
 * sk_setsockopt() (before 6.0 sock_setsockopt()) for SO_RCVLOWAT on an
 * msk: the stock checks and order, then the option as TCP sets it.
 */
static int rcvfix_mptcp_setsockopt(struct rcvfix_setsockopt_obj *obj,
				   int level, int optname, sockptr_t optval,
				   unsigned int optlen)
{
	struct sock *msk = rcvfix_setsockopt_sk(obj);
	int ret = 0;
	int val;

	if (optlen < sizeof(int)) {
		ret = -EINVAL;
	} else if (copy_from_sockptr(&val, optval, sizeof(val))) {
		ret = -EFAULT;
	} else {
		if (val > 1 || val < 0)
			rcvfix_mptcp_demand(msk);
		sockopt_lock_sock(msk);
		rcvfix_mptcp_set_rcvlowat(msk, val < 0 ? INT_MAX : val);
		sockopt_release_sock(msk);
	}
	rcvfix_hook_done();
	return ret;
}

/*
 * From the SOL_SOCKET setsockopt entry callback (rcvbuf.c) for
 * SO_RCVLOWAT: an msk of a kernel without the fix (6.7+ has its own
 * set_rcvlowat, wrapped above), set from user space (MPTCP sends its
 * SOL_SOCKET options there) or by a cgroup BPF program's
 * bpf_setsockopt(), in a namespace with the fix on.
 */
void rcvfix_mptcp_lowat_setsockopt_entry(struct ftrace_regs *fregs,
					 struct sock *sk)
{
	if (!rcvfix_mptcp_lowat_fixing || rcvfix_mptcp_lowat_native ||
	    sk->sk_protocol != IPPROTO_MPTCP ||
	    !rcvfix_net_enabled(sock_net(sk)))
		return;
	/*
	 * An msk not yet accepted, in softirq with its data lock held (a
	 * cgroup LSM program at inet_csk_clone(), from sk_clone_lock()):
	 * the kernel's plain write stands, as for a listener's mark its
	 * connections inherit; the hooks are armed for it from a work.
	 */
	if (!READ_ONCE(sk->sk_socket) || !in_task()) {
		rcvfix_mptcp_demand_later();
		return;
	}
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_setsockopt);
}
