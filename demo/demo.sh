#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In-guest part of `make demo` (mk/demo.mk): reproduces the original reports
# over a veth pair with netem delay, stock (module loaded, disabled) against
# fixed (enabled), measured by rcvfix-bench and again by iperf3, and prints
# tables with a verdict per row computed from the numbers.
#
# Environment: RCVFIX_KO, RCVFIX_BIN (set by the harness); DEMO_SECONDS per
# transfer (5); DEMO_RUNS rounds of the SO_RCVBUF cases, reported as median
# and range (3); DEMO_DELAY_MS one-way netem delay (25); DEMO_IPERF=0 skips
# iperf3. Exit status: 0 every verdict as expected, 1 otherwise, 2 setup or
# a measurement failed.
set -euo pipefail
export LC_ALL=C

secs=${DEMO_SECONDS:-5}
runs=${DEMO_RUNS:-3}
delay=${DEMO_DELAY_MS:-25}
bin=${RCVFIX_BIN:?RCVFIX_BIN not set: run through make demo}
ko=${RCVFIX_KO:?RCVFIX_KO not set: run through make demo}
bench=$bin/rcvfix-bench
ctl=$bin/rcvfixctl
rcv=rcvfix-demo-rcv snd=rcvfix-demo-snd
rcv_ip=10.99.0.1 snd_ip=10.99.0.2
rmem="4096 425984 40880000"
buf=425984
tmp=$(mktemp -d)
port=7000
n_bad=0
limit=$((secs + 30)) # seconds any one transfer may take, all told

die() { echo "demo: error: $*" >&2; exit 2; }

if command -v ping > /dev/null; then ping=(ping); else ping=(busybox ping); fi

cleanup() {
	ip netns del $rcv 2> /dev/null || true
	ip netns del $snd 2> /dev/null || true
	if grep -q '^rcvfix ' /proc/modules; then rmmod rcvfix || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# --- the path: two namespaces, veth, netem delay on both ends ----------------

setup() {
	local ns
	modprobe veth || die "modprobe veth failed"
	modprobe sch_netem || die "modprobe sch_netem failed"
	grep -q '^rcvfix ' /proc/modules || insmod "$ko" ||
		die "insmod $ko failed"
	ip netns add $rcv
	ip netns add $snd
	ip link add veth-rcv netns $rcv type veth peer name veth-snd netns $snd
	ip -n $rcv addr add $rcv_ip/24 dev veth-rcv
	ip -n $snd addr add $snd_ip/24 dev veth-snd
	for ns in $rcv $snd; do
		ip -n $ns link set lo up
	done
	ip -n $rcv link set veth-rcv up
	ip -n $snd link set veth-snd up
	ip netns exec $rcv tc qdisc add dev veth-rcv root netem delay "${delay}ms" limit 100000
	ip netns exec $snd tc qdisc add dev veth-snd root netem delay "${delay}ms" limit 100000
	# The receiver of the original report. rmem_max is global on 6.1.
	sysctl -qw net.core.rmem_max=40880000
	ip netns exec $rcv sysctl -qw net.ipv4.tcp_rmem="$rmem"
	# iputils' or busybox's ping print "... = min/avg/max..."; a first
	# ping resolves the neighbour.
	ip netns exec $snd "${ping[@]}" -c 1 -q $rcv_ip > /dev/null 2>&1 || true
	rtt=$(ip netns exec $snd "${ping[@]}" -c 3 -q $rcv_ip |
		sed -n 's|.*= *\([0-9.]*\)/\([0-9.]*\)/.*|\1/\2|p')
	[[ -n $rtt ]] || die "no ping across the veth pair"
}

switch() {	# switch 0|1: the fix in the receiver's namespace
	if [[ $1 == 1 ]]; then
		"$ctl" enable --netns $rcv
	else
		"$ctl" disable --netns $rcv
	fi
}

# --- measuring ---------------------------------------------------------------

# R[ROW.FIELD]: one transfer's figures; ROW is "TOOL.CASE.rN" for a round,
# "TOOL.CASE" for the summary (median throughput, the rest of its run).
declare -A R=()

# bench ROW [SERVER_OPTS...] -- [CLIENT_OPTS...]: one rcvfix-bench transfer
# from $snd to $rcv, the client's CSV report into R[ROW.FIELD].
bench() {
	local row=$1 sopts=() csv spid i
	local -a head vals
	shift
	while [[ $1 != -- ]]; do sopts+=("$1"); shift; done
	shift
	port=$((port + 1))
	ip netns exec $rcv timeout $limit "$bench" -s --once -q -p $port -w 30 -T 20 \
		"${sopts[@]}" > /dev/null 2> "$tmp/srv.err" &
	spid=$!
	if ! csv=$(ip netns exec $snd timeout $limit "$bench" -c $rcv_ip -p $port \
		-T 20 -q --csv "$@" 2> "$tmp/cli.err"); then
		cat "$tmp/cli.err" "$tmp/srv.err" >&2
		die "rcvfix-bench failed for $row"
	fi
	wait "$spid" || die "rcvfix-bench server failed for $row"
	IFS=, read -ra head <<< "$(head -n 1 <<< "$csv")"
	IFS=, read -ra vals <<< "$(tail -n 1 <<< "$csv")"
	for i in "${!head[@]}"; do
		R[$row.${head[i]}]=${vals[i]:-}
	done
}

wait_listen() {	# wait_listen PORT: until the receiver listens there (10 s)
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -n $(ip netns exec $rcv ss -tlnH "( sport = :$1 )") ]] && return
		sleep 0.1
	done
	die "nothing listens on port $1 in $rcv after 10 s"
}

