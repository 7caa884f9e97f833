#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kmod image for Kernel Module Management (make kmod-image, built for
# this kernel by make check): read with OCI tools only (skopeo, umoci,
# podman), it holds /opt/lib/modules/KVER/rcvfix.ko with depmod's output and
# a static cp; the module's vermagic names this kernel; cp copies the module
# out in a container as KMM's worker does; and `modprobe -d <image>/opt`, as
# the worker runs it, loads that very .ko here with a parameter and unloads it.
# The image's platform is this kernel's architecture (amd64, or arm64 in the
# arm64 guest of make check-arm64, which builds the arm64 image).
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/guest/containers.sh"
tag=${KVER//+/_}
# build/KVER/module/rcvfix.ko -> build/kmod-image/rcvfix-kmod-KVER.tar
archive=${RCVFIX_KO%/*/*/*}/kmod-image/rcvfix-kmod-$KVER.tar
case $(uname -m) in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
*) skip "no kmod image is made for $(uname -m)" ;;
esac
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt" "$archive"
for t in skopeo umoci; do
	command -v $t > /dev/null ||
		skip "$t missing: install umoci and skopeo (make deps)"
done
podman_setup || { fail "podman setup"; done_testing; }
work=/tmp/rcvfix-kmod-image-$$
on_exit "rm -rf $work"
mkdir -p "$work/out"

# --- the archive, as OCI tools see it ----------------------------------------
# (skopeo unpacks an oci-archive under /var/tmp unless told: read-only here)
check "skopeo copies oci-archive:$archive:$tag to an OCI layout" \
	skopeo --tmpdir /tmp copy --quiet "oci-archive:$archive:$tag" "oci:$work/layout:$tag"
info=$(skopeo inspect "oci:$work/layout:$tag" 2>&1)
check_eq "image labels and platform" "$KVER rcvfix-kmod linux $arch" \
	"$(jq -r '"\(.Labels["io.rcvfix.kernel"]) \(.Labels["org.opencontainers.image.title"]) \(.Os) \(.Architecture)"' \
		<<< "$info" 2>&1)"
check_eq "one layer, from scratch" 1 "$(jq '.Layers | length' <<< "$info" 2>&1)"
check "umoci unpacks it" \
	umoci unpack --image "$work/layout:$tag" "$work/bundle"
rootfs=$work/bundle/rootfs
mods=$rootfs/opt/lib/modules/$KVER
ko=$mods/rcvfix.ko

# --- the layout KMM expects ---------------------------------------------------
check_eq "files under /opt/lib/modules" "$KVER" \
	"$(ls "$rootfs/opt/lib/modules" 2>&1)"
check "rcvfix.ko at /opt/lib/modules/$KVER" test -f "$ko"
check "depmod output: modules.dep lists rcvfix.ko" \
	grep -qx 'rcvfix.ko:' "$mods/modules.dep"
check "depmod output: modules.dep.bin, modules.alias.bin, modules.symbols.bin" \
	test -s "$mods/modules.dep.bin" -a -e "$mods/modules.alias.bin" \
	-a -e "$mods/modules.symbols.bin"
check "/bin/cp is a static program (no libc in the image)" \
	bash -c "test -x '$rootfs/bin/cp' && ! ldd '$rootfs/bin/cp'"
check_eq "the module's vermagic names this kernel" "$(uname -r)" \
	"$(modinfo -F vermagic "$ko" | awk '{ print $1 }')"
check "it is the rcvfix.ko make check built for $KVER" cmp "$ko" "$RCVFIX_KO"

# --- cp in a container of the image, as KMM's worker copies the modules --------
check "podman runs the image's cp" \
	podman run --rm --network=none -v "$work/out:/out" \
	"oci:$work/layout:$tag" cp -R "/opt/lib/modules/$KVER" /out/
check "the copy is the module" cmp "$ko" "$work/out/$KVER/rcvfix.ko"

# --- modprobe -d <image>/opt, the worker's load and unload --------------------
rcvfix_unload
check "modprobe -d <image>/opt rcvfix default_enable=1" \
	modprobe -d "$rootfs/opt" rcvfix default_enable=1
check_eq "rcvfix is loaded" 1 "$(grep -c '^rcvfix ' /proc/modules)"
ns=$(netns_new kmod)
check_eq "default_enable=1 reached the module: a new namespace is enabled" 1 \
	"$(rcvfix_enabled "$ns")"
h=$(($(tcp_rmem1 "$ns") / 2))
check_eq "SO_RCVBUF of half tcp_rmem[1] stays unlocked there" \
	"op=rcvbuf=$h ret=0 errno=0 rcvbuf=$((2 * h)) lock=0" \
	"$(in_ns "$ns" "$RCVFIX_BIN/sockopt" rcvbuf=$h)"
check "modprobe -r -d <image>/opt rcvfix" modprobe -r -d "$rootfs/opt" rcvfix
check_eq "rcvfix is unloaded" 0 "$(grep -c '^rcvfix ' /proc/modules)"

done_testing
