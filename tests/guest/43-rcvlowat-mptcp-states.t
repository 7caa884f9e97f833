#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SO_RCVLOWAT on MPTCP in every MPTCP state, with TCP on the same kernel as
# the oracle, rcvfix off and enabled in one boot. The states, by who reads:
#   tcp      TCP both ends: the oracle
#   mpc1     MPTCP both ends (MP_CAPABLE), one subflow
#   mpc2     MPTCP both ends, a second subflow joined (an endpoint of the
#            sender's namespace; a namespace pair of its own)
#   active   an MPTCP client reading from a plain TCP server (fallback:
#            the msk's own window, rcv_wnd_sent, stops moving)
#   passive  an MPTCP listener's connection from a plain TCP client
# and the scenarios:
#   paced    2 MiB in 16 KiB writes 2 ms apart, a 512 KiB mark: wakeups
#            per MiB and short reads (a wakeup that reads less than the mark)
#   duplex   the same while the reader's second thread writes on the socket
#            (the msk is owned by that writer now and then)
#   bulk     (mpc2) 2 MiB written at once: the scheduler then fills
#            the first subflow and sends on the second too (paced writes all
#            go on the first), which an nftables counter must see; wakeups
#            at most one per mark's worth + 1 (a burst's count is the
#            reader's lag, not a decision TCP's count can judge)
#   stall    tests/progs/lowatstall: a mark the buffer cannot hold (SO_RCVBUF
#            32768 after it), epoll and a blocking recv(): done or stalled
#   parked   the same request with the reader asleep for 1 s first
#            (lowatstall -D): it polls only once its buffer is full, what
#            that cannot hold waits on the subflows or at the sender, and no
#            new segment arrives to wake it: poll() must report what TCP's
#            would (the subflows' queues are printed), and readable the
#            moment it looks, as TCP's (its window is closed)
# Enabled, each MPTCP cell must do what TCP does: wakeups per MiB within
# TCP's + 1 and within its own off cell's + 1 (duplex, where the reader
# also sleeps in recv() on the msk's lock while the writer owns it: on 6.1
# its sleeps in poll() within TCP's + 1 and all its switches within TCP's
# + 2; on 6.7+, where 7.x's mptcp_release_cb() wakes it too, rcvfix off as
# on: poll()'s readable reports within TCP's + 1 and the wakeups rcvfix
# adds, rcvlowat_wakeups_added, at most 1 per MiB), at most 2 short reads,
# and no stall where TCP completes. Off, the MPTCP cells record the
# kernel's own (6.1: woken per packet); the stall and parked cells run
# enabled only (test 42 records the kernel's own stranded reader on 6.12
# and 7.x).
# Where rcvfix's MPTCP SO_RCVLOWAT part is not in force (rcvlowat_mptcp:
# make check-refused loads it with a receive-path hook refused, as a host
# that cannot use it), stock is the oracle instead of TCP: each enabled
# MPTCP cell within its off cell's + 1, and the stall and parked cells run
# off too, each enabled one done where its off one is (no reader left
# asleep that stock would wake; with two subflows, mpc2, stock's own
# outcome is a race: shown, not judged).
# And MPTCP's receive-path hooks are armed on demand: enabled, not before
# an MPTCP socket sets a mark (ftrace's enabled_functions does not list
# them), then before that setsockopt() returns, for good.
# About 90 s under emulation (amd64), 440 s on arm64.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/lowat" "$RCVFIX_BIN/lowatstall"

MIB=1048576
LOWAT=524288
TOTAL=$((2 * MIB))
PACED="-n $TOTAL -c 16384 -g 2000"
BULK="-n $TOTAL"

