#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the harness initramfs (built by mkinitramfs.sh): loads the 9p or
# virtiofs modules, mounts the host's / read-only with tmpfs on /tmp and /run,
# mounts the repository at its host path, then hands over to
# tests/guest/run.sh. Kernel command line: rcvfix_repo=<repo path> (becomes
# our environment), rcvfix_root_fs=9p|virtiofs, rcvfix_moddir=,
# rcvfix_tty_alias= (optional, from vm.sh).

/bin/busybox --install -s /bin
export PATH=/bin

fail() {
	echo "rcvfix-init: FAILED: $*" > /dev/console
	poweroff -f
	sleep 60
}

mount -t devtmpfs devtmpfs /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys

for m in /modules/*.ko; do
	[ -e "$m" ] || continue	# all built in (6.12 cloud)
	insmod "$m" || fail "insmod $m"
done

if [ "$rcvfix_root_fs" = virtiofs ]; then
	fs=virtiofs opts=ro
else
	fs=9p opts=trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose
fi
mount_share() {	# mount_share TAG DIR: retry while the virtio device is probed
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		mount -t $fs -o "$opts" "$1" "$2" 2> /dev/null && return 0
		sleep 0.2
	done
	mount -t $fs -o "$opts" "$1" "$2"
}

[ -n "$rcvfix_repo" ] || fail "no rcvfix_repo= on the kernel command line"
mount_share hostroot /newroot || fail "cannot mount the host root over $fs"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/tmp ||
	fail "cannot mount /tmp"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs /newroot/run ||
	fail "cannot mount /run"
# The repository may live under the host's /tmp, now hidden: mount it again.
mkdir -p "/newroot$rcvfix_repo" 2> /dev/null
mount_share repo "/newroot$rcvfix_repo" || fail "cannot mount the repository"
# A kernel unpacked from packages (vm.sh: rcvfix_moddir=) brings its modules
# folder: bind it over /lib/modules/<release>, on a tmpfs if the host has none.
if [ -n "$rcvfix_moddir" ]; then
	d=/newroot/lib/modules/$(uname -r)
	[ -d "$d" ] || { mount -t tmpfs -o mode=755 tmpfs /newroot/lib/modules &&
		mkdir "$d"; } || fail "cannot create $d"
	mount --bind "/newroot$rcvfix_moddir" "$d" || fail "cannot bind $rcvfix_moddir"
fi

umount /proc /sys
mount --move /dev /newroot/dev || fail "cannot move /dev"
# A board with one UART (vm.sh: rcvfix_tty_alias=ttyS0=ttyAMA0,ttyS1=hvc0):
# the names run.sh writes to become links to the devices it has.
for a in $(echo "${rcvfix_tty_alias:-}" | tr , ' '); do
	ln -sfn "${a#*=}" "/newroot/dev/${a%%=*}" || fail "cannot link ${a%%=*}"
done
exec switch_root /newroot /bin/bash "$rcvfix_repo/tests/guest/run.sh"
fail "switch_root failed"
