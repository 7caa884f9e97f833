#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In-guest part "rcvlowat" of `make bench`: how often a poll()+recv()
# reader is woken per MB, and how many of those wakeups read less than its
# SO_RCVLOWAT mark ("short"), for TCP and MPTCP sockets, no mark and a
# 512 KB mark, a bulk sender (8 MB in 256 KB writes) and a paced one (4 MB
# in 4 KB writes, 100 us apart), with net.rcvfix.enable 0 and 1 in one
# boot, between two namespaces over veth (IPv4). The same transfers as test
# 41, as a table: where MPTCP lacks the wakeup fix (6.1), the enabled column
# is rcvfix's. Prints the table and every figure as an "@R KEY VALUE" line.
# Environment: RCVFIX_KO, RCVFIX_BIN (harness). Exit status: 0 measured,
# 2 setup or a transfer failed.
set -euo pipefail
export LC_ALL=C

bin=${RCVFIX_BIN:?RCVFIX_BIN not set: run through make bench}
ko=${RCVFIX_KO:?RCVFIX_KO not set: run through make bench}
lowat=$bin/lowat
snd=rcvfix-bench-lws rcv=rcvfix-bench-lwr
mib=1048576
declare -A R=()
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

die() { echo "bench: error: $*" >&2; exit 2; }
cleanup() {
	ip netns del "$snd" 2> /dev/null || true
	ip netns del "$rcv" 2> /dev/null || true
	grep -q '^rcvfix ' /proc/modules && rmmod rcvfix
	return 0
}
trap cleanup EXIT

bench_need "$lowat" "$ko"
insmod "$ko" || die "cannot load $ko"
ip netns add "$snd" && ip netns add "$rcv" ||
	die "cannot create namespaces"
ip link add rcvfix-lws netns "$snd" type veth peer name rcvfix-lwr netns "$rcv" &&
	ip -n "$snd" addr add 10.99.42.1/24 dev rcvfix-lws &&
	ip -n "$rcv" addr add 10.99.42.2/24 dev rcvfix-lwr &&
	ip -n "$snd" link set rcvfix-lws up && ip -n "$rcv" link set rcvfix-lwr up ||
	die "cannot create the veth pair"
for ns in "$snd" "$rcv"; do
	ip netns exec "$ns" sysctl -qw net.mptcp.enabled=1
done
R[rcvlowat.state]=$(awk '$1 == "rcvlowat_wakeup" { print $2 }' /proc/net/rcvfix)

port=42400
wait_listening() {	# wait_listening FILE: wait up to 10 s for a reader's "listening" in FILE
	for _ in $(seq 100); do grep -q listening "$1" && return; sleep 0.1; done
}
set_enable() {	# set_enable 0|1: net.rcvfix.enable in both namespaces
	local ns
	for ns in "$snd" "$rcv"; do
		ip netns exec "$ns" sh -c "echo $1 > /proc/sys/net/rcvfix/enable" ||
			die "cannot set net.rcvfix.enable=$1"
	done
}
cell() {	# cell KEY PROTO_ARG MARK SEND_ARGS...
	local key=$1 m=$2 mark=$3 out line
	shift 3
	port=$((port + 1))
	out=$(mktemp)
	# shellcheck disable=SC2086 # -m or nothing
	ip netns exec "$rcv" "$lowat" recv $m -a 10.99.42.2 -p $port -l "$mark" \
		-T 60 > "$out" 2>&1 &
	wait_listening "$out"
	# shellcheck disable=SC2086
	ip netns exec "$snd" "$lowat" send $m -a 10.99.42.2 -p $port -T 60 "$@" \
		> /dev/null || die "$key: sender failed"
	wait $! || die "$key: receiver failed: $(cat "$out")"
	line=$(grep '^lowat=' "$out")
	rm -f "$out"
	R[rcvlowat.$key.wakeups_per_mb]=$(sed -E 's/.* nvcsw_per_mb=([0-9.]+).*/\1/' <<< "$line")
	R[rcvlowat.$key.short]=$(sed -E 's/.* short=([0-9]+) .*/\1/' <<< "$line")
	R[rcvlowat.$key.seconds]=$(sed -E 's/.* seconds=([0-9.]+) .*/\1/' <<< "$line")
}

