# SPDX-License-Identifier: GPL-2.0
#
# Containers and fleets: the kmod image Kernel Module Management loads rcvfix
# from (packaging/kmod-image.sh), and the packages the container tests need
# in the guest (CNI tuning plugin, Podman with crun, umoci/skopeo) and on the
# host (python3-yaml for the deploy/kubernetes manifest tests).

DEB_CHECK += containernetworking-plugins podman crun conmon umoci skopeo \
	busybox-static python3-yaml
KMOD_IMAGE_DEBS := umoci skopeo busybox-static kmod

# build/kmod-image/rcvfix-kmod-<kver>.tar (OCI archive, tag <kver> with '+'
# made '_').
KMOD_IMAGE_DIR := $(BUILD)/kmod-image
kmod_image_of = $(KMOD_IMAGE_DIR)/rcvfix-kmod-$(1).tar
KMOD_IMAGE_TARGETS := $(sort $(addprefix kmod-image-,$(KVERS) $(KVER)))

deps-kmod-image:
	@$(HARNESS)/deps.sh $(KMOD_IMAGE_DEBS)

kmod-image: kmod-image-$(KVER)

$(KMOD_IMAGE_TARGETS): kmod-image-%: kbuild-% | deps-kmod-image
	@packaging/kmod-image.sh $* $(BUILD)/$*/module/rcvfix.ko \
		$(call kmod_image_of,$*) > /dev/null

# tests/guest/74-kmod-image.t unpacks and loads the image of its kernel.
check: $(addprefix kmod-image-,$(KVERS))

# 73-podman and 75-daemonset (Podman, a minute or two per kernel) run in
# check-all only, to keep make check within 20 minutes; TESTS='73 75' runs
# them in make check. The guest sees this as $rcvfix_suite.
check-all: export RCVFIX_APPEND := $(RCVFIX_APPEND) rcvfix_suite=all

help-containers:
	@echo "make kmod-image [KVER=...]   OCI archive for KMM: build/kmod-image/rcvfix-kmod-KVER.tar"
	@echo "                        (see deploy/kubernetes/README.md)"

.PHONY: deps-kmod-image kmod-image $(KMOD_IMAGE_TARGETS) help-containers
