// SPDX-License-Identifier: GPL-2.0
/*
 * MPTCP's receive path for a reader with an SO_RCVLOWAT mark (the rule:
 * mptcp_lowat.c's top comment): the wrappers of a subflow's sk_data_ready
 * and sk_state_change, subflow_data_ready() and subflow_state_change(),
 * which filter the kernel's wakeups before 6.7 and add TCP's net after,
 * and of mptcp_poll(), which reports readable exactly then.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "hook.h"
#include "mptcp_ready.h"
#include "mptcp_recv.h"
#include "mptcp_sock.h"
#include "netns.h"

/* sock_def_readable(), the msk's sk_data_ready, as the kernel set it. */
static void (*rcvfix_def_readable)(struct sock *sk);
/* The kernel's functions, called by their wrappers here. */
static void (*rcvfix_subflow_data_ready_fn)(struct sock *ssk);
static void (*rcvfix_subflow_state_change_fn)(struct sock *ssk);
static __poll_t (*rcvfix_mptcp_poll_fn)(struct file *file,
					struct socket *sock,
					struct poll_table_struct *wait);

/*
 * The functions are resolved (their entries take an indirect call); before
 * any arming. @def_readable: the msk's sk_data_ready before 6.7, else NULL.
 */
void rcvfix_mptcp_recv_hooked(const struct rcvfix_hook *data_ready,
			      const struct rcvfix_hook *state_change,
			      const struct rcvfix_hook *poll,
			      void (*def_readable)(struct sock *sk))
{
	rcvfix_subflow_data_ready_fn = (void *)data_ready->func;
	rcvfix_subflow_state_change_fn = (void *)state_change->func;
	rcvfix_mptcp_poll_fn = (void *)poll->func;
	rcvfix_def_readable = def_readable;
}

/* The msk whose subflow's receive path this CPU runs in a wrapper, if any. */
struct rcvfix_mptcp_filter {
	struct sock *msk;
	struct sock *ssk;	/* the subflow it runs for */
	struct task_struct *task;	/* the task running it */
};

static DEFINE_PER_CPU(struct rcvfix_mptcp_filter, rcvfix_mptcp_filtering);

/*
 * The msk's sk_data_ready while a subflow's receive path runs for an
 * SO_RCVLOWAT reader: mptcp_data_ready() calls it there with the data lock
 * held, on the CPU and in the task that run the wrapper. Every other call
 * wakes, as the kernel would: the other callers of an msk's sk_data_ready
 * in net/mptcp (6.1: the reader's own recvmsg() through
 * __mptcp_move_skbs(), and mptcp_check_for_eof()) may run in that window
 * on another CPU, and with PREEMPT_RT in another task on this one.
 */
static void rcvfix_mptcp_readable(struct sock *msk)
{
	if (this_cpu_read(rcvfix_mptcp_filtering.msk) != msk ||
	    this_cpu_read(rcvfix_mptcp_filtering.task) != current ||
	    (READ_ONCE(msk->sk_shutdown) & RCV_SHUTDOWN) ||
	    READ_ONCE(msk->sk_err) ||
	    rcvfix_mptcp_ready_locked(msk,
				      this_cpu_read(rcvfix_mptcp_filtering.ssk),
				      sock_owned_by_user_nocheck(msk)))
		rcvfix_def_readable(msk);
	else
		rcvfix_net_count_lowat(sock_net(msk), true);
}

/*
 * Someone replaced the msk's sk_data_ready while the wrapper had swapped
 * it, and may have kept a pointer to rcvfix_mptcp_readable(): this
 * module's text must then stay for good.
 */
static void rcvfix_mptcp_lowat_pin(void)
{
	rcvfix_hook_pin_module("an MPTCP socket's sk_data_ready was replaced while filtered");
}

/*
 * The kernel runs a subflow's sk_data_ready and sk_state_change in
 * softirq, or in a task processing the subflow's backlog, with the
 * subflow locked; with bottom halves off it stays on this CPU and nothing
 * else runs it here meanwhile (PREEMPT_RT included: there bottom halves
 * off means a per-CPU lock and no migration).
 */
static void rcvfix_mptcp_filter(struct sock *ssk, void (*fn)(struct sock *ssk))
{
	void (*def)(struct sock *sk) = rcvfix_def_readable;
	struct sock *msk = rcvfix_subflow_msk(ssk);
	bool swapped;

	local_bh_disable();
	this_cpu_write(rcvfix_mptcp_filtering.ssk, ssk);
	this_cpu_write(rcvfix_mptcp_filtering.task, current);
	this_cpu_write(rcvfix_mptcp_filtering.msk, msk);
	swapped = cmpxchg(&msk->sk_data_ready, def,
			  rcvfix_mptcp_readable) == def;
	fn(ssk);
	if (swapped && cmpxchg(&msk->sk_data_ready, rcvfix_mptcp_readable,
			       def) != rcvfix_mptcp_readable)
		rcvfix_mptcp_lowat_pin();
	this_cpu_write(rcvfix_mptcp_filtering.msk, NULL);
	local_bh_enable();
}

