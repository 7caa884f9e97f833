// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup/sockops program for the rcvfix BPF-path test: at the hooks the
 * loader enables, calls bpf_setsockopt(SOL_SOCKET, SO_RCVBUF, val) and
 * records the return code and the resulting SO_RCVBUF, on full sockets and
 * (TIMEOUT_INIT, RWND_INIT) on request sockets; and a cgroup/setsockopt
 * program that sets a socket's SO_RCVLOWAT with bpf_setsockopt() in place
 * of the kernel's handler. No vmlinux.h needed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "rcvfix_sockops.h"

#define SOL_SOCKET	1	/* asm-generic/socket.h, as on x86 */
#define SO_RCVBUF	8
#define SO_RCVLOWAT	18

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rcvfix_sockops_cfg);
} rcvfix_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RCVFIX_HOOK_MAX);
	__type(key, __u32);
	__type(value, struct rcvfix_sockops_res);
} rcvfix_res SEC(".maps");

SEC("sockops")
int rcvfix_sockops(struct bpf_sock_ops *skops)
{
	struct rcvfix_sockops_res *res;
	struct rcvfix_sockops_cfg *cfg;
	__u32 zero = 0, hook, key;
	int val, got = -1;

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		hook = RCVFIX_HOOK_CONNECT;
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		hook = RCVFIX_HOOK_PASSIVE;
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		hook = RCVFIX_HOOK_ACTIVE;
		break;
	/* On a SYN these two run on the request socket, not a full one:
	 * only there (the connecting side runs them on its full socket). */
	case BPF_SOCK_OPS_TIMEOUT_INIT:
		if (skops->is_fullsock)
			return 1;
		hook = RCVFIX_HOOK_TIMEOUT;
		break;
	case BPF_SOCK_OPS_RWND_INIT:
		if (skops->is_fullsock)
			return 1;
		hook = RCVFIX_HOOK_RWND;
		break;
	default:
		return 1;
	}
	cfg = bpf_map_lookup_elem(&rcvfix_cfg, &zero);
	if (!cfg || !(cfg->enabled & (1U << hook)))
		return 1;
	if (cfg->port && cfg->port != skops->local_port &&
	    cfg->port != bpf_ntohl(skops->remote_port))
		return 1;
	/* Index with @hook, a constant per branch; look up with a copy, so
	 * the verifier of older kernels still knows @hook's bounds. */
	val = cfg->val[hook];
	key = hook;
	res = bpf_map_lookup_elem(&rcvfix_res, &key);
	if (!res)
		return 1;
	res->rc = bpf_setsockopt(skops, SOL_SOCKET, SO_RCVBUF, &val,
				 sizeof(val));
	res->get_rc = bpf_getsockopt(skops, SOL_SOCKET, SO_RCVBUF, &got,
				     sizeof(got));
	res->rcvbuf = got;
	__sync_fetch_and_add(&res->calls, 1);
	return 1;
}

/*
 * setsockopt(SOL_SOCKET, SO_RCVLOWAT, val) from the cgroup's processes:
 * the mark is set by bpf_setsockopt() here (on an MPTCP socket, its msk),
 * and the kernel's own handler is skipped (optlen -1).
 */
SEC("cgroup/setsockopt")
int rcvfix_setsockopt(struct bpf_sockopt *ctx)
{
	__u32 zero = 0, key = RCVFIX_HOOK_LOWAT;
	struct rcvfix_sockops_res *res;
	struct rcvfix_sockops_cfg *cfg;
	int val, got = -1;

	if (ctx->level != SOL_SOCKET || ctx->optname != SO_RCVLOWAT)
		return 1;
	cfg = bpf_map_lookup_elem(&rcvfix_cfg, &zero);
	if (!cfg || !(cfg->enabled & (1U << RCVFIX_HOOK_LOWAT)))
		return 1;
	if (ctx->optval + sizeof(int) > ctx->optval_end || !ctx->sk)
		return 1;
	val = *(int *)ctx->optval;
	res = bpf_map_lookup_elem(&rcvfix_res, &key);
	if (!res)
		return 1;
	res->rc = bpf_setsockopt(ctx->sk, SOL_SOCKET, SO_RCVLOWAT, &val,
				 sizeof(val));
	res->get_rc = bpf_getsockopt(ctx->sk, SOL_SOCKET, SO_RCVLOWAT, &got,
				     sizeof(got));
	res->rcvbuf = got;
	__sync_fetch_and_add(&res->calls, 1);
	ctx->optlen = -1;
	return 1;
}

char _license[] SEC("license") = "GPL";
