#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MPTCP's receive-path hooks, armed on demand (issue 52), in the two
# places where arming is not a plain setsockopt().
# 1. SO_RCVLOWAT set by a cgroup BPF program: the reader's setsockopt() is
# taken by a cgroup/setsockopt program, which sets the mark itself with
# bpf_setsockopt() (under rcu_read_lock(), where nothing may sleep) and
# skips the kernel's handler. On an MPTCP socket that is the first mark
# since rcvfix loaded: MPTCP's receive-path hooks, armed on demand, cannot
# be armed there (arming sleeps); rcvfix arms them from a work and then
# decides the socket. The reader must then be woken as TCP's is, with the
# mark the program set: MPTCP both ends (mpc1) and an MPTCP client of a
# plain TCP server (active fallback), TCP as the oracle, 2 MiB in 16 KiB
# writes 2 ms apart, a 512 KiB mark, rcvfix enabled. A sleep in the wrong
# context shows on the console of a kernel with the detectors (99).
# 2. A livepatch of mptcp_poll always wins: loaded while the hooks are
# armed, rcvfix steps aside and comes back when it is gone; loaded before
# any mark, rcvfix arms the rest, and the first mark's arming is refused
# (counted, logged, the mark set with the kernel's rule), then works once
# the livepatch is gone.
# 3. Disabled everywhere, the hold-off over, they are disarmed with the
# rest; enabled again, armed with the rest.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/lowat" "$RCVFIX_BIN/bpf_rcvbuf"

MIB=1048576
LOWAT=524288
TOTAL=$((2 * MIB))
PACED="-n $TOTAL -c 16384 -g 2000"

rcvfix_unload
cgroup2_mount || skip "cannot mount cgroup2"
CG=$CGROUP2/rcvfix-lowat-bpf-$$
on_exit "rmdir $CG"
rcvfix_load || { fail "load rcvfix"; done_testing; }
"$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1 ||
	skip "no MPTCP sockets on this kernel"
lowat_word=$(rcvfix_status rcvlowat_wakeup)
echo "# rcvlowat_wakeup $lowat_word"
[[ $lowat_word == *mptcp:rcvfix* || $lowat_word == *mptcp:native+rcvfix* ]] ||
	skip "rcvfix leaves MPTCP's SO_RCVLOWAT to this kernel ($lowat_word)"

client_server lb 45	# $cns sends, $sns reads
mptcp_client_server
for ns in "$cns" "$sns"; do rcvfix_enable 1 "$ns"; done
port=44400

# bpf_cell STATE: one paced transfer whose reader runs in the cgroup with
# the setsockopt program; sets R (the reader's line) and B (the program's).
bpf_cell() {
	local out=/tmp/rcvfix-lowat44-$$ dst=10.99.45.2 ra="" sa=""
	port=$((port + 1))
	case $1 in
	mpc1) ra=-m sa=-m ;;
	active) ra="-m -r" sa=-r dst=10.99.45.1 ;;
	esac
	rm -f "$out".*
	if [[ $1 == active ]]; then
		in_ns "$cns" "$RCVFIX_BIN/lowat" send $sa -a $dst -p $port \
			-T 60 $PACED > "$out.s" 2>&1 &
		wait_for "$out.s" listening 20
		timeout 120 "$RCVFIX_BIN/bpf_rcvbuf" -g "$CG" -L -T 60 -- \
			ip netns exec "$sns" "$RCVFIX_BIN/lowat" recv $ra \
			-a $dst -p $port -l $LOWAT -T 60 > "$out.r" 2>&1
	else
		timeout 120 "$RCVFIX_BIN/bpf_rcvbuf" -g "$CG" -L -T 60 -- \
			ip netns exec "$sns" "$RCVFIX_BIN/lowat" recv $ra \
			-a $dst -p $port -l $LOWAT -T 60 > "$out.r" 2>&1 &
		wait_for "$out.r" listening 20
		in_ns "$cns" "$RCVFIX_BIN/lowat" send $sa -a $dst -p $port \
			-T 60 $PACED > "$out.s" 2>&1
	fi
	wait
	R=$(grep '^lowat=' "$out.r") B=$(grep '^hook=lowat' "$out.r")
	[[ -n $R ]] || echo "# $1: $(tr '\n' ' ' < "$out.r")"
	rm -f "$out".*
}

