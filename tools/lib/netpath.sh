# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# In-guest shell library shared by `make demo` (demo/demo.sh) and `make
# bench` (bench/net.sh): the path of the original reports (two namespaces,
# veth, netem delay), one transfer by rcvfix-bench or iperf3 into
# R[ROW.FIELD], medians over rounds, table rows with a verdict computed
# from the numbers.
#
# Source it after setting LIB_NAME (the message prefix). Environment:
# RCVFIX_KO, RCVFIX_BIN (set by the harness); DEMO_SECONDS per transfer (5);
# DEMO_RUNS rounds (5); DEMO_DELAY_MS one-way netem delay (25).
# Not executable: it only defines variables and functions.

export LC_ALL=C

secs=${DEMO_SECONDS:-5}
runs=${DEMO_RUNS:-5}
delay=${DEMO_DELAY_MS:-25}
bin=${RCVFIX_BIN:?RCVFIX_BIN not set: run through make demo or make bench}
ko=${RCVFIX_KO:?RCVFIX_KO not set: run through make demo or make bench}
bench=$bin/rcvfix-bench
ctl=$bin/rcvfixctl
rcv=rcvfix-demo-rcv snd=rcvfix-demo-snd
rcv_ip=10.99.0.1 snd_ip=10.99.0.2
rmem="4096 425984 40880000"
rmem_max=40880000
buf=425984
tmp=$(mktemp -d)
port=7000
n_bad=0
limit=$((secs + 30)) # seconds any one transfer may take, all told
# Prefix of the rcvfix-bench server command, before `ip netns exec`
# (bench/net.sh: the BPF loader, which needs the initial /sys).
server_wrap=()

die() { echo "$LIB_NAME: error: $*" >&2; exit 2; }

if command -v ping > /dev/null; then ping=(ping); else ping=(busybox ping); fi

cleanup() {
	ip netns del $rcv 2> /dev/null || true
	ip netns del $snd 2> /dev/null || true
	if grep -q '^rcvfix ' /proc/modules; then rmmod rcvfix || true; fi
	rm -rf "$tmp"
}

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
		ip -n "$ns" link set lo up
	done
	ip -n $rcv link set veth-rcv up
	ip -n $snd link set veth-snd up
	ip netns exec $rcv tc qdisc add dev veth-rcv root netem delay "${delay}ms" limit 100000
	ip netns exec $snd tc qdisc add dev veth-snd root netem delay "${delay}ms" limit 100000
	# The receiver of the original report. rmem_max is global on 6.1.
	sysctl -qw net.core.rmem_max=$rmem_max
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

header() {	# header WHAT: the run's first lines
	echo "rcvfix $1 on $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'); module $(
		"$ctl" --json status | jq -r '"\(.module.version), strategy \(.module.strategy)"')"
	echo "path: veth between two namespaces, netem delay $delay ms each way: ping RTT min/avg $rtt ms"
	echo "receiver: net.ipv4.tcp_rmem = $rmem, net.core.rmem_max = $rmem_max"
	echo "$runs rounds of $secs s transfers (cases in reverse order in even rounds): median"
	echo "(range); ratios: median of each round's ratio to case 1 of the same round"
}

# --- measuring ---------------------------------------------------------------

# R[ROW.FIELD]: one transfer's figures; ROW is "TOOL.CASE.rN" for a round,
# "TOOL.CASE" for the summary (median, the rest of the median's run).
declare -A R=()

# csv_into ROW CSV: a header line and a value line into R[ROW.FIELD].
csv_into() {
	local i
	local -a head vals
	IFS=, read -ra head <<< "$(head -n 1 <<< "$2")"
	IFS=, read -ra vals <<< "$(tail -n 1 <<< "$2")"
	for i in "${!head[@]}"; do
		R[$1.${head[i]}]=${vals[i]:-}
	done
}

