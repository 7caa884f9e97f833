#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# No "direct" strategy: rcvfix always redirects the two callers of
# __sock_set_rcvbuf (sk_setsockopt, sock_set_rcvbuf), because a traceable
# __sock_set_rcvbuf cannot prove that no inlined copy is left in them. A test
# module exporting a function of that name must change nothing: the strategy
# stays "callers", the module's function is not redirected (it locks, as
# its stock body does), and setsockopt still follows the rule.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_BIN/sockopt"

decoy=$RCVFIX_KMOD/rcvfix_test_direct.ko
[[ -f $decoy ]] || skip "test module not built"

# run VAL: call the test module's __sock_set_rcvbuf; print "rcvbuf lock"
run() {
	echo "$1" > /proc/rcvfix_test_direct &&
		sed -E 's/.*rcvbuf=([0-9]+) lock=([0-9]+)/\1 \2/' /proc/rcvfix_test_direct
}

pp insmod "$decoy"
check "kallsyms lists the test module's __sock_set_rcvbuf" \
	grep -qE ' [tT] __sock_set_rcvbuf\s+\[rcvfix_test_direct\]' /proc/kallsyms
pp rcvfix_load
check_eq "strategy stays callers" callers "$(rcvfix_status strategy)"
# the setsockopt entry: sk_setsockopt() since 6.0, sock_setsockopt() before
setter=$(awk '$3 == "sk_setsockopt" { print $3; exit }' /proc/kallsyms)
setter=${setter:-sock_setsockopt}
check "targets are the callers ($setter, sock_set_rcvbuf, ...)" \
	grep -qE "^(mptcp_sol_socket_sync_intval,)?$setter,sock_set_rcvbuf(,|\$)" <<< "$(rcvfix_status targets)"
check "dmesg reports the callers strategy" \
	grep -qE "rcvfix: .* loaded: strategy callers \((mptcp_sol_socket_sync_intval, )?$setter, sock_set_rcvbuf" <(dmesg)

rmem1=$(sysctl -n net.ipv4.tcp_rmem | awk '{ print $2 }')
half=$((rmem1 / 2))
echo 1 > /proc/sys/net/rcvfix/enable
check_eq "enabled: the test module's function is not redirected (locks)" \
	"$rmem1 2" "$(run $half)"
check_eq "enabled: setsockopt still follows the rule" \
	"op=rcvbuf=$half ret=0 errno=0 rcvbuf=$rmem1 lock=0" \
	"$("$RCVFIX_BIN/sockopt" rcvbuf=$half)"
check "__sock_set_rcvbuf is not hooked" \
	bash -c "! grep -q '^__sock_set_rcvbuf' /sys/kernel/tracing/enabled_functions"
echo 0 > /proc/sys/net/rcvfix/enable

pp rcvfix_unload
pp rmmod rcvfix_test_direct

done_testing
