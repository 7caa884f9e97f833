/* SPDX-License-Identifier: GPL-2.0 */
/* MPTCP subflows follow the receive buffer of their MPTCP socket. */
#ifndef _RCVFIX_MPTCP_H
#define _RCVFIX_MPTCP_H

#include <linux/ftrace.h>
#include <linux/types.h>

/* The function whose SO_RCVBUF case rcvfix redirects (see mptcp.c). */
#define RCVFIX_MPTCP_TARGET "mptcp_sol_socket_sync_intval"
/* Where a subflow takes its msk's buffer before it is established. */
#define RCVFIX_MPTCP_CONNECT "subflow_finish_connect"
/* Where a listener's subflow takes it (6.5+; absent from 6.1). */
#define RCVFIX_MPTCP_LISTEN "__inet_listen_sk"

bool rcvfix_mptcp_rcvbuf_init(void);
void rcvfix_mptcp_rcvbuf_unavailable(const char *why);

void rcvfix_mptcp_entry_sync_intval(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *ops,
				    struct ftrace_regs *fregs);
void rcvfix_mptcp_entry_finish_connect(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *ops,
				       struct ftrace_regs *fregs);
void rcvfix_mptcp_entry_listen(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *ops,
			       struct ftrace_regs *fregs);

#endif /* _RCVFIX_MPTCP_H */
