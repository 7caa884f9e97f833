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
 *	    lock the msk; for each subflow:	lock it, set its lock, copy the
 *						msk's sk_rcvbuf (7.1+: and its
 *						window clamp, tcp_set_rcvbuf())
 *
 * and a subflow created later gets the msk's buffer and lock only if the
 * msk is locked (sync_socket_options()). The window a subflow offers is
 * capped by its own window clamp, which follows its own buffer: set when
 * the subflow is established, raised when autotuning grows the msk past
 * its sk_rcvbuf (and, before 7.x, its subflows with it), never beyond
 * tcp_rmem[2].
 *
 * Where rcvfix leaves the msk unlocked, the sync is redirected to
 * rcvfix_mptcp_sync_rcvbuf(): stock's loop over the msk's subflows, under
 * the same locks, without the lock bit. struct mptcp_sock and struct
 * mptcp_subflow_context are private to net/mptcp: where the subflow list
 * is comes from the running kernel's BTF (btf_layout.c). Each subflow
 * takes the msk's buffer, both ways, as on stock:
 *
 *  - before the handshake (msk closed, listening or connecting) and
 *    nothing else: its window clamp caps the window scale it will offer,
 *    which must be chosen for an unlocked buffer. A listener's subflow is
 *    what the accepted subflows are cloned from.
 *  - once established, its window clamp follows the buffer up
 *    (rcvfix_tcp_clamp_follow(), as autotuning does): from there the
 *    subflows autotune with their msk, as without SO_RCVBUF. Left alone,
 *    they kept the buffer and window clamp of their setup (64-96 KB of
 *    window at Debian's tcp_rmem[1]) for good: a buffer between tcp_rmem[1]
 *    and tcp_rmem[2] ran 11x slower than stock on 7.3 that way.
 *
 * A subflow that does not exist yet when SO_RCVBUF is set takes the
 * unlocked msk's buffer if that is larger, in a namespace with the fix on
 * (even if the msk never had SO_RCVBUF: it has its autotuned buffer),
 * before it is established: subflow_finish_connect() on the connecting
 * side (a join, or 6.12+'s first subflow, created at bind, listen or
 * connect), __inet_listen_sk() for 6.12+'s listener subflow created at
 * listen(). Its lock is held there; the msk's is too.
 *
 * A locked msk (every outcome of the rule that locks, and stock) runs the
 * kernel's own code everywhere; so does every other option. Where the
 * layout cannot be read, or the sync cannot be hooked, MPTCP sockets keep
 * the kernel's code altogether (rcvfix_rcvbuf_scope_mptcp(false): the
 * rule does not apply to them), with one log line naming why.
 *
 * mptcp_sol_socket_sync_intval() and subflow_finish_connect() are static
 * but kept out of line (the latter is only called through the subflow's
 * inet_connection_sock_af_ops), __inet_listen_sk() is called from other
 * files, and ftrace can hook them, on Debian's 6.1.0-57 (which has no
 * __inet_listen_sk(): its first subflow exists from socket() on),
 * 6.12.117+deb12 and 7.3.4+deb13 kernels (seen in /proc/kallsyms and
 * available_filter_functions).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <net/inet_connection_sock.h>
#include <net/mptcp.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>

#include "hook.h"
#include "mptcp.h"
#include "mptcp_sock.h"
#include "netns.h"
#include "rcvbuf.h"

/**
 * rcvfix_mptcp_rcvbuf_init - can rcvfix walk an msk's subflows?
 *
 * Reads the layout at load, before the hooks are resolved. Returns false
 * (MPTCP sockets keep the kernel's code, one log line) if it is unsure.
 */
bool rcvfix_mptcp_rcvbuf_init(void)
{
	char why[160] = "";

	if (rcvfix_msk_layout_init(why, sizeof(why))) {
		rcvfix_mptcp_rcvbuf_unavailable(why);
		return false;
	}
	rcvfix_rcvbuf_scope_mptcp(true);
	return true;
}

/* The sync cannot be hooked, or the layout is unsure: MPTCP is stock. */
void rcvfix_mptcp_rcvbuf_unavailable(const char *why)
{
	rcvfix_rcvbuf_scope_mptcp(false);
	pr_info("MPTCP sockets keep the kernel's SO_RCVBUF (locked): %s\n",
		why);
}

