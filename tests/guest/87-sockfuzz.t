#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Socket-call fuzzing (tests/stress/sockfuzz.c): threads make random socket
# calls (TCP, MPTCP, UDP, UNIX; setsockopt and getsockopt with odd values,
# lengths and bad pointers; connect, accept, send, receive, poll, shutdown,
# close racing each other) (a) without rcvfix, (b) with it enabled while a
# thread flips net.rcvfix.enable, (c) the same without privileges, (d) in a
# disabled namespace and (e) while rcvfix is unloaded. The fuzzer checks
# the calls' contracts; the kernel log must stay clean after each step,
# which is where KASAN, lockdep and friends report.
# rcvfix-timeout: 900
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/stress/guest-lib.sh"
FUZZ=$RCVFIX_BIN/stress-sockfuzz
need "$RCVFIX_KO" "$FUZZ"

# Seconds per step, and at most a million operations (KVM); an amd64 TCG
# guest makes 25000 (6.1) to 40000 (6.12) a second. A step must have made
# at least 200 a second: far below that, for a debug kernel or arm64, and
# far above a fuzzer that does nothing. In (e) rmmod takes about 2 s.
if stress_long; then
	t_a=20 t_b=60 t_c=40 t_d=20 t_e=12 rounds=3 ops=100000000
else
	t_a=2 t_b=4 t_c=2 t_d=2 t_e=5 rounds=1 ops=1000000
