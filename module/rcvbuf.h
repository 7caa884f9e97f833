/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SO_RCVBUF lock fix: the rule applied where stock locks the buffer,
 * the entry callbacks of the two callers of __sock_set_rcvbuf(), and the
 * scope of sockets it applies to.
 */
#ifndef _RCVFIX_RCVBUF_H
#define _RCVFIX_RCVBUF_H

#include <linux/ftrace.h>
#include <net/sock.h>

#include "netns.h"

/* Does the rule apply to MPTCP sockets? Set once at load (mptcp.c). */
extern bool rcvfix_rcvbuf_mptcp_in_scope;

void rcvfix_rcvbuf_scope_mptcp(bool in_scope);
void rcvfix_set_rcvbuf(struct sock *sk, int val, enum rcvfix_path path);
void rcvfix_tcp_clamp_follow(struct sock *sk);
void rcvfix_tcp_set_rcvbuf(struct sock *sk);
void rcvfix_entry_sk_setsockopt(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *ops,
				struct ftrace_regs *fregs);
void rcvfix_entry_sock_set_rcvbuf(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct ftrace_regs *fregs);

/*
 * The rule is TCP's: TCP and MPTCP stream sockets over IPv4 and IPv6
 * (MPTCP where rcvfix can make their subflows follow: mptcp.c says so
 * at load, through rcvfix_rcvbuf_scope_mptcp()).
 * Everything else (UDP, UNIX, SMC, ...) runs the kernel's own code.
 */
static __always_inline bool rcvfix_sk_in_scope(const struct sock *sk)
{
	return (sk->sk_protocol == IPPROTO_TCP ||
		(sk->sk_protocol == IPPROTO_MPTCP &&
		 rcvfix_rcvbuf_mptcp_in_scope)) &&
	       sk->sk_type == SOCK_STREAM &&
	       (sk->sk_family == AF_INET || sk->sk_family == AF_INET6);
}

#endif /* _RCVFIX_RCVBUF_H */