rcvfix_unload
rcvfix_load || { fail "load rcvfix"; done_testing; }
lowat_word=$(rcvfix_status rcvlowat_wakeup)
lowat_part=$(rcvfix_status rcvlowat_mptcp)
echo "# rcvlowat_wakeup $lowat_word, rcvlowat_mptcp $lowat_part"
# 1: rcvfix decides MPTCP's wakeups as TCP's; 0: the kernel does (stock oracle)
fixing=0
[[ $lowat_part == in-force ]] && fixing=1
"$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1 ||
	skip "no MPTCP sockets on this kernel"

# Two namespace pairs, the second for mpc2 (veth_pair names its ends by
# the script's PID, in each pair's own namespaces).
snd=$(netns_new lma)	# the sender
rcv=$(netns_new lmb)	# the reader
snd2=$(netns_new lmc)
rcv2=$(netns_new lmd)
veth_pair "$snd" "$rcv" 10.99.43.1 10.99.43.2 || skip "cannot create veth pair"
veth_pair "$snd2" "$rcv2" 10.99.44.1 10.99.44.2 ||
	skip "cannot create a second veth pair"
dev2=veth-$$-a
for ns in "$snd" "$rcv" "$snd2" "$rcv2"; do
	ns_write /proc/sys/net/mptcp/enabled 1 "$ns"
	in_ns "$ns" ip mptcp limits set subflows 2 add_addr_accepted 2 ||
		skip "cannot set the MPTCP path manager's limits"
done
ip -n "$snd2" addr add 10.99.44.3/24 dev "$dev2" &&
	in_ns "$snd2" ip mptcp endpoint add 10.99.44.3 dev "$dev2" subflow ||
	skip "cannot add the second subflow's endpoint"
# What the second subflow carries: the reader's data packets from its
# address, counted by nftables in the reader's namespace.
in_ns "$rcv2" nft -f - <<'NFT' ||
table ip rcvfix43 {
	chain in {
		type filter hook input priority 0;
		ip saddr 10.99.44.3 meta length > 200 counter
	}
}
NFT
	fail "an nftables counter in the mpc2 reader's namespace"
# second_subflow_bytes: bytes of data packets the second subflow brought.
second_subflow_bytes() {
	in_ns "$rcv2" nft list chain ip rcvfix43 in 2> /dev/null |
		awk '/counter/ { for (i = 1; i < NF; i++) if ($i == "bytes") print $(i + 1) }'
}
port=43400

# state_args STATE ROLE: the options of lowat/lowatstall for ROLE (r: the
# reader, s: the sender) in STATE.
state_args() {
	local a=""
	case $1 in
	mpc1|mpc2) a=-m ;;
	active) [[ $2 == r ]] && a=-m; a+=" -r" ;;
	passive) [[ $2 == r ]] && a=-m ;;
	esac
	echo "$a"
}

# Joins seen by the mpc2 reader's namespace (its MPTCP MIB).
joins() {
	in_ns "$rcv2" awk '/^MPTcpExt:/ { if (!n) { split($0, k); n = 1; next }
		split($0, v); for (i in k) if (k[i] == "MPJoinSynRx") print v[i] }' \
		/proc/net/netstat
}

# lowat_cell STATE EXTRA: one paced transfer; sets R to the reader's line
# and SND to the sender's exit status and messages (with -d the sender
# checks every byte of the reader's writes: exit 1 at the first that
# differs). The listening end starts first and says so.
lowat_cell() {
	local out=/tmp/rcvfix-lowat43-$$ ra sa dst=10.99.43.2 snd=$snd rcv=$rcv
	local spid st
	ra=$(state_args "$1" r) sa=$(state_args "$1" s)
	[[ $1 == mpc2 ]] && snd=$snd2 rcv=$rcv2 dst=10.99.44.2
	port=$((port + 1))
	if [[ $1 == active ]]; then
		dst=10.99.43.1
		in_ns "$snd" "$RCVFIX_BIN/lowat" send $sa $2 -a $dst -p $port \
			-T 60 $SEND > "$out" 2>&1 &
		spid=$!
		wait_for "$out" listening 20
		R=$(in_ns "$rcv" "$RCVFIX_BIN/lowat" recv $ra $2 -a $dst \
			-p $port -l $LOWAT -T 60 2>&1 | grep '^lowat=')
		wait $spid
		st=$?
		SND="exit $st: $(grep -v '^listening\|^sent=' "$out" | tr '\n' ' ')"
	else
		in_ns "$rcv" "$RCVFIX_BIN/lowat" recv $ra $2 -a $dst -p $port \
			-l $LOWAT -T 60 > "$out" 2>&1 &
		wait_for "$out" listening 20
		SND=$(in_ns "$snd" "$RCVFIX_BIN/lowat" send $sa $2 -a $dst \
			-p $port -T 60 $SEND 2>&1 > /dev/null)
		SND="exit $?: $SND"
		wait
		R=$(grep '^lowat=' "$out")
	fi
	wait
	rm -f "$out"
}

