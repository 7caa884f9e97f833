#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The body of `make check-debug`: the test suite under the kernel's own bug
# detectors. For each debug kernel line (vm/debug-kernel.sh builds it, or
# takes it from its cache):
#   1. canary: a guest loads tests/kmod/rcvfix_test_detect.ko, whose
#      deliberate bugs each detector must report (else the run proves
#      nothing and fails);
#   2. control: a guest runs the socket fuzzer without rcvfix: what the
#      kernel itself reports under that load (must be nothing: a report
#      there is the kernel's, to be reported upstream, docs/kernels.md);
#   3. the whole suite (vm/check.sh), stress tests 82-87 included, which
#      fails on any detector report on the console, from rcvfix or not.
# Ends with "N passed, M failed[, K skipped]" over all of it, after the
# build, canary, control and suite times and the suite's report count.
# Usage: check-debug.sh [LINE...]   (6.1 by default; environment: vm.sh's)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR source=detector-reports.sh
source "$HARNESS/detector-reports.sh"
export LC_ALL=C

lines=("$@")
((${#lines[@]})) || lines=(6.1)
pass=0 fail=0 skip=0
times=()

ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }

# report_count CONSOLE NAME: how many reports of detector NAME
report_count() {
	detector_reports "$1" | awk -v n="$2" '$1 == n { c = $2 } END { print c + 0 }'
}

# canary KVER: every detector reports the bug meant for it.
canary() {
	local k=$1 console=$RCVFIX_BUILD/$1/logs/vm-console.log t0=$SECONDS
	local keep=$RCVFIX_BUILD/$1/logs/canary-console.log expect want name st=0
	echo "== debug kernel $k: canary (deliberate bugs, tests/kmod/rcvfix_test_detect.c)"
	# The bugs fail the guest's kernel-log check: that is the point.
	# shellcheck disable=SC2016 # expanded in the guest
	"$HARNESS/vm.sh" cmd "$k" \
		'insmod "$RCVFIX_KMOD/rcvfix_test_detect.ko" && rmmod rcvfix_test_detect' \
		> /dev/null 2>&1 || st=$?
	# the next guest overwrites vm-console.log: keep the canary's
	cp "$console" "$keep"
	console=$keep
	if ((st == 0)); then
		not_ok "canary on $k: the guest's kernel-log check passed a module full of bugs"
	else
		ok "canary on $k: the guest's kernel-log check fails the run (status $st)"
	fi
	# detector and how many reports its bugs make (oob and uaf: KASAN);
	# the last bug, the list's, is an oops (BUG_ON_DATA_CORRUPTION)
	for expect in lockdep:1 ODEBUG:1 atomic-sleep:1 RCU:1 KASAN:2 KFENCE:1 list:1; do
		name=${expect%:*} want=${expect#*:}
		if (($(report_count "$console" "$name") >= want)); then
			ok "canary on $k: $name reports the bug meant for it"
		else
			not_ok "canary on $k: $name reported $(report_count "$console" "$name") of the $want bugs meant for it (console: $keep)"
		fi
	done
	times+=("canary $((SECONDS - t0)) s")
}

# control KVER: the socket fuzzer without rcvfix, privileged and not.
control() {
	local k=$1 console=$RCVFIX_BUILD/$1/logs/vm-console.log t0=$SECONDS
	local out=$RCVFIX_BUILD/$1/logs/control.out st=0 reports
	echo "== debug kernel $k: control (the socket fuzzer, rcvfix never loaded)"
	# shellcheck disable=SC2016 # expanded in the guest
	"$HARNESS/vm.sh" cmd "$k" \
		'set -e; ip netns add ctl; ip -n ctl link set lo up
		ip netns exec ctl stress-sockfuzz --seconds 20 --seed 1
		ip netns exec ctl stress-sockfuzz --seconds 20 --seed 2 --unprivileged
		! grep -q "^rcvfix " /proc/modules' > "$out" 2>&1 || st=$?
	cp "$console" "$RCVFIX_BUILD/$k/logs/control-console.log"
	console=$RCVFIX_BUILD/$k/logs/control-console.log
	reports=$(detector_summary "$console")
	if ((st == 0)); then
		ok "control on $k: the fuzzer ran without rcvfix ($(grep -c '^summary' "$out") runs)"
	else
		not_ok "control on $k: the guest or the fuzzer failed (status $st, $out)"
	fi
	if [[ $reports == 0 ]]; then
		ok "control on $k: the kernel itself reports nothing under the fuzzer"
	else
		not_ok "control on $k: the kernel itself reports $reports without rcvfix (console: $console; report it upstream and in docs/kernels.md)"
	fi
	times+=("control $((SECONDS - t0)) s")
}

# suite KVER: vm/check.sh, its closing line added to ours.
suite() {
	local k=$1 out=$RCVFIX_BUILD/$1/logs/check-debug.out t0=$SECONDS last n
	echo "== debug kernel $k: the whole suite"
	"$HARNESS/check.sh" "$k" 2>&1 | tee "$out" || true
	last=$(tail -n 1 "$out")
	count_closing_line "$last" ||
		not_ok "suite on $k: no closing line from vm/check.sh ($out)"
	read_summary "$k" || true
	n=${sum_reports:-0}
	times+=("suite $((SECONDS - t0)) s, $n detector reports")
}

start=$SECONDS
for line in "${lines[@]}"; do
	t0=$SECONDS
	times=()
	kver=$("$HARNESS/debug-kernel.sh" prepare "$line") ||
		die "the $line debug kernel did not build (see above)"
	times+=("kernel $((SECONDS - t0)) s")
	MAKE=${MAKE:-make} "$HARNESS/kbuild.sh" "$kver" > /dev/null ||
		die "rcvfix or the test modules did not build for $kver"
	canary "$kver"
	control "$kver"
	suite "$kver"
	echo "== debug kernel $kver: ${times[*]/%/;}" | sed 's/;$//'
done
echo "== check-debug done in $((SECONDS - start)) s: ${lines[*]}"
echo "$pass passed, $fail failed$( ((skip == 0)) || echo ", $skip skipped")"
((fail == 0))
