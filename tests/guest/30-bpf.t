#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The BPF path: a cgroup sockops program calls bpf_setsockopt(SO_RCVBUF)
# before the SYN (socket locked by connect()), on the accepted socket and
# on the connecting one when established (softirq). The rule holds there,
# the counters say "bpf", stock when disabled, and nothing deadlocks. On a
# SYN's request socket (TIMEOUT_INIT, RWND_INIT), no full socket, the call
# gets the kernel's answer, enabled or not, and counts nothing.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/bpf_rcvbuf" "$RCVFIX_BIN/wscale"

rcvfix_unload
cgroup2_mount || skip "cannot mount cgroup2"
CG=$CGROUP2/rcvfix-bpf-$$
on_exit "rmdir $CG"
a=$(netns_new bpfa)	# client side
b=$(netns_new bpfb)	# server side
veth_pair "$a" "$b" 10.99.30.1 10.99.30.2 || skip "cannot create veth pair"
T=$(tcp_rmem1 "$a")
h=$((T / 2))
out=/tmp/rcvfix-bpf-$$
port=40300

# The pair of processes run inside the cgroup by bpf_rcvbuf.
pair_cmd='
b=$1 a=$2 port=$3 bin=$4 out=$5 sargs=$6 cargs=$7
ip netns exec "$b" "$bin/wscale" server -a 10.99.30.2 -p "$port" -T 30 \
	$sargs > "$out.s" 2>&1 &
pid=$!
for i in $(seq 200); do grep -q listening "$out.s" && break; sleep 0.1; done
ip netns exec "$a" "$bin/wscale" client -a 10.99.30.2 -p "$port" -T 30 \
	$cargs > "$out.c" 2>&1
wait $pid
'

# run_bpf LABEL BPF_ARGS: one connection under the sockops program with
# BPF_ARGS (-c/-P/-A VAL); sets S, C (wscale lines) and BC, BP, BA (hook
# result lines; BT, BR for the request socket), fails the test if anything hangs or errors.
run_bpf() {
	local label=$1 rc
	port=$((port + 1))
	rm -f "$out".*
	timeout 120 "$RCVFIX_BIN/bpf_rcvbuf" -g "$CG" -p $port -T 60 $2 -- \
		bash -c "$pair_cmd" _ "$b" "$a" $port "$RCVFIX_BIN" "$out" \
		"" "-s 65536" > "$out.bpf" 2>&1
	rc=$?
	S=$(grep '^side=server' "$out.s") C=$(grep '^side=client' "$out.c")
	BC=$(grep '^hook=connect' "$out.bpf") BP=$(grep '^hook=passive' "$out.bpf")
	BA=$(grep '^hook=active' "$out.bpf")
	BT=$(grep '^hook=timeout' "$out.bpf") BR=$(grep '^hook=rwnd' "$out.bpf")
	echo "# $label: $(tr '\n' ' ' < "$out.bpf")"
	echo "# $label: $S"
	echo "# $label: $C"
	if ((rc == 0)) && [[ -n $S && -n $C ]]; then
		ok "$label: completes, no deadlock"
	else
		fail "$label: completes, no deadlock" "exit $rc" \
			"$(cat "$out".* 2>&1)"
	fi
}

# Before 6.0 bpf_getsockopt() knows no SOL_SOCKET/SO_RCVBUF (-EINVAL): the
# program cannot read the buffer back there (the sockets' own SO_RCVBUF and
# locks, read by wscale, are checked below all the same).
if grep -qE ' [tT] sk_getsockopt$' /proc/kallsyms; then
	bpf_get_rcvbuf=1
else
	bpf_get_rcvbuf=0
fi

# hook_is LABEL LINE EXP_RCVBUF: one call, rc 0, SO_RCVBUF as expected.
hook_is() {
	if ((!bpf_get_rcvbuf)) && [[ $(kv get_rc "$2") == -22 ]]; then
		check_eq "$1" "calls=1 rc=0" \
			"calls=$(kv calls "$2") rc=$(kv rc "$2")"
		ok "$1: SO_RCVBUF read back # SKIP bpf_getsockopt(SO_RCVBUF) does not exist before 6.0"
		return
	fi
	check_eq "$1" "calls=1 rc=0 rcvbuf=$3" \
		"calls=$(kv calls "$2") rc=$(kv rc "$2") rcvbuf=$(kv rcvbuf "$2")"
}

# bpf_counters: "bpf counters of a / of b", for deltas.
bpf_counters() { echo "$(rcvfix_counters bpf "$a") $(rcvfix_counters bpf "$b")"; }
delta8() {
	local -a x=($1) y=($2)
	echo "$(counters_delta "${x[*]:0:4}" "${y[*]:0:4}")" \
		"$(counters_delta "${x[*]:4:4}" "${y[*]:4:4}")"
}

# 0. Reference: no BPF program, no SO_RCVBUF.
in_ns "$b" "$RCVFIX_BIN/wscale" server -a 10.99.30.2 -p $port -T 30 \
	> "$out.ref" 2>&1 &
