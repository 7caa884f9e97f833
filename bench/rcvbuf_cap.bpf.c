// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup/setsockopt program, the BPF alternative to the rcvfix module:
 * setsockopt(SOL_SOCKET, SO_RCVBUF, val) with val >= min_val (the loader
 * sets it to tcp_rmem[1] / 2) is swallowed: the call returns 0 and the
 * kernel never sees it, so the buffer keeps its default and autotunes.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define SOL_SOCKET 1 /* asm-generic/socket.h, as on x86 */
#define SO_RCVBUF 8

/* Smallest request swallowed, in bytes as the application passes them. */
const volatile int min_val = 65536;

/* SO_RCVBUF requests seen: swallowed, and handed on to the kernel. */
__u64 n_swallowed;
__u64 n_passed;

SEC("cgroup/setsockopt")
int rcvbuf_cap(struct bpf_sockopt *ctx)
{
	int *val = ctx->optval;

	if (ctx->level != SOL_SOCKET || ctx->optname != SO_RCVBUF)
		return 1;
	if ((void *)(val + 1) > ctx->optval_end)
		return 1;
	if (*val >= min_val) {
		/* optlen -1: return 0 to the caller, skip the kernel */
		ctx->optlen = -1;
		__sync_fetch_and_add(&n_swallowed, 1);
	} else {
		__sync_fetch_and_add(&n_passed, 1);
	}
	return 1;
}

char _license[] SEC("license") = "GPL";
