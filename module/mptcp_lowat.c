// SPDX-License-Identifier: GPL-2.0
/*
 * The SO_RCVLOWAT wakeup rule for MPTCP sockets (msk), decided as TCP
 * decides it. TCP wakes a reader with a mark, and reports it readable,
 * once the data queued reaches sk_rcvlowat, or the socket is under memory
 * pressure, or the queue can no longer grow: its memory holds 7/8 of the
 * buffer (tcp_rmem_pressure()) or the receive window is nearly closed
 * (tcp_epollin_ready()). That last part is the net that keeps a reader
 * whose buffer cannot hold its mark (a small SO_RCVBUF set after the
 * mark, a mark inherited from a listener, ...) from sleeping for ever.
 *
 * Two kernel shapes, one decision (rcvfix_mptcp_ready_locked()):
 *  - before Linux 6.7 (Debian 12's 6.1), mptcp_data_ready() wakes the
 *    reader whenever in-sequence data reaches the msk and mptcp_poll()
 *    reports EPOLLIN on any byte: a paced sender wakes an SO_RCVLOWAT
 *    reader per packet. rcvfix filters: while the kernel's receive path
 *    of a subflow runs (below), the msk's sk_data_ready
 *    (sock_def_readable()) is swapped for rcvfix_mptcp_readable(), which
 *    wakes only a ready msk; mptcp_poll()'s EPOLLIN is taken back while it is not ready; and
 *    setsockopt(SO_RCVLOWAT) does what TCP's tcp_set_rcvlowat() does (caps
 *    the mark at half the buffer's limit, wakes a ready reader, grows an
 *    unlocked buffer to twice the mark).
 *  - 6.7 and newer ("mptcp: give rcvlowat some love") gate both on
 *    mptcp_epollin_ready(): the mark reached, or memory pressure, and
 *    nothing else. A reader whose buffer cannot hold its mark is never
 *    woken, where TCP in the same state is. rcvfix adds TCP's net: after
 *    the kernel's receive path of a subflow and mptcp_set_rcvlowat(), a
 *    reader that is ready by the net alone is woken, and mptcp_poll()
 *    reports it readable ("native+rcvfix"). The kernel's own wakeups stay
 *    as they are.
 * The receive path: the kernel calls mptcp_data_ready() only from a
 * subflow's sk_data_ready and sk_state_change, subflow_data_ready() and
 * subflow_state_change() (net/mptcp/subflow.c, 6.1 to 7.3), and rcvfix
 * wraps those two, not mptcp_data_ready() itself: a wrapper calls the
 * function it wraps through a pointer, and on x86 kernels built with IBT
 * (Debian's 6.12 and 7.x) only a function whose address the kernel takes
 * keeps the ENDBR64 such a call must land on; mptcp_data_ready() is called
 * only directly, and its entry is sealed. The wrappers add to the kernel's
 * path only what it does around mptcp_data_ready(): whether the subflow
 * had data (mptcp_subflow_data_available()) and, in sk_state_change,
 * __subflow_state_change()'s wakeup of the subflow's own waiters and the
 * scheduling of the msk's worker; none of those calls the msk's
 * sk_data_ready, and a socket error or shutdown always wakes. On 6.7+ the
 * net is also tested after a call that moved no data: it wakes only a
 * reader that is ready by it, as poll reports it.
 * Only in a namespace with the fix on; shutdown and a socket error always
 * wake. An msk owned by another task (a second thread sending, the
 * kernel's worker) is decided from what can be read without its owner:
 * before 6.7, data waiting in the reader's own queue (which only the
 * owner may walk) counts as the mark reached, so such a reader is woken
 * as the kernel would wake it until it has read that data; TCP would
 * hold such segments in its backlog and decide at release. On 7.x the
 * kernel's mptcp_release_cb() wakes the reader itself whenever it moves
 * a backlog left while the msk was owned, mark or not: rcvfix leaves it.
 *
 * The bytes queued: on 6.7+, the msk's bytes_received minus its
 * bytes_consumed (the kernel's mptcp_data_avail()); before, its ack_seq
 * (the data sequence number after the last in-sequence byte moved to it)
 * minus the map_seq of the first skb of its receive queues (the reader's
 * msk->receive_queue, then sk_receive_queue). The window is TCP's test
 * (tcp_receive_window() against the receive MSS) on the window the peer
 * sends against: with one subflow that subflow's own (after a fallback to
 * TCP the msk's right edge, rcv_wnd_sent, stops moving while its ack_seq
 * goes on, and the subflow is plain TCP), with several the msk's shared
 * one (rcv_wnd_sent - ack_seq; an msk that had a join cannot fall back).
 * struct mptcp_sock and struct mptcp_skb_cb are private to
 * net/mptcp: their layout is read from the running kernel's BTF
 * (mptcp_sock.c, btf_layout.c) and checked against this module's own
 * view of struct sock. Where it cannot be read or does not match, this
 * part stays off with one log line naming why, and MPTCP keeps the
 * kernel's behaviour.
 *
 * The hooks of mptcp_data_ready() and mptcp_poll() are armed on demand
 * (arm.c): not before an MPTCP socket in a namespace with the fix on sets
 * a mark, which the setsockopt-time hooks see first (the arming happens
 * there, before that setsockopt() returns). Until then an MPTCP segment
 * meets no callback of rcvfix's; after, sockets without a mark
 * (sk_rcvlowat 1) pay the callback and one compare (docs/benchmarks.md,
 * segcost). A mark set while the fix was off in its namespace is not
 * seen, as an SO_RCVBUF set then is not.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/bpf.h>
#include <linux/kallsyms.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sockptr.h>
#include <linux/sched.h>
#include <linux/task_work.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/net_namespace.h>
#ifdef RCVFIX_HAVE_PROTO_MEMORY_H
#include <net/proto_memory.h>	/* sk_under_memory_pressure() since 6.11 */
#endif
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>

