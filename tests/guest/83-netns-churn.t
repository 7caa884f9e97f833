#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Namespace churn (tests/stress/nschurn.c): namespaces are created and
# destroyed continuously, net.rcvfix.enable is written in each, and rcvfix
# is loaded and unloaded meanwhile. Afterwards every namespace must be
# freed and no cache that holds rcvfix's per-namespace state may have grown
# by anything like one object per namespace, compared with the same churn
# without the module. The footprint measurement first shows that those
# caches do see rcvfix's per-namespace state.
source "$RCVFIX_REPO/tests/guest/lib.sh"
source "$RCVFIX_REPO/tests/stress/guest-lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/stress-nschurn"
[[ -r /proc/slabinfo && -d /sys/kernel/slab ]] || skip "no slab statistics"

if stress_long; then
	n=500 rate=8 shell_ns=40 tw=(--time-wait) k=200
else
	n=150 rate=20 shell_ns=8 tw=() k=60	# check-all: 500
	# An emulated arm64 guest takes 10 s and more per load or unload
	# (6.12 arm64 made one load in a 19 s churn): the same namespaces at
	# a quarter of the rate give it the time for a reload.
	[[ $(uname -m) != aarch64 ]] || rate=5
fi
# The caches rcvfix's per-namespace state lives in: pernet data and the
# sysctl table (kmalloc), the sysctl header and directory (kmalloc-cg,
# accounted), the proc entry. Other caches move with the test's own
# files and processes.
CACHES='^(kmalloc-(cg-)?(64|96|128|192|256|512)|proc_dir_entry)$'

rcvfix_unload
modprobe veth 2> /dev/null || true
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
dmesg_mark churn

# shell_churn: namespaces made by ip(8), each with a veth pair and the
# switch turned on (when the module is there), next to the C churn.
shell_churn() {
	local i x
	for ((i = 0; i < shell_ns; i++)); do
		x=rcvfix-churn-$$-$i
		ip netns add "$x" &&
			ip link add "v$$a" netns "$x" type veth peer name \
				"v$$b" netns "$x" &&
			ip netns exec "$x" sh -c \
				'echo 1 > /proc/sys/net/rcvfix/enable' 2> /dev/null
		ip netns del "$x"
	done
}

# churn OUT [--ko KO]: the C churn and the shell churn side by side.
churn() {
	local out=$1 st
	shift
	shell_churn &
	"$RCVFIX_BIN/stress-nschurn" "$@" --namespaces "$n" --rate "$rate" \
		--cycle-ms 1500 --timeout 2000 "${tw[@]}" > "$out" 2>&1
	st=$?
	wait
	return $st
}

# sum_caches BEFORE AFTER: "objects bytes" by which the caches of CACHES
# grew from snapshot BEFORE to AFTER (negative: shrank).
sum_caches() {
	awk -v re="$CACHES" 'NR == FNR { b[$1] = $2; next }
		$1 ~ re { o += $2 - b[$1]; by += ($2 - b[$1]) * $3 }
		END { print o + 0, by + 0 }' "$1" "$2"
}

# settled_snapshot FILE: a snapshot once the caches stop shrinking.
# Namespaces and rcvfix's sysctl headers are freed through RCU (sysctl
# headers by kfree_rcu(), in batches up to 5 s apart): right after a
# churn, hundreds of objects can still be on their way back.
settled_snapshot() {
	local i prev=$tmp/settle.prev o
	slab_snapshot "$prev" "$CACHES"
	for ((i = 0; i < 15; i++)); do
		sleep 2
		slab_snapshot "$1" "$CACHES"
		read -r o _ <<< "$(sum_caches "$prev" "$1")"
		((o > -8)) && return
		cp "$1" "$prev"
	done
}

# 1. rcvfix's own footprint, with k namespaces alive: loading adds it in
# every one, unloading takes all of it away again. This also shows that
# the slab statistics see per-namespace state at all.
coproc KEEP { "$RCVFIX_BIN/stress-nschurn" --keep "$k"; }
# bash unsets KEEP and KEEP_PID once the coprocess has exited: keep copies.
keep_pid=$KEEP_PID keep_in=${KEEP[1]}
read -r -t 120 kept <&"${KEEP[0]}"
check_eq "$k namespaces alive for the footprint measurement" "kept $k" "$kept"
# Making the namespaces freed objects through RCU that can still be on
# their way back (seen on 7.3: 300 objects, more than rcvfix's footprint;
# as many as the shrink files the snapshots then opened, see
# slab_shrink_cache).
# Frees elsewhere only lower the count (seen: -12 for 60 on 6.1 once, and
# one proc entry fewer than namespaces on the debug kernel, whose RCU
# callbacks run late), so a round below either bound is measured again,
# three rounds at most.
pde_delta() {
	awk 'NR == FNR { if ($1 == "proc_dir_entry") b = $2; next }
		$1 == "proc_dir_entry" { print $2 - b }' "$1" "$2"
}
for ((try = 1; try <= 3; try++)); do
	settled_snapshot "$tmp/f0"
	rcvfix_load
	slab_snapshot "$tmp/f1" "$CACHES"
	read -r fo fb <<< "$(sum_caches "$tmp/f0" "$tmp/f1")"
	po=$(pde_delta "$tmp/f0" "$tmp/f1")
	rcvfix_unload
	((fo >= k && po >= k)) && break
	echo "# $RCVFIX_TEST: round $try: +$fo objects, +$po proc entries for $k namespaces, measured again"
