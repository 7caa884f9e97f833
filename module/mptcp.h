/* SPDX-License-Identifier: GPL-2.0 */
/* MPTCP subflows follow the receive buffer of their MPTCP socket. */
#ifndef _RCVFIX_MPTCP_H
#define _RCVFIX_MPTCP_H

#include <linux/ftrace.h>

/* The function whose SO_RCVBUF case rcvfix redirects (see mptcp.c). */
#define RCVFIX_MPTCP_TARGET "mptcp_sol_socket_sync_intval"
/* Where a subflow takes its msk's buffer before it is established. */
#define RCVFIX_MPTCP_CONNECT "subflow_finish_connect"
#define RCVFIX_MPTCP_ACCEPT "subflow_syn_recv_sock"
/* Where a synced subflow of an established msk takes its window clamp. */
#define RCVFIX_MPTCP_DATA_READY "mptcp_data_ready"

void rcvfix_mptcp_entry_sync_intval(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *ops,
				    struct ftrace_regs *fregs);

void rcvfix_mptcp_entry_finish_connect(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *ops,
				       struct ftrace_regs *fregs);
void rcvfix_mptcp_entry_syn_recv_sock(unsigned long ip,
				      unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct ftrace_regs *fregs);
void rcvfix_mptcp_entry_data_ready(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *ops,
				   struct ftrace_regs *fregs);

#endif /* _RCVFIX_MPTCP_H */
