/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Livepatch-style redirection of kernel functions to replacements in this
 * module: an IP-modifying ftrace_ops at each function's entry (or, for an
 * observing hook, one that only acts before the function runs), sets of
 * hooks armed one by one (all or nothing once done: the caller says when
 * a set is in force), and the bookkeeping that makes disarming and
 * unloading safe while replacements are running.
 */
#ifndef _RCVFIX_HOOK_H
#define _RCVFIX_HOOK_H

#include <linux/atomic.h>
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/types.h>

struct rcvfix_hook {
	const char *name;		/* the function to redirect */
	ftrace_func_t entry;		/* decides, per call, to redirect */
	unsigned long addr;		/* its ftrace location, once resolved */
	unsigned long func;		/* its entry, for calling it (find_entry) */
	struct ftrace_ops ops;
	bool optional;			/* may be missing from a kernel */
	bool observe;			/* acts at the entry, never redirects */
	bool on_demand;			/* armed at a socket's first need (arm.c) */
	bool armed;			/* registered with ftrace */
	bool stuck;			/* ftrace refused to unregister it */
};

int rcvfix_hook_resolve(struct rcvfix_hook *hook);
int rcvfix_hook_find_entry(struct rcvfix_hook *hook);
int rcvfix_hook_check_callee(const char *name, unsigned long entry);
void rcvfix_hook_show_callees(struct seq_file *m);
int rcvfix_hook_symbol_range(const char *name, unsigned long *start,
			     unsigned long *end);
int rcvfix_hooks_arm(struct rcvfix_hook *const *hooks, unsigned int n,
		     struct rcvfix_hook *first, struct rcvfix_hook **failed);
void rcvfix_hooks_disarm(struct rcvfix_hook *const *hooks, unsigned int n);
const char *rcvfix_hook_owner(struct rcvfix_hook *hook, int err);
const char *rcvfix_hook_errno_name(int err);
void rcvfix_hook_quiesce(void);

/* Tasks sent to a replacement that have not finished it yet. */
extern atomic_t rcvfix_hook_inflight;

void rcvfix_hook_pin_module(const char *why);

/**
 * rcvfix_hook_redirect - send the current call to @replacement
 * @fregs: the registers ftrace saved at the function's entry
 * @replacement: a function with the same prototype as the hooked one,
 *	which must call rcvfix_hook_done() as its last act
 *
 * Only called from an entry callback, so the hook is armed and its
 * disarming has not returned yet (see rcvfix_hook_quiesce()). The count
 * goes up before the callback returns, that is before the task can run
 * the replacement; it does not where the kernel cannot redirect.
 */
static __always_inline void rcvfix_hook_redirect(struct ftrace_regs *fregs,
						 void *replacement)
{
	atomic_inc(&rcvfix_hook_inflight);
	if (!rcvfix_fregs_set_ip(fregs, (unsigned long)replacement))
		atomic_dec(&rcvfix_hook_inflight);
}

/**
 * rcvfix_hook_from_us - is the caller an entry callback sees in this module?
 * @parent_ip: the return address into the caller
 *
 * A replacement that wraps the function it replaces calls it (through
 * rcvfix_hook.func); the entry callback lets such a call through.
 */
static __always_inline bool rcvfix_hook_from_us(unsigned long parent_ip)
{
	return within_module(parent_ip, THIS_MODULE);
}

/*
 * rcvfix_hook_hold - a replacement leaves part of its work for later (a
 * task work, a work item): counted as still running until that part's
 * own rcvfix_hook_done(), so that an unload waits for it. Only from a
 * replacement (the count is above zero already).
 */
static __always_inline void rcvfix_hook_hold(void)
{
	atomic_inc(&rcvfix_hook_inflight);
}

/* rcvfix_hook_done - a replacement has finished (see rcvfix_hook_quiesce) */
static __always_inline void rcvfix_hook_done(void)
{
	atomic_dec(&rcvfix_hook_inflight);
}

#endif /* _RCVFIX_HOOK_H */