# bench ROW [SERVER_OPTS...] -- [CLIENT_OPTS...]: one rcvfix-bench transfer
# from $snd to $rcv, the client's CSV report into R[ROW.FIELD].
bench() {
	local row=$1 sopts=() csv spid
	shift
	while [[ $1 != -- ]]; do sopts+=("$1"); shift; done
	shift
	port=$((port + 1))
	"${server_wrap[@]}" ip netns exec $rcv timeout $limit "$bench" -s \
		--once -q -p $port -w 30 -T 20 "${sopts[@]}" \
		> /dev/null 2> "$tmp/srv.err" &
	spid=$!
	if ! csv=$(ip netns exec $snd timeout $limit "$bench" -c $rcv_ip -p $port \
		-T 20 -q --csv "$@" 2> "$tmp/cli.err"); then
		cat "$tmp/cli.err" "$tmp/srv.err" >&2
		die "rcvfix-bench failed for $row"
	fi
	wait "$spid" || { cat "$tmp/srv.err" >&2; die "rcvfix-bench server failed for $row"; }
	csv_into "$row" "$csv"
}

wait_listen() {	# wait_listen PORT: until the receiver listens there (10 s)
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -n $(ip netns exec $rcv ss -tlnH "( sport = :$1 )") ]] && return
		sleep 0.1
	done
	die "nothing listens on port $1 in $rcv after 10 s"
}

# ss_pick ROW FILE: from repeated `ss -tinm` output, the window scale and
# receive buffer of the socket that had received the most (the data socket,
# at its latest sample). ss prints a socket on two lines.
ss_pick() {
	local best
	best=$(awk '/^[[:space:]]/ { print prev " " $0; next } { prev = $0 }' "$2" |
		awk 'match($0, /bytes_received:[0-9]+/) {
			b = substr($0, RSTART + 15, RLENGTH - 15) + 0
			if (b >= max) { max = b; line = $0 }
		} END { print line }')
	R[$1.rcv_wscale]=$(sed -n 's/.*wscale:[0-9]*,\([0-9]*\).*/\1/p' <<< "$best")
	R[$1.rcvbuf_end]=$(sed -n 's/.*skmem:([^)]*rb\([0-9]*\).*/\1/p' <<< "$best")
}

# iperf ROW [CLIENT_OPTS...]: iperf3 from $snd to $rcv; throughput from its
# JSON; window scale and receive buffer of the data socket from `ss` in the
# receiver's namespace, last sampled shortly before the end.
iperf() {
	local row=$1 spid cpid sspid
	shift
	port=$((port + 1))
	ip netns exec $rcv timeout $limit iperf3 -s -1 -p $port > /dev/null 2>&1 &
	spid=$!
	wait_listen $port
	ip netns exec $snd timeout $limit iperf3 -c $rcv_ip -p $port -t "$secs" -J "$@" \
		> "$tmp/iperf.json" 2> "$tmp/iperf.err" &
	cpid=$!
	# Sample the receiver's sockets while the client runs: one shell in
	# the namespace, ss every 0.2 s (each fork is slow under emulation).
	ip netns exec $rcv bash -c "while :; do ss -tinmH state established \
		'( sport = :$port )'; sleep 0.2; done" > "$tmp/ss.txt" 2> /dev/null &
	sspid=$!
	wait "$cpid" || true
	kill "$sspid" 2> /dev/null || true
	wait "$sspid" 2> /dev/null || true
	wait "$spid" || true
	ss_pick "$row" "$tmp/ss.txt"
	R[$row.gbit_s]=$(jq -r '.end.sum_received.bits_per_second // empty | . / 1e9' \
		"$tmp/iperf.json" 2> /dev/null) || true
	if [[ -z ${R[$row.gbit_s]} ]]; then
		cat "$tmp/iperf.err" >&2
		jq -r '.error // empty' "$tmp/iperf.json" >&2 || true
		die "iperf3 failed for $row"
	fi
}

