/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions rcvfix hooks: resolved at load, handed to arm.c, listed
 * in /proc/net/rcvfix and the load log line.
 */
#ifndef _RCVFIX_TARGETS_H
#define _RCVFIX_TARGETS_H

#include <linux/seq_file.h>

struct rcvfix_hook;

int rcvfix_targets_init(void);
struct rcvfix_hook *const *rcvfix_targets_hooks(unsigned int *n);
const char *rcvfix_targets_names(void);
void rcvfix_targets_show(struct seq_file *m);
void rcvfix_targets_show_parts(struct seq_file *m);

#endif /* _RCVFIX_TARGETS_H */
