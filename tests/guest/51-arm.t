#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pay nothing while unused: loaded with the fix enabled nowhere, rcvfix
# holds no function, so a livepatch of sk_setsockopt loads; turning the fix
# on then fails with EBUSY, one clear log line, the switch stays 0 and
# nothing is left half-armed; once the livepatch is gone it works. A
# livepatch loaded while rcvfix is armed wins: rcvfix steps aside and arms
# again once it is gone. The hooks follow the number of enabled namespaces:
# armed by the first, disarmed by the last (a destroyed one after a
# hold-off), and unloading while armed leaves the kernel's own code behind.
source "$RCVFIX_REPO/tests/guest/lib.sh"

have_livepatch || skip "$no_livepatch_why"
need "$RCVFIX_KO" "$livepatch" "$RCVFIX_BIN/sockopt" "$RCVFIX_BIN/sysctlw" \
	"$RCVFIX_BIN/rcvfixctl"
E=/proc/sys/net/rcvfix/enable
LP=/sys/kernel/livepatch/rcvfix_test_livepatch
EF=/sys/kernel/tracing/enabled_functions
[[ -r $EF ]] || mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
[[ -r $EF ]] || skip "no $EF"

rcvfix_hooks() { grep -c '\[rcvfix\]' "$EF"; }
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
livepatch_off() {
	echo 0 > "$LP/enabled"
	local i
	for i in $(seq 100); do
		[[ -d $LP ]] || break
		sleep 0.1
	done
	rmmod rcvfix_test_livepatch
}
on_exit "[[ -d $LP ]] && livepatch_off"
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
ntargets=$(rcvfix_status targets | tr ',' '\n' | grep -c .)
check_eq "every target function hooked" "$ntargets" "$(rcvfix_hooks)"
check "sk_setsockopt and sock_set_rcvbuf among them" test "$ntargets" -ge 2
check_eq "last_arm_error cleared by the successful arm" none \
	"$(rcvfix_status last_arm_error)"
check_eq "the fix works" 0 "$(lock_after_rcvbuf)"

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
check "dmesg: the fix is in force again" \
	grep -q "rcvfix: livepatch rcvfix_test_livepatch is gone: the fix is in force again" \
	<(dmesg_since_mark "livepatch gone")

# 5. Counting namespaces: the last one out disarms, also by being destroyed.
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
# Its teardown does not wait for ftrace: the disarm comes after a hold-off
# (10 s), and a namespace enabled within it finds the hooks armed.
pp ip netns del "$na"
for i in $(seq 100); do [[ $(state) == "yes 0" ]] && break; sleep 0.1; done
sleep 2	# a disarm inside the teardown would have ended by now
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
for i in $(seq 300); do [[ $(state) == "no 0" ]] && break; sleep 0.1; done
check_eq "disarmed after the hold-off" "no 0" "$(state)"
check_eq "one disarm counted" $((disarms + 1)) "$(rcvfix_status disarms)"
check_eq "no rcvfix ftrace hook after the destroyed namespace" 0 "$(rcvfix_hooks)"
if livepatch_on; then
	ok "the livepatch loads again once nothing is enabled"
	livepatch_off
else
	fail "the livepatch loads again once nothing is enabled"
fi

# 6. Unload while armed (two namespaces enabled): nothing left behind.
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
