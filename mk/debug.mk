# SPDX-License-Identifier: GPL-2.0
#
# The suite under the kernel's own bug detectors (KASAN, lockdep with
# PROVE_RCU, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, KFENCE, DEBUG_LIST): Debian's
# own kernel source built with them (vm/debug-kernel.sh, cached under
# build/debug-LINE/), a canary of deliberate bugs, a control run without
# rcvfix, then the whole suite (vm/check-debug.sh). Part of check-all.

DEBUG_KERNEL := $(HARNESS)/debug-kernel.sh
# DEBUG_LINES: the debug kernel lines to build and test: 6.1 (the default),
# 6.12, or both ('6.1 6.12', what check-all runs: 6.12 adds about an hour
# of build and an hour and a half of suite). On the command line it picks
# for check-all too.
DEBUG_LINES ?= 6.1
KVERS_DEBUG := $(foreach l,$(DEBUG_LINES),$(shell $(DEBUG_KERNEL) kver $(l) 2> /dev/null))

deps-debug:
	@$(HARNESS)/deps.sh $(sort $(foreach l,$(DEBUG_LINES),$(shell $(DEBUG_KERNEL) deps $(l))))

debug-kernel: deps-debug
	@$(foreach l,$(DEBUG_LINES),$(DEBUG_KERNEL) prepare $(l) &&) true

# The whole suite, check-all's scripts too: perf, bpftrace (BPF and perf
# events on rcvfix's tracepoints) and Podman under the detectors (about
# 15 minutes more on the debug kernel).
check-debug: export RCVFIX_APPEND := $(RCVFIX_APPEND) rcvfix_suite=all
check-debug: deps deps-debug tools progs
	@MAKE="$(MAKE)" $(HARNESS)/check-debug.sh $(DEBUG_LINES)

check-all: check-debug
check-all: DEBUG_LINES := 6.1 6.12

# A debug kernel is built here: never from apt, never linted against
# packaged headers; `make check KVER=<debug kver>` boots it once built.
ifneq ($(filter %-rcvfix-debug,$(KVER)),)
DEB_BUILD_KDIR :=
endif
lint deps-lint $(addprefix lint-,$(LINT_STEPS)): \
	override KVERS := $(filter-out $(KVERS_CHROOT) %-rcvfix-debug,$(KVERS))

help-debug:
	@echo "make check-debug        the suite under KASAN, lockdep, PROVE_RCU, atomic-sleep,"
	@echo "                        ODEBUG, KFENCE and list debugging: builds Debian's"
	@echo "                        $(DEBUG_LINES) source with them (cached in build/debug-LINE),"
	@echo "                        canary, control, then the suite"
	@echo "make debug-kernel       only build (or reuse) it: $(KVERS_DEBUG)"

.PHONY: deps-debug debug-kernel check-debug help-debug
