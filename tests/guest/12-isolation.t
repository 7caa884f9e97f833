#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Per-namespace control: enabling rcvfix in one network namespace changes
# nothing in another or in the initial one (switch, behaviour, counters);
# namespaces start at default_enable, both existing ones at load and new ones.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt"

rcvfix_unload
M_MIN=$(min_rcvbuf)
M_RMAX=$(cat /proc/sys/net/core/rmem_max)
M_T=$(tcp_rmem1) M_NEW=$M_T
h=$((M_T / 2))
a=$(netns_new isoa)
b=$(netns_new isob)
probe=(rcvbuf=$h new rcvbuf=$((h - 1)) new rcvbufforce=$h)

# expect_ns NAME NS EN: switch reads EN, sockets behave per EN, and (when
# disabled) its counters do not move.
expect_ns() {
	local name=$1 ns=$2 c0
	M_EN=$3
	check_eq "$name: enable reads $3" "$3" "$(rcvfix_enabled "$ns")"
	c0="$(rcvfix_counters setsockopt "$ns") $(rcvfix_counters bpf "$ns")"
	model_reset
	check_sockopt "$name" "$ns" "${probe[@]}"
	if ((M_EN)); then
		check_eq "$name: counters move" "$M_SETS $M_LSET $M_LAVOID $M_LKEPT" \
			"$(counters_delta "${c0% * * * *}" \
			   "$(rcvfix_counters setsockopt "$ns")")"
	else
		check_eq "$name: counters do not move" "$c0" \
			"$(rcvfix_counters setsockopt "$ns") $(rcvfix_counters bpf "$ns")"
	fi
}

rcvfix_load || { fail "load rcvfix"; done_testing; }
expect_ns "loaded: initial" "" 0
expect_ns "loaded: a" "$a" 0
expect_ns "loaded: b" "$b" 0

rcvfix_enable 1 "$a"
expect_ns "a enabled: a" "$a" 1
expect_ns "a enabled: b" "$b" 0
expect_ns "a enabled: initial" "" 0

rcvfix_enable 1
c=$(netns_new isoc)
expect_ns "initial enabled: initial" "" 1
expect_ns "initial enabled: b" "$b" 0
expect_ns "initial enabled: new c starts at default_enable=0" "$c" 0
expect_ns "initial enabled: a" "$a" 1
rcvfix_enable 0 "$a"
expect_ns "a disabled again: a" "$a" 0
expect_ns "a disabled again: initial" "" 1

rcvfix_unload
rcvfix_load default_enable=1 || { fail "load default_enable=1"; done_testing; }
check_eq "default_enable=1 shown in sysfs" 1 \
	"$(cat /sys/module/rcvfix/parameters/default_enable)"
d=$(netns_new isod)
expect_ns "default_enable=1: initial" "" 1
expect_ns "default_enable=1: existing a" "$a" 1
expect_ns "default_enable=1: new d" "$d" 1
rcvfix_enable 0 "$d"
expect_ns "d disabled: d" "$d" 0
expect_ns "d disabled: b" "$b" 1
expect_ns "d disabled: initial" "" 1

done_testing
