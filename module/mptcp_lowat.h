/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SO_RCVLOWAT wakeup rule for MPTCP sockets, decided as TCP decides
 * it: on kernels whose MPTCP wakes on any byte (before Linux 6.7), and on
 * those whose rule lacks TCP's wakeup when the queue cannot grow.
 */
#ifndef _RCVFIX_MPTCP_LOWAT_H
#define _RCVFIX_MPTCP_LOWAT_H

#include <linux/types.h>

struct rcvfix_hook;
struct sock;

/* The functions whose results rcvfix filters (see mptcp_lowat.c). */
#define RCVFIX_MPTCP_POLL "mptcp_poll"
#define RCVFIX_MPTCP_SET_RCVLOWAT "mptcp_set_rcvlowat"	/* 6.7+ */

void rcvfix_mptcp_lowat_detect(void);
bool rcvfix_mptcp_lowat_mptcp_exists(void);
bool rcvfix_mptcp_lowat_wanted(void);
bool rcvfix_mptcp_lowat_wants_set_rcvlowat(void);
void rcvfix_mptcp_lowat_unavailable(const char *func, int err);
void rcvfix_mptcp_lowat_hooked(const struct rcvfix_hook *data_ready,
			       const struct rcvfix_hook *state_change,
			       const struct rcvfix_hook *poll,
			       const struct rcvfix_hook *release_cb,
			       const struct rcvfix_hook *set_rcvlowat);
const char *rcvfix_mptcp_lowat_state(void);

#endif /* _RCVFIX_MPTCP_LOWAT_H */
