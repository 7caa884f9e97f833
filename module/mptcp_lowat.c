// SPDX-License-Identifier: GPL-2.0
/*
 * The SO_RCVLOWAT wakeup fix for MPTCP sockets (msk). Since Linux 6.7
 * ("mptcp: give rcvlowat some love") MPTCP wakes a reader and reports it
 * readable only once the data queued for it reaches sk_rcvlowat
 * (mptcp_epollin_ready()), grows the buffer to fit the mark
 * (mptcp_set_rcvlowat(), the MPTCP proto_ops' set_rcvlowat) and wakes a
 * reader whose mark is lowered below what is queued. Before (Debian 12's
 * 6.1), mptcp_data_ready() wakes the reader whenever in-sequence data
 * reaches the msk and mptcp_poll() reports EPOLLIN on any byte: a paced
 * sender wakes an SO_RCVLOWAT reader per packet, and poll() returns for
 * reads shorter than the mark. Where the kernel lacks it, in a namespace
 * with the fix on, rcvfix gives an msk whose reader set SO_RCVLOWAT the
 * same decisions:
 *
 *  - mptcp_data_ready() is wrapped: while the kernel's own code runs, the
 *    msk's sk_data_ready (sock_def_readable(), which wakes the reader) is
 *    swapped for rcvfix_mptcp_readable(), which calls it only when the msk
 *    is ready (below). The kernel calls it with the msk's data lock held
 *    (its spinlock), where the queues can be read.
 *  - mptcp_poll() is wrapped: EPOLLIN is taken back while the msk is not
 *    ready; shutdown, hang-up and errors keep the kernel's mask.
 *  - setsockopt(SO_RCVLOWAT) on an msk does what TCP's tcp_set_rcvlowat()
 *    does: caps the mark at half the buffer's limit, wakes the reader if
 *    it is ready already, and grows an unlocked msk's buffer to twice the
 *    mark, so that the mark can be reached at all (the queue of a 6.1 msk
 *    is limited by its own sk_rcvbuf, which autotuning raises only while
 *    the reader reads).
 *
 * "Ready", as 6.12's mptcp_epollin_ready() decides: some data is queued,
 * and it reaches sk_rcvlowat, or the socket's memory is under pressure.
 * One more case wakes: the msk's queue holding 7/8 of its buffer (TCP's
 * tcp_rmem_pressure()), after which a 6.1 msk stops taking data and could
 * never reach the mark. Shutdown, a socket error and a socket busy in its
 * owner's hands (its reader runs: it sees the data anyway) always wake.
 *
 * The bytes queued are the msk's ack_seq (the data sequence number after
 * the last in-sequence byte moved to it) minus the sequence number of the
 * first unread byte (the map_seq of the first skb of its receive queues:
 * the reader's msk->receive_queue, then sk_receive_queue). struct
 * mptcp_sock and struct mptcp_skb_cb are private to net/mptcp: their
 * layout is read from the running kernel's BTF (btf_layout.c) and checked
 * against this module's own view of struct sock. Where it cannot be read
 * or does not match, this part stays off with one log line naming why,
 * and MPTCP keeps the kernel's behaviour.
 *
 * Sockets that never set SO_RCVLOWAT (sk_rcvlowat 1) pay one compare per
 * mptcp_data_ready() and per mptcp_poll() in an armed kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/bpf.h>
#include <linux/kallsyms.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/skbuff.h>
#include <linux/sockptr.h>
#include <net/inet_connection_sock.h>
#include <net/net_namespace.h>
#ifdef RCVFIX_HAVE_PROTO_MEMORY_H
#include <net/proto_memory.h>	/* sk_under_memory_pressure() since 6.11 */
#endif
#include <net/sock.h>
#include <net/tcp_states.h>

#include "btf_layout.h"
#include "hook.h"
#include "mptcp_lowat.h"
#include "netns.h"

enum rcvfix_mptcp_lowat_kind {
	RCVFIX_MPTCP_LOWAT_UNKNOWN,	/* could not tell */
	RCVFIX_MPTCP_LOWAT_NONE,	/* no MPTCP in this kernel */
	RCVFIX_MPTCP_LOWAT_NATIVE,	/* the kernel has the fix */
	RCVFIX_MPTCP_LOWAT_KERNEL,	/* lacks it; rcvfix cannot be sure */
	RCVFIX_MPTCP_LOWAT_RCVFIX,	/* lacks it; rcvfix fixes it */
};

