#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Only one IP-modifying ftrace user may own a function. Whoever comes second
# fails with EBUSY and leaves nothing behind; the first keeps working. rcvfix
# owns its functions only while the fix is enabled somewhere: it loads beside
# the others, and turning the fix on is what fails. A livepatch is the
# exception: it always wins, rcvfix steps aside for it while it is loaded.
# Other users: a kprobe with a post_handler, a raw IPMODIFY ftrace_ops (on
# sk_setsockopt), and a livepatch (of sock_set_rcvbuf). On a kernel without
# livepatch (Debian's arm64 ones) the livepatch cases are skipped, each
# with a SKIP line, and the others run.
source "$RCVFIX_REPO/tests/guest/lib.sh"

conflict=$RCVFIX_KMOD/rcvfix_test_conflict.ko
need "$conflict"
lp=1
have_livepatch || lp=0

loaded() { grep -q "^$1 " /proc/modules; }

# The SOL_SOCKET setsockopt entry rcvfix hooks: sock_setsockopt before 6.0.
entry=sk_setsockopt
grep -qE ' [tT] sk_setsockopt$' /proc/kallsyms || entry=sock_setsockopt

# lock bit after SO_RCVBUF 65536 with the default tcp_rmem[1] of 131072:
# 0 when rcvfix is working and enabled, 2 in stock.
lock_after_rcvbuf() { "$RCVFIX_BIN/sockopt" rcvbuf=65536 | awk -F'lock=' 'END { print $2 + 0 }'; }

livepatch_off() {
	echo 0 > /sys/kernel/livepatch/rcvfix_test_livepatch/enabled
	local i
	for i in $(seq 100); do
		[[ -d /sys/kernel/livepatch/rcvfix_test_livepatch ]] || break
		sleep 0.1
	done
	rmmod rcvfix_test_livepatch
}

E=/proc/sys/net/rcvfix/enable
EF=/sys/kernel/tracing/enabled_functions
# Whether enabled_functions names each callback's module, as it does where
# ftrace gives an ops its own trampoline (x86; 7.3 arm64). 6.1 arm64 calls
# every ops through one list and shows only the flags (R, I). Told below
# by the test module's ftrace_ops, alone on its function.
ef_names=0
# ef_mark: remember enabled_functions before rcvfix tries to arm.
ef_mark() { ef_before=$(cat "$EF"); }
# no_rcvfix_hook: no ftrace callback of rcvfix is left registered: no line
# names rcvfix, and the file is as at the last ef_mark (which catches a
# leftover where lines name no module).
no_rcvfix_named() { ! grep -q '\[rcvfix\]' "$EF"; }
no_rcvfix_hook() { no_rcvfix_named && [[ $(cat "$EF") == "$ef_before" ]]; }
# rcvfix_owns FUNC: rcvfix's callback is the IP-modifying one on FUNC.
rcvfix_owns() {
	if ((ef_names)); then
		grep -q "^$1 .*\[rcvfix\]" "$EF"
	else
		grep -qE "^$1 \([0-9]+\).* I( |\$)" "$EF"
	fi
}

