#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The arm64 line of the harness (`make check-arm64`): Debian 12's arm64
# kernels under qemu-system-aarch64 (TCG); `make check-arm64-all` adds the
# PREEMPT_RT flavour of 6.1 and Debian 13's newest 7.x arm64 kernel, whose
# kbuild needs glibc 2.38 and gcc-14: vm/chroot-kernel.sh (line newest,
# flavour arm64) fetches it and readies the Debian 13 chroot, where the
# module is cross-built with that chroot's aarch64 gcc-14 and amd64
# linux-kbuild. Owns the host packages it needs,
# each kernel and its headers unpacked under build/KVER/unpacked (never into
# the host's /boot or /lib/modules), the arm64 root build/arm64/root shared
# as the guest's / over 9p, the module and test programs cross-built for it,
# and build/KVER/kernel.env, which makes vm.sh boot that kernel.
#
# Usage: arm64.sh deps            host packages, arm64 architecture, binfmt
#        arm64.sh kernels [rt]    the arm64 kernels to test (newest ABIs);
#                                 rt: the PREEMPT_RT one (6.1 rt-arm64)
#        arm64.sh prepare KVER    download and unpack KVER, write kernel.env
#                                 (a 7.x KVER: chroot-kernel.sh prepare KVER)
#        arm64.sh root            debootstrap the arm64 root (cached)
#        arm64.sh busybox         busybox-static:arm64 under build/arm64/busybox
#        arm64.sh progs           cross-build tests/progs into build/arm64/bin
#        arm64.sh kbuild KVER     cross-build module/ and tests/kmod (W=1)
#        arm64.sh kmod-image KVER the arm64 kmod image of KVER's built module
#                                 (make kmod-image KVER=...; 74-kmod-image)
#        arm64.sh check KVER...   all of the above, then the suite on each
#                                 kernel, side by side (vm/check.sh)
# Environment: RCVFIX_TESTS, RCVFIX_TEST_TIMEOUT... as vm.sh, whose time
#   limits kernel.env stretches (RCVFIX_TIMEOUT_SCALE, see prepare);
#   RCVFIX_NICE   niceness of the builds, debootstrap and guests (19)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

ARM64=$RCVFIX_BUILD/arm64
ROOT=$ARM64/root
BIN=$ARM64/bin
CROSS=aarch64-linux-gnu-
MIRROR=http://deb.debian.org/debian
# Tested pins, used when the apt lists name no newer ABI of the line.
PIN_61=6.1.0-57-arm64
PIN_612=6.12.117+deb12-arm64
PIN_61_RT=6.1.0-57-rt-arm64
# Builds and fetches the kernels of other Debian releases (7.x: Debian 13).
CHROOT=$HARNESS/chroot-kernel.sh
SYSROOT=$ARM64/sysroot
# What the root must hold for the guest suite: ROOT_BASE (run.sh, lib.sh,
# the tests, the BPF test programs' libraries; busybox-static for the
# container tests' images) goes in with debootstrap; ROOT_PKGS, the real
# consumers the tests run (Podman, the CNI plugins, node_exporter, perf,
# bpftrace; nft for test 43's counter), are installed after it with
# apt-get, which configures them in order (debootstrap --include fails on
# golang-github-containers-common).
ROOT_BASE=iproute2,kmod,procps,iperf3,python3,busybox-static,jq,ethtool,iputils-ping,libbpf1,libelf1
ROOT_PKGS="podman crun conmon skopeo umoci containernetworking-plugins python3-yaml
	prometheus-node-exporter curl linux-perf bpftrace liburing2 nftables"
# arm64 libraries the test programs link with (BPF's; liburing for
# lowatstall), unpacked into SYSROOT (installing them on the host would
# upgrade its own amd64 copies); the root holds their runtime parts.
SYSROOT_DEBS=(libbpf-dev:arm64 libbpf1:arm64 libelf-dev:arm64 libelf1:arm64
	zlib1g-dev:arm64 zlib1g:arm64 liburing-dev:arm64 liburing2:arm64)
nice=(nice -n "${RCVFIX_NICE:-19}")

