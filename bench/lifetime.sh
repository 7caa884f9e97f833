#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In-guest part "lifetime" of `make bench`: throughput over a connection's
# life. Runs the matrix of tests/guest/23-lifetime.t (4 MB at 50 ms RTT,
# TCP and MPTCP at every place SO_RCVBUF is set, under its three sets of
# sysctls) once, and turns its times into "@R" lines for bench/report.sh:
# per cell the ms the receiver waited with no SO_RCVBUF (none), on stock and
# with rcvfix enabled, and the ratio of enabled to the better of the other
# two (1.0: as fast; above 1: slower). Test 23 asserts on the same times;
# this part keeps them.
# Environment: RCVFIX_KO, RCVFIX_BIN, RCVFIX_KMOD (harness); BENCH_LIFETIME_V6=1
# adds the IPv6 cells; BENCH_LIFETIME_BYTES the bytes per transfer (4194304).
# Exit status: 0 measured, 2 the matrix failed.
set -uo pipefail
export LC_ALL=C

: "${RCVFIX_KO:?RCVFIX_KO not set: run through make bench}"
: "${RCVFIX_BIN:?RCVFIX_BIN not set: run through make bench}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
log=/tmp/rcvfix-bench-lifetime.log

# rcvfix_suite=all makes the test cover IPv6 too (its check_all_only).
rcvfix_suite=
[[ ${BENCH_LIFETIME_V6:-0} == 1 ]] && rcvfix_suite=all
bytes=${BENCH_LIFETIME_BYTES:-4194304}
RCVFIX_REPO=$repo rcvfix_suite=$rcvfix_suite rcvfix_lifetime_bytes=$bytes \
	bash "$repo/tests/guest/23-lifetime.t" > "$log" 2>&1
st=$?
grep -E '^(ok|not ok|#)' "$log"
if ((st != 0)) || ! grep -q ' bytes in ' "$log"; then
	echo "lifetime: the matrix did not run (exit status $st)" >&2
	exit 2
fi

# "# stock-raised tcp.cli: 4194304 bytes in 415 ms (first to last byte
# 390 ms), window ceiling N": a cell measured again (fixed-raised-again1)
# counts with its best time, as in the test. Keys: lifetime.SYSCTLS.PROTO_WHERE.{none,stock,enabled}_ms
# and .ratio (enabled / the better of none and stock); none is the transfer
# in the same direction without SO_RCVBUF (dl: client before/after
# connect; ul: the server's cells).
printf '@R meta.lifetime_kernel %s\n' "$(uname -r)"
printf '@R meta.lifetime_date %s\n' "$(date -u +%Y-%m-%dT%H:%MZ)"
printf '@R meta.lifetime_bytes %s\n' "$bytes"
awk '
	$1 == "#" && $5 == "bytes" && $6 == "in" {
		n = split($2, t, "-"); sub(":", "", $3)
		if (n < 2) next
		split($3, c, ".")
		run = t[1]; sys = t[2]; proto = c[1]; where = c[2]; ms = $7 + 0
		if (where ~ /^none_/) { run = "none" }
		k = sys SUBSEP proto SUBSEP where SUBSEP run
		if (!(k in v) || ms < v[k]) v[k] = ms
		if (where !~ /^none_/) cells[sys SUBSEP proto SUBSEP where] = 1
	}
	END {
		for (cell in cells) {
			split(cell, p, SUBSEP)
			dir = (p[3] == "cli" || p[3] == "est") ? "none_dl" : "none_ul"
			none = v[p[1] SUBSEP p[2] SUBSEP dir SUBSEP "none"]
			stock = v[cell SUBSEP "stock"]
			fixed = v[cell SUBSEP "fixed"]
			key = "lifetime." p[1] "." p[2] "_" p[3]
			printf "@R %s.none_ms %d\n@R %s.stock_ms %d\n@R %s.enabled_ms %d\n", \
				key, none, key, stock, key, fixed
			best = (none && none < stock) ? none : stock
			if (best && fixed)
				printf "@R %s.ratio %.2f\n", key, fixed / best
		}
	}' "$log" | sort
exit 0
