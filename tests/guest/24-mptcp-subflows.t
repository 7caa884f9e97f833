#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MPTCP subflows and the buffer rcvfix gives them, in the cases a review of
# the module found wrong (issue 33), compared with stock observed in this
# run where stock has an answer. tcp_rmem[1] 131072, rmem_max 40880000.
#  - A lock the rule itself sets on a subflow stays: bpf_setsockopt(SO_RCVBUF,
#    16384) from a sock_ops program at ACTIVE_ESTABLISHED_CB (doubled, under
#    tcp_rmem[1]: locked), then 1 KB each way (earlier rcvfix dropped it at
#    the first data, in mptcp_data_ready()).
#  - A listener's SO_RCVBUF 2 MB then 128 KB (both unlocked: doubled, at
#    least tcp_rmem[1]) gives accepted subflows the second buffer, as stock
#    (which locks it); before bind and after listen, and with a connection
#    accepted between the two (earlier rcvfix only grew the listener's
#    subflow, at a SYN: the second got 4 MB).
#  - An established subflow keeps its own buffer when its input route goes
#    (an `ip route add` in its namespace: tcp_rcv_established() calls the
#    subflow's sk_rx_dst_set, subflow_finish_connect(), again; earlier
#    rcvfix gave it its MPTCP socket's buffer there).
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/wscale" "$RCVFIX_BIN/sockdiff" \
	"$RCVFIX_BIN/bpf_rcvbuf" "$RCVFIX_BIN/sockopt"

rcvfix_unload
client_server sf 24
cgroup2_mount || skip "cannot mount cgroup2"
CG=$CGROUP2/rcvfix-sf-$$
on_exit "rmdir $CG 2> /dev/null"
mptcp_client_server "4096 131072 40880000"
rmem_max_set 40880000
port=42400

# subflow_lock TAG: the rule's lock on the client's subflow, after data
# (sockdiff's 1 KB each way, every byte checked: exit 1 if one differs).
subflow_lock() {
	local out st
	port=$((port + 1))
	out=$("$RCVFIX_BIN/bpf_rcvbuf" -g "$CG" -p $port -A 16384 \
		-T "$(scaled 60)" -- ip netns exec "$cns" \
		"$RCVFIX_BIN/sockdiff" -p $port mptcp:bpf:rcvbuf:small 2>&1)
	st=$?
	((st == 0)) || fail "$1: sockdiff under the sock_ops program" \
		"exit $st" "$(grep -v '^mptcp:' <<< "$out")"
	echo "# $1 subflow lock: $(grep -E 'hook=|client.kernel ' <<< "$out" | tr '\n' ' ')"
	r[$1,bpf]=$(grep -oE 'hook=active [^ ]+ rc=-?[0-9]+' <<< "$out")
	r[$1,userlocks]=$(sed -nE 's/.* client\.kernel userlocks=([0-9]+)$/\1/p' <<< "$out")
}

