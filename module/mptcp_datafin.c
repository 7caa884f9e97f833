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
 * the data still queued on the subflow, at the peer's FIN. Its entry
 * callback at mptcp_update_rcv_data_fin() moves the sequence number the
 * kernel passes (the function's second argument) past that data, and the
 * kernel's own function runs with it: nothing is redirected and nothing
 * called. (Calling it from here would be an indirect call into a function
 * the kernel calls only directly; on x86 kernels built with IBT, Debian's
 * 6.12 and 7.x, its entry is sealed and such a call traps on CPUs that
 * enforce IBT.) Only when subflow_state_change() calls it (its return
 * address lies in that function) while the subflow has data queued; its
 * other callers (the DSS of an msk that did not fall back, 6.1's and
 * 7.x's subflow_sched_work_if_closed() with an empty queue) get the
 * kernel's code, and so does every call in a disabled namespace. The
 * caller holds the subflow's lock (its receive path), under which alone
 * data leaves the subflow for the msk.
 *
 * Where subflow_state_change() calls mptcp_update_rcv_data_fin() itself
 * (6.12's shape; rcvfix_mptcp_datafin_needed() reads its code), the
 * SO_RCVBUF rule needs this part: without it MPTCP sockets keep stock's
 * locking SO_RCVBUF (targets.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/skbuff.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "hook.h"
#include "mptcp_datafin.h"
#include "mptcp_sock.h"
#include "netns.h"

/* The code of subflow_state_change(), found at load. */
static unsigned long rcvfix_state_change_start, rcvfix_state_change_end;

/**
 * rcvfix_mptcp_datafin_init - can rcvfix tell the dummy DATA_FIN's call?
 *
 * Finds the code of subflow_state_change(); the msk's first subflow and
 * ack_seq come from mptcp_sock.c's layout, read already. Returns false,
 * with one log line, where it is missing.
 */
bool rcvfix_mptcp_datafin_init(void)
{
	int ret = rcvfix_hook_symbol_range(RCVFIX_MPTCP_STATE_CHANGE,
					   &rcvfix_state_change_start,
					   &rcvfix_state_change_end);

	if (ret)
		pr_info("%s: %s not found (%d)\n", RCVFIX_MPTCP_DATA_FIN,
			RCVFIX_MPTCP_STATE_CHANGE, ret);
	return !ret;
}

/*
 * Does the code between @start and @end call (or jump to) the function at
 * @target: its entry, up to 4 bytes past it (its ftrace location, past an
 * ENDBR64) or the padding before it (x86's call thunks may retarget a
 * direct call there)? Read instruction by instruction where they have one
 * size (arm64's BL/B), byte by byte on x86 (CALL/JMP rel32): a stray match
 * can only say "calls".
 */
static bool rcvfix_code_calls(unsigned long start, unsigned long end,
			      unsigned long target)
{
	const unsigned long before = 16, after = 4;	/* bytes */

	unsigned long pc, to;

#if defined(CONFIG_X86_64)
	for (pc = start; pc + 5 <= end; pc++) {
		u8 op;
		s32 rel;

		if (get_kernel_nofault(op, (u8 *)pc) ||
		    (op != 0xe8 && op != 0xe9) ||
		    get_kernel_nofault(rel, (s32 *)(pc + 1)))
			continue;
		to = pc + 5 + rel;
		if (to >= target - before && to <= target + after)
			return true;
	}
	return false;
#elif defined(CONFIG_ARM64)
	for (pc = start; pc + 4 <= end; pc += 4) {
		u32 insn;

		if (get_kernel_nofault(insn, (u32 *)pc) ||
		    (insn & 0x7c000000) != 0x14000000)	/* B or BL */
			continue;
		to = pc + ((s64)((u64)(insn & 0x03ffffff) << 38) >> 36);
		if (to >= target - before && to <= target + after)
			return true;
	}
	return false;
#else
	return true;	/* cannot tell: as if it did */
#endif
}

/**
 * rcvfix_mptcp_datafin_needed - does this kernel need the DATA_FIN part?
 * @hook: mptcp_update_rcv_data_fin's hook, resolved or not
 *
 * Yes where subflow_state_change() calls mptcp_update_rcv_data_fin()
 * (6.12: with data still queued on the subflow), or where rcvfix cannot
 * tell. 6.1 and 7.x call it from subflow_sched_work_if_closed() after
 * checking that the queue is empty; where the compiler inlined that into
 * subflow_state_change(), the answer is yes too, which costs nothing
 * where the hook arms. After rcvfix_mptcp_datafin_init(), which found
 * subflow_state_change()'s code or said it is missing.
 */
bool rcvfix_mptcp_datafin_needed(struct rcvfix_hook *hook)
{
	unsigned long fstart, fend;

	if (!rcvfix_state_change_end)
		return false;	/* no subflows: no fallback to close */
	if (rcvfix_hook_symbol_range(hook->name, &fstart, &fend))
		return true;
	return rcvfix_code_calls(rcvfix_state_change_start,
				 rcvfix_state_change_end, fstart);
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

/*
 * mptcp_update_rcv_data_fin(msk, data_fin_seq, use_64bit): for
 * subflow_state_change()'s dummy DATA_FIN, in an enabled namespace, while
 * the msk's first subflow (the one whose receive side closed: the kernel
 * checks msk->first == sk) has data queued, the sequence number moves past
 * that data; the kernel's function then runs with it.
 */
void notrace rcvfix_mptcp_datafin_entry(unsigned long ip,
					unsigned long parent_ip,
					struct ftrace_ops *ops,
					struct ftrace_regs *fregs)
{
	struct sock *msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);
	u64 seq = rcvfix_fregs_arg(fregs, 1);
	bool use_64bit = (u8)rcvfix_fregs_arg(fregs, 2);	/* a bool: its low byte */
	struct sock *ssk;

	/*
	 * Only the dummy DATA_FIN: 64 bits, at the msk's ack_seq (a real
	 * DATA_FIN from a DSS, were its code ever inlined there, is not).
	 */
	if (parent_ip < rcvfix_state_change_start ||
	    parent_ip >= rcvfix_state_change_end || !use_64bit ||
	    seq != rcvfix_msk_u64(msk, rcvfix_msk_ack_seq) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	ssk = rcvfix_msk_first(msk);
	if (!ssk || skb_queue_empty_lockless(&ssk->sk_receive_queue))
		return;
	rcvfix_fregs_set_arg1(fregs, seq + rcvfix_subflow_queued(ssk));
}
