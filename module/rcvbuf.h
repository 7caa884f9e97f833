/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SO_RCVBUF lock fix: which functions it redirects on the running
 * kernel (the strategy), and the replacements it sends calls to.
 */
#ifndef _RCVFIX_RCVBUF_H
#define _RCVFIX_RCVBUF_H

#include <linux/seq_file.h>
#include <net/sock.h>

#include "netns.h"

int rcvfix_rcvbuf_init(void);
void rcvfix_rcvbuf_exit(void);
const char *rcvfix_rcvbuf_strategy(void);
const char *rcvfix_rcvbuf_targets(void);
void rcvfix_rcvbuf_show(struct seq_file *m);
void rcvfix_set_rcvbuf(struct sock *sk, int val, enum rcvfix_path path);

#endif /* _RCVFIX_RCVBUF_H */
