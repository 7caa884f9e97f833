// SPDX-License-Identifier: GPL-2.0
/*
 * iter/tcp program for sockdiff: one line per full TCP socket (MPTCP
 * subflows included) with local or remote port sockdiff_port, giving the
 * kernel-side fields user space cannot read for a subflow: the lock bits
 * (all of sk_userlocks), the buffers, the window clamp and window. CO-RE through the small
 * views below (no vmlinux.h): libbpf fits their offsets to the running
 * kernel, bit fields included (sk_userlocks is one on 6.1, a u8 later).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#define PRESERVE __attribute__((preserve_access_index))

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
} PRESERVE;

struct sock_common {
	unsigned short skc_num;
	unsigned short skc_dport;
	unsigned char skc_state;
} PRESERVE;

struct bpf_iter__tcp {
	struct bpf_iter_meta *meta;
	struct sock_common *sk_common;
} PRESERVE;

struct sock {
	int sk_rcvbuf;
	int sk_sndbuf;
	unsigned char sk_userlocks;
} PRESERVE;

struct tcp_sock {
	unsigned int window_clamp;
	unsigned int rcv_ssthresh;
	unsigned int rcv_wnd;
	unsigned short advmss;
	struct {
		unsigned int space;
	} rcvq_space;
	_Bool is_mptcp;
} PRESERVE;

/* The server port of the cell: sockdiff sets it (mapped .bss) per snapshot. */
volatile __u16 sockdiff_port;

static const char fmt1[] = "server=%llu state=%llu mptcp=%llu "
	"userlocks=%llu rcvbuf=%llu sndbuf=%llu window_clamp=%llu "
	"rcv_ssthresh=%llu";
static const char fmt2[] = " rcv_wnd=%llu advmss=%llu rcv_space=%llu\n";

SEC("iter/tcp")
int rcvfix_sockdiff_tcp(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct seq_file *seq = ctx->meta->seq;
	unsigned int lport, rport, state;
	struct tcp_sock *tp;
	struct sock *sk;
	__u64 a[8];

	if (!skc)
		return 0;
	lport = BPF_CORE_READ(skc, skc_num);
	rport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	if (lport != sockdiff_port && rport != sockdiff_port)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);	/* NULL for time-wait, request */
	if (!tp)
		return 0;
	sk = (struct sock *)tp;
	state = BPF_CORE_READ(skc, skc_state);

	a[0] = lport == sockdiff_port;
	a[1] = state;
	a[2] = BPF_CORE_READ_BITFIELD_PROBED(tp, is_mptcp);
	a[3] = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_userlocks);
	a[4] = BPF_CORE_READ(sk, sk_rcvbuf);
	a[5] = BPF_CORE_READ(sk, sk_sndbuf);
	a[6] = BPF_CORE_READ(tp, window_clamp);
	a[7] = BPF_CORE_READ(tp, rcv_ssthresh);
	bpf_seq_printf(seq, fmt1, sizeof(fmt1), a, sizeof(a));
	a[0] = BPF_CORE_READ(tp, rcv_wnd);
	a[1] = BPF_CORE_READ(tp, advmss);
	a[2] = BPF_CORE_READ(tp, rcvq_space.space);
	bpf_seq_printf(seq, fmt2, sizeof(fmt2), a, 3 * sizeof(a[0]));
	return 0;
}

char _license[] SEC("license") = "GPL";
