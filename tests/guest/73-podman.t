#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The per-container switch through Podman (crun): `podman run --network=none
# --sysctl net.rcvfix.enable=1 --rootfs DIR` sets the switch in the
# container's own network namespace, where SO_RCVBUF then stays unlocked, and
# nowhere else; `--network=host` with the sysctl is refused, and so is any
# container asking for it while the module is not loaded, and a container
# in its own user namespace (EPERM: it would arm host-wide hooks).
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/guest/containers.sh"
check_all_only "four podman runs, about 40 s per kernel"
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt"
podman_setup || { fail "podman setup"; done_testing; }

model_init
probe=("rcvbuf=$h" new "rcvbuf=$((h - 1))")
root=/tmp/rcvfix-rootfs-$$
on_exit "rm -rf $root"
rootfs_new "$root" "$RCVFIX_BIN/sockopt" || { fail "rootfs"; done_testing; }

# run_in NAME EN PODMAN_RUN_ARGS...: the container prints its switch, then
# sockopt runs the probe there; both must match the rule for EN.
run_in() {
	local name=$1 out err=/tmp/rcvfix-podman-err-$$
	M_EN=$2
	shift 2
	echo "# + podman run $* --rootfs $root ..."
	out=$(podman run --rm "$@" --rootfs "$root" /bin/sh -c \
		'cat /proc/sys/net/rcvfix/enable && exec sockopt "$@"' sh \
		"${probe[@]}" 2> "$err")
	check_eq "$name: podman run exit status" 0 "$?"
	[[ ! -s $err ]] || sed 's/^/# stderr: /' "$err"
	check_eq "$name: net.rcvfix.enable in the container" "$M_EN" \
		"$(head -n 1 <<< "$out")"
	check_eq "$name: SO_RCVBUF in the container" \
		"$(sockopt_model "${probe[@]}")" "$(tail -n +2 <<< "$out")"
}

# refused NAME STATUS MESSAGE PODMAN_RUN_ARGS...: podman fails with STATUS
# and MESSAGE on stderr.
refused() {
	local name=$1 code=$2 text=$3 out st
	shift 3
	echo "# + podman run $* --rootfs $root ..."
	out=$(podman run --rm "$@" --rootfs "$root" /bin/cat \
		/proc/sys/net/rcvfix/enable 2>&1)
	st=$?
	if [[ $st == "$code" && $out == *"$text"* ]]; then
		ok "$name"
	else
		fail "$name" "expected exit $code and: $text" "exit $st: $out"
	fi
}

refused "module not loaded: --sysctl net.rcvfix.enable=1 fails in crun" 127 \
	"crun: open /proc/sys/net/rcvfix/enable: No such file or directory" \
	--network=none --sysctl net.rcvfix.enable=1

rcvfix_load || { fail "load rcvfix"; done_testing; }
run_in "--sysctl net.rcvfix.enable=1" 1 \
	--network=none --sysctl net.rcvfix.enable=1
check_eq "the initial namespace keeps net.rcvfix.enable 0" 0 "$(rcvfix_enabled)"
run_in "no --sysctl" 0 --network=none
refused "--network=host with the sysctl is refused" 125 \
	"sysctl net.rcvfix.enable=1 can't be set since Network Namespace set to host" \
	--network=host --sysctl net.rcvfix.enable=1
check_eq "still 0 in the initial namespace" 0 "$(rcvfix_enabled)"
# A container in its own user namespace (what rootless Podman and pods with
# hostUsers: false get) may not arm host-wide hooks: EPERM.
arms=$(rcvfix_status arms)
refused "own user namespace (--uidmap): --sysctl net.rcvfix.enable=1 gets EPERM" 126 \
	"crun: write to /proc/sys/net/rcvfix/enable: Operation not permitted" \
	--network=none --uidmap 0:100000:65536 --gidmap 0:100000:65536 \
	--sysctl net.rcvfix.enable=1
check_eq "nothing armed for it" "$arms" "$(rcvfix_status arms)"

done_testing
