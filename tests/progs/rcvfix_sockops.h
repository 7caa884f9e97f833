/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layout of the two maps shared by rcvfix_sockops.bpf.c (cgroup sockops
 * program calling bpf_setsockopt(SO_RCVBUF), cgroup setsockopt program
 * setting SO_RCVLOWAT) and its loader bpf_rcvbuf.c.
 */
#ifndef RCVFIX_SOCKOPS_H
#define RCVFIX_SOCKOPS_H

/* Where the program calls bpf_setsockopt(SOL_SOCKET, SO_RCVBUF, val). */
enum rcvfix_sockops_hook {
	RCVFIX_HOOK_CONNECT,	/* BPF_SOCK_OPS_TCP_CONNECT_CB: before SYN */
	RCVFIX_HOOK_PASSIVE,	/* BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB */
	RCVFIX_HOOK_ACTIVE,	/* BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB */
	RCVFIX_HOOK_TIMEOUT,	/* BPF_SOCK_OPS_TIMEOUT_INIT, request socket */
	RCVFIX_HOOK_RWND,	/* BPF_SOCK_OPS_RWND_INIT, request socket */
	RCVFIX_HOOK_LOWAT,	/* cgroup/setsockopt: SO_RCVLOWAT set by BPF */
	RCVFIX_HOOK_MAX
};

struct rcvfix_sockops_cfg {
	__u32 enabled;		/* bit (1 << hook): act at that hook */
	__u32 port;		/* only connections with this port; 0: all */
	__s32 val[RCVFIX_HOOK_MAX];	/* SO_RCVBUF value per hook */
};

struct rcvfix_sockops_res {
	__u32 calls;		/* bpf_setsockopt() calls made */
	__s32 rc;		/* last bpf_setsockopt() return */
	__s32 rcvbuf;		/* bpf_getsockopt(SO_RCVBUF) after it
				 * (RCVFIX_HOOK_LOWAT: SO_RCVLOWAT) */
	__s32 get_rc;		/* bpf_getsockopt() return */
};

#endif /* RCVFIX_SOCKOPS_H */