echo "rcvfix bench, SO_RCVLOWAT wakeups on $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'); rcvlowat_wakeup ${R[rcvlowat.state]}"
for en in 0 1; do
	set_enable $en
	for proto in tcp mptcp; do
		m=; [[ $proto == mptcp ]] && m=-m
		for mark in 0 524288; do
			cell "$proto.paced.$mark.en$en" "$m" $mark -n $((4 * mib)) -c 4096 -g 100
			cell "$proto.bulk.$mark.en$en" "$m" $mark -n $((8 * mib))
		done
	done
done

echo "== wakeups per MB (short reads), net.rcvfix.enable 0 | 1"
printf '%-8s %-7s %-9s %22s %22s\n' socket sender mark "enable 0" "enable 1"
for proto in tcp mptcp; do
	for traffic in paced bulk; do
		for mark in 0 524288; do
			k=$proto.$traffic.$mark
			printf '%-8s %-7s %-9s %14s (%5s) %14s (%5s)\n' "$proto" "$traffic" \
				"$( ((mark)) && echo 512K || echo none)" \
				"${R[rcvlowat.$k.en0.wakeups_per_mb]}" "${R[rcvlowat.$k.en0.short]}" \
				"${R[rcvlowat.$k.en1.wakeups_per_mb]}" "${R[rcvlowat.$k.en1.short]}"
		done
	done
done
echo

# Never slower than not asking (issue 59): a reader with a small buffer
# (SO_RCVLOWAT 512 KB, then SO_RCVBUF 32768 after accept, as socat's
# rcvbuf-late) reading 8 KB per wakeup (socat's buffer), 4 MB; the marked
# MPTCP reader's rate against the same reader without a mark and against
# TCP with the mark, each ratio from one boot: the median of
# RCVFIX_BENCH_SMALL_ROUNDS rounds (5), the three readers side by side in
# each round. Beside them, the sender's MPTCP-level retransmissions and the
# skbs the reader's socket dropped over its buffer (MPTcpExtRcvPruned: the
# kernel's in-sequence drop and the out-of-order skbs behind it), summed
# over the rounds: each in-sequence drop costs a retransmission timer.
stall=$bin/lowatstall
rounds=${RCVFIX_BENCH_SMALL_ROUNDS:-5}
counter() {	# counter NS NAME: NAME's absolute value in NS's nstat, or 0
	ip netns exec "$1" nstat -a -s -z 2> /dev/null |
		awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'
}
small() {	# small KEY PROTO_ARG MARK: one transfer, appended to R[rcvlowat.small.KEY.runs]
	local key=$1 m=$2 mark=$3 out line s rt0 pr0
	port=$((port + 1))
	out=$(mktemp)
	rt0=$(counter "$snd" MPTcpExtMPTCPRetrans) pr0=$(counter "$rcv" MPTcpExtRcvPruned)
	# shellcheck disable=SC2086 # -m or nothing
	ip netns exec "$rcv" "$stall" server $m -a 10.99.42.2 -p $port -n $((4 * mib)) \
		-l "$mark" -b 32768 -R 8192 -w poll -t 30 -T 60 > "$out" 2>&1 &
	wait_listening "$out"
	# shellcheck disable=SC2086
	ip netns exec "$snd" "$stall" client $m -a 10.99.42.2 -p $port -n $((4 * mib)) \
		-T 60 > /dev/null 2>&1 || true
	wait $! || true
	line=$(grep '^result=done' "$out" || true)
	rm -f "$out"
	s=$(sed -nE 's/.* seconds=([0-9.]+) .*/\1/p' <<< "$line")
	R[rcvlowat.small.$key.runs]+="${s:-x} "
	R[rcvlowat.small.$key.retrans]=$((${R[rcvlowat.small.$key.retrans]:-0} +
		$(counter "$snd" MPTcpExtMPTCPRetrans) - rt0))
	R[rcvlowat.small.$key.pruned]=$((${R[rcvlowat.small.$key.pruned]:-0} +
		$(counter "$rcv" MPTcpExtRcvPruned) - pr0))
}
median() {	# median "S S S ...": the median of the runs (x: one did not finish)
	tr ' ' '\n' <<< "$1" | sed '/^$/d' | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) { print "x"; exit }
			for (i = 1; i <= NR; i++) if (v[i] == "x") { print "x"; exit }
			print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
