#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the harness initramfs for one kernel: static busybox, init.sh, and
# the modules that kernel needs to mount the host's root over virtio-9p or
# virtiofs (guest_root_fs), in the load order computed from its modules.dep
# (built-in ones are skipped).
#
# Usage: mkinitramfs.sh KVER OUTPUT.cpio
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

[[ $# -eq 2 ]] || die "usage: mkinitramfs.sh KVER OUTPUT.cpio"
kver=$1 out=$2
moddir=${RCVFIX_MODDIR:-/lib/modules/$kver}
busybox=${RCVFIX_BUSYBOX:-/bin/busybox}

[[ -r $moddir/modules.dep ]] ||
	die "$moddir/modules.dep missing: install linux-image-$kver (make deps)"
[[ -x $busybox ]] || die "$busybox missing: install busybox-static (make deps)"

# Modules whose drivers the guest needs before it has a root filesystem;
# RCVFIX_INITRAMFS_EXTRA: more (word-split), e.g. virtio_console (vm/arm64.sh).
case $(guest_root_fs "$moddir") in
9p) wanted=(virtio_pci 9pnet_virtio 9p) ;;
virtiofs) wanted=(virtio_pci virtiofs) ;;
esac
# shellcheck disable=SC2206
wanted+=(${RCVFIX_INITRAMFS_EXTRA:-})

declare -A dep_of=() path_of=() builtin=() done_=()
order=()

modname() {	# modname PATH: module name as the kernel spells it
	local b=${1##*/}
	b=${b%%.ko*}
	echo "${b//-/_}"
}

while IFS= read -r line; do
	p=${line%%:*}
	n=$(modname "$p")
	path_of[$n]=$p
	dep_of[$n]=${line#*:}
done < "$moddir/modules.dep"
if [[ -r $moddir/modules.builtin ]]; then
	while IFS= read -r p; do builtin[$(modname "$p")]=1; done \
		< "$moddir/modules.builtin"
fi

resolve() {	# resolve NAME: append NAME after everything it needs
	local n=$1 d
	[[ -z ${done_[$n]:-} ]] || return 0
	done_[$n]=1
	[[ -z ${builtin[$n]:-} ]] || return 0
	[[ -n ${path_of[$n]:-} ]] ||
		die "$kver has no module $n (and it is not built in)"
	for d in ${dep_of[$n]}; do resolve "$(modname "$d")"; done
	order+=("$n")
}
for n in "${wanted[@]}"; do resolve "$n"; done

mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "$out.stage.XXXXXX")
trap 'rm -rf "$stage" "$stage.cpio"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
cp "$busybox" "$stage/bin/busybox"
cp "$HARNESS/init.sh" "$stage/init"
chmod 755 "$stage/init"

i=10
for n in "${order[@]}"; do
	src=$moddir/${path_of[$n]}
	dst=$stage/modules/$i-$n.ko
	case $src in
	*.ko.xz)  xz -dc "$src" > "$dst" ;;
	*.ko.zst) zstd -qdc "$src" > "$dst" ;;
	*.ko.gz)  gzip -dc "$src" > "$dst" ;;
	*)        cp "$src" "$dst" ;;
	esac
	i=$((i + 1))
done

# Concurrent runs may build the same file: write aside, rename atomically.
(cd "$stage" && find . -mindepth 1 | sort |
	cpio --quiet -o -H newc -R 0:0) > "$stage.cpio"
mv "$stage.cpio" "$out"
echo "${order[*]}"
