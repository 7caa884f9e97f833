// SPDX-License-Identifier: GPL-2.0
/*
 * Not one byte lost: a fallen-back MPTCP socket's DATA_FIN placed after the
 * data its subflow still holds (issue 50).
 *
 * An msk whose peer speaks no MPTCP (fallback) receives no DSS, so when
 * its subflow's receive side closes, 6.12's subflow_state_change()
 * (net/mptcp/subflow.c:1927-1932) records a "dummy" DATA_FIN:
 *
 *	if (__mptcp_check_fallback(msk) && subflow_is_done(sk) &&
 *	    msk->first == sk &&
 *	    mptcp_update_rcv_data_fin(msk, READ_ONCE(msk->ack_seq), true))
 *
 * at the msk's ack_seq: the end of what has reached the msk so far. Data
 * may still be queued on the subflow then: when the msk is over its
 * sk_rcvbuf, mptcp_data_ready() and __mptcp_move_skbs_from_subflow()
 * (protocol.c:950-951, 785-788) leave it there for recvmsg(). The peer's
 * FIN lies after that data, the dummy DATA_FIN before it:
 * mptcp_check_data_fin() (protocol.c:635-680) counts it at once (ack_seq
 * + 1, RCV_SHUTDOWN), and when recvmsg() moves the queued data,
 * __mptcp_move_skb() (protocol.c:428-439) takes its first byte for one
 * already received and drops it. The reader gets one byte less, from the
 * middle of the stream, and no error.
 *
 * The data parks there when the window the subflow has offered exceeds
 * what the msk's buffer takes: an msk whose buffer autotuning grew, then
 * shrunk by SO_RCVBUF while connected (stock's SO_RCVBUF does that too,
 * but locks the buffer, so on a socket that sets it at every connect it
 * never grows again; rcvfix's rule leaves it unlocked, as the fix wants).
 * 6.1 places it in subflow_sched_work_if_closed(), only with the
 * subflow's receive queue empty; 7.x too, at the end of its last mapping.
 *
 * Where the fix is on, rcvfix places that DATA_FIN where 7.x does: after
 * the data still queued on the subflow, at the peer's FIN.
 * mptcp_update_rcv_data_fin() is redirected only when subflow_state_change()
 * calls it (its return address lies in that function) while the subflow
 * has data queued; its other callers (the DSS of an msk that did not fall
 * back, 7.x's subflow_sched_work_if_closed() with an empty queue) run the
 * kernel's code, and so does every call in a disabled namespace. The
 * caller holds the subflow's lock (its receive path), under which alone
 * data leaves the subflow for the msk.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/skbuff.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "btf_layout.h"
#include "hook.h"
#include "mptcp_datafin.h"
#include "mptcp_sock.h"
#include "netns.h"

/* The code of subflow_state_change(), found at load. */
static unsigned long rcvfix_state_change_start, rcvfix_state_change_end;
/* Where the msk's ack_seq is, from BTF. */
static u32 rcvfix_datafin_ack_seq;

/* The kernel's mptcp_update_rcv_data_fin(), which the replacement calls. */
static bool (*rcvfix_update_rcv_data_fin)(struct sock *msk, u64 seq,
					  bool use_64bit);

/**
 * rcvfix_mptcp_datafin_init - can rcvfix tell the dummy DATA_FIN's call?
 *
 * Finds the code of subflow_state_change(); the msk's first subflow comes
 * from mptcp_sock.c's layout, read already. Returns false, with one log
 * line, where either is missing: the kernel's code runs then.
 */
bool rcvfix_mptcp_datafin_init(void)
{
	struct rcvfix_btf_field f[] = {
		{ "mptcp_sock", "ack_seq", sizeof(u64) },
	};
	char why[160] = "";
	int ret = rcvfix_hook_symbol_range(RCVFIX_MPTCP_STATE_CHANGE,
					   &rcvfix_state_change_start,
					   &rcvfix_state_change_end);

	if (ret) {
		pr_info("%s: %s not found (%d); left to the kernel\n",
			RCVFIX_MPTCP_DATA_FIN, RCVFIX_MPTCP_STATE_CHANGE, ret);
		return false;
	}
	if (rcvfix_btf_find_fields(f, ARRAY_SIZE(f), why, sizeof(why))) {
		pr_info("%s: %s; left to the kernel\n", RCVFIX_MPTCP_DATA_FIN,
			why);
		return false;
	}
	rcvfix_datafin_ack_seq = f[0].offset;
	return true;
}

/* The hook is resolved, with the entry of the function it redirects. */
void rcvfix_mptcp_datafin_hooked(const struct rcvfix_hook *hook)
{
	rcvfix_update_rcv_data_fin = (void *)hook->func;
}

/*
 * The bytes on @ssk's receive queue not yet moved to its msk, walked as
 * __mptcp_move_skbs_from_subflow() moves them (a FIN takes a sequence
 * number, no data).
 */
static u32 rcvfix_subflow_queued(struct sock *ssk)
{
	u32 seq = tcp_sk(ssk)->copied_seq, queued = 0;
	struct sk_buff *skb;

	skb_queue_walk(&ssk->sk_receive_queue, skb) {
		u32 offset = seq - TCP_SKB_CB(skb)->seq;

		if (TCP_SKB_CB(skb)->tcp_flags & TCPHDR_FIN)
			seq++;
		if (offset < skb->len) {
			queued += skb->len - offset;
			seq += skb->len - offset;
		}
	}
	return queued;
}

static bool rcvfix_mptcp_update_rcv_data_fin(struct sock *msk, u64 seq,
					     bool use_64bit)
{
	struct sock *ssk = rcvfix_msk_first(msk);
	bool ret;

	if (ssk)
		seq += rcvfix_subflow_queued(ssk);
	ret = rcvfix_update_rcv_data_fin(msk, seq, use_64bit);
	rcvfix_hook_done();
	return ret;
}

/*
 * mptcp_update_rcv_data_fin(msk, data_fin_seq, use_64bit): redirected
 * for subflow_state_change()'s dummy DATA_FIN, in an enabled namespace,
 * while the msk's first subflow (the one whose receive side closed: the
 * kernel checks msk->first == sk) has data queued.
 */
void notrace rcvfix_mptcp_datafin_entry(unsigned long ip,
					unsigned long parent_ip,
					struct ftrace_ops *ops,
					struct ftrace_regs *fregs)
{
	struct sock *msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);
	u64 seq = rcvfix_fregs_arg(fregs, 1);
	bool use_64bit = rcvfix_fregs_arg(fregs, 2);
	struct sock *ssk;

	/*
	 * Only the dummy DATA_FIN: 64 bits, at the msk's ack_seq (a real
	 * DATA_FIN from a DSS, were its code ever inlined there, is not).
	 */
	if (parent_ip < rcvfix_state_change_start ||
	    parent_ip >= rcvfix_state_change_end || !use_64bit ||
	    seq != rcvfix_msk_u64(msk, rcvfix_datafin_ack_seq) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	ssk = rcvfix_msk_first(msk);
	if (!ssk || skb_queue_empty_lockless(&ssk->sk_receive_queue))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_update_rcv_data_fin);
}
