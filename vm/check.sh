#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The body of `make check` once everything is built: host unit tests, then the
# in-guest suite on each kernel, guests side by side (one per host CPU);
# prints the results and one closing line "N passed, M failed[, K skipped]"
# over all of them.
# Usage: check.sh KVER...   (environment: see vm.sh; RCVFIX_JOBS=N guests
# at a time, default: the number of host CPUs)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

[[ $# -gt 0 ]] || die "usage: check.sh KVER..."

pass=0 fail=0 skip=0
start=$SECONDS

# Host unit tests: `make -C tests/unit check`, TAP result lines counted;
# our command-line variables (TESTS=...) are kept from that make.
unit_tests() {
	local line st=0 n_fail=0
	echo "== host unit tests (tests/unit)"
	while IFS= read -r line; do
		case $line in
		"rcvfix-unit-status "*) st=${line#rcvfix-unit-status }; continue ;;
		esac
		echo "$line"
		case $line in
		"not ok"|"not ok "*) fail=$((fail + 1)); n_fail=$((n_fail + 1)) ;;
		ok|"ok "*)
			if [[ ${line,,} =~ \#[[:space:]]*skip ]]; then
				skip=$((skip + 1))
			else
				pass=$((pass + 1))
			fi ;;
		esac
	done < <(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make --no-print-directory -C "$RCVFIX_REPO/tests/unit" \
		OUT="$RCVFIX_BUILD/unit" check 2>&1 ||
		echo "rcvfix-unit-status $?")
	if ((st != 0 && n_fail == 0)); then
		fail=$((fail + 1))
		echo "not ok - unit: make -C tests/unit check failed with status $st"
	fi
}

if [[ -f $RCVFIX_REPO/tests/unit/Makefile ]]; then
	unit_tests
else
	echo "== host unit tests: none yet (no tests/unit/Makefile)"
fi

# deb_origin NOTE FILE...: "package version (NOTE)" of the first FILE that
# exists; fails if none does.
deb_origin() {
	local note=$1 deb
	shift
	for deb; do
		[[ -f $deb ]] || continue
		deb=${deb##*/}
		echo "${deb%_*.deb} ($note)" | sed 's/_/ /'
		return 0
	done
	return 1
}

# kernel_origin KVER: the Debian package (and version) the kernel came from.
kernel_origin() {
	local k=$1 v line debs
	# a kernel built here (vm/debug-kernel.sh) says where from
	if [[ -r $RCVFIX_BUILD/$k/origin ]]; then
		cat "$RCVFIX_BUILD/$k/origin"
		return
	fi
	line=$("$HARNESS/chroot-kernel.sh" line "$k")
	debs=$RCVFIX_BUILD/$k/debs
	if [[ -n $line ]]; then
		debs=$RCVFIX_REPO/build/$line/$k/debs
		deb_origin "build/$line chroot" "$debs"/linux-{image,binary}-*.deb \
			"$debs"/*.deb || echo "unpacked under build/$line"
	elif deb_origin "unpacked under build/$k" "$debs/linux-image-${k}_"*.deb; then
		return
	elif v=$(dpkg-query -W -f='${Version}' "linux-image-$k" 2> /dev/null); then
		echo "linux-image-$k $v"
	else
		echo "not installed"
	fi
}

echo "== kernels under test (the newest ABI of each line, or its pin):"
for kver in "$@"; do
	echo "   $kver: $(kernel_origin "$kver")"
done

# Each guest is one TCG thread (vm.sh), so guests run side by side, one per
# host CPU (RCVFIX_JOBS=N to choose); each one's output is shown whole, in
# the order of the kernels, once it is done. RCVFIX_JOBS=1 streams it.
jobs=${RCVFIX_JOBS:-$(nproc)}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "RCVFIX_JOBS=$jobs: give a number of guests, 1 or more"
((jobs <= $#)) || jobs=$#
for kver in "$@"; do
	rm -f "$RCVFIX_BUILD/$kver/logs/summary"
done
if ((jobs == 1)); then
	for kver in "$@"; do
		"$HARNESS/vm.sh" test "$kver" || true
		count_summary "$kver"
	done
else
	declare -A out
	running=0
	echo "== $# guests, $jobs at a time; each one's results follow when it ends"
	for kver in "$@"; do
		if ((running >= jobs)); then
			wait -n || true
			running=$((running - 1))
		fi
		mkdir -p "$RCVFIX_BUILD/$kver/logs"
		out[$kver]=$RCVFIX_BUILD/$kver/logs/check.out
		echo "== guest $kver: started at $((SECONDS - start))s (output: ${out[$kver]})"
		"$HARNESS/vm.sh" test "$kver" > "${out[$kver]}" 2>&1 &
		running=$((running + 1))
	done
	wait || true
	for kver in "$@"; do
		cat "${out[$kver]}"
		count_summary "$kver"
	done
fi

# qemu_versions KVER...: the QEMU system emulators that booted KVER..., each
# with its version ("qemu-system-aarch64 7.2.22"), as their guests' summaries
# record them (vm/vm.sh).
qemu_versions() {
	local kver
	for kver in "$@"; do
		if read_summary "$kver" && [[ -n $sum_emulator ]]; then
			echo "$sum_emulator"
		fi
	done | sort -u | paste -s -d, - | sed 's/,/, /g'
}

# results_table KVER...: build/results/check.md, one header line (date,
# commit, machine, which tests) and one row per kernel, for docs/results/.
results_table() {
	local kver commit tests emulators
	commit=$(git -C "$RCVFIX_REPO" rev-parse --short HEAD 2> /dev/null || echo unknown)
	git -C "$RCVFIX_REPO" diff --quiet HEAD 2> /dev/null || commit+=" (with uncommitted changes)"
	tests=${RCVFIX_TESTS:-all}
	emulators=$(qemu_versions "$@")
	[[ -z ${RCVFIX_APPEND:-} ]] || tests+=", $RCVFIX_APPEND"
	mkdir -p "$RCVFIX_BUILD/results"
	{
		echo "Recorded $(date -u +%Y-%m-%dT%H:%MZ) by vm/check.sh (tests: $tests) at commit $commit on a $(nproc)-CPU $(uname -m) host, $emulators, TCG thread=single."
		echo
		echo "| kernel | passed | failed | skipped | guest time (s) |"
		echo "|---|---|---|---|---|"
		for kver in "$@"; do
			if read_summary "$kver"; then
				echo "| $kver | $sum_passed | $sum_failed | $sum_skipped | $sum_seconds |"
			else
				echo "| $kver | - | did not finish | - | - |"
			fi
		done
	} > "$RCVFIX_BUILD/results/check.md"
}
results_table "$@"

echo "== all done in $((SECONDS - start))s, kernels: $*"
echo "== results table: $RCVFIX_BUILD/results/check.md"
echo "$pass passed, $fail failed$( ((skip == 0)) || echo ", $skip skipped")"
((fail == 0))
