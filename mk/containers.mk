# SPDX-License-Identifier: GPL-2.0
#
# Containers and fleets: the kmod image Kernel Module Management loads rcvfix
# from (packaging/kmod-image.sh), and the packages the container tests need
# in the guest (CNI tuning plugin, Podman with crun, umoci/skopeo) and on the
# host (python3-yaml for the deploy/kubernetes manifest tests).

DEB_CHECK += containernetworking-plugins podman crun conmon umoci skopeo \
	busybox-static python3-yaml
KMOD_IMAGE_DEBS := umoci skopeo busybox-static kmod binutils

# build/kmod-image/rcvfix-kmod-<kver>.tar (OCI archive, tag <kver> with '+'
# made '_', platform the kernel's architecture).
KMOD_IMAGE_DIR := $(BUILD)/kmod-image
kmod_image_of = $(KMOD_IMAGE_DIR)/rcvfix-kmod-$(1).tar
KMOD_IMAGE_TARGETS := $(sort $(addprefix kmod-image-,$(KVERS) $(KVER)))
# An arm64 kernel (KVER=6.1.0-57-arm64, 6.12.117+deb12-arm64): vm/arm64.sh
# unpacks it, cross-builds rcvfix.ko for it (mk/arm64.mk) and makes the arm64
# image (`arm64.sh kmod-image`: busybox-static:arm64 as its cp, no arm64
# root needed), as its check does before booting the kernel.
KMOD_IMAGE_ARM64 := $(filter kmod-image-%-arm64,$(KMOD_IMAGE_TARGETS))

deps-kmod-image:
	@$(HARNESS)/deps.sh $(KMOD_IMAGE_DEBS)

kmod-image: kmod-image-$(KVER)

$(filter-out $(KMOD_IMAGE_ARM64),$(KMOD_IMAGE_TARGETS)): kmod-image-%: kbuild-% | deps-kmod-image
	@packaging/kmod-image.sh $* $(BUILD)/$*/module/rcvfix.ko \
		$(call kmod_image_of,$*) > /dev/null

$(KMOD_IMAGE_ARM64): kmod-image-%: | deps-kmod-image
	@$(ARM64) deps && $(ARM64) prepare $* && $(ARM64) kbuild $*
	@$(ARM64) kmod-image $*

# tests/guest/74-kmod-image.t unpacks and loads the image of its kernel.
check: $(addprefix kmod-image-,$(KVERS))

# 73-podman and 75-daemonset (Podman, a minute or two per kernel) run in
# check-all only, to keep make check within 20 minutes; TESTS='73 75' runs
# them in make check. The guest sees this as $rcvfix_suite.
check-all: export RCVFIX_APPEND := $(RCVFIX_APPEND) rcvfix_suite=all

help-containers:
	@echo "make kmod-image [KVER=...]   OCI archive for KMM: build/kmod-image/rcvfix-kmod-KVER.tar"
	@echo "                        (an arm64 KVER, e.g. 6.1.0-57-arm64: an arm64 image, cross-built)"
	@echo "                        (see deploy/kubernetes/README.md)"

.PHONY: deps-kmod-image kmod-image $(KMOD_IMAGE_TARGETS) help-containers
