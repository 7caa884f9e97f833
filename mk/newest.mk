# SPDX-License-Identifier: GPL-2.0
#
# Debian's newest kernel (7.x, trixie-backports), which Debian 12 cannot build
# for: `make newest-kernel` prepares a Debian 13 chroot with its headers and
# the unpacked kernel under build/newest/ (tests/harness/newest-kernel.sh);
# kbuild-KVER builds in that chroot; `make check-all` includes the kernel.

# The release `make newest-kernel` picked last, else the tested pin.
# NEWEST_KVER=<release> pins another one (e.g. 7.2.12+deb13-amd64).
NEWEST_KVER_PIN := 7.3.4+deb13-amd64
KVERS_NEWEST := $(or $(NEWEST_KVER),$(shell cat $(BUILD)/newest/kver \
	2> /dev/null),$(NEWEST_KVER_PIN))
# Kernels built for Debian 13 (+deb13) come from the chroot, never from the
# host's apt sources.
KVERS_CHROOT := $(sort $(KVERS_NEWEST) $(foreach k,$(KVERS) $(KVER),$(if \
	$(findstring +deb13-,$(k)),$(k))))

# `make ... KVER=<chroot kernel>`: its headers are not for the host's apt.
ifneq ($(filter $(KVER),$(KVERS_CHROOT)),)
DEB_BUILD_KDIR :=
endif

newest-kernel:
	@NEWEST_KVER=$(NEWEST_KVER) $(HARNESS)/newest-kernel.sh prepare

# NEWEST_UPDATE=1: ask the archive again for the newest 7.x.
newest-kernel-update:
	@NEWEST_UPDATE=1 $(HARNESS)/newest-kernel.sh prepare

$(addprefix kbuild-,$(KVERS_CHROOT)): KBUILD_CMD = $(HARNESS)/newest-kernel.sh kbuild

# mk/lint.mk installs and builds against host headers (apt, /lib/modules):
# keep the chroot kernels out of it.
lint deps-lint $(addprefix lint-,$(LINT_STEPS)): \
	override KVERS := $(filter-out $(KVERS_CHROOT),$(KVERS))

help-newest:
	@echo "make newest-kernel      Debian 13 chroot + headers + unpacked kernel of"
	@echo "                        $(KVERS_NEWEST) in build/newest/ (cached);"
	@echo "                        then: make check KVER=$(KVERS_NEWEST)"
	@echo "make newest-kernel-update   the same after asking the archive for the newest 7.x"

.PHONY: newest-kernel newest-kernel-update help-newest
