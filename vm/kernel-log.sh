# SPDX-License-Identifier: GPL-2.0
# Kernel log lines that fail a test run, as extended regular expressions.
# Sourced both on the host (console scan, vm.sh) and in the guest (dmesg scan
# after each test, tests/guest/run.sh), so the two always agree.

# A kernel warning, oops, panic, stall, lockup or detector report (the
# debug kernel's detectors, vm/detector-reports.sh, all print one of these).
RCVFIX_BAD_LOG_RE='BUG:|WARNING:|Oops|general protection|RCU stall|rcu_(sched|preempt|bh) (self-)?detected stall|rcu: INFO|detected stalls on CPU|soft lockup|hard LOCKUP|lockdep|possible (circular|recursive) locking|kmemleak|Kernel panic|UBSAN:|KASAN:|KFENCE:|ODEBUG:|kernel BUG at|DEBUG_LOCKS_WARN_ON|list_(add|del) (corruption|double add)|refcount_t: '

# Known harmless lines that match the above (none known yet).
RCVFIX_BENIGN_LOG_RE='^$'
