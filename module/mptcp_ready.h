/* SPDX-License-Identifier: GPL-2.0 */
/* Is an MPTCP socket's reader ready, decided as TCP decides it. */
#ifndef _RCVFIX_MPTCP_READY_H
#define _RCVFIX_MPTCP_READY_H

#include <linux/types.h>

struct sock;

/* Is the fix on for MPTCP (decided at load, never changed after)? */
extern bool rcvfix_mptcp_lowat_fixing;
/* Does the kernel gate wakeups on the mark itself (6.7+)? */
extern bool rcvfix_mptcp_lowat_native;

bool rcvfix_mptcp_ready_layout(void);
bool rcvfix_mptcp_ready_locked(struct sock *msk, struct sock *ssk,
			       bool owned_elsewhere);
bool rcvfix_mptcp_ready_by_net(struct sock *msk, struct sock *ssk, bool walk);
bool rcvfix_mptcp_ready_unlocked(struct sock *msk);
bool rcvfix_mptcp_window_reopened(struct sock *msk, struct sock *ssk);

#endif /* _RCVFIX_MPTCP_READY_H */
