#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stock is the oracle: the receive-buffer matrix (tests/progs/sockdiff.c:
# TCP and MPTCP x before bind, after listen, established x SO_RCVBUF[FORCE]
# x 4096, below, equal to, above tcp_rmem[1], already locked (SO_BUF_LOCK;
# MPTCP, which has none, by a locking SO_RCVBUF); UDP and UNIX), plus
# bpf_setsockopt() and sock_set_rcvbuf(), run once without the module and
# once with it enabled, in the same guest and namespace, and compared field
# by field; with tcp_rmem[2] far above the requests, then below the largest. A request the rule locks must leave every field as stock does; a
# request whose lock is avoided may change only the lock and its listed
# consequences; any other family must equal stock entirely (the rule is
# for TCP and MPTCP only).
source "$RCVFIX_REPO/tests/guest/lib.sh"
KSOCK=$RCVFIX_KMOD/rcvfix_test_ksock.ko
need "$RCVFIX_KO" "$KSOCK" "$RCVFIX_BIN/sockdiff" "$RCVFIX_BIN/bpf_rcvbuf"

RMEM="4096 425984 40880000"
# The same default, with a maximum between the "equal" and "above" buffers.
RMEM_LOW_MAX="4096 425984 600000"

# Fields that differ between two stock runs as well: timing, named with why.
# Compared nowhere (key names, whatever the socket).
TIMING=(
	tcpi_rtt tcpi_rttvar tcpi_min_rtt	# measured round-trip time
	tcpi_rcv_rtt				# receiver-side RTT estimate
	tcpi_rto tcpi_ato			# timeouts derived from those
	tcpi_pacing_rate tcpi_delivery_rate	# rates: bytes per measured time
	tcpi_busy_time				# jiffies spent sending
	tcpi_last_data_sent tcpi_last_ack_sent	# ms since the last event
	tcpi_last_data_recv tcpi_last_ack_recv
)
# MPTCP only: the window a subflow announces last (rcv_wnd, the peer's
# tcpi_snd_wnd) comes from the connection-level receive space at the moment
# of that ACK, scaled by the payload/truesize ratio measured on the skbs
# received so far (tcp_win_from_space()); how the 1 KB was packed and
# moved to the MPTCP socket by then is timing (two stock runs on 7.3 differ
# by 14976 bytes either way, seen with a 4 KB exchange). The MPTCP socket's
# send buffer is tcp_wmem[0] plus its subflows', copied from them when the
# socket is next released if it was owned when they grew (7.x:
# MPTCP_SYNC_SNDBUF): 20480 or 2630656 right after the exchange, either way
# between stock and rcvfix in two cells of one 7.3 PREEMPT_RT run beside
# another guest, where rcvfix ran stock's code (a locking request).
MPTCP_TIMING=(rcv_wnd tcpi_snd_wnd sndbuf)
# What an avoided lock changes, besides the lock bit (buf_lock, and
# userlocks in the kernel view): the window scale offered in the SYN (the
# socket's own rcv_wscale, the peer's snd_wscale) comes from the unlocked
# maximum, not the buffer; with it the initial window and the window clamp
# (window_clamp, rcv_wnd, rcv_ssthresh, snd_wnd at the peer, rcv_space =
# min(rcv_wnd, 10 MSS)); on 7.x stock also sets the clamp from the locked
# buffer (tcp_set_rcvbuf()), which an avoided lock does not; and a buffer
# that is not locked may be autotuned (rcvbuf).
AVOIDED=(
	buf_lock userlocks lock
	tcpi_rcv_wscale tcpi_snd_wscale
	window_clamp rcv_wnd rcv_ssthresh tcpi_rcv_ssthresh tcpi_snd_wnd
	rcv_space tcpi_rcv_space
	rcvbuf
)

rcvfix_unload
cgroup2_mount || skip "cannot mount cgroup2"
CG=$CGROUP2/rcvfix-diff-$$
on_exit "rmdir $CG"
insmod "$KSOCK" || skip "cannot load $KSOCK"
on_exit "rmmod rcvfix_test_ksock"
ns=$(netns_new diff)
rmem_max_set 40880000	# SO_RCVBUF "above" unclamped
ns_write /proc/sys/net/ipv4/tcp_rmem "$RMEM" "$ns"	# T below: both sets share it
# A kernel built without MPTCP (Debian 11's 5.10): the matrix without its
# MPTCP cells, and without the kernel view (it is there for the subflows,
# and 5.10's verifier rejects its iter/tcp program), said once.
nompt=()
if ! ns_write /proc/sys/net/mptcp/enabled 1 "$ns" 2> /dev/null; then
	echo "# no MPTCP in this kernel (no net.mptcp.enabled): TCP, UDP, UNIX, BPF and kernel cells, user-space view"
	nompt=(-M -K)
