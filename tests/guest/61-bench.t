#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcvfix-bench over a veth pair between two namespaces: its JSON parses and
# carries every field, both ends agree, and the lock and window-scale fields
# follow the module's rule at enable 0 and 1. Transfers are byte-bounded.
source "$RCVFIX_REPO/tests/guest/lib.sh"

bench=$RCVFIX_BIN/rcvfix-bench
ctl=$RCVFIX_BIN/rcvfixctl
[[ -x $bench && -x $ctl ]] || skip "rcvfix-bench or rcvfixctl not built"
command -v jq > /dev/null || skip "jq missing (apt-get install jq)"

pp modprobe veth || skip "no veth module"
srv=$(netns_new srv)
cli=$(netns_new cli)
veth_pair "$srv" "$cli" 10.99.61.1 10.99.61.2 || fail "veth pair"

# The original report's receiver: tcp_rmem[1] = 425984, large maximum.
old_rmem_max=$(cat /proc/sys/net/core/rmem_max)
on_exit "echo $old_rmem_max > /proc/sys/net/core/rmem_max"
echo 40880000 > /proc/sys/net/core/rmem_max
in_ns "$srv" sysctl -qw net.ipv4.tcp_rmem="4096 425984 40880000"
tmp=$(mktemp -d)
port=5600

