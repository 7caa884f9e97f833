/* SPDX-License-Identifier: GPL-2.0 */
/* The module's version; dkms.conf and the Debian changelog must match it. */
#ifndef _RCVFIX_VERSION_H
#define _RCVFIX_VERSION_H

#define RCVFIX_VERSION "0.2.0"

#endif /* _RCVFIX_VERSION_H */
