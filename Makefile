# SPDX-License-Identifier: GPL-2.0
#
# rcvfix top-level build: the module (module/), the tools (tools/), and the
# QEMU test harness (vm/, the VM platform) that proves the module inside Debian's
# own kernels. `make help` lists the targets; mk/*.mk fragments add more.

SHELL := /bin/bash

# --- kernels -----------------------------------------------------------------
# The 6.1 ABI follows Debian's linux-image-amd64 metapackage when it is
# installed; the 6.12 one follows the newest 6.12 ABI in the apt lists
# (bookworm-security carries no 6.12 metapackage), else the tested pin;
# exported so that sub-makes do not ask again. KVER=<one> on the command
# line selects a single kernel for check and vm-shell.
KVER_61 := $(or $(shell dpkg-query -W -f='$${Depends}' linux-image-amd64 \
	2>/dev/null | grep -o 'linux-image-6\.1\.[^ ,]*-amd64' | head -n 1 | \
	sed 's/^linux-image-//'),6.1.0-57-amd64)
KVER_612_PIN := 6.12.117+deb12-amd64
ifndef KVER_612
KVER_612 := $(or $(shell apt-cache pkgnames linux-image-6.12. 2> /dev/null | \
	sed -En 's/^linux-image-(6\.12\.[0-9]+\+deb12-amd64)$$/\1/p' | \
	sort -V | tail -n 1),$(KVER_612_PIN))
endif
export KVER_612
KVERS ?= $(KVER_61) $(KVER_612)
ifneq ($(filter command line environment,$(origin KVER)),)
KVERS := $(KVER)
endif
KVER ?= $(firstword $(KVERS))
# PREEMPT_RT and cloud flavours of the same kernels, added by check-all
# (cloud: what Debian's cloud images boot; no 9p, the guest takes virtiofs).
kvers_generic = $(filter-out %-rt-amd64 %-cloud-amd64,$(KVERS))
KVERS_RT = $(patsubst %-amd64,%-rt-amd64,$(kvers_generic))
KVERS_CLOUD = $(patsubst %-amd64,%-cloud-amd64,$(kvers_generic))

# Headers to build module/rcvfix.ko against with plain `make`; on a real host
# pass KDIR=/lib/modules/$(uname -r)/build.
KDIR ?= /usr/src/linux-headers-$(KVER)
kdir_of = /usr/src/linux-headers-$(1)

# TESTS='00 10-rule' (or RCVFIX_TESTS=...): only these tests/guest scripts.
ifdef TESTS
export RCVFIX_TESTS := $(TESTS)
endif

BUILD := $(CURDIR)/build
BIN := $(BUILD)/bin
HARNESS := vm

# --- Debian packages -----------------------------------------------------------
# Fragments in mk/ may append to these lists.
DEB_BUILD := make gcc libc6-dev kmod xz-utils
DEB_TOOLS := clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool sparse \
	liburing-dev
DEB_CHECK := qemu-system-x86 busybox-static cpio iproute2 iperf3 procps jq nftables \
	util-linux coreutils
kernel_pkgs = $(foreach k,$(1),linux-image-$(k) linux-headers-$(k))

# Headers for the default KDIR only: a user-given KDIR must already exist.
ifeq ($(origin KDIR),file)
DEB_BUILD_KDIR = linux-headers-$(KVER)
endif

.DEFAULT_GOAL := all

# --- build ---------------------------------------------------------------------

all: module tools

deps-build:
	@$(HARNESS)/deps.sh $(DEB_BUILD) $(DEB_TOOLS) $(DEB_BUILD_KDIR)

deps: deps-build
	@$(HARNESS)/deps.sh $(DEB_CHECK) $(call kernel_pkgs,$(filter-out $(KVERS_CHROOT) %-rcvfix-debug,$(KVERS)))

