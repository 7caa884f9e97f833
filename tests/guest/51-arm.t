#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pay nothing while unused: loaded with the fix enabled nowhere, rcvfix
# holds no function, so a livepatch of sk_setsockopt loads; turning the fix
# on then fails with EBUSY, one clear log line, the switch stays 0 and
# nothing is left half-armed; once the livepatch is gone it works. A
# livepatch loaded while rcvfix is armed wins: rcvfix steps aside and arms
# again once it is gone, also when it goes without a module event
# (disabled through sysfs, or replaced by an atomic-replace livepatch), and
# names the livepatch that holds a function. Meanwhile a kernel thread
# (tests/kmod/rcvfix_test_pair) checks that setsockopt() and
# sock_set_rcvbuf() never go by different rules at the same moment. The
# hooks follow the number of enabled namespaces: armed by the first,
# disarmed after a hold-off once the last one has turned the fix off or was
# destroyed (at once with disarm_holdoff_s=0), and unloading while armed
# leaves the kernel's own code behind.
source "$RCVFIX_REPO/tests/guest/lib.sh"

have_livepatch || skip "$no_livepatch_why"
livepatch2=$RCVFIX_KMOD/rcvfix_test_livepatch2.ko
pair=$RCVFIX_KMOD/rcvfix_test_pair.ko
stall=$RCVFIX_KMOD/rcvfix_test_stall.ko
need "$RCVFIX_KO" "$livepatch" "$livepatch2" "$pair" "$stall" \
	"$RCVFIX_BIN/sockopt" "$RCVFIX_BIN/sysctlw" "$RCVFIX_BIN/rcvfixctl"
E=/proc/sys/net/rcvfix/enable
LP=/sys/kernel/livepatch/rcvfix_test_livepatch
LP2=/sys/kernel/livepatch/rcvfix_test_livepatch2
P=/proc/rcvfix_test_pair
HOLD=/sys/module/rcvfix/parameters/disarm_holdoff_s
EF=/sys/kernel/tracing/enabled_functions
[[ -r $EF ]] || mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
[[ -r $EF ]] || skip "no $EF"

lock_after_rcvbuf() {	# lock bit after SO_RCVBUF 65536 (tcp_rmem[1] 131072)
	"$RCVFIX_BIN/sockopt" rcvbuf=65536 | awk -F'lock=' 'END { print $2 + 0 }'
}
# state: "armed enabled_namespaces" from /proc/net/rcvfix
state() { echo "$(rcvfix_status armed) $(rcvfix_status enabled_namespaces)"; }
# The function the livepatch takes: sk_setsockopt, or before 6.0 (where
# the test livepatch has no replacement for sock_setsockopt's prototype)
# sock_set_rcvbuf, the other function rcvfix always hooks.
lp=sk_setsockopt
grep -qE ' [tT] sk_setsockopt$' /proc/kallsyms || lp=sock_set_rcvbuf
livepatch_on() { insmod "$livepatch" func=$lp; }
# gone DIR: wait until DIR is gone (a livepatch's transition is over)
gone() {
	local i
	for i in $(seq "$(scaled 100)"); do
		[[ -d $1 ]] || return 0
		sleep 0.1
	done
	return 1
}
# lp_disable DIR: disable a livepatch through sysfs, wait for its end
lp_disable() { echo 0 > "$1/enabled" && gone "$1"; }
# lp_settled DIR: wait until the livepatch's transition is over (another
# livepatch cannot be enabled before: EBUSY)
lp_settled() {
	local i
	for i in $(seq "$(scaled 100)"); do
		[[ $(cat "$1/transition") == 0 ]] && return 0
		sleep 0.1
	done
	return 1
}
livepatch_off() {
	lp_disable "$LP"
	rmmod rcvfix_test_livepatch
}
lp_cleanup() {
	local d m
	grep -q "^rcvfix_test_stall " /proc/modules && rmmod rcvfix_test_stall
	for d in "$LP2" "$LP"; do
		[[ -d $d ]] && lp_disable "$d"
	done
	for m in rcvfix_test_livepatch2 rcvfix_test_livepatch rcvfix_test_pair; do
		grep -q "^$m " /proc/modules && rmmod $m
	done
}
on_exit lp_cleanup
# aside: armed, stepped_aside and stepped_aside_for from /proc/net/rcvfix
aside() {
	echo "$(rcvfix_status armed) $(rcvfix_status stepped_aside) $(rcvfix_status stepped_aside_for)"
}
# wait_aside WANT: wait (10 s, scaled) until aside reads WANT; each read of
# /proc/net/rcvfix also has a rcvfix that stands aside try to arm again
wait_aside() { wait_eq "$1" aside; }
rcvfix_unload
ns_write /proc/sys/net/ipv4/tcp_rmem "4096 131072 6291456"