usage() { die "usage: arm64.sh deps|kernels [rt]|root|busybox|progs | prepare|kbuild|kmod-image KVER | check KVER..."; }

# --- host packages ---------------------------------------------------------

deps() {
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		msg "adding the arm64 architecture to dpkg (for the arm64 kernels and busybox)"
		dpkg --add-architecture arm64
		rm -f "$RCVFIX_BUILD/.apt-updated"	# deps.sh: update now
	fi
	"$HARNESS/deps.sh" qemu-system-arm gcc-aarch64-linux-gnu \
		libc6-dev-arm64-cross qemu-user-static binfmt-support debootstrap \
		cpio xz-utils kmod make
	# The root's second stage runs its arm64 programs through binfmt_misc.
	if [[ ! -e /proc/sys/fs/binfmt_misc/status ]]; then
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
			die "cannot mount binfmt_misc: the arm64 root cannot be made here"
	fi
	[[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] ||
		update-binfmts --enable qemu-aarch64 ||
		die "binfmt_misc has no qemu-aarch64 entry (qemu-user-static)"
}

# --- kernels -----------------------------------------------------------------

# newest PREFIX REGEX PIN: the newest arm64 ABI of a line in the apt lists.
newest() {
	local k
	k=$(apt-cache pkgnames "linux-image-$1" 2> /dev/null |
		sed -En "s/^linux-image-($2)\$/\\1/p" | sort -V | tail -n 1)
	echo "${k:-$3}"
}

kernels() {	# kernels [rt]
	if [[ ${1:-} == rt ]]; then
		newest 6.1.0- '6\.1\.0-[0-9]+-rt-arm64' "$PIN_61_RT"
		return
	fi
	[[ -z ${1:-} ]] || usage
	echo "$(newest 6.1.0- '6\.1\.0-[0-9]+-arm64' "$PIN_61")" \
		"$(newest 6.12. '6\.12\.[0-9]+\+deb12-arm64' "$PIN_612")"
}

# field PKG FIELD: a field of an arm64 package in the apt lists.
field() {
	apt-cache show "$1:arm64" 2> /dev/null |
		sed -n "s/^$2: //p" | head -n 1
}

prepare() {
	local kver=$1 out=$RCVFIX_BUILD/$1 un common kbuild v hv d vmlinuz
	local moddir rel scale
	un=$out/unpacked
	if [[ -n $("$CHROOT" line "$kver") ]]; then
		# Another release's kernel: its chroot holds the headers and the
		# cross toolchain; the image and modules are unpacked under
		# build/LINE/KVER, named by the kernel.env it writes.
		"${nice[@]}" "$CHROOT" prepare "$kver" > /dev/null ||
			die "vm/chroot-kernel.sh prepare $kver failed (see above)"
		# shellcheck source=/dev/null
		vmlinuz=$(source "$out/kernel.env" && echo "$RCVFIX_VMLINUZ")
		# shellcheck source=/dev/null
		moddir=$(source "$out/kernel.env" && echo "$RCVFIX_MODDIR")
	elif [[ ! -f $un/.done ]]; then
		v=$(field "linux-headers-$kver" Version)
		[[ -n $v ]] || die "the apt lists have no linux-headers-$kver for arm64 (arm64.sh deps)"
		common=$(field "linux-headers-$kver" Depends |
			grep -o 'linux-headers-[^ ,]*-common[^ ,]*' | head -n 1)
		kbuild=$(field "linux-headers-$kver" Depends |
			grep -o 'linux-kbuild-[^ ,]*' | head -n 1)
		[[ -n $common && -n $kbuild ]] ||
			die "linux-headers-$kver: cannot tell its -common and kbuild packages"
		# The host's kbuild (amd64 programs) of the same version stands
		# in for the arm64 one the headers' scripts/ and tools/ point to.
		"$HARNESS/deps.sh" "$kbuild"
		hv=$(dpkg-query -W -f='${Version}' "$kbuild")
		[[ $hv == "$v" ]] ||
			die "host $kbuild is $hv, the arm64 headers are $v: apt-get install $kbuild=$v"
		rm -rf "$un" "$out/debs"
		mkdir -p "$un" "$out/debs"
		msg "downloading linux-image-$kver, its headers and $common"
		(cd "$out/debs" && apt-get -q download "linux-image-$kver:arm64" \
			"linux-headers-$kver:arm64" "$common" 2>&1 |
			grep -v 'unsandboxed as root') || true
		for d in "$out"/debs/*.deb; do
			dpkg-deb -x "$d" "$un"
		done
		[[ -d $un/usr/src/linux-headers-$kver ]] ||
			die "linux-headers-$kver did not unpack (see $out/debs)"
		# The headers include their -common half by absolute path, and
		# reach scripts/ and tools/ through ../../lib/<kbuild>.
		sed -i "s|^include /usr/src/|include $un/usr/src/|" \
			"$un/usr/src/linux-headers-$kver/Makefile"
		mkdir -p "$un/usr/lib"
		ln -sfn "/usr/lib/${kbuild}" "$un/usr/lib/${kbuild}"
		rel=$kver
		for d in "$un/lib/modules/$rel" "$un/usr/lib/modules/$rel"; do
			[[ -d $d ]] && depmod -b "${d%/lib/modules/*}" "$rel"
		done
		touch "$un/.done"
	fi
	if [[ -z ${vmlinuz:-} ]]; then
		vmlinuz=$un/boot/vmlinuz-$kver
		[[ -f $vmlinuz ]] || vmlinuz=$un/usr/lib/modules/$kver/vmlinuz
		moddir=$un/lib/modules/$kver
		[[ -d $moddir ]] || moddir=$un/usr/lib/modules/$kver
	fi
	[[ -f $vmlinuz && -r $moddir/modules.dep ]] ||
		die "$un: no vmlinuz or modules.dep for $kver"
	# The emulated arm64 guest runs the tests 2-3 times slower than the
	# amd64 one (23-lifetime: 145-171 s on amd64, 329 s on 6.1 arm64) and
	# the PREEMPT_RT one 2-4 times slower again (23-lifetime over 900 s,
	# 22-clamp 292 s against 68 s): vm.sh multiplies its time limits and
	# the scripts' own by this (the whole suite took 45-55 min on arm64).
	scale=3
	[[ $kver != *-rt-arm64 ]] || scale=9
	# vm.sh sources this: boot the kernel on QEMU's arm64 "virt" board.
	{
		printf '%s=%q\n' RCVFIX_VMLINUZ "$vmlinuz" RCVFIX_MODDIR "$moddir" \
			RCVFIX_QEMU_BIN qemu-system-aarch64 RCVFIX_CONSOLE ttyAMA0 \
			RCVFIX_RESULTS_DEV virtconsole RCVFIX_GUEST_ROOT "$ROOT" \
			RCVFIX_GUEST_BIN "$BIN" RCVFIX_TIMEOUT_SCALE "$scale"
		printf 'RCVFIX_QEMU_MACHINE=%q\n' "-M virt"
		printf 'export RCVFIX_BUSYBOX=%q\n' "$ARM64/busybox/bin/busybox"
		printf 'export RCVFIX_INITRAMFS_EXTRA=%q\n' virtio_console
	} > "$out/kernel.env"
}

# --- the arm64 root ----------------------------------------------------------

# busybox: busybox-static:arm64 unpacked under build/arm64/busybox (the
# initramfs's, and the kmod image's cp); needs no arm64 root.
busybox() {
	local bb=$ARM64/busybox/bin/busybox
	[[ ! -x $bb ]] || return 0
	rm -rf "$ARM64/busybox" "$ARM64/busybox.debs"
	mkdir -p "$ARM64/busybox.debs"
	(cd "$ARM64/busybox.debs" && apt-get -q download busybox-static:arm64 2>&1 |
		grep -v 'unsandboxed as root') || true
	dpkg-deb -x "$ARM64"/busybox.debs/busybox-static_*_arm64.deb "$ARM64/busybox"
	[[ -x $bb ]] || die "busybox-static:arm64 did not unpack into $ARM64/busybox (arm64.sh deps adds the arm64 architecture)"
}

# kmod_image KVER: build/kmod-image/rcvfix-kmod-KVER.tar, the OCI image of
# KVER's cross-built rcvfix.ko with busybox-static:arm64 as its cp.
kmod_image() {
	busybox
	# shellcheck source=/dev/null
	"${nice[@]}" "$RCVFIX_REPO/packaging/kmod-image.sh" "$1" \
		"$RCVFIX_BUILD/$1/module/rcvfix.ko" \
		"$RCVFIX_BUILD/kmod-image/rcvfix-kmod-$1.tar" \
		"$ARM64/busybox/bin/busybox" \
		"$(source "$RCVFIX_BUILD/$1/kernel.env" && echo "$RCVFIX_MODDIR")" > /dev/null
}

# in_root CMD...: CMD in the arm64 root (qemu-user) with /proc, in a mount
# namespace of its own so that no mount outlives it.
in_root() {
	"${nice[@]}" unshare -m --propagation private -- sh -c \
		'r=$1; shift; mount -t proc proc "$r/proc" && exec chroot "$r" "$@"' \
		in_root "$ROOT" "$@"
}

root() {
	local want
	mkdir -p "$ARM64"
	# One maker at a time (make check-arm64 and arm64-prepare may overlap).
	exec 7> "$ARM64/.root.lock"
	flock 7
	busybox
	if [[ ! -f $ROOT/.rcvfix-debootstrap-done && ! -f $ROOT/.rcvfix-root-done ]]; then
		rm -rf "$ROOT"
		msg "debootstrap bookworm arm64 into $ROOT (first stage)"
		"${nice[@]}" debootstrap --arch=arm64 --variant=minbase --foreign \
			--include="$ROOT_BASE" bookworm "$ROOT" "$MIRROR" \
			> "$ARM64/debootstrap.log" 2>&1 ||
			die "debootstrap failed: $ARM64/debootstrap.log"
		msg "debootstrap second stage (arm64 programs through qemu-user)"
		"${nice[@]}" chroot "$ROOT" /debootstrap/debootstrap --second-stage \
			>> "$ARM64/debootstrap.log" 2>&1 ||
			die "debootstrap second stage failed: $ARM64/debootstrap.log"
		# No package starts a service in the root.
		printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"
		chmod 755 "$ROOT/usr/sbin/policy-rc.d"
		touch "$ROOT/.rcvfix-debootstrap-done"
	fi
	# A root made with a shorter list gets the packages added since.
	# shellcheck disable=SC2086
	want=$(echo "$ROOT_BASE" $ROOT_PKGS)
	if [[ $(cat "$ROOT/.rcvfix-root-done" 2> /dev/null) != "$want" ]]; then
		msg "installing ${want//,/ } in $ROOT (qemu-user)"
		cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
		# shellcheck disable=SC2086
		{
			in_root apt-get -q update &&
			in_root env DEBIAN_FRONTEND=noninteractive \
				apt-get -q install -y --no-install-recommends ${want//,/ } &&
			in_root apt-get clean
		} >> "$ARM64/debootstrap.log" 2>&1 ||
			die "apt-get in $ROOT failed: $ARM64/debootstrap.log"
	fi
	# init.sh mounts the repository at its host path inside this root.
	mkdir -p "$ROOT$RCVFIX_REPO" "$ROOT/lib/modules"
	echo "$want" > "$ROOT/.rcvfix-root-done"
	exec 7>&-
}

# --- cross builds ---------------------------------------------------------------

# progs: tests/progs, tests/stress and tools/ for arm64 into build/arm64/bin.
# The BPF objects are built as on the host (BPF is the same on both).
progs() {
	local lib=$SYSROOT/usr/lib/aarch64-linux-gnu d
	if [[ $(cat "$SYSROOT/.done" 2> /dev/null) != "${SYSROOT_DEBS[*]}" ]]; then
		rm -rf "$SYSROOT" "$SYSROOT.debs"
		mkdir -p "$SYSROOT.debs"
		(cd "$SYSROOT.debs" && apt-get -q download "${SYSROOT_DEBS[@]}" 2>&1 |
			grep -v 'unsandboxed as root') || true
		for d in "$SYSROOT".debs/*.deb; do dpkg-deb -x "$d" "$SYSROOT"; done
		[[ -e $lib/libbpf.so ]] || die "libbpf-dev:arm64 did not unpack"
		echo "${SYSROOT_DEBS[*]}" > "$SYSROOT/.done"
	fi
	"$HARNESS/deps.sh" clang llvm bpftool libbpf-dev
	cross_make tests/progs CPPFLAGS="-I$SYSROOT/usr/include" \
		CFLAGS="-O2 -g -Wall -Wextra -L$lib -Wl,-rpath-link,$lib:$SYSROOT/lib/aarch64-linux-gnu"
	cross_make tests/stress
	cross_make tools
}

cross_make() {	# cross_make DIR [VAR=VALUE...]: DIR's programs into $BIN
	local d=$1
	shift
	env -u MAKEFLAGS -u MAKELEVEL "${nice[@]}" make --no-print-directory \
		-C "$RCVFIX_REPO/$d" OUT="$BIN" CC="${CROSS}gcc" "$@"
}

# kbuild KVER: module/ and tests/kmod into build/KVER; any compiler warning
# at W=1 fails the build.
# A kernel of another release (7.x) builds in its chroot (chroot-kernel.sh
# make: build/KVER bound at the same path there).
kbuild() {
	local kver=$1 out=$RCVFIX_BUILD/$1 kdir log d root='' mk=(make)
	kdir=$out/unpacked/usr/src/linux-headers-$kver
	if [[ -n $("$CHROOT" line "$kver") ]]; then
		root=$("$CHROOT" root "$kver")
		kdir=/usr/src/linux-headers-$kver
		mk=("$CHROOT" make "$kver")
	fi
	[[ -f $root$kdir/Makefile ]] || die "$root$kdir missing: arm64.sh prepare $kver"
	exec 9> "$out/.lock"
	flock 9
	log=$out/kbuild-w1.log
	: > "$log"
	"$HARNESS/sync-tree.sh" "$RCVFIX_REPO/module" "$out/module"
	"$HARNESS/sync-tree.sh" "$RCVFIX_REPO/tests/kmod" "$out/kmod"
	for d in module kmod; do
		msg "cross-building $d for $kver (W=1)"
		env -u MAKEFLAGS -u MAKELEVEL "${nice[@]}" "${mk[@]}" --no-print-directory \
			-C "$kdir" M="$out/$d" ARCH=arm64 CROSS_COMPILE="$CROSS" W=1 \
			modules >> "$log" 2>&1 ||
			{ tail -n 30 "$log" >&2; die "kbuild of $d for $kver failed: $log"; }
	done
	exec 9>&-
	if grep -q 'warning:' "$log"; then
		grep -B 2 -A 4 'warning:' "$log" >&2
		die "warnings at W=1 building for $kver: $log"
	fi
	[[ -f $out/module/rcvfix.ko ]] || die "no rcvfix.ko for $kver"
}

check() {
	local kver
	deps
	root
	progs
	for kver in "$@"; do
		prepare "$kver"
		kbuild "$kver"
		# 74-kmod-image reads the arm64 kmod image of its kernel.
		"$HARNESS/deps.sh" umoci skopeo
		kmod_image "$kver"
	done
	# make check's runner: guests side by side (one per host CPU), counts,
	# the closing line and its exit status.
	"${nice[@]}" "$HARNESS/check.sh" "$@"
}

[[ $# -ge 1 ]] || usage
cmd=$1
shift
case $cmd in
deps|root|progs|busybox) [[ $# -eq 0 ]] || usage; "$cmd" ;;
kernels) [[ $# -le 1 ]] || usage; kernels "$@" ;;
prepare|kbuild) [[ $# -eq 1 ]] || usage; "$cmd" "$1" ;;
kmod-image) [[ $# -eq 1 ]] || usage; kmod_image "$1" ;;
check) [[ $# -ge 1 ]] || usage; check "$@" ;;
*) usage ;;
esac
