#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In-guest part of `make demo` (mk/demo.mk): reproduces the original reports
# over a veth pair with netem delay, stock (module loaded, disabled) against
# fixed (enabled), measured by rcvfix-bench and again by iperf3, and prints
# tables with a verdict per row computed from the numbers
# (tools/lib/netpath.sh, shared with bench/net.sh).
#
# Environment: RCVFIX_KO, RCVFIX_BIN (set by the harness); DEMO_SECONDS per
# transfer (5); DEMO_RUNS rounds of the SO_RCVBUF cases, reported as median
# and range (5); DEMO_DELAY_MS one-way netem delay (25); DEMO_IPERF=0 skips
# iperf3. Exit status: 0 every verdict as expected, 1 otherwise, 2 setup or
# a measurement failed.
set -euo pipefail
LIB_NAME=demo
# shellcheck source-path=SCRIPTDIR source=../tools/lib/netpath.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/lib/netpath.sh"
trap cleanup EXIT

setup
header demo
echo

tools=(b)
if [[ ${DEMO_IPERF:-1} != 0 ]]; then
	command -v iperf3 > /dev/null || die "iperf3 missing (apt-get install iperf3)"
	tools+=(i)
fi
for ((n = 1; n <= runs; n++)); do
	echo "round $n of $runs ..."
	round b $n c1 c2s c2f
	[[ ${tools[*]} != *i* ]] || round i $n c1 c2s c2f
done
echo "SO_RCVLOWAT ..."
round l 1 bulk0 bulk rate0 rate
echo

for t in "${tools[@]}"; do
	rcvbuf_table "$t"
done
lowat_table 1

if ((n_bad)); then
	echo "demo: $n_bad verdict(s) not as expected"
	exit 1
fi
echo "demo: every verdict as expected"
