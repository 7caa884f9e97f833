#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In-guest part "segcost" of `make bench` on the deterministic guest (QEMU
# -icount shift=0, one vCPU: one virtual nanosecond per guest instruction):
# the cost of receiving one segment on a TCP and an MPTCP socket, with and
# without SO_RCVLOWAT (at the segment's size, so that every segment makes
# the socket readable), with no module, rcvfix loaded with nothing enabled
# (nothing armed: what loading alone shifts) and rcvfix enabled in the
# caller's namespace. The enabled MPTCP cells run through rcvfix's hooks of
# mptcp_data_ready() and mptcp_poll() (6.1: the SO_RCVLOWAT fix; 6.7+:
# TCP's wakeup when the queue cannot grow), armed on demand: before any
# MPTCP socket sets a mark none is armed; after, a socket without
# SO_RCVLOWAT pays one compare in each, one with it the wrappers. Every setup is measured in each of
# BENCH_COST_PASSES passes (2) to show that the figures repeat.
#
# Prints a table and every figure as an "@R KEY VALUE" line. Environment:
# RCVFIX_KO, RCVFIX_BIN (harness); BENCH_SEGS segments per round (20000);
# BENCH_COST_ROUNDS rounds, median reported (5). Exit status: 0 measured,
# 2 setup or a measurement failed.
set -euo pipefail
export LC_ALL=C

bin=${RCVFIX_BIN:?RCVFIX_BIN not set: run through make bench}
ko=${RCVFIX_KO:?RCVFIX_KO not set: run through make bench}
segs=${BENCH_SEGS:-20000}
rounds=${BENCH_COST_ROUNDS:-5}
passes=${BENCH_COST_PASSES:-2}
segcost=$bin/bench-segcost
size=1000
# In this order: "mptcp" runs before any MPTCP socket has set a mark (the
# receive-path hooks, armed on demand, not armed yet), "mptcp_armed" the same
# socket kind after "mptcp_lowat" set one (armed until rmmod).
cells=(tcp tcp_lowat mptcp mptcp_lowat mptcp_armed)
declare -A args=([tcp]="" [tcp_lowat]="-l $size" [mptcp]="-m"
	[mptcp_lowat]="-m -l $size" [mptcp_armed]="-m")
declare -A label=([tcp]="TCP" [tcp_lowat]="TCP, SO_RCVLOWAT $size"
	[mptcp]="MPTCP, before a mark" [mptcp_lowat]="MPTCP, SO_RCVLOWAT $size"
	[mptcp_armed]="MPTCP, after a mark")
setups=(absent loaded enabled)
declare -A R=()
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

die() { echo "bench: error: $*" >&2; exit 2; }
cleanup() {
	grep -q '^rcvfix ' /proc/modules && rmmod rcvfix
	return 0
}
trap cleanup EXIT

bench_need "$segcost" "$bin/rcvfixctl" "$ko"
sysctl -qw net.mptcp.enabled=1 2> /dev/null || true

on() {	# on SETUP
	case $1 in
	absent) ;;
	loaded) insmod "$ko" ;;
	enabled) insmod "$ko" && "$bin/rcvfixctl" enable > /dev/null ;;
	esac
}
off() { [[ $1 == absent ]] || rmmod rcvfix; }

echo "rcvfix bench, receive cost per segment on $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPU"
echo "each figure: median of $rounds rounds of $segs segments of $size bytes over 127.0.0.1"
for ((p = 1; p <= passes; p++)); do
	echo "pass $p of $passes ..."
	for s in "${setups[@]}"; do
		on "$s" || die "cannot set up '$s'"
		if [[ $s == enabled ]]; then
			R[segcost.rcvlowat_wakeup]=$(awk '$1 == "rcvlowat_wakeup" { print $2 }' /proc/net/rcvfix)
			R[segcost.targets]=$(awk '$1 == "targets" { print $2 }' /proc/net/rcvfix)
		fi
		for c in "${cells[@]}"; do
			# shellcheck disable=SC2086 # the cell's options, split
			out=$("$segcost" -n "$segs" -r "$rounds" -s $size ${args[$c]}) ||
				die "bench-segcost failed: $c, $s"
			R[segcost.$s.$c.p$p]=$(sed -E 's/^segment_ns=([0-9.]+) .*/\1/' <<< "$out")
			[[ $s == enabled ]] &&
				R[segcost.$c.receive_hooks]=$(awk '$1 == "receive_hooks_armed" { print $2 }' /proc/net/rcvfix)
		done
		off "$s" || die "cannot tear down '$s'"
	done
done
echo

bench_passes segcost "$passes" "${setups[*]}" "${cells[*]}"

echo "== receive cost, guest instructions per segment (QEMU -icount shift=0)"
echo "rcvfix: rcvlowat_wakeup ${R[segcost.rcvlowat_wakeup]}; targets ${R[segcost.targets]}"
echo "difference and ratio: enabled against loaded (nothing armed)"
printf '%-28s %12s %12s %12s %12s %8s %s\n' "socket" "no module" "loaded" "enabled" "difference" "ratio" "receive hooks"
for c in "${cells[@]}"; do
	a=${R[segcost.absent.$c.instr]} l=${R[segcost.loaded.$c.instr]}
	e=${R[segcost.enabled.$c.instr]}
	R[segcost.$c.diff]=$(awk -v a="$l" -v e="$e" 'BEGIN { printf "%+.1f", e - a }')
	R[segcost.$c.ratio]=$(awk -v a="$l" -v e="$e" 'BEGIN { printf "%.4f", e / a }')
	printf '%-28s %12.1f %12.1f %12.1f %12s %8s %s\n' "${label[$c]}" "$a" "$l" "$e" \
		"${R[segcost.$c.diff]}" "${R[segcost.$c.ratio]}" \
		"${R[segcost.$c.receive_hooks]:-n/a}"
done
echo "passes: $passes; largest difference between passes: $maxdiff instructions per segment"
echo

bench_emit meta.segcost_kernel meta.segcost_date
echo "bench: segcost part done"
