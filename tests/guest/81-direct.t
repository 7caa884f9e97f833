#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# No "direct" strategy: rcvfix always redirects the two callers of
# __sock_set_rcvbuf (sk_setsockopt, sock_set_rcvbuf), because a traceable
# __sock_set_rcvbuf cannot prove that no inlined copy is left in them. A test
# module exporting a function of that name must change nothing: the strategy
# stays "callers", the module's function is not redirected (it locks, as
# its stock body does), and setsockopt still follows the rule.
# A traceable copy of a hooked function (sock_set_rcvbuf.constprop.0, as a
# compiler names one it made for some callers) is another matter: callers
# reaching it would pass no hook, so rcvfix refuses to load and names it.
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

copy=$RCVFIX_KMOD/rcvfix_test_decoy.ko
pp insmod "$copy"
check "the kernel can trace the test module's sock_set_rcvbuf.constprop.0" \
	grep -qE '^sock_set_rcvbuf\.constprop\.0 \[rcvfix_test_decoy\]' \
	/sys/kernel/tracing/available_filter_functions
dmesg_mark "copy"
err=$(rcvfix_load 2>&1)
st=$?
check_eq "a traceable copy of sock_set_rcvbuf: the load is refused (ENOTUNIQ)" \
	"1 Name not unique on network" "$st ${err##*: }"
check "...and the log names the function and the copy" \
	grep -q "rcvfix: cannot hook sock_set_rcvbuf: the kernel has another copy of it (a traceable sock_set_rcvbuf\.\*" \
	<(dmesg_since_mark "copy")
check "...and leaves nothing armed" \
	bash -c "! grep -q '^rcvfix ' /proc/modules && ! grep -qs rcvfix /sys/kernel/tracing/enabled_functions"
pp rmmod rcvfix_test_decoy
pp rcvfix_load
check "without the copy rcvfix loads again" grep -q '^rcvfix ' /proc/modules
pp rcvfix_unload

done_testing
