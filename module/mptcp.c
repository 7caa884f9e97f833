// SPDX-License-Identifier: GPL-2.0
/*
 * MPTCP subflows follow the MPTCP socket's receive-buffer lock. On an MPTCP
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
 * msk is locked (sync_socket_options()). Where rcvfix left the msk
 * unlocked, the unconditional lock on existing subflows would bring back
 * the very lock it avoided: on 6.1 the first subflow exists from socket(),
 * so a listener's SO_RCVBUF before bind() gave accepted connections the
 * small window scale of a locked buffer; on every kernel a SO_RCVBUF after
 * listen() or connect() did. So mptcp_sol_socket_sync_intval() is
 * redirected for those two options while the msk is unlocked, to a
 * replacement that leaves the subflows alone: existing subflows then get
 * the buffer and lock only with a locked msk, as later ones do. A locked
 * msk (every outcome of the rule that locks, and stock) runs the kernel's
 * own code; so does every other option.
 *
 * The function is static but kept out of line, and ftrace can redirect it,
 * on Debian's 6.1.0-57, 6.12.117+deb12 and 7.3.4+deb13 kernels (seen in
 * /proc/kallsyms and available_filter_functions); its callers
 * mptcp_sol_socket_intval() and mptcp_setsockopt_sol_socket*() are
 * inlined into mptcp_setsockopt(). Where it is missing, rcvfix loads
 * without it and says so: subflows then keep the kernel's behaviour.
 */
#include <net/sock.h>

#include "hook.h"
#include "mptcp.h"

/* The msk stays unlocked: no subflow is touched (see above). */
static void rcvfix_mptcp_sync_intval(struct sock *msk, int optname, int val)
{
	rcvfix_hook_done();
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
	if (!(msk->sk_userlocks & SOCK_RCVBUF_LOCK))
		rcvfix_hook_redirect(fregs, rcvfix_mptcp_sync_intval);
}