lazy=0
[[ $(rcvfix_status targets) == *mptcp_poll* ]] && lazy=1
((lazy)) && check_eq "no mark set yet: receive hooks not armed" \
	no "$(rcvfix_status receive_hooks_armed)"

declare -A W SHORT
for state in mpc1 active tcp; do
	bpf_cell $state
	echo "# $state: $B"
	echo "# $state: $R"
	check_eq "$state: the program set the mark (bpf_setsockopt returned)" \
		0 "$(kv rc "$B")"
	check_eq "$state: the mark read back is the program's" \
		$LOWAT "$(kv rcvbuf "$B")"
	check_eq "$state: all bytes read" $TOTAL "$(kv bytes "$R")"
	W[$state]=$(per_mib_x100 "$R") SHORT[$state]=$(kv short "$R")
	if ((lazy)) && [[ $state == mpc1 ]]; then
		check_eq "after a mark set by BPF on an MPTCP socket: receive hooks armed" \
			yes "$(rcvfix_status receive_hooks_armed)"
	fi
done

for state in mpc1 active; do
	check "$state: wakeups per MiB (${W[$state]}/100) within TCP's + 1 (${W[tcp]}/100)" \
		test "${W[$state]:-999999}" -le $((${W[tcp]:-0} + 100))
	check "$state: at most 2 short reads (${SHORT[$state]})" \
		test "${SHORT[$state]:-99}" -le 2
done
added=$(rcvfix_status rcvlowat_wakeups_added "$sns")
held=$(rcvfix_status rcvlowat_wakeups_held "$sns")
echo "# reader's namespace: rcvlowat_wakeups_added $added, rcvlowat_wakeups_held $held"
if [[ $lowat_word == *mptcp:rcvfix* ]]; then
	# 6.1: every segment below the mark was a wakeup the kernel made
	check "6.1: wakeups held back below the mark counted ($held)" \
		test "${held:-0}" -gt 100
else
	check_eq "6.7+: nothing held back (the kernel's rule holds)" 0 "$held"
fi

# 2. A livepatch of mptcp_poll.
if ! have_livepatch; then
	echo "ok - $RCVFIX_TEST: a livepatch of mptcp_poll wins # SKIP $no_livepatch_why"
	done_testing
fi
[[ $(rcvfix_status targets) == *mptcp_poll* ]] ||
	{ echo "# mptcp_poll not among the targets"; done_testing; }
LP=/sys/kernel/livepatch/rcvfix_test_livepatch
lp_gone() {
	local i
	for i in $(seq "$(scaled 100)"); do
		[[ -d $LP ]] || return 0
		sleep 0.1
	done
	return 1
}
lp_off() {
	[[ -d $LP ]] && echo 0 > "$LP/enabled" && lp_gone
	grep -q '^rcvfix_test_livepatch ' /proc/modules &&
		rmmod rcvfix_test_livepatch
	return 0
}
on_exit lp_off
# aside: armed, stepped_aside, stepped_aside_for, receive_hooks_armed
aside() {
	echo "$(rcvfix_status armed) $(rcvfix_status stepped_aside)" \
		"$(rcvfix_status stepped_aside_for) $(rcvfix_status receive_hooks_armed)"
}
wait_aside() { wait_eq "$1" aside; }
mark() {	# mark: an MPTCP socket of the reader's namespace sets a mark
	in_ns "$sns" "$RCVFIX_BIN/sockopt" -p mptcp rcvlowat=$LOWAT |
		awk '{ print $2 }'
}

# 2a. Armed (the marks above): the livepatch wins, rcvfix comes back.
check_eq "before: armed, receive hooks too" "yes no none yes" "$(aside)"
if insmod "$livepatch" func=mptcp_poll; then
	ok "a livepatch of mptcp_poll loads while rcvfix's hook of it is armed"
