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
 *
 * This file owns what the kernel needs (the detection at load) and the
 * set-up once the hooks are resolved; the decision is mptcp_ready.c's,
 * the receive path mptcp_recv.c's, setting a mark and arming on demand
 * mptcp_setlowat.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "hook.h"
#include "mptcp_lowat.h"
#include "mptcp_ready.h"
#include "mptcp_recv.h"
#include "mptcp_setlowat.h"
#include "mptcp_window.h"

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
/* sock_def_readable(), an msk's sk_data_ready before 6.7 (for the filter) */
static void (*rcvfix_def_readable)(struct sock *sk);

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
		kind = rcvfix_mptcp_ready_layout() ? RCVFIX_MPTCP_LOWAT_NET :
						     RCVFIX_MPTCP_LOWAT_NATIVE;
	} else if (!rcvfix_is_def_readable(sock->sk->sk_data_ready)) {
		pr_info("MPTCP lacks the SO_RCVLOWAT wakeup fix and rcvfix leaves it so: its sockets' sk_data_ready is not sock_def_readable\n");
	} else if (rcvfix_hook_check_callee("sock_def_readable",
			(unsigned long)sock->sk->sk_data_ready)) {
		pr_info("MPTCP lacks the SO_RCVLOWAT wakeup fix and rcvfix leaves it so: sock_def_readable cannot take its call\n");
	} else {
		rcvfix_def_readable = sock->sk->sk_data_ready;
		if (rcvfix_mptcp_ready_layout())
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
			       const struct rcvfix_hook *release_cb,
			       const struct rcvfix_hook *set_rcvlowat)
{
	rcvfix_mptcp_recv_hooked(data_ready, state_change, poll,
				 rcvfix_def_readable);
	rcvfix_mptcp_window_hooked(release_cb);
	if (set_rcvlowat)
		rcvfix_mptcp_setlowat_hooked(set_rcvlowat);
	rcvfix_mptcp_lowat_fixing = true;
}

/* One word for /proc/net/rcvfix and the load log. */
const char *rcvfix_mptcp_lowat_state(void)
{
	return rcvfix_mptcp_lowat_words[rcvfix_mptcp_lowat_kind];
}
