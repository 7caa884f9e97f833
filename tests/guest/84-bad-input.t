#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input at every entry point (tests/stress/badinput.c): bad module
# parameters refuse the load and leave nothing behind; every class of bad
# write to net.rcvfix.enable fails with EINVAL (EPERM without
# CAP_NET_ADMIN) and keeps the value; bad setsockopt() lengths, pointers
# and values give exactly the errors of the stock kernel and change
# nothing. None of it logs anything.
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/stress/guest-lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/stress-badinput" "$RCVFIX_BIN/sysctlw"

rcvfix_unload
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
ns=$(netns_new bad)
on_exit "ip netns del $ns"
EN=/proc/sys/net/rcvfix/enable
PARAM=/sys/module/rcvfix/parameters/default_enable

# nothing_left: no trace of rcvfix in the kernel
nothing_left() {
	! grep -q '^rcvfix ' /proc/modules && [[ ! -e /proc/sys/net/rcvfix ]] &&
		[[ ! -e /proc/net/rcvfix ]] &&
		! grep -qs rcvfix /sys/kernel/tracing/enabled_functions
}

# ---- 1. module parameters ----------------------------------------------
i=0
for p in default_enable=2 default_enable=-1 default_enable=abc \
	default_enable= default_enable default_enable=0x1 default_enable=1abc \
	default_enable=99999999999 default_enable=1.0; do
	i=$((i + 1))
	dmesg_mark "param $i"
	if insmod "$RCVFIX_KO" "$p" 2> "$tmp/err"; then
		fail "insmod $p is refused" "it loaded"
		rcvfix_unload
		continue
	fi
	ok "insmod $p is refused ($(tr -d '\n' < "$tmp/err" | sed 's/.*: //'))"
	check "insmod $p leaves nothing behind" nothing_left
	# rcvfix's lines only: the kernel's taint notes come with the first
	# load attempt of any out-of-tree, unsigned module, and a starved
	# emulated CPU logs "hrtimer: interrupt took N ns" (seen on 5.10)
	loud=$(stress_log_loud "param $i" | grep -E 'rcvfix' |
		grep -vE 'loading out-of-tree module taints|module verification failed')
	if [[ $(grep -c . <<< "$loud") == 1 &&
		$loud == *"invalid for parameter "?"default_enable"* ]]; then
		ok "insmod $p: only the kernel's parameter error is logged"
	else
		fail "insmod $p: only the kernel's parameter error is logged" "$loud"
	fi
done

dmesg_mark "param unknown"
if rcvfix_load foo=1; then
	ok "an unknown parameter is ignored, as for every module"
	check_eq "...with the kernel's one warning" 1 \
		"$(stress_log_loud "param unknown" | grep -c "unknown parameter 'foo' ignored")"
	rcvfix_unload
else
	fail "an unknown parameter is ignored, as for every module"
fi

check "insmod default_enable=1" rcvfix_load default_enable=1
check_eq "default_enable=1: enabled in the initial namespace" 1 "$(cat $EN)"
check_eq "default_enable=1: enabled in an existing namespace" 1 "$(rcvfix_enabled "$ns")"
dmesg_mark "param runtime"
for v in 2 -1 abc " " 1x 99999999999; do
	r=$("$RCVFIX_BIN/sysctlw" "$PARAM" "$v")
	check_eq "runtime default_enable='$v' is refused" "EINVAL 1" \
		"$(kv errno "$r") $(cat $PARAM)"
done
r=$("$RCVFIX_BIN/sysctlw" "$PARAM" "")
check_eq "runtime default_enable: an empty write is ignored (sysfs)" "0 1" \
	"$(kv errno "$r") $(cat $PARAM)"
r=$("$RCVFIX_BIN/sysctlw" "$PARAM" "0")
check_eq "runtime default_enable=0 is taken" "0 0" "$(kv errno "$r") $(cat $PARAM)"
check_eq "runtime parameter writes log nothing" "" "$(stress_log_loud "param runtime")"
rcvfix_unload

# ---- 2. net.rcvfix.enable ------------------------------------------------
rcvfix_load || { fail "load rcvfix"; done_testing; }
dmesg_mark sysctl
in_ns "$ns" "$RCVFIX_BIN/stress-badinput" sysctl $EN > "$tmp/sysctl"
while IFS= read -r line; do
	name=$(kv case "$line")
	if [[ $(kv verdict "$line") == ok ]]; then
		ok "enable <- $name: $(kv want "$line") (errno $(kv errno "$line"))"
	else
		fail "enable <- $name: want $(kv want "$line")" "$line"
	fi
done < "$tmp/sysctl"
check "the sysctl matrix ran" test "$(wc -l < "$tmp/sysctl")" -ge 25

# The same matrix against a stock 0/1 sysctl, for information only.
stock=/proc/sys/net/ipv4/tcp_ecn_fallback
if in_ns "$ns" test -w $stock; then
	in_ns "$ns" "$RCVFIX_BIN/stress-badinput" sysctl $stock > "$tmp/stock"
	echo "# a stock 0/1 sysctl ($stock) answers these differently:"
	awk 'NR == FNR { r[$1] = $2 " " $3; next }
	     r[$1] != $2 " " $3 { print "#   " $1 ": rcvfix " r[$1] ", stock " $2 " " $3 }' \
		"$tmp/sysctl" "$tmp/stock"
	echo 1 | in_ns "$ns" tee $stock > /dev/null
