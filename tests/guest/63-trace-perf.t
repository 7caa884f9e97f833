#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tracepoint rcvfix:rcvbuf_set with perf (Debian's linux-perf from the
# root filesystem the guest shares): perf stat counts the events of a known
# workload, perf record + perf script show each one with its fields.
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/guest/trace-lib.sh"
# 62 (tracefs) is the tracepoint test of make check; perf and bpftrace
# cost about 25 s each per kernel under emulation.
check_all_only "perf and bpftrace read the same events as 62 (tracefs)"

command -v perf > /dev/null || skip "perf missing (apt-get install linux-perf)"
trace_setup
echo "# perf: $(perf --version) on $(uname -r)"
data=$TMPDIR/perf-$$.data
on_exit "rm -f $data $data.old $TMPDIR/perf-$$.txt"

# perf stat, system-wide while the workload runs: 4 events.
out=$(perf stat -a -x, -e rcvfix:rcvbuf_set -- bash -c \
	"source $RCVFIX_REPO/tests/guest/lib.sh; source $RCVFIX_REPO/tests/guest/trace-lib.sh
	 TR_NS=$TR_NS TR_OFF=$TR_OFF; trace_workload" 2>&1 > /dev/null)
n=$(awk -F, '$3 == "rcvfix:rcvbuf_set" { print $1 }' <<< "$out")
check_eq "perf stat counts the workload's events" 4 "$n"

# perf record, system-wide, then perf script: the events' text.
perf record -q -a -e rcvfix:rcvbuf_set -o "$data" -- sleep 30 > /dev/null 2>&1 &
rec=$!
# perf is ready once it has opened the event; give it time under TCG.
for ((i = 0; i < 100; i++)); do
	[[ -s $data ]] && break
	sleep 0.2
done
sleep 2
trace_workload
kill -INT "$rec"
wait "$rec"
perf --no-pager script -i "$data" -F trace > "$TMPDIR/perf-$$.txt" 2> /dev/null
trace_compare "perf script shows the workload's events" "$TMPDIR/perf-$$.txt"
done_testing
