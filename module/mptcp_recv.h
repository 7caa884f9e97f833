/* SPDX-License-Identifier: GPL-2.0 */
/* MPTCP's receive path for a reader with an SO_RCVLOWAT mark. */
#ifndef _RCVFIX_MPTCP_RECV_H
#define _RCVFIX_MPTCP_RECV_H

#include <linux/ftrace.h>

struct rcvfix_hook;
struct sock;

void rcvfix_mptcp_recv_hooked(const struct rcvfix_hook *data_ready,
			      const struct rcvfix_hook *state_change,
			      const struct rcvfix_hook *poll,
			      void (*def_readable)(struct sock *sk));
void rcvfix_mptcp_lowat_entry_data_ready(unsigned long ip,
					 unsigned long parent_ip,
					 struct ftrace_ops *ops,
					 struct ftrace_regs *fregs);
void rcvfix_mptcp_lowat_entry_state_change(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *ops,
					   struct ftrace_regs *fregs);
void rcvfix_mptcp_lowat_entry_poll(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *ops,
				   struct ftrace_regs *fregs);

#endif /* _RCVFIX_MPTCP_RECV_H */