# 1. Loaded, enabled nowhere: no callback at all.
pp rcvfix_load || { fail "load rcvfix"; done_testing; }
check_eq "loaded idle: armed no, 0 namespaces" "no 0" "$(state)"
check_eq "loaded idle: no rcvfix ftrace hook" 0 "$(rcvfix_hooks)"
check_eq "loaded idle: stock lock" 2 "$(lock_after_rcvbuf)"

# 2. A livepatch of $lp loads beside the idle module.
if pp livepatch_on; then
	ok "livepatch of $lp loads while rcvfix is loaded but idle"
else
	fail "livepatch of $lp loads while rcvfix is loaded but idle"
	done_testing
fi
check "livepatch enabled" grep -qx 1 "$LP/enabled"

# 3. Enabling fails with EBUSY, the switch stays 0, nothing half-armed.
dmesg_mark "enable under livepatch"
check_eq "enable under the livepatch: write fails with EBUSY" \
	"ret=-1 errno=EBUSY" "$("$RCVFIX_BIN/sysctlw" "$E" 1)"
check_eq "the switch stays 0" 0 "$(rcvfix_enabled)"
check_eq "still armed no, 0 namespaces" "no 0" "$(state)"
check_eq "no rcvfix ftrace hook left behind" 0 "$(rcvfix_hooks)"
log=$(dmesg_since_mark "enable under livepatch")
echo "$log" | grep rcvfix | sed 's/^/# dmesg: /'
check_eq "one log line names $lp, EBUSY and the owner's kind" 1 \
	"$(grep -c "rcvfix: cannot hook $lp: EBUSY (-16), owner: livepatch-or-ftrace-ops; net.rcvfix.enable stays 0" <<< "$log")"
check_eq "/proc/net/rcvfix: why the last attempt failed" \
	"EBUSY:$lp:livepatch-or-ftrace-ops" "$(rcvfix_status last_arm_error)"
check_eq "/proc/net/rcvfix: one failure counted" 1 "$(rcvfix_status arm_failures)"
st=$("$RCVFIX_BIN/rcvfixctl" status)
echo "$st" | sed 's/^/# status: /'
check "rcvfixctl status: armed no, enabled nowhere, why" \
	grep -qzE "armed: +no.*enabled in: +0 namespaces.*last arm error: +EBUSY on $lp \\(owner: livepatch-or-ftrace-ops\\)" <<< "$st"
check_eq "setsockopt under the livepatch is stock" 2 "$(lock_after_rcvbuf)"

# 4. Livepatch removed: enabling works, both hooks armed.
pp livepatch_off
check "livepatch removed" test ! -d "$LP"
check_eq "enable after the livepatch is gone" "ret=1 errno=0" \
	"$("$RCVFIX_BIN/sysctlw" "$E" 1)"
check_eq "armed yes, 1 namespace" "yes 1" "$(state)"
# every target of the strategy (2, or 3 where MPTCP's sync function exists)
# Every target but MPTCP's receive path (subflow_data_ready,
# subflow_state_change, mptcp_poll, mptcp_release_cb),
# armed on demand once an MPTCP socket sets SO_RCVLOWAT: none does here.
ntargets=$(rcvfix_status targets | tr ',' '\n' |
	grep -cvE '^(subflow_data_ready|subflow_state_change|mptcp_poll|mptcp_release_cb)$')
check_eq "MPTCP's receive-path hooks not armed (no mark set)" no \
	"$(rcvfix_status receive_hooks_armed)"
check_eq "every target function hooked" "$ntargets" "$(rcvfix_hooks)"
check "sk_setsockopt and sock_set_rcvbuf among them" test "$ntargets" -ge 2
check_eq "last_arm_error cleared by the successful arm" none \
	"$(rcvfix_status last_arm_error)"
check_eq "the fix works" 0 "$(lock_after_rcvbuf)"

