#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The per-pod switch through CNI: Debian's own tuning plugin
# (containernetworking-plugins, /usr/lib/cni/tuning) sets net.rcvfix.enable=1
# in a pod's network namespace as a container runtime calls it (ADD, CHECK,
# DEL, config on stdin with a prevResult). The fix is then active in that
# namespace only. Also pins what operators must know: the plugin fails when
# the module is not loaded yet, DEL restores no sysctl, and a module reload
# resets the pod's switch (CHECK reports it).
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/guest/containers.sh"
tuning=/usr/lib/cni/tuning
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt"
[[ -x $tuning ]] ||
	skip "$tuning missing: install containernetworking-plugins (make deps)"

model_init
pod=$(netns_new cnipod)
other=$(netns_new cniother)
# The interface the runtime's main plugin would have made (CHECK looks it up).
ip -n "$pod" link add eth0 type veth peer name eth0-peer

conf_with() {	# conf_with PREV: network config for the plugin
	printf '{"cniVersion":"1.0.0","name":"rcvfix-pods","type":"tuning",%s%s}' \
		'"sysctl":{"net.rcvfix.enable":"1"}' "$1"
}
prev=',"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/run/netns/'$pod'"}],"ips":[]}'
conf=$(conf_with "$prev")

# cni COMMAND [CONF]: run the plugin as a runtime does; sets out and rc.
cni() {
	echo "# + CNI_COMMAND=$1 $tuning"
	rc=0
	out=$(CNI_COMMAND=$1 CNI_CONTAINERID=rcvfix-$$ \
		CNI_NETNS=/run/netns/$pod CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni \
		"$tuning" <<< "${2:-$conf}" 2>&1) || rc=$?
}

# cni_fails DESC MESSAGE: the last call failed with this CNI error message.
cni_fails() {
	local msg
	msg=$(jq -r '.msg' <<< "$out" 2> /dev/null)
	if ((rc != 0)) && [[ $msg == "$2" ]]; then
		ok "$1"
	else
		fail "$1" "exit $rc, expected: $2" "output: $out"
	fi
}

# expect_fix NAME NS EN: SO_RCVBUF of half tcp_rmem[1] there stays unlocked
# (EN=1) or locks (EN=0).
expect_fix() {
	M_EN=$3
	check_eq "$1: net.rcvfix.enable" "$3" "$(rcvfix_enabled "$2")"
	check_sockopt "$1" "$2" rcvbuf=$h new rcvbuf=$((h - 1))
}

# --- ordering: the module must be loaded before the pod's ADD ---------------
cni ADD
cni_fails "ADD with rcvfix not loaded fails with the plugin's error" \
	"open /proc/sys/net/rcvfix/enable: no such file or directory"

rcvfix_load || { fail "load rcvfix"; done_testing; }

cni ADD "$(conf_with "")"
cni_fails "ADD without prevResult is refused" "Required prevResult missing"

# --- ADD: the switch in the pod's namespace only -------------------------
cni ADD
check_eq "ADD succeeds" 0 "$rc"
check_eq "ADD passes the prevResult on" "eth0 /run/netns/$pod" \
	"$(jq -r '.interfaces[0] | "\(.name) \(.sandbox)"' <<< "$out" 2>&1)"
expect_fix "pod (ADD done)" "$pod" 1
expect_fix "other namespace" "$other" 0
expect_fix "initial namespace" "" 0

# --- CHECK: compares the sysctl with the config ----------------------------
cni CHECK
check_eq "CHECK succeeds while the switch is 1" "0 " "$rc $out"
rcvfix_enable 0 "$pod"
cni CHECK
cni_fails "CHECK reports a switch turned off by hand" \
	"Error: Tuning configured value of /proc/sys/net/rcvfix/enable is 1, current value is 0"
rcvfix_enable 1 "$pod"

# --- a module reload resets every namespace to default_enable ---------------
rcvfix_unload
cni CHECK
cni_fails "CHECK with rcvfix unloaded fails" \
	"open /proc/sys/net/rcvfix/enable: no such file or directory"
rcvfix_load || { fail "reload rcvfix"; done_testing; }
cni CHECK
cni_fails "after a reload CHECK sees the pod's switch back at default_enable" \
	"Error: Tuning configured value of /proc/sys/net/rcvfix/enable is 1, current value is 0"
expect_fix "pod after reload" "$pod" 0
cni ADD
check_eq "ADD again re-enables it" 0 "$rc"
expect_fix "pod after the second ADD" "$pod" 1

# --- DEL: restores MAC/MTU/promisc backups only, never a sysctl -----------
cni DEL
check_eq "DEL succeeds" "0 " "$rc $out"
check_eq "DEL leaves net.rcvfix.enable as it was (no sysctl restore)" 1 \
	"$(rcvfix_enabled "$pod")"
rcvfix_unload
cni DEL
check_eq "DEL succeeds with rcvfix unloaded (teardown never blocks)" "0 " \
	"$rc $out"

done_testing
