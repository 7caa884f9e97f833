#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TCP_WINDOW_CLAMP after SO_RCVBUF on an established TCP socket (client after
# connect, accepted socket), compared with stock observed in this run. Since
# Linux 7.1 a locking SO_RCVBUF also sets the window clamp (set_rcvbuf):
# rcvfix must do the same for every request it locks; a request whose lock
# it avoids raises the clamp to the new buffer's window, never lowers it,
# and never one the application set (TCP_WINDOW_CLAMP $UCLAMP, then
# SO_RCVBUF): stock keeps it before 7.1 and sets the buffer's window since,
# both read back as stock's (issue 33).
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/wscale"

rcvfix_unload
client_server cl 22
T=$(tcp_rmem1 "$sns")
SMALL=2048		# doubled: 4096, below tcp_rmem[1]: locked
BIG=$((T / 2))		# doubled: tcp_rmem[1]: the lock is avoided
UCLAMP=$((T / 4))	# an application's clamp, below the buffer's window
port=42200

# pair LABEL SERVER_ARGS CLIENT_ARGS: one connection, sets S and C.
pair() {
	port=$((port + 1))
	wscale_pair "$1" "$sns" "$cns" 10.99.22.2 $port "$2" "$3"
}
# fields LINE: what must equal stock for a locked request
fields() { echo "clamp=$(kv clamp "$1") rcvbuf=$(kv rcvbuf "$1") lock=$(kv lock "$1")"; }

declare -A ref
run_all() {	# run_all TAG: every case, results into ref[TAG,case]
	pair "$1 none" "" "" || return 1
	ref[$1,none_c]=$(fields "$C") ref[$1,none_s]=$(fields "$S")
	pair "$1 client $SMALL" "" "-w conn -r $SMALL" || return 1
	ref[$1,small_c]=$(fields "$C")
	pair "$1 accepted $SMALL" "-w conn -r $SMALL" "" || return 1
	ref[$1,small_s]=$(fields "$S")
	pair "$1 client $BIG" "" "-w conn -r $BIG" || return 1
	ref[$1,big_c]=$(fields "$C")
	pair "$1 accepted $BIG" "-w conn -r $BIG" "" || return 1
	ref[$1,big_s]=$(fields "$S")
	pair "$1 client clamp $UCLAMP, $BIG" "" "-w conn -c $UCLAMP -r $BIG" || return 1
	ref[$1,uclamp_c]=$(fields "$C")
	pair "$1 accepted clamp $UCLAMP, $BIG" "-w conn -c $UCLAMP -r $BIG" "" || return 1
	ref[$1,uclamp_s]=$(fields "$S")
}

run_all stock || done_testing
check_eq "stock: SO_RCVBUF $SMALL locks" 2 "$(kv lock "${ref[stock,small_c]}")"

rcvfix_load || { fail "load rcvfix"; done_testing; }
rcvfix_enable 1 "$cns"
rcvfix_enable 1 "$sns"
run_all fixed || done_testing

check_eq "locked, client after connect: clamp, buffer, lock as stock" \
	"${ref[stock,small_c]}" "${ref[fixed,small_c]}"
check_eq "locked, accepted socket: clamp, buffer, lock as stock" \
	"${ref[stock,small_s]}" "${ref[fixed,small_s]}"
check_eq "no SO_RCVBUF: clamp as stock (client)" \
	"${ref[stock,none_c]}" "${ref[fixed,none_c]}"
# Avoided: the buffer size that stock sets, no lock, and a clamp never
# below that of a socket without SO_RCVBUF: raised to the new buffer's
# window, as autotuning raises it when it grows the buffer.
for side in c s; do
	what=client; [[ $side == s ]] && what=accepted
	expect="rcvbuf=$(kv rcvbuf "${ref[stock,big_$side]}") lock=0"
	got="rcvbuf=$(kv rcvbuf "${ref[fixed,big_$side]}") lock=$(kv lock "${ref[fixed,big_$side]}")"
	check_eq "avoided, $what: buffer as stock, unlocked" "$expect" "$got"
	check "avoided, $what: clamp $(kv clamp "${ref[fixed,big_$side]}") at least as without SO_RCVBUF ($(kv clamp "${ref[stock,none_$side]}"))" \
		test "$(kv clamp "${ref[fixed,big_$side]}")" -ge "$(kv clamp "${ref[stock,none_$side]}")"
done
# An application's clamp: as stock (kept before 7.1, the buffer's window
# since), the buffer unlocked.
for side in c s; do
	what=client; [[ $side == s ]] && what=accepted
	check_eq "avoided, $what, TCP_WINDOW_CLAMP $UCLAMP set before: clamp and buffer as stock, unlocked" \
		"$(kv clamp "${ref[stock,uclamp_$side]}") $(kv rcvbuf "${ref[stock,uclamp_$side]}") 0" \
		"$(kv clamp "${ref[fixed,uclamp_$side]}") $(kv rcvbuf "${ref[fixed,uclamp_$side]}") $(kv lock "${ref[fixed,uclamp_$side]}")"
done

done_testing
