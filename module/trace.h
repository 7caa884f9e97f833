/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoint rcvfix:rcvbuf_set: one event per receive-buffer change that
 * rcvfix applied (calls in namespaces with net.rcvfix.enable=1), naming
 * the namespace, the process, the path, the socket and what the rule did.
 * trace.c defines it (CREATE_TRACE_POINTS); rcvbuf.c emits it.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rcvfix

#if !defined(_RCVFIX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RCVFIX_TRACE_H

#include <linux/sched.h>
#include <linux/socket.h>
#include <linux/tracepoint.h>
#include <net/sock.h>

#include "netns.h"
#include "rule.h"

/* Enum values for user space (perf, bpftrace, trace-cmd) to decode. */
TRACE_DEFINE_ENUM(RCVFIX_PATH_SETSOCKOPT);
TRACE_DEFINE_ENUM(RCVFIX_PATH_BPF);
TRACE_DEFINE_ENUM(RCVFIX_PATH_KERNEL);
TRACE_DEFINE_ENUM(RCVFIX_STOCK);
TRACE_DEFINE_ENUM(RCVFIX_LOCK_SET);
TRACE_DEFINE_ENUM(RCVFIX_LOCK_AVOIDED);
TRACE_DEFINE_ENUM(RCVFIX_LOCK_KEPT);

#define rcvfix_show_path(p)						\
	__print_symbolic(p, { RCVFIX_PATH_SETSOCKOPT, "setsockopt" },	\
			 { RCVFIX_PATH_BPF, "bpf" },			\
			 { RCVFIX_PATH_KERNEL, "kernel" })

#define rcvfix_show_outcome(o)						\
	__print_symbolic(o, { RCVFIX_STOCK, "stock" },			\
			 { RCVFIX_LOCK_SET, "lock_set" },		\
			 { RCVFIX_LOCK_AVOIDED, "lock_avoided" },	\
			 { RCVFIX_LOCK_KEPT, "lock_kept" })

/*
 * val is the request as the buffer setter got it: setsockopt() values
 * are already clamped to net.core.rmem_max (SO_RCVBUF) or to 0 and up
 * (SO_RCVBUFFORCE), as in the kernel's own code. size is the resulting
 * sk_rcvbuf; tcp_rmem1 is the namespace's net.ipv4.tcp_rmem[1] it was
 * compared with.
 */
TRACE_EVENT(rcvbuf_set,

	TP_PROTO(const struct sock *sk, int path, int val, int size,
		 int outcome, int tcp_rmem1),

	TP_ARGS(sk, path, val, size, outcome, tcp_rmem1),

	TP_STRUCT__entry(
		__field(unsigned int, netns_ino)
		__field(pid_t, pid)
		__array(char, comm, TASK_COMM_LEN)
		__field(int, path)
		__field(u16, family)
		__field(u16, protocol)
		__field(int, val)
		__field(int, size)
		__field(int, outcome)
		__field(int, tcp_rmem1)
	),

	TP_fast_assign(
		__entry->netns_ino = sock_net(sk)->ns.inum;
		__entry->pid = task_tgid_nr(current);
		memcpy(__entry->comm, current->comm, TASK_COMM_LEN);
		__entry->path = path;
		__entry->family = sk->sk_family;
		__entry->protocol = sk->sk_protocol;
		__entry->val = val;
		__entry->size = size;
		__entry->outcome = outcome;
		__entry->tcp_rmem1 = tcp_rmem1;
	),

	TP_printk("netns=%u pid=%d comm=%s path=%s family=%u protocol=%u val=%d size=%d outcome=%s tcp_rmem1=%d",
		  __entry->netns_ino, __entry->pid, __entry->comm,
		  rcvfix_show_path(__entry->path), __entry->family,
		  __entry->protocol, __entry->val, __entry->size,
		  rcvfix_show_outcome(__entry->outcome), __entry->tcp_rmem1)
);

#endif /* _RCVFIX_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
