#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The "direct" strategy: where __sock_set_rcvbuf is a function of its own,
# rcvfix redirects it alone. No supported kernel has it (it is inlined), so
# a test module provides a stock copy under that name; rcvfix loaded after
# it must pick the direct strategy and apply the rule through it.
source "$RCVFIX_REPO/tests/guest/lib.sh"

direct=$RCVFIX_KMOD/rcvfix_test_direct.ko
[[ -f $direct ]] || skip "test module not built"

# run VAL: call the test module's __sock_set_rcvbuf; print "rcvbuf lock"
run() {
	echo "$1" > /proc/rcvfix_test_direct &&
		sed -E 's/.*rcvbuf=([0-9]+) lock=([0-9]+)/\1 \2/' /proc/rcvfix_test_direct
}

pp insmod "$direct"
pp rcvfix_load
check_eq "strategy is direct" direct "$(rcvfix_status strategy)"
check_eq "target is __sock_set_rcvbuf" __sock_set_rcvbuf "$(rcvfix_status targets)"
check "dmesg reports the direct strategy" \
	grep -q 'rcvfix: .* loaded: strategy direct (__sock_set_rcvbuf)' <(dmesg)

rmem1=$(sysctl -n net.ipv4.tcp_rmem | awk '{ print $2 }')
half=$((rmem1 / 2))

check_eq "disabled: stock locks at tcp_rmem[1]" "$rmem1 2" "$(run $half)"
echo 1 > /proc/sys/net/rcvfix/enable
check_eq "enabled: no lock at tcp_rmem[1]" "$rmem1 0" "$(run $half)"
check_eq "enabled: lock one below tcp_rmem[1]" "$((rmem1 - 2)) 2" "$(run $((half - 1)))"
check_eq "enabled: a lock already set stays" "$rmem1 2" "$(run "lock $half")"
check_eq "counted on the kernel path" 3 "$(rcvfix_status kernel.sets)"
check_eq "one lock avoided" 1 "$(rcvfix_status kernel.locks_avoided)"
check_eq "one lock kept" 1 "$(rcvfix_status kernel.locks_kept)"
check "the callers' functions are not hooked" \
	bash -c "! grep -qE '^(sk_setsockopt|sock_set_rcvbuf) ' /sys/kernel/tracing/enabled_functions"

pp rcvfix_unload
check_eq "stock after unload" "$rmem1 2" "$(run $half)"
pp rmmod rcvfix_test_direct

done_testing
