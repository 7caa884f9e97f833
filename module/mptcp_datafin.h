/* SPDX-License-Identifier: GPL-2.0 */
/* A fallen-back MPTCP socket's DATA_FIN after the data its subflow holds. */
#ifndef _RCVFIX_MPTCP_DATAFIN_H
#define _RCVFIX_MPTCP_DATAFIN_H

#include <linux/ftrace.h>
#include <linux/types.h>

/* Where an msk's DATA_FIN is recorded (net/mptcp/options.c). */
#define RCVFIX_MPTCP_DATA_FIN "mptcp_update_rcv_data_fin"

struct rcvfix_hook;

bool rcvfix_mptcp_datafin_init(void);
bool rcvfix_mptcp_datafin_needed(struct rcvfix_hook *hook);
void rcvfix_mptcp_datafin_entry(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *ops,
				struct ftrace_regs *fregs);

#endif /* _RCVFIX_MPTCP_DATAFIN_H */
