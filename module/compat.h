/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels rcvfix supports (5.10 and newer), kept in
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
 * Before 5.11 there is no struct ftrace_regs: callbacks get the pt_regs
 * themselves (ftrace_func_t's last argument), so the name stands for them.
 */
#ifdef RCVFIX_HAVE_FTRACE_REGS_GET_ARGUMENT
#define rcvfix_fregs_arg(fregs, n) ftrace_regs_get_argument(fregs, n)
#elif defined(RCVFIX_HAVE_FTRACE_REGS)
#define rcvfix_fregs_arg(fregs, n) \
	regs_get_kernel_argument(&(fregs)->regs, n)
#else
#define ftrace_regs pt_regs
#define rcvfix_fregs_arg(fregs, n) regs_get_kernel_argument(fregs, n)
#endif

#ifdef RCVFIX_HAVE_FTRACE_REGS_SET_IP
#define rcvfix_arch_fregs_set_ip(fregs, ip) \
	ftrace_regs_set_instruction_pointer(fregs, ip)
#elif defined(RCVFIX_HAVE_FTRACE_REGS)
#define rcvfix_arch_fregs_set_ip(fregs, ip) \
	ftrace_instruction_pointer_set(fregs, ip)
#endif

/*
 * rcvfix_fregs_set_ip(fregs, ip): make the function entered through ftrace
 * resume at ip once the callback returns; false where nothing could be
 * redirected. Without HAVE_DYNAMIC_FTRACE_WITH_ARGS the kernel's setter
 * above is an empty fallback: there the hooks are registered with
 * FTRACE_OPS_FL_SAVE_REGS (rcvfix_hook_arm()) and the full pt_regs are
 * set instead. The only place that sets the IP: a kernel whose callback
 * gets a struct pt_regs * (before 5.11) adapts it here.
 */
#if !defined(RCVFIX_HAVE_FTRACE_REGS)
/* Before 5.11 "fregs" are the pt_regs, NULL unless SAVE_REGS was asked. */
#define rcvfix_fregs_set_ip(fregs, ip)					\
	({								\
		struct pt_regs *__regs = (fregs);			\
									\
		if (__regs)						\
			instruction_pointer_set(__regs, ip);		\
		!!__regs;						\
	})
#elif defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS)
#define rcvfix_fregs_set_ip(fregs, ip) \
	({ rcvfix_arch_fregs_set_ip(fregs, ip); true; })
#else
#define rcvfix_fregs_set_ip(fregs, ip)					\
	({								\
		struct pt_regs *__regs = ftrace_get_regs(fregs);	\
									\
		if (__regs)						\
			instruction_pointer_set(__regs, ip);		\
		!!__regs;						\
	})
#endif

/*
 * rcvfix_fregs_set_arg1(fregs, val): the function entered through ftrace
 * gets @val as its second argument. ftrace's trampolines load the argument
 * registers back from the saved ones once the callbacks have run (x86's
 * restore_mcount_regs, arm64's ftrace_caller), so the function's own code
 * runs with it: nothing is called. The kernel has no accessor for it; the
 * saved registers are pt_regs on x86 (inside struct ftrace_regs since 5.11,
 * behind arch_ftrace_regs() since 6.12) and on arm64 without
 * DYNAMIC_FTRACE_WITH_ARGS (6.1), an array on arm64 with it.
 */
#ifdef RCVFIX_HAVE_ARCH_FTRACE_REGS
#define rcvfix_fregs_saved(fregs) arch_ftrace_regs(fregs)
#else
#define rcvfix_fregs_saved(fregs) (fregs)
#endif
#if defined(CONFIG_X86_64) && defined(RCVFIX_HAVE_FTRACE_REGS)
#define rcvfix_fregs_set_arg1(fregs, val) \
	(rcvfix_fregs_saved(fregs)->regs.si = (val))
#elif defined(CONFIG_X86_64)
#define rcvfix_fregs_set_arg1(fregs, val) ((fregs)->si = (val))
#elif defined(CONFIG_ARM64) && defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS)
#define rcvfix_fregs_set_arg1(fregs, val) \
	(rcvfix_fregs_saved(fregs)->regs[1] = (val))
#elif defined(CONFIG_ARM64) && defined(RCVFIX_HAVE_FTRACE_REGS)
/* 6.1: the generic struct ftrace_regs, full pt_regs (SAVE_REGS: hook.c) */
#define rcvfix_fregs_set_arg1(fregs, val) ((fregs)->regs.regs[1] = (val))
#elif defined(CONFIG_ARM64)
#define rcvfix_fregs_set_arg1(fregs, val) ((fregs)->regs[1] = (val))
#else
#error "rcvfix: no rcvfix_fregs_set_arg1() for this architecture"
#endif

/*
 * Linux 7.1 made __sock_set_rcvbuf() end with the protocol's set_rcvbuf
 * operation (TCP: tcp_set_rcvbuf() makes the window clamp follow the new
 * buffer). Before, there is no such operation: NULL, so nothing is called.
 */
#ifdef RCVFIX_HAVE_PROTO_OPS_SET_RCVBUF
#define rcvfix_proto_ops_set_rcvbuf(ops) ((ops)->set_rcvbuf)
#define RCVFIX_STOCK_SETS_CLAMP true
#else
#define RCVFIX_STOCK_SETS_CLAMP false
#define rcvfix_proto_ops_set_rcvbuf(ops) \
	((void)(ops), (void (*)(struct sock *, int))NULL)
#endif

/*
 * ftrace_free_filter() is exported since 6.0. Before, reset the filter of
 * an unregistered ftrace_ops with the exported ftrace_set_filter(), as
 * livepatch did then: the ops keep their emptied hashes, to be filled
 * again when the hook is armed next (RCVFIX_FTRACE_OPS_REUSE). Since 6.0
 * the hashes are freed but the pointers to them stay, so the ops must be
 * zeroed before they are used again.
 */
#ifdef RCVFIX_HAVE_FTRACE_FREE_FILTER
#define rcvfix_ftrace_free_filter(ops) ftrace_free_filter(ops)
#define RCVFIX_FTRACE_OPS_REUSE false
#else
#define rcvfix_ftrace_free_filter(ops) \
	((void)ftrace_set_filter(ops, NULL, 0, 1))
#define RCVFIX_FTRACE_OPS_REUSE true
#endif

/*
 * Waits until no CPU walks ftrace's list of ops with a pointer to an ops
 * it has just unlinked: the walk runs with preemption disabled, also where
 * RCU is not watching (idle, entry code), which only a "rude" RCU-tasks
 * grace period covers, as ftrace_shutdown() uses. Exported wherever
 * CONFIG_TASKS_RUDE_RCU is set (every ftrace kernel Debian ships);
 * synchronize_rcu() is the nearest elsewhere.
 */
#ifdef RCVFIX_HAVE_SYNC_RCU_TASKS_RUDE
#define rcvfix_sync_ftrace_walkers() synchronize_rcu_tasks_rude()
#else
#define rcvfix_sync_ftrace_walkers() synchronize_rcu()
#endif

/*
 * Whether @mod is a livepatch (MODULE_INFO(livepatch, "Y"), checked by the
 * module loader): struct module has the flag only with CONFIG_LIVEPATCH,
 * and without it no module is one.
 */
#ifdef CONFIG_LIVEPATCH
#define rcvfix_module_is_livepatch(mod) ((mod)->klp)
#else
#define rcvfix_module_is_livepatch(mod) ((void)(mod), false)
#endif

/*
 * The SOL_SOCKET setsockopt entry. Linux 6.0 split sk_setsockopt(struct
 * sock *, ...) out of sock_setsockopt(struct socket *, ...) so that
 * bpf_setsockopt() could share it, with sockopt_lock_sock() and
 * sockopt_capable() skipping the lock and the capability check when a BPF
 * program (has_current_bpf_ctx()) already holds the socket locked. Before,
 * sock_setsockopt() serves user space only: it always locks and checks.
 */
#ifdef RCVFIX_HAVE_SK_SETSOCKOPT
#define RCVFIX_SETSOCKOPT_NAME "sk_setsockopt"
#define rcvfix_setsockopt_obj sock
#define rcvfix_setsockopt_sk(obj) (obj)
#else
#define RCVFIX_SETSOCKOPT_NAME "sock_setsockopt"
#define rcvfix_setsockopt_obj socket
#define rcvfix_setsockopt_sk(obj) ((obj)->sk)
#endif

#ifndef RCVFIX_HAVE_CURRENT_BPF_CTX
#define has_current_bpf_ctx() false
#endif

#ifdef RCVFIX_BPF_LEGACY
#define sockopt_lock_sock(sk) lock_sock(sk)
#define sockopt_release_sock(sk) release_sock(sk)
#define sockopt_capable(cap) capable(cap)
#endif

#endif /* _RCVFIX_COMPAT_H */
