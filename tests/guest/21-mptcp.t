#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MPTCP sockets and their subflows, compared with stock observed in this run
# (module not loaded). tcp_rmem "4096 425984 40880000", rmem_max 40880000:
# SO_RCVBUF 425984 is a request whose lock rcvfix avoids, 2048 one it locks.
#  - listener, SO_RCVBUF before bind (on 6.1 the first subflow exists from
#    socket()) or after listen(), a plain TCP client: the window scale the
#    client sees and the accepted socket's lock;
#  - MPTCP client before connect, and both ends once established: the MPTCP
#    socket's lock, and the subflow's receive buffer (ss skmem rb), which
#    stock locks to the MPTCP socket's buffer and rcvfix sets to it.
# A locked request must give every field as stock; an avoided one the
# values of a connection without SO_RCVBUF, except the buffer size itself.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/wscale"

rcvfix_unload
client_server mp 21
mptcp_client_server "4096 425984 40880000"
rmem_max_set 40880000
BIG=425984 SMALL=2048
port=42100

declare -A r	# r[TAG,CASE]: result fields
# pair TAG CASE SERVER_ARGS CLIENT_ARGS: one connection; stores
#   r[TAG,CASE.s], r[TAG,CASE.c] (wscale lines) and r[TAG,CASE.rb] (subflow)
pair() {
	port=$((port + 1))
	wscale_pair "$1 $2" "$sns" "$cns" 10.99.21.2 $port "$3" "$4" || return 1
	r[$1,$2.s]=$S r[$1,$2.c]=$C r[$1,$2.rb]=$(ss_rb "$SS")
}

# Every case, for TAG; SIZE is BIG or SMALL.
run_cases() {
	local tag=$1 v
	pair "$tag" none "-m" "" || return 1
	pair "$tag" mnone "-m" "-m" || return 1
	for v in $BIG $SMALL; do
		pair "$tag" "bind$v" "-m -r $v" "" || return 1
		pair "$tag" "listen$v" "-m -w listen -r $v" "" || return 1
		pair "$tag" "acc$v" "-m -w conn -r $v" "-m" || return 1
		pair "$tag" "cli$v" "-m" "-m -r $v" || return 1
		pair "$tag" "est$v" "-m" "-m -w conn -r $v" || return 1
	done
}

# fields LINE: the fields a locked request must leave as stock.
fields() {
	local k out=
	for k in rcv_wscale snd_wscale rcvbuf lock clamp subflows; do
		out+="$k=$(kv $k "$1") "
	done
	echo "$out"
}

run_cases stock || done_testing
check "stock: listener SO_RCVBUF $BIG after listen locks the subflows (smaller window scale)" \
	test "$(kv snd_wscale "${r[stock,listen$BIG.c]}")" -lt \
	"$(kv snd_wscale "${r[stock,none.c]}")"

rcvfix_load || { fail "load rcvfix"; done_testing; }
rcvfix_enable 1 "$cns"
rcvfix_enable 1 "$sns"
run_cases fixed || done_testing

# Locked requests: as stock, every field, both ends, and the subflow buffer.
for c in bind listen acc cli est; do
	k=$c$SMALL
	check_eq "locked ($c, SO_RCVBUF $SMALL): server as stock" \
		"$(fields "${r[stock,$k.s]}")" "$(fields "${r[fixed,$k.s]}")"
	check_eq "locked ($c, SO_RCVBUF $SMALL): client as stock" \
		"$(fields "${r[stock,$k.c]}")" "$(fields "${r[fixed,$k.c]}")"
	check_eq "locked ($c, SO_RCVBUF $SMALL): subflow buffer as stock" \
		"${r[stock,$k.rb]}" "${r[fixed,$k.rb]}"
done

# Avoided: the window scale of a connection without SO_RCVBUF, no lock.
nw=$(kv snd_wscale "${r[stock,none.c]}")
for c in bind listen; do
	k=$c$BIG
	check_eq "avoided (listener, $c): plain TCP client sees the window scale without SO_RCVBUF" \
		"$nw" "$(kv snd_wscale "${r[fixed,$k.c]}")"
	check_eq "avoided (listener, $c): accepted socket unlocked" 0 \
		"$(kv lock "${r[fixed,$k.s]}")"
done
check_eq "avoided (MPTCP client before connect): server sees its window scale without SO_RCVBUF" \
	"$(kv snd_wscale "${r[stock,mnone.s]}")" "$(kv snd_wscale "${r[fixed,cli$BIG.s]}")"
check_eq "avoided (MPTCP client before connect): unlocked" 0 \
	"$(kv lock "${r[fixed,cli$BIG.c]}")"
check_eq "avoided (accepted): unlocked" 0 "$(kv lock "${r[fixed,acc$BIG.s]}")"
check_eq "avoided (established client): unlocked" 0 "$(kv lock "${r[fixed,est$BIG.c]}")"
check "stock (established client): the subflow gets the MPTCP socket's locked buffer" \
	test "${r[stock,est$BIG.rb]}" = "$(kv rcvbuf "${r[stock,est$BIG.c]}")"
# Once established, the subflows take the MPTCP socket's buffer as on
# stock (left alone, they kept their setup window for good: issue 36); the
# sync's lock goes with their first data (23-lifetime times that).
check_eq "avoided (established client): the subflow gets the MPTCP socket's buffer, as on stock" \
	"$(kv rcvbuf "${r[fixed,est$BIG.c]}")" "${r[fixed,est$BIG.rb]}"

done_testing
