#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The rcvfix DaemonSet's container (busybox sh): loads the rcvfix module the
# node has installed (rcvfix-dkms or `make install`: host /lib/modules is
# mounted read-only at /lib/modules), with default_enable=$DEFAULT_ENABLE,
# then waits; on SIGTERM (pod deleted, DaemonSet removed or rolled) it
# unloads the module it loaded and exits 0. A module loaded before the pod
# started is left loaded at exit. Readiness: rcvfix is Live in /proc/modules.
# Exit status: 0 clean stop, 1 cannot load or unload (message on stderr).
set -u

say() { echo "rcvfix-loader: $*"; }
die() { echo "rcvfix-loader: error: $*" >&2; exit 1; }

kver=$(uname -r)
dir=/lib/modules/$kver
tmp=${TMPDIR:-/tmp}/rcvfix.ko
ours=0

loaded() { grep -q '^rcvfix ' /proc/modules; }

# module_file: the node's rcvfix.ko for this kernel, uncompressed into $tmp
# (busybox insmod reads plain ELF only).
module_file() {
	[ -r "$dir/modules.dep" ] ||
		die "$dir/modules.dep not readable: mount the host's /lib/modules at /lib/modules"
	rel=$(sed -n 's#^\([^:]*/rcvfix\.ko[.a-z]*\):.*#\1#p' "$dir/modules.dep" |
		head -n 1)
	[ -n "$rel" ] ||
		die "rcvfix is not installed for kernel $kver on this node: install rcvfix-dkms and linux-headers-$kver there (or use the KMM Module)"
	case $rel in
	/*) ;;
	*) rel=$dir/$rel ;;
	esac
	case $rel in
	*.ko) cp "$rel" "$tmp" ;;
	*.ko.xz) unxz -c "$rel" > "$tmp" ;;
	*.ko.gz) gunzip -c "$rel" > "$tmp" ;;
	*) die "$rel: compression not supported by this loader" ;;
	esac || die "cannot read $rel"
	echo "$rel"
}

stop() {
	if [ "$ours" = 1 ] && loaded; then
		rmmod rcvfix || die "rmmod rcvfix failed; it stays loaded"
		say "unloaded rcvfix"
	elif [ "$ours" = 0 ]; then
		say "rcvfix was loaded before this pod: left loaded"
	fi
	exit 0
}
trap stop TERM INT

case ${DEFAULT_ENABLE:-0} in
0 | 1) ;;
*) die "DEFAULT_ENABLE must be 0 or 1, not '$DEFAULT_ENABLE'" ;;
esac

if loaded; then
	say "rcvfix is already loaded on $kver: not loading it again"
else
	ko=$(module_file) || exit 1
	insmod "$tmp" "default_enable=${DEFAULT_ENABLE:-0}" ||
		die "insmod $ko failed (see the node's kernel log)"
	rm -f "$tmp"
	ours=1
	say "loaded $ko with default_enable=${DEFAULT_ENABLE:-0}"
fi

# Sleep in the background so the TERM trap runs at once.
while :; do
	sleep 3600 &
	wait $!
done
