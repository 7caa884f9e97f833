#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm/summary.sh's count_closing_line: the closing line "N passed, M failed"
# with or without ", K skipped" adds all three counts (check-debug once
# read the skipped count from the wrong group and lost the run's total),
# and any other line adds nothing and is refused. TAP.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/summary.sh
source "$repo/vm/summary.sh"
n=0 failed=0

# expect LINE WANT: WANT is "P F S" after adding LINE to 10 1 2, or
# "refused 10 1 2" (not a closing line: refused, nothing added). In a
# subshell, so that a shell error in it (an arithmetic one aborts the
# function and returns nothing) fails the test instead of skipping it.
expect() {
	local got
	got=$(
		pass=10 fail=1 skip=2
		if count_closing_line "$1"; then
			echo "$pass $fail $skip"
		else
			echo "refused $pass $fail $skip"
		fi
	) 2>&1
	n=$((n + 1))
	if [[ $got == "$2" ]]; then
		echo "ok $n - summary: closing line '$1': $got"
	else
		echo "not ok $n - summary: closing line '$1': want $2, got '$got'"
		failed=$((failed + 1))
	fi
}

expect "1609 passed, 0 failed, 8 skipped" "1619 1 10"
expect "5 passed, 3 failed" "15 4 2"
expect "0 passed, 0 failed, 0 skipped" "10 1 2"
expect "5 passed, 3 failed, skipped" "refused 10 1 2"
expect "== guest x: 5 passed, 0 failed in 30s" "refused 10 1 2"
expect "" "refused 10 1 2"
echo "1..$n"
exit $((failed > 0))
