// SPDX-License-Identifier: GPL-2.0
/*
 * The SO_RCVBUF lock fix. Stock __sock_set_rcvbuf() always sets
 * SOCK_RCVBUF_LOCK; the replacements here apply rcvfix_rcvbuf_rule()
 * instead, in namespaces where net.rcvfix.enable is 1, on TCP and MPTCP
 * stream sockets only (the rule's threshold is TCP's tcp_rmem[1]; other
 * families keep the kernel's own code, see docs/design.md "Scope: which
 * sockets"). Strategy "callers", shown in /proc/net/rcvfix:
 * __sock_set_rcvbuf() is static in
 * net/core/sock.c with exactly two callers, both redirected, so no copy
 * the compiler may have inlined is missed:
 *
 *  sock_set_rcvbuf()  used by in-kernel socket users;
 *  sk_setsockopt()    setsockopt(SOL_SOCKET) from user space and
 *                     bpf_setsockopt(), but only for SO_RCVBUF and
 *                     SO_RCVBUFFORCE. Every other option meets one compare
 *                     in the entry callback and runs the kernel's own code,
 *                     but SO_RCVLOWAT on an MPTCP socket of a kernel whose
 *                     MPTCP lacks the wakeup fix (mptcp_lowat.c).
 *
 * Before 6.0 the SOL_SOCKET entry is sock_setsockopt() (user space only)
 * and bpf_setsockopt() has its own SO_RCVBUF code: bpf_legacy.c adds its
 * hooks. MPTCP subflows follow the MPTCP socket's lock: mptcp.c. The list
 * of hooked functions: targets.c.
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
#include <net/inet_common.h>
#include <net/tcp.h>

#include "hook.h"
#include "mptcp_setlowat.h"
#include "netns.h"
#include "rcvbuf.h"
#include "rule.h"
#include "trace.h"

/* MPTCP sockets are out of scope until mptcp.c can walk their subflows. */
bool rcvfix_rcvbuf_mptcp_in_scope __read_mostly;

/**
 * rcvfix_rcvbuf_scope_mptcp - do MPTCP sockets follow the rule?
 * @in_scope: true once their subflows can follow (mptcp.c)
 *
 * At load, before any hook is armed; never after.
 */
void rcvfix_rcvbuf_scope_mptcp(bool in_scope)
{
	rcvfix_rcvbuf_mptcp_in_scope = in_scope;
}

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
 * The window clamp tcp_init_buffer_space() gives an established socket
 * whose buffer has the window @maxwin: tcp_app_win's share and one
 * segment held back.
 */
static __always_inline int rcvfix_setup_clamp(const struct sock *sk,
					      int maxwin)
{
	int app_win = READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_app_win);
	int advmss = tcp_sk(sk)->advmss;
	int clamp = maxwin;

	if (app_win && maxwin > 4 * advmss)
		clamp = max(maxwin - (maxwin >> app_win), 4 * advmss);
	if (app_win && clamp > 2 * advmss && clamp + advmss > maxwin)
		clamp = max(2 * advmss, maxwin - advmss);
	return clamp;
}

/*
 * Is @sk's window clamp the kernel's, not one the application set
 * (TCP_WINDOW_CLAMP, a BPF program, a route's window)? The kernel has no
 * flag for it, but sets an established socket's clamp to exactly one of
 * two values for the buffer it has (@old_rcvbuf, before this call): the
 * buffer's window once setup is done (tcp_init_buffer_space()), or the
 * whole window when autotuning grows the buffer (tcp_rcv_space_adjust():
 * "make the window clamp follow along", the new buffer then is the one it
 * has) or, 6.5+, when the scaling ratio changes. rcvfix raised it to the
 * whole window too. Any other value is someone else's. One of the
 * kernel's is taken for someone else's: after tcp_clamp_window() grew the
 * buffer under memory pressure without the clamp; it is left as stock
 * leaves it. An application clamp equal to one of those two values cannot
 * be told apart from the kernel's.
 */
static __always_inline bool rcvfix_kernel_clamp(const struct sock *sk,
						int old_rcvbuf)
{
	int clamp = tcp_sk(sk)->window_clamp;
	int win = tcp_win_from_space(sk, old_rcvbuf);

	return clamp == win || clamp == rcvfix_setup_clamp(sk, win);
}

