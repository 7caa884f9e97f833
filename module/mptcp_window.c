// SPDX-License-Identifier: GPL-2.0
/*
 * TCP's window update after a read, for an MPTCP reader with an
 * SO_RCVLOWAT mark (issue 59). TCP's reader, woken at a closed window,
 * empties its queue and tcp_cleanup_rbuf() announces the reopened window
 * at once. MPTCP's mptcp_cleanup_rbuf() compares the free space with twice
 * the window last announced, and a subflow's own tcp_cleanup_rbuf() with
 * the subflow's window, which may reach past the msk's: a marked reader's
 * peer then waits for its MPTCP retransmission timer, about 200 ms, round
 * after round (docs/mptcp-kernel.md). rcvfix wraps mptcp_release_cb(), which
 * ends every release of the msk by its owner: the end of a read, and a
 * blocking read before it sleeps. After the kernel's callback, each
 * subflow for which TCP's rule holds (rcvfix_mptcp_window_reopened(),
 * mptcp_ready.c) sends an ACK. Nothing of the reader's own call is
 * wrapped, so no rcvfix frame waits in a sleeping read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>

#include "hook.h"
#include "mptcp_ready.h"
#include "mptcp_sock.h"
#include "mptcp_window.h"
#include "netns.h"

/* The kernel's mptcp_release_cb(), called by its wrapper here. */
static void (*rcvfix_mptcp_release_cb_fn)(struct sock *msk);

/* The function is resolved (its entry takes an indirect call); before arming. */
void rcvfix_mptcp_window_hooked(const struct rcvfix_hook *release_cb)
{
	rcvfix_mptcp_release_cb_fn = (void *)release_cb->func;
}

/* The states in which a socket's peer may still send to it. */
#define RCVFIX_RECEIVING (TCPF_ESTABLISHED | TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2)

/* Can @ssk still receive, and send an ACK (tcp_cleanup_rbuf()'s test)? */
static bool rcvfix_subflow_receiving(const struct sock *ssk)
{
	return ((1 << READ_ONCE(ssk->sk_state)) & RCVFIX_RECEIVING) &&
	       !(READ_ONCE(ssk->sk_shutdown) & RCV_SHUTDOWN);
}

/*
 * An ACK now on the subflow @ssk, locked, as tcp_cleanup_rbuf() sends it
 * (tcp_send_ack() is not exported; 7.x refreshes the clock first).
 */
static void rcvfix_subflow_send_ack(struct sock *ssk)
{
#ifdef RCVFIX_HAVE_TCP_MSTAMP_REFRESH_INLINE
	tcp_mstamp_refresh_inline(tcp_sk(ssk));
#endif
#ifdef RCVFIX_HAVE_TCP_SEND_ACK_FLAGS
	__tcp_send_ack(ssk, tcp_sk(ssk)->rcv_nxt, 0);
#else
	__tcp_send_ack(ssk, tcp_sk(ssk)->rcv_nxt);
#endif
}

/*
 * TCP's window update on each subflow of @msk, which the caller owns
 * without its data lock: each subflow is locked in turn (the receive path
 * takes the msk's data lock under a subflow's, as mptcp_release_cb() says).
 * Only a subflow that can still receive and send an ACK.
 */
static void rcvfix_mptcp_reopen_window(struct sock *msk)
{
	struct list_head *pos;
	struct sock *ssk;
	bool slow;

	rcvfix_msk_for_each_subflow(msk, pos) {
		ssk = rcvfix_subflow_sk(pos);
		slow = lock_sock_fast(ssk);
		if (rcvfix_subflow_receiving(ssk) &&
		    rcvfix_mptcp_window_reopened(msk, ssk)) {
			rcvfix_subflow_send_ack(ssk);
			rcvfix_net_count_window(sock_net(msk));
		}
		unlock_sock_fast(ssk, slow);
	}
}

/*
 * Would TCP's window update be sent on a subflow of @msk, owned by the
 * caller with its data lock held? A hint, each subflow read without its
 * lock (the owner's conn_list does not change meanwhile): most releases
 * of a marked msk (a writer thread's, the worker's, a read that left the
 * window as it was) end here, without dropping the lock or taking a
 * subflow's.
 */
static bool rcvfix_mptcp_window_hint(struct sock *msk)
{
	struct list_head *pos;
	struct sock *ssk;

	rcvfix_msk_for_each_subflow(msk, pos) {
		ssk = rcvfix_subflow_sk(pos);
		if (rcvfix_subflow_receiving(ssk) &&
		    rcvfix_mptcp_window_reopened(msk, ssk))
			return true;
	}
	return false;
}

/*
 * mptcp_release_cb(@msk) for a reader with a mark: the kernel's, then
 * TCP's window update where the msk still receives, then the kernel's
 * again for what arrived while the data lock was dropped (its loop's own
 * rule: nothing set meanwhile waits for the next release).
 */
static void rcvfix_mptcp_release_cb(struct sock *msk)
	__must_hold(&msk->sk_lock.slock)
{
	rcvfix_mptcp_release_cb_fn(msk);
	if (READ_ONCE(msk->sk_rcvlowat) > 1 &&
	    ((1 << msk->sk_state) & RCVFIX_RECEIVING) &&
	    !(msk->sk_shutdown & RCV_SHUTDOWN) &&
	    rcvfix_net_enabled(sock_net(msk)) &&
	    rcvfix_mptcp_window_hint(msk)) {
		spin_unlock_bh(&msk->sk_lock.slock);
		rcvfix_mptcp_reopen_window(msk);
		spin_lock_bh(&msk->sk_lock.slock);
		rcvfix_mptcp_release_cb_fn(msk);
	}
	rcvfix_hook_done();
}

/* mptcp_release_cb(msk): only for a reader with a mark. */
void notrace rcvfix_mptcp_window_entry_release_cb(unsigned long ip,
						  unsigned long parent_ip,
						  struct ftrace_ops *ops,
						  struct ftrace_regs *fregs)
{
	struct sock *msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (likely(READ_ONCE(msk->sk_rcvlowat) <= 1) ||
	    !rcvfix_mptcp_lowat_fixing || rcvfix_hook_from_us(parent_ip) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_release_cb);
}