# rcvfix second: it loads (idle, it holds nothing), but turning the fix on
# is refused with EBUSY, the switch stays 0, nothing is left armed.
for kind in kprobe ftrace; do
	pp insmod "$conflict" kind=$kind
	[[ $kind == ftrace ]] && grep -q '\[rcvfix_test_conflict\]' "$EF" &&
		ef_names=1
	ef_mark
	check "rcvfix loads beside a $kind on $entry (nothing enabled)" \
		rcvfix_load
	dmesg_mark "$kind first"
	res=$("$RCVFIX_BIN/sysctlw" "$E" 1)
	if [[ $kind == kprobe && $res == "ret=1 errno=0" ]]; then
		# 7.3 lets a kprobe with a post_handler register without
		# owning the ftrace entry: nothing to refuse there.
		echo "# $KVER: enabling succeeds beside a kprobe with a post_handler"
		check_eq "rcvfix fixes SO_RCVBUF beside that kprobe" 0 "$(lock_after_rcvbuf)"
	else
		check_eq "enabling is refused with EBUSY ($kind)" \
			"ret=-1 errno=EBUSY" "$res"
		check_eq "the switch stays 0 ($kind)" 0 "$(cat "$E")"
		check "one dmesg line names the target, EBUSY and the owner ($kind)" \
			grep -q "rcvfix: cannot hook $entry: EBUSY (-16), owner: $([[ $kind == kprobe ]] && echo kprobe || echo livepatch-or-ftrace-ops)" \
			<(dmesg_since_mark "$kind first")
		check_eq "not armed ($kind)" no "$(rcvfix_status armed)"
		check "no rcvfix ftrace hook left behind ($kind)" no_rcvfix_hook
	fi
	pp rcvfix_unload
	pp rmmod rcvfix_test_conflict
done

if ((lp)); then
	pp insmod "$livepatch"
	check "livepatch of sock_set_rcvbuf enabled" \
		grep -qx 1 /sys/kernel/livepatch/rcvfix_test_livepatch/enabled
	ef_mark
	check "rcvfix loads beside a livepatch of sock_set_rcvbuf (nothing enabled)" \
		rcvfix_load
	dmesg_mark "livepatch first"
	check_eq "enabling is refused with EBUSY (livepatch)" "ret=-1 errno=EBUSY" \
		"$("$RCVFIX_BIN/sysctlw" "$E" 1)"
	check "dmesg names sock_set_rcvbuf and EBUSY" \
		grep -q 'rcvfix: cannot hook sock_set_rcvbuf: EBUSY (-16), owner: livepatch-or-ftrace-ops' \
		<(dmesg_since_mark "livepatch first")
	check "all or nothing: the $entry hook of the failed arm was undone" \
		no_rcvfix_hook
	pp rcvfix_unload
	livepatch_off
	check "livepatch removed" test ! -d /sys/kernel/livepatch/rcvfix_test_livepatch
else
	echo "ok - $RCVFIX_TEST: a livepatch first, rcvfix refused # SKIP $no_livepatch_why"
fi

# rcvfix loaded but idle holds nothing: an IPMODIFY user comes and goes.
pp rcvfix_load
check "an IPMODIFY ftrace_ops on $entry loads while rcvfix is idle" \
	insmod "$conflict" kind=ftrace
pp rmmod rcvfix_test_conflict
pp rcvfix_unload

# rcvfix first (enabled): the others are refused, rcvfix keeps working.
pp rcvfix_load
echo 1 > "$E"
((ef_names)) ||
	echo "# $KVER: enabled_functions names no callback's module: hooks told by the I flag"
check "armed: rcvfix's hook is the one on $entry" rcvfix_owns "$entry"
# refused_busy KIND: insmod of the conflicting module fails with EBUSY (the
# registration's error, which insmod reports as "Device or resource busy").
refused_busy() {
	local err
	err=$(insmod "$conflict" kind=$1 2>&1) && {
		rmmod rcvfix_test_conflict
		echo loaded
		return
	}
	[[ $err == *"Device or resource busy"* ]] && echo EBUSY || echo "$err"
}
check_eq "an IPMODIFY ftrace_ops on $entry is refused with EBUSY while rcvfix owns it" \
	EBUSY "$(refused_busy ftrace)"
# 6.1 and 6.12 refuse the kprobe (EBUSY). 7.3 lets it register without
# touching the ftrace entry: then it must not disturb rcvfix.
if insmod "$conflict" kind=kprobe 2> /dev/null; then
	echo "# $KVER: a kprobe with a post_handler registers beside rcvfix"
	check "rcvfix's hook is still the one on $entry" rcvfix_owns "$entry"
	check_eq "rcvfix still fixes SO_RCVBUF with that kprobe registered" 0 "$(lock_after_rcvbuf)"
	pp rmmod rcvfix_test_conflict
