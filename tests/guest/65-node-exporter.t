#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Metrics with the real consumer: `rcvfixctl --all --prometheus status
# --output DIR/rcvfix.prom` feeds Debian's prometheus-node-exporter (1.5.0)
# through its textfile collector; its /metrics must carry every namespace's
# switch and counters after known setsockopt() calls, and follow new calls.
# node_exporter's sysctl collector shows net.rcvfix.enable as it is.
source "$RCVFIX_REPO/tests/guest/lib.sh"

ne=$(command -v prometheus-node-exporter) ||
	skip "prometheus-node-exporter missing (apt-get install prometheus-node-exporter)"
ctl=$RCVFIX_BIN/rcvfixctl
need "$ctl" "$RCVFIX_BIN/sockopt"
port=19100

# fetch NS: node_exporter's /metrics from inside NS, into $metrics.
fetch() {
	metrics=$(in_ns "$1" curl -sf "http://127.0.0.1:$port/metrics")
}

# has DESC LINE: /metrics (last fetch) has exactly this sample line.
has() {
	if grep -qxF -- "$2" <<< "$metrics"; then
		ok "$1"
	else
		fail "$1" "missing: $2" "rcvfix series seen:" \
			"$(grep -E '^(rcvfix_|node_sysctl_|node_textfile)' <<< "$metrics")"
	fi
}

dir=$TMPDIR/textfile-$$
mkdir -p "$dir"
on_exit "rm -rf $dir"

# Without the module: exit 2, and the file still says so for alerts.
rc=0
"$ctl" --all --prometheus status --output "$dir/rcvfix.prom" 2> /dev/null || rc=$?
check_eq "without the module: exit 2" 2 "$rc"
check_eq "... and the file says rcvfix_loaded 0" "rcvfix_loaded 0" \
	"$(grep -v '^#' "$dir/rcvfix.prom")"
rc=0
"$ctl" -p -o /nonexistent-$$/rcvfix.prom status 2> /dev/null || rc=$?
check_eq "--output into a missing directory: exit 5" 5 "$rc"
rc=0
"$ctl" -o "$dir/x.prom" enable 2> /dev/null || rc=$?
check_eq "--output with enable: usage error" 1 "$rc"

check "insmod rcvfix.ko" rcvfix_load
a=$(netns_new prom-a) && b=$(netns_new prom-b) ||
	{ fail "create namespaces"; done_testing; }
for ns in "$a" "$b"; do
	ns_write /proc/sys/net/ipv4/tcp_rmem "4096 425984 6291456" "$ns"
done
rcvfix_enable 1 "$a"
ino_a=$(stat -L -c %i "/run/netns/$a")
ino_b=$(stat -L -c %i "/run/netns/$b")

# In a: avoided (212992 -> 425984), set (65536 -> 131072), kept. In b
# (disabled): the same calls, counted nowhere.
ops=(rcvbuf=212992 rcvbuf=65536 rcvbuf=65536)
in_ns "$a" "$RCVFIX_BIN/sockopt" "${ops[@]}" > /dev/null || fail "sockopt in $a"
in_ns "$b" "$RCVFIX_BIN/sockopt" "${ops[@]}" > /dev/null || fail "sockopt in $b"

check "rcvfixctl --all --prometheus status --output $dir/rcvfix.prom" \
	"$ctl" --all --prometheus status --output "$dir/rcvfix.prom"
left=$(find "$dir" -name 'rcvfix.prom.*')
check_eq "no temporary file is left behind" "" "$left"

# node_exporter inside namespace a, on its loopback: the sysctl collector
# then reads a's net.rcvfix.enable.
log=$TMPDIR/node-exporter-$$.log
in_ns "$a" "$ne" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$dir" --collector.sysctl \
	--collector.sysctl.include=net.rcvfix.enable \
	--web.listen-address="127.0.0.1:$port" > "$log" 2>&1 &
ne_pid=$!
on_exit "kill $ne_pid; rm -f $log"
for ((i = 0; i < 300; i++)); do
	fetch "$a" && break
	sleep 0.2
done
if [[ -z ${metrics:-} ]]; then
	fail "node_exporter serves /metrics" "$(cat "$log")"
	done_testing
fi
ok "node_exporter $("$ne" --version 2>&1 | awk 'NR == 1 { print $3 }') serves /metrics"

la="netns_inode=\"$ino_a\",netns_name=\"$a\""
lb="netns_inode=\"$ino_b\",netns_name=\"$b\""
has "textfile collector read the file" 'node_textfile_scrape_error 0'
has "rcvfix_loaded" 'rcvfix_loaded 1'
has "namespace a enabled" "rcvfix_enable{$la} 1"
has "namespace b disabled" "rcvfix_enable{$lb} 0"
has "a: 3 sets by setsockopt" "rcvfix_sets_total{$la,path=\"setsockopt\"} 3"
has "a: 1 lock avoided" "rcvfix_locks_avoided_total{$la,path=\"setsockopt\"} 1"
has "a: 1 lock set" "rcvfix_locks_set_total{$la,path=\"setsockopt\"} 1"
has "a: 1 lock kept" "rcvfix_locks_kept_total{$la,path=\"setsockopt\"} 1"
has "a: nothing by bpf" "rcvfix_sets_total{$la,path=\"bpf\"} 0"
has "b: nothing counted" "rcvfix_sets_total{$lb,path=\"setsockopt\"} 0"
n=$(grep -c '^rcvfix_module_info{.*strategy="'"$(rcvfix_status strategy)"'".*} 1$' <<< "$metrics")
check_eq "rcvfix_module_info names the strategy" 1 "$n"
has "sysctl collector: net.rcvfix.enable of its namespace" \
	'node_sysctl_net_rcvfix_enable 1'

# New calls, a new file (as the timer would write it), a new scrape.
in_ns "$a" "$RCVFIX_BIN/sockopt" rcvbuf=212992 rcvbuf=212992 > /dev/null
"$ctl" --all --prometheus status --output "$dir/rcvfix.prom" ||
	fail "rcvfixctl rewrites $dir/rcvfix.prom"
fetch "$a"
has "a: the next scrape sees 2 more avoided" \
	"rcvfix_locks_avoided_total{$la,path=\"setsockopt\"} 3"
has "a: ... and 5 sets" "rcvfix_sets_total{$la,path=\"setsockopt\"} 5"
done_testing
