// SPDX-License-Identifier: GPL-2.0
/*
 * What rcvfix reads of the kernel's private struct mptcp_sock: the layout
 * of its subflow list, found once in the running kernel's BTF and checked
 * against this module's view of struct sock (mptcp_sock.sk at 0), for the
 * buffer sync (mptcp.c) and the SO_RCVLOWAT rule (mptcp_lowat.c) alike.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/string.h>
#include <net/inet_connection_sock.h>

#include "btf_layout.h"
#include "mptcp_sock.h"

u32 rcvfix_msk_conn_list, rcvfix_msk_first_off, rcvfix_msk_ack_seq;
u32 rcvfix_subflow_node, rcvfix_subflow_tcp_sock, rcvfix_subflow_conn;

/* The outcome of the first rcvfix_msk_layout_init(), kept for the other. */
static int rcvfix_msk_layout_err = 1;	/* 1: not read yet */
static char rcvfix_msk_layout_why[160];

/**
 * rcvfix_msk_layout_init - where are an msk's subflows?
 * @why: where to say why not
 * @why_len: its size
 *
 * Reads the layout at load (once: a second caller gets the first one's
 * answer). Returns 0, or an error with @why set: rcvfix must then leave
 * MPTCP sockets to the kernel.
 */
int rcvfix_msk_layout_init(char *why, size_t why_len)
{
	struct rcvfix_btf_field f[] = {
		{ "mptcp_sock", "sk", sizeof(struct inet_connection_sock) },
		{ "mptcp_sock", "conn_list", sizeof(struct list_head) },
		{ "mptcp_sock", "first", sizeof(struct sock *) },
		{ "mptcp_subflow_context", "node", sizeof(struct list_head) },
		{ "mptcp_subflow_context", "tcp_sock", sizeof(struct sock *) },
		{ "mptcp_subflow_context", "conn", sizeof(struct sock *) },
		/* the data sequence number after the last byte moved to it */
		{ "mptcp_sock", "ack_seq", sizeof(u64) },
	};
	int err;

	if (rcvfix_msk_layout_err <= 0)
		goto out;
	err = rcvfix_btf_find_fields(f, ARRAY_SIZE(f), rcvfix_msk_layout_why,
				     sizeof(rcvfix_msk_layout_why));
	if (!err && f[0].offset) {
		snprintf(rcvfix_msk_layout_why, sizeof(rcvfix_msk_layout_why),
			 "mptcp_sock.sk is at %u, not 0", f[0].offset);
		err = -EINVAL;
	}
	if (!err) {
		rcvfix_msk_conn_list = f[1].offset;
		rcvfix_msk_first_off = f[2].offset;
		rcvfix_subflow_node = f[3].offset;
		rcvfix_subflow_tcp_sock = f[4].offset;
		rcvfix_subflow_conn = f[5].offset;
		rcvfix_msk_ack_seq = f[6].offset;
	}
	rcvfix_msk_layout_err = err;
out:
	if (rcvfix_msk_layout_err)
		strscpy(why, rcvfix_msk_layout_why, why_len);
	return rcvfix_msk_layout_err;
}
