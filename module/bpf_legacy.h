/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_setsockopt(SO_RCVBUF) on kernels before 6.0, where it does not go
 * through sk_setsockopt(): the hooks bpf_legacy.c adds to the "callers"
 * strategy (Kbuild builds it and defines RCVFIX_BPF_LEGACY there only).
 */
#ifndef _RCVFIX_BPF_LEGACY_H
#define _RCVFIX_BPF_LEGACY_H

#include <linux/ftrace.h>

#ifdef RCVFIX_BPF_LEGACY
void rcvfix_entry_bpf_setsockopt(unsigned long ip, unsigned long parent_ip,
				 struct ftrace_ops *ops,
				 struct ftrace_regs *fregs);

/* Entries of the strategy's hook table, one each. */
/* How many hooks the two lines below add to targets.c's table. */
#define RCVFIX_BPF_LEGACY_HOOKS 2
#define RCVFIX_BPF_LEGACY_HOOK_SOCK_OPS				\
	{ .name = "bpf_sock_ops_setsockopt",				\
	  .entry = rcvfix_entry_bpf_setsockopt },
#define RCVFIX_BPF_LEGACY_HOOK_SOCK_ADDR				\
	{ .name = "bpf_sock_addr_setsockopt",				\
	  .entry = rcvfix_entry_bpf_setsockopt },
#else
#define RCVFIX_BPF_LEGACY_HOOKS 0
#define RCVFIX_BPF_LEGACY_HOOK_SOCK_OPS
#define RCVFIX_BPF_LEGACY_HOOK_SOCK_ADDR
#endif

#endif /* _RCVFIX_BPF_LEGACY_H */