static const char *const rcvfix_mptcp_lowat_words[] = {
	[RCVFIX_MPTCP_LOWAT_UNKNOWN] = "unknown",
	[RCVFIX_MPTCP_LOWAT_NONE] = "none",
	[RCVFIX_MPTCP_LOWAT_NATIVE] = "native",
	[RCVFIX_MPTCP_LOWAT_KERNEL] = "kernel",
	[RCVFIX_MPTCP_LOWAT_RCVFIX] = "rcvfix",
};

static enum rcvfix_mptcp_lowat_kind rcvfix_mptcp_lowat_kind;
bool rcvfix_mptcp_lowat_fixing;

/* Where the private fields are, from BTF; set once at load. */
static u32 rcvfix_msk_ack_seq, rcvfix_msk_receive_queue, rcvfix_skb_map_seq;

/* sock_def_readable(), the msk's sk_data_ready, as the kernel set it. */
static void (*rcvfix_def_readable)(struct sock *sk);
/* The kernel's functions, called by their wrappers here. */
static void (*rcvfix_mptcp_data_ready_fn)(struct sock *sk, struct sock *ssk);
static __poll_t (*rcvfix_mptcp_poll_fn)(struct file *file,
					struct socket *sock,
					struct poll_table_struct *wait);

/* Reads the layout; false (with the reason logged) if unsure. */
static bool rcvfix_mptcp_lowat_layout(void)
{
	struct rcvfix_btf_field f[] = {
		{ "mptcp_sock", "sk", sizeof(struct inet_connection_sock) },
		{ "mptcp_sock", "ack_seq", sizeof(u64) },
		{ "mptcp_sock", "receive_queue", sizeof(struct sk_buff_head) },
		{ "mptcp_skb_cb", "map_seq", sizeof(u64) },
	};
	char why[160] = "";

	if (rcvfix_btf_find_fields(f, ARRAY_SIZE(f), why, sizeof(why)))
		goto unsure;
	if (f[0].offset) {
		snprintf(why, sizeof(why), "mptcp_sock.sk is at %u, not 0",
			 f[0].offset);
		goto unsure;
	}
	if (f[3].type_size > sizeof_field(struct sk_buff, cb)) {
		snprintf(why, sizeof(why), "mptcp_skb_cb is %u bytes, larger than skb->cb",
			 f[3].type_size);
		goto unsure;
	}
	rcvfix_msk_ack_seq = f[1].offset;
	rcvfix_msk_receive_queue = f[2].offset;
	rcvfix_skb_map_seq = f[3].offset;
	return true;
unsure:
	pr_info("MPTCP lacks the SO_RCVLOWAT wakeup fix and rcvfix leaves it so: %s\n",
		why);
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
 * rcvfix_mptcp_lowat_detect - does this kernel's MPTCP need the fix?
 *
 * An MPTCP socket of the kernel's own answers: its proto_ops have a
 * set_rcvlowat operation exactly where MPTCP has the fix (6.7+), and its
 * sk_data_ready is the function the wrapper swaps. At load, before the
 * hooks are resolved.
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
		kind = RCVFIX_MPTCP_LOWAT_NATIVE;
	} else if (!rcvfix_is_def_readable(sock->sk->sk_data_ready)) {
		pr_info("MPTCP lacks the SO_RCVLOWAT wakeup fix and rcvfix leaves it so: its sockets' sk_data_ready is not sock_def_readable\n");
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
	return rcvfix_mptcp_lowat_kind == RCVFIX_MPTCP_LOWAT_RCVFIX;
}

/* A function the fix needs cannot be hooked: leave MPTCP to the kernel. */
void rcvfix_mptcp_lowat_unavailable(const char *func, int err)
{
	rcvfix_mptcp_lowat_kind = RCVFIX_MPTCP_LOWAT_KERNEL;
	pr_info("MPTCP lacks the SO_RCVLOWAT wakeup fix and rcvfix leaves it so: cannot hook %s (%d)\n",
		func, err);
}