fi
T=$(tcp_rmem1 "$ns")
out=/tmp/rcvfix-diff-$$
on_exit "rm -f $out.*"

# request_val VALUE: the size sockdiff requests for VALUE (see its --help).
request_val() {
	case $1 in
	small) echo 4096 ;;
	below) echo $((T / 2 - 1)) ;;
	equal) echo $((T / 2)) ;;
	above | locked) echo "$T" ;;
	esac
}

# snapshot RUN PORT: the whole matrix into $out.RUN.
snapshot() {
	local run=$1 port=$2 v val rc ok=1 t0=$SECONDS t1 t2
	in_ns "$ns" "$RCVFIX_BIN/sockdiff" "${nompt[@]}" -p "$port" all > "$out.$run" \
		2> "$out.$run.err" || {
		fail "$run: sockdiff ran the matrix" "$(cat "$out.$run.err")"
		ok=0
	}
	t1=$SECONDS
	# bpf_setsockopt() from sock_ops: on the client before its SYN
	# (connect hook) and on the accepted socket (passive established);
	# user-space view only (-K: TCP needs no kernel view, and loading it
	# costs a parse of the kernel's BTF per run).
	rm -f "$out.bpf"
	for v in small below equal above; do
		val=$(request_val $v)
		port=$((port + 1))
		echo "cell=tcp:bpf:rcvbuf:$v" >> "$out.bpf"
		"$RCVFIX_BIN/bpf_rcvbuf" -g "$CG" -p "$port" -c "$val" -P "$val" \
			-T 60 -- ip netns exec "$ns" "$RCVFIX_BIN/sockdiff" -K \
			-p "$port" "tcp:bpf:rcvbuf:$v" >> "$out.bpf" \
			2> "$out.$run.err"
		rc=$?
		((rc == 0)) || {
			fail "$run: bpf_rcvbuf, $v" "exit $rc" "$(cat "$out.$run.err")"
			ok=0
		}
	done
	# "hook=NAME k=v ..." -> "CELL bpf.NAME k=v" lines
	awk '/^cell=/ { c = substr($1, 6); next }
	     /^hook=/ { s = "bpf." substr($1, 6)
			for (i = 2; i <= NF; i++) print c, s, $i; next }
	     { print }' "$out.bpf" >> "$out.$run"
	t2=$SECONDS
	# sock_set_rcvbuf() on a kernel TCP socket (rcvfix_test_ksock), all
	# from one shell (every program start costs under emulation).
	local args=()
	for v in small below equal above locked; do
		val=$(request_val $v)
		[[ $v == locked ]] && val="lock $val"
		args+=("$v" "$val")
	done
	in_ns "$ns" sh -c 'f=$1; shift
		while [ $# -gt 1 ]; do
			echo "full $2" > "$f" && printf "%s " "$1" && cat "$f"
			shift 2
		done' sh /proc/rcvfix_test_ksock "${args[@]}" |
		awk '{ for (i = 2; i <= NF; i++)
			print "tcp:ksock:sock_set_rcvbuf:" $1, "ksock", $i }' \
		>> "$out.$run"
	echo "# $run run: matrix $((t1 - t0)) s, bpf $((t2 - t1)) s," \
		"ksock $((SECONDS - t2)) s"
	((ok))
}

