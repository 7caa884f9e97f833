# SPDX-License-Identifier: GPL-2.0
# Host-side helpers shared by the QEMU harness scripts: repository and build
# paths, messages, and the kernel-log patterns that fail a run.
# Sourced by vm.sh, check.sh, mkinitramfs.sh and deps.sh; not executable.
# Also owns how the guest reaches its root: guest_root_fs.

RCVFIX_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RCVFIX_BUILD=${RCVFIX_BUILD:-$RCVFIX_REPO/build}
HARNESS=$RCVFIX_REPO/vm

# shellcheck source-path=SCRIPTDIR source=kernel-log.sh
source "$HARNESS/kernel-log.sh"
# shellcheck source-path=SCRIPTDIR source=summary.sh
source "$HARNESS/summary.sh"

msg() { echo "rcvfix-harness: $*" >&2; }
die() { echo "rcvfix-harness: error: $*" >&2; exit 2; }

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