/* Both functions are resolved: the fix is on. Before any arming. */
void rcvfix_mptcp_lowat_hooked(const struct rcvfix_hook *data_ready,
			       const struct rcvfix_hook *poll)
{
	rcvfix_mptcp_data_ready_fn = (void *)data_ready->func;
	rcvfix_mptcp_poll_fn = (void *)poll->func;
	rcvfix_mptcp_lowat_fixing = true;
}

/* One word for /proc/net/rcvfix and the load log. */
const char *rcvfix_mptcp_lowat_state(void)
{
	return rcvfix_mptcp_lowat_words[rcvfix_mptcp_lowat_kind];
}

/*
 * Bytes queued for the reader of @msk. The caller holds the msk's data
 * lock (sk_lock.slock), which every move of data into sk_receive_queue
 * holds, and either owns the msk or saw that nobody does: only an owner
 * takes skbs off msk->receive_queue.
 */
static u64 rcvfix_mptcp_avail(struct sock *msk)
{
	struct sk_buff_head *rq = (void *)msk + rcvfix_msk_receive_queue;
	struct sk_buff *skb = skb_peek(rq);
	u64 ack_seq = READ_ONCE(*(u64 *)((void *)msk + rcvfix_msk_ack_seq));

	if (!skb)
		skb = skb_peek(&msk->sk_receive_queue);
	if (!skb)
		return 0;
	return ack_seq - *(u64 *)(skb->cb + rcvfix_skb_map_seq);
}

/* Is @msk ready for its reader (see the top)? Locked as above. */
static bool rcvfix_mptcp_ready_locked(struct sock *msk)
{
	u64 avail = rcvfix_mptcp_avail(msk);
	int rcvbuf;

	if (!avail)
		return false;
	if (avail >= (u64)READ_ONCE(msk->sk_rcvlowat) ||
	    sk_under_memory_pressure(msk))
		return true;
	rcvbuf = READ_ONCE(msk->sk_rcvbuf);
	return atomic_read(&msk->sk_rmem_alloc) > rcvbuf - (rcvbuf >> 3);
}

/* The msk whose mptcp_data_ready() this CPU runs in the wrapper, if any. */
static DEFINE_PER_CPU(struct sock *, rcvfix_mptcp_filtering);

/*
 * The msk's sk_data_ready while mptcp_data_ready() runs for an SO_RCVLOWAT
 * reader: the kernel calls it there with the data lock held, on the CPU
 * that runs the wrapper. Every other call wakes, as the kernel would: the
 * other callers of an msk's sk_data_ready in net/mptcp (6.1: the reader's
 * own recvmsg() through __mptcp_move_skbs(), and mptcp_check_for_eof())
 * may run in that window on another CPU, and with PREEMPT_RT on this one.
 */
static void rcvfix_mptcp_readable(struct sock *msk)
{
	if (this_cpu_read(rcvfix_mptcp_filtering) != msk ||
	    (READ_ONCE(msk->sk_shutdown) & RCV_SHUTDOWN) ||
	    READ_ONCE(msk->sk_err) || sock_owned_by_user_nocheck(msk) ||
	    rcvfix_mptcp_ready_locked(msk))
		rcvfix_def_readable(msk);
}

/*
 * Someone replaced the msk's sk_data_ready while the wrapper had swapped
 * it, and may have kept a pointer to rcvfix_mptcp_readable(): this
 * module's text must then stay for good.
 */
static void rcvfix_mptcp_lowat_pin(void)
{
	static bool pinned;

	if (xchg(&pinned, true))
		return;
	__module_get(THIS_MODULE);
	pr_warn("an MPTCP socket's sk_data_ready was replaced while rcvfix filtered it: rcvfix stays loaded\n");
}

/*
 * The kernel runs mptcp_data_ready() in softirq, or in a task processing a
 * subflow's backlog; with bottom halves off it stays on this CPU and
 * nothing else runs it here meanwhile (PREEMPT_RT included: there bottom
 * halves off means a per-CPU lock and no migration).
 */