# in_order N ITEM...: the items, reversed in even rounds, so that a slow
# drift of the host's load within a round favours no case over the rounds.
in_order() {
	local n=$1 i
	shift
	if ((n % 2)); then
		printf '%s\n' "$@"
	else
		for ((i = $#; i >= 1; i--)); do echo "${!i}"; done
	fi
}

# The transfers of one round N, into TOOL.CASE.rN rows: one function per
# case, TOOL_case_CASE N (bench/net.sh adds b_case_c2bpf).
b_case_c1() { switch 0; bench b.c1.r"$1" -- -t "$secs"; }
b_case_c2s() { switch 0; bench b.c2s.r"$1" --rcvbuf $buf -- -t "$secs"; }
b_case_c2f() { switch 1; bench b.c2f.r"$1" --rcvbuf $buf -- -t "$secs"; switch 0; }
# iperf3 -w sets SO_RCVBUF (and SO_SNDBUF) on the server's listener and on
# the client's socket.
i_case_c1() { switch 0; iperf i.c1.r"$1"; }
i_case_c2s() { switch 0; iperf i.c2s.r"$1" -w $buf; }
i_case_c2f() { switch 1; iperf i.c2f.r"$1" -w $buf; switch 0; }
l_case_bulk0() { bench l.bulk0.r"$1" -- -t "$secs"; }
l_case_bulk() { bench l.bulk.r"$1" --rcvlowat 512K -- -t "$secs"; }
l_case_rate0() { bench l.rate0.r"$1" -- -t "$secs" --rate 20M; }
l_case_rate() { bench l.rate.r"$1" --rcvlowat 512K -- -t "$secs" --rate 20M; }

# round TOOL N CASE...: round N of TOOL's cases (b: rcvfix-bench SO_RCVBUF
# on its listener, i: iperf3, l: SO_RCVLOWAT 512 KB, bulk and rate-limited).
round() {
	local t=$1 n=$2 c
	shift 2
	for c in $(in_order "$n" "$@"); do
		"${t}_case_$c" "$n"
	done
}

# summarize ROW [N [FIELD]]: R[ROW.*] from the rounds ROW.r1..rN (default
# $runs): the median of FIELD (default gbit_s) and its run's other fields,
# the range of FIELD as ROW.lo and ROW.hi.
summarize() {
	local row=$1 n=${2:-$runs} field=${3:-gbit_s} i med sorted k f
	sorted=$(for ((i = 1; i <= n; i++)); do
		echo "${R[$row.r$i.$field]} $i"
	done | sort -g)
	med=$(sed -n "$(((n + 1) / 2))p" <<< "$sorted" | cut -d' ' -f2)
	for k in "${!R[@]}"; do
		[[ $k == "$row.r$med."* ]] || continue
		f=${k#"$row.r$med."}
		R[$row.$f]=${R[$k]}
	done
	R[$row.lo]=$(head -n 1 <<< "$sorted" | cut -d' ' -f1)
	R[$row.hi]=$(tail -n 1 <<< "$sorted" | cut -d' ' -f1)
	R[$row.rounds]=$n
}

# --- verdicts ------------------------------------------------------------------

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
mbit() { awk -v g="$1" 'BEGIN { printf "%.1f", g * 1000 }'; }

# paired ROW [REF]: median over the rounds of ROW's throughput divided by
# REF's (default case 1 of the same tool) in the same round (neighbouring
# runs share the host's load).
paired() {
	local row=$1 ref=${2:-${1%%.*}.c1} i
	for ((i = 1; i <= runs; i++)); do
		ratio "${R[$row.r$i.gbit_s]}" "${R[$ref.r$i.gbit_s]}"
		echo
	done | sort -g | sed -n "$(((runs + 1) / 2))p"
}

# spread ROW: half the range of ROW's rounds over its median, as a
# fraction (0.05: the rounds lay within +-5 % of the median); summarized.
spread() {
	awk -v lo="${R[$1.lo]}" -v hi="${R[$1.hi]}" -v m="${R[$1.gbit_s]}" \
		'BEGIN { printf "%.2f", (m > 0 ? (hi - lo) / (2 * m) : 1) }'
}

# tolerance ROW...: the ratio to case 1 a fixed row must reach: 0.95, less
# the rounds' spread beyond 5 % (the noisier of the rows), never below 0.5.
tolerance() {
	local r s=0
	for r in "$@"; do
		s=$(awk -v a="$s" -v b="$(spread "$r")" 'BEGIN { print (b > a ? b : a) }')
	done
	awk -v s="$s" 'BEGIN { t = 0.95 - (s > 0.05 ? s - 0.05 : 0)
		printf "%.2f", (t < 0.5 ? 0.5 : t) }'
}

# wscale_rounds ROW WSCALE: "yes" if every round of ROW offered WSCALE.
wscale_rounds() {
	local i
	for ((i = 1; i <= runs; i++)); do
		[[ ${R[$1.r$i.rcv_wscale]:-?} == "$2" ]] || { echo no; return; }
	done
	echo yes
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
	R[$row.ratio_c1]=$r
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
	b.c2f | b.c2bpf)
		# What the fix changes decides: case 1's window scale in every
		# round, the buffer unlocked and autotuned past the size asked
		# for, twice stock's throughput or more. The ratio to case 1
		# is held to 0.95 within the run's noise: one slow round of an
		# emulated guest does not flip the verdict.
		local rs tol same lock=""
		[[ ${R[$row.rcvbuf_locked]:-0} != 1 ]] || lock=" locked"
		rs=$(paired "$row" "${ref%.c1}.c2s")
		tol=$(tolerance "$ref" "$row")
		same=$(wscale_rounds "$row" "$ws1")
		if [[ $same == yes && -z $lock ]] && ((end > 2 * buf)) &&
			ge "$rs" 2 && ge "$r" "$tol"; then
			V="fixed: window scale $ws as case 1, buffer autotuned; $rs x stock, $r x case 1 (>= $tol)"
		else
			V="NOT FIXED: window scale $ws vs $ws1 (every round: $same), buffer $end$lock, $rs x stock (>= 2), $r x case 1 (>= $tol)"
			n_bad=$((n_bad + 1))
		fi
		;;
	i.c2f)
		# -w also locks the sender's SO_SNDBUF: its in-flight cap, not
		# the receiver, bounds this row; judge the receiver's side.
		local rs
		rs=$(ratio "${R[$row.gbit_s]}" "${R[${row%.c2f}.c2s.gbit_s]}")
		if [[ $ws == "$ws1" ]] && ((end > 2 * buf)); then
			V="fixed: window scale $ws as case 1, buffer autotuned; $rs x stock, $r x case 1 (iperf3 -w also caps the sender)"
		else
			V="NOT FIXED: window scale $ws vs $ws1, buffer $end, $rs x stock"
			n_bad=$((n_bad + 1))
		fi
		;;
	esac
}