rate_ratio() {	# rate_ratio SECONDS_OF_A SECONDS_OF_B: A's rate / B's
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "x" || b == "x" || a <= 0) print "x"; else printf "%.2f", b / a }'
}
if [[ -x $stall ]]; then
	for en in 0 1; do
		set_enable $en
		for ((r = 1; r <= rounds; r++)); do
			small "mptcp.none.en$en" -m 0
			small "mptcp.mark.en$en" -m 524288
			small "tcp.mark.en$en" "" 524288
		done
		for k in mptcp.none mptcp.mark tcp.mark; do
			R[rcvlowat.small.$k.en$en.seconds]=$(median "${R[rcvlowat.small.$k.en$en.runs]}")
		done
		R[rcvlowat.small.mark_vs_none.en$en]=$(rate_ratio "${R[rcvlowat.small.mptcp.mark.en$en.seconds]}" "${R[rcvlowat.small.mptcp.none.en$en.seconds]}")
		R[rcvlowat.small.mark_vs_tcp.en$en]=$(rate_ratio "${R[rcvlowat.small.mptcp.mark.en$en.seconds]}" "${R[rcvlowat.small.tcp.mark.en$en.seconds]}")
	done
	echo "== small buffer (64 KB locked after accept), 8 KB reads, 4 MB: median seconds of $rounds rounds"
	echo "   (x: one not done in 60 s); MPTCP-level retransmissions / drops over the buffer, summed"
	printf '%-22s %16s %16s\n' reader "enable 0" "enable 1"
	for k in mptcp.none mptcp.mark tcp.mark; do
		printf '%-22s %16s %16s\n' "$k" \
			"${R[rcvlowat.small.$k.en0.seconds]} (${R[rcvlowat.small.$k.en0.retrans]}/${R[rcvlowat.small.$k.en0.pruned]})" \
			"${R[rcvlowat.small.$k.en1.seconds]} (${R[rcvlowat.small.$k.en1.retrans]}/${R[rcvlowat.small.$k.en1.pruned]})"
	done
	printf '%-22s %16s %16s\n' "MPTCP mark/none rate" "${R[rcvlowat.small.mark_vs_none.en0]}" \
		"${R[rcvlowat.small.mark_vs_none.en1]}"
	printf '%-22s %16s %16s\n' "MPTCP mark/TCP mark" "${R[rcvlowat.small.mark_vs_tcp.en0]}" \
		"${R[rcvlowat.small.mark_vs_tcp.en1]}"
	r=${R[rcvlowat.small.mark_vs_none.en1]}
	if [[ $r != x ]] && awk -v r="$r" 'BEGIN { exit !(r >= 0.85) }'; then
		target small-buffer-mark met "marked MPTCP reader at $r x the unmarked one's rate, enable 1; goal 0.85"
	else
		target small-buffer-mark MISSED "marked MPTCP reader at $r x the unmarked one's rate, enable 1; goal 0.85"
	fi
	echo
fi

bench_emit meta.rcvlowat_kernel meta.rcvlowat_date
echo "bench: rcvlowat part done"
