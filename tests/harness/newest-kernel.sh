#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's newest kernel (7.x, trixie-backports) for the harness: a Debian 13
# chroot made with debootstrap (its kbuild needs glibc 2.38 and gcc-14) with
# that kernel's headers, the kernel's packages unpacked for QEMU, and the
# module builds in the chroot. The host's own apt sources stay untouched.
#
# Usage: newest-kernel.sh prepare [KVER]  chroot, headers, unpacked kernel;
#                                         prints KVER (default: newest 7.x)
#        newest-kernel.sh kbuild KVER     build/KVER/module and kmod, in the chroot
#        newest-kernel.sh kver            the release prepare would use
# Everything lives in build/newest/ (cached; `rm -rf build/newest` resets):
#   chroot/          the Debian 13 chroot      KVER/root/  the unpacked kernel
#   kver             the release picked last   KVER/debs/  its packages
# and build/KVER/kernel.env tells vm.sh where the image and modules are.
# Environment: NEWEST_KVER (pin a release), NEWEST_UPDATE=1 (ask the archive
#   again for the newest), NEWEST_MIRROR (http://deb.debian.org/debian).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

# Used when the archive cannot be asked (tested on 2026-11-30).
default_kver=7.3.4+deb13-amd64
suite=trixie
mirror=${NEWEST_MIRROR:-http://deb.debian.org/debian}
# Resolved: the guest sees the host's / over 9p, where a symlinked build/newest
# (shared between work trees) would point outside the guest's root.
top=$(realpath -m "$RCVFIX_BUILD/newest")
chroot_dir=$top/chroot
chroot_pkgs=(gcc binutils make libc6-dev)

usage() { die "usage: newest-kernel.sh prepare [KVER] | kbuild KVER | kver"; }

# in_chroot CMD...: CMD inside the chroot with /proc and /dev, in a private
# mount namespace so that no mount outlives it. BIND=dir binds dir at the
# same path inside.
in_chroot() {
	unshare -m --propagation private -- bash -euc '
		c=$1; shift
		mount -t proc proc "$c/proc"
		mount --rbind /dev "$c/dev"
		if [[ -n ${BIND:-} ]]; then
			mkdir -p "$c$BIND"
			mount --bind "$BIND" "$c$BIND"
		fi
		exec chroot "$c" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
	' in_chroot "$chroot_dir" "$@"
}

make_chroot() {
	[[ -f $chroot_dir/.rcvfix-debootstrap ]] && return 0
	command -v debootstrap > /dev/null ||
		"$HARNESS/deps.sh" debootstrap
	msg "debootstrap $suite into $chroot_dir (about a minute)"
	rm -rf "$chroot_dir.tmp"
	mkdir -p "$top"
	debootstrap --variant=minbase "$suite" "$chroot_dir.tmp" "$mirror" \
		> "$top/debootstrap.log" 2>&1 ||
		die "debootstrap failed, see $top/debootstrap.log"
	# The newer suites go into the chroot only, never the host.
	echo "deb $mirror $suite-backports main" \
		> "$chroot_dir.tmp/etc/apt/sources.list.d/$suite-backports.list"
	rm -rf "$chroot_dir"
	mv "$chroot_dir.tmp" "$chroot_dir"
	touch "$chroot_dir/.rcvfix-debootstrap"
	rm -f "$top/.apt-updated"
}

apt_update() {	# at most hourly unless forced
	if [[ -n ${1:-} || -z $(find "$top/.apt-updated" -mmin -60 2> /dev/null) ]]; then
		cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf" 2> /dev/null || true
		in_chroot apt-get -q update < /dev/null > "$top/apt-update.log" 2>&1 ||
			die "apt-get update in the chroot failed, see $top/apt-update.log"
		touch "$top/.apt-updated"
	fi
}

# newest_kver: the newest linux-headers-7.*-amd64 the chroot's sources know.
newest_kver() {
	in_chroot apt-cache search --names-only \
		'^linux-headers-[0-9]+\.[0-9.]+\+deb13-amd64$' 2> /dev/null |
		sed -n 's/^linux-headers-\(7\.[^ ]*\) - .*/\1/p' | sort -V | tail -n 1
}

pick_kver() {	# pick_kver [KVER]: echo the release to use
	local k=${1:-${NEWEST_KVER:-}}
	if [[ -z $k && -z ${NEWEST_UPDATE:-} && -s $top/kver ]]; then
		k=$(< "$top/kver")
	fi
	if [[ -z $k ]]; then
		make_chroot
		apt_update "${NEWEST_UPDATE:-}"
		k=$(newest_kver)
		[[ -n $k ]] || {
			msg "no linux-headers-7.* in $suite-backports: using $default_kver"
			k=$default_kver
		}
	fi
	echo "$k"
}

has_pkg() {	# has_pkg PKG: installed in the chroot
	in_chroot dpkg-query -W -f='${db:Status-Status}' "$1" 2> /dev/null |
		grep -qx installed
}

install_headers() {	# install_headers KVER
	local p missing=()
	for p in "${chroot_pkgs[@]}" "linux-headers-$1"; do
		has_pkg "$p" || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	apt_update
	msg "installing in the chroot: ${missing[*]}"
	in_chroot apt-get -q install -y --no-install-recommends "${missing[@]}" \
		< /dev/null > "$top/apt-install.log" 2>&1 ||
		die "apt-get install ${missing[*]} in the chroot failed, see $top/apt-install.log"
}

# unpack_kernel KVER: the kernel image and modules into build/newest/KVER/root
unpack_kernel() {
	local k=$1 d=$top/$1 p pkgs=() deb vmlinuz
	[[ -f $d/root/.rcvfix-unpacked ]] && return 0
	apt_update
	# The 7.x packages split the kernel: linux-binary-* (the image;
	# linux-image-* is then a metapackage), linux-modules-*, and
	# linux-base-* (modules.builtin, modules.order).
	for p in "linux-base-$k" "linux-binary-$k" "linux-modules-$k"; do
		if in_chroot apt-cache show "$p" > /dev/null 2>&1; then
			pkgs+=("$p")
		fi
	done
	((${#pkgs[@]} > 0)) || pkgs=("linux-image-$k")
	rm -rf "$d/root"
	mkdir -p "$d/debs" "$d/root"
	for p in "${pkgs[@]}"; do
		compgen -G "$d/debs/${p}_*.deb" > /dev/null && continue
		msg "downloading $p"
		BIND=$d/debs in_chroot bash -c 'cd "$1" && apt-get -q download "$2"' \
			dl "$d/debs" "$p" < /dev/null >> "$d/download.log" 2>&1 ||
			die "apt-get download $p failed, see $d/download.log"
	done
	for deb in "$d"/debs/*.deb; do
		dpkg-deb -x "$deb" "$d/root"
	done
	vmlinuz=$(find "$d/root" -name "vmlinuz*" -type f | head -n 1)
	[[ -n $vmlinuz && -d $d/root/usr/lib/modules/$k ]] ||
		die "no vmlinuz or modules of $k in ${pkgs[*]}: see $d/root"
	depmod -b "$d/root/usr" "$k" ||
		die "depmod -b $d/root/usr $k failed"
	printf '%s\n' "$vmlinuz" > "$d/root/.rcvfix-unpacked"
}

write_kernel_env() {	# write_kernel_env KVER: where vm.sh finds it
	local k=$1 d=$top/$1
	mkdir -p "$RCVFIX_BUILD/$k"
	printf '%s=%q\n' RCVFIX_VMLINUZ "$(< "$d/root/.rcvfix-unpacked")" \
		RCVFIX_MODDIR "$d/root/usr/lib/modules/$k" \
		> "$RCVFIX_BUILD/$k/kernel.env"
}

prepare() {	# prepare [KVER]
	local k
	mkdir -p "$top"
	exec 7> "$top/.lock"
	flock 7
	make_chroot
	k=$(pick_kver "${1:-}")
	install_headers "$k"
	unpack_kernel "$k"
	write_kernel_env "$k"
	# Only the automatic choice becomes the cached default.
	[[ -n ${1:-} ]] || echo "$k" > "$top/kver"
	exec 7>&-
	echo "$k"
}

kbuild() {	# kbuild KVER: like kbuild.sh, with the chroot's make and headers
	local k=$1 out=$RCVFIX_BUILD/$1 dirs d
	local kdir=/usr/src/linux-headers-$1
	if [[ -f $chroot_dir$kdir/Makefile && -f $top/$k/root/.rcvfix-unpacked ]]; then
		write_kernel_env "$k"
	else
		prepare "$k" > /dev/null
	fi
	[[ -f $RCVFIX_REPO/module/Kbuild ]] || die "module/Kbuild missing"
	mkdir -p "$out"
	exec 9> "$out/.lock"
	if ! flock -n 9; then
		msg "waiting for $out/.lock (a build or a guest of $k is running)"
		flock 9
	fi
	"$HARNESS/sync-tree.sh" "$RCVFIX_REPO/module" "$out/module"
	mkdir -p "$out/kmod"
	dirs=("$out/module")
	if [[ -f $RCVFIX_REPO/tests/kmod/Kbuild ]]; then
		"$HARNESS/sync-tree.sh" "$RCVFIX_REPO/tests/kmod" "$out/kmod"
		dirs+=("$out/kmod")
	fi
	for d in "${dirs[@]}"; do
		echo "make -C $kdir M=$d modules   (in $chroot_dir)"
		BIND=$out in_chroot make -C "$kdir" M="$d" modules
	done
}

[[ $# -ge 1 ]] || usage
case $1 in
prepare) [[ $# -le 2 ]] || usage; prepare "${2:-}" ;;
kbuild)	[[ $# -eq 2 ]] || usage; kbuild "$2" ;;
kver)	[[ $# -eq 1 ]] || usage; pick_kver ;;
*)	usage ;;
esac