# From here to the end of 4d a kernel thread sets SO_RCVBUF 65536 (unlocked
# by the rule) through sock_set_rcvbuf(), setsockopt() and sock_set_rcvbuf()
# again, back to back, every 1-2 ms, while rcvfix steps aside and arms
# again around it. (Without the in-force flag, arm.c, it found setsockopt()
# unlocking while sock_set_rcvbuf() locked about a hundred times per
# livepatch loaded: while hooks were disarmed or armed one by one, and
# while a failed attempt held some for a moment. What it cannot show: an
# MPTCP setsockopt() between its own hook and the sync hook as that goes.)
pp insmod "$pair"
echo "start 65536" > "$P"

# 4b. A livepatch always wins: it loads while armed, rcvfix steps aside with
# the switch kept, says so, and arms again by itself once it is gone.
dmesg_mark "livepatch while armed"
if pp livepatch_on; then
	ok "a livepatch of $lp loads while rcvfix is armed"
else
	fail "a livepatch of $lp loads while rcvfix is armed"
fi
check "livepatch enabled over rcvfix" grep -qx 1 "$LP/enabled"
check_eq "stepped aside: not armed, the switch kept, 1 namespace" \
	"no 1 1 yes" \
	"$(state) $(rcvfix_enabled) $(rcvfix_status stepped_aside)"
check_eq "/proc/net/rcvfix names the livepatch and the function" \
	"livepatch:rcvfix_test_livepatch:$lp" "$(rcvfix_status stepped_aside_for)"
check_eq "one step aside counted" 1 "$(rcvfix_status steps_aside)"
check_eq "no rcvfix ftrace hook while the livepatch is in force" 0 "$(rcvfix_hooks)"
check_eq "the livepatch's (stock) code runs: locked" 2 "$(lock_after_rcvbuf)"
log=$(dmesg_since_mark "livepatch while armed")
echo "$log" | grep rcvfix | sed 's/^/# dmesg: /'
check_eq "one log line names the livepatch and $lp" 1 \
	"$(grep -c "rcvfix: livepatch rcvfix_test_livepatch patches $lp: the fix steps aside" <<< "$log")"
st=$("$RCVFIX_BIN/rcvfixctl" status)
echo "$st" | sed 's/^/# status: /'
check "rcvfixctl status shows why the fix is not in force" \
	grep -qE "^stepped aside: +for livepatch:rcvfix_test_livepatch:$lp " <<< "$st"
check "rcvfixctl prometheus: rcvfix_stepped_aside 1" \
	grep -qx "rcvfix_stepped_aside 1" <("$RCVFIX_BIN/rcvfixctl" --prometheus status)
dmesg_mark "livepatch gone"
pp livepatch_off
check "livepatch removed" test ! -d "$LP"
check_eq "re-armed by itself, switch still on" "yes 1 1 no none" \
	"$(state) $(rcvfix_enabled) $(rcvfix_status stepped_aside) $(rcvfix_status stepped_aside_for)"
check_eq "every target hooked again" "$ntargets" "$(rcvfix_hooks)"
check_eq "the fix works again without a toggle" 0 "$(lock_after_rcvbuf)"
# (at the end of its disabling transition, or at the latest at its rmmod)
check "dmesg: the fix is in force again" \
	grep -qE "rcvfix: livepatch rcvfix_test_livepatch (is gone|no longer holds $lp): the fix is in force again" \
	<(dmesg_since_mark "livepatch gone")

# 4c. A livepatch disabled through sysfs, its module left loaded: no module
# event says its handlers are gone (they go at the end of its transition),
# yet rcvfix arms again by itself, without a toggle. This one patches
# sock_set_rcvbuf: rcvfix's sk_setsockopt() hook went after that one when
# it stepped aside, and its attempt to arm again at the live event held
# sk_setsockopt() for a moment (seen by the thread).
dmesg_mark "livepatch disabled"
pp insmod "$livepatch"
check_eq "aside for the livepatch of sock_set_rcvbuf" \
	"no yes livepatch:rcvfix_test_livepatch:sock_set_rcvbuf" "$(aside)"
pp lp_disable "$LP"
check "disabled through sysfs, its module still loaded" \
	grep -q '^rcvfix_test_livepatch ' /proc/modules
wait_aside "yes no none"
check_eq "disabled livepatch: armed again by itself, the switch still on" \
	"yes no none 1" "$(aside) $(rcvfix_enabled)"
