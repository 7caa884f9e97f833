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
on_exit "rm -f $data $data.old $TMPDIR/perf-$$.txt $TMPDIR/perf-rec-$$.txt"

# perf stat, system-wide while the workload runs: 4 events.
out=$(perf stat -a -x, -e rcvfix:rcvbuf_set -- bash -c \
	"source $RCVFIX_REPO/tests/guest/lib.sh; source $RCVFIX_REPO/tests/guest/trace-lib.sh
	 TR_NS=$TR_NS TR_OFF=$TR_OFF; trace_workload" 2>&1 > /dev/null)
n=$(awk -F, '$3 == "rcvfix:rcvbuf_set" { print $1 }' <<< "$out")
check_eq "perf stat counts the workload's events" 4 "$n"

# perf record, system-wide, then perf script: the events' text. perf
# starts with its events disabled (-D -1) and enables them when told on
# its control fifo, answering "ack" once they count: under emulation its
# start-up (reading every process's maps) can outlast any fixed wait.
ctl=$TMPDIR/perf-ctl-$$ ack=$TMPDIR/perf-ack-$$
mkfifo "$ctl" "$ack"
on_exit "rm -f $ctl $ack"
perf record -q -a -D -1 --control "fifo:$ctl,$ack" -e rcvfix:rcvbuf_set \
	-o "$data" -- sleep 120 > "$TMPDIR/perf-rec-$$.txt" 2>&1 &
rec=$!
exec {ctl_fd}<> "$ctl" {ack_fd}<> "$ack"
echo enable >&"$ctl_fd"
reply=
read -r -t 100 reply <&"$ack_fd" || true
check_eq "perf record enables its events on request" ack "$reply"
[[ $reply == ack ]] || sed 's/^/# perf record: /' "$TMPDIR/perf-rec-$$.txt"
trace_workload
echo disable >&"$ctl_fd"
read -r -t 30 reply <&"$ack_fd" || true
kill -INT "$rec"
wait "$rec"
exec {ctl_fd}>&- {ack_fd}>&-
perf --no-pager script -i "$data" -F trace > "$TMPDIR/perf-$$.txt" 2> /dev/null
trace_compare "perf script shows the workload's events" "$TMPDIR/perf-$$.txt"
done_testing
