// SPDX-License-Identifier: GPL-2.0
/*
 * The SO_RCVBUF lock fix. Stock __sock_set_rcvbuf() always sets
 * SOCK_RCVBUF_LOCK; the replacements here apply rcvfix_rcvbuf_rule()
 * instead, in namespaces where net.rcvfix.enable is 1, on TCP and MPTCP
 * stream sockets only (the rule's threshold is TCP's tcp_rmem[1]; other
 * families keep the kernel's own code, see README "Scope"). Strategy
 * "callers", shown in /proc/net/rcvfix: __sock_set_rcvbuf() is static in
 * net/core/sock.c with exactly two callers, both redirected, so no copy
 * the compiler may have inlined is missed:
 *
 *  sock_set_rcvbuf()  used by in-kernel socket users;
 *  sk_setsockopt()    setsockopt(SOL_SOCKET) from user space and
 *                     bpf_setsockopt(), but only for SO_RCVBUF and
 *                     SO_RCVBUFFORCE. Every other option meets one compare
 *                     in the entry callback and runs the kernel's own code.
 *
 * Before 6.0 the SOL_SOCKET entry is sock_setsockopt() (user space only)
 * and bpf_setsockopt() has its own SO_RCVBUF code: bpf_legacy.c adds its
 * hooks.
 *
 * MPTCP subflows follow the MPTCP socket's lock: mptcp.c.
 *
 * In a disabled namespace nothing is redirected: the kernel's code runs.
 * While no namespace has the fix enabled, the hooks are not even armed
 * (arm.c): the kernel runs with no callback at all.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/sockptr.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "bpf_legacy.h"
#include "hook.h"
#include "mptcp.h"
#include "netns.h"
#include "rcvbuf.h"
#include "rule.h"
#include "trace.h"

/*
 * What stock __sock_set_rcvbuf() does after it has locked the buffer, since
 * Linux 7.1: hand the new size to the protocol (TCP: the window clamp
 * follows it). @sock is sk->sk_socket as read before the buffer was set,
 * and sock->ops is read once, as stock does. Nothing on older kernels.
 */
static void rcvfix_proto_set_rcvbuf(struct sock *sk, struct socket *sock)
{
	void (*set_rcvbuf)(struct sock *sk, int val);
	const struct proto_ops *ops;

	if (!sock)
		return;
	ops = READ_ONCE(sock->ops);
	set_rcvbuf = rcvfix_proto_ops_set_rcvbuf(ops);
	if (set_rcvbuf)
		set_rcvbuf(sk, sk->sk_rcvbuf);
}

/*
 * What autotuning does when it grows a TCP buffer (tcp_rcv_space_adjust():
 * "make the window clamp follow along"), for a buffer whose lock rcvfix
 * avoided on an established TCP socket: raise the window clamp to the new
 * buffer's window, never lower it. Without this a buffer set at or above
 * tcp_rmem[2] after the handshake kept the clamp of connection setup for
 * good, as autotuning never exceeds such a buffer (6.1; 6.12 raises it when
 * the scaling ratio changes). Before and during the handshake the clamp is
 * left alone: it caps the window scale chosen at connect time. The socket
 * is locked by the caller.
 */
static void rcvfix_tcp_clamp_follow(struct sock *sk)
{
	struct tcp_sock *tp;
	int win;

	if (sk->sk_protocol != IPPROTO_TCP ||
	    ((1 << sk->sk_state) &
	     (TCPF_CLOSE | TCPF_LISTEN | TCPF_SYN_SENT | TCPF_SYN_RECV)))
		return;
	tp = tcp_sk(sk);
	win = tcp_win_from_space(sk, sk->sk_rcvbuf);
	if (tp->window_clamp && win > (int)tp->window_clamp)
		WRITE_ONCE(tp->window_clamp, win);
}

/*
 * Set @sk's receive buffer from @val (already clamped by the caller as
 * the stock caller clamps it), with the socket locked by the caller.
 * The namespace's switch is read again here, under the socket lock: a
 * call that waited for the lock while the switch was turned off behaves
 * as stock. Every outcome that locks runs what stock runs, in its order;
 * an avoided lock skips the lock, and raises the window clamp of an
 * established TCP socket to the new buffer as autotuning would.
 */
