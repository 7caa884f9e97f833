#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the kmod image Kernel Module Management (KMM) loads rcvfix from, for
# one kernel, from scratch: /opt/lib/modules/KVER/rcvfix.ko with the output of
# `depmod -b /opt KVER`, and a static busybox as /bin/cp (KMM copies the
# modules out of the image with it). Written as an OCI archive.
#
# Usage: kmod-image.sh KVER KO OUT.tar
#   KO is the rcvfix.ko built for KVER (make kbuild-KVER); the image's tag is
#   KVER with '+' turned into '_' (an OCI tag cannot hold '+'), printed last.
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

[[ $# -eq 3 ]] || die "usage: kmod-image.sh KVER KO OUT.tar"
kver=$1 ko=$2 out=$3
tag=${kver//+/_}
busybox=/bin/busybox

for t in umoci skopeo depmod modinfo; do
	command -v "$t" > /dev/null ||
		die "$t missing: make deps-kmod-image installs umoci, skopeo and kmod"
done
[[ -r $ko ]] || die "$ko not found: build it with make kbuild-$kver"
vermagic=$(modinfo -F vermagic "$ko")
[[ ${vermagic%% *} == "$kver" ]] ||
	die "$ko was built for '${vermagic%% *}', not $kver"
# A static cp: the image has no libc.
if [[ ! -x $busybox ]] || ldd "$busybox" > /dev/null 2>&1; then
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
# kernel is installed here, else empty ones (rcvfix needs no other module).
echo rcvfix.ko > "$moddir/modules.order"
for f in modules.builtin modules.builtin.modinfo; do
	if [[ -r /lib/modules/$kver/$f ]]; then
		install -m 644 "/lib/modules/$kver/$f" "$moddir/$f"
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
	--config.cmd /bin/sh
mkdir -p "$(dirname "$out")"
rm -f "$out"
skopeo copy --quiet "oci:$layout:$tag" "oci-archive:$out:$tag"
msg "$out: rcvfix $version for $kver, tag $tag"
echo "$tag"
