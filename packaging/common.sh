# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the packaging scripts (lint.sh, install.sh, deb.sh,
# check-package.sh, release-debs.sh, check-upgrade.sh): repository paths, the
# version read from its single source (module/version.h), the releases
# (packaging/releases, NEWS.md), messages, and kernel support checks that reuse
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

# releases: the lines "VERSION COMMIT" of packaging/releases, oldest first.
releases() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$RCVFIX_REPO/packaging/releases"
}

# release_before VERSION: "VERSION COMMIT" of the newest release below
# VERSION (dpkg's order); nothing and status 1 when there is none.
release_before() {
	local v c best=
	while read -r v c; do
		dpkg --compare-versions "$v" lt "$1" || continue
		[[ -n $best ]] && dpkg --compare-versions "$v" le "${best%% *}" ||
			best="$v $c"
	done < <(releases)
	[[ -n $best ]] && echo "$best"
}

# release_tree_unchanged COMMIT: this tree ships what COMMIT shipped (the
# module, the tools, the packaging); true outside a git checkout, where
# nothing can be compared.
release_tree_unchanged() {
	git -C "$RCVFIX_REPO" rev-parse --git-dir > /dev/null 2>&1 || return 0
	git -C "$RCVFIX_REPO" diff --quiet "$1" -- module tools debian \
		dkms.conf packaging/man packaging/modprobe packaging/modules-load
}

# news_top: the version of NEWS.md's first "## VERSION" heading.
news_top() {
	sed -n 's/^## \([^ ]*\).*/\1/p' "$RCVFIX_REPO/NEWS.md" | head -n 1
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

# deb_elf_check DEB ARCH: every ELF file in DEB is a program for the Debian
# architecture ARCH, as file(1) reads it. Prints "N ELF files, all MACHINE"
# and returns 0, else prints each wrong file (or that there is no ELF file,
# or that ARCH is not one it knows) and returns 1.
deb_elf_check() {
	local deb=$1 arch=$2 want dir f desc n=0 bad=0
	case $arch in
	amd64) want='x86-64' ;;
	arm64) want='ARM aarch64' ;;
	*)
		echo "$deb: no ELF machine known for $arch (amd64, arm64)"
		return 1
		;;
	esac
	dir=$(mktemp -d "${TMPDIR:-/tmp}/rcvfix-deb-elf.XXXXXX") || return 1
	if ! dpkg-deb -x "$deb" "$dir"; then
		rm -rf "$dir"
		echo "$deb: dpkg-deb -x failed"
		return 1
	fi
	while IFS= read -r -d '' f; do
		desc=$(file -b "$f")
		[[ $desc == ELF* ]] || continue
		n=$((n + 1))
		if [[ $desc != *", $want,"* ]]; then
			echo "${f#"$dir"}: $desc: not $want, the machine of $arch"
			bad=1
		fi
	done < <(find "$dir" -type f -print0)
	rm -rf "$dir"
	if ((n == 0)); then
		echo "$deb: no ELF file in it"
		return 1
	fi
	((bad == 0)) && echo "$n ELF files, all $want"
	return $bad
}
