// SPDX-License-Identifier: GPL-2.0
/*
 * Is an MPTCP socket's reader ready, decided as TCP decides it (the rule:
 * mptcp_lowat.c's top comment): the bytes queued for it, the mark, memory
 * pressure, and TCP's net (the queue cannot grow: its memory near the
 * buffer, or the window the peer sends against closed), from the fields of
 * the kernel's private struct mptcp_sock read from BTF. Also the two flags
 * every unit of the fix reads: is it on, and has the kernel its own rule.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <net/inet_connection_sock.h>
#ifdef RCVFIX_HAVE_PROTO_MEMORY_H
#include <net/proto_memory.h>	/* sk_under_memory_pressure() since 6.11 */
#endif
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>

#include "btf_layout.h"
#include "mptcp_ready.h"
#include "mptcp_sock.h"

bool rcvfix_mptcp_lowat_fixing;
bool rcvfix_mptcp_lowat_native;

/* Where the private fields are, from BTF; set once at load. */
static u32 rcvfix_msk_rcv_wnd_sent;
/* whether it may still fall back to TCP (see rcvfix_msk_joined()) */
static u32 rcvfix_msk_allow_fallback, rcvfix_msk_allow_subflows;
/* 6.7+: what the kernel's mptcp_data_avail() reads */
static u32 rcvfix_msk_bytes_received, rcvfix_msk_bytes_consumed;
/* before: the first unread byte */
static u32 rcvfix_msk_receive_queue, rcvfix_skb_map_seq;
/*
 * What the kernel's free space of an msk leaves out of its memory, where
 * the field exists, else 0: the bytes on 7.x's backlog, counted as used;
 * before, the memory a read freed and has not yet uncharged (rmem_released).
 */
static u32 rcvfix_msk_backlog_len, rcvfix_msk_rmem_released;
/* 6.12+: the ratio mptcp_space() scales the msk's buffer by, or 0 */
static u32 rcvfix_msk_scaling_ratio;
/*
 * where a subflow keeps the edge its last data ack announced (0 before
 * its first), or 0 where BTF does not say: then no ACK for an equal window
 */
static u32 rcvfix_subflow_rcv_wnd_sent;

/**
 * rcvfix_mptcp_ready_layout - where the fields the decision reads are
 *
 * Reads the layout of this kernel's shape (rcvfix_mptcp_lowat_native set
 * before) from BTF, at load; false (reason logged) if unsure.
 */
