/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels rcvfix supports (6.1 and newer), kept in
 * one place. Kbuild probes the kernel tree and defines RCVFIX_HAVE_*; the
 * rest of the module uses only the names below. Force-included everywhere.
 */
#ifndef _RCVFIX_COMPAT_H
#define _RCVFIX_COMPAT_H

#include <linux/kconfig.h>

#if !IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_ARGS) && \
	!IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_REGS)
#error "rcvfix needs CONFIG_DYNAMIC_FTRACE_WITH_ARGS or _WITH_REGS"
#endif
#if !IS_ENABLED(CONFIG_KPROBES)
#error "rcvfix needs CONFIG_KPROBES (to resolve function addresses)"
#endif
#if !IS_ENABLED(CONFIG_NET_NS) || !IS_ENABLED(CONFIG_SYSCTL) || \
	!IS_ENABLED(CONFIG_PROC_FS)
#error "rcvfix needs CONFIG_NET_NS, CONFIG_SYSCTL and CONFIG_PROC_FS"
#endif

/*
 * Linux 6.11 made the ctl_table handed to proc handlers const; 6.6 added
 * register_net_sysctl_sz() and made the terminating empty entry optional
 * (6.11 rejects it: an entry without procname is an error).
 */
#ifdef RCVFIX_HAVE_CONST_CTL_TABLE
#define rcvfix_ctl_table_arg const struct ctl_table
#else
#define rcvfix_ctl_table_arg struct ctl_table
#endif

#ifdef RCVFIX_HAVE_REGISTER_NET_SYSCTL_SZ
#define RCVFIX_CTL_TABLE_END
#define rcvfix_register_net_sysctl(net, path, table, n) \
	register_net_sysctl_sz(net, path, table, n)
#else
#define RCVFIX_CTL_TABLE_END {}
#define rcvfix_register_net_sysctl(net, path, table, n) \
	register_net_sysctl(net, path, table)
#endif

/*
 * Arguments and the resume address of a function entered through ftrace.
 * Linux 6.12 hides struct ftrace_regs behind accessors; 6.1 exposes the
 * pt_regs inside it and names the setter ftrace_instruction_pointer_set().
 */
#ifdef RCVFIX_HAVE_FTRACE_REGS_GET_ARGUMENT
#define rcvfix_fregs_arg(fregs, n) ftrace_regs_get_argument(fregs, n)
#else
#define rcvfix_fregs_arg(fregs, n) \
	regs_get_kernel_argument(&(fregs)->regs, n)
#endif

#ifdef RCVFIX_HAVE_FTRACE_REGS_SET_IP
#define rcvfix_fregs_set_ip(fregs, ip) \
	ftrace_regs_set_instruction_pointer(fregs, ip)
#else
#define rcvfix_fregs_set_ip(fregs, ip) ftrace_instruction_pointer_set(fregs, ip)
#endif

/*
 * Linux 7.1 made __sock_set_rcvbuf() end with the protocol's set_rcvbuf
 * operation (TCP: tcp_set_rcvbuf() makes the window clamp follow the new
 * buffer). Before, there is no such operation: NULL, so nothing is called.
 */
#ifdef RCVFIX_HAVE_PROTO_OPS_SET_RCVBUF
#define rcvfix_proto_ops_set_rcvbuf(ops) ((ops)->set_rcvbuf)
#else
#define rcvfix_proto_ops_set_rcvbuf(ops) \
	((void)(ops), (void (*)(struct sock *, int))NULL)
#endif

#endif /* _RCVFIX_COMPAT_H */
