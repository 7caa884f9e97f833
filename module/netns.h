/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-network-namespace state: the net.rcvfix.enable switch, the counters
 * of what the fix did, and their views (the sysctl and /proc/net/rcvfix).
 */
#ifndef _RCVFIX_NETNS_H
#define _RCVFIX_NETNS_H

#include <net/net_namespace.h>

#include "rule.h"

/* Where a receive-buffer change came from. */
enum rcvfix_path {
	RCVFIX_PATH_SETSOCKOPT,	/* setsockopt() from user space */
	RCVFIX_PATH_BPF,	/* bpf_setsockopt() from a BPF program */
	RCVFIX_PATH_KERNEL,	/* sock_set_rcvbuf() from kernel code */
	RCVFIX_PATH_NR,
};

bool rcvfix_net_enabled(const struct net *net);
void rcvfix_net_count(const struct net *net, enum rcvfix_path path,
		      enum rcvfix_outcome outcome);

int rcvfix_netns_init(void);
void rcvfix_netns_exit(void);

#endif /* _RCVFIX_NETNS_H */