check_eq "the fix works after the livepatch was disabled" 0 "$(lock_after_rcvbuf)"
check "dmesg: the livepatch no longer holds sock_set_rcvbuf" \
	grep -q "rcvfix: livepatch rcvfix_test_livepatch no longer holds sock_set_rcvbuf: the fix is in force again" \
	<(dmesg_since_mark "livepatch disabled")
pp rmmod rcvfix_test_livepatch
check_eq "its module removed: still armed" "yes no none" "$(aside)"

# 4d. An atomic-replace livepatch takes over from the one in force: the old
# one's handlers go at the end of the new one's transition, after its live
# event (here held open by a task asleep in the function the new one
# patches, sock_set_keepalive, which rcvfix does not hook). Meanwhile
# rcvfix names the old one as the holder of $lp; once the transition is
# over it arms again by itself, the old module still loaded.
pp livepatch_on
check_eq "aside for the livepatch of $lp (to be replaced)" \
	"no yes livepatch:rcvfix_test_livepatch:$lp" "$(aside)"
check "its transition is over" lp_settled "$LP"
dmesg_mark "livepatch replaced"
pp insmod "$stall"
pp insmod "$livepatch2" func=sock_set_keepalive replace=1
check_eq "the replace's transition is held open" 1 "$(cat "$LP2/transition")"
check_eq "meanwhile aside, for the replaced livepatch that still holds $lp" \
	"no yes livepatch:rcvfix_test_livepatch:$lp" "$(aside)"
pp rmmod rcvfix_test_stall
check "the replaced livepatch's patch goes at the end of the transition" gone "$LP"
check "the replaced livepatch's module is still loaded" \
	grep -q '^rcvfix_test_livepatch ' /proc/modules
wait_aside "yes no none"
check_eq "replaced by a livepatch of no hooked function: armed again by itself" \
	"yes no none 1" "$(aside) $(rcvfix_enabled)"
check_eq "the fix works after the replace" 0 "$(lock_after_rcvbuf)"
dmesg_since_mark "livepatch replaced" | grep rcvfix | sed 's/^/# dmesg: /'
pp rmmod rcvfix_test_livepatch
pp lp_disable "$LP2"
pp rmmod rcvfix_test_livepatch2
check_eq "both livepatches gone: still armed" "yes no none" "$(aside)"

# The thread's verdict.
echo stop > "$P"
res=$(cat "$P")
echo "# rcvfix_test_pair: $res"
check_eq "setsockopt() and sock_set_rcvbuf() never by different rules at once" \
	0 "$(kv half "$res")"
check "the thread saw the rule and stock code" \
	test "$(kv rule "$res")" -gt 0 -a "$(kv stock "$res")" -gt 0
pp rmmod rcvfix_test_pair

# 5. Counting namespaces: the last one out lets the hooks go, by a sysctl
# write or by being destroyed, after a hold-off (3 s here, 10 by default;
# scaled for a slower guest: the debug kernel's netns teardown and reads
# took longer than 3 s, and the hold-off ended inside the checks).
echo "$(scaled 3)" > "$HOLD"
na=$(netns_new a)
rcvfix_enable 1 "$na"
check_eq "second namespace: armed yes, 2 namespaces" "yes 2" "$(state)"
arms=$(rcvfix_status arms) disarms=$(rcvfix_status disarms)
rcvfix_enable 0
check_eq "initial namespace off: still armed for the other" "yes 1" "$(state)"
check_eq "no re-arm while one namespace stays enabled" "$arms" \
	"$(rcvfix_status arms)"
check_eq "writing the same value twice changes nothing" "yes 1" \
	"$(rcvfix_enable 1 "$na"; state)"
# Its teardown does not wait for ftrace: the disarm comes after the
# hold-off, and a namespace enabled within it finds the hooks armed.
pp ip netns del "$na"
for i in $(seq 100); do [[ $(state) == "yes 0" ]] && break; sleep 0.1; done
sleep 1	# a disarm inside the teardown would have ended by now
check_eq "namespace destroyed while enabled: still armed, 0 namespaces" \
	"yes 0" "$(state)"
check_eq "no disarm inside the namespace's teardown" "$disarms" \
	"$(rcvfix_status disarms)"
nc=$(netns_new c)
rcvfix_enable 1 "$nc"
check_eq "enabled within the hold-off: no re-arm" "yes 1 $arms" \
	"$(state) $(rcvfix_status arms)"