/* Has the msk's handshake begun to establish subflows with their clamps? */
static __always_inline bool rcvfix_mptcp_established(const struct sock *msk)
{
	return !((1 << READ_ONCE(msk->sk_state)) &
		 (TCPF_CLOSE | TCPF_LISTEN | TCPF_SYN_SENT));
}

/*
 * Stock's mptcp_sol_socket_sync_intval() for SO_RCVBUF and SO_RCVBUFFORCE,
 * for an msk whose lock rcvfix avoided: under the msk's lock, each
 * subflow under its own, taken as stock takes it (lock_sock_fast(): only
 * its spinlock, bottom halves off, where nobody owns it), takes the msk's
 * buffer, without the lock bit (see the top). Stock also bumps the msk's
 * option sequence, so that subflows joining later run
 * sync_socket_options(): that copies the buffer only from a locked msk,
 * so there is nothing for them to catch up on. A setsockopt that locked
 * the msk meanwhile runs its own sync after this; should it have run
 * before, this one does what stock's would: the lock too.
 */
static void rcvfix_mptcp_sync_rcvbuf(struct sock *msk, int optname, int val)
{
	struct list_head *pos;
	bool locked, established;

	lock_sock(msk);
	locked = msk->sk_userlocks & SOCK_RCVBUF_LOCK;
	established = rcvfix_mptcp_established(msk);
	rcvfix_msk_for_each_subflow(msk, pos) {
		struct sock *ssk = rcvfix_subflow_sk(pos);
		bool slow = lock_sock_fast(ssk);

		if (locked)
			ssk->sk_userlocks |= SOCK_RCVBUF_LOCK;
		WRITE_ONCE(ssk->sk_rcvbuf, msk->sk_rcvbuf);
		if (locked)
			rcvfix_tcp_set_rcvbuf(ssk);
		else if (established)
			rcvfix_tcp_clamp_follow(ssk);
		unlock_sock_fast(ssk, slow);
	}
	release_sock(msk);
	rcvfix_hook_done();
}

/*
 * Runs right after sock_setsockopt() has set the msk. The msk's lock bit
 * is read without its socket lock: once set it is never cleared (MPTCP
 * refuses SO_BUF_LOCK), and the replacement reads it again under the lock.
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
	if (msk->sk_userlocks & SOCK_RCVBUF_LOCK)
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_sync_rcvbuf);
}

/*
 * @ssk, a subflow about to be established or to listen, takes the buffer
 * of its unlocked msk if that is larger, in a namespace with the fix on.
 * The msk is found through the socket both are grafted to
 * (mptcp_sock_graft()). @ssk is locked by the caller (its receive path,
 * bh-locked, or listen()); the msk's buffer is read once, as the kernel's
 * receive path reads it. A subflow that is locked keeps its buffer.
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

/*
 * subflow_finish_connect(ssk, skb) is the subflow's sk_rx_dst_set: called
 * when its SYN-ACK has arrived (tcp_finish_connect(), in state
 * ESTABLISHED already, before tcp_init_transfer() sets up its buffer
 * space and congestion control), and again whenever an established
 * subflow's cached input route has gone (tcp_rcv_established(), after any
 * route change), where the kernel returns early (conn_finished) and so
 * does this: only the handshake acts. rcvq_space.space is 0 until
 * tcp_init_buffer_space() and never after (tcp_rcv_space_adjust() keeps it
 * above 0); a reconnect after tcp_disconnect() finds it set again, but its
 * congestion control uninitialised (icsk_ca_initialized 0).
 */
void notrace rcvfix_mptcp_entry_finish_connect(unsigned long ip,
					       unsigned long parent_ip,
					       struct ftrace_ops *ops,
					       struct ftrace_regs *fregs)
{
	struct sock *ssk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (tcp_sk(ssk)->rcvq_space.space &&
	    inet_csk(ssk)->icsk_ca_initialized)
		return;
	rcvfix_mptcp_subflow_follow(ssk);
}

/*
 * __inet_listen_sk(sk, backlog), with @sk locked: every TCP listen() since
 * 6.5, where an msk's first subflow may be created by bind() or listen()
 * after SO_RCVBUF (6.1's exists from socket() on and took the buffer when
 * it was set). A listener's subflow is what accepted ones are cloned from.
 */
void notrace rcvfix_mptcp_entry_listen(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *ops,
				       struct ftrace_regs *fregs)
{
	struct sock *sk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (sk->sk_protocol == IPPROTO_TCP && sk_is_mptcp(sk))
		rcvfix_mptcp_subflow_follow(sk);
}
