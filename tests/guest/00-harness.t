#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Proves the harness end to end: the guest runs the kernel under test with
# the host's files read-only, loads modules from the shared /lib/modules, and
# loads the rcvfix.ko built for this very kernel.
source "$RCVFIX_REPO/tests/guest/lib.sh"

check_eq "guest runs the kernel under test" "$KVER" "$(uname -r)"
check "root filesystem is read-only" bash -c '! touch /.rcvfix-probe 2>/dev/null'
check "/tmp is a writable tmpfs" bash -c \
	'[[ $(stat -f -c %T /tmp) == tmpfs ]] && touch /tmp/probe'
if [[ -n ${RCVFIX_DEBUG_KERNEL:-} ]]; then
	# make check-debug counts every report and lets the run go on
	check_eq "panic_on_warn is off on the debug kernel" 0 \
		"$(cat /proc/sys/kernel/panic_on_warn)"
else
	check_eq "panic_on_warn is set" 1 "$(cat /proc/sys/kernel/panic_on_warn)"
fi

# A module from the shared /lib/modules (xz-compressed on 6.12) and traffic.
check "modprobe veth" modprobe veth
check_eq "/proc/modules lists veth" 1 "$(grep -c '^veth ' /proc/modules)"
ns_a=$(netns_new a)
ns_b=$(netns_new b)
check "veth pair between two namespaces" \
	veth_pair "$ns_a" "$ns_b" 10.99.0.1 10.99.0.2
check "ping across the veth pair" in_ns "$ns_a" busybox ping -c 1 -W 5 10.99.0.2

# The module under test, built against this kernel's headers.
if [[ ! -f $RCVFIX_KO ]]; then
	fail "rcvfix.ko was built" "missing: $RCVFIX_KO"
	done_testing
fi
check_eq "rcvfix.ko vermagic names this kernel" "$KVER" \
	"$(modinfo -F vermagic "$RCVFIX_KO" 2>&1 | awk '{ print $1 }')"
check "insmod rcvfix.ko" rcvfix_load
check_eq "/proc/modules lists rcvfix" 1 "$(grep -c '^rcvfix ' /proc/modules)"
check "rmmod rcvfix" rmmod rcvfix
check_eq "rcvfix is gone" 0 "$(grep -c '^rcvfix ' /proc/modules)"

done_testing
