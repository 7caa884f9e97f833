// SPDX-License-Identifier: GPL-2.0
/*
 * MPTCP subflows follow the MPTCP socket's receive buffer. On an MPTCP
 * socket (msk), setsockopt(SO_RCVBUF or SO_RCVBUFFORCE) runs, in stock
 * net/mptcp/sockopt.c (6.1, 6.12, 7.3 alike):
 *
 *	mptcp_sol_socket_intval()
 *	  sock_setsockopt(msk)			the msk: sk_setsockopt(), where
 *						rcvfix applies its rule
 *	  mptcp_sol_socket_sync_intval(msk, optname, val)
 *	    for each existing subflow:		lock it, copy msk's sk_rcvbuf
 *						(7.1+: and its window clamp)
 *
 * and a subflow created later gets the msk's buffer and lock only if the
 * msk is locked (sync_socket_options()). The window a subflow offers is
 * capped by its own window clamp, which follows its own buffer: set when
 * the subflow is established, raised when autotuning grows the msk (and,
 * before 7.x, its subflows with it) past the msk's sk_rcvbuf, never
 * beyond tcp_rmem[2]. So where rcvfix leaves the msk unlocked:
 *
 *  - Before the handshake (msk closed, listening or connecting), the
 *    unconditional lock on existing subflows would bring back the very
 *    lock rcvfix avoided, with the small window scale of a locked buffer
 *    (on 6.1 the first subflow exists from socket()). The sync is
 *    redirected to a replacement that leaves them alone. Instead each
 *    subflow takes the msk's buffer, unlocked, right before it is
 *    established, so that its window clamp is set from that buffer as a
 *    plain TCP socket's is (and the window scale was already chosen for an
 *    unlocked buffer): subflow_finish_connect() on the connecting side,
 *    subflow_syn_recv_sock() on a listener (its subflow's buffer is what
 *    the accepted subflows are cloned with). Without that, a buffer set
 *    at or above tcp_rmem[2] kept every subflow at tcp_rmem[1] for good:
 *    autotuning never exceeds such a buffer, so it never raised them.
 *  - Once established, the window scale is fixed and every buffer runs
 *    the kernel's sync: the subflows get the msk's buffer as on stock,
 *    where nothing else would give it to them. Left alone, they kept the
 *    buffer and window clamp of their setup (64-96 KB of window at
 *    Debian's tcp_rmem[1]) for good: autotuning raises them only when it
 *    grows the msk past its sk_rcvbuf (mptcp_rcv_space_adjust(), every
 *    kernel line), and the rate such a window allows never asks for more
 *    than the buffer just set. A buffer between tcp_rmem[1] and
 *    tcp_rmem[2] (7.x's default tcp_rmem[2] is 32 MB on a host with the
 *    memory for it) ran 11x slower than stock on 7.3 that way, when only
 *    a buffer at or above tcp_rmem[2] ran the sync. The sync copies the
 *    buffer but, before 7.1, not the window clamp, and it sets the lock,
 *    which their msk does not have. So the next data a subflow so synced
 *    receives (mptcp_data_ready(), which has both sockets at hand: the
 *    msk's subflow list is private to net/mptcp) drops that lock and
 *    raises its clamp to its new buffer's window, as for an established
 *    TCP socket (rcvfix_tcp_clamp_follow()): from there the subflows
 *    autotune with their msk, as without SO_RCVBUF.
 *
 * A locked msk (every outcome of the rule that locks, and stock) runs the
 * kernel's own code everywhere; so does every other option.
 *
 * The first three functions are static but kept out of line (the latter
 * two are only called through the subflow's inet_connection_sock_af_ops),
 * mptcp_data_ready() is called from another file (subflow.c), and ftrace
 * can hook them, on Debian's 6.1.0-57, 6.12.117+deb12 and 7.3.4+deb13
 * kernels (seen in /proc/kallsyms and available_filter_functions). Where
 * one is missing, rcvfix loads without it and says so: subflows then keep
 * the kernel's behaviour there.
 */
#include <net/sock.h>
#include <net/tcp_states.h>

#include "hook.h"
#include "mptcp.h"
#include "mptcp_lowat.h"
#include "netns.h"
#include "rcvbuf.h"

/* The msk stays unlocked: no subflow is touched (see above). */
static void rcvfix_mptcp_sync_intval(struct sock *msk, int optname, int val)
{
	rcvfix_hook_done();
}

/* Has the msk's handshake begun to establish subflows with their clamps? */
static __always_inline bool rcvfix_mptcp_established(const struct sock *msk)
{
	return !((1 << READ_ONCE(msk->sk_state)) &
		 (TCPF_CLOSE | TCPF_LISTEN | TCPF_SYN_SENT));
}

/*
 * Runs right after sock_setsockopt() has set the msk. The msk's lock bit
 * is read without its socket lock: once set it is never cleared (MPTCP
 * refuses SO_BUF_LOCK), and a concurrent setsockopt that sets it runs its
 * own sync after this one.
 */
