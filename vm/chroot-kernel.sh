#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian kernels the host cannot build for, in a chroot of their own Debian
# release made with debootstrap: each line below names its suite, where its
# newer ABIs are published, and a tested fallback pin. The chroot holds the
# toolchain and the kernel's headers; the kernel's packages are unpacked for
# QEMU; the module builds in the chroot. The host's apt sources stay untouched.
#   newest    Debian 13 (trixie + backports), 7.x: kbuild needs glibc 2.38, gcc-14
#   debian11  Debian 11 (bullseye + bullseye-security), 5.10: kbuild wants gcc-10
#
# Usage: chroot-kernel.sh prepare LINE [FLAVOUR]  newest ABI of LINE (asks the
#                                   archive once, then cached); prints the KVER
#        chroot-kernel.sh prepare KVER       that release (line from its name)
#        chroot-kernel.sh kbuild KVER        build/KVER/module and kmod, in the chroot
#        chroot-kernel.sh make KVER ARGS...  make ARGS in that chroot (for kbuild.sh)
#        chroot-kernel.sh kver LINE [FLAVOUR]   the release prepare would use
#        chroot-kernel.sh known LINE [FLAVOUR]  the release picked last, else
#                                            the pin (no network)
#        chroot-kernel.sh line KVER          the line of KVER, or nothing
#        chroot-kernel.sh root KVER          the chroot that builds KVER
#        chroot-kernel.sh dkms KVER          dkms in the chroot builds rcvfix
#                                            for KVER, skips an older kernel
#        chroot-kernel.sh tool LINE PKG CMD...  CMD in LINE's chroot, with PKG
#                                            installed there (a tool the
#                                            host's release lacks)
# FLAVOUR: amd64 (default) or rt-amd64; on the newest line also arm64, for
# vm/arm64.sh: the arm64 kernel, its headers unpacked into the chroot beside
# the chroot's amd64 linux-kbuild of the same version, and the aarch64 cross
# compiler (gcc-14) there; arm64.sh cross-builds and boots it. Everything
# lives in build/LINE/
# (cached; `rm -rf build/LINE` resets):
#   chroot/       the chroot                 KVER/root/  the unpacked kernel
#   kver[.FLAVOUR]  the release picked last  KVER/debs/  its packages
# (a choice is kept for a day, then the archive is asked again).
# and build/KVER/kernel.env tells vm.sh where the image and modules are.
# Environment: CHROOT_KVER (pin a release for prepare LINE), CHROOT_UPDATE=1
#   (ask the archive again), DEBIAN_MIRROR (http://deb.debian.org/debian),
#   DEBIAN_SECURITY_MIRROR (http://deb.debian.org/debian-security).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

mirror=${DEBIAN_MIRROR:-${NEWEST_MIRROR:-http://deb.debian.org/debian}}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
chroot_pkgs=(gcc binutils make libc6-dev)
# The cross toolchain's prefix for a foreign kernel (foreign()).
declare -A cross_triplet=([arm64]=aarch64-linux-gnu)
# How many of the newest ABIs to try when the archive lists an ABI whose
# packages it no longer (or not yet) serves.
max_tries=4

usage() {
	die "usage: chroot-kernel.sh prepare LINE [FLAVOUR] | prepare KVER | kbuild KVER | kver LINE [FLAVOUR] | known LINE [FLAVOUR] | line KVER | root KVER | dkms KVER | tool LINE PKG CMD..."
}

line_of() {	# line_of KVER: the line that builds KVER, or nothing
	case $1 in
	*+deb13-*) echo newest ;;
	5.10.0-*) echo debian11 ;;
	esac
}

# use_line LINE: the settings of one line. abi_re matches a headers
# package's release, FLAVOUR standing for the flavour; pins were tested on
# 2026-11-30 (5.10.0-46-rt-amd64 was listed but not served that day).
use_line() {
	line=$1
	case $line in
	newest)
		suite=trixie
		sources=("deb $mirror $suite-backports main")
		abi_re='7\.[0-9.]+\+deb13-FLAVOUR'
		declare -gA pin=([amd64]=7.3.4+deb13-amd64
			[rt-amd64]=7.3.4+deb13-rt-amd64 [arm64]=7.3.4+deb13-arm64) ;;
	debian11)
		suite=bullseye
		sources=("deb $security $suite-security main")
		abi_re='5\.10\.0-[0-9]+-FLAVOUR'
		declare -gA pin=([amd64]=5.10.0-46-amd64
			[rt-amd64]=5.10.0-43-rt-amd64) ;;
	*) die "unknown line '$1' (newest, debian11)" ;;
	esac
	# Resolved: the guest sees the host's / over 9p, where a symlinked
	# build/LINE (shared between work trees) would point outside its root.
	# Always under the repository's build/, also when RCVFIX_BUILD is
	# another folder (bench): one chroot per line.
	top=$(realpath -m "$RCVFIX_REPO/build/$line")
	chroot_dir=$top/chroot
}

