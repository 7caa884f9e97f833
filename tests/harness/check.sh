#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The body of `make check` once everything is built: host unit tests, then the
# in-guest suite on each kernel in turn; prints the results and one closing
# line "N passed, M failed[, K skipped]" over all of them.
# Usage: check.sh KVER...   (environment: see vm.sh)
set -euo pipefail
# shellcheck source=common.sh
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

# kernel_origin KVER: the Debian package (and version) the kernel came from.
kernel_origin() {
	local k=$1 v line deb
	line=$("$HARNESS/chroot-kernel.sh" line "$k")
	if [[ -n $line ]]; then
		for deb in "$RCVFIX_REPO/build/$line/$k"/debs/*.deb; do
			[[ -f $deb ]] || continue
			deb=${deb##*/}
			echo "${deb%_*.deb} (build/$line chroot)" | sed 's/_/ /'
			return
		done
		echo "unpacked under build/$line"
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

for kver in "$@"; do
	summary=$RCVFIX_BUILD/$kver/logs/summary
	rm -f "$summary"
	"$HARNESS/vm.sh" test "$kver" || true
	if [[ -r $summary ]]; then
		while read -r key n; do
			case $key in
			passed) pass=$((pass + n)) ;;
			failed) fail=$((fail + n)) ;;
			skipped) skip=$((skip + n)) ;;
			esac
		done < "$summary"
	else
		fail=$((fail + 1))
		echo "not ok - $kver: the harness did not finish (see messages above)"
	fi
done

echo "== all done in $((SECONDS - start))s, kernels: $*"
echo "$pass passed, $fail failed$( ((skip == 0)) || echo ", $skip skipped")"
((fail == 0))