# stall_cell STATE WAIT STALL_S [DELAY_MS]: one request/response; sets S
# and C to the server's and the client's result lines and exit statuses,
# one line each (the server checks every byte of the request, the client
# the reply: no result line where one differs, its message instead). With
# DELAY_MS the reader first sleeps that long (lowatstall -D): the request
# arrives while nobody reads, and PARKED
# is what the reader's TCP sockets (an MPTCP reader's subflows) held 300 ms
# into that sleep, in bytes, socket by socket.
stall_cell() {
	local out=/tmp/rcvfix-stall43-$$ ra sa dst=10.99.43.2 snd=$snd rcv=$rcv
	local cpid spid st delay=() pfile=/tmp/rcvfix-parked43-$$ ppid=
	ra=$(state_args "$1" r) sa=$(state_args "$1" s)
	[[ $1 == mpc2 ]] && snd=$snd2 rcv=$rcv2 dst=10.99.44.2
	port=$((port + 1))
	local args="-n $TOTAL -p $port"
	[[ -n ${4:-} ]] && delay=(-D "$4")
	PARKED=
	if [[ $1 == active ]]; then
		dst=10.99.43.1
		in_ns "$snd" "$RCVFIX_BIN/lowatstall" client $sa $args -a $dst \
			-T $(($3 + 30)) > "$out" 2>&1 &
		cpid=$!
		wait_for "$out" listening 20
		[[ -z ${4:-} ]] || { parked_sample "$rcv" > "$pfile" & ppid=$!; }
		S=$(in_ns "$rcv" "$RCVFIX_BIN/lowatstall" server $ra $args \
			-a $dst -w "$2" "${delay[@]}" -t "$3" -T $(($3 + 30)) 2>&1 |
			grep '^result=\|^lowatstall:'; echo "exit=${PIPESTATUS[0]}")
		wait $cpid
		st=$?
		C="$(grep -v '^listening' "$out") exit=$st"
	else
		in_ns "$rcv" "$RCVFIX_BIN/lowatstall" server $ra $args -a $dst \
			-w "$2" "${delay[@]}" -t "$3" -T $(($3 + 30)) > "$out" 2>&1 &
		spid=$!
		wait_for "$out" listening 20
		[[ -z ${4:-} ]] || { parked_sample "$rcv" > "$pfile" & ppid=$!; }
		C=$(in_ns "$snd" timeout $(($3 + 30)) "$RCVFIX_BIN/lowatstall" \
			client $sa $args -a $dst -T $(($3 + 30)) 2>&1; echo "exit=$?")
		wait $spid
		st=$?
		S="$(grep '^result=\|^lowatstall:' "$out") exit=$st"
	fi
	wait
	S=${S//$'\n'/ } C=${C//$'\n'/ }
	[[ -z $ppid ]] || PARKED=$(cat "$pfile")
	rm -f "$out" "$pfile"
}

# parked_sample NS: the bytes queued on NS's established TCP sockets
# (Recv-Q, each) 300 ms from now.
parked_sample() {
	sleep 0.3
	in_ns "$1" ss -tnH state established | awk '{ printf "%s%s", n++ ? "+" : "", $1 }
		END { if (!n) printf "none" }'
}

STATES="tcp mpc1 mpc2 active passive"
STALL_OK=$(scaled 5)
PARK_MS=$(($(scaled 1) * 1000))
# the request/response cells: kind, then how the reader waits
REQ_CELLS=("stall, epoll" "stall, block" "parked, poll")
declare -A W PS SHORT RES READY LINES ADDED P

# check_done CELL DESC: CELL's request/response completed; if not, the
# failure says what both ends printed and how they exited.
check_done() {
	if [[ ${RES[$1]} == done ]]; then
		ok "$2"
	else
		fail "$2" "expected: done" "actual:   ${RES[$1]}" "${LINES[$1]}"
	fi
}

# receive_hooks: yes when the subflows' sk_data_ready and sk_state_change,
# mptcp_poll and mptcp_release_cb are all armed.
receive_hooks() {
	local n
	n=$(grep -cE '^(subflow_data_ready|subflow_state_change|mptcp_poll|mptcp_release_cb)\b' \
		/sys/kernel/tracing/enabled_functions 2> /dev/null)
	((n == 4)) && echo yes || echo "no ($n)"
}
targets=$(rcvfix_status targets)
lazy=0
[[ $targets == *mptcp_poll* ]] && lazy=1

for en in 0 1; do
	for ns in "$snd" "$rcv" "$snd2" "$rcv2"; do rcvfix_enable $en "$ns"; done
	if ((en && lazy)); then
		check_eq "enabled, no mark set yet: receive hooks not armed (/proc/net/rcvfix)" \
			no "$(rcvfix_status receive_hooks_armed)"
		check "enabled, no mark set yet: ftrace lists none of subflow_data_ready, subflow_state_change, mptcp_poll, mptcp_release_cb" \
			test "$(receive_hooks)" = "no (0)"
	fi
	for state in $STATES; do
		j0=$(joins)
		scens="paced duplex"
		[[ $state == mpc2 ]] && scens+=" bulk"
		for scen in $scens; do
			extra= SEND=$PACED
			[[ $scen == duplex ]] && extra=-d
			[[ $scen == bulk ]] && SEND=$BULK
			cell="$state, $scen, enable=$en"
			rns=$rcv
			[[ $state == mpc2 ]] && rns=$rcv2
			a0=$(rcvfix_status rcvlowat_wakeups_added "$rns")
			[[ $state != mpc2 ]] || b0=$(second_subflow_bytes)
			lowat_cell $state "$extra"
			a1=$(rcvfix_status rcvlowat_wakeups_added "$rns")
			sf2=
			[[ $state != mpc2 ]] || sf2=$(($(second_subflow_bytes) - b0))
			echo "# $cell: $R added=$((a1 - a0))${sf2:+ second_subflow_bytes=$sf2}"
			# The default scheduler sends paced writes on the
			# first subflow (the one with the shortest queue,
			# both idle); bulk writes fill it and use the second.
			if [[ $state == mpc2 && $scen == bulk ]]; then
				check "$cell: the second subflow carried data ($sf2 bytes)" \
					test "${sf2:-0}" -gt 0
			fi
			check_eq "$cell: all bytes read" $TOTAL "$(kv bytes "$R")"
			if [[ $scen == duplex && $SND == "exit 0:"* ]]; then
				ok "$cell: the sender read the reader's writes intact"
			elif [[ $scen == duplex ]]; then
				fail "$cell: the sender read the reader's writes intact" \
					"sender: $SND"
			fi
			W[$cell]=$(per_mib_x100 "$R") SHORT[$cell]=$(kv short "$R")
			PS[$cell]=$(per_mib_x100 "$R" poll_nvcsw)
			P[$cell]=$(($(kv polls "$R") * 100 * MIB / TOTAL))
			# wakeups rcvfix added (TCP's net), per MiB x100
			ADDED[$cell]=$(((a1 - a0) * 100 * MIB / TOTAL))
			if ((en && lazy)) && [[ $state == mpc1 && $scen == paced ]]; then
				check_eq "after an MPTCP socket's first mark: receive hooks armed (/proc/net/rcvfix)" \
					yes "$(rcvfix_status receive_hooks_armed)"
				check_eq "... and in ftrace's enabled_functions" \
					yes "$(receive_hooks)"
				check "... since a time (receive_hooks_armed_since)" \
					test "$(rcvfix_status receive_hooks_armed_since)" -gt 0
			fi
		done
		# request/response cells, enabled only (test 42 records the
		# kernel's own stranded reader); parked: the reader first
		# sleeps PARK_MS while the request fills its buffer
		for kind in "${REQ_CELLS[@]}"; do
			((en || !fixing)) || break
			cell="$state, $kind, enable=$en"
			delay= queued=
			[[ $kind == parked,* ]] && delay=$PARK_MS
			stall_cell $state "${kind#*, }" $STALL_OK $delay
			[[ -z $delay ]] ||
				queued="; queued on the reader's TCP sockets while it slept: $PARKED"
			echo "# $cell: $S; client $C$queued"
			RES[$cell]=$(kv result "$S") READY[$cell]=$(kv ready "$S")
			LINES[$cell]="server: ${S:-nothing}; client: ${C:-nothing}"
			if [[ ${RES[$cell]} == "done" ]]; then
				check_eq "$cell: the client got the reply intact" \
					"done" "$(kv result "$C")"
			fi
		done
		if [[ $state == mpc2 ]]; then
			echo "# mpc2, enable=$en: endpoints of the sender: $(in_ns "$snd2" ip mptcp endpoint show | tr '\n' ' ')"
			echo "# mpc2, enable=$en: sender's MIB: $(in_ns "$snd2" nstat -az 2> /dev/null | awk '/MPTcpExtMPJoin|MPTcpExtMPCapable/ && $2 > 0 { printf "%s=%s ", $1, $2 }')"
			echo "# mpc2, enable=$en: reader's MIB: $(in_ns "$rcv2" nstat -az 2> /dev/null | awk '/MPTcpExtMPJoin|MPTcpExtMPCapable/ && $2 > 0 { printf "%s=%s ", $1, $2 }')"
			check "mpc2, enable=$en: second subflows joined" \
				test "$(joins)" -gt "$j0"
		fi
	done
done

# The oracle: TCP on this kernel, and the same cell off.
for state in $STATES; do
	for scen in paced duplex bulk; do
		[[ $scen != bulk || $state == mpc2 ]] || continue
		on="$state, $scen, enable=1" off="$state, $scen, enable=0"
		tcp="tcp, $scen, enable=1"
		w=${W[$on]:-999999}
		duplex=0
		[[ $state != tcp && $scen == duplex ]] && duplex=1
		if ((duplex)); then
			# MPTCP with a second thread writing: the reader also
			# sleeps on the msk's lock while the writer owns it,
			# and those sleeps count as voluntary switches. Held
			# to poll()'s readable reports too.
			check "$on: readable per MiB (${P[$on]}/100) within TCP's + 1 (${P[$tcp]}/100)" \
				test "${P[$on]:-999999}" -le $((${P[$tcp]:-0} + 100))
		fi
		if ((!fixing)) && [[ $state != tcp ]]; then
			check "$on: wakeups per MiB ($w/100) within its off cell's + 1 (${W[$off]}/100; rcvfix's part off: stock's)" \
				test "$w" -le $((${W[$off]:-0} + 100))
		elif [[ $scen == bulk ]]; then
			# A burst: how many wakeups depends on how far the
			# reader lags it (TCP read 0.50 to 1.50 per MiB, mpc2
			# 2.00 on arm64 with no short read and no wakeup
			# rcvfix added), not TCP's count: at most one per
			# mark's worth, + 1.
			check "$on: wakeups per MiB ($w/100) within one per mark + 1 ($((MIB * 100 / LOWAT))/100)" \
				test "$w" -le $((MIB * 100 / LOWAT + 100))
		elif ((duplex)) && [[ $lowat_word == *native+rcvfix* ]]; then
			# 6.7+: the kernel's own mptcp_release_cb() wakes it
			# too (7.x: at every backlog it moves, mark or not),
			# rcvfix off as on: its voluntary switches are the
			# kernel's. Held instead to the wakeups rcvfix added.
			echo "# $on: voluntary switches per MiB $w/100 (rcvfix off: ${W[$off]}/100; TCP: ${W[$tcp]}/100)"
			check "$on: wakeups rcvfix added per MiB (${ADDED[$on]}/100) at most 1" \
				test "${ADDED[$on]:-999}" -le 100
		else
			slack=100
			if ((duplex)); then
				# 6.1's duplex cells: the reader's sleeps in
				# poll() are the wakeups SO_RCVLOWAT decides.
				# Its other switches are recv()'s sleeps on the
				# msk's lock while the writer thread owns it
				# (bpftrace on sched_switch: __lock_sock from
				# mptcp_recvmsg, 3 or 4 per 2 MiB in these
				# cells with rcvfix off; a fresh make check read
				# 3.50 switches per MiB, TCP 2.00): all of
				# them within TCP's + 2.
				check "$on: sleeps in poll() per MiB (${PS[$on]}/100) within TCP's + 1 (${PS[$tcp]}/100)" \
					test "${PS[$on]:-999999}" -le $((${PS[$tcp]:-0} + 100))
				slack=200
			fi
			check "$on: wakeups per MiB ($w/100) within TCP's + $((slack / 100)) (${W[$tcp]}/100)" \
				test "$w" -le $((${W[$tcp]:-0} + slack))
			check "$on: wakeups per MiB ($w/100) within its off cell's + 1 (${W[$off]}/100)" \
				test "$w" -le $((${W[$off]:-0} + 100))
		fi
		((fixing)) || [[ $state == tcp ]] ||
			continue	# stock's short reads: not judged
		check "$on: at most 2 short reads (${SHORT[$on]})" \
			test "${SHORT[$on]:-99}" -le 2
	done
	for kind in "${REQ_CELLS[@]}"; do
		on="$state, $kind, enable=1"
		if ((fixing)) || [[ $state == tcp ]]; then
			check_done "$on" \
				"$on: done where TCP is (${RES[tcp, $kind, enable=1]})"
			[[ $kind == parked,* ]] || continue
			# Woken by the sleep's end alone: what filled the
			# buffer came while nobody read, so the socket must
			# be readable the moment the reader looks, as TCP's
			# (its window is closed). On 7.x a one-subflow
			# reader's subflow window looked open while the
			# peer had filled the msk's (issue 59): not readable,
			# and the peer waited for its retransmission timer.
			if [[ $state == tcp ]]; then
				check_eq "$on: readable at once after the sleep (the window closed)" \
					1 "${READY[$on]}"
			else
				check_eq "$on: readable at once after the sleep, as TCP's" \
					"${READY[tcp, $kind, enable=1]}" "${READY[$on]}"
			fi
		elif [[ $state != mpc2 && ${RES[$state, $kind, enable=0]} == done ]]; then
			# stock woke its reader: so must rcvfix. Not judged
			# for mpc2: there stock's own outcome is a race of the
			# two subflows (make check-refused on 6.12 read its
			# blocking cell stalled off and done on, then done off
			# and stalled on)
			check_done "$on" "$on: done as stock's (rcvfix's part off)"
		else
			echo "# $on: stock's ${RES[$state, $kind, enable=0]}, rcvfix's ${RES[$on]} (rcvfix's part off: nothing to hold it to)"
		fi
	done
done

done_testing
