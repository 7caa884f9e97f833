#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Not one byte lost: one client socket used for three connections in a row
# through connect(AF_UNSPEC), as the kernel's own selftest does
# (mptcp_connect.sh's "full disconnect" group, mptcp_connect -I 3), 1 MB
# each way per connection over loopback, every byte read checked against
# the pattern its sender wrote at that offset (reconnect). The client sets
# SO_RCVBUF after each connect, at tcp_rmem[1] (65536, doubled: 131072)
# and above it (131072: 262144), so rcvfix leaves its buffer unlocked.
# Pairs: MPTCP client of a plain TCP server (active fallback), MPTCP to
# MPTCP, TCP client of an MPTCP server (passive fallback). rcvfix loaded,
# the namespace disabled (stock), then enabled, in one boot.
#
# Issue 50: on 6.12 a fallen-back MPTCP client lost one byte mid-stream in
# about one connection of three with rcvfix enabled (the second of each
# socket: autotuning grew the unlocked buffer, SO_RCVBUF at the next
# connect shrank it below the window offered, data parked on the subflow
# when the server's FIN arrived, and the kernel's dummy DATA_FIN was placed
# before that data: see module/mptcp_datafin.c). Four sockets of the
# MPTCP client of a TCP server per cell: on main before the fix, 3 of 4
# sockets lost a byte.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/reconnect"

rcvfix_unload
ns=$(netns_new rc) || skip "cannot create a namespace"
in_ns "$ns" "$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1 ||
	skip "no MPTCP sockets on this kernel"
ns_write /proc/sys/net/ipv4/tcp_rmem "4096 131072 6291456" "$ns"
ns_write /proc/sys/net/mptcp/enabled 1 "$ns"
rcvfix_load || skip "cannot load rcvfix"
# Below ip_local_port_range (32768-60999): its many client sockets take
# ephemeral ports, and one of them in the range made a later listener's
# bind() fail with EADDRINUSE (6.1, once).
port=24600

# cell STATE CLIENT SERVER SO_RCVBUF ROUNDS: ROUNDS client sockets of
# three connections each; every byte of both directions must arrive.
cell() {
	local out rc
	port=$((port + 1))
	out=$(in_ns "$ns" "$RCVFIX_BIN/reconnect" -c "$2" -s "$3" -R "$4" \
		-r "$5" -n 3 -b 1048576 -p $port -T "$(scaled 100)" 2>&1)
	rc=$?
	echo "# $1 $2->$3 SO_RCVBUF $4: $(grep summary <<< "$out")"
	if ((rc == 0)); then
		ok "$1 $2 client, $3 server, SO_RCVBUF $4: every byte intact"
	else
		fail "$1 $2 client, $3 server, SO_RCVBUF $4: every byte intact" \
			"exit $rc" "$(grep -v summary <<< "$out" | head -5)"
	fi
}

for state in disabled enabled; do
	if [[ $state == enabled ]]; then
		rcvfix_enable 1 "$ns"
	else
		rcvfix_enable 0 "$ns"
	fi
	check_eq "$state: net.rcvfix.enable" $([[ $state == enabled ]] && echo 1 || echo 0) \
		"$(rcvfix_enabled "$ns")"
	for buf in 65536 131072; do
		cell $state mptcp tcp $buf 4
		cell $state mptcp mptcp $buf 1
		cell $state tcp mptcp $buf 1
	done
done

done_testing