flavour_of() {	# flavour_of KVER: amd64, rt-amd64 or arm64
	case $1 in
	*-rt-amd64) echo rt-amd64 ;;
	*-arm64) echo arm64 ;;
	*) echo amd64 ;;
	esac
}

# foreign KVER: the dpkg architecture of a kernel the chroot (amd64) only
# cross-builds for, or nothing.
foreign() {
	case $1 in
	*-arm64) echo arm64 ;;
	esac
}

kver_cache() {	# kver_cache FLAVOUR: the file of the release picked last
	if [[ $1 == amd64 ]]; then echo "$top/kver"; else echo "$top/kver.$1"; fi
}

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
	local s
	[[ -f $chroot_dir/.rcvfix-debootstrap ]] && return 0
	command -v debootstrap > /dev/null ||
		"$HARNESS/deps.sh" debootstrap
	msg "debootstrap $suite into $chroot_dir (about a minute)"
	rm -rf "$chroot_dir.tmp"
	mkdir -p "$top"
	debootstrap --variant=minbase "$suite" "$chroot_dir.tmp" "$mirror" \
		> "$top/debootstrap.log" 2>&1 ||
		die "debootstrap failed, see $top/debootstrap.log"
	# The other suites go into the chroot only, never the host.
	for s in "${sources[@]}"; do
		echo "$s"
	done > "$chroot_dir.tmp/etc/apt/sources.list.d/rcvfix.list"
	rm -rf "$chroot_dir"
	mv "$chroot_dir.tmp" "$chroot_dir"
	touch "$chroot_dir/.rcvfix-debootstrap"
	rm -f "$top/.apt-updated"
}