done
# What unload leaves is read in proc_dir_entry: /proc/net/rcvfix is one
# entry per namespace, freed at once by remove_proc_entry(), and nothing
# else makes proc entries meanwhile, so it counts exactly (+61 for 60
# namespaces and the initial one on 7.3). The kmalloc caches are shared
# with the rest of the kernel: five load/unload rounds on 6.12 left -76
# to +44 objects there, and a CI run failed on +44 against a bound of
# k / 2. A namespace whose state unload did not remove keeps its entry;
# a single leaked object per namespace elsewhere is the churn's check
# below (n namespaces, against a control run). The sysctl headers and
# directories go back through kfree_rcu() up to 5 s later: the total
# printed waits for them, 30 s at most.
for ((i = 0; i < 30; i++)); do
	slab_snapshot "$tmp/f2" "$CACHES"
	read -r ro rb <<< "$(sum_caches "$tmp/f0" "$tmp/f2")"
	((ro < fo / 2)) && break
	sleep 1
done
echo done >&"$keep_in"
wait "$keep_pid" 2> /dev/null
pl=$(pde_delta "$tmp/f0" "$tmp/f2")
echo "# $RCVFIX_TEST: footprint with $k namespaces: +$fo objects, +$fb bytes loaded ($((fb / (k + 1))) bytes per namespace), of them $po proc entries; $ro objects, $rb bytes, $pl proc entries left after unload"
check "loading adds at least one object per namespace ($fo for $k)" test "$fo" -ge "$k"
check "loading adds one proc entry per namespace ($po for $k and the initial one)" \
	test "$po" -ge "$k"
check "unloading removes them again ($pl proc entries left)" test "$pl" -lt $((k / 2))

# 2. Churn. Warm-up: caches and code paths reach their steady state.
"$RCVFIX_BIN/stress-nschurn" --ko "$RCVFIX_KO" --namespaces 40 --rate 40 \
	--cycle-ms 500 "${tw[@]}" > "$tmp/warm" 2>&1 ||
	fail "warm-up churn" "$(cat "$tmp/warm")"
base=$(netns_settle)

# Control: the same churn without the module.
settled_snapshot "$tmp/s0"
slab_callers "$tmp/s0.callers" "$CACHES"
mem0=$(meminfo MemAvailable)
churn "$tmp/control"
check "control churn without rcvfix" grep -q 'failures=0' "$tmp/control"
left=$(netns_settle "$((base + 1))") ||
	fail "control: the namespaces are freed" "$left still allocated, $base before"
settled_snapshot "$tmp/s1"
slab_callers "$tmp/s1.callers" "$CACHES"
mem1=$(meminfo MemAvailable)

# The same with the module loaded and unloaded all along; the churn goes on
# past n namespaces until the module was loaded a second time (a fixed n
# fitted 3 or 4 loads on a 2-core host with one guest beside, 1 with three).
churn "$tmp/churn" --ko "$RCVFIX_KO" --min-loads 2
st=$?
cat "$tmp/churn"
sum=$(grep '^summary ' "$tmp/churn")
check_eq "stress-nschurn exit status" 0 "$st"
check "namespaces churned by stress-nschurn: $(kv namespaces "$sum"), at least $n" \
	test "$(kv namespaces "$sum")" -ge "$n"
check "the module was unloaded and loaded again during the churn" \
	test "$(kv loads "$sum")" -ge 2
check "SO_RCVBUF calls with a known state were checked" \
	test "$(kv strict "$sum")" -gt 0
check "rcvfix is unloaded at the end" bash -c "! grep -q '^rcvfix ' /proc/modules"
# The base was taken once the warm-up's namespaces stopped falling (for
# 5 s); one more is allowed (the cleanup of netns_count's own namespace
# may not be done). netns_settle waits as long as the number keeps
# falling: a leaked reference never falls, and a leak per namespace
# leaves hundreds.
if left=$(netns_settle "$((base + 1))"); then
	ok "the churned namespaces are freed (no reference leaked): $left allocated, $base before"
else
	fail "the churned namespaces are freed (no reference leaked)" "$left allocated, $base before"
fi
settled_snapshot "$tmp/s2"
mem2=$(meminfo MemAvailable)

