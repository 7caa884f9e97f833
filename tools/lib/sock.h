/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Socket constants the rcvfix programs use that older libc headers lack:
 * SO_BUF_LOCK and the bits it reports. Header-only; includes libc only.
 */
#ifndef RCVFIX_LIB_SOCK_H
#define RCVFIX_LIB_SOCK_H

#include <sys/socket.h>

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72 /* since Linux 5.15 */
#endif

/* SOCK_SNDBUF_LOCK and SOCK_RCVBUF_LOCK as SO_BUF_LOCK reports them. */
#define BUF_LOCK_SND 1
#define BUF_LOCK_RCV 2

#endif /* RCVFIX_LIB_SOCK_H */
