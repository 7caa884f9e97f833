/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When the redirect is armed: while at least one namespace has
 * net.rcvfix.enable = 1, and for a hold-off after the last one. Counts
 * those namespaces, arms the strategy's hooks for the first and disarms
 * them after the last (held off while a livepatch owns a hooked
 * function: livepatch.c), and says whether the hooks are in force (every
 * one armed).
 */
#ifndef _RCVFIX_ARM_H
#define _RCVFIX_ARM_H

#include <linux/compiler.h>
#include <linux/seq_file.h>
#include <linux/types.h>

struct rcvfix_hook;

extern bool rcvfix_hooks_in_force;

/**
 * rcvfix_arm_in_force - is every hook armed?
 *
 * Hooks are armed and disarmed one by one; an entry callback must not
 * apply the rule while some are and others are not. True only from the
 * moment the last hook is armed until the first is about to be disarmed
 * (arm.c). Read by rcvfix_rn_enabled() (netns.h), so every callback and
 * every replacement's second look under the socket lock go by it.
 */
static __always_inline bool rcvfix_arm_in_force(void)
{
	return READ_ONCE(rcvfix_hooks_in_force);
}

int rcvfix_arm_init(struct rcvfix_hook *const *hooks, unsigned int n);
int rcvfix_arm_get(void);
void rcvfix_arm_demand(void);
bool rcvfix_arm_demand_armed(void);
bool rcvfix_arm_has_demand_hooks(void);
void rcvfix_arm_put(void);
void rcvfix_arm_put_deferred(void);
void rcvfix_arm_close(void);
void rcvfix_arm_exit(void);
void rcvfix_arm_show(struct seq_file *m);

#endif /* _RCVFIX_ARM_H */
