/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/net/rcvfix in every network namespace: created after the
 * namespaces' state, removed before it.
 */
#ifndef _RCVFIX_STATUS_H
#define _RCVFIX_STATUS_H

int rcvfix_status_init(void);
void rcvfix_status_exit(void);

#endif /* _RCVFIX_STATUS_H */
