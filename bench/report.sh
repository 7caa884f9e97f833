#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Results of `make bench` from the guests' logs (cost.log, segcost.log,
# rcvlowat.log, net.log, lifetime.log, arming.log in DIR): every "@R KEY
# VALUE" line into results.csv (key,value) and results.json (KEY split at
# dots into nested objects), the chart bench.png (gnuplot, bench/chart.gp),
# the tables lifetime.md and arming.md, and a summary of the targets on
# stdout.
#
# Usage: report.sh DIR
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

[[ $# -eq 1 ]] || { echo "usage: report.sh DIR" >&2; exit 2; }
dir=$1
logs=()
for f in "$dir/host.log" "$dir/cost.log" "$dir/segcost.log" "$dir/rcvlowat.log" \
	"$dir/net.log" "$dir/lifetime.log" "$dir/arming.log"; do
	[[ -s $f ]] && logs+=("$f")
done
((${#logs[@]})) || { echo "report.sh: no part's log in $dir" >&2; exit 2; }

# --- results.csv, results.json -------------------------------------------------

grep -h '^@R ' "${logs[@]}" | sed 's/\r$//' | sort -u > "$dir/results.raw"
{
	echo "key,value"
	awk '{
		k = $2; v = substr($0, length("@R " k " ") + 1)
		if (v ~ /[",]/) { gsub(/"/, "\"\"", v); v = "\"" v "\"" }
		print k "," v
	}' "$dir/results.raw"
} > "$dir/results.csv"
jq -Rn '
	[inputs | capture("^@R (?<k>[^ ]+) ?(?<v>.*)$")]
	| reduce .[] as $e ({};
		setpath($e.k | split(".");
			($e.v | if test("^-?[0-9]+(\\.[0-9]+)?$") then tonumber else . end)))
	' "$dir/results.raw" > "$dir/results.json"

# --- the chart ---------------------------------------------------------------------

get() { jq -r "getpath(\"$1\" | split(\".\")) // empty" "$dir/results.json"; }

# tput.dat: X LABEL MEDIAN LO HI COLOUR RATIO_TO_CASE1 (Mbit/s, "-" for
# none); cost.dat: X LABEL then
# ratio and instructions for each of the three options.
: > "$dir/tput.dat"
x=0
for row in b.c1:"case 1\\ndefault":1 b.c2s:"case 2\\nstock":2 \
	b.c2f:"case 2\\nrcvfix":3 b.c2bpf:"case 2\\nBPF prog":4 \
	i.c1:"iperf3 case 1\\ndefault":1 i.c2s:"iperf3 case 2\\nstock":2 \
	i.c2f:"iperf3 case 2\\nrcvfix":3; do
	IFS=: read -r r label colour <<< "$row"
	med=$(get "$r.gbit_s")
	[[ -n $med ]] || continue
	ratio=$(get "$r.ratio_c1")
	printf '%d "%s" %s %s %s %d %s\n' $x "$label" \
		"$(awk -v g="$med" 'BEGIN { print g * 1000 }')" \
		"$(awk -v g="$(get "$r.lo")" 'BEGIN { print g * 1000 }')" \
		"$(awk -v g="$(get "$r.hi")" 'BEGIN { print g * 1000 }')" \
		"$colour" "${ratio:--}" >> "$dir/tput.dat"
	x=$((x + 1))
done
: > "$dir/cost.dat"
x=0
for row in absent:"no module" ftrace:"empty ftrace\\ncallback (floor)" \
	kprobe:"kprobe with\\npost_handler" disabled:"rcvfix loaded,\\nnothing enabled" \
	elsewhere:"rcvfix enabled\\nelsewhere" enabled:"rcvfix\\nenabled" \
	bpf:"BPF cgroup\\nprogram"; do
	IFS=: read -r s label <<< "$row"
	[[ -n $(get "cost.$s.keepalive.instr") ]] || continue
	printf '%d "%s"' $x "$label" >> "$dir/cost.dat"
	for k in rcvbuf_big rcvbuf_small keepalive; do
		printf ' %s %s' "$(get "cost.$s.$k.ratio")" "$(get "cost.$s.$k.instr")" \
			>> "$dir/cost.dat"
	done
	echo >> "$dir/cost.dat"
	x=$((x + 1))
done

kernel=$(get meta.kernel)
date=$(get meta.date)
title="rcvfix bench on ${kernel:-$(get meta.cost_kernel)}, ${date:-$(get meta.cost_date)}"
if command -v gnuplot > /dev/null; then
	gnuplot -e "dir='$dir'; title='$title'; rtt='$(get meta.rtt_ms)'; \
		tput=$(test -s "$dir/tput.dat" && echo 1 || echo 0); \
		cost=$(test -s "$dir/cost.dat" && echo 1 || echo 0); \
		runs='$(get meta.runs)'; secs='$(get meta.seconds)'; \
		rmem='$(get meta.tcp_rmem)'; calls='$(get meta.cost_calls)'" \
		"$here/chart.gp" 2> "$dir/gnuplot.err" ||
		{ cat "$dir/gnuplot.err" >&2; echo "report.sh: gnuplot failed" >&2; exit 2; }
	chart="$dir/bench.png"
else
	chart="(no chart: install gnuplot-nox)"
fi

# --- lifetime.md: throughput over a connection's life ------------------------------

# One header line (date, commit, machine, bytes), then ms per cell.
if [[ -n $(get meta.lifetime_kernel) ]]; then
	commit=$(git -C "$here/.." rev-parse --short HEAD 2> /dev/null || echo unknown)
	{
		echo "Recorded $(get meta.lifetime_date) by \`make bench\` (part lifetime) on $(get meta.lifetime_kernel), commit $commit, $(get meta.host_cpus)-CPU host, $(get meta.qemu); $(get meta.lifetime_bytes) bytes per transfer, ms from the transfer's start to its last byte."
		echo
		echo "| sysctls | cell | no SO_RCVBUF (ms) | stock (ms) | rcvfix enabled (ms) | enabled / better of the two |"
		echo "|---|---|---|---|---|---|"
		for sys in raised default rmem32; do
			jq -r --arg s "$sys" '.lifetime[$s] // {} | to_entries[] |
				"| \($s) | \(.key | sub("_"; ".")) | \(.value.none_ms) | \(.value.stock_ms) | \(.value.enabled_ms) | \(.value.ratio) |"' \
				"$dir/results.json"
		done
	} > "$dir/lifetime.md"
fi

# --- arming.md: the time loading and switching take ------------------------------

if [[ -n $(get meta.arming_kernel) ]]; then
	commit=$(git -C "$here/.." rev-parse --short HEAD 2> /dev/null || echo unknown)
	{
		echo "Recorded $(get meta.arming_date) by \`make bench\` (part arming) on $(get meta.arming_kernel), commit $commit, $(get meta.host_cpus)-CPU host, $(get meta.qemu); ms, median of $(get meta.arming_rounds) rounds (cycle: mean of $(get meta.arming_cycles)); armed right after disable_last: $(get arming.armed_after_disable) (disarm_holdoff_s=0: $(get arming.armed_after_disable_holdoff0))."
		echo
		echo "| step | none (ms) | rcvfix (ms) | rcvfix, disarm_holdoff_s=0 (ms) |"
		echo "|---|---|---|---|"
		for s in insmod enable_first enable_other disable_other disable_last \
			enable_again cycle rmmod; do
			echo "| $s | $(get "arming.$s.none_ms") | $(get "arming.$s.rcvfix_ms") | $(get "arming.$s.rcvfix_holdoff0_ms") |"
		done
	} > "$dir/arming.md"
fi

# --- summary -----------------------------------------------------------------------

echo
echo "== targets of issue 4"
grep -h '^target: ' "${logs[@]}" | sed 's/\r$//' || true
met=$(grep -h '^target: ' "${logs[@]}" | grep -c ': met (' || true)
all=$(grep -h '^target: ' "${logs[@]}" | grep -c . || true)
echo "$met of $all targets met"
echo "host: $(get meta.host_cpus) CPUs, load average $(get meta.host_load_start) at the start," \
	"$(get meta.host_load_end) at the end; QEMU guests running: $(get meta.host_qemu_guests_start)" \
	"at the start, ours included"
echo
echo "results: $dir/results.csv, $dir/results.json"
[[ ! -s $dir/lifetime.md ]] || echo "lifetime: $dir/lifetime.md"
[[ ! -s $dir/arming.md ]] || echo "arming:  $dir/arming.md"
echo "chart:   $chart"
echo "logs:    ${logs[*]}"