# lowat_verdict ROW NO_MARK_ROW: <= 2 wakeups per MB, or no more wakeups
# than 512 KB marks in the data plus one (a transfer of N marks wakes the
# reader at least N times, the last part at the end: 2 per MB is the floor).
lowat_verdict() {
	local c c0 marks w bytes=${R[$1.bytes]:-0}
	c=$(printf '%.2f' "${R[$1.csw_per_mb]}")
	c0=$(printf '%.2f' "${R[$2.csw_per_mb]}")
	marks=$(((bytes + 524287) / 524288))
	w=${R[$1.nvcsw]:-0}
	if ge 2 "$c"; then
		V="woken per mark: $c <= 2 per MB (without it: $c0)"
	elif ((w <= marks + 1)); then
		V="woken per mark: $c per MB, $w wakeups for $marks marks of 512 KB: the floor (without it: $c0)"
	else
		V="TOO MANY WAKEUPS: $c per MB, $w for $marks marks of 512 KB (target <= 2; without the mark: $c0)"
		n_bad=$((n_bad + 1))
	fi
}

# --- tables ----------------------------------------------------------------------

range_mbit() {	# range_mbit ROW: "(lo-hi)" in Mbit/s
	awk -v lo="${R[$1.lo]}" -v hi="${R[$1.hi]}" \
		'BEGIN { printf "(%.1f-%.1f)", lo * 1000, hi * 1000 }'
}

