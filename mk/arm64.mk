# SPDX-License-Identifier: GPL-2.0
#
# The arm64 line (vm/arm64.sh): Debian 12's arm64 kernels under
# qemu-system-aarch64 (TCG), an arm64 root under build/arm64/root, the
# module and test programs cross-built. Kept out of `make check`;
# `make check-arm64-all` (run by `make check-all` after the amd64 kernels)
# adds 6.1's PREEMPT_RT and cloud flavours and Debian 13's newest 7.x arm64
# kernel, cross-built in the Debian 13 chroot of mk/chroot.mk (build/newest).

ARM64 := $(HARNESS)/arm64.sh
# The newest ABI of each arm64 line in the apt lists (after `arm64.sh deps`
# added the architecture), else the tested pins; KVER=<arm64 kernel> picks one.
ifneq ($(filter %-arm64,$(KVER)),)
KVERS_ARM64 := $(KVER)
else
KVERS_ARM64 ?= $(shell $(ARM64) kernels 2> /dev/null)
endif

# The PREEMPT_RT flavour check-arm64-all adds (the newest 6.1 rt-arm64 ABI).
KVERS_ARM64_RT ?= $(shell $(ARM64) kernels rt 2> /dev/null)
# Debian's cloud flavour of the first line's ABI, what arm64 cloud images
# boot (no 9p: vm/vm.sh shares the root over virtiofs).
KVERS_ARM64_CLOUD ?= $(patsubst %-arm64,%-cloud-arm64,$(firstword $(KVERS_ARM64)))

check-arm64:
	@$(ARM64) check $(KVERS_ARM64)

# The 7.x arm64 ABI is asked of the archive at run time (kept for a day,
# else the tested pin), as check-all does for the chroot lines.
check-arm64-all:
	@k=$$($(HARNESS)/chroot-kernel.sh prepare newest arm64) || { \
		echo "check-arm64-all: no 7.x arm64 kernel (see above); retry, or pin one: CHROOT_KVER=7.3.4+deb13-arm64 make check-arm64-all" >&2; \
		exit 2; }; \
	$(ARM64) check $(KVERS_ARM64) $(KVERS_ARM64_RT) $(KVERS_ARM64_CLOUD) $$k

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
	@echo "make check-arm64-all    the same plus $(KVERS_ARM64_RT) $(KVERS_ARM64_CLOUD) and Debian 13's newest"
	@echo "                        7.x arm64 (cross-built in build/newest/chroot); run by check-all"
	@echo "make arm64-prepare      root, kernels, cross-built module and programs only"
	@echo "make vm-shell-arm64 [KVER=...] [CMD='...']   arm64 guest shell or command"

.PHONY: check-arm64 check-arm64-all arm64-prepare vm-shell-arm64 help-arm64