# bench NAME SERVER_OPTS -- CLIENT_OPTS: one transfer, server in $srv, every
# byte checked by the receiver (--verify); the client's JSON in
# $tmp/NAME.json, the server's in $tmp/NAME.srv.json.
bench() {
	local name=$1 spid st=0 sopts=() copts=()
	shift
	while [[ $# -gt 0 && $1 != -- ]]; do sopts+=("$1"); shift; done
	shift
	copts=("$@")
	port=$((port + 1))
	echo "# + server: rcvfix-bench -s ${sopts[*]}; client: rcvfix-bench -c ... ${copts[*]}"
	in_ns "$srv" "$bench" -s --once -q --json -p $port -w 30 -T 20 "${sopts[@]}" \
		> "$tmp/$name.srv.json" 2> "$tmp/$name.srv.err" &
	spid=$!
	in_ns "$cli" "$bench" -c 10.99.61.1 -p $port -q --json -T 20 --verify "${copts[@]}" \
		> "$tmp/$name.json" 2> "$tmp/$name.err" || st=$?
	wait "$spid" || st=$((st ? st : 100 + $?))
	if ((st)); then
		fail "bench $name ran" "status $st" "$(cat "$tmp/$name.err" "$tmp/$name.srv.err")"
		return 1
	fi
	ok "bench $name ran"
	load "$name"
}

# Reports read with one jq each (jq starts slowly under emulation):
# J[NAME.KEY] for the client's report, J[NAME.srv.KEY] for the server's.
declare -A J=()
load() {	# load NAME: read both reports of a run
	local f k v
	for f in "$1" "$1.srv"; do
		while IFS=$'\t' read -r k v; do
			J[$f.$k]=$v
		done < <(jq -M -r 'to_entries[] | "\(.key)\t\(.value)"' \
			"$tmp/$f.json" 2> /dev/null)
	done
}

# field NAME KEY: one value of the client's report ("" if none).
field() { echo "${J[$1.$2]:-}"; }

# int_lt A B: both integers and A < B (false on anything missing).
int_lt() { [[ $1 =~ ^-?[0-9]+$ && $2 =~ ^-?[0-9]+$ ]] && (($1 < $2)); }

# lk LOCKED: the rcvbuf_locked the report must carry. Before 5.15 there is
# no SO_BUF_LOCK: rcvfix-bench cannot read the lock and says null (the
# window scale and the buffer's growth below still show it).
lk() { if ((RCVFIX_HAVE_BUF_LOCK)); then echo "$1"; else echo null; fi; }

# --- the report ---------------------------------------------------------------

pp rcvfix_load
bench default -- -n 8M || true
fields="role receiver bytes seconds gbit_s rcv_wscale snd_wscale wscale_ok
	rcvbuf_req rcvbuf_on rcvbuf_start rcvbuf_end rcvbuf_locked buf_lock
	rcvlowat rcvlowat_eff wakeups wakeups_per_mb reads nvcsw nivcsw csw_per_mb
	user_s sys_s cpu_usec cpu_usec_per_mb rcv_rtt_us rcv_space sent_bytes
	send_seconds sender_snd_wscale sender_rcv_wscale rtt_us retrans
	sndbuf_end rate_bps write_size"
check "client JSON is one valid object" jq -e 'type == "object"' "$tmp/default.json"
nulls=()
for f in $fields; do
	[[ $f == @(rcvbuf_locked|buf_lock) ]] && ((!RCVFIX_HAVE_BUF_LOCK)) &&
		continue
	[[ $(field default "$f") =~ ^(null)?$ ]] && nulls+=("$f")
done
((${#nulls[@]} == 0)) && ok "client JSON has every field, none null" ||
	fail "client JSON has every field, none null" "null or missing: ${nulls[*]}"
check_eq "8 MB arrived" 8388608 "$(field default bytes)"
check_eq "sender and receiver agree on the bytes" "$(field default sent_bytes)" \
	"$(field default bytes)"
check_eq "server report: same bytes, receiver side" "8388608 server" \
	"$(field default.srv bytes) $(field default.srv role)"
check_eq "window scales mirror between the two sockets" \
	"$(field default rcv_wscale) $(field default snd_wscale)" \
	"$(field default sender_snd_wscale) $(field default sender_rcv_wscale)"
check "throughput and per-MB figures are positive numbers" jq -e \
	'[.gbit_s, .seconds, .cpu_usec_per_mb, .wakeups_per_mb] | all(type == "number" and . > 0)' \
	"$tmp/default.json"
check_eq "default buffers: not locked" "$(lk 0) 0" \
	"$(field default rcvbuf_locked) $(field default rcvbuf_req)"
w0=$(field default rcv_wscale)

# CSV: a header and one row with as many columns.
in_ns "$srv" "$bench" -s --once -q -p 5599 -w 30 > /dev/null 2>&1 &
spid=$!
csv=$(in_ns "$cli" "$bench" -c 10.99.61.1 -p 5599 -n 1M -q --csv 2>&1)
wait "$spid"
check_eq "--csv: header and one row of equal width" "2 $(wc -w <<< "$fields") $(wc -w <<< "$fields")" \
	"$(wc -l <<< "$csv") $(head -1 <<< "$csv" | tr , ' ' | wc -w) $(tail -1 <<< "$csv" | awk -F, '{ print NF }')"

# --- SO_RCVBUF on the listener: stock vs the rule ------------------------------

# lock_case NAME ENABLE SIZE WANT_LOCKED WANT_END
lock_case() {
	local name=$1 want_lock=$4 want_end=$5
	"$ctl" "$([[ $2 == 1 ]] && echo enable || echo disable)" --netns "$srv"
	bench "$name" --rcvbuf "$3" -- -n 8M || return
	check_eq "$name: rcvbuf_req/locked" "$3 $(lk "$want_lock")" \
		"$(field "$name" rcvbuf_req) $(field "$name" rcvbuf_locked)"
	if [[ $want_end == grows ]]; then
		int_lt $((2 * $3 - 1)) "$(field "$name" rcvbuf_end)" &&
			ok "$name: buffer at least 2 x the request" ||
			fail "$name: buffer at least 2 x the request" "$(field "$name" rcvbuf_end)"
	else
		check_eq "$name: buffer stays 2 x the request" "$want_end" \
			"$(field "$name" rcvbuf_end)"
	fi
}

lock_case stock 0 425984 1 851968
int_lt "$(field stock rcv_wscale)" "$w0" &&
	ok "stock: smaller window scale than default ($(field stock rcv_wscale) < $w0)" ||
	fail "stock: smaller window scale than default" "$(field stock rcv_wscale) vs $w0"
sets0=$("$ctl" --json status --netns "$srv" | jq -M '.netns[0].setsockopt.sets')

lock_case fixed 1 425984 0 grows
check_eq "fixed: same window scale as default" "$w0" "$(field fixed rcv_wscale)"
check_eq "fixed: the server's report agrees" "$(lk 0) $w0" \
	"$(field fixed.srv rcvbuf_locked) $(field fixed.srv rcv_wscale)"
sets1=$("$ctl" --json status --netns "$srv" | jq -M '.netns[0].setsockopt.sets')
int_lt "$sets0" "$sets1" &&
	ok "rcvfixctl counts the bench's setsockopt ($sets0 -> $sets1)" ||
	fail "rcvfixctl counts the bench's setsockopt" "$sets0 -> $sets1"

# The rule's edge: 2 x 212991 < tcp_rmem[1] locks, 2 x 212992 does not.
lock_case edge-below 1 212991 1 425982
int_lt "$(field edge-below rcv_wscale)" "$w0" && ok "edge-below: smaller window scale" ||
	fail "edge-below: smaller window scale" "$(field edge-below rcv_wscale) vs $w0"
lock_case edge-at 1 212992 0 grows
check_eq "edge-at: same window scale as default" "$w0" "$(field edge-at rcv_wscale)"

# The switch is per namespace: the client's (stock) namespace still locks.
"$ctl" enable --netns "$srv"
bench reverse -- -R --rcvbuf 425984 -n 4M || true
check_eq "-R: the client receives in a stock namespace: locked" "client client $(lk 1)" \
	"$(field reverse receiver) $(field reverse rcvbuf_on) $(field reverse rcvbuf_locked)"
"$ctl" disable --netns "$srv"

# --- SO_RCVLOWAT: at most one wakeup per 512 KB, bulk and small segments --------

bench lowat -- --rcvlowat 512K -n 16M || true
check_eq "lowat: requested and effective" "524288 524288" \
	"$(field lowat rcvlowat) $(field lowat rcvlowat_eff)"
check "lowat bulk: <= 2.2 wakeups per MB" jq -e '.wakeups_per_mb <= 2.2' "$tmp/lowat.json"
bench lowat-rate -- --rcvlowat 512K --rate 40M -n 4M -t 20 || true
check "lowat rate-limited: <= 2.6 wakeups per MB" jq -e \
	'.wakeups_per_mb <= 2.6 and .rate_bps == 40000000 and .write_size == 1000' \
	"$tmp/lowat-rate.json"

# --- refusals and bounded failures ----------------------------------------------

st=0
"$bench" -c 10.99.61.1 --rcvbuf 12x > /dev/null 2> "$tmp/err" || st=$?
check_eq "bad size refused with exit 1" "1 1" "$st $(grep -c "'12x' is not a size" "$tmp/err")"
st=0
in_ns "$cli" "$bench" -c 10.99.61.1 -p 5598 -T 1 -n 1M > /dev/null 2> "$tmp/err" || st=$?
check_eq "no server: exit 2 within the timeout" "2 1" "$st $(grep -c 'is .rcvfix-bench -s. running' "$tmp/err")"
st=0
in_ns "$srv" "$bench" -s --once -p 5597 -w 1 > /dev/null 2>&1 || st=$?
check_eq "server without a client: exit 3 after --wait" 3 "$st"

rm -rf "$tmp"
done_testing