#include "btf_layout.h"
#include "arm.h"
#include "hook.h"
#include "mptcp_lowat.h"
#include "mptcp_sock.h"
#include "netns.h"

/*
 * Task flags of user workers: io_uring's since 5.12 (PF_IO_WORKER), any
 * kernel thread cloned from a user thread (vhost) since 6.4
 * (PF_USER_WORKER); before, such threads are kernel threads (PF_KTHREAD).
 */
#ifndef PF_IO_WORKER
#define PF_IO_WORKER 0
#endif
#ifndef PF_USER_WORKER
#define PF_USER_WORKER 0
#endif

enum rcvfix_mptcp_lowat_kind {
	RCVFIX_MPTCP_LOWAT_UNKNOWN,	/* could not tell */
	RCVFIX_MPTCP_LOWAT_NONE,	/* no MPTCP in this kernel */
	RCVFIX_MPTCP_LOWAT_NATIVE,	/* the kernel has the fix */
	RCVFIX_MPTCP_LOWAT_KERNEL,	/* lacks it; rcvfix cannot be sure */
	RCVFIX_MPTCP_LOWAT_RCVFIX,	/* lacks it; rcvfix fixes it */
	RCVFIX_MPTCP_LOWAT_NET,		/* has it; rcvfix adds TCP's net */
};

static const char *const rcvfix_mptcp_lowat_words[] = {
	[RCVFIX_MPTCP_LOWAT_UNKNOWN] = "unknown",
	[RCVFIX_MPTCP_LOWAT_NONE] = "none",
	[RCVFIX_MPTCP_LOWAT_NATIVE] = "native",
	[RCVFIX_MPTCP_LOWAT_KERNEL] = "kernel",
	[RCVFIX_MPTCP_LOWAT_RCVFIX] = "rcvfix",
	[RCVFIX_MPTCP_LOWAT_NET] = "native+rcvfix",
};

static enum rcvfix_mptcp_lowat_kind rcvfix_mptcp_lowat_kind;
bool rcvfix_mptcp_lowat_fixing;

/* Where the private fields are, from BTF; set once at load. */
static u32 rcvfix_msk_ack_seq, rcvfix_msk_rcv_wnd_sent;
/* whether it may still fall back to TCP (see rcvfix_msk_joined()) */
static u32 rcvfix_msk_allow_fallback, rcvfix_msk_allow_subflows;
/* 6.7+: what the kernel's mptcp_data_avail() reads */
static u32 rcvfix_msk_bytes_received, rcvfix_msk_bytes_consumed;
/* before: the first unread byte */
static u32 rcvfix_msk_receive_queue, rcvfix_skb_map_seq;
/* Does the kernel gate wakeups on the mark itself (6.7+)? */
static bool rcvfix_mptcp_lowat_native;

/* sock_def_readable(), the msk's sk_data_ready, as the kernel set it. */
static void (*rcvfix_def_readable)(struct sock *sk);
/* The kernel's functions, called by their wrappers here. */
static void (*rcvfix_subflow_data_ready_fn)(struct sock *ssk);
static void (*rcvfix_subflow_state_change_fn)(struct sock *ssk);
static int (*rcvfix_mptcp_set_rcvlowat_fn)(struct sock *sk, int val);
static __poll_t (*rcvfix_mptcp_poll_fn)(struct file *file,
					struct socket *sock,
					struct poll_table_struct *wait);