/*
 * What autotuning does when it grows a TCP buffer (tcp_rcv_space_adjust():
 * "make the window clamp follow along"), for a buffer whose lock rcvfix
 * avoided on an established TCP socket (or on an established subflow of
 * the MPTCP socket it was set on: mptcp.c): raise the window clamp to the
 * new buffer's window, never lower it. Without this a buffer set at or
 * above tcp_rmem[2] after the handshake kept the clamp of connection setup
 * for good, as autotuning never exceeds such a buffer (6.1; 6.12 raises it
 * when the scaling ratio changes). Before and during the handshake the
 * clamp is left alone: it caps the window scale chosen at connect time.
 *
 * A clamp the application set (not rcvfix_kernel_clamp(), for @old_rcvbuf
 * >= 0) stays before Linux 7.1, where stock's SO_RCVBUF leaves it (it only goes
 * when autotuning grows the buffer, as on stock with the buffer unlocked).
 * Since 7.1 stock's SO_RCVBUF sets the clamp to the buffer's window
 * (tcp_set_rcvbuf()), over the application's too: so does this, upwards.
 * The socket is locked by the caller (or bh-locked on its receive path).
 */
static __always_inline void rcvfix_clamp_follow(struct sock *sk,
						int old_rcvbuf)
{
	struct tcp_sock *tp;
	int win;

	if (sk->sk_protocol != IPPROTO_TCP ||
	    ((1 << sk->sk_state) &
	     (TCPF_CLOSE | TCPF_LISTEN | TCPF_SYN_SENT | TCPF_SYN_RECV)))
		return;
	tp = tcp_sk(sk);
	win = tcp_win_from_space(sk, sk->sk_rcvbuf);
	if (!tp->window_clamp || win <= (int)tp->window_clamp)
		return;
	if (!RCVFIX_STOCK_SETS_CLAMP && old_rcvbuf >= 0 &&
	    !rcvfix_kernel_clamp(sk, old_rcvbuf))
		return;
	WRITE_ONCE(tp->window_clamp, win);
}

/*
 * The same for mptcp.c, for a subflow given its MPTCP socket's buffer.
 * Subflows have no clamp of the application's (MPTCP passes no
 * TCP_WINDOW_CLAMP on to them, 6.1 to 7.3), and the MPTCP socket's
 * autotuning sets their clamp from its own scaling ratio: the test above
 * does not apply, the clamp follows the buffer up.
 */
void rcvfix_tcp_clamp_follow(struct sock *sk)
{
	rcvfix_clamp_follow(sk, -1);
}

/*
 * What stock's MPTCP sync does to a subflow it locks, after copying its
 * msk's buffer: since Linux 7.1, tcp_set_rcvbuf() (TCP's set_rcvbuf
 * operation), which sets the window clamp from it. Nothing before.
 */
void rcvfix_tcp_set_rcvbuf(struct sock *sk)
{
	void (*set_rcvbuf)(struct sock *sk, int val);

	set_rcvbuf = rcvfix_proto_ops_set_rcvbuf(&inet_stream_ops);
	if (set_rcvbuf)
		set_rcvbuf(sk, sk->sk_rcvbuf);
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
	int old_rcvbuf = sk->sk_rcvbuf;
	enum rcvfix_outcome outcome;
	int size;

	outcome = rcvfix_rcvbuf_rule(&req, &size);
	if (outcome == RCVFIX_LOCK_AVOIDED) {
		WRITE_ONCE(sk->sk_rcvbuf, size);
		rcvfix_clamp_follow(sk, old_rcvbuf);
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

/* The entry callback of the SOL_SOCKET setsockopt hook (targets.c). */
void notrace rcvfix_entry_sk_setsockopt(unsigned long ip,
					unsigned long parent_ip,
					struct ftrace_ops *ops,
					struct ftrace_regs *fregs)
{
	int optname = (int)rcvfix_fregs_arg(fregs, 2);
	struct rcvfix_setsockopt_obj *obj;
	struct sock *sk;

	if (likely(optname != SO_RCVBUF && optname != SO_RCVBUFFORCE &&
		   optname != SO_RCVLOWAT))
		return;
	obj = (struct rcvfix_setsockopt_obj *)rcvfix_fregs_arg(fregs, 0);
	sk = rcvfix_setsockopt_sk(obj);
	if (optname == SO_RCVLOWAT) {
		rcvfix_mptcp_lowat_setsockopt_entry(fregs, sk);
		return;
	}
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

/* The entry callback of the sock_set_rcvbuf() hook (targets.c). */
void notrace rcvfix_entry_sock_set_rcvbuf(unsigned long ip,
					  unsigned long parent_ip,
					  struct ftrace_ops *ops,
					  struct ftrace_regs *fregs)
{
	struct sock *sk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (rcvfix_sk_in_scope(sk) && rcvfix_net_enabled(sock_net(sk)))
		rcvfix_hook_redirect(fregs, rcvfix_sock_set_rcvbuf);
}
