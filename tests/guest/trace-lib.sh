# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared by the tracepoint tests (62 tracefs, 63 perf, 64 bpftrace): one
# known workload in a fresh namespace and the rcvfix:rcvbuf_set events it
# must produce, as the event's own text (TP_printk of module/trace.h).
# Sourced after lib.sh.

TR_RMEM="4096 425984 6291456"	# tcp_rmem of the test namespaces
TR_RMAX=1048576			# net.core.rmem_max while the test runs

# trace_setup: load rcvfix; TR_NS (enabled, TR_RMEM), TR_OFF (disabled,
# same tcp_rmem), TR_INO (TR_NS's namespace inode). Not in a subshell.
trace_setup() {
	need "$RCVFIX_BIN/sockopt"
	rcvfix_load || { fail "insmod rcvfix.ko"; done_testing; }
	[[ -d /sys/kernel/tracing/events/rcvfix/rcvbuf_set ]] ||
		{ fail "tracefs has events/rcvfix/rcvbuf_set"; done_testing; }
	echo "$TR_RMAX" > /proc/sys/net/core/rmem_max
	TR_NS=$(netns_new trace) && TR_OFF=$(netns_new off) ||
		{ fail "create the test namespaces"; done_testing; }
	ns_write /proc/sys/net/ipv4/tcp_rmem "$TR_RMEM" "$TR_NS"
	ns_write /proc/sys/net/ipv4/tcp_rmem "$TR_RMEM" "$TR_OFF"
	rcvfix_enable 1 "$TR_NS"
	TR_INO=$(stat -L -c %i "/run/netns/$TR_NS")
}

# The workload: two processes in TR_NS (TCP over IPv4, then IPv6), one in
# TR_OFF (disabled: no event). Each line: FAMILY OP...
TR_RUNS=(
	"inet rcvbuf=212992 rcvbuf=65536 rcvbuf=INT_MAX"
	"inet6 rcvbuf=300000"
)

# trace_workload: run it; TR_PIDS gets the pid of each TR_RUNS process
# (ip netns exec execs the program: its pid is the one started here).
trace_workload() {
	local run fam i=0
	TR_PIDS=()
	for run in "${TR_RUNS[@]}"; do
		fam=${run%% *}
		# Not through in_ns: a function in the background is a subshell,
		# one more process. ip netns exec execs sockopt in its place.
		# shellcheck disable=SC2086
		ip netns exec "$TR_NS" "$RCVFIX_BIN/sockopt" -f "$fam" ${run#* } \
			> /dev/null &
		TR_PIDS[i++]=$!
		wait $! || fail "sockopt $run in $TR_NS"
	done
	in_ns "$TR_OFF" "$RCVFIX_BIN/sockopt" rcvbuf=212992 > /dev/null ||
		fail "sockopt in the disabled namespace $TR_OFF"
}

# trace_expected: the events of trace_workload, one line each, fields in
# the order of the event's format: netns pid comm path family protocol
# val size outcome tcp_rmem1 (values as TP_printk shows them).
trace_expected() {
	local t=425984 p1=${TR_PIDS[0]} p2=${TR_PIDS[1]}
	local e="netns=$TR_INO pid=%s comm=sockopt path=setsockopt family=%s protocol=6 val=%s size=%s outcome=%s tcp_rmem1=$t\n"
	# 212992 doubles to 425984, not below tcp_rmem[1]: not locked.
	# shellcheck disable=SC2059
	printf "$e" "$p1" 2 212992 425984 lock_avoided
	# 65536 doubles to 131072, below: locked as stock.
	# shellcheck disable=SC2059
	printf "$e" "$p1" 2 65536 131072 lock_set
	# INT_MAX is clamped to rmem_max by the caller; the lock stays.
	# shellcheck disable=SC2059
	printf "$e" "$p1" 2 "$TR_RMAX" $((TR_RMAX * 2)) lock_kept
	# A new IPv6 socket: 600000 is not below tcp_rmem[1].
	# shellcheck disable=SC2059
	printf "$e" "$p2" 10 300000 600000 lock_avoided
}

# trace_compare DESC FILE: FILE holds the events as TP_printk text, one
# per line (with any prefix before "netns="); compare with trace_expected.
trace_compare() {
	local got want
	got=$(sed -n 's/.*\(netns=[0-9]* pid=\)/\1/p' "$2")
	want=$(trace_expected)
	if [[ $got == "$want" ]]; then
		ok "$1"
	else
		fail "$1" "expected:" "$want" "got:" "$got" "raw:" "$(cat "$2")"
	fi
}
