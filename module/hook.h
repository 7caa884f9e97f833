/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Livepatch-style redirection of a kernel function to a replacement in this
 * module: an IP-modifying ftrace_ops at the function's entry, and the
 * bookkeeping that makes unloading safe while replacements are running.
 */
#ifndef _RCVFIX_HOOK_H
#define _RCVFIX_HOOK_H

#include <linux/ftrace.h>
#include <linux/types.h>

struct rcvfix_hook {
	const char *name;		/* the function to redirect */
	ftrace_func_t entry;		/* decides, per call, to redirect */
	unsigned long addr;		/* its ftrace location, once resolved */
	struct ftrace_ops ops;
	bool armed;
};

int rcvfix_hook_resolve(struct rcvfix_hook *hook);
int rcvfix_hook_arm(struct rcvfix_hook *hook);
void rcvfix_hook_disarm(struct rcvfix_hook *hook);
void rcvfix_hook_quiesce(void);

void rcvfix_hook_redirect(struct ftrace_regs *fregs, void *replacement);
void rcvfix_hook_done(void);

#endif /* _RCVFIX_HOOK_H */
