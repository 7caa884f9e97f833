#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The SO_RCVLOWAT wakeup property (native since 4.18, reported by rcvfix):
# a poll()+recv() reader with a 512 KiB low-water mark sleeps until that
# much has arrived, about 2 wakeups per MiB, where the same reader without
# it is woken for nearly every small segment of a paced sender.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/lowat"

LOWAT=524288
MIB=1048576

rcvfix_unload
dmesg_mark start
rcvfix_load || { fail "load rcvfix"; done_testing; }
check "/proc/net/rcvfix: rcvlowat_wakeup tcp:native (MPTCP: test 41)" \
	grep -qE '^tcp:native,mptcp:[a-z+]+$' <<< "$(rcvfix_status rcvlowat_wakeup)"
check "load message reports the TCP wakeup fix as native" \
	grep -q 'rcvfix: .*SO_RCVLOWAT wakeup fix tcp native' \
	<<< "$(dmesg_since_mark start)"

a=$(netns_new lowa)	# sender
b=$(netns_new lowb)	# receiver
veth_pair "$a" "$b" 10.99.40.1 10.99.40.2 || skip "cannot create veth pair"
rcvfix_enable 1 "$a"
rcvfix_enable 1 "$b"
port=40400

# measure LABEL LOWAT SEND_ARGS: sets R to the receiver's result line.
measure() {
	local out=/tmp/rcvfix-lowat-$$
	port=$((port + 1))
	in_ns "$b" "$RCVFIX_BIN/lowat" recv -a 10.99.40.2 -p $port -l "$2" \
		-T 60 > "$out" 2>&1 &
	wait_for "$out" listening 20
	in_ns "$a" "$RCVFIX_BIN/lowat" send -a 10.99.40.2 -p $port -T 60 \
		$3 > /dev/null
	wait
	R=$(grep '^lowat=' "$out")
	echo "# $1: $R"
	[[ -n $R ]] || fail "$1: transfer completed" "$(cat "$out")"
	rm -f "$out"
}

# wakeups_per_mib_x100 LINE: voluntary context switches per MiB, x100.
per_mib_x100() { echo $(($(kv nvcsw "$1") * 100 * MIB / $(kv bytes "$1"))); }

# 1. Paced small segments: 4 MiB in 4 KiB writes, 100 us apart, NODELAY.
PACED="-n $((4 * MIB)) -c 4096 -g 100"
measure "paced, no SO_RCVLOWAT" 0 "$PACED"
r0=$R
measure "paced, SO_RCVLOWAT $LOWAT" $LOWAT "$PACED"
r1=$R
check_eq "paced: all bytes read (no lowat)" $((4 * MIB)) "$(kv bytes "$r0")"
check_eq "paced: all bytes read (lowat)" $((4 * MIB)) "$(kv bytes "$r1")"
w0=$(per_mib_x100 "$r0") w1=$(per_mib_x100 "$r1")
echo "# wakeups per MiB x100: no lowat $w0, lowat $w1"
# Per-segment wakeups would be ~256 per MiB: require the reader without
# a mark to see many (the sender really paces), and the one with it few.
check "paced, no SO_RCVLOWAT: woken per segment (>= 32 per MiB)" \
	test "$w0" -ge 3200
check "paced, SO_RCVLOWAT 512K: at most 3 wakeups per MiB" \
	test "$w1" -le 300
check "paced: SO_RCVLOWAT cuts wakeups at least tenfold" \
	test $((w1 * 10)) -le "$w0"

# 2. Bulk: 16 MiB in 256 KiB writes.
measure "bulk, SO_RCVLOWAT $LOWAT" $LOWAT "-n $((16 * MIB))"
check_eq "bulk: all bytes read" $((16 * MIB)) "$(kv bytes "$R")"
check "bulk, SO_RCVLOWAT 512K: at most 3 wakeups per MiB" \
	test "$(per_mib_x100 "$R")" -le 300

done_testing
