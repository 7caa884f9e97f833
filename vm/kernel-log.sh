# SPDX-License-Identifier: GPL-2.0
# Kernel log lines that fail a test run, as extended regular expressions.
# Sourced both on the host (console scan, vm.sh) and in the guest (dmesg scan
# after each test, tests/guest/run.sh), so the two always agree.

# A kernel warning, oops, panic, stall, lockup or detector report.
RCVFIX_BAD_LOG_RE='BUG:|WARNING:|Oops|general protection|RCU stall|rcu_(sched|preempt|bh) (self-)?detected stall|rcu: INFO|detected stalls on CPU|soft lockup|hard LOCKUP|lockdep|possible (circular|recursive) locking|kmemleak|Kernel panic|UBSAN:|KASAN:|list_(add|del) corruption|refcount_t: '

# Known harmless lines that match the above (none known yet).
RCVFIX_BENIGN_LOG_RE='^$'
