# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: installs what it needs, builds the module and tools for one
# kernel, boots it under QEMU and runs demo/demo.sh there: the original
# reports reproduced, stock against fixed, by rcvfix-bench and by iperf3.

DEMO_SECONDS ?= 5
DEMO_RUNS ?= 5
DEMO_DELAY_MS ?= 25
DEMO_IPERF ?= 1
DEMO_OUT = $(BUILD)/$(KVER)/demo.txt
# An arm64 kernel (KVER=...-arm64) is prepared by mk/arm64.mk: its root, the
# kernel, the cross-built module and tools.
ifneq ($(filter %-arm64,$(KVER)),)
DEMO_NEEDS := arm64-prepare
else
DEMO_NEEDS := deps tools kbuild-$(KVER)
endif

demo: $(DEMO_NEEDS)
	@set -o pipefail; \
	RCVFIX_GUEST_TIMEOUT=$${RCVFIX_GUEST_TIMEOUT:-1500} \
	$(HARNESS)/vm.sh cmd $(KVER) "DEMO_SECONDS=$(DEMO_SECONDS) \
		DEMO_RUNS=$(DEMO_RUNS) DEMO_DELAY_MS=$(DEMO_DELAY_MS) \
		DEMO_IPERF=$(DEMO_IPERF) bash demo/demo.sh" | tee $(DEMO_OUT); \
	st=$$?; echo "(also in $(DEMO_OUT))"; exit $$st

help-demo:
	@echo "make demo [KVER=...]    boot a guest (amd64, or an arm64 kernel) and show stock vs fixed, measured by"
	@echo "                        rcvfix-bench and iperf3 (DEMO_SECONDS=$(DEMO_SECONDS),"
	@echo "                        DEMO_RUNS=$(DEMO_RUNS), DEMO_DELAY_MS=$(DEMO_DELAY_MS), DEMO_IPERF=0/1)"

.PHONY: demo help-demo
