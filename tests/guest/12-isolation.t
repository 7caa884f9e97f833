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

# ns_state NS: the switch and /proc/net/rcvfix of NS in one program run
# (each costs tenths of a second under emulation).
ns_state() {
	if [[ -n $1 ]]; then
		in_ns "$1" cat /proc/sys/net/rcvfix/enable /proc/net/rcvfix
	else
		cat /proc/sys/net/rcvfix/enable /proc/net/rcvfix
	fi
}

# counters_of STATE PATH: "sets set avoided kept" of PATH in an ns_state.
counters_of() {
	local k v s=0 l=0 a=0 kept=0
	while read -r k v; do
		case $k in
		"$2.sets") s=$v ;; "$2.locks_set") l=$v ;;
		"$2.locks_avoided") a=$v ;; "$2.locks_kept") kept=$v ;;
		esac
	done <<< "$1"
	echo "$s $l $a $kept"
}

# expect_ns NAME NS EN: the switch reads EN, sockets behave per EN, and
# the counters move by what the rule implies (not at all when disabled).
expect_ns() {
	local name=$1 ns=$2 st0 st1
	M_EN=$3
	st0=$(ns_state "$ns")
	check_eq "$name: enable reads $3" "$3" "${st0%%$'\n'*}"
	model_reset
	check_sockopt "$name" "$ns" "${probe[@]}"
	st1=$(ns_state "$ns")
	check_eq "$name: setsockopt counters" \
		"$M_SETS $M_LSET $M_LAVOID $M_LKEPT" \
		"$(counters_delta "$(counters_of "$st0" setsockopt)" \
				  "$(counters_of "$st1" setsockopt)")"
	check_eq "$name: other counters do not move" \
		"$(counters_of "$st0" bpf) $(counters_of "$st0" kernel)" \
		"$(counters_of "$st1" bpf) $(counters_of "$st1" kernel)"
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