/*
 * 6.7+: the kernel's mptcp_data_ready() wakes a reader whose mark is
 * reached; one that is ready by TCP's net alone is woken here, after it.
 */
static void rcvfix_mptcp_add_net(struct sock *ssk, void (*fn)(struct sock *ssk))
{
	struct sock *msk = rcvfix_subflow_msk(ssk);

	fn(ssk);
	if (rcvfix_mptcp_ready_by_net(msk, ssk, false)) {
		msk->sk_data_ready(msk);
		rcvfix_net_count_lowat(sock_net(msk), false);
	}
}

/* The subflow's receive path, as the kernel runs it, filtered or with the net. */
static void rcvfix_mptcp_subflow_event(struct sock *ssk,
				       void (*fn)(struct sock *ssk))
{
	if (rcvfix_mptcp_lowat_native)
		rcvfix_mptcp_add_net(ssk, fn);
	else
		rcvfix_mptcp_filter(ssk, fn);
}

static void rcvfix_subflow_data_ready(struct sock *ssk)
{
	rcvfix_mptcp_subflow_event(ssk, rcvfix_subflow_data_ready_fn);
	rcvfix_hook_done();
}

static void rcvfix_subflow_state_change(struct sock *ssk)
{
	rcvfix_mptcp_subflow_event(ssk, rcvfix_subflow_state_change_fn);
	rcvfix_hook_done();
}

/*
 * Is this call of a subflow's sk_data_ready or sk_state_change (@fregs
 * holds its subflow) one for a reader with a mark, in a namespace with the
 * fix on? Not for a listener's subflow: its sk_data_ready wakes accept().
 * A call for a socket without a mark pays the callback, three loads (the
 * subflow's context, its msk, mptcp_subflow_context.conn, set before a
 * subflow can receive, a listener's too; the msk's mark) and a compare
 * (docs/benchmarks.md).
 * Another concurrent wrapper on the same msk finds the pointer swapped
 * already and runs the kernel's code as it is: a wakeup at most is spent.
 */
static __always_inline bool rcvfix_subflow_for_reader(unsigned long parent_ip,
						      struct ftrace_regs *fregs)
{
	struct sock *ssk = (struct sock *)rcvfix_fregs_arg(fregs, 0);
	struct sock *msk = rcvfix_subflow_msk(ssk);

	if (likely(READ_ONCE(msk->sk_rcvlowat) <= 1))
		return false;
	return inet_sk_state_load(ssk) != TCP_LISTEN &&
	       rcvfix_mptcp_lowat_fixing && !rcvfix_hook_from_us(parent_ip) &&
	       rcvfix_net_enabled(sock_net(msk));
}

/* subflow_data_ready(ssk), a subflow's sk_data_ready: hooked where the fix is on. */
void notrace rcvfix_mptcp_lowat_entry_data_ready(unsigned long ip,
						 unsigned long parent_ip,
						 struct ftrace_ops *ops,
						 struct ftrace_regs *fregs)
{
	if (rcvfix_subflow_for_reader(parent_ip, fregs))
		rcvfix_hook_redirect(fregs, rcvfix_subflow_data_ready);
}

/* subflow_state_change(ssk), a subflow's sk_state_change: likewise. */
void notrace rcvfix_mptcp_lowat_entry_state_change(unsigned long ip,
						   unsigned long parent_ip,
						   struct ftrace_ops *ops,
						   struct ftrace_regs *fregs)
{
	if (rcvfix_subflow_for_reader(parent_ip, fregs))
		rcvfix_hook_redirect(fregs, rcvfix_subflow_state_change);
}

/*
 * Readable exactly when the reader would be woken: before 6.7 EPOLLIN is
 * taken back from an msk that is not ready, on 6.7+ it is added to one
 * that is ready by TCP's net alone. A listener, shutdown, hang-up and
 * errors keep the kernel's mask.
 */
static __poll_t rcvfix_mptcp_poll(struct file *file, struct socket *sock,
				  struct poll_table_struct *wait)
{
	__poll_t mask = rcvfix_mptcp_poll_fn(file, sock, wait);
	bool in = mask & EPOLLIN;
	struct sock *msk = sock->sk;
	int state = inet_sk_state_load(msk);

	if (in != rcvfix_mptcp_lowat_native &&
	    !(mask & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
	    state != TCP_LISTEN && state != TCP_SYN_SENT &&
	    state != TCP_SYN_RECV) {
		if (rcvfix_mptcp_ready_unlocked(msk))
			mask |= EPOLLIN | EPOLLRDNORM;
		else
			mask &= ~(EPOLLIN | EPOLLRDNORM);
	}
	rcvfix_hook_done();
	return mask;
}

/* mptcp_poll(file, sock, wait): only for a reader with a mark. */
void notrace rcvfix_mptcp_lowat_entry_poll(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *ops,
					   struct ftrace_regs *fregs)
{
	struct socket *sock = (struct socket *)rcvfix_fregs_arg(fregs, 1);
	struct sock *msk = READ_ONCE(sock->sk);

	if (likely(!msk || READ_ONCE(msk->sk_rcvlowat) <= 1) ||
	    rcvfix_hook_from_us(parent_ip) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_poll);
}
