# SPDX-License-Identifier: GPL-2.0
# Host-side helpers shared by the QEMU harness scripts: repository and build
# paths, messages, and the kernel-log patterns that fail a run.
# Sourced by vm.sh, check.sh, mkinitramfs.sh and deps.sh; not executable.
# Also owns how the guest reaches its root: guest_root_fs.

RCVFIX_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RCVFIX_BUILD=${RCVFIX_BUILD:-$RCVFIX_REPO/build}
HARNESS=$RCVFIX_REPO/vm

# shellcheck source=kernel-log.sh
source "$HARNESS/kernel-log.sh"

msg() { echo "rcvfix-harness: $*" >&2; }
die() { echo "rcvfix-harness: error: $*" >&2; exit 2; }

# read_summary KVER: the guest's build/KVER/logs/summary (written by vm.sh)
# into sum_passed, sum_failed, sum_skipped, sum_seconds and sum_emulator
# (the QEMU binary and its version); false if there is none (the guest did
# not finish).
read_summary() {
	local summary=$RCVFIX_BUILD/$1/logs/summary key n
	sum_passed=0 sum_failed=0 sum_skipped=0 sum_seconds=- sum_emulator=
	[[ -r $summary ]] || return 1
	while read -r key n; do
		case $key in
		passed) sum_passed=$n ;;
		failed) sum_failed=$n ;;
		skipped) sum_skipped=$n ;;
		seconds) sum_seconds=$n ;;
		emulator) sum_emulator=$n ;;
		esac
	done < "$summary"
}

# count_summary KVER: add a guest's summary to the caller's pass, fail and
# skip; a guest that did not finish counts as one failure.
count_summary() {
	if ! read_summary "$1"; then
		fail=$((fail + 1))
		echo "not ok - $1: the harness did not finish (see messages above)"
		return
	fi
	pass=$((pass + sum_passed))
	fail=$((fail + sum_failed))
	skip=$((skip + sum_skipped))
}

# guest_root_fs MODDIR: how a guest of the kernel whose modules are in MODDIR
# mounts the shared root: 9p when it has 9p, else virtiofs (Debian's cloud
# flavour builds no 9p); RCVFIX_ROOT_FS overrides.
guest_root_fs() {
	local f
	if [[ -n ${RCVFIX_ROOT_FS:-} ]]; then
		echo "$RCVFIX_ROOT_FS"
		return
	fi
	for f in 9p virtiofs; do
		if grep -Eqs "(^|/)$f\.ko[^:]*(:|\$)" "$1/modules.dep" "$1/modules.builtin"; then
			echo "$f"
			return
		fi
	done
	die "the kernel of $1 has neither 9p nor virtiofs: the guest cannot mount its root"
}
