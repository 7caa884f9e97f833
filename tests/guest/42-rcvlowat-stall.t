#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# No SO_RCVLOWAT reader is left asleep: a request/response exchange whose
# server has a mark its receive buffer cannot hold (tests/progs/lowatstall:
# 4 MiB request, 512 KiB mark lowered to what is left after each read, a
# blocking reader's to 1: see lowatstall's tail_lowat(); a one-byte reply),
# TCP and MPTCP, the namespace's switch off and on in one boot. TCP wakes
# such a reader when its queue cannot grow (tcp_epollin_ready()): every TCP
# cell completes, and with rcvfix enabled every MPTCP cell does too,
# however the reader waits (poll, epoll level- and edge-triggered, a
# blocking recv(), io_uring's recv) and however the mark became unreachable:
#   rcvbuf    SO_RCVLOWAT, then SO_RCVBUF 32768 (a 65536-byte locked buffer)
#   force     the same with SO_RCVBUFFORCE
#   listener  both set on the listener, inherited by the connection
# (tcp_rmem lowered after the mark is not a way: the buffer the mark grew
# stays, on TCP and MPTCP alike.) With rcvfix disabled the MPTCP cells
# record the kernel's own behaviour without failing: 6.12 and 7.x leave
# that reader asleep (no EPOLLIN while the sender waits), 6.1 wakes it on
# every byte. About 60 s under emulation.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/lowatstall"

MIB=1048576
TOTAL=$((4 * MIB))

rcvfix_unload
rcvfix_load || { fail "load rcvfix"; done_testing; }
state=$(rcvfix_status rcvlowat_wakeup)
echo "# rcvlowat_wakeup $state"
protos="tcp mptcp"
"$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1 || protos=tcp

snd=$(netns_new lsa)	# the client: sends the request
rcv=$(netns_new lsb)	# the server: reads it with a mark
veth_pair "$snd" "$rcv" 10.99.42.1 10.99.42.2 || skip "cannot create veth pair"
for ns in "$snd" "$rcv"; do ns_write /proc/sys/net/mptcp/enabled 1 "$ns"; done
port=42400

# exchange PROTO SCENARIO WAIT STALL_S: one exchange; sets S and C to the
# server's and the client's result lines.
exchange() {
	local out=/tmp/rcvfix-stall42-$$ args="-a 10.99.42.2 -n $TOTAL" srv
	port=$((port + 1))
	[[ $1 == mptcp ]] && args+=" -m"
	case $2 in
	rcvbuf) srv= ;;
	force) srv=-F ;;
	listener) srv=-L ;;
	esac
	in_ns "$rcv" "$RCVFIX_BIN/lowatstall" server $args -p $port $srv \
		-w "$3" -t "$4" -T $(($4 + 60)) > "$out" 2>&1 &
	wait_for "$out" listening 20
	C=$(in_ns "$snd" timeout $(($4 + 30)) "$RCVFIX_BIN/lowatstall" client \
		$args -p $port -T $(($4 + 30)) 2>&1)
	wait
	S=$(grep '^result=' "$out" || cat "$out")
	rm -f "$out"
}

# The reader's stall timeout: ample where it must be woken, short where
# the disabled cells record the kernel's own stall.
STALL_OK=$(scaled 5)
STALL_STOCK=3

for en in 0 1; do
	rcvfix_enable $en "$snd"
	rcvfix_enable $en "$rcv"
	waits="poll epoll epollet block uring"
	((en)) || waits="epoll block"
	for scenario in rcvbuf force listener; do
		for wait in $waits; do
			for proto in $protos; do
				cell="$proto, $scenario, $wait, enable=$en"
				stall=$STALL_OK
				[[ $proto == mptcp && $en == 0 ]] && stall=$STALL_STOCK
				exchange $proto $scenario $wait $stall
				echo "# $cell: server $S; client $C"
				if [[ $proto == mptcp && $en == 0 ]]; then
					echo "# $cell: the kernel's own: $(kv result "$S") in $(kv seconds "$S") s"
					continue
				fi
				check_eq "$cell: the server read the request" \
					done "$(kv result "$S")"
				check_eq "$cell: the client got the reply" \
					done "$(kv result "$C")"
			done
		done
	done
done

done_testing