/* Reads the layout of this kernel's shape; false (reason logged) if unsure. */
static bool rcvfix_mptcp_lowat_layout(void)
{
	struct rcvfix_btf_field f[] = {
		{ "mptcp_sock", "ack_seq", sizeof(u64) },
		/* an atomic64_t: read as the u64 it holds, as the kernel's READ_ONCE() of it */
		{ "mptcp_sock", "rcv_wnd_sent", sizeof(u64) },
		{ "mptcp_sock", "allow_infinite_fallback", sizeof(bool) },
		{ "mptcp_sock", "allow_subflows", sizeof(bool) },
		{ "mptcp_sock", "bytes_received", sizeof(u64) },
		{ "mptcp_sock", "bytes_consumed", sizeof(u64) },
	};
	struct rcvfix_btf_field queue[] = {
		{ "mptcp_sock", "receive_queue", sizeof(struct sk_buff_head) },
		{ "mptcp_skb_cb", "map_seq", sizeof(u64) },
	};
	/* the queued bytes: two counters on 6.7+, the queues before */
	unsigned int n = rcvfix_mptcp_lowat_native ? ARRAY_SIZE(f) : 4;
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
	rcvfix_msk_ack_seq = f[0].offset;
	rcvfix_msk_rcv_wnd_sent = f[1].offset;
	rcvfix_msk_allow_fallback = f[2].offset;
	rcvfix_msk_allow_subflows = f[3].offset;
	rcvfix_msk_bytes_received = f[4].offset;
	rcvfix_msk_bytes_consumed = f[5].offset;
	rcvfix_msk_receive_queue = queue[0].offset;
	rcvfix_skb_map_seq = queue[1].offset;
	return true;
unsure:
	pr_info("%s and rcvfix leaves it so: %s\n",
		rcvfix_mptcp_lowat_native ?
		"MPTCP's SO_RCVLOWAT rule lacks TCP's wakeup when the queue cannot grow" :
		"MPTCP lacks the SO_RCVLOWAT wakeup fix", why);
	return false;
}

/* Is @fn the kernel's sock_def_readable()? */
static bool rcvfix_is_def_readable(void (*fn)(struct sock *sk))
{
	static const char want[] = "sock_def_readable+0x0/";
	char sym[KSYM_SYMBOL_LEN];

	sprint_symbol(sym, (unsigned long)fn);
	return !strncmp(sym, want, sizeof(want) - 1);
}

/**
 * rcvfix_mptcp_lowat_detect - what does this kernel's MPTCP need?
 *
 * An MPTCP socket of the kernel's own answers: its proto_ops have a
 * set_rcvlowat operation exactly where MPTCP gates wakeups on the mark
 * (6.7+: rcvfix adds TCP's net), and before, its sk_data_ready is the
 * function the wrapper swaps (rcvfix filters). At load, before the hooks
 * are resolved.
 */
void rcvfix_mptcp_lowat_detect(void)
{
	enum rcvfix_mptcp_lowat_kind kind = RCVFIX_MPTCP_LOWAT_KERNEL;
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_MPTCP,
			       &sock);
	if (err) {
		kind = err == -EPROTONOSUPPORT ? RCVFIX_MPTCP_LOWAT_NONE :
						 RCVFIX_MPTCP_LOWAT_UNKNOWN;
		if (kind == RCVFIX_MPTCP_LOWAT_UNKNOWN)
			pr_info("cannot tell whether MPTCP has the SO_RCVLOWAT wakeup fix: no MPTCP socket (%d; net.mptcp.enabled=0?); left to the kernel\n",
				err);
		rcvfix_mptcp_lowat_kind = kind;
		return;
	}
	if (READ_ONCE(sock->ops)->set_rcvlowat) {
		rcvfix_mptcp_lowat_native = true;
		kind = rcvfix_mptcp_lowat_layout() ? RCVFIX_MPTCP_LOWAT_NET :
						     RCVFIX_MPTCP_LOWAT_NATIVE;
	} else if (!rcvfix_is_def_readable(sock->sk->sk_data_ready)) {
		pr_info("MPTCP lacks the SO_RCVLOWAT wakeup fix and rcvfix leaves it so: its sockets' sk_data_ready is not sock_def_readable\n");
	} else if (rcvfix_hook_check_callee("sock_def_readable",
			(unsigned long)sock->sk->sk_data_ready)) {
		pr_info("MPTCP lacks the SO_RCVLOWAT wakeup fix and rcvfix leaves it so: sock_def_readable cannot take its call\n");
	} else {
		rcvfix_def_readable = sock->sk->sk_data_ready;
		if (rcvfix_mptcp_lowat_layout())
			kind = RCVFIX_MPTCP_LOWAT_RCVFIX;
	}
	sock_release(sock);
	rcvfix_mptcp_lowat_kind = kind;
}