wait_for "$out.ref" listening 20
w_ref=$(kv rcv_wscale "$(in_ns "$a" "$RCVFIX_BIN/wscale" client \
	-a 10.99.30.2 -p $port -T 30 -s 65536)")
wait
echo "# reference client window scale: $w_ref"

# 1. Stock kernel: bpf_setsockopt locks.
run_bpf "stock" "-c $h -P $h"
hook_is "stock: connect hook" "$BC" $T
hook_is "stock: passive hook" "$BP" $T
check_eq "stock: client locked" 2 $(($(kv lock "$C") & 2))
check_eq "stock: accepted socket locked" 2 $(($(kv lock "$S") & 2))
check "stock: client window scale below reference" \
	test "$(kv rcv_wscale "$C")" -lt "$w_ref"

# On the request socket stock refuses (-EINVAL; -EOPNOTSUPP where the
# kernel allows bpf_setsockopt() in locked callbacks only).
run_bpf "stock, request socket" "-R $h"
req_stock="$(kv rc "$BT") $(kv rc "$BR")"
check "stock, request socket: refused at TIMEOUT_INIT and RWND_INIT ($req_stock)" \
	test "$(kv calls "$BT")" -ge 1 -a "$(kv rc "$BT")" -lt 0 -a \
	"$(kv calls "$BR")" -ge 1 -a "$(kv rc "$BR")" -lt 0

# 2. Enabled in both namespaces.
rcvfix_load || { fail "load rcvfix"; done_testing; }
rcvfix_enable 1 "$a"
rcvfix_enable 1 "$b"
c0=$(bpf_counters)
s0="$(rcvfix_counters setsockopt "$a") $(rcvfix_counters setsockopt "$b")"
run_bpf "enabled, at threshold" "-c $h -P $h"
hook_is "enabled: connect hook" "$BC" $T
hook_is "enabled: passive hook" "$BP" $T
check_eq "enabled: client not locked" 0 $(($(kv lock "$C") & 2))
check_eq "enabled: accepted socket not locked" 0 $(($(kv lock "$S") & 2))
check_eq "enabled: client window scale = reference" "$w_ref" \
	"$(kv rcv_wscale "$C")"
check_eq "enabled: bpf counters a / b (sets set avoided kept)" \
	"1 0 1 0 1 0 1 0" "$(delta8 "$c0" "$(bpf_counters)")"
check_eq "enabled: setsockopt counters do not move" "$s0" \
	"$(rcvfix_counters setsockopt "$a") $(rcvfix_counters setsockopt "$b")"

c0=$(bpf_counters)
run_bpf "enabled, below threshold" "-c $((h - 1)) -P $((h - 1))"
hook_is "enabled, below: connect hook" "$BC" $((T - 2))
hook_is "enabled, below: passive hook" "$BP" $((T - 2))
check_eq "enabled, below: client locked" 2 $(($(kv lock "$C") & 2))
check_eq "enabled, below: accepted socket locked" 2 $(($(kv lock "$S") & 2))
check_eq "enabled, below: bpf counters a / b" "1 1 0 0 1 1 0 0" \
	"$(delta8 "$c0" "$(bpf_counters)")"

c0=$(bpf_counters)
run_bpf "enabled, request socket" "-R $h"
check_eq "enabled, request socket: the kernel's answers" "$req_stock" \
	"$(kv rc "$BT") $(kv rc "$BR")"
check_eq "enabled, request socket: bpf counters do not move" \
	"0 0 0 0 0 0 0 0" "$(delta8 "$c0" "$(bpf_counters)")"

# Locked before the SYN, then set again from softirq: the lock stays.
c0=$(bpf_counters)
run_bpf "enabled, connect locks, established keeps" "-c $((h - 1)) -A $h"
hook_is "enabled, keep: connect hook" "$BC" $((T - 2))
hook_is "enabled, keep: active-established hook" "$BA" $T
check_eq "enabled, keep: client still locked" 2 $(($(kv lock "$C") & 2))
check_eq "enabled, keep: bpf counters a / b" "2 1 0 1 0 0 0 0" \
	"$(delta8 "$c0" "$(bpf_counters)")"

# 3. Enabled only on the client's side.
rcvfix_enable 0 "$b"
c0=$(bpf_counters)
run_bpf "enabled in a only" "-c $h -P $h"
check_eq "a only: client not locked" 0 $(($(kv lock "$C") & 2))
check_eq "a only: accepted socket locked" 2 $(($(kv lock "$S") & 2))
check_eq "a only: bpf counters a / b" "1 0 1 0 0 0 0 0" \
	"$(delta8 "$c0" "$(bpf_counters)")"

# 4. Disabled everywhere: stock.
rcvfix_enable 0 "$a"
c0=$(bpf_counters)
run_bpf "disabled" "-c $h -P $h -A $h"
hook_is "disabled: connect hook" "$BC" $T
check_eq "disabled: client locked" 2 $(($(kv lock "$C") & 2))
check_eq "disabled: accepted socket locked" 2 $(($(kv lock "$S") & 2))
check_eq "disabled: bpf counters do not move" "0 0 0 0 0 0 0 0" \
	"$(delta8 "$c0" "$(bpf_counters)")"

rm -f "$out".*
done_testing