# mp_pair TAG CASE SERVER_ARGS CLIENT_ARGS [MIDDLE] [BPF_ARGS]: one MPTCP
# connection, both ends holding once connected; MIDDLE runs then, the
# server sends (its -s), and r[TAG,CASE.c] and r[TAG,CASE.s] get each
# side's subflow buffers (ss skmem rb) before, r[TAG,CASE.c2] after.
mp_pair() {
	local tag=$1 c=$2 so=/tmp/rcvfix-sfs-$$ co=/tmp/rcvfix-sfc-$$
	local gs=/tmp/rcvfix-sfgs-$$ gc=/tmp/rcvfix-sfgc-$$ spid cpid
	local pre=() bpf=()
	port=$((port + 1))
	rm -f "$gs" "$gc"
	# shellcheck disable=SC2086 # lists of options
	in_ns "$sns" "$RCVFIX_BIN/wscale" server -m -a 10.99.24.2 -p $port \
		-T "$(scaled 30)" -H "$gs" $3 > "$so" 2>&1 &
	spid=$!
	wait_for "$so" listening 20 || {
		fail "$tag $c: server listening" "$(cat "$so")"
		kill $spid 2> /dev/null
		return 1
	}
	read -ra bpf <<< "${6:-}"
	((${#bpf[@]})) && pre=("$RCVFIX_BIN/bpf_rcvbuf" -g "$CG" -p "$port" \
		"${bpf[@]}" -T "$(scaled 30)" --)
	# shellcheck disable=SC2086
	"${pre[@]}" ip netns exec "$cns" "$RCVFIX_BIN/wscale" client -m \
		-a 10.99.24.2 -p $port -T "$(scaled 30)" -H "$gc" $4 > "$co" 2>&1 &
	cpid=$!
	if wait_for "$co" holding 20 && wait_for "$so" holding 20; then
		r[$tag,$c.c]=$(in_ns "$cns" ss -tnmH state established | ss_rbs)
		r[$tag,$c.s]=$(in_ns "$sns" ss -tnmH state established | ss_rbs)
		[[ -n ${5:-} ]] && eval "$5"
		touch "$gs"
		sleep "$(scaled 1)"
		r[$tag,$c.c2]=$(in_ns "$cns" ss -tnmH state established | ss_rbs)
	fi
	touch "$gs" "$gc"
	wait $cpid $spid
	echo "# $tag $c: server $(grep '^side=' "$so")"
	echo "# $tag $c: client $(grep '^side=' "$co")"
	echo "# $tag $c: subflow rb: client ${r[$tag,$c.c]:-} then ${r[$tag,$c.c2]:-}, server ${r[$tag,$c.s]:-}"
	# a transfer (-s): each end prints its line only if every byte it
	# read was the peer's pattern at that offset
	if [[ " $3 $4 " == *" -s "* ]] &&
		! { grep -q '^side=server' "$so" && grep -q '^side=client' "$co"; }; then
		fail "$tag $c: the transfer completed, every byte intact" \
			"server: $(tail -n 3 "$so")" "client: $(tail -n 3 "$co")"
	fi
	rm -f "$so" "$co" "$gs" "$gc"
	[[ -n ${r[$tag,$c.c]:-} ]] ||
		{ fail "$tag $c: connection held for ss"; return 1; }
}
# ss_rbs: every skmem rb of `ss -m` on stdin, space-separated.
ss_rbs() { grep -oE '\brb[0-9]+' | tr -d rb | tr '\n' ' ' | sed 's/ $//'; }

# listener_twice TAG: an MPTCP listener (127.0.0.1, server side) with
# SO_RCVBUF 2 MB, a connection, SO_RCVBUF 128 KB, a second connection;
# r[TAG,twice] gets the second accepted subflow's buffer (ss skmem rb).
listener_twice() {
	local out=/tmp/rcvfix-sf2-$$ gate=/tmp/rcvfix-sf2g-$$ pid p2
	port=$((port + 1))
	rm -f "$gate"
	in_ns "$sns" python3 - "$port" "$gate" > "$out" 2>&1 <<-'EOF' &
		import os, socket, sys, time
		port, gate = int(sys.argv[1]), sys.argv[2]
		MPTCP, BUF = 262, socket.SO_RCVBUF
		def mptcp():
		    return socket.socket(socket.AF_INET, socket.SOCK_STREAM, MPTCP)
		lst = mptcp()
		lst.bind(("127.0.0.1", port))
		lst.listen(4)
		keep = []
		for size in (2097152, 131072):
		    lst.setsockopt(socket.SOL_SOCKET, BUF, size)
		    c = mptcp()
		    c.connect(("127.0.0.1", port))
		    keep += [c, lst.accept()[0]]
		print("ready", c.getsockname()[1], flush=True)
		for _ in range(600):
		    if os.path.exists(gate):
		        break
		    time.sleep(0.05)
	EOF
	pid=$!
	if wait_for "$out" ready 30; then
		p2=$(awk '/^ready/ { print $2 }' "$out")
		r[$1,twice]=$(in_ns "$sns" ss -tnmH state established \
			"( sport = :$port and dport = :$p2 )" | ss_rbs)
	else
		fail "$1: listener, two connections" "$(cat "$out")"
	fi
	touch "$gate"
	wait $pid
	echo "# $1 listener twice: second accepted subflow rb ${r[$1,twice]:-}"
	rm -f "$out" "$gate"
}

declare -A r
run_cases() {
	local tag=$1
	subflow_lock "$tag"
	listener_twice "$tag"
	mp_pair "$tag" listen "-w listen -r 2097152 -R 131072" "" || return 1
	mp_pair "$tag" socket "-r 2097152 -R 131072" "" || return 1
}

run_cases stock || done_testing
check_eq "stock: the rule's lock on a subflow (bpf, 16384) is set" 2 \
	"$(( ${r[stock,userlocks]:-0} & 2 ))"

rcvfix_load || { fail "load rcvfix"; done_testing; }
rcvfix_enable 1 "$cns"
rcvfix_enable 1 "$sns"
run_cases fixed || done_testing

check "bpf_setsockopt on the client's subflow ran" \
	grep -q "rc=0" <<< "${r[fixed,bpf]}"
check_eq "the rule's lock on a subflow stays after data, as stock" \
	"$(( ${r[stock,userlocks]:-0} & 2 ))" "$(( ${r[fixed,userlocks]:-0} & 2 ))"
check_eq "listener SO_RCVBUF 2 MB, a connection, then 128 KB: the next accepted subflow's buffer as stock" \
	"${r[stock,twice]:-stock}" "${r[fixed,twice]:-fixed}"
for c in listen socket; do
	check_eq "listener SO_RCVBUF 2 MB then 128 KB ($c): accepted subflow's buffer as stock" \
		"${r[stock,$c.s]}" "${r[fixed,$c.s]}"
done

# The route change: the client's MPTCP socket has 2 MB (SO_RCVBUF 1 MB
# before connect, unlocked), its subflow 256 KB from a sock_ops program
# once established (unlocked too).
mp_pair fixed route "-s 4096" "-r 1048576" \
	"ip -n $cns route add 192.0.2.0/24 dev lo" "-A 131072" || done_testing
check_eq "established subflow: its own buffer once the program set it" \
	262144 "${r[fixed,route.c]}"
check_eq "established subflow: keeps its buffer after a route change and data" \
	262144 "${r[fixed,route.c2]}"

done_testing
