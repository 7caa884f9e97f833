#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The original report: receiver tcp_rmem "4096 425984 40880000", rmem_max
# 40880000, SO_RCVBUF 425984 on the listener (or on a client before
# connect). Enabled, the window scale the peer sees equals the no-SO_RCVBUF
# case; disabled (and stock) it is smaller, because the buffer is locked.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/wscale"

RMEM="4096 425984 40880000"
BUF=425984
BYTES=1048576
# Autotuning is judged on a transfer the receive buffer cannot hold at once
# (a 1 MB one may land whole in an 832 KB buffer and need no growth).
BIG=8388608

rcvfix_unload
a=$(netns_new wsa)	# client side
b=$(netns_new wsb)	# server side
veth_pair "$a" "$b" 10.99.20.1 10.99.20.2 || skip "cannot create veth pair"
rmem_max_set 40880000
for ns in "$a" "$b"; do ns_write /proc/sys/net/ipv4/tcp_rmem "$RMEM" "$ns"; done

port=40200
# run_pair LABEL SERVER_ARGS CLIENT_ARGS: one connection; sets S and C to
# the server's and the client's result lines.
run_pair() {
	local label=$1 out=/tmp/rcvfix-wscale-$$ pid
	port=$((port + 1))
	S= C=
	in_ns "$b" "$RCVFIX_BIN/wscale" server -a 10.99.20.2 -p $port -T 30 \
		$2 > "$out" 2>&1 &
	pid=$!
	if ! wait_for "$out" listening 20; then
		fail "$label: server listening" "$(cat "$out")"
		kill $pid 2> /dev/null
		return 1
	fi
	C=$(in_ns "$a" "$RCVFIX_BIN/wscale" client -a 10.99.20.2 -p $port \
		-T 30 $3 2>&1)
	wait $pid
	S=$(grep '^side=server' "$out")
	rm -f "$out"
	echo "# $label: $S"
	echo "# $label: $C"
	[[ -n $S && $C == side=client* ]] || {
		fail "$label: connection completed" "server: $S" "client: $C"
		return 1
	}
}

# 1. Stock: the reference window scales, then the report's case.
run_pair "stock, no SO_RCVBUF" "" "-s $BYTES" || done_testing
w_srv=$(kv rcv_wscale "$S") w_cli=$(kv rcv_wscale "$C")
check_eq "stock: client sees the server's window scale" "$w_srv" \
	"$(kv snd_wscale "$C")"
check "stock: window scale of an unlocked buffer is large (>= 7)" \
	test "$w_srv" -ge 7

run_pair "stock, listener SO_RCVBUF $BUF" "-r $BUF" "-s $BYTES"
check "stock, listener: window scale smaller than reference" \
	test "$(kv snd_wscale "$C")" -lt "$w_srv"
check_eq "stock, listener: accepted socket locked" 2 \
	$(($(kv lock "$S") & 2))
run_pair "stock, listener SO_RCVBUF $BUF, $BIG bytes" "-r $BUF" "-s $BIG"
check_eq "stock, listener: no autotuning (buffer stays)" "$(kv rcvbuf "$S")" \
	"$(kv rcvbuf_end "$S")"
run_pair "stock, client SO_RCVBUF $BUF" "-s $BYTES" "-r $BUF"
check "stock, client: window scale smaller than reference" \
	test "$(kv snd_wscale "$S")" -lt "$w_cli"

# 2. rcvfix enabled in both namespaces.
rcvfix_load || { fail "load rcvfix"; done_testing; }
rcvfix_enable 1 "$a"
rcvfix_enable 1 "$b"
run_pair "enabled, no SO_RCVBUF" "" "-s $BYTES"
check_eq "enabled, no SO_RCVBUF: same as stock" "$w_srv" "$(kv snd_wscale "$C")"

run_pair "enabled, listener SO_RCVBUF $BUF" "-r $BUF" "-s $BYTES"
check_eq "enabled, listener: client sees the reference window scale" \
	"$w_srv" "$(kv snd_wscale "$C")"
check_eq "enabled, listener: server offers the reference window scale" \
	"$w_srv" "$(kv rcv_wscale "$S")"
check_eq "enabled, listener: listener unlocked" 0 \
	$(($(kv listener_lock "$S") & 2))
check_eq "enabled, listener: listener SO_RCVBUF doubled" $((2 * BUF)) \
	"$(kv listener_rcvbuf "$S")"
check_eq "enabled, listener: accepted socket unlocked" 0 \
	$(($(kv lock "$S") & 2))
check "enabled, listener: accepted SO_RCVBUF at least $((2 * BUF))" \
	test "$(kv rcvbuf "$S")" -ge $((2 * BUF))
check_eq "enabled, listener: all bytes arrived" $BYTES "$(kv received "$S")"
run_pair "enabled, listener SO_RCVBUF $BUF, $BIG bytes" "-r $BUF" "-s $BIG"
check_eq "enabled, listener: all $BIG bytes arrived" $BIG "$(kv received "$S")"
check "enabled, listener: buffer autotunes during the transfer" \
	test "$(kv rcvbuf_end "$S")" -gt "$(kv rcvbuf "$S")"

run_pair "enabled, client SO_RCVBUF $BUF" "-s $BYTES" "-r $BUF"
check_eq "enabled, client: server sees the reference window scale" \
	"$w_cli" "$(kv snd_wscale "$S")"
check_eq "enabled, client: client socket unlocked" 0 $(($(kv lock "$C") & 2))
check_eq "enabled, client: all bytes arrived" $BYTES "$(kv received "$C")"

# 3. Loaded but disabled in the receiver's namespace: stock again.
rcvfix_enable 0 "$b"
run_pair "disabled in server ns, listener SO_RCVBUF $BUF" "-r $BUF" "-s $BYTES"
check "disabled, listener: window scale smaller than reference" \
	test "$(kv snd_wscale "$C")" -lt "$w_srv"
check_eq "disabled, listener: accepted socket locked" 2 \
	$(($(kv lock "$S") & 2))
rcvfix_enable 0 "$a"
run_pair "disabled in client ns, client SO_RCVBUF $BUF" "-s $BYTES" "-r $BUF"
check "disabled, client: window scale smaller than reference" \
	test "$(kv snd_wscale "$S")" -lt "$w_cli"
check_eq "disabled, client: client socket locked" 2 $(($(kv lock "$C") & 2))

done_testing