fi

echo 1 | in_ns "$ns" tee $EN > /dev/null
r=$(in_ns "$ns" "$RCVFIX_BIN/sysctlw" --drop-cap $EN 0)
check_eq "without CAP_NET_ADMIN: EPERM, value kept" "EPERM 1" \
	"$(kv errno "$r") $(rcvfix_enabled "$ns")"
if command -v setpriv > /dev/null; then
	r=$(in_ns "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$RCVFIX_BIN/sysctlw" $EN 0)
	check_eq "another user: EACCES at open (file mode), value kept" \
		"EACCES 1" "$(kv errno "$r") $(rcvfix_enabled "$ns")"
fi
if unshare -Urn true 2> /dev/null; then
	check_eq "root of a user namespace cannot turn its own namespace on" \
		"EPERM 0 0" \
		"$(unshare -Urn sh -c "$RCVFIX_BIN/sysctlw $EN 1 | sed 's/.*errno=//'; cat $EN" | tr '\n' ' ')$(cat $EN)"
fi

# Concurrent writers: in two namespaces and here at once.
x=$(netns_new bad2)
on_exit "ip netns del $x"
secs=3
stress_long && secs=20
for where in "$ns" "$x" ""; do
	if [[ -n $where ]]; then
		in_ns "$where" "$RCVFIX_BIN/stress-badinput" sysctl-race $EN \
			--threads 3 --seconds $secs > "$tmp/race.$where" 2>&1 &
	else
		"$RCVFIX_BIN/stress-badinput" sysctl-race $EN --threads 3 \
			--seconds $secs > "$tmp/race.init" 2>&1 &
	fi
done
wait
for f in "$tmp"/race.*; do
	check "concurrent writers (${f##*race.}): $(grep -o 'writes=[0-9]* reads=[0-9]*' "$f")" \
		grep -q 'failures=0' "$f"
done
check_eq "bad sysctl writes logged nothing" "" \
	"$(stress_log_loud sysctl)"

# ---- 3. setsockopt ----------------------------------------------------------
# The same matrix with the module absent (A), loaded and disabled (D),
# enabled (E). A and D must be identical; E may differ only in the lock
# bit of a successful call, and only as the rule says.
rcvfix_unload
dmesg_mark sockopt
in_ns "$ns" "$RCVFIX_BIN/stress-badinput" sockopt > "$tmp/A"
rcvfix_load
echo 0 | in_ns "$ns" tee $EN > /dev/null
in_ns "$ns" "$RCVFIX_BIN/stress-badinput" sockopt > "$tmp/D"
echo 1 | in_ns "$ns" tee $EN > /dev/null
in_ns "$ns" "$RCVFIX_BIN/stress-badinput" sockopt > "$tmp/E"
c0=$(rcvfix_counters setsockopt "$ns")
rcvfix_unload
n_cases=$(wc -l < "$tmp/A")
check "the setsockopt matrix ran ($n_cases cases)" test "$n_cases" -ge 300
check_eq "loaded but disabled: every case exactly as stock" "" \
	"$(diff "$tmp/A" "$tmp/D")"
t=$(tcp_rmem1 "$ns")
diffs=$(awk -v t="$t" '
	function f(line, key,   m) {
		m = line; sub(".*" key "=", "", m); sub(/ .*/, "", m); return m
	}
	NR == FNR { a[f($0, "case")] = $0; next }
	{
		c = f($0, "case"); s = a[c]
		if (s == "") { print "extra case " c; next }
		if (f(s, "ret") != f($0, "ret") || f(s, "errno") != f($0, "errno") ||
		    f(s, "before") != f($0, "before")) { print c ": " s " / " $0; next }
		split(f(s, "after"), sa, "/"); split(f($0, "after"), ea, "/")
		split(f($0, "before"), eb, "/")
		if (f($0, "ret") != 0) {	# refused: nothing changed
			if (f($0, "after") != f($0, "before")) print c ": changed " $0
			next
		}
		# the rule: fresh TCP socket, enabled; other sockets: stock
		want = c !~ /^(nocap-)?tcp\// ? sa[2] : ea[1] < t ? 2 : 0
		if (ea[1] != sa[1] || ea[2] != want) print c ": " s " / " $0 " want lock " want
	}' "$tmp/A" "$tmp/E")
check_eq "enabled: same errors as stock, refused calls change nothing, lock bit by the rule" \
	"" "$diffs"
# every successful call on a TCP socket counts once (one more: the
# program's own probe of SOCK_MIN_RCVBUF; its rmem_max probe is on UDP,
# which the rule leaves alone), refused ones and other sockets not at all
check_eq "enabled: only successful calls on TCP sockets are counted" \
	$(($(grep -cE '^case=(nocap-)?tcp/.* ret=0 ' "$tmp/E") + 1)) \
	"$(echo "$c0" | awk '{ print $1 }')"
check_eq "errors seen (EINVAL EFAULT EPERM), identical in A, D and E" \
	"$(grep -o 'errno=E[A-Z]*' "$tmp/A" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')" \
	"$(grep -o 'errno=E[A-Z]*' "$tmp/E" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
check_eq "bad setsockopt calls logged nothing" "" "$(stress_log_loud sockopt)"
check_log_clean "no kernel warning, oops or corruption report" "param 1"
stress_wall
done_testing
