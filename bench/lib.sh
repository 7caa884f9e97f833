#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared by the in-guest parts of `make bench` (arming.sh, cost.sh, net.sh,
# rcvlowat.sh, segcost.sh): the check that the harness built what a part
# runs, its "target: ..." verdicts, and the "@R KEY VALUE" lines run.sh
# collects for bench/report.sh. A part keeps its figures in the associative
# array R and defines die() (or takes tools/lib/netpath.sh's).

# bench_need [-x] FILE...: each exists (-x: and is executable), or die
# naming the build that makes it.
bench_need() {
	local op=-e p
	if [[ ${1:-} == -x ]]; then
		op=-x
		shift
	fi
	for p; do
		test "$op" "$p" || die "$p missing: build it with make bench"
	done
}

# target NAME met|MISSED DETAIL: print the verdict, keep it as R[target.NAME].
target() {
	echo "target: $1: $2 ($3)"
	# shellcheck disable=SC2154 # R: the part's associative array
	R[target.$1]="$2: $3"
}

# bench_passes PART PASSES "SETUP..." "CELL...": the figures of pass 1,
# R[PART.SETUP.CELL.p1], as R[PART.SETUP.CELL.instr], and the largest
# difference any other pass has to it as R[PART.maxdiff] (and $maxdiff).
bench_passes() {
	local part=$1 passes=$2 s c p
	maxdiff=0
	for s in $3; do
		for c in $4; do
			R[$part.$s.$c.instr]=${R[$part.$s.$c.p1]}
			for ((p = 2; p <= passes; p++)); do
				maxdiff=$(awk -v a="${R[$part.$s.$c.p1]}" -v b="${R[$part.$s.$c.p$p]}" \
					-v m="$maxdiff" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d > m ? d : m) }')
			done
		done
	done
	R[$part.maxdiff]=$maxdiff
}

# bench_emit KERNEL_KEY DATE_KEY: record the kernel and the time under those
# keys, then print every figure of R as a sorted "@R KEY VALUE" line.
bench_emit() {
	local k
	R[$1]=$(uname -r)
	R[$2]=$(date -u '+%Y-%m-%d %H:%M UTC')
	for k in "${!R[@]}"; do
		printf '@R %s %s\n' "$k" "${R[$k]}"
	done | sort
}
