#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Never slower than not asking (issue 59): an MPTCP reader with an
# SO_RCVLOWAT mark its small buffer cannot hold (512 KiB, then SO_RCVBUF
# 32768 after accept: a 64 KiB locked buffer, as socat's rcvbuf-late) that
# reads 8 KiB per wakeup (socat's buffer) must read 4 MiB at least half as
# fast as the same reader without a mark, with rcvfix enabled, in one boot
# (a ratio, never a wall-clock bound). TCP with the mark is shown beside.
# On 7.x the kernel sends no window update after a read that empties a
# full buffer: rcvfix wakes the reader when the socket's own window is
# closed and sends TCP's window update after its reads (counted per run:
# rcvlowat_window_updates). What rcvfix cannot mend is 7.x's in-sequence
# drop: once its memory passes its buffer (small segments, each with a
# large truesize, moved in from the backlog) the socket drops data TCP
# would collapse, and the peer resends it only when its MPTCP
# retransmission timer fires (about 200 ms: 4 MiB takes 0.05 s without).
# MPTcpExtRcvPruned counts the skbs the socket drops over its buffer: that
# in-sequence one and the out-of-order skbs dropped behind it. So each
# marked run may have at most twice as many MPTCP-level retransmissions as
# skbs dropped over the buffer, plus one (7.3.4: most runs 1 for 1; a
# first run after others 11 for 8 and 11 for 10, its first window
# overrun; a missed window update costs 12-16 per run with 0-1 drops),
# and the ratio is taken from the fastest run without such a drop, of up
# to six (a busy host slows one emulated transfer 2 to 4 times).
# Judged where the kernel has its own MPTCP mark (6.7+); before, recorded.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/lowatstall"

TOTAL=$((4 * 1048576))

rcvfix_unload
rcvfix_load || { fail "load rcvfix"; done_testing; }
client_server rt 46	# $cns sends, $sns reads
mptcp_client_server
for ns in "$cns" "$sns"; do rcvfix_enable 1 "$ns"; done
port=46400

# counter NS NAME: NAME's value in NS's nstat (absolute), or 0.
counter() {
	in_ns "$1" nstat -a -s -z 2> /dev/null | awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'
}

# run PROTO MARK: one 4 MiB transfer; prints "SECONDS RETRANS PRUNED":
# the reader's seconds (or "x"), the sender's MPTCP-level retransmissions
# and the skbs the reader's MPTCP socket dropped over its buffer (RcvPruned).
run() {
	local out=/tmp/rcvfix-rate46-$$ args="-a 10.99.46.2 -n $TOTAL" s
	local rt0 pr0 wu0 rt pr
	rt0=$(counter "$cns" MPTcpExtMPTCPRetrans) pr0=$(counter "$sns" MPTcpExtRcvPruned)
	wu0=$(rcvfix_status rcvlowat_window_updates "$sns")
	port=$((port + 1))
	[[ $1 == mptcp ]] && args+=" -m"
	in_ns "$sns" "$RCVFIX_BIN/lowatstall" server $args -p $port -l "$2" \
		-b 32768 -R 8192 -w poll -t "$(scaled 20)" -T "$(scaled 60)" \
		> "$out" 2>&1 &
	wait_for "$out" listening 20
	in_ns "$cns" timeout "$(scaled 70)" "$RCVFIX_BIN/lowatstall" client \
		$args -p $port -T "$(scaled 60)" > /dev/null 2>&1
	wait
	s=$(grep '^result=' "$out")
	rm -f "$out"
	rt=$(($(counter "$cns" MPTcpExtMPTCPRetrans) - rt0))
	pr=$(($(counter "$sns" MPTcpExtRcvPruned) - pr0))
	echo "# $1, mark $2: $s; MPTCP retransmissions $rt, dropped over the buffer $pr, window updates $(($(rcvfix_status rcvlowat_window_updates "$sns") - wu0))" >&2
	if [[ $(kv result "$s") == done ]]; then
		echo "$(kv seconds "$s") $rt $pr"
	else
		echo "x $rt $pr"
	fi
}

# ratio A B: B / A (A's rate over B's for the same bytes), 2 decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }'; }
# faster A B: is A (seconds) below B (or B "x")?
faster() { [[ $2 == x ]] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

updates() { rcvfix_status rcvlowat_window_updates "$sns"; }
u0=$(updates)
read -r none _ <<< "$(run mptcp 0)"
read -r tcp _ <<< "$(run tcp 524288)"
check_eq "no window update from rcvfix for a reader without a mark, nor for TCP" \
	"$u0" "$(updates)"
u0=$(updates)
best=x clean=x stalled=0 dropped=0
for try in 1 2 3 4 5 6; do
	read -r t rt pr <<< "$(run mptcp 524288)"
	((rt > 2 * pr + 1)) && stalled=$((stalled + 1))
	[[ $t == x ]] && continue
	faster "$t" "$best" && best=$t
	if ((pr > 0)); then
		dropped=$((dropped + 1))
		continue
	fi
	faster "$t" "$clean" && clean=$t
	[[ $none != x ]] && awk -v r="$(ratio "$clean" "$none")" 'BEGIN { exit !(r >= 0.5) }' &&
		break
done
echo "# seconds for 4 MiB: MPTCP no mark $none, MPTCP mark $best (best of $try; of the runs without a drop over the buffer: $clean; runs with one: $dropped), TCP mark $tcp"
major=$(uname -r | cut -d. -f1)
# The equal window's test reads a subflow field BTF must find (6.1+).
if ((major >= 6)); then
	check_not "rcvfix found where a subflow keeps its last data ack's edge (no 'equals the one last sent' in dmesg)" \
		sh -c "dmesg | grep 'window equals the one last sent'"
fi
# 7.x sends no window update after such a read (docs/mptcp-kernel.md): rcvfix does.
if ((major >= 7)); then
	check "rcvfix sent window updates to the marked MPTCP reader ($(($(updates) - u0)))" \
		test "$(updates)" -gt "$u0"
fi
check_not "the unmarked MPTCP reader read it all" test "$none" = x
check_not "the marked MPTCP reader read it all" test "$best" = x
check_eq "no marked run with more MPTCP-level retransmissions than twice its drops over the buffer plus one (runs with more)" \
	0 "$stalled"
if [[ $none != x && $best != x ]]; then
	echo "# marked/unmarked rate: best $(ratio "$best" "$none"), without a drop over the buffer $([[ $clean == x ]] && echo none || ratio "$clean" "$none") (TCP marked/MPTCP unmarked: $(ratio "$tcp" "$none"))"
	name="the marked MPTCP reader reads at least half as fast as the unmarked one"
	if [[ $(rcvfix_status rcvlowat_wakeup) != *mptcp:native+rcvfix* ]]; then
		# Before 6.7 MPTCP has no mark of its own: rcvfix's is the
		# whole rule, and this reader's rate against one that does
		# not ask is recorded, not judged (6.1.0-57: marked 0.27-0.39
		# s in every boot, unmarked 0.12-0.13 s in some, 0.39-0.40 s
		# in others; issue 59's closing note).
		echo "# before 6.7 (no MPTCP mark in the kernel): ratio recorded, not judged"
	elif [[ $clean == x ]]; then
		ok "$name # SKIP each of $try runs met the kernel's drop over the buffer (7.x: docs/mptcp-kernel.md)"
	else
		r=$(ratio "$clean" "$none")
		check "$name ($r, a run without a drop over the buffer)" \
			awk -v r="$r" 'BEGIN { exit !(r >= 0.5) }'
	fi
fi

done_testing
