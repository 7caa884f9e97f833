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
 * MPTCP subflows follow the MPTCP socket's lock: mptcp.c.
 *
 * In a disabled namespace nothing is redirected: the kernel's code runs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/sockptr.h>
#include <net/sock.h>

#include "hook.h"
#include "mptcp.h"
#include "netns.h"
#include "rcvbuf.h"
#include "rule.h"

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
 * Set @sk's receive buffer from @val (already clamped by the caller as
 * the stock caller clamps it), with the socket locked by the caller.
 * The namespace's switch is read again here, under the socket lock: a
 * call that waited for the lock while the switch was turned off behaves
 * as stock. Every outcome that locks runs what stock runs, in its order;
 * an avoided lock skips the lock and what the lock brings (on 7.1 and
 * later the window clamp: autotuning raises it with the buffer).
 */
static void rcvfix_set_rcvbuf(struct sock *sk, int val, enum rcvfix_path path)
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
	} else {
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
		WRITE_ONCE(sk->sk_rcvbuf, size);
		rcvfix_proto_set_rcvbuf(sk, sock);
	}
	rcvfix_net_count(rn, path, outcome);
}

/* ---- strategy "callers": sk_setsockopt() and sock_set_rcvbuf() ---- */

/*
 * The rule is TCP's: TCP and MPTCP stream sockets over IPv4 and IPv6.
 * Everything else (UDP, UNIX, SMC, ...) runs the kernel's own code.
 */
static __always_inline bool rcvfix_sk_in_scope(const struct sock *sk)
{
	return (sk->sk_protocol == IPPROTO_TCP ||
		sk->sk_protocol == IPPROTO_MPTCP) &&
	       sk->sk_type == SOCK_STREAM &&
	       (sk->sk_family == AF_INET || sk->sk_family == AF_INET6);
}

/*
 * sk_setsockopt() for SO_RCVBUF and SO_RCVBUFFORCE only, line for line the
 * stock code paths of those two options, including the BPF case where
 * the caller already holds the socket lock (sockopt_lock_sock() and
 * sockopt_capable() know it from current->bpf_ctx).
 */
static int rcvfix_sk_setsockopt(struct sock *sk, int level, int optname,
				sockptr_t optval, unsigned int optlen)
{
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
	sk = (struct sock *)rcvfix_fregs_arg(fregs, 0);
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

/* ---- choosing and arming a strategy ---- */

struct rcvfix_strategy {
	const char *name;
	struct rcvfix_hook *hooks;
	unsigned int nr_hooks;
};

static struct rcvfix_hook rcvfix_callers_hooks[] = {
	{ .name = "sk_setsockopt", .entry = rcvfix_entry_sk_setsockopt },
	{ .name = "sock_set_rcvbuf", .entry = rcvfix_entry_sock_set_rcvbuf },
	{ .name = RCVFIX_MPTCP_TARGET, .entry = rcvfix_mptcp_entry_sync_intval,
	  .optional = true },
};

static struct rcvfix_strategy rcvfix_strategies[] = {
	{ "callers", rcvfix_callers_hooks, ARRAY_SIZE(rcvfix_callers_hooks) },
};

static struct rcvfix_strategy *rcvfix_strategy;

/* The hooked functions, for the load log line; "" before init. */
static char rcvfix_targets[128];

static const char *rcvfix_hook_error(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such function in this kernel";
	case -EINVAL:
		return "not a function ftrace can redirect";
	case -EBUSY:
		return "another IP-modifying ftrace user (e.g. a livepatch) owns it";
	case -ENODEV:
		return "ftrace is disabled on this kernel";
	case -ENOMEM:
		return "out of memory";
	default:
		return "ftrace refused it";
	}
}

static void rcvfix_strategy_disarm(struct rcvfix_strategy *s)
{
	unsigned int i;

	for (i = s->nr_hooks; i-- > 0;)
		rcvfix_hook_disarm(&s->hooks[i]);
}

static int rcvfix_strategy_arm(struct rcvfix_strategy *s)
{
	struct rcvfix_hook *hook;
	unsigned int i;
	int ret;

	for (i = 0; i < s->nr_hooks; i++) {
		hook = &s->hooks[i];
		ret = rcvfix_hook_resolve(hook);
		if (ret == -ENOENT && hook->optional) {
			pr_info("%s: %s; left to the kernel\n", hook->name,
				rcvfix_hook_error(ret));
			hook->missing = true;
			continue;
		}
		if (!ret)
			ret = rcvfix_hook_arm(hook);
		if (ret)
			goto err;
	}
	return 0;

err:
	pr_err("cannot hook %s: %s (%d)\n", hook->name, rcvfix_hook_error(ret),
	       ret);
	rcvfix_strategy_disarm(s);
	rcvfix_hook_quiesce();
	return ret;
}

int rcvfix_rcvbuf_init(void)
{
	struct rcvfix_strategy *s = &rcvfix_strategies[0];
	unsigned int i, n = 0;
	int ret;

	ret = rcvfix_strategy_arm(s);
	if (ret)
		return ret;
	rcvfix_strategy = s;
	for (i = 0; i < s->nr_hooks; i++)
		if (!s->hooks[i].missing)
			n += scnprintf(rcvfix_targets + n,
				       sizeof(rcvfix_targets) - n, "%s%s",
				       n ? ", " : "", s->hooks[i].name);
	return 0;
}

void rcvfix_rcvbuf_exit(void)
{
	rcvfix_strategy_disarm(rcvfix_strategy);
	rcvfix_hook_quiesce();
	rcvfix_strategy = NULL;
}

const char *rcvfix_rcvbuf_strategy(void)
{
	return rcvfix_strategy ? rcvfix_strategy->name : "none";
}

const char *rcvfix_rcvbuf_targets(void)
{
	return rcvfix_targets;
}

/* "strategy NAME" and "targets F1,F2" lines of /proc/net/rcvfix */
void rcvfix_rcvbuf_show(struct seq_file *m)
{
	unsigned int i;

	seq_printf(m, "strategy %s\n", rcvfix_rcvbuf_strategy());
	seq_puts(m, "targets ");
	for (i = 0; rcvfix_strategy && i < rcvfix_strategy->nr_hooks; i++)
		if (!rcvfix_strategy->hooks[i].missing)
			seq_printf(m, "%s%s", i ? "," : "",
				   rcvfix_strategy->hooks[i].name);
	seq_putc(m, '\n');
}