fi
# Seeds: step N of a run uses base + N. Replay a step with the seed its
# comment shows: stress-sockfuzz --seed SEED and the same options.
seed=${RCVFIX_FUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "# $RCVFIX_TEST: form $RCVFIX_STRESS, base seed $seed"
step_no=0

rcvfix_unload
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# fuzz_start LABEL NS ARGS...: the fuzzer in NS in the background, output
# in $tmp/LABEL; sets fuzz_pid.
fuzz_start() {
	local label=$1 ns=$2
	shift 2
	step_no=$((step_no + 1))
	dmesg_mark "$label"
	in_ns "$ns" "$FUZZ" --seed $((seed + step_no)) --ops "$ops" "$@" \
		> "$tmp/$label" 2>&1 &
	fuzz_pid=$!
}

# fuzz_floor LABEL ARGS...: the fewest operations for a step of --seconds.
floor=0
fuzz_floor() {
	while [[ $# -gt 0 && $1 != --seconds ]]; do shift; done
	floor=$((200 * ${2:-10}))
}

# fuzz_check LABEL STATUS: the fuzzer's exit status, that it really made
# calls, and a clean kernel log since fuzz_start; sets sum to its summary.
fuzz_check() {
	local label=$1 st=$2 out=$tmp/$1
	sum=$(grep '^summary ' "$out")
	echo "# $label: $(grep -E '^(seed|errnos) ' "$out" | tr '\n' ' ')"
	echo "# $label: $sum"
	echo "# $label: kernel log since the mark, most frequent lines:"
	stress_log_since "$label" | sed 's/^\[ *[0-9.]*\] //' | sort | uniq -c |
		sort -rn | head -n 5 | sed 's/^/#   /'

	if [[ $st == 0 && -n $sum ]]; then
		ok "$label: stress-sockfuzz exit status 0"
	else
		fail "$label: stress-sockfuzz exit status 0" "status $st" \
			"$(grep -v '^errnos ' "$out" | head -n 20)"
	fi
	check "$label: $(kv ops "$sum") operations, at least $floor" \
		test "$(kv ops "$sum" || echo 0)" -ge "$floor"
	check "$label: setsockopt SO_RCVBUF called ($(kv set_rcvbuf "$sum") times)" \
		test "$(kv set_rcvbuf "$sum" || echo 0)" -gt 0
	check "$label: connections accepted ($(kv accepted "$sum"))" \
		test "$(kv accepted "$sum" || echo 0)" -gt 0
	check_log_clean "$label: no kernel warning, oops or report" "$label"
}

# fuzz LABEL NS ARGS...: fuzz_start, wait, fuzz_check.
fuzz() {
	local st
	fuzz_floor "$@"
	fuzz_start "$@"
	wait "$fuzz_pid"
	st=$?
	fuzz_check "$1" "$st"
}

# sets [NS]: SO_RCVBUF calls rcvfix has seen while enabled in NS.
sets() { rcvfix_counters setsockopt "${1:-}" | awk '{ print $1 }'; }

# ---- (a) control: rcvfix not loaded -------------------------------------
ns_a=$(netns_new fuzz-a)
on_exit "ip netns del $ns_a"
fuzz a-control "$ns_a" --seconds "$t_a" --toggle
check "a-control: the toggle found no net.rcvfix.enable ($(kv toggle_missing "$sum") times)" \
	test "$(kv toggle_missing "$sum" || echo 0)" -gt 0
check_eq "a-control: no toggle write succeeded" 0 "$(kv toggle_writes "$sum")"

# ---- (b) loaded, enabled, net.rcvfix.enable flipped meanwhile -----------
check "load rcvfix" rcvfix_load
ns=$(netns_new fuzz)
on_exit "ip netns del $ns"
rcvfix_enable 1 "$ns"
fuzz b-enabled "$ns" --seconds "$t_b" --toggle
check "b-enabled: the toggle wrote net.rcvfix.enable ($(kv toggle_writes "$sum") times)" \
	test "$(kv toggle_writes "$sum" || echo 0)" -gt 0
check_eq "b-enabled: every toggle write succeeded" 0 "$(kv toggle_errors "$sum")"
check "b-enabled: rcvfix saw SO_RCVBUF calls ($(sets "$ns"))" \
	test "$(sets "$ns")" -gt 0

# ---- (c) the same namespace enabled, unprivileged -----------------------
# The fuzzer starts as root in the namespace (its output file opened by
# this shell) and becomes uid 65534 there itself; the binary is reachable
# for that user too, so it could as well be started as nobody.
rcvfix_enable 1 "$ns"
if command -v setpriv > /dev/null; then
	check "c-unprivileged: uid 65534 reaches the binary in the namespace" \
		in_ns "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups \
		test -x "$FUZZ"
fi
s0=$(sets "$ns")
fuzz c-unprivileged "$ns" --seconds "$t_c" --toggle --unprivileged
check_eq "c-unprivileged: the summary says unprivileged" 1 \
	"$(kv unprivileged "$sum")"
check "c-unprivileged: SO_RCVBUFFORCE failed with EPERM ($(kv rcvbufforce_eperm "$sum") times)" \
	test "$(kv rcvbufforce_eperm "$sum" || echo 0)" -gt 0
check "c-unprivileged: writes to net.rcvfix.enable were refused ($(kv sysctl_denied "$sum") times)" \
	test "$(kv sysctl_denied "$sum" || echo 0)" -gt 0
check_eq "c-unprivileged: no write to net.rcvfix.enable succeeded" 0 \
	"$(kv toggle_writes "$sum")"
check_eq "c-unprivileged: net.rcvfix.enable is still 1" 1 "$(rcvfix_enabled "$ns")"
check "c-unprivileged: rcvfix saw the unprivileged SO_RCVBUF calls ($s0 -> $(sets "$ns"))" \
	test "$(sets "$ns")" -gt "$s0"

# ---- (d) loaded, the namespace disabled ---------------------------------
rcvfix_enable 0 "$ns"
s0=$(sets "$ns")
fuzz d-disabled "$ns" --seconds "$t_d"
check_eq "d-disabled: net.rcvfix.enable is still 0" 0 "$(rcvfix_enabled "$ns")"
check_eq "d-disabled: rcvfix counted no SO_RCVBUF call" "$s0" "$(sets "$ns")"

# ---- (e) unloaded while the fuzzer runs, then loaded again --------------
spread=1000
stress_long && spread=$(((t_e - 3) * 1000))
for ((round = 1; round <= rounds; round++)); do
	label=e-unload-$round
	rcvfix_enable 1 "$ns"
	fuzz_floor --seconds "$t_e"
	fuzz_start "$label" "$ns" --seconds "$t_e" --toggle
	# 1 to 2 s in (to t_e - 2 s in the long form)
	delay=$((1000 + RANDOM % spread))
	sleep "$((delay / 1000)).$(printf %03d $((delay % 1000)))"
	t0=${EPOCHREALTIME/./}
	if rmmod rcvfix 2> "$tmp/rmmod"; then
		ok "$label: rmmod after ${delay} ms of fuzzing"
	else
		fail "$label: rmmod after ${delay} ms of fuzzing" "$(cat "$tmp/rmmod")"
	fi
	t1=${EPOCHREALTIME/./}
	wait "$fuzz_pid"
	st=$?
	t2=${EPOCHREALTIME/./}
	echo "# $label: rmmod took $(((t1 - t0) / 1000)) ms, the fuzzer ran $(((t2 - t1) / 1000)) ms after it"
	fuzz_check "$label" "$st"
	# Writes during the unload fail with ENODEV (rcvfix_arm_close()),
	# after it with ENOENT; a toggle thread that had half a second after the
	# unload must have seen one or the other.
	gone=$(($(kv toggle_missing "$sum" || echo 0) + $(kv toggle_errors "$sum" || echo 0)))
	if (((t2 - t1) / 1000 >= 500)); then
		check "$label: the toggle noticed the unload ($gone writes failed)" \
			test "$gone" -gt 0
	fi
	check "$label: load rcvfix again" rcvfix_load
	check_eq "$label: net.rcvfix.enable back, 0 after the load" 0 \
		"$(rcvfix_enabled "$ns")"
done
check "unload rcvfix" rcvfix_unload
stress_wall
done_testing
