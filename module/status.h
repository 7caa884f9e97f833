/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/net/rcvfix in every network namespace: created after the
 * namespaces' state, removed before it; and the module's signature.
 */
#ifndef _RCVFIX_STATUS_H
#define _RCVFIX_STATUS_H

int rcvfix_status_init(void);
void rcvfix_status_exit(void);
/* verified, unverified or unchecked: the module's signature at load */
const char *rcvfix_status_signature(void);

#endif /* _RCVFIX_STATUS_H */
