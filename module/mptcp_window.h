/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP's window update after a read, for an MPTCP reader with an
 * SO_RCVLOWAT mark (see mptcp_window.c).
 */
#ifndef _RCVFIX_MPTCP_WINDOW_H
#define _RCVFIX_MPTCP_WINDOW_H

struct ftrace_ops;
struct ftrace_regs;
struct rcvfix_hook;

/* where an owner's release of an msk ends (struct proto's release_cb) */
#define RCVFIX_MPTCP_RELEASE_CB "mptcp_release_cb"

void rcvfix_mptcp_window_hooked(const struct rcvfix_hook *release_cb);
void rcvfix_mptcp_window_entry_release_cb(unsigned long ip,
					  unsigned long parent_ip,
					  struct ftrace_ops *ops,
					  struct ftrace_regs *fregs);

#endif /* _RCVFIX_MPTCP_WINDOW_H */