/* Has this kernel MPTCP at all (as far as the detection could tell)? */
bool rcvfix_mptcp_lowat_mptcp_exists(void)
{
	return rcvfix_mptcp_lowat_kind != RCVFIX_MPTCP_LOWAT_NONE;
}

/* Should targets.c resolve (and redirect) the functions of the fix? */
bool rcvfix_mptcp_lowat_wanted(void)
{
	return rcvfix_mptcp_lowat_kind == RCVFIX_MPTCP_LOWAT_RCVFIX ||
	       rcvfix_mptcp_lowat_kind == RCVFIX_MPTCP_LOWAT_NET;
}

/* Does the fix also need mptcp_set_rcvlowat() (the kernel's, 6.7+)? */
bool rcvfix_mptcp_lowat_wants_set_rcvlowat(void)
{
	return rcvfix_mptcp_lowat_native;
}

/* A function the fix needs cannot be hooked: leave MPTCP to the kernel. */
void rcvfix_mptcp_lowat_unavailable(const char *func, int err)
{
	rcvfix_mptcp_lowat_kind = rcvfix_mptcp_lowat_native ?
				  RCVFIX_MPTCP_LOWAT_NATIVE :
				  RCVFIX_MPTCP_LOWAT_KERNEL;
	pr_info("%s and rcvfix leaves it so: cannot hook %s (%d)\n",
		rcvfix_mptcp_lowat_native ?
		"MPTCP's SO_RCVLOWAT rule lacks TCP's wakeup when the queue cannot grow" :
		"MPTCP lacks the SO_RCVLOWAT wakeup fix", func, err);
}

/*
 * The functions are resolved: the fix is on. Before any arming.
 * @set_rcvlowat is NULL before 6.7 (rcvfix then sets the option itself).
 */
void rcvfix_mptcp_lowat_hooked(const struct rcvfix_hook *data_ready,
			       const struct rcvfix_hook *state_change,
			       const struct rcvfix_hook *poll,
			       const struct rcvfix_hook *set_rcvlowat)
{
	rcvfix_subflow_data_ready_fn = (void *)data_ready->func;
	rcvfix_subflow_state_change_fn = (void *)state_change->func;
	rcvfix_mptcp_poll_fn = (void *)poll->func;
	if (set_rcvlowat)
		rcvfix_mptcp_set_rcvlowat_fn = (void *)set_rcvlowat->func;
	rcvfix_mptcp_lowat_fixing = true;
}

/* One word for /proc/net/rcvfix and the load log. */
const char *rcvfix_mptcp_lowat_state(void)
{
	return rcvfix_mptcp_lowat_words[rcvfix_mptcp_lowat_kind];
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
 * peer send at most one more segment? With one subflow that is the
 * window its peer sends against in every state: after a fallback it is
 * plain TCP's (the msk's own right edge, rcv_wnd_sent, stops moving
 * while its ack_seq goes on), and with MPTCP options the subflow's
 * rcv_wnd follows the msk's free space (mptcp_set_rwin()). Only a
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
 * Is the window of @msk closed, TCP's way? For an msk that joined, its
 * shared window (above); else (one subflow, or a fallback to TCP) that
 * subflow's: @ssk, the one that just received (locked by its caller),
 * else the first subflow, else the one of the list where it may be
 * walked (@walk: see rcvfix_msk_for_each_subflow()).
 */
