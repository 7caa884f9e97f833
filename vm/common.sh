# SPDX-License-Identifier: GPL-2.0
# Host-side helpers shared by the QEMU harness scripts: repository and build
# paths, messages, and the kernel-log patterns that fail a run.
# Sourced by vm.sh, check.sh, mkinitramfs.sh and deps.sh; not executable.

RCVFIX_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RCVFIX_BUILD=${RCVFIX_BUILD:-$RCVFIX_REPO/build}
HARNESS=$RCVFIX_REPO/vm

# shellcheck source=kernel-log.sh
source "$HARNESS/kernel-log.sh"

msg() { echo "rcvfix-harness: $*" >&2; }
die() { echo "rcvfix-harness: error: $*" >&2; exit 2; }