static void rcvfix_mptcp_data_ready(struct sock *msk, struct sock *ssk)
{
	void (*def)(struct sock *sk) = rcvfix_def_readable;
	bool swapped;

	local_bh_disable();
	this_cpu_write(rcvfix_mptcp_filtering, msk);
	swapped = cmpxchg(&msk->sk_data_ready, def,
			  rcvfix_mptcp_readable) == def;
	rcvfix_mptcp_data_ready_fn(msk, ssk);
	if (swapped && cmpxchg(&msk->sk_data_ready, rcvfix_mptcp_readable,
			       def) != rcvfix_mptcp_readable)
		rcvfix_mptcp_lowat_pin();
	this_cpu_write(rcvfix_mptcp_filtering, NULL);
	local_bh_enable();
	rcvfix_hook_done();
}

/*
 * The entry callback of mptcp_data_ready(msk, ssk), hooked only where the
 * fix is on: an msk whose reader set a mark (sk_rcvlowat above 1) is sent
 * to the wrapper; every other one pays one compare. Another concurrent
 * wrapper on the same msk finds the pointer swapped already and runs the
 * kernel's code as it is: a wakeup at most is spent.
 */
void notrace rcvfix_mptcp_lowat_entry_data_ready(unsigned long ip,
						 unsigned long parent_ip,
						 struct ftrace_ops *ops,
						 struct ftrace_regs *fregs)
{
	struct sock *msk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (likely(READ_ONCE(msk->sk_rcvlowat) <= 1) ||
	    !rcvfix_mptcp_lowat_fixing || rcvfix_hook_from_us(parent_ip) ||
	    !rcvfix_net_enabled(sock_net(msk)))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_data_ready);
}

static __poll_t rcvfix_mptcp_poll(struct file *file, struct socket *sock,
				  struct poll_table_struct *wait)
{
	__poll_t mask = rcvfix_mptcp_poll_fn(file, sock, wait);
	struct sock *msk = sock->sk;
	bool ready;

	if ((mask & EPOLLIN) && !(mask & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
	    inet_sk_state_load(msk) != TCP_LISTEN) {
		spin_lock_bh(&msk->sk_lock.slock);
		ready = sock_owned_by_user_nocheck(msk) ||
			rcvfix_mptcp_ready_locked(msk);
		spin_unlock_bh(&msk->sk_lock.slock);
		if (!ready)
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
 * SO_RCVLOWAT on @msk, which the caller owns (lock_sock()), as TCP's
 * tcp_set_rcvlowat() sets it (see the top); the stock line where the
 * namespace turned the fix off meanwhile.
 */
static void rcvfix_mptcp_set_rcvlowat(struct sock *msk, int val)
{
	const struct net *net = sock_net(msk);
	bool locked = msk->sk_userlocks & SOCK_RCVBUF_LOCK;
	bool ready;
	int cap;

	if (!rcvfix_net_enabled(net)) {
		WRITE_ONCE(msk->sk_rcvlowat, val ? : 1);
		return;
	}
	cap = locked ? msk->sk_rcvbuf >> 1 :
		       READ_ONCE(net->ipv4.sysctl_tcp_rmem[2]) >> 1;
	val = min(val, cap);
	WRITE_ONCE(msk->sk_rcvlowat, val ? : 1);

	spin_lock_bh(&msk->sk_lock.slock);
	ready = rcvfix_mptcp_ready_locked(msk);
	spin_unlock_bh(&msk->sk_lock.slock);
	if (ready)
		msk->sk_data_ready(msk);

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
		lock_sock(msk);
		rcvfix_mptcp_set_rcvlowat(msk, val < 0 ? INT_MAX : val);
		release_sock(msk);
	}
	rcvfix_hook_done();
	return ret;
}

/*
 * From the SOL_SOCKET setsockopt entry callback (rcvbuf.c) for
 * SO_RCVLOWAT: an msk of a kernel without the fix, set from user space
 * (MPTCP sends its SOL_SOCKET options there; a BPF program never sets an
 * msk's options), in a namespace with the fix on.
 */
void rcvfix_mptcp_lowat_setsockopt_entry(struct ftrace_regs *fregs,
					 struct sock *sk)
{
	if (!rcvfix_mptcp_lowat_fixing || sk->sk_protocol != IPPROTO_MPTCP ||
	    has_current_bpf_ctx() || !rcvfix_net_enabled(sock_net(sk)))
		return;
	rcvfix_hook_redirect(fregs, rcvfix_mptcp_setsockopt);
}
