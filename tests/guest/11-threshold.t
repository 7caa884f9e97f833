#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The lock threshold is the socket namespace's net.ipv4.tcp_rmem[1] at the
# time of the call: it follows run-time changes, also between two calls on
# one socket, and each namespace has its own.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt"

rcvfix_unload
M_MIN=$(min_rcvbuf)
M_RMAX=$(cat /proc/sys/net/core/rmem_max)
init_rmem=$(cat /proc/sys/net/ipv4/tcp_rmem)
rcvfix_load || { fail "load rcvfix"; done_testing; }
a=$(netns_new thra)
b=$(netns_new thrb)
rcvfix_enable 1 "$a"
rcvfix_enable 1 "$b"
read -r r0 _ r2 <<< "$(ns_cat /proc/sys/net/ipv4/tcp_rmem "$a")"
M_EN=1

# set_t NS T: tcp_rmem[1] of NS to T; the model follows.
set_t() {
	ns_write /proc/sys/net/ipv4/tcp_rmem "$r0 $2 $r2" "$1"
	M_T=$2 M_NEW=$2
	check_eq "tcp_rmem[1] of ${1%-*} reads $2" "$2" "$(tcp_rmem1 "$1")"
}

# 1. Thresholds changed at run time (4096 is the least tcp_rmem takes);
#    for each, values whose double is just below and just at or above it.
for t in 4096 65536 65537 100001 131072 212992 $((M_RMAX + 1)); do
	set_t "$a" "$t"
	lo=$(((t - 1) / 2)) hi=$(((t + 1) / 2))
	check_sockopt "tcp_rmem[1]=$t" "$a" get rcvbuf=$lo new rcvbuf=$hi \
		new rcvbufforce=$lo new rcvbufforce=$hi
done

# 2. Between two calls on one socket: the threshold read at each call.
set_t "$a" 131072
check_sockopt "same socket, threshold raised" "$a" rcvbuf=65536 \
	"write:/proc/sys/net/ipv4/tcp_rmem=$r0 262144 $r2" rcvbuf=65536
set_t "$a" 262144
check_sockopt "same socket, threshold lowered" "$a" rcvbuf=65536 \
	"write:/proc/sys/net/ipv4/tcp_rmem=$r0 131072 $r2" rcvbuf=65536 \
	rcvbuf=65535
M_T=131072 M_NEW=131072

# 3. Per namespace: the same value locks in one and not in the other.
set_t "$a" 100000
set_t "$b" 400000
M_T=100000 M_NEW=100000
check_sockopt "ns a (tcp_rmem[1]=100000)" "$a" rcvbuf=100000 new rcvbuf=49999
M_T=400000 M_NEW=400000
check_sockopt "ns b (tcp_rmem[1]=400000)" "$b" rcvbuf=100000 new \
	rcvbuf=200000
set_t "$a" 50000
M_T=400000 M_NEW=400000
check_sockopt "ns b unchanged by a's change" "$b" rcvbuf=100000
# The initial namespace's own tcp_rmem[1] does not move either.
check_eq "initial tcp_rmem unchanged" "$init_rmem" \
	"$(cat /proc/sys/net/ipv4/tcp_rmem)"

done_testing