# rcvfix's state is about five objects per namespace that existed while
# it was loaded. The control run shows what the churn itself leaves
# behind in each cache. Counted as slab_min() counts (a read right after
# each shrink, no process between), 18 churns on 6.1, 6.12 and 7.3 moved
# no judged cache by more than 3 objects either way; before (awk forked
# between shrink and read, and the shrink files' own kernfs nodes, see
# slab_shrink_cache), one side read up to 246 objects high (kmalloc-64 on
# 6.1, kmalloc-96 on 6.12). So the bound is n / 2 objects in one cache:
# one object left in each of half the namespaces crosses it. (The exact
# count of proc entries of part 1 cannot be used here: a namespace of the
# churn still on its way out holds dozens of its own.)
bound=$((n / 2))

# cache_growth [BOUND]: "cache growth control-growth" of each cache whose
# growth with rcvfix exceeds the control's by BOUND (default bound) or
# more; BOUND "all": of every judged cache.
cache_growth() {
	awk -v bound="${1:-$bound}" -v re="$CACHES" '
	FILENAME == ARGV[1] { c[$1] = $2; next }
	FILENAME == ARGV[2] { d1[$1] = $2 - c[$1]; c1[$1] = $2; next }
	$1 ~ re {
		d2 = $2 - c1[$1]; ctl = d1[$1] > 0 ? d1[$1] : 0
		if (bound == "all" || d2 - ctl >= bound + 0) print $1, d2, ctl }' \
	"$tmp/s0" "$tmp/s1" "$tmp/s2"
}
growth=$(cache_growth)
# Processes still on their way out hold small objects too (seen on 6.1:
# 177 kmalloc-64 next to 28 mm_struct and 8 names_cache; kmalloc-96 195,
# then 153 10 s later): look again every 10 s while the growth still
# falls, six times at most. A leak stays.
sum_growth() { awk '{ s += $2 } END { print s + 0 }' <<< "$1"; }
for ((look = 0; look < 6; look++)); do
	[[ -n $growth ]] || break
	echo "# growth at look $((look + 1)): ${growth//$'\n'/; }; looking again in 10 s"
	before=$(sum_growth "$growth")
	sleep 10
	settled_snapshot "$tmp/s2"
	growth=$(cache_growth)
	[[ -n $growth ]] && (($(sum_growth "$growth") >= before)) && break
done
slab_callers "$tmp/s2.callers" "$CACHES"
check_eq "no cache of rcvfix's per-namespace state grew by >= $bound objects more than without rcvfix" "" "$growth"
echo "# judged caches (cache, growth with rcvfix, growth without): $(cache_growth all | sort | tr '\n' ';')"
# Who holds the objects, when the kernel records it (slab_callers).
if [[ -s $tmp/s2.callers ]]; then
	echo "# callers holding more objects, with rcvfix (cache objects caller):"
	slab_callers_growth "$tmp/s1.callers" "$tmp/s2.callers" | head -n 8 |
		sed 's/^/#   /'
	echo "# callers holding more objects, without rcvfix:"
	slab_callers_growth "$tmp/s0.callers" "$tmp/s1.callers" | head -n 8 |
		sed 's/^/#   /'
fi
echo "# largest slab growth with rcvfix (cache objects bytes):"
slab_growth "$tmp/s1" "$tmp/s2" | head -n 5 | sed 's/^/#   /'
echo "# largest slab growth without rcvfix (cache objects bytes):"
slab_growth "$tmp/s0" "$tmp/s1" | head -n 5 | sed 's/^/#   /'
slab_d1=$(($(slab_total "$tmp/s1") - $(slab_total "$tmp/s0")))
slab_d2=$(($(slab_total "$tmp/s2") - $(slab_total "$tmp/s1")))
# Reported, not asserted: the slab total moves by +-100 KB between identical
# churns (page cache, dentries, lazily freed module mappings), as much as a
# leak of rcvfix's whole per-namespace state would add; the per-cache
# object counts above are the leak check.
echo "# $RCVFIX_TEST: memory after $n namespaces: slab bytes control $slab_d1, with rcvfix $slab_d2; MemAvailable kB control $((mem1 - mem0)), with rcvfix $((mem2 - mem1))"

# Nothing of the unloaded instances is left: a fresh load registers the
# sysctl and proc file again in every namespace (a leaked table would make
# that fail with "sysctl duplicate entry").
x=$(netns_new again)
on_exit "ip netns del $x"
check "load once more after the churn" rcvfix_load
check "net.rcvfix.enable is back in the initial namespace" \
	test -w /proc/sys/net/rcvfix/enable
check "net.rcvfix.enable is back in a surviving namespace" \
	in_ns "$x" test -w /proc/sys/net/rcvfix/enable
check "/proc/net/rcvfix is back in a surviving namespace" \
	in_ns "$x" grep -q '^enable 0$' /proc/net/rcvfix
check "unload" rcvfix_unload
check "no sysctl directory left after unload" test ! -e /proc/sys/net/rcvfix
check_log_clean "no kernel warning, oops or corruption report" churn
echo "# $RCVFIX_TEST: $sum shell_namespaces=$shell_ns"
stress_wall
done_testing
