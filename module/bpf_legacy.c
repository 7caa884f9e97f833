// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_setsockopt(SOL_SOCKET, SO_RCVBUF) on kernels before 6.0 (Debian 11's
 * 5.10), built only there (module/Kbuild). There _bpf_setsockopt() in
 * net/core/filter.c sets the buffer with its own copy of the stock code:
 *
 *	case SO_RCVBUF:
 *		val = min_t(u32, val, READ_ONCE(sysctl_rmem_max));
 *		val = min_t(int, val, INT_MAX / 2);
 *		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
 *		WRITE_ONCE(sk->sk_rcvbuf, max_t(int, val * 2, SOCK_MIN_RCVBUF));
 *
 * (the original patch changed that hunk too). _bpf_setsockopt() is static
 * and split by the compiler (a .cold part), so its two callers, the
 * helpers bpf_sock_ops_setsockopt() and bpf_sock_addr_setsockopt(), are
 * redirected instead (by one replacement: their contexts keep the socket
 * at the same place), for SOL_SOCKET/SO_RCVBUF only: every other option
 * runs the kernel's code. The BPF program runs with the socket locked by
 * its caller (sock_owned_by_me() in the stock code), so the replacement
 * takes no lock, as stock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/filter.h>
#include <net/sock.h>

#include "bpf_legacy.h"
#include "hook.h"
#include "netns.h"
#include "rcvbuf.h"

/*
 * The socket of either helper's context: both keep it at the same place,
 * so that one replacement serves both.
 */
static __always_inline struct sock *rcvfix_bpf_ctx_sk(unsigned long ctx)
{
	BUILD_BUG_ON(offsetof(struct bpf_sock_ops_kern, sk) !=
		     offsetof(struct bpf_sock_addr_kern, sk));
	return ((struct bpf_sock_ops_kern *)ctx)->sk;
}

/*
 * _bpf_setsockopt()'s SO_RCVBUF case with the checks before it, for
 * either helper (BPF_CALL_5: five u64 arguments).
 */
static u64 rcvfix_bpf_setsockopt(u64 ctx, u64 level, u64 optname, u64 optval,
				 u64 optlen)
{
	struct sock *sk = rcvfix_bpf_ctx_sk(ctx);
	u64 ret = 0;

	if (!sk_fullsock(sk)) {
		ret = -EINVAL;
	} else if ((int)optlen != sizeof(int)) {
		ret = -EINVAL;
	} else {
		sock_owned_by_me(sk);
		rcvfix_set_rcvbuf(sk, min_t(u32, *(int *)(long)optval,
					    READ_ONCE(sysctl_rmem_max)),
				  RCVFIX_PATH_BPF);
	}
	rcvfix_hook_done();
	return ret;
}

/*
 * Redirects SOL_SOCKET/SO_RCVBUF on a full socket of an enabled namespace.
 * sock_ops programs also run on request sockets (TIMEOUT_INIT, RWND_INIT
 * on a SYN), which are smaller than a struct sock: only their sock_common
 * part (sk_state, sk_net) may be read, so sk_fullsock() comes first. Such a
 * call runs the kernel's code, which refuses it with -EINVAL.
 */
void notrace rcvfix_entry_bpf_setsockopt(unsigned long ip,
					 unsigned long parent_ip,
					 struct ftrace_ops *ops,
					 struct ftrace_regs *fregs)
{
	struct sock *sk = rcvfix_bpf_ctx_sk(rcvfix_fregs_arg(fregs, 0));

	if ((int)rcvfix_fregs_arg(fregs, 1) == SOL_SOCKET &&
	    (int)rcvfix_fregs_arg(fregs, 2) == SO_RCVBUF &&
	    sk_fullsock(sk) && rcvfix_sk_in_scope(sk) &&
	    rcvfix_net_enabled(sock_net(sk)))
		rcvfix_hook_redirect(fregs, rcvfix_bpf_setsockopt);
}
