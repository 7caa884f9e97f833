// SPDX-License-Identifier: GPL-2.0
/*
 * The SO_RCVBUF lock fix. Stock __sock_set_rcvbuf() always sets
 * SOCK_RCVBUF_LOCK; the replacements here apply rcvfix_rcvbuf_rule()
 * instead, in namespaces where net.rcvfix.enable is 1. Two strategies,
 * chosen at load time and shown in /proc/net/rcvfix:
 *
 *  direct   __sock_set_rcvbuf() is a traceable function of its own:
 *           redirect it, and every path that sets the buffer follows.
 *  callers  the compiler inlined it into its two callers (Debian's 6.1,
 *           6.12 and 7.x kernels): redirect sock_set_rcvbuf(), used by
 *           in-kernel socket users, and sk_setsockopt(), which serves
 *           setsockopt(SOL_SOCKET) from user space and bpf_setsockopt(),
 *           but only for SO_RCVBUF and SO_RCVBUFFORCE. Every other
 *           option meets one compare in the entry callback and runs the
 *           kernel's own code. Before 6.0 that entry is sock_setsockopt()
 *           (user space only) and bpf_setsockopt() has its own SO_RCVBUF
 *           code: bpf_legacy.c adds its hooks to this strategy.
 *
 * In a disabled namespace nothing is redirected: the kernel's code runs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sockptr.h>
#include <net/sock.h>
#include <asm/syscall.h>

#include "bpf_legacy.h"
#include "hook.h"
#include "netns.h"
#include "rcvbuf.h"
#include "rule.h"

/*
 * Set @sk's receive buffer from @val (already clamped by the caller as
 * the stock caller clamps it), with the socket locked by the caller.
 * The namespace's switch is read again here, under the socket lock: a
 * call that waited for the lock while the switch was turned off behaves
 * as stock.
 */
void rcvfix_set_rcvbuf(struct sock *sk, int val, enum rcvfix_path path)
{
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
	if (outcome != RCVFIX_LOCK_AVOIDED)
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	WRITE_ONCE(sk->sk_rcvbuf, size);
	rcvfix_net_count(rn, path, outcome);
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
	if (rcvfix_net_enabled(sock_net(sk)))
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

	if (rcvfix_net_enabled(sock_net(sk)))
		rcvfix_hook_redirect(fregs, rcvfix_sock_set_rcvbuf);
}

/* ---- strategy "direct": __sock_set_rcvbuf() ---- */

/* Which caller reached __sock_set_rcvbuf(), for the counters. */
static enum rcvfix_path rcvfix_path_of_current(void)
{
	if (has_current_bpf_ctx())
		return RCVFIX_PATH_BPF;
	if (!(current->flags & PF_KTHREAD) &&
	    syscall_get_nr(current, task_pt_regs(current)) == __NR_setsockopt)
		return RCVFIX_PATH_SETSOCKOPT;
	return RCVFIX_PATH_KERNEL;
}

static void rcvfix___sock_set_rcvbuf(struct sock *sk, int val)
{
	rcvfix_set_rcvbuf(sk, val, rcvfix_path_of_current());
	rcvfix_hook_done();
}

static void notrace rcvfix_entry___sock_set_rcvbuf(unsigned long ip,
						   unsigned long parent_ip,
						   struct ftrace_ops *ops,
						   struct ftrace_regs *fregs)
{
	struct sock *sk = (struct sock *)rcvfix_fregs_arg(fregs, 0);

	if (rcvfix_net_enabled(sock_net(sk)))
		rcvfix_hook_redirect(fregs, rcvfix___sock_set_rcvbuf);
}

/* ---- choosing and arming a strategy ---- */

struct rcvfix_strategy {
	const char *name;
	const char *targets;	/* the hooks' names, for the log */
	struct rcvfix_hook *hooks;
	unsigned int nr_hooks;
};

static struct rcvfix_hook rcvfix_direct_hooks[] = {
	{ .name = "__sock_set_rcvbuf",
	  .entry = rcvfix_entry___sock_set_rcvbuf },
};

static struct rcvfix_hook rcvfix_callers_hooks[] = {
	{ .name = RCVFIX_SETSOCKOPT_NAME, .entry = rcvfix_entry_sk_setsockopt },
	{ .name = "sock_set_rcvbuf", .entry = rcvfix_entry_sock_set_rcvbuf },
	RCVFIX_BPF_LEGACY_HOOK_SOCK_OPS
	RCVFIX_BPF_LEGACY_HOOK_SOCK_ADDR
};

static struct rcvfix_strategy rcvfix_strategies[] = {
	{ "direct", "__sock_set_rcvbuf", rcvfix_direct_hooks,
	  ARRAY_SIZE(rcvfix_direct_hooks) },
	{ "callers", RCVFIX_SETSOCKOPT_NAME ", sock_set_rcvbuf"
	  RCVFIX_BPF_LEGACY_TARGETS, rcvfix_callers_hooks,
	  ARRAY_SIZE(rcvfix_callers_hooks) },
};

static struct rcvfix_strategy *rcvfix_strategy;

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

/*
 * Direct where __sock_set_rcvbuf() exists and ftrace can redirect it;
 * otherwise (it was inlined away) its callers.
 */
static struct rcvfix_strategy *rcvfix_strategy_pick(void)
{
	struct rcvfix_hook probe = { .name = rcvfix_direct_hooks[0].name };
	struct ftrace_ops ops = {};
	int ret;

	if (rcvfix_hook_resolve(&probe))
		return &rcvfix_strategies[1];
	ret = ftrace_set_filter_ip(&ops, probe.addr, 0, 0);
	rcvfix_ftrace_free_filter(&ops);
	return ret ? &rcvfix_strategies[1] : &rcvfix_strategies[0];
}

int rcvfix_rcvbuf_init(void)
{
	struct rcvfix_strategy *s = rcvfix_strategy_pick();
	int ret;

	ret = rcvfix_strategy_arm(s);
	if (ret)
		return ret;
	rcvfix_strategy = s;
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
	return rcvfix_strategy ? rcvfix_strategy->targets : "";
}

/* "strategy NAME" and "targets F1,F2" lines of /proc/net/rcvfix */
void rcvfix_rcvbuf_show(struct seq_file *m)
{
	unsigned int i;

	seq_printf(m, "strategy %s\n", rcvfix_rcvbuf_strategy());
	seq_puts(m, "targets ");
	for (i = 0; rcvfix_strategy && i < rcvfix_strategy->nr_hooks; i++)
		seq_printf(m, "%s%s", i ? "," : "",
			   rcvfix_strategy->hooks[i].name);
	seq_putc(m, '\n');
}
