#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In-guest part "arming" of `make bench`: what loading rcvfix and turning
# net.rcvfix.enable on and off cost in wall-clock time, in a normal guest
# (TCG: the figures follow the emulated CPU and the host's load; compare
# rows of one run). Each step is timed in the shell that makes it
# (EPOCHREALTIME around a builtin write, no process started), median of
# BENCH_ARMING_ROUNDS rounds (5), for rcvfix as loaded by default (the
# hooks stay armed disarm_holdoff_s, 10 s, after the last namespace turned
# the fix off), for rcvfix loaded with disarm_holdoff_s=0 (disarmed at
# once: how every switch went before the hold-off), and for "none", the
# same step with nothing of rcvfix behind it: insmod and rmmod of a module
# that hooks nothing (tests/kmod's decoy), a write of its own value to a
# plain sysctl (net.core.somaxconn). Steps, in the order of a round:
#   insmod           loading rcvfix (resolving its hooks; nothing armed)
#   enable_first     the first namespace turns it on (arms the hooks)
#   enable_other     a second namespace turns it on (already armed)
#   disable_other    that one turns it off again (another stays on)
#   disable_last     the last namespace turns it off
#   enable_again     on again right after (re-arms, unless still armed)
#   cycle            one 0 -> 1 cycle of the only enabled namespace, mean
#                    of BENCH_ARMING_CYCLES (10) back to back
#   rmmod            unloading with the fix on (disarms, waits for tasks)
# It also records whether the hooks were still armed right after
# disable_last (armed_after_disable, armed_after_disable_holdoff0).
# Prints a table and every figure as an "@R KEY VALUE" line.
# Environment: RCVFIX_KO, RCVFIX_KMOD (harness). Exit status: 0 measured,
# 2 setup or a step failed.
set -euo pipefail
export LC_ALL=C

ko=${RCVFIX_KO:?RCVFIX_KO not set: run through make bench}
kmod=${RCVFIX_KMOD:?RCVFIX_KMOD not set: run through make bench}
none_ko=$kmod/rcvfix_test_decoy.ko
rounds=${BENCH_ARMING_ROUNDS:-5}
cycles=${BENCH_ARMING_CYCLES:-10}
E=/proc/sys/net/rcvfix/enable
PLAIN=/proc/sys/net/core/somaxconn
other=rcvfix-bench-arm
steps=(insmod enable_first enable_other disable_other disable_last
	enable_again cycle rmmod)
declare -A R=() T=()
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

die() { echo "bench: error: $*" >&2; exit 2; }
cleanup() {
	ip netns del "$other" 2> /dev/null || true
	grep -q '^rcvfix ' /proc/modules && rmmod rcvfix
	grep -q '^rcvfix_test_decoy ' /proc/modules && rmmod rcvfix_test_decoy
	return 0
}
trap cleanup EXIT

bench_need "$ko" "$none_ko"
grep -q '^rcvfix ' /proc/modules && rmmod rcvfix
ip netns add "$other" || die "cannot create a namespace"

# timed STEP KIND CMD...: run CMD here, add its time in us to T[STEP.KIND]
# (EPOCHREALTIME read in place: a $(...) would fork, 10 ms under TCG)
timed() {
	local step=$1 kind=$2 t0 t1
	shift 2
	t0=${EPOCHREALTIME/./}
	"$@" || die "$step ($kind): $* failed"
	t1=${EPOCHREALTIME/./}
	T[$step.$kind]+=" $((t1 - t0))"
}
put() { echo "$2" > "$1"; }
# in_other KIND STEP FILE VALUE: the write, timed inside the namespace
in_other() {
	local us
	# shellcheck disable=SC2016 # expanded by the inner bash
	us=$(ip netns exec "$other" bash -c \
		't0=${EPOCHREALTIME/./}; echo "$2" > "$1" || exit 1
		 t1=${EPOCHREALTIME/./}; echo $((t1 - t0))' _ "$3" "$4") ||
		die "$2 ($1): write in $other failed"
	T[$2.$1]+=" $us"
}
armed() { awk '$1 == "armed" { print $2 }' /proc/net/rcvfix; }
plain=$(cat "$PLAIN")

# every step of one round with nothing of rcvfix (none) or rcvfix
round() {
	local i t0 t1 kind=$1
	if [[ $kind == none ]]; then
		timed insmod none insmod "$none_ko"
		for s in enable_first disable_last enable_again; do
			timed "$s" none put "$PLAIN" "$plain"
		done
		in_other none enable_other "$PLAIN" "$plain"
		in_other none disable_other "$PLAIN" "$plain"
		t0=${EPOCHREALTIME/./}
		for ((i = 0; i < cycles; i++)); do
			put "$PLAIN" "$plain"
			put "$PLAIN" "$plain"
		done
		t1=${EPOCHREALTIME/./}
		T[cycle.none]+=" $(((t1 - t0) / cycles))"
		timed rmmod none rmmod rcvfix_test_decoy
		return
	fi
	if [[ $kind == rcvfix ]]; then
		timed insmod "$kind" insmod "$ko"
	else
		timed insmod "$kind" insmod "$ko" disarm_holdoff_s=0
	fi
	timed enable_first "$kind" put "$E" 1
	in_other "$kind" enable_other "$E" 1
	in_other "$kind" disable_other "$E" 0
	timed disable_last "$kind" put "$E" 0
	R[arming.armed_after_disable${kind#rcvfix}]=$(armed)
	timed enable_again "$kind" put "$E" 1
	t0=${EPOCHREALTIME/./}
	for ((i = 0; i < cycles; i++)); do
		put "$E" 0
		put "$E" 1
	done
	t1=${EPOCHREALTIME/./}
	T[cycle.$kind]+=" $(((t1 - t0) / cycles))"
	timed rmmod "$kind" rmmod rcvfix
}

median_ms() {	# median_ms US...: the median, in ms with one decimal
	printf '%s\n' "$@" | sort -n |
		awk '{ v[NR] = $1 } END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.1f\n", m / 1000 }'
}

echo "rcvfix bench, arming costs on $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPU(s); median of $rounds rounds, cycle: mean of $cycles"
kinds=(none rcvfix rcvfix_holdoff0)
for ((r = 0; r < rounds; r++)); do
	for kind in "${kinds[@]}"; do
		round "$kind"
	done
done

printf '%-14s %10s %12s %22s\n' step "none (ms)" "rcvfix (ms)" \
	"disarm_holdoff_s=0 (ms)"
for s in "${steps[@]}"; do
	for kind in "${kinds[@]}"; do
		# shellcheck disable=SC2086 # a list of numbers
		R[arming.$s.${kind}_ms]=$(median_ms ${T[$s.$kind]})
	done
	printf '%-14s %10s %12s %22s\n' "$s" "${R[arming.$s.none_ms]}" \
		"${R[arming.$s.rcvfix_ms]}" "${R[arming.$s.rcvfix_holdoff0_ms]}"
done
echo "armed right after disable_last: ${R[arming.armed_after_disable]}" \
	"(disarm_holdoff_s=0: ${R[arming.armed_after_disable_holdoff0]})"

R[meta.arming_rounds]=$rounds
R[meta.arming_cycles]=$cycles
bench_emit meta.arming_kernel meta.arming_date
echo "bench: arming part done"