# iperf ROW [CLIENT_OPTS...]: iperf3 from $snd to $rcv; throughput from its
# JSON; window scale and receive buffer of the data socket from `ss` in the
# receiver's namespace a second before the end.
iperf() {
	local row=$1 spid cpid line best=0 bytes
	shift
	port=$((port + 1))
	ip netns exec $rcv timeout $limit iperf3 -s -1 -p $port > /dev/null 2>&1 &
	spid=$!
	wait_listen $port
	ip netns exec $snd timeout $limit iperf3 -c $rcv_ip -p $port -t "$secs" -J "$@" \
		> "$tmp/iperf.json" 2> "$tmp/iperf.err" &
	cpid=$!
	sleep "$(awk -v s="$secs" 'BEGIN { print (s > 1.5 ? s - 1 : s / 2) }')"
	# ss prints a socket on two lines; the data socket received the most.
	while IFS= read -r line; do
		bytes=$(grep -o 'bytes_received:[0-9]*' <<< "$line" | cut -d: -f2)
		if ((${bytes:-0} > best)); then
			best=$bytes
			R[$row.rcv_wscale]=$(sed -n 's/.*wscale:[0-9]*,\([0-9]*\).*/\1/p' <<< "$line")
			R[$row.rcvbuf_end]=$(sed -n 's/.*skmem:([^)]*rb\([0-9]*\).*/\1/p' <<< "$line")
		fi
	done < <(ip netns exec $rcv ss -tinmH state established "( sport = :$port )" |
		awk '/^[[:space:]]/ { print prev " " $0; next } { prev = $0 }')
	wait "$cpid" || true
	wait "$spid" || true
	R[$row.gbit_s]=$(jq -r '.end.sum_received.bits_per_second // empty | . / 1e9' \
		"$tmp/iperf.json" 2> /dev/null) || true
	if [[ -z ${R[$row.gbit_s]} ]]; then
		cat "$tmp/iperf.err" >&2
		jq -r '.error // empty' "$tmp/iperf.json" >&2 || true
		die "iperf3 failed for $row"
	fi
}

