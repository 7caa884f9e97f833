# SPDX-License-Identifier: GPL-2.0
# Helpers of the stress and fault tests (tests/guest/82-89*.t), sourced after
# tests/guest/lib.sh: short or long form, kernel-log scans stricter than the
# runner's, slab and memory snapshots, and timing.

# The form: "long" with RCVFIX_STRESS=long in the guest's environment, or
# rcvfix_stress=long on the kernel command line (`make stress` puts it
# there: the harness passes only its own variables into the guest).
RCVFIX_STRESS=${RCVFIX_STRESS:-${rcvfix_stress:-short}}
stress_long() { [[ $RCVFIX_STRESS == long ]]; }

_stress_t0=$SECONDS

# stress_wall: "# wall time" comment; call last.
stress_wall() {
	echo "# $RCVFIX_TEST: form $RCVFIX_STRESS, wall time $((SECONDS - _stress_t0)) s on $(uname -r)"
}

# shellcheck source=../../vm/kernel-log.sh
source "$RCVFIX_REPO/vm/kernel-log.sh"

# Kernel-log lines that fail a stress test: the runner's list plus what
# slub_debug, KFENCE, the hung-task detector and the sysctl and netdevice
# cores print when something leaks or is used after free.
STRESS_BAD_LOG_RE="$RCVFIX_BAD_LOG_RE"'|BUG [-a-z0-9_:()]+ \(|Poison overwritten|Redzone overwritten|Object (already free|corrupt)|Freepointer corrupt|INFO: task .* blocked for more than|sysctl (duplicate entry|table check failed)|unregister_netdevice: waiting|proc_dir_entry .* already registered|remove_proc_entry: removing non-empty'

# stress_log_since MARK: kernel-log lines after the dmesg_mark MARK.
stress_log_since() { dmesg_since_mark "$1"; }

# stress_log_bad MARK: the bad lines after MARK (nothing if clean).
stress_log_bad() {
	stress_log_since "$1" | grep -E "$STRESS_BAD_LOG_RE" |
		grep -vE "$RCVFIX_BENIGN_LOG_RE"
}

# stress_log_loud MARK: kernel (not user-space) lines at warning level or
# more severe after MARK, as "<level>text".
stress_log_loud() {
	dmesg -r | awk -v m="rcvfix-test: $RCVFIX_TEST: $1" '
		f && match($0, /^<[0-9]+>/) {
			p = substr($0, 2, RLENGTH - 2) + 0
			# facility 0 (kernel) and level 0..4 (emerg..warning)
			if (p < 8 && p <= 4) print
		}
		index($0, m) { f = 1 }'
}

# check_log_clean DESC MARK: no bad kernel-log line after MARK.
check_log_clean() {
	local bad
	bad=$(stress_log_bad "$2")
	if [[ -z $bad ]]; then
		ok "$1"
	else
		fail "$1" "$(head -n 5 <<< "$bad")"
	fi
}

# slab_shrink_cache DIR: flush the per-CPU slabs of the cache in
# /sys/kernel/slab/DIR through its shrink file, which stays open for the
# rest of the test (file descriptor in slab_shrink_fd). Opening a sysfs
# file allocates a kernfs_open_node, and closing it frees that through
# kfree_rcu(), up to seconds later: right after shrinking all 300 caches
# of a 6.12 guest by opening each, kmalloc-96 held 300 objects more than a
# second later (seen with slub_debug=U: kernfs_fop_open), and a CI run
# failed test 83 on kmalloc-96 +163. Held open, a shrink allocates none.
declare -gA slab_shrink_fd=()
slab_shrink_cache() {
	local f=/sys/kernel/slab/$1/shrink fd=${slab_shrink_fd[$1]:-}

	[[ -n $fd ]] && echo 1 1>&"$fd" 2> /dev/null && return 0
	# first use, or the cache was destroyed (and maybe made again) since
	[[ -z $fd ]] || exec {fd}>&-
	unset "slab_shrink_fd[$1]"
	{ exec {fd}> "$f"; } 2> /dev/null || return 0
	slab_shrink_fd[$1]=$fd
	echo 1 1>&"$fd" 2> /dev/null
	return 0
}

# slab_shrink: drain kfree_rcu() batches and drop unused dentries and
# inodes (drop_caches 2 runs every slab shrinker), then flush per-CPU
# slabs, so that /proc/slabinfo counts what is really in use.
slab_shrink() {
	local f
	echo 2 > /proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*; do slab_shrink_cache "${f##*/}"; done
	return 0
}

# slab_min FILE REGEX: the caches whose names match REGEX are shrunk and
# read five times more, and FILE keeps the smallest count of each.
# /proc/slabinfo counts every free object of a slab on a per-CPU list as
# active, and those lists refill as soon as the shrink has emptied them
# (an allocation takes a whole slab, a free in a full slab puts it on the
# list): on an idle 6.12 guest, eight snapshots in a row read kmalloc-192 at
# 399, 420 and 441 (whole slabs of 21); CI runs failed test 83 on 172
# kmalloc-192 objects more after a churn than before it, and 6.1 read
# kmalloc-64 127 to 246 objects high in 3 of 6 churns (0 to 4 in 4 churns
# booted with slub_debug=U, whose caches keep no per-CPU slabs). That error
# only ever adds. So each round reads right after its shrink, with builtins
# only: no process made between them allocates (and frees) on the way.
slab_min() {
	local -A low=()
	local -a names=()
	local f i name active rest

	for f in /sys/kernel/slab/*; do
		[[ ! ${f##*/} =~ $2 ]] || names+=("${f##*/}")
	done
	for ((i = 0; i < 5; i++)); do
		for name in "${names[@]}"; do slab_shrink_cache "$name"; done
		while read -r name active rest; do
			[[ $name =~ $2 && $active =~ ^[0-9]+$ ]] || continue
			[[ -n ${low[$name]:-} ]] && ((low[$name] <= active)) ||
				low[$name]=$active
		done < /proc/slabinfo
	done
	while read -r name active rest; do
		[[ -n ${low[$name]:-} ]] && ((low[$name] < active)) &&
			active=${low[$name]}
		echo "$name $active $rest"
	done < "$1" > "$1.min" && mv "$1.min" "$1"
}