row_line() {	# row_line ROW LABEL SETUP
	local row=$1 lock
	summarize "$row"
	case ${R[$row.rcvbuf_locked]:-} in
	1) lock=" locked" ;;
	*) lock="" ;;
	esac
	verdict "$row"
	printf '%-22s %-8s %6s %7s %-13s %-17s %s\n' "$2" "$3" \
		"${R[$row.rcv_wscale]:-?}" "$(mbit "${R[$row.gbit_s]:-0}")" \
		"$(range_mbit "$row")" "${R[$row.rcvbuf_end]:-?}$lock" "$V"
}

# rcvbuf_table TOOL [ROW LABEL SETUP]...: the SO_RCVBUF table of one tool,
# the three cases of the demo, then the extra rows given.
rcvbuf_table() {
	local t=$1
	shift
	if [[ $t == b ]]; then
		echo "== SO_RCVBUF by rcvfix-bench: the server receives, SO_RCVBUF on its listener"
	else
		echo "== SO_RCVBUF by iperf3 -w: window scale and buffer from 'ss -tim' on the receiver"
	fi
	printf '%-22s %-8s %6s %7s %-13s %-17s %s\n' "case" "setup" "wscale" \
		"Mbit/s" "(range)" "rcvbuf at end" "verdict"
	row_line "$t.c1" "1: default buffers" stock
	row_line "$t.c2s" "2: SO_RCVBUF $buf" stock
	row_line "$t.c2f" "2: SO_RCVBUF $buf" rcvfix
	while (($# >= 3)); do
		row_line "$1" "$2" "$3"
		shift 3
	done
	printf 'noise: over %s rounds, case 1 within +-%.0f %% of its median, rcvfix within +-%.0f %%\n' \
		"$runs" "$(awk -v s="$(spread "$t.c1")" 'BEGIN { print s * 100 }')" \
		"$(awk -v s="$(spread "$t.c2f")" 'BEGIN { print s * 100 }')"
	echo
}

# lowat_table N: the SO_RCVLOWAT table over N rounds (median, range).
lowat_table() {
	local n=$1 k m label row
	echo "== SO_RCVLOWAT 512 KB: receiver wakeups (voluntary context switches) per MB"
	printf '%-30s %9s %7s %7s %-13s %s\n' "sender" "rcvlowat" "MB" "csw/MB" \
		"$( ((n > 1)) && echo "(range)")" "verdict"
	for k in bulk rate; do
		if [[ $k == bulk ]]; then
			label="bulk, 128 KB writes"
		else
			label="20 Mbit/s, 1000-byte writes"
		fi
		summarize "l.${k}0" "$n" csw_per_mb
		summarize "l.$k" "$n" csw_per_mb
		for m in 0 ""; do
			row=l.$k$m
			V="(no mark)"
			[[ -n $m ]] || lowat_verdict "$row" "l.${k}0"
			printf '%-30s %9s %7.1f %7.2f %-13s %s\n' "$label" \
				"$([[ -n $m ]] && echo none || echo 524288)" \
				"$(awk -v b="${R[$row.bytes]}" 'BEGIN { print b / 1048576 }')" \
				"${R[$row.csw_per_mb]}" \
				"$( ((n > 1)) && printf '(%.2f-%.2f)' "${R[$row.lo]}" "${R[$row.hi]}")" "$V"
		done
	done
	echo
}
