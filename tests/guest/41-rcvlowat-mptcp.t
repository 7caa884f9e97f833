#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The SO_RCVLOWAT wakeup fix on every stream socket: TCP and MPTCP, IPv4
# and IPv6, the namespace's switch off and on in one boot. A poll()+recv()
# reader with a 512 KiB mark is woken about twice per MiB and reads the
# mark each time (a "short" wakeup reads less, EOF aside), where a reader
# without one is woken per segment of a paced sender. And the socket is
# reported readable (poll, epoll) only at the mark, at once when the mark
# is lowered below what is queued, and at the end of the stream.
#
# Before Linux 6.7 MPTCP had none of it (6.1: woken and readable on any
# byte); rcvfix reports "mptcp:rcvfix" there and fixes it where enabled,
# and the disabled cells show the kernel's own per-packet wakeups. On 6.12
# and newer the kernel has the rule and rcvfix adds TCP's wakeup when the
# queue cannot grow (test 42): "mptcp:native+rcvfix", and every cell holds
# either way. A kernel without MPTCP (Debian's 5.10) reports "mptcp:none"
# and runs the TCP cells.
# About 60 s on 6.1 under emulation (IPv6: make check-all).
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/lowat"

LOWAT=524288
MIB=1048576

rcvfix_unload
rcvfix_load || { fail "load rcvfix"; done_testing; }
state=$(rcvfix_status rcvlowat_wakeup)
echo "# rcvlowat_wakeup $state"
mptcp=${state#*mptcp:}
# Debian's 5.10 is built without MPTCP: there only TCP is measured.
protos="tcp mptcp"
if "$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1; then
	check "/proc/net/rcvfix: rcvlowat_wakeup tcp:native,mptcp:native+rcvfix|rcvfix" \
		grep -qxE 'tcp:native,mptcp:(native\+rcvfix|rcvfix)' <<< "$state"
else
	check_eq "/proc/net/rcvfix: rcvlowat_wakeup without MPTCP sockets" \
		tcp:native,mptcp:none "$state"
	protos=tcp
fi

# Where rcvfix fixes MPTCP (6.1) or adds TCP's net to its rule (6.7+) it
# reads struct mptcp_sock's layout from the kernel's BTF: an unreadable one
# leaves MPTCP to the kernel (mptcp:kernel, or mptcp:native), says why in
# one line, and the rest of rcvfix loads (a file of another kind, then a
# truncated copy, bind-mounted over /sys/kernel/btf/vmlinux).
if [[ $mptcp == rcvfix || $mptcp == native+rcvfix ]]; then
	btf=/sys/kernel/btf/vmlinux fake=/tmp/rcvfix-btf41-$$
	left=kernel why='MPTCP lacks the SO_RCVLOWAT wakeup fix'
	[[ $mptcp == rcvfix ]] || left=native \
		why="MPTCP's SO_RCVLOWAT rule lacks TCP's wakeup when the queue cannot grow"
	for kind in other truncated; do
		if [[ $kind == other ]]; then
			head -c 65536 /dev/zero > "$fake"
		else
			head -c 1048576 "$btf" > "$fake"
		fi
		rcvfix_unload
		mount --bind "$fake" "$btf" ||
			{ fail "bind-mount a $kind BTF file"; continue; }
		dmesg_mark "btf $kind"
		rcvfix_load
		r=$?
		umount "$btf"
		check_eq "BTF $kind: rcvfix loads" 0 $r
		check_eq "BTF $kind: MPTCP left to the kernel" \
			tcp:native,mptcp:$left "$(rcvfix_status rcvlowat_wakeup)"
		check "BTF $kind: mptcp_poll not hooked" \
			grep -qv mptcp_poll <<< "$(rcvfix_status targets)"
		line=$(dmesg_since_mark "btf $kind" | grep 'rcvfix leaves it so')
		echo "# BTF $kind: ${line#*] }"
		check "BTF $kind: one log line says why" \
			grep -qF "$why and rcvfix leaves it so: " <<< "$line"
		check "BTF $kind: ... naming the BTF file" \
			grep -q '/sys/kernel/btf/vmlinux' <<< "$line"
	done
	rm -f "$fake"
	rcvfix_unload
	rcvfix_load || { fail "load rcvfix again"; done_testing; }
	check_eq "BTF readable again: rcvfix in force for MPTCP" \
		"tcp:native,mptcp:$mptcp" "$(rcvfix_status rcvlowat_wakeup)"
fi

snd=$(netns_new lwa)	# sender
rcv=$(netns_new lwb)	# receiver
veth_pair "$snd" "$rcv" 10.99.41.1 10.99.41.2 || skip "cannot create veth pair"
if ! ip -n "$snd" addr add fd99:41::1/64 dev "veth-$$-a" nodad ||
	! ip -n "$rcv" addr add fd99:41::2/64 dev "veth-$$-b" nodad; then
	skip "cannot add IPv6 addresses"
fi
for ns in "$snd" "$rcv"; do ns_write /proc/sys/net/mptcp/enabled 1 "$ns"; done
declare -A ADDR=([4]=10.99.41.2 [6]=fd99:41::2)
port=41400

# measure LABEL ARGS LOWAT SEND_ARGS: sets R to the receiver's result line.
measure() {
	local out=/tmp/rcvfix-lowat41-$$
	port=$((port + 1))
	in_ns "$rcv" "$RCVFIX_BIN/lowat" recv $2 -p $port -l "$3" -T 60 \
		> "$out" 2>&1 &
	wait_for "$out" listening 20
	in_ns "$snd" "$RCVFIX_BIN/lowat" send $2 -p $port -T 60 $4 > /dev/null
	wait
	R=$(grep '^lowat=' "$out")
	echo "# $1: $R"
	[[ -n $R ]] || fail "$1: transfer completed" "$(cat "$out")"
	rm -f "$out"
}

PACED="-n $((4 * MIB)) -c 4096 -g 100"	# 4 KiB writes, 100 us apart
BULK="-n $((8 * MIB))"

# IPv6 repeats IPv4's cells over the other family: make check-all (the
# MPTCP states of test 43 take make check's time).
fams=4
if (check_all_only "IPv6 cells" > /dev/null); then
	fams="4 6"
else
	echo "# IPv6 cells: make check-all only"
fi

for en in 0 1; do
	rcvfix_enable $en "$snd"
	rcvfix_enable $en "$rcv"
	for fam in $fams; do
		for proto in $protos; do
			args="-a ${ADDR[$fam]}"
			[[ $proto == mptcp ]] && args+=" -m"
			cell="$proto/ipv$fam, enable=$en"
			# the kernel's own MPTCP wakes per packet: 6.1 disabled
			stock=0
			[[ $proto == mptcp && $mptcp == rcvfix && $en == 0 ]] &&
				stock=1

			measure "$cell, paced, no mark" "$args" 0 "$PACED"
			check_eq "$cell, paced, no mark: all bytes read" \
				$((4 * MIB)) "$(kv bytes "$R")"
			check "$cell, paced, no mark: woken per segment (>= 32 per MiB)" \
				test "$(per_mib_x100 "$R")" -ge 3200
			for traffic in paced bulk; do
				send=$PACED total=$((4 * MIB))
				[[ $traffic == bulk ]] && send=$BULK total=$((8 * MIB))
				measure "$cell, $traffic, mark 512K" "$args" \
					$LOWAT "$send"
				check_eq "$cell, $traffic, mark 512K: all bytes read" \
					$total "$(kv bytes "$R")"
				w=$(per_mib_x100 "$R") s=$(kv short "$R")
				if ((stock)); then
					[[ $traffic == paced ]] &&
					check "$cell, paced, mark 512K: the kernel's own per-packet wakeups (>= 32 per MiB), as stock" \
						test "$w" -ge 3200
					continue
				fi
				check "$cell, $traffic, mark 512K: at most 3 wakeups per MiB ($w/100)" \
					test "$w" -le 300
				check "$cell, $traffic, mark 512K: at most 2 short reads ($s)" \
					test "$s" -le 2
			done

			# readiness: poll, epoll, a lowered mark, blocking recv, EOF
			port=$((port + 1))
			R=$(in_ns "$rcv" "$RCVFIX_BIN/lowat" ready $args -p $port \
				-l $LOWAT -T 60 2>&1)
			echo "# $cell, readiness: $R"
			if ((stock)); then
				check_eq "$cell: readable below the mark, as stock" \
					1 "$(kv below_poll "$R")"
				continue
			fi
			check_eq "$cell: poll() below the mark: not readable" \
				0 "$(kv below_poll "$R")"
			check_eq "$cell: epoll below the mark: not readable" \
				0 "$(kv below_epoll "$R")"
			v=$(kv lowered_ms "$R")
			check "$cell: mark lowered below the queue 300 ms in: woken then ($v ms)" \
				test "${v:--1}" -ge 200 -a "${v:--1}" -le 2000
			v=$(kv above_ms "$R")
			check "$cell: the mark reached: readable ($v ms)" \
				test "${v:--1}" -ge 0 -a "${v:--1}" -le 2000
			check "$cell: the mark reached: a read gets at least the mark" \
				test "$(kv above_read "$R")" -ge $LOWAT
			check "$cell: blocking recv() returns at least the mark" \
				test "$(kv wait_read "$R")" -ge $LOWAT
			check "$cell: blocking recv() waited for the mark ($(kv wait_ms "$R") ms)" \
				test "$(kv wait_ms "$R")" -ge 200
			v=$(kv eof_ms "$R")
			check "$cell: below the mark, then EOF: readable ($v ms)" \
				test "${v:--1}" -ge 0 -a "${v:--1}" -le 2000
		done
	done
done

done_testing
