#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host side of `make bench` (mk/bench.mk): builds the module, test modules,
# tools and bench programs into their own build folder, boots the
# deterministic guest (-icount shift=0, one vCPU) for the cost part
# (bench/cost.sh) and normal guests for the network part (bench/net.sh)
# and throughput over a connection's life (bench/lifetime.sh), the time
# loading and switching take (bench/arming.sh), then writes results, the
# chart and the lifetime and arming tables (bench/report.sh).
#
# Usage: run.sh KVER
# Environment: RCVFIX_BUILD (build folder; mk/bench.mk: build/bench-run),
#   BENCH_OUT results folder (build/bench), BENCH_PARTS "cost segcost rcvlowat net lifetime
#   arming" (or some), BENCH_LIFETIME_V6=1 (IPv6 cells too), BENCH_LIFETIME_BYTES
#   (bytes per transfer of the lifetime part, 4194304), BENCH_ARMING_ROUNDS
#   (5) and BENCH_ARMING_CYCLES (10) of the arming part,
#   BENCH_RUNS (3), BENCH_SECONDS (5), BENCH_DELAY_MS (25), BENCH_CONNS
#   (200), BENCH_CALLS (20000), BENCH_IPERF (1), BENCH_STRICT=1 (exit 1 when
#   a target is missed), MAKE.
# A part left out of BENCH_PARTS keeps the log of its last run in
# BENCH_OUT, and the report includes it (its figures carry their date).
# Exit status: 0 measured (targets are reported, not enforced unless
# BENCH_STRICT=1), 1 a target missed with BENCH_STRICT=1, 2 a part failed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../vm/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../vm/common.sh"
export RCVFIX_BUILD

[[ $# -eq 1 ]] || die "usage: bench/run.sh KVER"
kver=$1
out=${BENCH_OUT:-$RCVFIX_REPO/build/bench}
parts=${BENCH_PARTS:-cost segcost rcvlowat net lifetime arming}
make=${MAKE:-make}
mkdir -p "$out"

msg "building into $RCVFIX_BUILD (results: $out)"
$make -s -C "$RCVFIX_REPO/tools" OUT="$RCVFIX_BUILD/bin"
$make -s -C "$RCVFIX_REPO/bench" OUT="$RCVFIX_BUILD/bin"
# The lifetime and rcvlowat parts run test programs (test 23's, test 41's).
[[ " $parts " != *" lifetime "* && " $parts " != *" rcvlowat "* ]] ||
	$make -s -C "$RCVFIX_REPO/tests/progs" OUT="$RCVFIX_BUILD/bin"
kbuild=("$HARNESS/kbuild.sh" "$kver")
# Kernels the host cannot build for are built in their chroot.
[[ -z $("$HARNESS/chroot-kernel.sh" line "$kver") ]] ||
	kbuild=("$HARNESS/chroot-kernel.sh" kbuild "$kver")
MAKE=$make "${kbuild[@]}" > "$out/kbuild.log" 2>&1 ||
	{ tail -n 30 "$out/kbuild.log" >&2; die "module build failed (see $out/kbuild.log)"; }

# guest PART QEMU_OPTS TIMEOUT COMMAND: run COMMAND in a guest; the log
# keeps everything, the terminal gets it without the "@R" data lines.
guest() {
	local part=$1 opts=$2 timeout=$3 cmd=$4 st
	msg "$part: booting $kver${opts:+ with$opts}"
	set +e
	# vm.sh sourced in a subshell rather than run: bash then reads it
	# whole at once, and an edit of it during the long run cannot break
	# the run (bash reads an executed script as it goes).
	(
		export RCVFIX_QEMU_OPTS="${RCVFIX_QEMU_OPTS:-}$opts"
		export RCVFIX_GUEST_TIMEOUT=${RCVFIX_GUEST_TIMEOUT:-$timeout}
		set -- cmd "$kver" "$cmd"
		# shellcheck source-path=SCRIPTDIR source=../vm/vm.sh
		source "$HARNESS/vm.sh"
	) | tee "$out/$part.log" | grep --line-buffered -v '^@R '
	st=${PIPESTATUS[0]}
	set -e
	((st == 0)) || die "$part part failed (exit status $st; log: $out/$part.log)"
}

env_common="BENCH_CALLS=${BENCH_CALLS:-20000} DEMO_RUNS=${BENCH_RUNS:-3}"
env_common+=" DEMO_SECONDS=${BENCH_SECONDS:-5} DEMO_DELAY_MS=${BENCH_DELAY_MS:-25}"
env_common+=" BENCH_CONNS=${BENCH_CONNS:-200} BENCH_IPERF=${BENCH_IPERF:-1}"
# The host's side of the record: how busy it was decides how noisy the
# throughput figures are (the cost figures do not depend on it).
hostmeta() {	# hostmeta WHEN
	printf '@R meta.host_load_%s %s\n' "$1" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '@R meta.host_qemu_guests_%s %s\n' "$1" "$(pgrep -c qemu-system || true)"
}
{
	printf '@R meta.qemu %s\n' "$(qemu-system-x86_64 --version | head -n 1)"
	printf '@R meta.host_cpus %s\n' "$(nproc)"
	hostmeta start
} > "$out/host.log"
start=$SECONDS
for p in $parts; do
	case $p in
	cost) guest cost " -smp 1 -icount shift=0" 900 "$env_common bash bench/cost.sh" ;;
	segcost) guest segcost " -smp 1 -icount shift=0" 900 "$env_common bash bench/segcost.sh" ;;
	rcvlowat) guest rcvlowat "" 900 "bash bench/rcvlowat.sh" ;;
	net) guest net "" 2400 "$env_common bash bench/net.sh" ;;
	lifetime) guest lifetime "" 1800 \
		"BENCH_LIFETIME_V6=${BENCH_LIFETIME_V6:-0} BENCH_LIFETIME_BYTES=${BENCH_LIFETIME_BYTES:-4194304} bash bench/lifetime.sh" ;;
	arming) guest arming "" 900 \
		"BENCH_ARMING_ROUNDS=${BENCH_ARMING_ROUNDS:-5} BENCH_ARMING_CYCLES=${BENCH_ARMING_CYCLES:-10} bash bench/arming.sh" ;;
	*) die "BENCH_PARTS: unknown part '$p' (cost, segcost, rcvlowat, net, lifetime, arming)" ;;
	esac
done
hostmeta end >> "$out/host.log"
"$RCVFIX_REPO/bench/report.sh" "$out"
msg "bench took $((SECONDS - start)) s"
if [[ ${BENCH_STRICT:-0} == 1 ]] && grep -qh '^target: .*: MISSED' "$out"/*.log; then
	exit 1
fi
