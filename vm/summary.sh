# SPDX-License-Identifier: GPL-2.0
# The guest summary, build/KVER/logs/summary: what one guest run counted,
# written by vm.sh when the guest ends, read by check.sh and by
# packaging/check-package.sh. Its only owner: one "key value" per line.
# Also the closing line "N passed, M failed[, K skipped]" of a whole run,
# as vm/check-debug.sh adds vm/check.sh's to its own.
# Sourced, not executable; needs nothing else.
# shellcheck shell=bash

# write_summary FILE PASSED FAILED SKIPPED SECONDS EMULATOR [REPORTS]
# (REPORTS: the bug detectors' reports on the console, detector-reports.sh)
write_summary() {
	printf 'passed %d\nfailed %d\nskipped %d\nseconds %d\nemulator %s\nreports %d\n' \
		"$2" "$3" "$4" "$5" "$6" "${7:-0}" > "$1"
}

# read_summary KVER [BUILD [LOGS]]: BUILD/KVER/LOGS/summary (BUILD:
# $RCVFIX_BUILD, LOGS: logs; logs-secureboot for a Secure Boot guest)
# into sum_passed, sum_failed, sum_skipped, sum_seconds and sum_emulator
# (the QEMU binary and its version) and sum_reports; false if there is none
# (the guest did not finish).
# shellcheck disable=SC2034 # the sum_ variables are its results
read_summary() {
	local summary=${2:-$RCVFIX_BUILD}/$1/${3:-logs}/summary key n
	sum_passed=0 sum_failed=0 sum_skipped=0 sum_seconds=- sum_emulator=
	sum_reports=0
	[[ -r $summary ]] || return 1
	while read -r key n; do
		case $key in
		passed) sum_passed=$n ;;
		failed) sum_failed=$n ;;
		skipped) sum_skipped=$n ;;
		seconds) sum_seconds=$n ;;
		emulator) sum_emulator=$n ;;
		reports) sum_reports=$n ;;
		esac
	done < "$summary"
}

# count_summary KVER [LOGS]: add a guest's summary to the caller's pass,
# fail and skip; a guest that did not finish counts as one failure.
count_summary() {
	if ! read_summary "$1" "$RCVFIX_BUILD" "${2:-logs}"; then
		fail=$((fail + 1))
		echo "not ok - $1: the harness did not finish (see messages above)"
		return
	fi
	pass=$((pass + sum_passed))
	fail=$((fail + sum_failed))
	skip=$((skip + sum_skipped))
}

# count_closing_line LINE: add a run's closing line, "N passed, M failed"
# with an optional ", K skipped", to the caller's pass, fail and skip;
# false (nothing added) if LINE is not one.
count_closing_line() {
	local re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
	[[ $1 =~ $re ]] || return 1
	pass=$((pass + BASH_REMATCH[1]))
	fail=$((fail + BASH_REMATCH[2]))
	skip=$((skip + ${BASH_REMATCH[4]:-0}))
}
