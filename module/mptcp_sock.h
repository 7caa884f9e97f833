/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rcvfix reads of the kernel's private struct mptcp_sock (net/mptcp/
 * protocol.h, which no header package ships): where its subflows are,
 * from the running kernel's BTF, and its u64 members.
 */
#ifndef _RCVFIX_MPTCP_SOCK_H
#define _RCVFIX_MPTCP_SOCK_H

#include <linux/compiler.h>
#include <linux/list.h>
#include <linux/types.h>
#include <net/inet_connection_sock.h>

struct sock;

/*
 * A subflow's sk_data_ready and sk_state_change, where MPTCP's data reaches
 * the msk (the SO_RCVLOWAT fix: mptcp_lowat.c); the second also records a
 * fallen-back msk's DATA_FIN (mptcp_datafin.c).
 */
#define RCVFIX_MPTCP_SUBFLOW_DATA_READY "subflow_data_ready"
#define RCVFIX_MPTCP_STATE_CHANGE "subflow_state_change"

/* Where the subflows are, set once by rcvfix_msk_layout_init(). */
extern u32 rcvfix_msk_conn_list, rcvfix_msk_first_off, rcvfix_msk_ack_seq;
extern u32 rcvfix_subflow_node, rcvfix_subflow_tcp_sock, rcvfix_subflow_conn;

int rcvfix_msk_layout_init(char *why, size_t why_len);

/* The u64 member of struct mptcp_sock at byte @offset of @msk. */
static __always_inline u64 rcvfix_msk_u64(const struct sock *msk, u32 offset)
{
	return READ_ONCE(*(const u64 *)((const void *)msk + offset));
}

/* The msk's list of established subflows (mptcp_sock.conn_list). */
static __always_inline struct list_head *rcvfix_msk_subflows(struct sock *msk)
{
	return (struct list_head *)((char *)msk + rcvfix_msk_conn_list);
}

/* The subflow (its TCP socket) of the list entry @node of an msk. */
static __always_inline struct sock *rcvfix_subflow_sk(struct list_head *node)
{
	void *ctx = (char *)node - rcvfix_subflow_node;

	return *(struct sock **)((char *)ctx + rcvfix_subflow_tcp_sock);
}

/*
 * The msk of the subflow @ssk (mptcp_subflow_context.conn): set before the
 * subflow can receive and kept for its life, so its receive path may read
 * it (subflow_data_ready() does). @ssk must be an MPTCP subflow.
 */
static __always_inline struct sock *rcvfix_subflow_msk(const struct sock *ssk)
{
	const void *ctx = (__force const void *)inet_csk(ssk)->icsk_ulp_data;

	return *(struct sock *const *)((const char *)ctx + rcvfix_subflow_conn);
}

/*
 * The msk's first subflow, or NULL once it is closed: the kernel frees it
 * only with the msk (its comment on mptcp_sock.first), so it may be read
 * without the msk's lock, as mptcp_poll() reads it.
 */
static __always_inline struct sock *rcvfix_msk_first(const struct sock *msk)
{
	return READ_ONCE(*(struct sock *const *)((const char *)msk +
						 rcvfix_msk_first_off));
}

/* The bool member of struct mptcp_sock at byte @offset of @msk. */
static __always_inline bool rcvfix_msk_bool(const struct sock *msk,
					    u32 offset)
{
	return READ_ONCE(*(const bool *)((const void *)msk + offset));
}

/*
 * Each subflow of @msk, while the caller owns the msk, or holds its data
 * lock (sk_lock.slock) and saw that nobody owns it: the kernel adds and
 * removes subflows only as the msk's owner, or under the data lock where
 * nobody owns it (6.12+'s __mptcp_flush_join_list() as the owner).
 */
#define rcvfix_msk_for_each_subflow(msk, pos) \
	list_for_each(pos, rcvfix_msk_subflows(msk))

#endif /* _RCVFIX_MPTCP_SOCK_H */
