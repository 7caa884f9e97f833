# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for the container tests (72-75), sourced after lib.sh: Podman as
# root with everything on the guest's tmpfs (the host's / is read-only 9p
# here), a tiny root filesystem made of host binaries, the rule model's inputs.

# podman ARGS...: the real podman, its storage and state under /tmp (tmpfs),
# vfs storage (no overlay mount on tmpfs needed), cgroupfs (no systemd in
# the guest), no event journal, crun as the OCI runtime. (Podman 4.3 unpacks
# an oci-archive: image under /var/tmp whatever TMPDIR or containers.conf's
# image_copy_tmp_dir say, and /var/tmp is read-only here: give it oci: layouts.)
PODMAN_DIR=/tmp/rcvfix-podman-$$
podman() {
	command podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/run" \
		--tmpdir "$PODMAN_DIR/tmp" --storage-driver vfs \
		--cgroup-manager cgroupfs --events-backend none --runtime crun \
		"$@"
}

# podman_setup: skip unless podman and crun are installed; prepare its
# folders, removed at exit.
podman_setup() {
	local t
	for t in podman crun conmon; do
		command -v "$t" > /dev/null ||
			skip "$t missing: install podman, crun and conmon (make deps)"
	done
	mkdir -p "$PODMAN_DIR/tmp" || return 1
	on_exit "podman rm -af -t 0; rm -rf $PODMAN_DIR"
}

# rootfs_new DIR PROGRAM...: a root filesystem in DIR with busybox-static
# (sh, cat, cp ...) in /bin and each PROGRAM with the shared libraries
# ldd lists for it.
rootfs_new() {
	local dir=$1 p lib
	shift
	if [[ ! -x /bin/busybox ]] || ldd /bin/busybox > /dev/null 2>&1; then
		skip "/bin/busybox is not static: install busybox-static (make deps)"
	fi
	mkdir -p "$dir"/{bin,dev,proc,sys,tmp,etc} || return 1
	cp /bin/busybox "$dir/bin/" || return 1
	for p in sh cat cp ls; do ln -s busybox "$dir/bin/$p"; done
	for p in "$@"; do
		cp "$p" "$dir/bin/" || return 1
		for lib in $(ldd "$p" | grep -o '/[^ ]*'); do
			mkdir -p "$dir${lib%/*}" && cp -L "$lib" "$dir$lib" ||
				return 1
		done
	done
}

# model_init: the inputs of lib.sh's rule model on this kernel, read with
# rcvfix unloaded (it is unloaded here), and h, half tcp_rmem[1]: the
# SO_RCVBUF that locks on stock and stays unlocked where rcvfix is enabled.
# shellcheck disable=SC2034 # the model's globals, read by lib.sh
model_init() {
	rcvfix_unload
	M_MIN=$(min_rcvbuf)
	M_RMAX=$(< /proc/sys/net/core/rmem_max)
	M_T=$(tcp_rmem1) M_NEW=$M_T
	h=$((M_T / 2))
}