else
	fail "a livepatch of mptcp_poll loads while rcvfix's hook of it is armed"
fi
check "the livepatch is enabled" grep -qx 1 "$LP/enabled"
wait_aside "no yes livepatch:rcvfix_test_livepatch:mptcp_poll no"
check_eq "rcvfix stands aside for it, naming it" \
	"no yes livepatch:rcvfix_test_livepatch:mptcp_poll no" "$(aside)"
lp_off
wait_aside "yes no none yes"
check_eq "livepatch gone: armed again, receive hooks too" "yes no none yes" "$(aside)"

# 2b. Before any mark: the livepatch loads beside rcvfix; the first mark
# cannot arm mptcp_poll, and says so.
rcvfix_unload
rcvfix_load || { fail "reload rcvfix"; done_testing; }
for ns in "$cns" "$sns"; do rcvfix_enable 1 "$ns"; done
check_eq "reloaded, enabled, no mark: receive hooks not armed" \
	"yes no none no" "$(aside)"
insmod "$livepatch" func=mptcp_poll
check "a livepatch of mptcp_poll loads beside it" grep -qx 1 "$LP/enabled"
wait_aside "yes no none no"
check_eq "rcvfix armed again beside it (nothing of the livepatch's held)" \
	"yes no none no" "$(aside)"
failures=$(rcvfix_status arm_failures)
dmesg_mark "first mark under a livepatch of mptcp_poll"
check_eq "the first mark: setsockopt() succeeds" "ret=0" "$(mark)"
check_eq "its arming refused: the livepatch keeps mptcp_poll" \
	"yes no none no" "$(aside)"
check_eq "the refusal counted" $((failures + 1)) "$(rcvfix_status arm_failures)"
check_eq "last_arm_error names it" "EBUSY:mptcp_poll:livepatch-or-ftrace-ops" \
	"$(rcvfix_status last_arm_error)"
check "one log line says so" grep -q \
	"rcvfix: cannot hook mptcp_poll: EBUSY (-16), owner: livepatch-or-ftrace-ops; MPTCP's receive path keeps the kernel's wakeups" \
	<(dmesg_since_mark "first mark under a livepatch of mptcp_poll")
check "the livepatch still in force" grep -qx 1 "$LP/enabled"
check_eq "a second mark at once: not tried again (back-off), nothing counted" \
	"ret=0 $((failures + 1))" "$(mark) $(rcvfix_status arm_failures)"
lp_off
# marks until one arms them (the back-off after one refusal: 5 s)
for i in $(seq "$(scaled 20)"); do
	r=$(mark)
	[[ $(rcvfix_status receive_hooks_armed) == yes ]] && break
	sleep 0.5
done
check_eq "livepatch gone, then marks: receive hooks armed" "ret=0 yes no none yes" \
	"$r $(aside)"
check_eq "last_arm_error cleared" none "$(rcvfix_status last_arm_error)"

# 3. The receive hooks go with the others: the fix off everywhere, the
# hold-off over, nothing of rcvfix's is left in ftrace; on again, they come
# back with the rest (a mark was seen), before any new mark.
echo 1 > /sys/module/rcvfix/parameters/disarm_holdoff_s
for ns in "$cns" "$sns"; do rcvfix_enable 0 "$ns"; done
for i in $(seq "$(scaled 50)"); do
	[[ $(rcvfix_status armed) == no ]] && break
	sleep 0.2
done
check_eq "disabled everywhere, hold-off over: nothing armed" "no no 0" \
	"$(rcvfix_status armed) $(rcvfix_status receive_hooks_armed) $(rcvfix_hooks)"
rcvfix_enable 1 "$sns"
check_eq "enabled again: armed, the receive hooks with the rest" "yes yes" \
	"$(rcvfix_status armed) $(rcvfix_status receive_hooks_armed)"
check_eq "... every target in ftrace" \
	"$(rcvfix_status targets | tr ',' '\n' | grep -c .)" "$(rcvfix_hooks)"

done_testing
