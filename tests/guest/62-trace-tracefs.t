#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tracepoint rcvfix:rcvbuf_set through tracefs: the event and its fields
# exist, and a private trace instance records exactly the events of a known
# workload (namespace, pid, comm, path, family, protocol, value, size,
# outcome, tcp_rmem[1]); a disabled namespace and a disabled event record
# nothing.
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

rcvfix_unload
if [[ -d $tr/events/rcvfix ]]; then
	fail "unloading removes the event" "$(ls "$tr/events/rcvfix")"
else
	ok "unloading removes the event"
fi
done_testing
