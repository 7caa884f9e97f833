#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The body of `make check-secureboot`: for each kernel, the firmware
# variables of vm/secureboot.sh, then a guest booted from OVMF with Secure
# Boot on (vm.sh RCVFIX_SECURE_BOOT=1) runs tests/guest/76-secure-boot.t:
# unsigned and unknown-key modules refused, a module signed with the
# enrolled key loaded and fixing under lockdown. Guests one at a time.
# Ends with "N passed, M failed[, K skipped]" over all of them.
# Usage: check-secureboot.sh KVER...   (environment: vm.sh's)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

[[ $# -gt 0 ]] || die "usage: check-secureboot.sh KVER..."
pass=0 fail=0 skip=0 start=$SECONDS
for k; do
	echo "== Secure Boot guest $k"
	if ! "$HARNESS/secureboot.sh" prepare "$k" > /dev/null; then
		echo "not ok - secureboot: the firmware variables for $k (see above)"
		fail=$((fail + 1))
		continue
	fi
	RCVFIX_SECURE_BOOT=1 RCVFIX_TESTS=76 "$HARNESS/vm.sh" test "$k" || true
	count_summary "$k" logs-secureboot
done
echo "== check-secureboot done in $((SECONDS - start)) s: $*"
echo "$pass passed, $fail failed$( ((skip == 0)) || echo ", $skip skipped")"
((fail == 0))