else
	check_eq "a kprobe on $entry is refused with EBUSY while rcvfix owns it" \
		EBUSY "$(refused_busy kprobe)"
fi
check_eq "rcvfix still fixes SO_RCVBUF after the refused attempts" 0 "$(lock_after_rcvbuf)"

# A livepatch always wins, whichever target it patches: it loads over the
# enabled fix, rcvfix steps aside (switch kept) and comes back by itself.
lp_targets=(sock_set_rcvbuf)
[[ $entry == sk_setsockopt ]] && lp_targets+=(sk_setsockopt)
grep -qx mptcp_sol_socket_sync_intval \
	<(awk '{ print $1 }' /sys/kernel/tracing/available_filter_functions) &&
	lp_targets+=(mptcp_sol_socket_sync_intval)
if ((!lp)); then
	echo "ok - $RCVFIX_TEST: a livepatch over the enabled fix wins # SKIP $no_livepatch_why"
	lp_targets=()
fi
for f in "${lp_targets[@]}"; do
	if insmod "$livepatch" func=$f; then
		ok "a livepatch of $f loads over the enabled fix"
	else
		fail "a livepatch of $f loads over the enabled fix"
		continue
	fi
	check_eq "rcvfix steps aside for it ($f), the switch stays 1" \
		"no yes livepatch:rcvfix_test_livepatch:$f 1" \
		"$(rcvfix_status armed) $(rcvfix_status stepped_aside) $(rcvfix_status stepped_aside_for) $(cat "$E")"
	check "the livepatch patches $f" \
		test -d "/sys/kernel/livepatch/rcvfix_test_livepatch/vmlinux/$f,1"
	check "no rcvfix hook while the livepatch of $f is in force" no_rcvfix_named
	check_eq "stock behaviour while aside ($f)" 2 "$(lock_after_rcvbuf)"
	livepatch_off
	check_eq "livepatch of $f gone: rcvfix armed again by itself" \
		"yes no none 1" \
		"$(rcvfix_status armed) $(rcvfix_status stepped_aside) $(rcvfix_status stepped_aside_for) $(cat "$E")"
	check_eq "rcvfix fixes SO_RCVBUF again after the livepatch of $f" 0 \
		"$(lock_after_rcvbuf)"
done
pp rcvfix_unload
check_eq "stock again after unload" 2 "$(lock_after_rcvbuf)"

# kernel.ftrace_enabled=0 refuses rcvfix's permanent ops with the same EBUSY
# as an owner: reported as that sysctl, not as a livepatch.
FE=/proc/sys/kernel/ftrace_enabled
if [[ -w $FE ]] && echo 0 > $FE 2> /dev/null; then
	on_exit "echo 1 > $FE"
	ef_mark
	pp rcvfix_load
	dmesg_mark "ftrace_enabled 0"
	check_eq "ftrace_enabled=0: enabling is refused with EBUSY" \
		"ret=-1 errno=EBUSY" "$("$RCVFIX_BIN/sysctlw" "$E" 1)"
	check_eq "... the owner is named as the sysctl" "kernel.ftrace_enabled=0" \
		"$(rcvfix_status last_arm_error | cut -d: -f3-)"
	check "... in dmesg too" grep -q "owner: kernel.ftrace_enabled=0" \
		<(dmesg_since_mark "ftrace_enabled 0")
	check "... nothing left registered" no_rcvfix_hook
	echo 1 > $FE
	check_eq "ftrace_enabled=1 again: enabling works" "ret=1 errno=0" \
		"$("$RCVFIX_BIN/sysctlw" "$E" 1)"
	check_eq "... and fixes SO_RCVBUF" 0 "$(lock_after_rcvbuf)"
	pp rcvfix_unload
else
	echo "# kernel.ftrace_enabled cannot be set to 0 here: case not run"
fi

done_testing