void notrace rcvfix_mptcp_entry_sync_intval(unsigned long ip,
					    unsigned long parent_ip,
					    struct ftrace_ops *ops,
					    struct ftrace_regs *fregs)
{
	int optname = (int)rcvfix_fregs_arg(fregs, 1);
	struct sock *msk;

	if (likely(optname != SO_RCVBUF && optname != SO_RCVBUFFORCE))
		return;
	msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);
	/* a plain read: a bitfield on 6.1, and racy by design (above) */
	if ((msk->sk_userlocks & SOCK_RCVBUF_LOCK) ||
	    rcvfix_mptcp_established(msk))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_sync_intval);
}

/*
 * @ssk, a subflow about to be established or a listener's subflow about to
 * clone an accepted one, takes the buffer of its unlocked msk if that is
 * larger, in a namespace with the fix on. The msk is found through the
 * socket both are grafted to (mptcp_sock_graft()). On a listener, whose
 * lock is not held here, both may be going away meanwhile: the struct
 * socket is freed only after an RCU grace period, MPTCP sockets come from a
 * SLAB_TYPESAFE_BY_RCU cache (a listener is also SOCK_RCU_FREE), and ftrace
 * callbacks run with preemption disabled, an RCU read-side section. A
 * subflow that is locked keeps its buffer.
 */
static __always_inline void rcvfix_mptcp_subflow_follow(struct sock *ssk)
{
	struct socket *sock = READ_ONCE(ssk->sk_socket);
	struct sock *msk;
	int size;

	if (!sock)
		return;
	msk = READ_ONCE(sock->sk);
	if (!msk || msk == ssk || msk->sk_protocol != IPPROTO_MPTCP ||
	    (msk->sk_userlocks & SOCK_RCVBUF_LOCK) ||
	    (ssk->sk_userlocks & SOCK_RCVBUF_LOCK) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	size = READ_ONCE(msk->sk_rcvbuf);
	if (size > READ_ONCE(ssk->sk_rcvbuf))
		WRITE_ONCE(ssk->sk_rcvbuf, size);
}

/* subflow_finish_connect(ssk, skb): the subflow's SYN-ACK has arrived. */
void notrace rcvfix_mptcp_entry_finish_connect(unsigned long ip,
					       unsigned long parent_ip,
					       struct ftrace_ops *ops,
					       struct ftrace_regs *fregs)
{
	rcvfix_mptcp_subflow_follow((struct sock *)rcvfix_fregs_arg(fregs, 0));
}

/* subflow_syn_recv_sock(listener ssk, ...): a child is about to be made. */
void notrace rcvfix_mptcp_entry_syn_recv_sock(unsigned long ip,
					      unsigned long parent_ip,
					      struct ftrace_ops *ops,
					      struct ftrace_regs *fregs)
{
	rcvfix_mptcp_subflow_follow((struct sock *)rcvfix_fregs_arg(fregs, 0));
}

/*
 * mptcp_data_ready(msk, ssk): data has arrived on subflow @ssk, which is
 * locked by its receive path (bh-locked and not owned, or owned by the task
 * that processes its backlog), as setsockopt() holds it when it sets the
 * lock. A subflow locked by the kernel's sync at the buffer of an msk that
 * rcvfix left unlocked (see the top: only an established msk runs that
 * sync; a locked msk, stock or a disabled namespace never gets here) keeps
 * that buffer, carries its msk's lock again (none) and takes the window
 * clamp of the buffer. Every other subflow costs two compares: most have
 * no lock. Where MPTCP lacks the SO_RCVLOWAT wakeup fix, an msk whose
 * reader set a mark is sent to mptcp_lowat.c's wrapper (this hook then
 * redirects: targets.c); one more compare for every other msk.
 */
void notrace rcvfix_mptcp_entry_data_ready(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *ops,
					   struct ftrace_regs *fregs)
{
	struct sock *msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);
	struct sock *ssk = (struct sock *)rcvfix_fregs_arg(fregs, 1);

	/* plain reads: bitfields on 6.1, set under locks not held here */
	if (unlikely(ssk->sk_userlocks & SOCK_RCVBUF_LOCK) &&
	    !(msk->sk_userlocks & SOCK_RCVBUF_LOCK) &&
	    rcvfix_net_enabled(sock_net(msk))) {
		ssk->sk_userlocks &= ~SOCK_RCVBUF_LOCK;
		rcvfix_tcp_clamp_follow(ssk);
	}
	/* a reader with SO_RCVLOWAT, where the kernel lacks its wakeup fix */
	if (unlikely(READ_ONCE(msk->sk_rcvlowat) > 1))
		rcvfix_mptcp_lowat_data_ready_entry(fregs, parent_ip, msk);
}
