/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SO_RCVBUF lock fix: which functions it redirects on the running
 * kernel (the strategy), and the replacements it sends calls to.
 */
#ifndef _RCVFIX_RCVBUF_H
#define _RCVFIX_RCVBUF_H

#include <linux/seq_file.h>
#include <net/sock.h>

#include "netns.h"

struct rcvfix_hook;

int rcvfix_rcvbuf_init(void);
struct rcvfix_hook *const *rcvfix_rcvbuf_hooks(unsigned int *n);
const char *rcvfix_rcvbuf_strategy(void);
const char *rcvfix_rcvbuf_targets(void);
void rcvfix_rcvbuf_show(struct seq_file *m);
void rcvfix_set_rcvbuf(struct sock *sk, int val, enum rcvfix_path path);

/*
 * The rule is TCP's: TCP and MPTCP stream sockets over IPv4 and IPv6.
 * Everything else (UDP, UNIX, SMC, ...) runs the kernel's own code.
 */
static __always_inline bool rcvfix_sk_in_scope(const struct sock *sk)
{
	return (sk->sk_protocol == IPPROTO_TCP ||
		sk->sk_protocol == IPPROTO_MPTCP) &&
	       sk->sk_type == SOCK_STREAM &&
	       (sk->sk_family == AF_INET || sk->sk_family == AF_INET6);
}

#endif /* _RCVFIX_RCVBUF_H */
