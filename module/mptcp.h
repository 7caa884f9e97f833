/* SPDX-License-Identifier: GPL-2.0 */
/* MPTCP subflows follow the receive-buffer lock of their MPTCP socket. */
#ifndef _RCVFIX_MPTCP_H
#define _RCVFIX_MPTCP_H

#include <linux/ftrace.h>

/* The function whose SO_RCVBUF case rcvfix redirects (see mptcp.c). */
#define RCVFIX_MPTCP_TARGET "mptcp_sol_socket_sync_intval"

void rcvfix_mptcp_entry_sync_intval(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *ops,
				    struct ftrace_regs *fregs);

#endif /* _RCVFIX_MPTCP_H */
