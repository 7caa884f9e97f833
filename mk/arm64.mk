# SPDX-License-Identifier: GPL-2.0
#
# The arm64 line (vm/arm64.sh): Debian 12's arm64 kernels under
# qemu-system-aarch64 (TCG), an arm64 root under build/arm64/root, the
# module and test programs cross-built. Kept out of `make check`.

ARM64 := $(HARNESS)/arm64.sh
# The newest ABI of each arm64 line in the apt lists (after `arm64.sh deps`
# added the architecture), else the tested pins; KVER=<arm64 kernel> picks one.
ifneq ($(filter %-arm64,$(KVER)),)
KVERS_ARM64 := $(KVER)
else
KVERS_ARM64 ?= $(shell $(ARM64) kernels 2> /dev/null)
endif

check-arm64:
	@$(ARM64) check $(KVERS_ARM64)

# Everything a guest needs, without booting it.
arm64-prepare:
	@$(ARM64) deps && $(ARM64) root && $(ARM64) progs && \
	for k in $(KVERS_ARM64); do \
		$(ARM64) prepare $$k && $(ARM64) kbuild $$k || exit; \
	done

# A shell, or CMD='...' run, in the arm64 guest of KVER (default: the first).
vm-shell-arm64: arm64-prepare
	@k=$(firstword $(KVERS_ARM64)); \
	if [ -n "$$RCVFIX_VM_CMD" ]; then \
		nice -n 19 $(HARNESS)/vm.sh cmd $$k "$$RCVFIX_VM_CMD"; \
	else \
		$(HARNESS)/vm.sh shell $$k; \
	fi
vm-shell-arm64: export RCVFIX_VM_CMD = $(value CMD)

help-arm64:
	@echo "make check-arm64 [KVER=...]   the guest suite on Debian 12's arm64 kernels"
	@echo "                        under qemu-system-aarch64: $(KVERS_ARM64)"
	@echo "make arm64-prepare      root, kernels, cross-built module and programs only"
	@echo "make vm-shell-arm64 [KVER=...] [CMD='...']   arm64 guest shell or command"

.PHONY: check-arm64 arm64-prepare vm-shell-arm64 help-arm64
