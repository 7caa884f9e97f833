#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the kmod image Kernel Module Management (KMM) loads rcvfix from, for
# one kernel, from scratch: /opt/lib/modules/KVER/rcvfix.ko with the output of
# `depmod -b /opt KVER`, and a static busybox as /bin/cp (KMM copies the
# modules out of the image with it). Written as an OCI archive whose
# platform is the module's architecture (amd64 or arm64, read from its ELF
# header): an arm64 kernel's image is an arm64 image, built on any host.
#
# Usage: kmod-image.sh KVER KO OUT.tar [BUSYBOX [MODDIR]]
#   KO is the rcvfix.ko built for KVER (make kbuild-KVER; for an arm64
#   kernel vm/arm64.sh kbuild KVER); the image's tag is KVER with '+' turned
#   into '_' (an OCI tag cannot hold '+'), printed last.
#   BUSYBOX: a static busybox of the module's architecture (default
#   /bin/busybox; arm64: build/arm64/busybox/bin/busybox, which vm/arm64.sh
#   root unpacks from busybox-static:arm64).
#   MODDIR: the kernel's /lib/modules/KVER, for its modules.builtin lists
#   (default /lib/modules/KVER when that exists, else empty lists).
#
# Tools: umoci builds the image straight into an OCI layout folder (no daemon,
# no container storage, no user namespace: buildah would need both a storage
# configuration and, rootless, subuid ranges); skopeo turns the layout into
# the oci-archive that `skopeo copy oci-archive:OUT.tar:TAG docker://...`
# pushes to a registry.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

[[ $# -ge 3 && $# -le 5 ]] ||
	die "usage: kmod-image.sh KVER KO OUT.tar [BUSYBOX [MODDIR]]"
kver=$1 ko=$2 out=$3
busybox=${4:-/bin/busybox}
kmoddir=${5:-/lib/modules/$kver}
tag=${kver//+/_}

for t in umoci skopeo depmod modinfo readelf; do
	command -v "$t" > /dev/null ||
		die "$t missing: make deps-kmod-image installs umoci, skopeo, kmod and binutils"
done

# elf_arch FILE: the Debian architecture of an ELF file's machine.
elf_arch() {
	local m
	m=$(LC_ALL=C readelf -h "$1" 2> /dev/null | sed -n 's/^ *Machine: *//p')
	case $m in
	*X86-64*) echo amd64 ;;
	AArch64) echo arm64 ;;
	*) echo "unknown (${m:-not ELF})" ;;
	esac
}

[[ -r $ko ]] || die "$ko not found: build it with make kbuild-$kver (arm64 kernels: make kmod-image KVER=$kver builds it)"
vermagic=$(modinfo -F vermagic "$ko")
[[ ${vermagic%% *} == "$kver" ]] ||
	die "$ko was built for '${vermagic%% *}', not $kver"
arch=$(elf_arch "$ko")
[[ $arch == amd64 || $arch == arm64 ]] ||
	die "$ko is for machine $arch: only amd64 and arm64 images are made"
# A static cp of the module's architecture: the image has no libc.
[[ -x $busybox ]] ||
	die "$busybox missing: install busybox-static (arm64: vm/arm64.sh root unpacks busybox-static:arm64)"
[[ $(elf_arch "$busybox") == "$arch" ]] ||
	die "$busybox is for $(elf_arch "$busybox"), $ko for $arch: pass a busybox of $arch (arm64: build/arm64/busybox/bin/busybox)"
if LC_ALL=C readelf -l "$busybox" | grep -q 'INTERP'; then
	die "$busybox is not a static binary: install busybox-static"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rcvfix-kmod-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/rootfs layout=$work/oci
moddir=$stage/opt/lib/modules/$kver

# The files, owned by root, as KMM's worker expects them.
install -d -m 755 "$moddir" "$stage/bin"
install -m 644 "$ko" "$moddir/rcvfix.ko"
# depmod's inputs besides the .ko: the kernel's own built-in lists when the
# kernel is installed (or unpacked) at MODDIR, else empty ones (rcvfix needs
# no other module).
echo rcvfix.ko > "$moddir/modules.order"
for f in modules.builtin modules.builtin.modinfo; do
	if [[ -r $kmoddir/$f ]]; then
		install -m 644 "$kmoddir/$f" "$moddir/$f"
	else
		: > "$moddir/$f"
	fi
done
depmod -b "$stage/opt" "$kver"
grep -q '^rcvfix\.ko:' "$moddir/modules.dep" ||
	die "depmod -b $stage/opt $kver wrote no modules.dep line for rcvfix.ko"
install -m 755 "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/cp"
ln -s busybox "$stage/bin/sh"

version=$(rcvfix_version)
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci insert --image "$layout:$tag" --history.comment \
	"rcvfix $version for $kver" "$stage" / > /dev/null
umoci config --image "$layout:$tag" \
	--config.label org.opencontainers.image.title=rcvfix-kmod \
	--config.label org.opencontainers.image.version="$version" \
	--config.label org.opencontainers.image.licenses=GPL-2.0 \
	--config.label io.rcvfix.kernel="$kver" \
	--config.cmd /bin/sh --os linux --architecture "$arch"
mkdir -p "$(dirname "$out")"
rm -f "$out"
skopeo copy --quiet "oci:$layout:$tag" "oci-archive:$out:$tag"
# The platform a runtime pulls by: the module's architecture.
got=$(skopeo inspect --config "oci-archive:$out:$tag" |
	sed -n 's/^ *"architecture": *"\([^"]*\)".*/\1/p')
[[ $got == "$arch" ]] ||
	die "$out: the image config says architecture '$got', the module is $arch"
msg "$out: rcvfix $version for $kver ($arch), tag $tag"
echo "$tag"