bool rcvfix_mptcp_ready_layout(void)
{
	struct rcvfix_btf_field f[] = {
		/* an atomic64_t: read as the u64 it holds, as the kernel's READ_ONCE() of it */
		{ "mptcp_sock", "rcv_wnd_sent", sizeof(u64) },
		{ "mptcp_sock", "allow_infinite_fallback", sizeof(bool) },
		{ "mptcp_sock", "allow_subflows", sizeof(bool) },
		{ "mptcp_sock", "bytes_received", sizeof(u64) },
		{ "mptcp_sock", "bytes_consumed", sizeof(u64) },
	};
	struct rcvfix_btf_field backlog = {
		"mptcp_sock", "backlog_len", sizeof(u32)
	};
	struct rcvfix_btf_field released = {
		"mptcp_sock", "rmem_released", sizeof(int)
	};
	struct rcvfix_btf_field ratio = {
		"mptcp_sock", "scaling_ratio", sizeof(u8)
	};
	struct rcvfix_btf_field edge = {
		"mptcp_subflow_context", "rcv_wnd_sent", sizeof(u64)
	};
	struct rcvfix_btf_field queue[] = {
		{ "mptcp_sock", "receive_queue", sizeof(struct sk_buff_head) },
		{ "mptcp_skb_cb", "map_seq", sizeof(u64) },
	};
	/* the queued bytes: two counters on 6.7+, the queues before */
	unsigned int n = rcvfix_mptcp_lowat_native ? ARRAY_SIZE(f) : 3;
	char why[160] = "";

	/* the subflows, whose windows TCP's net reads */
	if (rcvfix_msk_layout_init(why, sizeof(why)) ||
	    rcvfix_btf_find_fields(f, n, why, sizeof(why)))
		goto unsure;
	if (!rcvfix_mptcp_lowat_native &&
	    rcvfix_btf_find_fields(queue, ARRAY_SIZE(queue), why, sizeof(why)))
		goto unsure;
	if (!rcvfix_mptcp_lowat_native &&
	    queue[1].type_size > sizeof_field(struct sk_buff, cb)) {
		snprintf(why, sizeof(why), "mptcp_skb_cb is %u bytes, larger than skb->cb",
			 queue[1].type_size);
		goto unsure;
	}
	rcvfix_msk_rcv_wnd_sent = f[0].offset;
	rcvfix_msk_allow_fallback = f[1].offset;
	rcvfix_msk_allow_subflows = f[2].offset;
	rcvfix_msk_bytes_received = f[3].offset;
	rcvfix_msk_bytes_consumed = f[4].offset;
	rcvfix_msk_receive_queue = queue[0].offset;
	rcvfix_skb_map_seq = queue[1].offset;
	/* optional: the free space's estimate (rcvfix_mptcp_window_reopened()) */
	if (!rcvfix_btf_find_fields(&backlog, 1, why, sizeof(why)))
		rcvfix_msk_backlog_len = backlog.offset;
	if (!rcvfix_btf_find_fields(&released, 1, why, sizeof(why)))
		rcvfix_msk_rmem_released = released.offset;
	if (!rcvfix_btf_find_fields(&ratio, 1, why, sizeof(why)))
		rcvfix_msk_scaling_ratio = ratio.offset;
	if (!rcvfix_btf_find_fields(&edge, 1, why, sizeof(why)))
		rcvfix_subflow_rcv_wnd_sent = edge.offset;
	else
		pr_info("no window update after a read where the window equals the one last sent: %s\n",
			why);
	return true;
unsure:
	pr_info("%s and rcvfix leaves it so: %s\n",
		rcvfix_mptcp_lowat_native ?
		"MPTCP's SO_RCVLOWAT rule lacks TCP's wakeup when the queue cannot grow" :
		"MPTCP lacks the SO_RCVLOWAT wakeup fix", why);
	return false;
}

/*
 * Bytes queued for the reader of @msk, or U64_MAX for "at least the mark"
 * where they cannot be counted. The counters of 6.7+ need no lock.
 * Before, the caller holds the msk's data lock (sk_lock.slock), which
 * every move of data into sk_receive_queue holds; the reader's
 * msk->receive_queue is its owner's alone: it is read only where nobody
 * else owns the msk (@owned_elsewhere false), else only whether it is
 * empty (an owner that is not the reader, a sending thread or the
 * kernel's worker, leaves it as it is).
 */
static u64 rcvfix_mptcp_avail(struct sock *msk, bool owned_elsewhere)
{
	struct sk_buff_head *rq = (void *)msk + rcvfix_msk_receive_queue;
	struct sk_buff *skb;

	if (rcvfix_mptcp_lowat_native)
		return rcvfix_msk_u64(msk, rcvfix_msk_bytes_received) -
		       rcvfix_msk_u64(msk, rcvfix_msk_bytes_consumed);
	if (owned_elsewhere) {
		if (!skb_queue_empty_lockless(rq))
			return U64_MAX;
		skb = NULL;
	} else {
		skb = skb_peek(rq);
	}
	if (!skb)
		skb = skb_peek(&msk->sk_receive_queue);
	if (!skb)
		return 0;
	return rcvfix_msk_u64(msk, rcvfix_msk_ack_seq) -
	       *(u64 *)(skb->cb + rcvfix_skb_map_seq);
}

/*
 * TCP's window test (tcp_epollin_ready()) on one subflow @ssk: can its
 * peer send at most one more segment? After a fallback that is the
 * window its peer sends against (plain TCP's: the msk's own right edge,
 * rcv_wnd_sent, stops moving while its ack_seq goes on). With MPTCP
 * options and one subflow the subflow's rcv_wnd follows the msk's free
 * space (mptcp_set_rwin()), but its right edge may lie past the msk's: a
 * bound the msk's own window completes (rcvfix_msk_own_window()). Only a
 * subflow that can still receive counts.
 */