module: | deps-build
	@test -f $(KDIR)/Makefile || { echo "KDIR=$(KDIR) is not a kernel build tree: install its headers or pass KDIR=/lib/modules/\$$(uname -r)/build" >&2; exit 2; }
	@test -f module/Kbuild || { echo "module/Kbuild missing" >&2; exit 2; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/module modules

tools: | deps-build
	@if [ -f tools/Makefile ]; then \
		$(MAKE) -C tools OUT=$(BIN); \
	else echo "tools/: no Makefile yet, skipped"; fi

progs: | deps-build
	@if [ -f tests/progs/Makefile ]; then \
		$(MAKE) -C tests/progs OUT=$(BIN); \
	else echo "tests/progs/: no Makefile yet, skipped"; fi

# The module and the test modules for one kernel, in build/<kver>/ so that
# kernels do not share objects.
KBUILD_TARGETS := $(sort $(addprefix kbuild-,$(KVERS) $(KVER)))
# mk/chroot.mk sets another KBUILD_CMD for kernels built in its chroot.
KBUILD_CMD = $(HARNESS)/kbuild.sh
$(KBUILD_TARGETS): kbuild-%: | deps
	@MAKE="$(MAKE)" $(KBUILD_CMD) $*

# --- test ----------------------------------------------------------------------

# Host unit tests, then the guest suite on every kernel of KVERS.
check: deps tools progs $(addprefix kbuild-,$(KVERS))
	@$(HARNESS)/check.sh $(KVERS)

# The same on the PREEMPT_RT flavours too, and on the kernels built in
# chroots (mk/chroot.mk): the newest ABI of each of their lines.
check-all:
	@ks="$(KVERS) $(KVERS_RT) $(KVERS_CLOUD)"; \
	for l in $(CHROOT_LINES); do \
		k=$$($(CHROOT_KERNEL) prepare $${l/\// }) || exit 2; ks+=" $$k"; \
	done; \
	$(MAKE) --no-print-directory check KVERS="$$ks"; st=$$?; \
	$(MAKE) --no-print-directory check-refused || st=1; \
	$(MAKE) --no-print-directory check-upgrade || st=1; \
	$(MAKE) --no-print-directory check-arm64-all || st=1; exit $$st

# A guest with everything built: a shell, or CMD="..." run and powered off.
vm-shell: deps tools progs kbuild-$(KVER)
	@if [ -n "$$RCVFIX_VM_CMD" ]; then \
		$(HARNESS)/vm.sh cmd $(KVER) "$$RCVFIX_VM_CMD"; \
	else \
		$(HARNESS)/vm.sh shell $(KVER); \
	fi
vm-shell: export RCVFIX_VM_CMD = $(value CMD)

clean:
	@if [ -f $(KDIR)/Makefile ] && [ -f module/Kbuild ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/module clean; fi
	@for d in tools tests/progs tests/unit; do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d clean; fi; done
	rm -rf $(BUILD)

# The core targets, then each mk/*.mk fragment's help-NAME, in order.
help: help-core $(patsubst mk/%.mk,help-%,$(sort $(wildcard mk/*.mk)))

help-core:
	@echo "make [KDIR=...]         module/rcvfix.ko (default KDIR: headers of $(KVER)) and tools"
	@echo "make deps               install every Debian package needed (idempotent)"
	@echo "make check [KVER=...]   unit tests, then the guest suite on: $(KVERS)"
	@echo "make check-all          the same plus: $(KVERS_RT) $(KVERS_CLOUD) $(KVERS_NEWEST) $(KVER_NEWEST_RT)"
	@echo "                        $(KVER_510) $(KVER_510_RT) (newest ABIs, asked first)"
	@echo "make vm-shell [KVER=...] [CMD='...']   guest shell, or run CMD in the guest"
	@echo "make clean"
	@echo "Options: TESTS='00 10-rule' (subset of tests/guest), RCVFIX_KVM=1,"
	@echo "  RCVFIX_VERBOSE=1, RCVFIX_GUEST_TIMEOUT=3600, RCVFIX_TEST_TIMEOUT=300,"
	@echo "  RCVFIX_BOOT_TIMEOUT=300 (s, boot to the test runner),"
	@echo "  RCVFIX_JOBS=N (guests side by side; default: host CPUs)"

.PHONY: all deps deps-build module tools progs check check-all vm-shell \
	clean help help-core $(KBUILD_TARGETS)

-include mk/*.mk
