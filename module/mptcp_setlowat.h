/* SPDX-License-Identifier: GPL-2.0 */
/* Setting an MPTCP socket's SO_RCVLOWAT mark, and arming on demand. */
#ifndef _RCVFIX_MPTCP_SETLOWAT_H
#define _RCVFIX_MPTCP_SETLOWAT_H

#include <linux/ftrace.h>

struct rcvfix_hook;
struct sock;

void rcvfix_mptcp_setlowat_hooked(const struct rcvfix_hook *set_rcvlowat);
void rcvfix_mptcp_lowat_entry_set_rcvlowat(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *ops,
					   struct ftrace_regs *fregs);
void rcvfix_mptcp_lowat_setsockopt_entry(struct ftrace_regs *fregs,
					 struct sock *sk);

#endif /* _RCVFIX_MPTCP_SETLOWAT_H */