static bool rcvfix_subflow_window_closed(const struct sock *ssk)
{
	const struct tcp_sock *tp = tcp_sk(ssk);
	s32 win;

	if (!((1 << inet_sk_state_load(ssk)) &
	      (TCPF_ESTABLISHED | TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2)))
		return false;
	win = READ_ONCE(tp->rcv_wup) + READ_ONCE(tp->rcv_wnd) -
	      READ_ONCE(tp->rcv_nxt);
	return win <= (s32)READ_ONCE(inet_csk(ssk)->icsk_ack.rcv_mss);
}

/*
 * Has @msk given up falling back to TCP for good, so that its peer sends
 * against its shared window? A join that completed, or a retransmission
 * on another subflow, clears allow_infinite_fallback (mptcp_subflow_joined(),
 * __mptcp_retrans()); a fallback clears allow_subflows (__mptcp_try_fallback()).
 * A join still pending, on conn_list before its SYN is answered, clears
 * neither: the msk may still fall back meanwhile, and its first subflow
 * alone carries data.
 */
static bool rcvfix_msk_joined(const struct sock *msk)
{
	return !rcvfix_msk_bool(msk, rcvfix_msk_allow_fallback) &&
	       rcvfix_msk_bool(msk, rcvfix_msk_allow_subflows);
}

/*
 * TCP's window test on the msk's shared window, for an msk that joined:
 * its peer sends against the data-level ack plus the window
 * (options.c: data_ack + snd_wnd), and a subflow's rcv_wup..rcv_nxt
 * counts that subflow's bytes only, so each subflow's own window stays
 * half open while the msk's is closed (and, back to one subflow after a
 * join, overstates it until that subflow's next ACK). Such an msk can no
 * longer fall back: its rcv_wnd_sent is current. The receive MSS is
 * @ssk's (the subflow that received, or the first), else TCP's default.
 */
static bool rcvfix_msk_window_closed(struct sock *msk, struct sock *ssk)
{
	u32 mss = ssk ? READ_ONCE(inet_csk(ssk)->icsk_ack.rcv_mss) :
			TCP_MSS_DEFAULT;
	s64 win = rcvfix_msk_u64(msk, rcvfix_msk_rcv_wnd_sent) -
		  rcvfix_msk_u64(msk, rcvfix_msk_ack_seq);

	return win <= (s64)mss;
}

/*
 * With one subflow @ssk and MPTCP options, the window its peer may still
 * fill at the data level, or -1 where that is not known. The peer sends
 * against the data-level ack plus the window (options.c), and the
 * subflow's right edge can lie past the msk's: mptcp_set_rwin() raises
 * the subflow's rcv_wnd to the msk's edge less ack_seq, while the
 * subflow's rcv_wup is its rcv_nxt, ahead of ack_seq by what waits on the
 * 7.x backlog or the subflow. The subflow's window then looks open while
 * the peer has filled the msk's (measured on 7.3: 48 KB queued, the peer
 * waiting for its retransmission timer, no wakeup; issue 59). The window
 * sent when it was raised is rounded down to the window scale, unlike
 * rcv_wnd_sent and the subflow's rcv_wnd (TCP's own rcv_wnd is aligned):
 * the peer's edge is that remainder short of rcv_wnd_sent. Only where
 * rcv_wnd_sent is current: not after a fallback (allow_subflows clear:
 * it stops moving), and not before this side sent its first data ack (it
 * is then the initial ack_seq, behind the data): a window below 0.
 */
static s64 rcvfix_msk_own_window(struct sock *msk, const struct sock *ssk)
{
	const struct tcp_sock *tp = tcp_sk(ssk);
	u32 unit = 1U << tp->rx_opt.rcv_wscale;	/* set at the handshake */
	s64 win;

	if (!rcvfix_msk_bool(msk, rcvfix_msk_allow_subflows))
		return -1;
	win = rcvfix_msk_u64(msk, rcvfix_msk_rcv_wnd_sent) -
	      rcvfix_msk_u64(msk, rcvfix_msk_ack_seq);
	if (win < 0)
		return -1;
	return max_t(s64, win - (READ_ONCE(tp->rcv_wnd) & (unit - 1)), 0);
}

