#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The SO_RCVBUF rule from user space: a table of values around tcp_rmem[1]
# and the limits, stock, then with net.rcvfix.enable 0 and 1, checking
# SO_RCVBUF, SO_BUF_LOCK, errors, and the setsockopt counters.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt"

rcvfix_unload
ns=$(netns_new rule)
M_RMAX=$(cat /proc/sys/net/core/rmem_max)
M_MIN=$(min_rcvbuf)
M_T=$(tcp_rmem1 "$ns")
M_NEW=$M_T
[[ $M_MIN =~ ^[0-9]+$ && $M_T =~ ^[0-9]+$ ]] || skip "cannot read limits"
echo "# tcp_rmem[1]=$M_T rmem_max=$M_RMAX SOCK_MIN_RCVBUF=$M_MIN"
h=$((M_T / 2))

# One socket per case ("new" opens a fresh one); dropcap stays to the end.
table=(
	get
	rcvbuf=$((h - 1)) new rcvbuf=$h new rcvbuf=$((h + 1)) new
	rcvbuf=0 new rcvbuf=1 new rcvbuf=$((M_MIN / 2)) new
	rcvbuf=INT_MAX new rcvbuf=-1 new rcvbuf=INT_MIN new
	rcvbuf=$M_RMAX new rcvbuf=$((M_RMAX + 1)) new
	rcvbufforce=INT_MAX new rcvbufforce=$((INT_MAX / 2 + 1)) new
	rcvbufforce=$h new rcvbufforce=$((h - 1)) new
	rcvbufforce=-1 new rcvbufforce=INT_MIN new rcvbufforce=0 new
	buflock=2 rcvbuf=$h new
	buflock=1 rcvbuf=$h new
	rcvbuf=1000 rcvbuf=$h new
	rcvbuf=$h rcvbuf=$((h - 1)) rcvbuf=$h rcvbufforce=INT_MAX new
	rcvbuf:short=$h rcvbuf:badptr rcvbuf:long=$h new
	rcvbufforce:short=$h rcvbufforce:badptr rcvbufforce:long=$h new
	dropcap rcvbufforce=$h rcvbufforce=1000 rcvbuf=$h
)

# 1. Stock kernel: the model must match it exactly when disabled.
M_EN=0
check_sockopt "stock" "$ns" "${table[@]}"

# 2. Loaded, disabled (the default): same table, no counter moves.
rcvfix_load || { fail "load rcvfix"; done_testing; }
check_eq "enable defaults to 0" 0 "$(rcvfix_enabled "$ns")"
c0=$(rcvfix_counters setsockopt "$ns")
check_sockopt "enable=0" "$ns" "${table[@]}"
check_eq "enable=0: counters do not move" "0 0 0 0" \
	"$(counters_delta "$c0" "$(rcvfix_counters setsockopt "$ns")")"

# 3. Enabled: the rule, and the counters it implies.
rcvfix_enable 1 "$ns"
check_eq "enable=1 reads back" 1 "$(rcvfix_enabled "$ns")"
M_EN=1
model_reset
c0=$(rcvfix_counters setsockopt "$ns")
o0="$(rcvfix_counters bpf "$ns") $(rcvfix_counters kernel "$ns")"
check_sockopt "enable=1" "$ns" "${table[@]}"
check_eq "enable=1: setsockopt counters (sets set avoided kept)" \
	"$M_SETS $M_LSET $M_LAVOID $M_LKEPT" \
	"$(counters_delta "$c0" "$(rcvfix_counters setsockopt "$ns")")"
check "enable=1: the table exercises every outcome" \
	test "$M_LSET" -gt 0 -a "$M_LAVOID" -gt 0 -a "$M_LKEPT" -gt 0
check_eq "enable=1: bpf and kernel counters do not move" "$o0" \
	"$(rcvfix_counters bpf "$ns") $(rcvfix_counters kernel "$ns")"

# 4. An odd tcp_rmem[1]: doubled values exactly one below and one above.
read -r r0 _ r2 <<< "$(ns_cat /proc/sys/net/ipv4/tcp_rmem "$ns")"
ns_write /proc/sys/net/ipv4/tcp_rmem "$r0 $((2 * h + 1)) $r2" "$ns"
M_T=$((2 * h + 1)) M_NEW=$M_T
check_sockopt "enable=1, tcp_rmem[1]=$M_T" "$ns" \
	rcvbuf=$h new rcvbuf=$((h + 1)) new rcvbufforce=$h
ns_write /proc/sys/net/ipv4/tcp_rmem "$r0 $((2 * h - 1)) $r2" "$ns"
M_T=$((2 * h - 1)) M_NEW=$M_T
check_sockopt "enable=1, tcp_rmem[1]=$M_T" "$ns" \
	rcvbuf=$((h - 1)) new rcvbuf=$h new rcvbufforce=$((h - 1))
ns_write /proc/sys/net/ipv4/tcp_rmem "$r0 $((2 * h)) $r2" "$ns"
M_T=$((2 * h)) M_NEW=$M_T

# 5. Scope: the rule is TCP's (its threshold is tcp_rmem[1]), for TCP and
# MPTCP stream sockets over IPv4 and IPv6. Every other socket keeps the
# kernel's own code: exactly stock, and no counter moves (docs/design.md "Scope: which sockets").
check_sockopt "enable=1, tcp6" "$ns" -f inet6 -- \
	rcvbuf=$((h - 1)) new rcvbuf=$h
if in_ns "$ns" "$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1; then
	check_sockopt "enable=1, mptcp" "$ns" -p mptcp -- \
		rcvbuf=$((h - 1)) new rcvbuf=$h new rcvbufforce=$h
	check_sockopt "enable=1, mptcp6" "$ns" -f inet6 -p mptcp -- \
		rcvbuf=$((h - 1)) new rcvbuf=$h
else
	echo "# no MPTCP sockets on this kernel: MPTCP rows skipped"
fi
M_EN=0
c0="$(rcvfix_counters setsockopt "$ns") $(rcvfix_counters kernel "$ns")"
M_NEW=$(cat /proc/sys/net/core/rmem_default)
for kind in "inet -t dgram" "inet6 -t dgram" "unix -t stream" "unix -t dgram"; do
	# shellcheck disable=SC2086 # kind is "FAMILY -t TYPE"
	check_sockopt "enable=1, $kind: stock" "$ns" -f $kind -- \
		rcvbuf=$((h - 1)) new rcvbuf=$h new rcvbufforce=INT_MAX
done
check_eq "enable=1, other sockets: counters do not move" \
	"$c0" "$(rcvfix_counters setsockopt "$ns") $(rcvfix_counters kernel "$ns")"
M_EN=1
M_NEW=$M_T

# 6. Disabled again at run time: stock behaviour is back at once.
rcvfix_enable 0 "$ns"
M_EN=0
c0=$(rcvfix_counters setsockopt "$ns")
check_sockopt "enable=1 -> 0" "$ns" rcvbuf=$h new rcvbufforce=INT_MAX new \
	rcvbuf=$((h - 1))
check_eq "enable=1 -> 0: counters do not move" "0 0 0 0" \
	"$(counters_delta "$c0" "$(rcvfix_counters setsockopt "$ns")")"

done_testing
