#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Concurrency of the rule itself (tests/stress/pair.c): one thread sets
# SO_RCVBUF (or SO_RCVBUFFORCE) while another sets SO_SNDBUF (or
# SO_SNDBUFFORCE, or SO_NO_CHECK, whose bit shares a byte with the lock
# bits on 6.1) on the same fresh socket at the same moment. Neither update
# may be lost: with rcvfix absent, disabled, enabled, and while the switch
# is flipped back and forth.
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/stress/guest-lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/stress-pair"

if stress_long; then iter=4000; else iter=400; fi
rcvfix_unload
ns=$(netns_new pair)
on_exit "ip netns del $ns"
out=$(mktemp)
on_exit "rm -f $out"
dmesg_mark pair

RACES="rcvbuf-sndbuf force-sndforce rcvbuf-nocheck"

# race_field RACE KEY: a number of the last run's summary line of RACE
race_field() {
	awk -v race="race=$1" -v key="$2" '$1 == race {
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == key) print kv[2]
		} }' "$out"
}

# run_pair LABEL EXPECT [OPTION...]: one stress-pair run in $ns, checked;
# adds the rounds in which the two threads' calls overlapped to $overlaps.
overlaps=0
run_pair() {
	local label=$1 expect=$2 race n
	shift 2
	in_ns "$ns" "$RCVFIX_BIN/stress-pair" --iterations "$iter" \
		--expect "$expect" "$@" > "$out" 2>&1
	check "$label: no update lost in $iter rounds x 3 races" test $? -eq 0
	sed 's/^/# /' "$out" | head -n 20
	for race in $RACES; do
		n=$(race_field "$race" overlapped)
		overlaps=$((overlaps + ${n:-0}))
	done
}

run_pair "rcvfix absent" stock
rcvfix_load || { fail "load rcvfix"; done_testing; }
run_pair "loaded, disabled" stock
rcvfix_enable 1 "$ns"
c0=$(rcvfix_counters setsockopt "$ns")
# The two virtual CPUs of an emulated guest on a busy host rarely run at
# the same moment (0 to 5 of 400 rounds met in a race): with rcvfix on,
# each race goes on until its calls have met at least once.
run_pair "enabled" enabled --min-overlapped 1
for race in $RACES; do
	check "enabled: the two threads' calls met in race $race" \
		test "$(race_field "$race" overlapped)" -gt 0
done
# one counted call per call of a burst (8 per round), per TCP race (the
# third races on UDP, which the rule leaves to the kernel), plus the
# program's probe of SOCK_MIN_RCVBUF (its rmem_max probe is on UDP)
r1=$(race_field rcvbuf-sndbuf iterations)
r2=$(race_field force-sndforce iterations)
rounds=$((${r1:-0} + ${r2:-0}))
check_eq "enabled: every concurrent call counted once" $((rounds * 8 + 1)) \
	"$(counters_delta "$c0" "$(rcvfix_counters setsockopt "$ns")" |
		awk '{ print $1 }')"

# The switch flipped all the time: the lock may follow either state, but a
# size below tcp_rmem[1] always locks and the other bit always survives.
(
	v=0
	while :; do
		v=$((1 - v))
		in_ns "$ns" sh -c "echo $v > /proc/sys/net/rcvfix/enable" \
			2> /dev/null || exit 0
	done
) &
flipper=$!
on_exit "kill $flipper"
run_pair "enable flipped meanwhile" either
kill "$flipper" 2> /dev/null
wait "$flipper" 2> /dev/null
rcvfix_unload
echo "# the two threads' calls overlapped in $overlaps rounds in all"
check_log_clean "no kernel warning, oops or corruption report" pair
stress_wall
done_testing
