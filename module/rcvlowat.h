/* SPDX-License-Identifier: GPL-2.0 */
/* Whether the running kernel already gates TCP wakeups on SO_RCVLOWAT. */
#ifndef _RCVFIX_RCVLOWAT_H
#define _RCVFIX_RCVLOWAT_H

#include <linux/seq_file.h>

void rcvfix_rcvlowat_detect(void);
const char *rcvfix_rcvlowat_state(void);
void rcvfix_rcvlowat_show(struct seq_file *m);

#endif /* _RCVFIX_RCVLOWAT_H */