void rcvfix_set_rcvbuf(struct sock *sk, int val, enum rcvfix_path path)
{
	struct socket *sock = sk->sk_socket;
	const struct net *net = sock_net(sk);
	struct rcvfix_net *rn = rcvfix_net(net);
	struct rcvfix_rcvbuf_req req = {
		.val = val,
		.min_rcvbuf = SOCK_MIN_RCVBUF,
		.rmem_default = READ_ONCE(net->ipv4.sysctl_tcp_rmem[1]),
		.was_locked = sk->sk_userlocks & SOCK_RCVBUF_LOCK,
		.enabled = rcvfix_rn_enabled(rn),
	};
	enum rcvfix_outcome outcome;
	int size;

	outcome = rcvfix_rcvbuf_rule(&req, &size);
	if (outcome == RCVFIX_LOCK_AVOIDED) {
		WRITE_ONCE(sk->sk_rcvbuf, size);
		rcvfix_tcp_clamp_follow(sk);
	} else {
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
		WRITE_ONCE(sk->sk_rcvbuf, size);
		rcvfix_proto_set_rcvbuf(sk, sock);
	}
	rcvfix_net_count(rn, path, outcome);
	trace_rcvbuf_set(sk, path, val, size, outcome, req.rmem_default);
}

/* ---- strategy "callers": sk_setsockopt() and sock_set_rcvbuf() ---- */

/*
 * sk_setsockopt() for SO_RCVBUF and SO_RCVBUFFORCE only, line for line the
 * stock code paths of those two options, including the BPF case where
 * the caller already holds the socket lock (sockopt_lock_sock() and
 * sockopt_capable() know it from current->bpf_ctx).
 */
static int rcvfix_sk_setsockopt(struct rcvfix_setsockopt_obj *obj, int level,
				int optname, sockptr_t optval,
				unsigned int optlen)
{
	struct sock *sk = rcvfix_setsockopt_sk(obj);
	enum rcvfix_path path = has_current_bpf_ctx() ? RCVFIX_PATH_BPF :
							RCVFIX_PATH_SETSOCKOPT;
	int ret = 0;
	int val;

	if (optlen < sizeof(int)) {
		ret = -EINVAL;
		goto out;
	}
	if (copy_from_sockptr(&val, optval, sizeof(val))) {
		ret = -EFAULT;
		goto out;
	}

	sockopt_lock_sock(sk);
	if (optname == SO_RCVBUF) {
		rcvfix_set_rcvbuf(sk, min_t(u32, val,
					    READ_ONCE(sysctl_rmem_max)), path);
	} else if (sockopt_capable(CAP_NET_ADMIN)) {
		/* SO_RCVBUFFORCE: no negative values (val is doubled). */
		rcvfix_set_rcvbuf(sk, max(val, 0), path);
	} else {
		ret = -EPERM;
	}
	sockopt_release_sock(sk);
out:
	rcvfix_hook_done();
	return ret;
}

static void notrace rcvfix_entry_sk_setsockopt(unsigned long ip,
					       unsigned long parent_ip,
					       struct ftrace_ops *ops,
					       struct ftrace_regs *fregs)
{
	int optname = (int)rcvfix_fregs_arg(fregs, 2);
	struct sock *sk;

	if (likely(optname != SO_RCVBUF && optname != SO_RCVBUFFORCE))
		return;
	sk = rcvfix_setsockopt_sk((struct rcvfix_setsockopt_obj *)
				  rcvfix_fregs_arg(fregs, 0));
	if (rcvfix_sk_in_scope(sk) && rcvfix_net_enabled(sock_net(sk)))
		rcvfix_hook_redirect(fregs, rcvfix_sk_setsockopt);
}

static void rcvfix_sock_set_rcvbuf(struct sock *sk, int val)
{
	lock_sock(sk);
	rcvfix_set_rcvbuf(sk, val, RCVFIX_PATH_KERNEL);
	release_sock(sk);
	rcvfix_hook_done();
}

static void notrace rcvfix_entry_sock_set_rcvbuf(unsigned long ip,
						 unsigned long parent_ip,
						 struct ftrace_ops *ops,
						 struct ftrace_regs *fregs)
{
	struct sock *sk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (rcvfix_sk_in_scope(sk) && rcvfix_net_enabled(sock_net(sk)))
		rcvfix_hook_redirect(fregs, rcvfix_sock_set_rcvbuf);
}