# slab_snapshot FILE [REGEX]: "cache active_objs object_size" of every
# cache; with REGEX, those caches counted as slab_min() does.
slab_snapshot() {
	slab_shrink
	awk 'NR > 2 { print $1, $2, $4 }' /proc/slabinfo > "$1"
	[[ -z ${2:-} ]] || slab_min "$1" "$2"
}

# slab_growth BEFORE AFTER: "cache objects bytes" for every cache that
# grew, largest growth in bytes first.
slab_growth() {
	awk 'NR == FNR { b[$1] = $2; next }
	     { d = $2 - b[$1]; if (d > 0) print $1, d, d * $3 }' "$1" "$2" |
		sort -k3,3nr
}

# slab_callers FILE REGEX: "cache objects caller<-its-caller" of
# the caches matching REGEX whose allocations the kernel records (booted
# with slub_debug=U for them, e.g. RCVFIX_APPEND='slub_debug=U,kmalloc-96';
# the records are in debugfs since 5.16). FILE is empty when none is.
slab_callers() {
	local c d f
	: > "$1"
	d=/sys/kernel/debug/slab
	[[ -d $d ]] || mount -t debugfs none /sys/kernel/debug 2> /dev/null
	for f in "$d"/*/alloc_traces; do
		c=${f%/alloc_traces} c=${c##*/}
		[[ -r $f && $c =~ $2 ]] || continue
		awk -v c="$c" '
		function fn(s) { sub(/\+.*/, "", s); return s }
		function flush() { if (k != "") n[k] += cnt; k = "" }
		$1 ~ /^[0-9]+$/ && NF > 1 { flush(); cnt = $1; k = top = fn($2); next }
		NF == 1 && k == top && fn($1) != top &&
		    fn($1) !~ /^_*(kmalloc|kmem_cache|kzalloc|kvmalloc|kmemdup|slab)/ {
			k = k "<-" fn($1)
		}
		NF == 0 { flush() }
		END { flush(); for (s in n) print c, n[s], s }' "$f" >> "$1"
	done
}

# slab_callers_growth BEFORE AFTER: "cache objects caller" of every caller
# that holds more objects in AFTER than in BEFORE, most first.
slab_callers_growth() {
	awk 'NR == FNR { b[$1 " " $3] = $2; next }
	     { d = $2 - b[$1 " " $3]; if (d > 0) print $1, d, $3 }' "$1" "$2" |
		sort -k2,2nr
}

# slab_total FILE: bytes in all slab objects of a snapshot.
slab_total() { awk '{ s += $2 * $3 } END { print s + 0 }' "$1"; }

# slab_active CACHE: active objects of one cache (after a shrink).
slab_active() {
	slab_shrink
	awk -v c="$1" '$1 == c { print $2; f = 1 } END { if (!f) print 0 }' \
		/proc/slabinfo
}

# netns_count: network namespaces allocated, counting the one this makes.
# Since 6.1 (and in later stable kernels) cleanup_net() leaves its batch's
# struct net in the slab until the next cleanup (net_complete_free(),
# "wait for an extra rcu_barrier() before final free"): with no namespace
# destroyed after a churn, its last batch stays allocated for good. So
# destroy one here (unshare), give its cleanup a second, then count: what
# is left is the live namespaces plus this one (two if its cleanup was
# slower than that).
netns_count() {
	unshare -n true
	sleep 1
	slab_active net_namespace
}

# netns_settle [BASE]: wait until at most BASE network namespaces are
# allocated (netns_count), or, without BASE, until their number has not
# fallen for 5 s. The kernel destroys namespaces asynchronously, in
# batches whose exit methods wait for RCU grace periods (and may disarm
# rcvfix's hooks): under emulation a backlog can take a while to drain.
# So with BASE the wait goes on as long as the number keeps falling, up
# to 300 s, and fails once it has not fallen for 60 s: a leaked reference
# never falls. Prints the final count; on failure, what is left goes to
# stderr.
netns_settle() {
	local t n last=-1 since=0 quiet=5 start=$SECONDS
	[[ $# -eq 0 ]] || quiet=60
	while ((SECONDS - start < 300)); do
		n=$(netns_count)
		[[ $# -gt 0 ]] && ((n <= $1)) && break
		if ((last < 0 || n < last)); then
			last=$n since=$SECONDS
		fi
		((SECONDS - since >= quiet)) && break
	done
	echo "$n"
	[[ $# -eq 0 ]] || ((n <= $1)) && return 0
	{
		echo "# $n namespaces after $((SECONDS - start))s, none freed in the last $((SECONDS - since))s"
		echo "# $(grep '^TCP' /proc/net/sockstat)"
		echo "# network namespaces of processes:"
		for t in /proc/[0-9]*/ns/net; do readlink "$t"; done 2> /dev/null |
			sort | uniq -c | sed 's/^/#   /'
	} >&2
	return 1
}

# meminfo KEY: a /proc/meminfo value in kB.
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