static bool rcvfix_mptcp_window_closed(struct sock *msk, struct sock *ssk,
				       bool walk)
{
	struct list_head *pos;

	if (rcvfix_msk_joined(msk))
		return rcvfix_msk_window_closed(msk,
						ssk ? : rcvfix_msk_first(msk));
	if (ssk)
		return rcvfix_subflow_window_closed(ssk);
	ssk = rcvfix_msk_first(msk);
	if (ssk)
		return rcvfix_subflow_window_closed(ssk);
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
 * window is closed (above). Data the kernel leaves on a subflow while the
 * msk is over its limit (mptcp_data_ready()'s early return) comes with
 * the first: the msk's memory is above that limit, which is at least its
 * own buffer.
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
static bool rcvfix_mptcp_ready_locked(struct sock *msk, struct sock *ssk,
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
static bool rcvfix_mptcp_ready_by_net(struct sock *msk, struct sock *ssk,
				      bool walk)
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
static bool rcvfix_mptcp_ready_unlocked(struct sock *msk)
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

/* The msk whose subflow's receive path this CPU runs in a wrapper, if any. */
struct rcvfix_mptcp_filter {
	struct sock *msk;
	struct sock *ssk;	/* the subflow it runs for */
};

static DEFINE_PER_CPU(struct rcvfix_mptcp_filter, rcvfix_mptcp_filtering);

/*
 * The msk's sk_data_ready while a subflow's receive path runs for an
 * SO_RCVLOWAT reader: mptcp_data_ready() calls it there with the data lock
 * held, on the CPU that runs the wrapper. Every other call wakes, as the kernel would: the
 * other callers of an msk's sk_data_ready in net/mptcp (6.1: the reader's
 * own recvmsg() through __mptcp_move_skbs(), and mptcp_check_for_eof())
 * may run in that window on another CPU, and with PREEMPT_RT on this one.
 */
static void rcvfix_mptcp_readable(struct sock *msk)
{
	if (this_cpu_read(rcvfix_mptcp_filtering.msk) != msk ||
	    (READ_ONCE(msk->sk_shutdown) & RCV_SHUTDOWN) ||
	    READ_ONCE(msk->sk_err) ||
	    rcvfix_mptcp_ready_locked(msk,
				      this_cpu_read(rcvfix_mptcp_filtering.ssk),
				      sock_owned_by_user_nocheck(msk)))
		rcvfix_def_readable(msk);
	else
		rcvfix_net_count_lowat(sock_net(msk), true);
}

/*
 * Someone replaced the msk's sk_data_ready while the wrapper had swapped
 * it, and may have kept a pointer to rcvfix_mptcp_readable(): this
 * module's text must then stay for good.
 */
static void rcvfix_mptcp_lowat_pin(void)
{
	rcvfix_hook_pin_module("an MPTCP socket's sk_data_ready was replaced while filtered");
}

/*
 * The kernel runs a subflow's sk_data_ready and sk_state_change in
 * softirq, or in a task processing the subflow's backlog, with the
 * subflow locked; with bottom halves off it stays on this CPU and nothing
 * else runs it here meanwhile (PREEMPT_RT included: there bottom halves
 * off means a per-CPU lock and no migration).
 */
static void rcvfix_mptcp_filter(struct sock *ssk, void (*fn)(struct sock *ssk))
{
	void (*def)(struct sock *sk) = rcvfix_def_readable;
	struct sock *msk = rcvfix_subflow_msk(ssk);
	bool swapped;

	local_bh_disable();
	this_cpu_write(rcvfix_mptcp_filtering.ssk, ssk);
	this_cpu_write(rcvfix_mptcp_filtering.msk, msk);
	swapped = cmpxchg(&msk->sk_data_ready, def,
			  rcvfix_mptcp_readable) == def;
	fn(ssk);
	if (swapped && cmpxchg(&msk->sk_data_ready, rcvfix_mptcp_readable,
			       def) != rcvfix_mptcp_readable)
		rcvfix_mptcp_lowat_pin();
	this_cpu_write(rcvfix_mptcp_filtering.msk, NULL);
	local_bh_enable();
}

/*
 * 6.7+: the kernel's mptcp_data_ready() wakes a reader whose mark is
 * reached; one that is ready by TCP's net alone is woken here, after it.
 */
static void rcvfix_mptcp_add_net(struct sock *ssk, void (*fn)(struct sock *ssk))
{
	struct sock *msk = rcvfix_subflow_msk(ssk);

	fn(ssk);
	if (rcvfix_mptcp_ready_by_net(msk, ssk, false)) {
		msk->sk_data_ready(msk);
		rcvfix_net_count_lowat(sock_net(msk), false);
	}
}

/* The subflow's receive path, as the kernel runs it, filtered or with the net. */
static void rcvfix_mptcp_subflow_event(struct sock *ssk,
				       void (*fn)(struct sock *ssk))
{
	if (rcvfix_mptcp_lowat_native)
		rcvfix_mptcp_add_net(ssk, fn);
	else
		rcvfix_mptcp_filter(ssk, fn);
}

static void rcvfix_subflow_data_ready(struct sock *ssk)
{
	rcvfix_mptcp_subflow_event(ssk, rcvfix_subflow_data_ready_fn);
	rcvfix_hook_done();
}

static void rcvfix_subflow_state_change(struct sock *ssk)
{
	rcvfix_mptcp_subflow_event(ssk, rcvfix_subflow_state_change_fn);
	rcvfix_hook_done();
}

/*
 * Is this call of a subflow's sk_data_ready or sk_state_change (@fregs
 * holds its subflow) one for a reader with a mark, in a namespace with the
 * fix on? Not for a listener's subflow: its sk_data_ready wakes accept().
 * Every other call pays the callback and three loads, the last compared
 * (docs/benchmarks.md). Another concurrent wrapper on the same msk finds
 * the pointer swapped already and runs the kernel's code as it is: a
 * wakeup at most is spent.
 */
static __always_inline bool rcvfix_subflow_for_reader(unsigned long parent_ip,
						      struct ftrace_regs *fregs)
{
	struct sock *ssk = (struct sock *)rcvfix_fregs_arg(fregs, 0);
	struct sock *msk;

	if (inet_sk_state_load(ssk) == TCP_LISTEN)
		return false;
	msk = rcvfix_subflow_msk(ssk);
	return msk && unlikely(READ_ONCE(msk->sk_rcvlowat) > 1) &&
	       rcvfix_mptcp_lowat_fixing && !rcvfix_hook_from_us(parent_ip) &&
	       rcvfix_net_enabled(sock_net(msk));
}

/* subflow_data_ready(ssk), a subflow's sk_data_ready: hooked where the fix is on. */
void notrace rcvfix_mptcp_lowat_entry_data_ready(unsigned long ip,
						 unsigned long parent_ip,
						 struct ftrace_ops *ops,
						 struct ftrace_regs *fregs)
{
	if (rcvfix_subflow_for_reader(parent_ip, fregs))
		rcvfix_hook_redirect(fregs, rcvfix_subflow_data_ready);
}

/* subflow_state_change(ssk), a subflow's sk_state_change: likewise. */
void notrace rcvfix_mptcp_lowat_entry_state_change(unsigned long ip,
						   unsigned long parent_ip,
						   struct ftrace_ops *ops,
						   struct ftrace_regs *fregs)
{
	if (rcvfix_subflow_for_reader(parent_ip, fregs))
		rcvfix_hook_redirect(fregs, rcvfix_subflow_state_change);
}

/*
 * Readable exactly when the reader would be woken: before 6.7 EPOLLIN is
 * taken back from an msk that is not ready, on 6.7+ it is added to one
 * that is ready by TCP's net alone. A listener, shutdown, hang-up and
 * errors keep the kernel's mask.
 */
static __poll_t rcvfix_mptcp_poll(struct file *file, struct socket *sock,
				  struct poll_table_struct *wait)
{
	__poll_t mask = rcvfix_mptcp_poll_fn(file, sock, wait);
	bool in = mask & EPOLLIN;
	struct sock *msk = sock->sk;
	int state = inet_sk_state_load(msk);

	if (in != rcvfix_mptcp_lowat_native &&
	    !(mask & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
	    state != TCP_LISTEN && state != TCP_SYN_SENT &&
	    state != TCP_SYN_RECV) {
		if (rcvfix_mptcp_ready_unlocked(msk))
			mask |= EPOLLIN | EPOLLRDNORM;
		else
			mask &= ~(EPOLLIN | EPOLLRDNORM);
	}
	rcvfix_hook_done();
	return mask;
}

/* mptcp_poll(file, sock, wait): only for a reader with a mark. */
void notrace rcvfix_mptcp_lowat_entry_poll(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *ops,
					   struct ftrace_regs *fregs)
{
	struct socket *sock = (struct socket *)rcvfix_fregs_arg(fregs, 1);
	struct sock *msk = READ_ONCE(sock->sk);

	if (likely(!msk || READ_ONCE(msk->sk_rcvlowat) <= 1) ||
	    rcvfix_hook_from_us(parent_ip) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_poll);
}

/*
 * After a mark is set on @msk, which the caller owns: wake its reader if
 * it is ready, as TCP's tcp_set_rcvlowat() calls tcp_data_ready() (6.7+:
 * the kernel woke one whose mark is reached; TCP's net is added).
 */
static void rcvfix_mptcp_wake_if_ready(struct sock *msk)
{
	bool ready;

	if (rcvfix_mptcp_lowat_native) {
		ready = rcvfix_mptcp_ready_by_net(msk, NULL, true);
	} else {
		/*
		 * tcp_data_ready() also wakes a reader at the peer's FIN
		 * (SOCK_DONE, which MPTCP does not set on an msk)
		 */
		spin_lock_bh(&msk->sk_lock.slock);
		ready = rcvfix_mptcp_ready_locked(msk, NULL, false) ||
			(READ_ONCE(msk->sk_shutdown) & RCV_SHUTDOWN);
		spin_unlock_bh(&msk->sk_lock.slock);
	}
	if (ready) {
		msk->sk_data_ready(msk);
		rcvfix_net_count_lowat(sock_net(msk), false);
	}
}

/*
 * A mark set by a BPF program (bpf_setsockopt() from a cgroup setsockopt
 * or cgroup LSM program, which runs under rcu_read_lock()) cannot arm the
 * receive-path hooks where it is set: arming sleeps. The msk is kept (a
 * reference) and the arming runs as task work, before the setsockopt()
 * that ran the program returns to user space (from a work item where the
 * task is a kernel thread or exiting); then the msk is decided as a
 * setsockopt() by its owner would have. Until then the kernel's own rule
 * holds its reader: woken on every segment before 6.7, at the mark after;
 * the decision wakes one that TCP's net would have woken meanwhile. The
 * deferred part counts as a running replacement: an unload waits for it.
 */
/*
 * Does the current task run its task work soon, before it is back in
 * user space? A user task in a system call, and io_uring's workers (they
 * run it between items); not a kernel thread, nor another user worker
 * (vhost: only at a signal or at exit), nor an interrupt.
 */
static bool rcvfix_task_runs_task_work(void)
{
	unsigned int flags = current->flags;

	if (!in_task() || (flags & PF_KTHREAD))
		return false;
	return !(flags & PF_USER_WORKER) || (flags & PF_IO_WORKER);
}

struct rcvfix_mptcp_demand {
	struct callback_head twork;
	struct work_struct work;
	struct sock *msk;
};

static void rcvfix_mptcp_demand_run(struct rcvfix_mptcp_demand *d)
{
	struct sock *msk = d->msk;

	rcvfix_arm_demand();
	lock_sock(msk);
	if (rcvfix_net_enabled(sock_net(msk)) &&
	    READ_ONCE(msk->sk_rcvlowat) > 1)
		rcvfix_mptcp_wake_if_ready(msk);
	release_sock(msk);
	sock_put(msk);
	kfree(d);
	rcvfix_hook_done();
}

static void rcvfix_mptcp_demand_twork(struct callback_head *head)
{
	rcvfix_mptcp_demand_run(container_of(head, struct rcvfix_mptcp_demand,
					     twork));
}

static void rcvfix_mptcp_demand_work(struct work_struct *work)
{
	rcvfix_mptcp_demand_run(container_of(work, struct rcvfix_mptcp_demand,
					     work));
}

/*
 * An SO_RCVLOWAT mark above 1 is about to be set on @msk in a namespace
 * with the fix on: the receive-path hooks must be armed first (arm.c),
 * here where the caller may sleep, else as above. From a replacement.
 */
static void rcvfix_mptcp_demand(struct sock *msk)
{
	struct rcvfix_mptcp_demand *d;

	if (!has_current_bpf_ctx()) {
		rcvfix_arm_demand();
		return;
	}
	/* before 6.7 the decision is left to the work (see its setter) */
	if (rcvfix_mptcp_lowat_native && rcvfix_arm_demand_armed())
		return;
	d = kmalloc(sizeof(*d), GFP_ATOMIC);
	if (!d) {
		pr_warn_ratelimited("no memory to arm MPTCP's receive-path hooks for a mark set by BPF: the kernel's wakeups stay\n");
		return;
	}
	sock_hold(msk);
	d->msk = msk;
	rcvfix_hook_hold();
	init_task_work(&d->twork, rcvfix_mptcp_demand_twork);
	if (!rcvfix_task_runs_task_work() ||
	    task_work_add(current, &d->twork, TWA_RESUME)) {
		INIT_WORK(&d->work, rcvfix_mptcp_demand_work);
		schedule_work(&d->work);
	}
}

/*
 * A mark rcvfix leaves to the kernel's plain write, where it cannot act
 * (see rcvfix_mptcp_lowat_setsockopt_entry()), still needs the hooks:
 * armed from this work, which holds no socket.
 */
static void rcvfix_mptcp_demand_kick_fn(struct work_struct *work)
{
	rcvfix_arm_demand();
	rcvfix_hook_done();
}

static DECLARE_WORK(rcvfix_mptcp_demand_kick, rcvfix_mptcp_demand_kick_fn);

/* From an entry callback (the hook is armed): counted until it has run. */
static void rcvfix_mptcp_demand_later(void)
{
	if (rcvfix_arm_demand_armed())
		return;
	rcvfix_hook_hold();
	if (!schedule_work(&rcvfix_mptcp_demand_kick))
		rcvfix_hook_done();	/* pending already: that run counts */
}

/*
 * 6.7+: mptcp_set_rcvlowat(msk, val), which the kernel calls with the msk
 * owned, wakes a reader whose new mark is reached; TCP's
 * tcp_set_rcvlowat() also wakes one whose queue cannot grow.
 */
static int rcvfix_mptcp_set_rcvlowat_net(struct sock *msk, int val)
{
	int ret;

	if (val > 1)
		rcvfix_mptcp_demand(msk);
	ret = rcvfix_mptcp_set_rcvlowat_fn(msk, val);
	if (!ret)
		rcvfix_mptcp_wake_if_ready(msk);
	rcvfix_hook_done();
	return ret;
}

/* mptcp_set_rcvlowat(sk, val), 6.7+: only for an msk (BPF may pass a TCP sk). */
void notrace rcvfix_mptcp_lowat_entry_set_rcvlowat(unsigned long ip,
						   unsigned long parent_ip,
						   struct ftrace_ops *ops,
						   struct ftrace_regs *fregs)
{
	struct sock *msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (msk->sk_protocol != IPPROTO_MPTCP || !rcvfix_mptcp_lowat_fixing ||
	    rcvfix_hook_from_us(parent_ip) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_set_rcvlowat_net);
}

/*
 * SO_RCVLOWAT on @msk, which the caller owns (lock_sock()), as TCP's
 * tcp_set_rcvlowat() sets it (see the top); the stock line where the
 * namespace turned the fix off meanwhile.
 */
static void rcvfix_mptcp_set_rcvlowat(struct sock *msk, int val)
{
	const struct net *net = sock_net(msk);
	bool locked = msk->sk_userlocks & SOCK_RCVBUF_LOCK;
	int cap;

	if (!rcvfix_net_enabled(net)) {
		WRITE_ONCE(msk->sk_rcvlowat, val ? : 1);
		return;
	}
	cap = locked ? msk->sk_rcvbuf >> 1 :
		       READ_ONCE(net->ipv4.sysctl_tcp_rmem[2]) >> 1;
	val = min(val, cap);
	WRITE_ONCE(msk->sk_rcvlowat, val ? : 1);

	/*
	 * Not from a BPF program: it may run where the data lock must not
	 * be taken (a cgroup LSM program at sock_graft(), under
	 * sk_callback_lock); the work it queued decides (above).
	 */
	if (!has_current_bpf_ctx())
		rcvfix_mptcp_wake_if_ready(msk);

	if (!locked && val * 2 > msk->sk_rcvbuf)
		WRITE_ONCE(msk->sk_rcvbuf, val * 2);
}

/*
 * sk_setsockopt() (before 6.0 sock_setsockopt()) for SO_RCVLOWAT on an
 * msk: the stock checks and order, then the option as TCP sets it.
 */
static int rcvfix_mptcp_setsockopt(struct rcvfix_setsockopt_obj *obj,
				   int level, int optname, sockptr_t optval,
				   unsigned int optlen)
{
	struct sock *msk = rcvfix_setsockopt_sk(obj);
	int ret = 0;
	int val;

	if (optlen < sizeof(int)) {
		ret = -EINVAL;
	} else if (copy_from_sockptr(&val, optval, sizeof(val))) {
		ret = -EFAULT;
	} else {
		if (val > 1 || val < 0)
			rcvfix_mptcp_demand(msk);
		sockopt_lock_sock(msk);
		rcvfix_mptcp_set_rcvlowat(msk, val < 0 ? INT_MAX : val);
		sockopt_release_sock(msk);
	}
	rcvfix_hook_done();
	return ret;
}

/*
 * From the SOL_SOCKET setsockopt entry callback (rcvbuf.c) for
 * SO_RCVLOWAT: an msk of a kernel without the fix (6.7+ has its own
 * set_rcvlowat, wrapped above), set from user space (MPTCP sends its
 * SOL_SOCKET options there) or by a cgroup BPF program's
 * bpf_setsockopt(), in a namespace with the fix on.
 */
void rcvfix_mptcp_lowat_setsockopt_entry(struct ftrace_regs *fregs,
					 struct sock *sk)
{
	if (!rcvfix_mptcp_lowat_fixing || rcvfix_mptcp_lowat_native ||
	    sk->sk_protocol != IPPROTO_MPTCP ||
	    !rcvfix_net_enabled(sock_net(sk)))
		return;
	/*
	 * An msk not yet accepted, in softirq with its data lock held (a
	 * cgroup LSM program at inet_csk_clone(), from sk_clone_lock()):
	 * the kernel's plain write stands, as for a listener's mark its
	 * connections inherit; the hooks are armed for it from a work.
	 */
	if (!READ_ONCE(sk->sk_socket) || !in_task()) {
		rcvfix_mptcp_demand_later();
		return;
	}
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_setsockopt);
}