/* TCP's window test on the msk's own window, for one subflow @ssk. */
static bool rcvfix_msk_own_window_closed(struct sock *msk, struct sock *ssk)
{
	s64 win = rcvfix_msk_own_window(msk, ssk);

	return win >= 0 &&
	       win <= (s64)READ_ONCE(inet_csk(ssk)->icsk_ack.rcv_mss);
}

/*
 * Is the window of @msk closed, TCP's way? For an msk that joined, its
 * shared window (above); else (one subflow, or a fallback to TCP) the
 * msk's own where it is current (above), or that subflow's: @ssk, the one
 * that just received (locked by its caller), else the first subflow, else
 * the one of the list where it may be walked (@walk: see
 * rcvfix_msk_for_each_subflow()).
 */
static bool rcvfix_mptcp_window_closed(struct sock *msk, struct sock *ssk,
				       bool walk)
{
	struct list_head *pos;

	if (rcvfix_msk_joined(msk))
		return rcvfix_msk_window_closed(msk,
						ssk ? : rcvfix_msk_first(msk));
	if (!ssk)
		ssk = rcvfix_msk_first(msk);
	if (ssk)
		return rcvfix_msk_own_window_closed(msk, ssk) ||
		       rcvfix_subflow_window_closed(ssk);
	if (!walk)
		return false;
	rcvfix_msk_for_each_subflow(msk, pos)
		if (rcvfix_subflow_window_closed(rcvfix_subflow_sk(pos)))
			return true;
	return false;
}

/*
 * TCP's net (tcp_epollin_ready()): can the data queued for @msk no longer
 * grow? Its memory holds 7/8 of its buffer (tcp_rmem_pressure()), or the
 * window is closed (above). Before 7.x, data the kernel leaves on a
 * subflow while the msk is over its limit (mptcp_data_ready()'s early
 * return) comes with the first: the msk's memory is above that limit,
 * which is at least its own buffer. On 7.x, data that arrives while the
 * msk is owned waits on its backlog, counted neither in its memory nor
 * in ack_seq; mptcp_release_cb() moves it and wakes the reader whatever
 * the mark, and mptcp_poll()'s wrapper then decides.
 */
static bool rcvfix_mptcp_cannot_grow(struct sock *msk, struct sock *ssk,
				     bool walk)
{
	int rcvbuf = READ_ONCE(msk->sk_rcvbuf);

	return atomic_read(&msk->sk_rmem_alloc) > rcvbuf - (rcvbuf >> 3) ||
	       rcvfix_mptcp_window_closed(msk, ssk, walk);
}

/* Is @msk ready for its reader by the mark alone (the kernel's 6.7+ rule)? */
static bool rcvfix_mptcp_mark_reached(struct sock *msk, u64 avail)
{
	return avail >= (u64)READ_ONCE(msk->sk_rcvlowat) ||
	       sk_under_memory_pressure(msk);
}

/*
 * Is @msk ready for its reader (see the top)? With its data lock held, or
 * owned by the caller (@owned_elsewhere false); @ssk as above.
 */
bool rcvfix_mptcp_ready_locked(struct sock *msk, struct sock *ssk,
			       bool owned_elsewhere)
{
	u64 avail = rcvfix_mptcp_avail(msk, owned_elsewhere);

	return avail && (rcvfix_mptcp_mark_reached(msk, avail) ||
			 rcvfix_mptcp_cannot_grow(msk, ssk, !owned_elsewhere));
}

/*
 * 6.7+: is @msk ready by TCP's net alone, so that the kernel, which
 * decides by the mark alone, did not wake its reader? The counters and
 * atomics need no lock, as the kernel's mptcp_epollin_ready(); the
 * window: as for rcvfix_mptcp_window_closed().
 */
bool rcvfix_mptcp_ready_by_net(struct sock *msk, struct sock *ssk, bool walk)
{
	u64 avail = rcvfix_mptcp_avail(msk, false);

	return avail && !rcvfix_mptcp_mark_reached(msk, avail) &&
	       rcvfix_mptcp_cannot_grow(msk, ssk, walk);
}

/*
 * The same under the msk's data lock, for a caller that neither owns the
 * msk nor holds the lock (poll): the subflows are walked only where
 * nobody owns the msk.
 */
