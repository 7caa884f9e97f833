#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tracepoint rcvfix:rcvbuf_set with bpftrace (Debian 12: 0.17): a one-line
# program reads every field of the events of a known workload by name.
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/guest/trace-lib.sh"
# 62 (tracefs) is the tracepoint test of make check; perf and bpftrace
# cost about 25 s each per kernel under emulation.
check_all_only "perf and bpftrace read the same events as 62 (tracefs)"

command -v bpftrace > /dev/null || skip "bpftrace missing (apt-get install bpftrace)"
trace_setup
echo "# $(bpftrace --version) on $(uname -r)"
out=$TMPDIR/bpftrace-$$.txt
on_exit "rm -f $out"

# The program prints the event's text from its fields; outcome and path
# as numbers mapped back here (bpftrace has no __print_symbolic).
# BEGIN runs once every probe is attached: "ready" means events count.
# The program exits by itself after the workload's 4 events, and a
# timeout bounds it: stopping it with SIGINT once hung until the test's
# 300 s limit on a loaded host (6.1; the cause was not found).
prog='BEGIN { printf("ready\n"); }
tracepoint:rcvfix:rcvbuf_set /args->netns_ino == '$TR_INO'/ {
	printf("netns=%u pid=%d comm=%s path=%d family=%u protocol=%u val=%d size=%d outcome=%d tcp_rmem1=%d\n",
	       args->netns_ino, args->pid, args->comm, args->path, args->family,
	       args->protocol, args->val, args->size, args->outcome, args->tcp_rmem1);
	@n += 1;
	if (@n == 4) { exit(); }
}'
# Before 5.11 modules have no BTF (/sys/kernel/btf/rcvfix): bpftrace then
# knows no type of the event's format file and fails with "unknown type
# name 'pid_t'" (seen on 5.10 after 319 s); the program defines them.
if [[ ! -e /sys/kernel/btf/rcvfix ]]; then
	prog=$'#define pid_t int\n#define u16 unsigned short\n'$prog
	echo "# no BTF for rcvfix on $(uname -r): the program defines pid_t and u16"
fi
timeout -s KILL 240 bpftrace -B none -e "$prog" > "$out" 2>&1 &
bt=$!
if ! wait_for "$out" "^ready|ERROR" 120 || ! grep -q '^ready' "$out"; then
	fail "bpftrace attaches to rcvfix:rcvbuf_set" "$(cat "$out")"
	kill "$bt"
	done_testing
fi
ok "bpftrace attaches to rcvfix:rcvbuf_set"
trace_workload
rc=0
wait "$bt" || rc=$?
check_eq "bpftrace exits by itself after the 4 events" 0 "$rc"
sed -i -e 's/ path=0 / path=setsockopt /' -e 's/ outcome=1 / outcome=lock_set /' \
	-e 's/ outcome=2 / outcome=lock_avoided /' -e 's/ outcome=3 / outcome=lock_kept /' "$out"
trace_compare "bpftrace reads the workload's events field by field" "$out"
done_testing
