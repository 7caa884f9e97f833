#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs last, on the debug kernel only (make check-debug): the bug detectors
# were watching for the whole suite. Lockdep turns itself off at its first
# report and at any taint that makes it unreliable (a KASAN or KFENCE
# report, an oops, a forced unload), so a clean console proves something
# only if lockdep is still on at the end; KFENCE must have sampled
# allocations and found no bug; no detector tainted the kernel.
source "$RCVFIX_REPO/tests/guest/lib.sh"
[[ -n ${RCVFIX_DEBUG_KERNEL:-} ]] ||
	skip "not the debug kernel (make check-debug runs this)"

# The debug guest boots with no5lvl (vm/debug-kernel.sh): under 5-level
# paging an interrupt early in boot can make KASAN report every access.
check "the debug guest runs 4-level paging (no5lvl; docs/kernels.md)" \
	bash -c '! grep -qw la57 /proc/cpuinfo'
check "the kernel has lockdep (/proc/lockdep_stats)" test -r /proc/lockdep_stats
check_eq "lockdep is still on after the suite (debug_locks)" 1 \
	"$(awk -F: '/debug_locks:/ { gsub(/ /, "", $2); print $2 }' /proc/lockdep_stats)"
# "lock-classes:  1078 [max: 8192]" on 6.1
classes=$(awk -F: '/lock-classes:/ { split($2, f, " "); print f[1] }' /proc/lockdep_stats)
echo "# lockdep: ${classes:-?} lock classes seen"
check "lockdep saw the suite's locks (over 100 classes)" test "${classes:-0}" -gt 100

stats=/sys/kernel/debug/kfence/stats
check "KFENCE is on ($stats)" grep -q '^enabled: 1' "$stats"
allocs=$(awk -F: '/total allocations:/ { gsub(/ /, "", $2); print $2 }' "$stats")
echo "# KFENCE sampled ${allocs:-?} allocations during the suite"
check "KFENCE sampled allocations" test "${allocs:-0}" -gt 0
check_eq "KFENCE found no bug" 0 \
	"$(awk -F: '/total bugs:/ { gsub(/ /, "", $2); print $2 }' "$stats")"
# A pool full of long-lived objects samples nothing more (Debian's 255
# objects were full before the first test): KFENCE must still sample now.
kfence_stat() { awk -F: -v k="$1" '$1 == k { gsub(/ /, "", $2); print $2 }' "$stats"; }
before=$(kfence_stat "total allocations")
for _ in $(seq 20); do
	ls -R /proc/sys > /dev/null 2>&1
	sleep 0.2
done
after=$(kfence_stat "total allocations")
echo "# KFENCE: $(kfence_stat "currently allocated") objects in use, $(kfence_stat "skipped allocations (capacity)") samples skipped for want of room"
check "KFENCE still samples at the end of the suite ($before -> $after allocations in 4 s)" \
	test "${after:-0}" -gt "${before:-0}"

# Taint bits a detector, a crash or a forced unload sets: 3 (R, forced
# rmmod), 5 (B, bad page: KASAN, KFENCE), 7 (D, oops), 9 (W, warning),
# 14 (L, soft lockup).
taint=$(cat /proc/sys/kernel/tainted)
echo "# taint $taint"
for bit in 3 5 7 9 14; do
	check_eq "taint bit $bit is clear" 0 $(((taint >> bit) & 1))
done