/* ---- the hooks of the strategy ---- */

/*
 * The hooks that together see every path setting a receive buffer. They
 * are resolved at load (a missing one refuses the load, an optional one
 * is left to the kernel and not listed) and armed and disarmed all or
 * nothing by arm.c, only while some namespace has the fix enabled.
 */
static struct rcvfix_hook rcvfix_candidate_hooks[] = {
	/*
	 * First, so that it is armed before and disarmed after the hooks
	 * that avoid an MPTCP socket's lock: with those armed alone, stock
	 * sync would lock the subflows of an unlocked MPTCP socket for the
	 * connection's life.
	 */
	{ .name = RCVFIX_MPTCP_TARGET, .entry = rcvfix_mptcp_entry_sync_intval,
	  .optional = true },
	{ .name = RCVFIX_SETSOCKOPT_NAME, .entry = rcvfix_entry_sk_setsockopt },
	{ .name = "sock_set_rcvbuf", .entry = rcvfix_entry_sock_set_rcvbuf },
	RCVFIX_BPF_LEGACY_HOOK_SOCK_OPS
	RCVFIX_BPF_LEGACY_HOOK_SOCK_ADDR
	{ .name = RCVFIX_MPTCP_CONNECT,
	  .entry = rcvfix_mptcp_entry_finish_connect,
	  .optional = true, .observe = true },
	{ .name = RCVFIX_MPTCP_ACCEPT,
	  .entry = rcvfix_mptcp_entry_syn_recv_sock,
	  .optional = true, .observe = true },
};

/* The resolved ones, set once at load before any namespace can arm them. */
static struct rcvfix_hook *rcvfix_hooks[ARRAY_SIZE(rcvfix_candidate_hooks)];
static unsigned int rcvfix_nr_hooks;

/* The hooked functions, ", "-separated for the load log line. */
static char rcvfix_targets[256];

/* Resolves the hooks; arms nothing. */
int rcvfix_rcvbuf_init(void)
{
	struct rcvfix_hook *hook;
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < ARRAY_SIZE(rcvfix_candidate_hooks); i++) {
		hook = &rcvfix_candidate_hooks[i];
		ret = rcvfix_hook_resolve(hook);
		if ((ret == -ENOENT || ret == -EINVAL) && hook->optional) {
			pr_info("%s: %s; left to the kernel\n", hook->name,
				ret == -ENOENT ? "no such function in this kernel" :
						 "ftrace cannot attach to it");
			continue;
		}
		if (ret) {
			pr_err("cannot hook %s: %s (%d)\n", hook->name,
			       ret == -EINVAL ? "ftrace cannot attach to it" :
						"no such function in this kernel",
			       ret);
			return ret;
		}
		rcvfix_hooks[rcvfix_nr_hooks++] = hook;
		n += scnprintf(rcvfix_targets + n, sizeof(rcvfix_targets) - n,
			       "%s%s", n ? ", " : "", hook->name);
	}
	return 0;
}

/* The hooks arm.c arms and disarms, after rcvfix_rcvbuf_init(). */
struct rcvfix_hook *const *rcvfix_rcvbuf_hooks(unsigned int *n)
{
	*n = rcvfix_nr_hooks;
	return rcvfix_hooks;
}

const char *rcvfix_rcvbuf_strategy(void)
{
	return "callers";
}

const char *rcvfix_rcvbuf_targets(void)
{
	return rcvfix_targets;
}

/*
 * "strategy NAME" and "targets F1,F2" lines of /proc/net/rcvfix. What they
 * read is written once at load, before the proc files exist, and never
 * cleared.
 */
void rcvfix_rcvbuf_show(struct seq_file *m)
{
	unsigned int i;

	seq_printf(m, "strategy %s\n", rcvfix_rcvbuf_strategy());
	seq_puts(m, "targets ");
	for (i = 0; i < rcvfix_nr_hooks; i++)
		seq_printf(m, "%s%s", i ? "," : "", rcvfix_hooks[i]->name);
	seq_putc(m, '\n');
}