# add_arch ARCH: dpkg in the chroot knows ARCH's packages (for their lists).
add_arch() {
	in_chroot dpkg --print-foreign-architectures | grep -qx "$1" && return 0
	msg "adding the $1 architecture to the chroot's dpkg"
	in_chroot dpkg --add-architecture "$1"
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

# candidates FLAVOUR: the releases of that flavour the chroot's sources
# list headers for, newest first.
candidates() {
	local re=${abi_re//FLAVOUR/$1}
	in_chroot apt-cache pkgnames linux-headers- 2> /dev/null |
		sed -En "s/^linux-headers-($re)\$/\\1/p" | sort -rV
}

has_pkg() {	# has_pkg PKG: installed in the chroot
	in_chroot dpkg-query -W -f='${db:Status-Status}' "$1" 2> /dev/null |
		grep -qx installed
}

install_headers() {	# install_headers KVER
	local p missing=() want=("${chroot_pkgs[@]}" "linux-headers-$1") deb v dep
	if [[ -n $(foreign "$1") ]]; then
		# The foreign headers' own kbuild runs no programs here: the
		# chroot's amd64 linux-kbuild of the same version stands in
		# (the headers reach it as /usr/lib/linux-kbuild-X), with the
		# -common half and the cross toolchain from the chroot's apt.
		deb=$(compgen -G "$top/$1/debs/linux-headers-${1}_*.deb" | head -n 1)
		[[ -n $deb ]] || die "no linux-headers-$1 package in $top/$1/debs: rm -rf $top/$1 and prepare again"
		v=$(dpkg-deb -f "$deb" Version)
		want=("${chroot_pkgs[@]}" "gcc-${cross_triplet[$(foreign "$1")]}"
			"binutils-${cross_triplet[$(foreign "$1")]}")
		for dep in $(dpkg-deb -f "$deb" Depends |
			grep -oE 'linux-(headers-[^ ,]*-common[^ ,]*|kbuild-[^ ,]*)'); do
			in_chroot dpkg-query -W -f='${Version}' "$dep" 2> /dev/null |
				grep -qxF "$v" || missing+=("$dep=$v")
		done
	fi
	for p in "${want[@]}"; do
		has_pkg "$p" || missing+=("$p")
	done
	if [[ -n $(foreign "$1") && ! -f $chroot_dir/usr/src/linux-headers-$1/Makefile ]]; then
		msg "unpacking linux-headers-$1 into the chroot"
		dpkg-deb -x "$deb" "$chroot_dir" ||
			die "dpkg-deb -x $deb $chroot_dir failed: rm -rf $top/$1 and prepare again"
	fi
	((${#missing[@]} == 0)) && return 0
	apt_update
	msg "installing in the chroot: ${missing[*]}"
	in_chroot apt-get -q install -y --no-install-recommends "${missing[@]}" \
		< /dev/null > "$top/apt-install.log" 2>&1 ||
		die "apt-get install ${missing[*]} in the chroot failed, see $top/apt-install.log"
}

# kernel_pkgs KVER: the packages that hold the image and modules. 7.x
# splits them: linux-binary-* (the image; linux-image-* is then a
# metapackage), linux-modules-*, linux-base-* (modules.builtin, .order).
# Before, linux-image-* holds both; its -unsigned twin is preferred.
# A foreign kernel's packages carry their architecture (name:arm64), and
# its headers package is fetched with them (install_headers unpacks it).
kernel_pkgs() {
	local k=$1 p pkgs=() a
	a=$(foreign "$k")
	for p in "linux-base-$k" "linux-binary-$k" "linux-modules-$k" \
		${a:+"linux-headers-$k"}; do
		if in_chroot apt-cache show "$p${a:+:$a}" > /dev/null 2>&1; then
			pkgs+=("$p${a:+:$a}")
		fi
	done
	if ((${#pkgs[@]} == 0)); then
		if in_chroot apt-cache show "linux-image-$k-unsigned" > /dev/null 2>&1; then
			pkgs=("linux-image-$k-unsigned")
		else
			pkgs=("linux-image-$k")
		fi
	fi
	echo "${pkgs[@]}"
}

# fetch_kernel KVER: its packages into build/LINE/KVER/debs; 1 if the
# archive does not serve them.
fetch_kernel() {
	local k=$1 d=$top/$1 p
	[[ -f $d/debs/.complete ]] && return 0
	apt_update
	mkdir -p "$d/debs"
	for p in $(kernel_pkgs "$k"); do
		compgen -G "$d/debs/${p%:*}_*.deb" > /dev/null && continue
		msg "downloading $p"
		if ! BIND=$d/debs in_chroot bash -c 'cd "$1" && apt-get -q download "$2"' \
			dl "$d/debs" "$p" < /dev/null > "$top/download.log" 2>&1; then
			msg "apt-get download $p failed (see $top/download.log)"
			[[ -d $d/root ]] || rm -rf "$d"
			return 1
		fi
	done
	touch "$d/debs/.complete"
}

# unpack_kernel KVER: the kernel image and modules into build/LINE/KVER/root
unpack_kernel() {
	local k=$1 d=$top/$1 deb vmlinuz moddir
	[[ -f $d/root/.rcvfix-unpacked ]] && return 0
	rm -rf "$d/root"
	mkdir -p "$d/root"
	for deb in "$d"/debs/*.deb; do
		# the headers of a foreign kernel go into the chroot
		[[ $deb == */linux-headers-* ]] && continue
		dpkg-deb -x "$deb" "$d/root"
	done
	vmlinuz=$(find "$d/root" -name "vmlinuz*" -type f | head -n 1)
	for moddir in "$d/root/usr/lib/modules/$k" "$d/root/lib/modules/$k"; do
		[[ -d $moddir ]] && break
	done
	[[ -n $vmlinuz && -d $moddir ]] ||
		die "no vmlinuz or modules of $k in $d/debs: see $d/root"
	command -v depmod > /dev/null || "$HARNESS/deps.sh" kmod
	depmod -b "${moddir%/lib/modules/*}" "$k" ||
		die "depmod -b ${moddir%/lib/modules/*} $k failed"
	printf '%s\n' "$vmlinuz" "$moddir" > "$d/root/.rcvfix-unpacked"
}

write_kernel_env() {	# write_kernel_env KVER: where vm.sh finds it
	local k=$1 vmlinuz moddir
	{ read -r vmlinuz; read -r moddir || true; } < "$top/$k/root/.rcvfix-unpacked"
	# unpacked by an older version of this script
	[[ -n $moddir ]] || moddir=$top/$k/root/usr/lib/modules/$k
	mkdir -p "$RCVFIX_BUILD/$k"
	printf '%s=%q\n' RCVFIX_VMLINUZ "$vmlinuz" RCVFIX_MODDIR "$moddir" \
		> "$RCVFIX_BUILD/$k/kernel.env"
}

# pick_kver FLAVOUR: the release to use: CHROOT_KVER, else the cached
# choice, else the newest one the archive serves, else the pin. Fetches it.
pick_kver() {
	local f=$1 k cache
	cache=$(kver_cache "$f")
	k=${CHROOT_KVER:-${NEWEST_KVER:-}}
	# A choice less than a day old stands; then the archive is asked again.
	if [[ -z $k && -z ${CHROOT_UPDATE:-${NEWEST_UPDATE:-}} &&
		-n $(find "$cache" -mmin -1440 -size +0 2> /dev/null) ]]; then
		k=$(< "$cache")
	fi
	if [[ -n $k ]]; then
		fetch_kernel "$k" || die "the archive does not serve the packages of $k"
		echo "$k"
		return
	fi
	apt_update "${CHROOT_UPDATE:-${NEWEST_UPDATE:-}}"
	for k in $(candidates "$f" | head -n "$max_tries"); do
		if fetch_kernel "$k"; then
			echo "$k" > "$cache"
			echo "$k"
			return
		fi
	done
	k=${pin[$f]}
	msg "no newer $line $f kernel served by the archive: using the pin $k"
	fetch_kernel "$k" || die "the archive does not serve the packages of $k either"
	echo "$k"
}

lock_line() {
	mkdir -p "$top"
	exec 7> "$top/.lock"
	flock 7
}

# prepare_kver KVER: chroot, headers, unpacked kernel, kernel.env
prepare_kver() {
	install_headers "$1"
	unpack_kernel "$1"
	write_kernel_env "$1"
}

prepare() {	# prepare LINE [FLAVOUR] | prepare KVER
	local k f
	if [[ -n $(line_of "$1") ]]; then
		k=$1
		use_line "$(line_of "$k")"
		lock_line
		make_chroot
		[[ -z $(foreign "$k") ]] || add_arch "$(foreign "$k")"
		fetch_kernel "$k" || die "the archive does not serve the packages of $k"
	else
		use_line "$1"
		f=${2:-amd64}
		[[ -n ${pin[$f]:-} ]] ||
			die "unknown flavour '$f' of line $line (${!pin[*]})"
		lock_line
		make_chroot
		[[ -z $(foreign "${pin[$f]}") ]] || add_arch "$(foreign "${pin[$f]}")"
		k=$(pick_kver "$f")
	fi
	prepare_kver "$k"
	exec 7>&-
	echo "$k"
}

kver() {	# kver LINE [FLAVOUR]: what prepare LINE would use
	local f=${2:-amd64}
	use_line "$1"
	[[ -n ${pin[$f]:-} ]] ||
		die "unknown flavour '$f' of line $line (${!pin[*]})"
	lock_line
	make_chroot
	[[ -z $(foreign "${pin[$f]}") ]] || add_arch "$(foreign "${pin[$f]}")"
	pick_kver "$f"
}

root_of() {	# root_of KVER: the chroot that builds KVER
	[[ -n $(line_of "$1") ]] || die "$1 is not built in a chroot"
	use_line "$(line_of "$1")"
	echo "$chroot_dir"
}

known() {	# known LINE [FLAVOUR]: the release picked last, else the pin
	local f=${2:-amd64} cache
	use_line "$1"
	cache=$(kver_cache "$f")
	if [[ -s $cache ]]; then cat "$cache"; else echo "${pin[$f]}"; fi
}

kbuild() {	# kbuild KVER: kbuild.sh, with the chroot's headers and make
	local k=$1 kdir=/usr/src/linux-headers-$1
	[[ -n $(line_of "$k") ]] || die "$k is not built in a chroot"
	[[ -z $(foreign "$k") ]] ||
		die "$k is cross-built by vm/arm64.sh kbuild $k (make check-arm64 KVER=$k)"
	use_line "$(line_of "$k")"
	if [[ -f $chroot_dir$kdir/Makefile && -f $top/$k/root/.rcvfix-unpacked ]]; then
		write_kernel_env "$k"
	else
		prepare "$k" > /dev/null
	fi
	echo "building in $chroot_dir"
	RCVFIX_KBUILD_ROOT=$chroot_dir MAKE="$0 make $k" "$HARNESS/kbuild.sh" "$k"
}

# chroot_make KVER ARGS...: make ARGS in the chroot of KVER's line, with
# build/KVER bound at the same path (kbuild.sh's make there).
chroot_make() {
	local k=$1
	shift
	use_line "$(line_of "$k")"
	BIND=$RCVFIX_BUILD/$k in_chroot make "$@"
}

# dkms KVER: dkms of the chroot's release builds the module for KVER from
# dkms.conf as packaged, and skips a kernel older than the floor (5.4).
# --no-prepare-kernel: dkms 2.8 would otherwise regenerate the headers'
# configuration and break them. The chroot keeps no dkms tree afterwards.
dkms_check() {
	local k=$1 version src ko st
	[[ -n $(line_of "$k") ]] || die "$k is not built in a chroot"
	use_line "$(line_of "$k")"
	[[ -f $chroot_dir/usr/src/linux-headers-$k/Makefile ]] ||
		prepare "$k" > /dev/null
	lock_line
	has_pkg dkms || {
		apt_update
		msg "installing in the chroot: dkms"
		in_chroot apt-get -q install -y --no-install-recommends dkms \
			< /dev/null > "$top/apt-install.log" 2>&1 ||
			die "apt-get install dkms in the chroot failed, see $top/apt-install.log"
	}
	version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$RCVFIX_REPO/dkms.conf")
	src=$chroot_dir/usr/src/rcvfix-$version
	rm -rf "$src"
	mkdir -p "$src"
	cp "$RCVFIX_REPO/dkms.conf" "$src/"
	"$HARNESS/sync-tree.sh" "$RCVFIX_REPO/module" "$src/module"
	ko=/var/lib/dkms/rcvfix/$version/$k/x86_64/module/rcvfix.ko
	st=0
	in_chroot bash -c '
		v=$1 k=$2 ko=$3
		dkms remove "rcvfix/$v" --all > /dev/null 2>&1
		dkms add "rcvfix/$v" > /dev/null || exit 1
		opts=(--no-prepare-kernel --no-clean-kernel)
		dkms build "${opts[@]}" "rcvfix/$v" -k "$k" \
			--kernelsourcedir "/usr/src/linux-headers-$k" || exit 1
		echo "built: $ko ($(modinfo -F vermagic "$ko"))"
		if dkms build "${opts[@]}" "rcvfix/$v" -k 5.4.0-30-amd64 \
			--kernelsourcedir "/usr/src/linux-headers-$k" > /dev/null 2>&1; then
			echo "dkms built for 5.4.0-30-amd64: BUILD_EXCLUSIVE_KERNEL lets it through"
			exit 1
		fi
		echo "skipped 5.4.0-30-amd64 (BUILD_EXCLUSIVE_KERNEL)"
	' dkms "$version" "$k" "$ko" < /dev/null || st=1
	in_chroot dkms remove "rcvfix/$version" --all > /dev/null 2>&1 || true
	rm -rf "$src"
	((st == 0)) || die "dkms in the $line chroot failed for $k (see above)"
	echo "dkms ($line chroot): rcvfix $version builds for $k"
}

# tool LINE PKG CMD...: CMD in LINE's chroot (made if missing) with the
# package PKG installed there and $RCVFIX_BUILD bound at the same path:
# for a tool Debian 12 lacks (python3-virt-firmware, vm/secureboot.sh).
tool() {
	local pkg=$2
	use_line "$1"
	shift 2
	lock_line
	make_chroot
	if ! has_pkg "$pkg"; then
		apt_update
		msg "installing in the $line chroot: $pkg"
		in_chroot apt-get -q install -y --no-install-recommends "$pkg" \
			< /dev/null > "$top/apt-install.log" 2>&1 ||
			die "apt-get install $pkg in the chroot failed, see $top/apt-install.log"
	fi
	BIND=$(realpath "$RCVFIX_BUILD") in_chroot "$@"
}

[[ $# -ge 1 ]] || usage
case $1 in
prepare) [[ $# -ge 2 && $# -le 3 ]] || usage; prepare "$2" "${3:-}" ;;
kbuild)	[[ $# -eq 2 ]] || usage; kbuild "$2" ;;
kver)	[[ $# -ge 2 && $# -le 3 ]] || usage; kver "$2" "${3:-}" ;;
line)	[[ $# -eq 2 ]] || usage; line_of "$2" ;;
root)	[[ $# -eq 2 ]] || usage; root_of "$2" ;;
known)	[[ $# -ge 2 && $# -le 3 ]] || usage; known "$2" "${3:-}" ;;
dkms)	[[ $# -eq 2 ]] || usage; dkms_check "$2" ;;
tool)	[[ $# -ge 4 ]] || usage; shift; tool "$@" ;;
make)	[[ $# -ge 3 ]] || usage; shift; chroot_make "$@" ;;
*)	usage ;;
esac