# summarize ROW: R[ROW.*] from the rounds ROW.r1..rN: the median throughput
# and its run's other fields, plus the range.
summarize() {
	local row=$1 i med sorted f
	sorted=$(for ((i = 1; i <= runs; i++)); do
		echo "${R[$row.r$i.gbit_s]} $i"
	done | sort -g)
	med=$(sed -n "$(((runs + 1) / 2))p" <<< "$sorted" | cut -d' ' -f2)
	for f in gbit_s rcv_wscale rcvbuf_end rcvbuf_locked; do
		R[$row.$f]=${R[$row.r$med.$f]:-}
	done
	R[$row.range]=$(awk -v lo="$(head -n 1 <<< "$sorted" | cut -d' ' -f1)" \
		-v hi="$(tail -n 1 <<< "$sorted" | cut -d' ' -f1)" \
		'BEGIN { printf "%.1f-%.1f", lo * 1000, hi * 1000 }')
}

# --- verdicts ------------------------------------------------------------------

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
mbit() { awk -v g="$1" 'BEGIN { printf "%.1f", g * 1000 }'; }

# paired ROW: median over the rounds of ROW's throughput divided by case 1's
# in the same round (neighbouring runs share the host's load).
paired() {
	local row=$1 ref=${1%%.*}.c1 i
	for ((i = 1; i <= runs; i++)); do
		ratio "${R[$row.r$i.gbit_s]}" "${R[$ref.r$i.gbit_s]}"
		echo
	done | sort -g | sed -n "$(((runs + 1) / 2))p"
}

# verdict ROW: one line into $V from the row's numbers against case 1 of
# the same tool. Not run in a subshell: it counts the unexpected ones.
verdict() {
	local row=$1 ref=${1%%.*}.c1 r ws ws1 end
	if [[ $row == "$ref" ]]; then
		V="reference"
		return
	fi
	r=$(paired "$row")
	ws=${R[$row.rcv_wscale]:-?} ws1=${R[$ref.rcv_wscale]:-?}
	end=${R[$row.rcvbuf_end]:-0}
	case $row in
	*.c2s)
		if lt "$r" 0.8 && lt "$ws" "$ws1"; then
			V="problem reproduced: $r x case 1, window scale $ws < $ws1"
		else
			V="UNEXPECTED: not reproduced ($r x case 1, window scale $ws vs $ws1)"
			n_bad=$((n_bad + 1))
		fi
		;;
	b.c2f)
		if ge "$r" 0.95 && [[ $ws == "$ws1" ]]; then
			V="fixed: $r x case 1, same window scale $ws"
		else
			V="NOT FIXED: $r x case 1 (target >= 0.95), window scale $ws vs $ws1"
			n_bad=$((n_bad + 1))
		fi
		;;
	i.c2f)
		# -w also locks the sender's SO_SNDBUF: its in-flight cap, not
		# the receiver, bounds this row; judge the receiver's side.
		local rs
		rs=$(ratio "${R[$row.gbit_s]}" "${R[${row%.c2f}.c2s.gbit_s]}")
		if [[ $ws == "$ws1" ]] && ((end > 2 * buf)) && ge "$rs" 1.5; then
			V="fixed: window scale $ws as case 1, buffer autotuned, $rs x stock ($r x case 1: iperf3 -w also caps the sender)"
		else
			V="NOT FIXED: window scale $ws vs $ws1, buffer $end, $rs x stock"
			n_bad=$((n_bad + 1))
		fi
		;;
	esac
}

lowat_verdict() {	# lowat_verdict ROW NO_MARK_ROW
	local c=${R[$1.csw_per_mb]} c0=${R[$2.csw_per_mb]}
	if ge 2 "$c"; then
		V="woken per mark: $c <= 2 per MB (without it: $c0)"
	else
		V="TOO MANY WAKEUPS: $c per MB (target <= 2; without the mark: $c0)"
		n_bad=$((n_bad + 1))
	fi
}

# --- the run ---------------------------------------------------------------------

setup
echo "rcvfix demo on $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'); module $(
	"$ctl" --json status | jq -r '"\(.module.version), strategy \(.module.strategy)"')"
