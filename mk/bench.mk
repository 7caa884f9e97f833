# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: the demo repeated (median and range), the setsockopt() cost
# of the hook and the receive cost per segment in guest instructions (QEMU
# -icount), SO_RCVLOWAT wakeups per MB per socket kind, the BPF alternative,
# the memory of many connections, and throughput over a connection's life
# (test 23's matrix as rates); results, a chart and tables in build/bench/.
# Builds into its own folder (BENCH_BUILD) so that a concurrent `make
# check` on build/ neither waits for it nor is disturbed. Not part of check.

BENCH_RUNS ?= 3
BENCH_SECONDS ?= 5
BENCH_DELAY_MS ?= 25
BENCH_CONNS ?= 200
BENCH_CALLS ?= 20000
BENCH_IPERF ?= 1
BENCH_PARTS ?= cost segcost rcvlowat arming net lifetime
BENCH_LIFETIME_V6 ?= 0
BENCH_LIFETIME_BYTES ?= 4194304
BENCH_BUILD ?= $(BUILD)/bench-run
BENCH_OUT ?= $(BUILD)/bench
DEB_BENCH := gnuplot-nox
# Not spelled $(MAKE) in the recipe: `make -n bench` must not run it.
BENCH_MAKE := $(MAKE)

deps-bench:
	@$(HARNESS)/deps.sh $(DEB_BENCH)

bench: deps deps-build deps-bench
	@RCVFIX_BUILD=$(BENCH_BUILD) BENCH_OUT=$(BENCH_OUT) \
	BENCH_RUNS=$(BENCH_RUNS) BENCH_SECONDS=$(BENCH_SECONDS) \
	BENCH_DELAY_MS=$(BENCH_DELAY_MS) BENCH_CONNS=$(BENCH_CONNS) \
	BENCH_CALLS=$(BENCH_CALLS) BENCH_IPERF=$(BENCH_IPERF) \
	BENCH_PARTS="$(BENCH_PARTS)" BENCH_LIFETIME_V6=$(BENCH_LIFETIME_V6) \
	BENCH_LIFETIME_BYTES=$(BENCH_LIFETIME_BYTES) \
	MAKE="$(BENCH_MAKE)" bench/run.sh $(KVER)

help-bench:
	@echo "make bench [KVER=...]   the demo repeated, hook cost (-icount), BPF alternative,"
	@echo "                        memory of $(BENCH_CONNS) connections, switching cost (arming),"
	@echo "                        throughput over a connection's life (lifetime.md);"
	@echo "                        results and chart in"
	@echo "                        $(BENCH_OUT) (BENCH_RUNS=$(BENCH_RUNS), BENCH_SECONDS=$(BENCH_SECONDS),"
	@echo "                        BENCH_PARTS='$(BENCH_PARTS)', BENCH_STRICT=1: fail on a missed target)"

.PHONY: deps-bench bench help-bench