bool rcvfix_mptcp_ready_unlocked(struct sock *msk)
{
	bool owned, ready;

	spin_lock_bh(&msk->sk_lock.slock);
	owned = sock_owned_by_user_nocheck(msk);
	ready = rcvfix_mptcp_lowat_native ?
		rcvfix_mptcp_ready_by_net(msk, NULL, !owned) :
		rcvfix_mptcp_ready_locked(msk, NULL, owned);
	spin_unlock_bh(&msk->sk_lock.slock);
	return ready;
}

/* A u32 or int field of @msk at @offset, or 0 where the kernel has none. */
static int rcvfix_msk_int_or_zero(const struct sock *msk, u32 offset)
{
	return offset ? READ_ONCE(*(const int *)((const void *)msk + offset)) : 0;
}

/*
 * The window @space bytes of @msk's buffer make, as mptcp_space() scales
 * them: by the msk's own ratio (6.12+), else (6.1) by the namespace's
 * tcp_adv_win_scale, the same for the msk as for its subflow @ssk.
 */
static int rcvfix_msk_win_from_space(const struct sock *msk,
				     const struct sock *ssk, int space)
{
#ifdef RCVFIX_HAVE_TCP_WIN_FROM_SPACE_RATIO
	if (rcvfix_msk_scaling_ratio)
		return __tcp_win_from_space(READ_ONCE(*((const u8 *)msk +
						rcvfix_msk_scaling_ratio)),
					    space);
#endif
	return tcp_win_from_space(ssk, space);
}

/*
 * The window __tcp_select_window() computes for the subflow @ssk of @msk
 * now, from the msk's free space (mptcp_space(): its buffer less its
 * memory, less 7.x's backlog, plus what a read freed and has not
 * uncharged before, scaled as the msk's): below half the full window
 * rounded down to the window scale, and 0 under a sixteenth of the
 * buffer's window or a segment; at most rcv_ssthresh; aligned up to the
 * scale. 0 where the kernel's window is not modelled: no window scaling
 * (its rounding to the segment keeps the window last sent), and 6.12+'s
 * ICSK_ACK_NOMEM (a zero window after a drop for memory). Under memory
 * pressure the kernel lowers rcv_ssthresh first
 * (tcp_adjust_rcv_ssthresh()): one estimate too high at most, and
 * rcv_ssthresh read lower from then on.
 */
static int rcvfix_subflow_new_window(struct sock *msk, struct sock *ssk)
{
	const struct tcp_sock *tp = tcp_sk(ssk);
	int rcvbuf = READ_ONCE(msk->sk_rcvbuf);
	int mss = READ_ONCE(inet_csk(ssk)->icsk_ack.rcv_mss);
	int clamp = READ_ONCE(tp->window_clamp);
	u8 wscale = tp->rx_opt.rcv_wscale;	/* set at the handshake */
	int free, allowed, full;

	if (!wscale)
		return 0;
#ifdef RCVFIX_HAVE_ICSK_ACK_NOMEM
	if (READ_ONCE(inet_csk(ssk)->icsk_ack.pending) & ICSK_ACK_NOMEM)
		return 0;
#endif
	free = rcvfix_msk_win_from_space(msk, ssk, rcvbuf -
			atomic_read(&msk->sk_rmem_alloc) -
			rcvfix_msk_int_or_zero(msk, rcvfix_msk_backlog_len) +
			rcvfix_msk_int_or_zero(msk, rcvfix_msk_rmem_released));
	allowed = rcvfix_msk_win_from_space(msk, ssk, rcvbuf);
	full = min(clamp, allowed);
	if (mss > full)
		mss = full;
	if (mss <= 0 || free <= 0)
		return 0;
	if (free < (full >> 1)) {
		free = round_down(free, 1 << wscale);
		if (free < (allowed >> 4) || free < mss)
			return 0;
	}
	free = min_t(int, free, READ_ONCE(tp->rcv_ssthresh));
	return ALIGN(free, 1 << wscale);
}

