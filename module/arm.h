/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When the redirect is armed: only while at least one namespace has
 * net.rcvfix.enable = 1. Counts those namespaces, arms the strategy's
 * hooks for the first and disarms them after the last, and steps aside
 * while a livepatch owns a hooked function.
 */
#ifndef _RCVFIX_ARM_H
#define _RCVFIX_ARM_H

#include <linux/seq_file.h>
#include <linux/types.h>

struct rcvfix_hook;

int rcvfix_arm_init(struct rcvfix_hook *const *hooks, unsigned int n);
int rcvfix_arm_get(void);
void rcvfix_arm_put(void);
void rcvfix_arm_put_deferred(void);
void rcvfix_arm_close(void);
void rcvfix_arm_exit(void);
void rcvfix_arm_show(struct seq_file *m);

#endif /* _RCVFIX_ARM_H */
