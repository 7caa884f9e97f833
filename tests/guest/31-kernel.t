#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-kernel path: the test module rcvfix_test_ksock calls
# sock_set_rcvbuf() on a kernel TCP socket in the writer's namespace; the
# rule holds there (no rmem_max clamp on this path, as in stock), the
# counters say "kernel", and disabled namespaces get stock behaviour.
source "$RCVFIX_REPO/tests/guest/lib.sh"
KSOCK=$RCVFIX_KMOD/rcvfix_test_ksock.ko
need "$RCVFIX_KO" "$KSOCK" "$RCVFIX_BIN/sockopt"
F=/proc/rcvfix_test_ksock

rcvfix_unload
M_MIN=$(min_rcvbuf)
M_RMAX=$(cat /proc/sys/net/core/rmem_max)
insmod "$KSOCK" || skip "cannot load $KSOCK"
on_exit "rmmod rcvfix_test_ksock"
ns=$(netns_new kern)
M_T=$(tcp_rmem1 "$ns")
h=$((M_T / 2))

# ksock NS ARG...: one sock_set_rcvbuf() per ARG in NS ("" = here), all
# from one shell (programs are slow to start under emulation); prints one
# result line per ARG.
ksock() {
	local ns=$1 run=()
	shift
	[[ -n $ns ]] && run=(ip netns exec "$ns")
	"${run[@]}" sh -c 'f=$1; shift
		for a; do echo "$a" > "$f" && cat "$f" || echo "error"; done' \
		sh "$F" "$@"
}

# check_ksock LABEL NS ARG...: each ARG ("VAL" or "lock VAL") against the
# model (sock_set_rcvbuf() takes VAL as it is).
check_ksock() {
	local label=$1 ns=$2 arg pre i=0
	local -a args want got
	shift 2
	for arg in "$@"; do
		M_LOCK=0 pre=
		[[ $arg == lock* ]] && M_LOCK=2 pre="lock "
		model_val "${arg#lock }"
		model_set "$M_VAL"
		args+=("$pre$M_VAL")
		want+=("val=$M_VAL rcvbuf=$M_RCVBUF lock=$M_LOCK")
	done
	mapfile -t got <<< "$(ksock "$ns" "${args[@]}" 2>&1)"
	for arg in "$@"; do
		check_eq "$label: sock_set_rcvbuf($arg)" "${want[i]}" \
			"${got[i]:-}"
		i=$((i + 1))
	done
}

cases=($((h - 1)) $h $((h + 1)) 0 1 -5 $((M_MIN / 2)) INT_MAX INT_MIN \
       $((4 * M_RMAX)) "lock $h" "lock $((h - 1))" "lock INT_MAX")

M_EN=0
check_ksock "stock" "$ns" "${cases[@]}"

rcvfix_load || { fail "load rcvfix"; done_testing; }
c0=$(rcvfix_counters kernel "$ns")
check_ksock "enable=0" "$ns" "${cases[@]}"
check_eq "enable=0: kernel counters do not move" "0 0 0 0" \
	"$(counters_delta "$c0" "$(rcvfix_counters kernel "$ns")")"

rcvfix_enable 1 "$ns"
M_EN=1
model_reset
c0=$(rcvfix_counters kernel "$ns")
s0=$(rcvfix_counters setsockopt "$ns")
i0=$(rcvfix_counters kernel)
check_ksock "enable=1" "$ns" "${cases[@]}"
check_eq "enable=1: kernel counters (sets set avoided kept)" \
	"$M_SETS $M_LSET $M_LAVOID $M_LKEPT" \
	"$(counters_delta "$c0" "$(rcvfix_counters kernel "$ns")")"
check_eq "enable=1: setsockopt counters do not move" "$s0" \
	"$(rcvfix_counters setsockopt "$ns")"

# The initial namespace stays disabled: stock there.
M_EN=0
check_ksock "initial ns, disabled" "" $h "lock $h" INT_MAX
check_eq "initial ns: kernel counters do not move" "$i0" \
	"$(rcvfix_counters kernel)"

done_testing