echo "path: veth between two namespaces, netem delay $delay ms each way: ping RTT min/avg $rtt ms"
echo "receiver: net.ipv4.tcp_rmem = $rmem, net.core.rmem_max = 40880000"
echo "SO_RCVBUF cases: $runs rounds of $secs s transfers: median (range); ratios: median of"
echo "each round's ratio to case 1 of the same round"
echo

tools=(b)
if [[ ${DEMO_IPERF:-1} != 0 ]]; then
	command -v iperf3 > /dev/null || die "iperf3 missing (apt-get install iperf3)"
	tools+=(i)
fi
for ((n = 1; n <= runs; n++)); do
	echo "round $n of $runs ..."
	for t in "${tools[@]}"; do
		switch 0
		if [[ $t == b ]]; then
			bench b.c1.r$n -- -t "$secs"
			bench b.c2s.r$n --rcvbuf $buf -- -t "$secs"
			switch 1
			bench b.c2f.r$n --rcvbuf $buf -- -t "$secs"
		else
			# -w: SO_RCVBUF (and SO_SNDBUF) on the server's listener
			# and on the client's socket.
			iperf i.c1.r$n
			iperf i.c2s.r$n -w $buf
			switch 1
			iperf i.c2f.r$n -w $buf
		fi
		switch 0
	done
done
echo "SO_RCVLOWAT ..."
bench l.bulk0 -- -t "$secs"
bench l.bulk --rcvlowat 512K -- -t "$secs"
bench l.rate0 -- -t "$secs" --rate 20M
bench l.rate --rcvlowat 512K -- -t "$secs" --rate 20M
echo

row_line() {	# row_line ROW LABEL ENABLE
	local row=$1 lock=${R[$1.rcvbuf_locked]:-}
	summarize "$row"
	lock=${R[$row.rcvbuf_locked]:-}
	case $lock in
	1) lock=" locked" ;;
	0) lock="" ;;
	*) lock="" ;;
	esac
	verdict "$row"
	printf '%-22s %6s %6s %7s %-13s %-17s %s\n' "$2" "$3" \
		"${R[$row.rcv_wscale]:-?}" "$(mbit "${R[$row.gbit_s]:-0}")" \
		"(${R[$row.range]})" "${R[$row.rcvbuf_end]:-?}$lock" "$V"
}

for t in "${tools[@]}"; do
	if [[ $t == b ]]; then
		echo "== SO_RCVBUF by rcvfix-bench: the server receives, SO_RCVBUF on its listener"
	else
		echo "== SO_RCVBUF by iperf3 -w: window scale and buffer from 'ss -tim' on the receiver"
	fi
	printf '%-22s %6s %6s %7s %-13s %-17s %s\n' "case" "enable" "wscale" \
		"Mbit/s" "(range)" "rcvbuf at end" "verdict"
	row_line $t.c1 "1: default buffers" 0
	row_line $t.c2s "2: SO_RCVBUF $buf" 0
	row_line $t.c2f "2: SO_RCVBUF $buf" 1
	echo
done

echo "== SO_RCVLOWAT 512 KB: receiver wakeups (voluntary context switches) per MB"
printf '%-30s %9s %7s %7s  %s\n' "sender" "rcvlowat" "MB" "csw/MB" "verdict"
for k in bulk rate; do
	if [[ $k == bulk ]]; then
		label="bulk, 128 KB writes"
	else
		label="20 Mbit/s, 1000-byte writes"
	fi
	for m in 0 ""; do
		V="(no mark)"
		[[ -n $m ]] || lowat_verdict "l.$k" "l.${k}0"
		printf '%-30s %9s %7.1f %7.2f  %s\n' "$label" \
			"$([[ -n $m ]] && echo none || echo 524288)" \
			"$(awk -v b="${R[l.$k$m.bytes]}" 'BEGIN { print b / 1048576 }')" \
			"${R[l.$k$m.csw_per_mb]}" "$V"
	done
done
echo
if ((n_bad)); then
	echo "demo: $n_bad verdict(s) not as expected"
	exit 1
fi
echo "demo: every verdict as expected"