# compare STOCK RCVFIX: one line per cell, "CELL CLASS ok" or "CELL CLASS
# FAIL" followed by "  ..." lines saying what differs; CLASS is "stock"
# (not TCP: must equal stock entirely), "locks" (must equal stock) or
# "avoided" (may differ in the AVOIDED fields only). Also fails an avoided
# cell whose requested socket is still locked with the module, and an
# MPTCP socket whose subflows' lock differs from its own. diff(1) picks the
# lines that differ (awk over all 2 x 28000 lines took 13 s under TCG).
compare() {
	{
		cut -d " " -f 1 "$1" | uniq | sed "s/^/C /"
		diff --unchanged-line-format= --old-line-format="S %L" \
			--new-line-format="R %L" "$1" "$2"
		grep -E " (set|buf_lock|userlocks|lock)=" "$2" | sed "s/^/M /"
	} | awk -v timing="${TIMING[*]}" -v avoided="${AVOIDED[*]}" \
		-v mptcp_timing="${MPTCP_TIMING[*]}" '
	function cls(c,  f) {
		split(c, f, ":")
		if (f[1] != "tcp" && f[1] != "mptcp")
			return "stock"
		return f[4] == "equal" || f[4] == "above" ? "avoided" : "locks"
	}
	function add(c, text) { bad[c] = bad[c] "\n  " text }
	BEGIN {
		n = split(timing, t, " "); for (i = 1; i <= n; i++) ign[t[i]] = 1
		n = split(avoided, t, " "); for (i = 1; i <= n; i++) av[t[i]] = 1
		n = split(mptcp_timing, t, " ")
		for (i = 1; i <= n; i++) mign[t[i]] = 1
	}
	$1 == "C" { cells[++ncell] = $2; next }
	{
		k = $4; sub(/=.*/, "", k); v = $4; sub(/^[^=]*=/, "", v)
		id = $2 " " $3 " " k
	}
	$1 == "M" { m[id] = v; chk[++nchk] = id; next }
	!(id in seen) { seen[id] = 1; ids[++nid] = id }
	$1 == "S" { s[id] = v }
	$1 == "R" { r[id] = v }
	END {
		for (i = 1; i <= nid; i++) {	# lines that differ
			split(ids[i], f, " "); c = f[1]; k = f[3]
			if (k in ign || (c ~ /^mptcp:/ && k in mign) ||
			    (cls(c) == "avoided" && k in av))
				continue
			add(c, sprintf("%s %s: stock %s, rcvfix %s", f[2], k,
				       (ids[i] in s) ? s[ids[i]] : "(none)",
				       (ids[i] in r) ? r[ids[i]] : "(none)"))
		}
		for (i = 1; i <= nchk; i++) {	# locks seen with rcvfix
			split(chk[i], f, " "); c = f[1]; k = f[3]; b = m[chk[i]]
			# The socket the request went to: "set" (user
			# space), "lock" (ksock), both ends of a bpf cell.
			l = ""
			if (k == "set" && b == "0")
				l = m[c " " f[2] " buf_lock"]
			else if (k == "lock" || (c ~ /:bpf:/ && k == "buf_lock" &&
						 f[2] != "listener"))
				l = b
			if (cls(c) == "avoided" && l != "" && int(l) % 4 >= 2)
				add(c, sprintf("%s: still locked with rcvfix " \
					       "(lock bits %s)", f[2], l))
			if (c ~ /^mptcp:/ && k == "userlocks" && f[2] ~ /\.kernel$/) {
				o = f[2]; sub(/\.kernel$/, "", o)
				l = m[c " " o " buf_lock"]
				if ((int(b) % 4 >= 2) != (int(l) % 4 >= 2))
					add(c, sprintf("%s: subflow userlocks %s, " \
						       "socket buf_lock %s (rcvfix)",
						       o, b, l))
			}
		}
		for (i = 1; i <= ncell; i++) {
			c = cells[i]
			print c, cls(c), (c in bad) ? "FAIL" bad[c] : "ok"
		}
	}'
}

# diff_run LABEL TCP_RMEM PORT: the matrix on stock and with rcvfix
# enabled, compared; the module is unloaded again after.
diff_run() {
	local label=$1 start=$SECONDS t_stock t_both cells=0 line cell class res desc
	ns_write /proc/sys/net/ipv4/tcp_rmem "$2" "$ns"
	snapshot stock "$3" || return 1
	t_stock=$((SECONDS - start))
	rcvfix_load || { fail "$label: load rcvfix"; return 1; }
	rcvfix_enable 1 "$ns"
	snapshot rcvfix $(($3 + 500)) || return 1
	rcvfix_unload
	t_both=$((SECONDS - start))
	compare "$out.stock" "$out.rcvfix" > "$out.cmp"
	echo "# $label: $(wc -l < "$out.stock") fields per run; stock run ${t_stock} s," \
		"rcvfix run $((t_both - t_stock)) s, compare $((SECONDS - start - t_both)) s"
	while IFS= read -r line; do
		if [[ $line == "  "* ]]; then
			echo "#  $line"
			continue
		fi
		read -r cell class res <<< "$line"
		cells=$((cells + 1))
		desc="$label: $cell ($class)"
		case $class in
		stock) desc+=": equals stock" ;;
		locks) desc+=": equals stock" ;;
		avoided) desc+=": equals stock but for the lock and its consequences" ;;
		esac
		if [[ $res == ok ]]; then ok "$desc"; else fail "$desc"; fi
	done < "$out.cmp"
	# 89 cells; without MPTCP 30 fewer (3 stages x 2 options x 5 values)
	want_cells=$((${#nompt[@]} ? 59 : 89))
	check "$label: matrix complete: $want_cells cells compared (saw $cells)" \
		test "$cells" -eq "$want_cells"
}

# tcp_rmem[2] far above every request, then below the "above" one (a
# buffer autotuning never reaches, as SO_RCVBUF 4 MB at Debian's defaults).
diff_run "tcp_rmem $RMEM" "$RMEM" 14000 &&
	diff_run "tcp_rmem $RMEM_LOW_MAX" "$RMEM_LOW_MAX" 15000

done_testing
