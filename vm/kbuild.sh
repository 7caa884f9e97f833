#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds rcvfix.ko and the test modules (tests/kmod) for one kernel, each in
# a copy under build/KVER/ so that kernels never share objects. Holds
# build/KVER/.lock while building: a guest run of that kernel holds it shared.
# Usage: kbuild.sh KVER   (MAKE in the environment: the make to run;
#   RCVFIX_KBUILD_ROOT: the chroot the headers are in, chroot-kernel.sh;
#   a kernel built here names its build tree as RCVFIX_KDIR in
#   build/KVER/kernel.env, vm/debug-kernel.sh)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ $# -eq 1 ]] || die "usage: kbuild.sh KVER"
kver=$1
out=$RCVFIX_BUILD/$kver
RCVFIX_KDIR=
# shellcheck source=/dev/null
[[ ! -r $out/kernel.env ]] || source "$out/kernel.env"
kdir=${RCVFIX_KDIR:-/usr/src/linux-headers-$kver}
make=${MAKE:-make}

[[ -f ${RCVFIX_KBUILD_ROOT:-}$kdir/Makefile ]] ||
	die "$kdir missing: install linux-headers-$kver (make deps KVERS=$kver)"
[[ -f $RCVFIX_REPO/module/Kbuild ]] || die "module/Kbuild missing"

mkdir -p "$out"
exec 9> "$out/.lock"
if ! flock -n 9; then
	msg "waiting for $out/.lock (a build or a guest of $kver is running)"
	flock 9
fi

"$HARNESS/sync-tree.sh" "$RCVFIX_REPO/module" "$out/module"
$make -C "$kdir" M="$out/module" modules
mkdir -p "$out/kmod"
if [[ -f $RCVFIX_REPO/tests/kmod/Kbuild ]]; then
	"$HARNESS/sync-tree.sh" "$RCVFIX_REPO/tests/kmod" "$out/kmod"
	$make -C "$kdir" M="$out/kmod" modules
fi
