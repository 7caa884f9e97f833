#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tracepoint rcvfix:rcvbuf_set through tracefs: the event and its fields
# exist, and a private trace instance records exactly the events of a known
# workload (namespace, pid, comm, path, family, protocol, value, size,
# outcome, tcp_rmem[1]), also from the in-kernel path; a disabled
# namespace and a disabled event record nothing.
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/guest/trace-lib.sh"

tr=/sys/kernel/tracing
[[ -d $tr/instances ]] || skip "no tracefs instances at $tr"
trace_setup
ev=events/rcvfix/rcvbuf_set

fields=$(sed -n 's/^[[:space:]]*field:.* \([a-z_0-9]*\)\(\[[0-9]*\]\)*;.*/\1/p' "$tr/$ev/format" |
	grep -v '^common_' | tr '\n' ' ')
check_eq "format lists the event's fields" \
	"netns_ino pid comm path family protocol val size outcome tcp_rmem1 " "$fields"

inst=$tr/instances/rcvfix-$$
mkdir "$inst" || { fail "mkdir $inst"; done_testing; }
on_exit "rmdir $inst"

# Disabled event: the workload leaves nothing.
trace_workload
n=$(grep -c 'rcvbuf_set:' "$inst/trace")
check_eq "disabled event records nothing" 0 "$n"

echo 1 > "$inst/$ev/enable"
trace_workload
echo 0 > "$inst/$ev/enable"
grep 'rcvbuf_set:' "$inst/trace" > "$TMPDIR/trace-$$"
trace_compare "tracefs events match the workload (the disabled namespace has none)" \
	"$TMPDIR/trace-$$"
rm -f "$TMPDIR/trace-$$"

# A filter on a field, as operators narrow it down: one namespace's
# lock_avoided events only (outcome 2 = RCVFIX_LOCK_AVOIDED).
echo "netns_ino == $TR_INO && outcome == 2" > "$inst/$ev/filter"
echo > "$inst/trace"
echo 1 > "$inst/$ev/enable"
trace_workload
echo 0 > "$inst/$ev/enable"
check_eq "a field filter keeps the lock_avoided events" 2 \
	"$(grep -c 'outcome=lock_avoided' "$inst/trace")"
check_eq "... and only them" 2 "$(grep -c 'rcvbuf_set:' "$inst/trace")"
echo 0 > "$inst/$ev/filter"

# The in-kernel path: sock_set_rcvbuf() through the test module, from a
# shell in the enabled namespace (no rmem_max clamp on this path).
ksock=$RCVFIX_KMOD/rcvfix_test_ksock.ko
if insmod "$ksock"; then
	echo > "$inst/trace"
	echo 1 > "$inst/$ev/enable"
	ip netns exec "$TR_NS" sh -c 'echo 3000000 > /proc/rcvfix_test_ksock' &
	kpid=$!
	wait "$kpid"
	echo 0 > "$inst/$ev/enable"
	rmmod rcvfix_test_ksock
	got=$(sed -n 's/.*rcvbuf_set: //p' "$inst/trace")
	check_eq "sock_set_rcvbuf() from the kernel: path=kernel" \
		"netns=$TR_INO pid=$kpid comm=sh path=kernel family=2 protocol=6 val=3000000 size=6000000 outcome=lock_avoided tcp_rmem1=425984" \
		"$got"
else
	fail "insmod $ksock"
fi

rcvfix_unload
if [[ -d $tr/events/rcvfix ]]; then
	fail "unloading removes the event" "$(ls "$tr/events/rcvfix")"
else
	ok "unloading removes the event"
fi
done_testing
