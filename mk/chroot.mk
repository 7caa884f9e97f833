# SPDX-License-Identifier: GPL-2.0
#
# Debian kernels the host cannot build for, each line in a chroot of its own
# Debian release (vm/chroot-kernel.sh, under build/LINE/):
#   newest    Debian's newest kernel (7.x, trixie-backports; Debian 13 chroot),
#             generic and PREEMPT_RT
#   debian11  Debian 11's 5.10 (bullseye-security; Debian 11 chroot, gcc-10),
#             generic and PREEMPT_RT
# kbuild-KVER builds those in their chroot. `make check-all` asks the archive
# for the newest ABI of each line (kept for a day, else the tested pin).

CHROOT_KERNEL := $(HARNESS)/chroot-kernel.sh
# The release each line picked last, else its tested pin (no network).
chroot_known = $(shell $(CHROOT_KERNEL) known $(1) $(2) 2> /dev/null)
KVERS_NEWEST := $(or $(NEWEST_KVER),$(call chroot_known,newest))
KVER_NEWEST_RT := $(call chroot_known,newest,rt-amd64)
KVER_510 := $(call chroot_known,debian11)
KVER_510_RT := $(call chroot_known,debian11,rt-amd64)

# Kernels of KVERS/KVER that are built in a chroot: never from the host's apt.
chroot_kvers = $(filter 5.10.0-% %+deb13-amd64 %+deb13-rt-amd64,$(1))
KVERS_CHROOT := $(sort $(KVERS_NEWEST) $(call chroot_kvers,$(KVERS) $(KVER)))

# `make ... KVER=<chroot kernel>`: its headers are not for the host's apt.
ifneq ($(filter $(KVER),$(KVERS_CHROOT)),)
DEB_BUILD_KDIR :=
endif

# The newest ABI of each chroot line: `make check-all` runs these first.
CHROOT_LINES := newest newest/rt-amd64 debian11 debian11/rt-amd64
chroot_prepare = $(CHROOT_KERNEL) prepare $(subst /, ,$(1))

newest-kernel:
	@NEWEST_KVER=$(NEWEST_KVER) $(call chroot_prepare,newest)

debian11-kernel:
	@$(call chroot_prepare,debian11)
	@$(call chroot_prepare,debian11/rt-amd64)

# CHROOT_UPDATE=1: ask the archive again now.
chroot-kernels-update:
	@$(foreach l,$(CHROOT_LINES),CHROOT_UPDATE=1 $(call chroot_prepare,$(l)) &&) true

# dkms of that Debian release builds the module for KVER (in its chroot).
dkms-chroot:
	@$(CHROOT_KERNEL) dkms $(KVER)

$(addprefix kbuild-,$(KVERS_CHROOT)): KBUILD_CMD = $(CHROOT_KERNEL) kbuild

# mk/lint.mk installs and builds against host headers (apt, /lib/modules):
# keep the chroot kernels out of it.
lint deps-lint $(addprefix lint-,$(LINT_STEPS)): \
	override KVERS := $(filter-out $(KVERS_CHROOT),$(KVERS))

help-chroot:
	@echo "make newest-kernel      Debian 13 chroot + headers + unpacked kernel of"
	@echo "                        $(KVERS_NEWEST) in build/newest/ (cached; check-all"
	@echo "                        also prepares $(KVER_NEWEST_RT));"
	@echo "                        then: make check KVER=$(KVERS_NEWEST)"
	@echo "make debian11-kernel    the same for Debian 11's 5.10 in build/debian11/:"
	@echo "                        $(KVER_510) $(KVER_510_RT)"
	@echo "make chroot-kernels-update   ask the archive again for each line's newest ABI"
	@echo "make dkms-chroot KVER=...   dkms in that kernel's chroot builds rcvfix for it"

.PHONY: newest-kernel debian11-kernel chroot-kernels-update dkms-chroot \
	help-chroot
