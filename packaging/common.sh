# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the packaging scripts (lint.sh, install.sh, deb.sh,
# check-package.sh): repository paths, the version read from its single
# source (module/version.h), messages, and kernel support checks that reuse
# the BUILD_EXCLUSIVE_* rules of dkms.conf. Sourced, not executable.
# shellcheck shell=bash

RCVFIX_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RCVFIX_BUILD=${RCVFIX_BUILD:-$RCVFIX_REPO/build}

msg() { echo "rcvfix: $*" >&2; }
die() { echo "rcvfix: error: $*" >&2; exit 1; }

# rcvfix_version: RCVFIX_VERSION of module/version.h, the one source of truth.
rcvfix_version() {
	local v
	v=$(sed -n 's/^#define[[:space:]]\+RCVFIX_VERSION[[:space:]]\+"\([^"]*\)".*/\1/p' \
		"$RCVFIX_REPO/module/version.h")
	[[ -n $v ]] || die "no '#define RCVFIX_VERSION \"x.y.z\"' in module/version.h"
	echo "$v"
}

# dkms_conf_get VAR: the value of VAR in dkms.conf (sourced like dkms does,
# in a subshell, so the kernel rules live in one place).
dkms_conf_get() {
	(
		set +u
		# shellcheck disable=SC1091
		source "$RCVFIX_REPO/dkms.conf" > /dev/null 2>&1
		eval "echo \"\${$1:-}\""
	)
}

# kver_unsupported KVER: prints why rcvfix cannot be built for KVER (nothing
# and status 1 when it can): no headers, too old, or a missing config option.
kver_unsupported() {
	local kver=$1 re conf opt missing=()
	local kdir=/lib/modules/$kver/build
	if [[ ! -f $kdir/Makefile ]]; then
		echo "no kernel headers at $kdir: install linux-headers-$kver"
		return 0
	fi
	re=$(dkms_conf_get BUILD_EXCLUSIVE_KERNEL)
	if [[ -n $re && ! $kver =~ $re ]]; then
		echo "kernel $kver is not one rcvfix supports: Linux 5.10, or 6.0 and newer (5.11-5.19 have code shapes no test boots)"
		return 0
	fi
	conf=$kdir/.config
	if [[ -f $conf ]]; then
		for opt in $(dkms_conf_get BUILD_EXCLUSIVE_CONFIG); do
			grep -qE "^$opt=[ym]" "$conf" || missing+=("$opt")
		done
	fi
	if ((${#missing[@]})); then
		echo "kernel $kver lacks ${missing[*]} (see dkms.conf)"
		return 0
	fi
	return 1
}

# kernels_with_headers: every kernel under /lib/modules with a build tree.
kernels_with_headers() {
	local d
	for d in /lib/modules/*/build; do
		[[ -f $d/Makefile ]] && basename "$(dirname "$d")"
	done
	return 0
}

# pkg_installed PACKAGE: is the Debian package installed (or half-installed)?
pkg_installed() {
	local st
	st=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2> /dev/null) || return 1
	[[ -n $st && $st != not-installed && $st != config-files ]]
}