/*
 * Has the subflow @ssk sent a data ack (mptcp_subflow_context.rcv_wnd_sent:
 * the edge mptcp_set_rwin() records when it sends one, and rwin_update()
 * when another subflow's moved it, both under the subflow's lock; 0 before)?
 * The ACKs of an MP_CAPABLE or MP_JOIN handshake carry none and record no
 * edge: one sent for an equal window would be sent again at every release.
 */
static bool rcvfix_subflow_sent_data_ack(const struct sock *ssk)
{
	const void *ctx = (__force const void *)inet_csk(ssk)->icsk_ulp_data;

	return rcvfix_subflow_rcv_wnd_sent &&
	       READ_ONCE(*(const u64 *)((const char *)ctx +
					rcvfix_subflow_rcv_wnd_sent));
}

/**
 * rcvfix_mptcp_window_reopened - would TCP announce the window now?
 * @msk: an MPTCP socket, owned by the caller
 * @ssk: one of its subflows, locked by the caller (or read as a hint)
 *
 * After a read, TCP's tcp_cleanup_rbuf() sends an ACK when the window
 * left to the peer is at most half the clamp and the window an ACK would
 * offer is not 0 and at least twice that. The peer of an msk with MPTCP
 * options sends against the data ack plus the window, and an ACK offers
 * the subflow's new window from ack_seq, or keeps the edge already sent
 * where that is further (mptcp_set_rwin(); the subflow's own window does
 * not count: the DSS option zeroes it first). So both are measured from
 * the msk's ack_seq: the window left is rcv_wnd_sent - ack_seq, 0 where
 * data moved to the msk since the last ACK (7.x's backlog, which
 * mptcp_release_cb() moves without one) reaches past it, and the window
 * offered is rcvfix_subflow_new_window(). After a fallback the peer sends
 * against the subflow's own TCP window: TCP's rule on the subflow.
 *
 * The peer takes the window of an ACK that acknowledges nothing new on
 * the subflow only if it is larger than the one it holds
 * (tcp_may_update_window()); a smaller one it ignores, keeps its old
 * window and adds it to the new data ack (ack_update_msk()), sending past
 * what was offered. So an ACK only where the subflow has unacknowledged
 * bytes (rcv_nxt past rcv_wup), or the window offered exceeds the one
 * last sent on it (its rcv_wnd, which the peer holds unless it ignored a
 * smaller one since), or equals it on a subflow whose ACKs carry a data
 * ack (rcvfix_subflow_sent_data_ack()): the peer holds that window
 * already, so its edge becomes the one offered. The ACK records the edge
 * (mptcp_set_rwin()), so the window left is then at least the window
 * offered, and TCP's test holds again only once the reader has freed more.
 * With tcp_shrink_window = 1 the kernel may offer less than estimated: no
 * ACK from rcvfix.
 */
bool rcvfix_mptcp_window_reopened(struct sock *msk, struct sock *ssk)
{
	bool joinable = rcvfix_msk_bool(msk, rcvfix_msk_allow_subflows);
	const struct tcp_sock *tp = tcp_sk(ssk);
	s64 left, win;

#ifdef RCVFIX_HAVE_TCP_SHRINK_WINDOW
	if (READ_ONCE(sock_net(ssk)->ipv4.sysctl_tcp_shrink_window))
		return false;
#endif
	if (joinable)
		left = max_t(s64, rcvfix_msk_u64(msk, rcvfix_msk_rcv_wnd_sent) -
				  rcvfix_msk_u64(msk, rcvfix_msk_ack_seq), 0);
	else	/* fallen back: TCP's own */
		left = max_t(s32, READ_ONCE(tp->rcv_wup) +
				  READ_ONCE(tp->rcv_wnd) -
				  READ_ONCE(tp->rcv_nxt), 0);
	if (2 * left > READ_ONCE(tp->window_clamp))
		return false;
	win = rcvfix_subflow_new_window(msk, ssk);
	if (win <= 0 || win < 2 * left)
		return false;
	if (READ_ONCE(tp->rcv_nxt) != READ_ONCE(tp->rcv_wup) ||
	    win > READ_ONCE(tp->rcv_wnd))
		return true;
	return joinable && win == READ_ONCE(tp->rcv_wnd) &&
	       rcvfix_subflow_sent_data_ack(ssk);
}
