#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# module/Kbuild builds only for the kernels whose code shapes the tests
# boot: 5.10 and 6.0 and newer. Parsed with each version's VERSION and
# PATCHLEVEL (no kernel tree: a kernel rcvfix accepts gets as far as
# "No targets"); dkms.conf's BUILD_EXCLUSIVE_KERNEL must agree. TAP.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kbuild=$repo/module/Kbuild
re=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$repo/dkms.conf")
n=0 failed=0

# kbuild_says VERSION PATCHLEVEL: Kbuild's error text, empty if accepted.
kbuild_says() {
	make -s -f "$kbuild" VERSION="$1" PATCHLEVEL="$2" \
		KERNELRELEASE="$1.$2.0-test" srctree=/nonexistent \
		objtree=/nonexistent src="$repo/module" 2>&1 |
		sed -n 's/.*\*\*\* \(rcvfix.*\)\.  Stop\./\1/p'
}

# expect KVER built|old|untested
expect() {
	local v=${1%%.*} p=${1#*.} said got dkms want_dkms
	said=$(kbuild_says "$v" "$p")
	case $said in
	"") got=built ;;
	*"is older"*) got=old ;;
	*"no test boots"*) got=untested ;;
	*) got="unexpected: $said" ;;
	esac
	[[ $1.0-test =~ $re ]] && dkms=built || dkms=skipped
	[[ $2 == built ]] && want_dkms=built || want_dkms=skipped
	n=$((n + 1))
	if [[ $got == "$2" && $dkms == "$want_dkms" ]]; then
		echo "ok $n - kbuild_floor: Linux $1: $got, dkms $dkms${said:+ ($said)}"
	else
		echo "not ok $n - kbuild_floor: Linux $1: want $2, Kbuild $got, dkms $dkms"
		failed=$((failed + 1))
	fi
}

expect 4.19 old
expect 5.9 old
expect 5.10 built
expect 5.11 untested
expect 5.15 untested
expect 5.19 untested
expect 6.0 built
expect 6.1 built
expect 6.12 built
expect 7.3 built
expect 10.0 built
echo "1..$n"
exit $((failed > 0))