pp ip netns del "$nc"
for i in $(seq 100); do [[ $(state) == "yes 0" ]] && break; sleep 0.1; done
for i in $(seq "$(scaled 150)"); do [[ $(state) == "no 0" ]] && break; sleep 0.1; done
check_eq "disarmed after the hold-off" "no 0" "$(state)"
check_eq "one disarm counted" $((disarms + 1)) "$(rcvfix_status disarms)"
check_eq "no rcvfix ftrace hook after the destroyed namespace" 0 "$(rcvfix_hooks)"
if livepatch_on; then
	ok "the livepatch loads again once nothing is enabled"
	livepatch_off
else
	fail "the livepatch loads again once nothing is enabled"
fi

# 5b. Switching costs nothing within the hold-off: the switch turned off and
# on again (the last namespace, by sysctl writes) neither disarms nor arms.
# A livepatch still wins then, and disarm_holdoff_s=0 disarms at once.
rcvfix_enable 1
arms=$(rcvfix_status arms) disarms=$(rcvfix_status disarms)
rcvfix_enable 0
check_eq "the last namespace off: still armed in the hold-off" "yes 0" "$(state)"
for i in 1 2 3 4 5; do
	echo 1 > "$E"
	echo 0 > "$E"
done
rcvfix_enable 1
check_eq "five switch cycles within the hold-off: no arm, no disarm" \
	"yes 1 $arms $disarms" \
	"$(state) $(rcvfix_status arms) $(rcvfix_status disarms)"
check_eq "the fix works" 0 "$(lock_after_rcvbuf)"
rcvfix_enable 0
check_eq "off again, in the hold-off" "yes 0" "$(state)"
if livepatch_on; then
	ok "a livepatch loads in the hold-off"
	check_eq "it wins: disarmed, nothing enabled to step aside for" \
		"no 0 no" "$(state) $(rcvfix_status stepped_aside)"
	livepatch_off
else
	fail "a livepatch loads in the hold-off"
fi
sleep 1
check_eq "livepatch gone, nothing enabled: still disarmed" "no 0" "$(state)"
echo 0 > "$HOLD"
rcvfix_enable 1
disarms=$(rcvfix_status disarms)
rcvfix_enable 0
check_eq "disarm_holdoff_s=0: the last namespace off disarms at once" \
	"no 0 $((disarms + 1))" "$(state) $(rcvfix_status disarms)"
check "disarm_holdoff_s refuses 3601" \
	bash -c "! echo 3601 > $HOLD 2> /dev/null"
check_eq "... and keeps its value" 0 "$(cat "$HOLD")"
echo 10 > "$HOLD"

# 6. Unload in the hold-off: prompt, nothing left behind. Then unload while
# armed (two namespaces enabled): nothing left behind.
rcvfix_enable 1
rcvfix_enable 0
check_eq "in the hold-off before rmmod" "yes 0" "$(state)"
t0=$SECONDS
pp rmmod rcvfix
check "rmmod in the hold-off is prompt ($((SECONDS - t0)) s)" \
	test $((SECONDS - t0)) -lt "$(scaled 8)"
check_eq "no rcvfix ftrace hook after rmmod in the hold-off" 0 "$(grep -c rcvfix "$EF")"
pp rcvfix_load
nb=$(netns_new b)
rcvfix_enable 1
rcvfix_enable 1 "$nb"
check_eq "armed again" "yes 2" "$(state)"
dmesg_mark unload
pp rmmod rcvfix
check "unloaded while armed" bash -c "! grep -q '^rcvfix ' /proc/modules"
check_eq "no rcvfix ftrace hook after unload" 0 "$(grep -c rcvfix "$EF")"
check_eq "stock after unload" 2 "$(lock_after_rcvbuf)"

# 7. default_enable=1 arms at load; with the function owned, the load fails.
pp rcvfix_load default_enable=1
check_eq "default_enable=1: armed at load" yes "$(rcvfix_status armed)"
rcvfix_unload
livepatch_on
dmesg_mark "default under livepatch"
check "default_enable=1 with $lp owned: load refused" \
	bash -c "! insmod $RCVFIX_KO default_enable=1 2> /dev/null"
check "and the log names $lp" grep -q \
	"rcvfix: cannot hook $lp: EBUSY" <(dmesg_since_mark "default under livepatch")
livepatch_off

done_testing
