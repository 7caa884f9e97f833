# SPDX-License-Identifier: GPL-2.0
#
# Installing rcvfix the ways operators do (packaging/install.sh): plain
# install/uninstall, dkms-install/dkms-uninstall, the Debian packages (deb),
# and the host-mutating package test (check-package), kept out of `make check`.

PKG_DEBS := dkms dh-dkms debhelper lintian dpkg-dev fakeroot file

# rcvfix-tools is built for each of DEB_ARCHES: the host's natively, the
# others with Debian's cross compiler (a mixed fleet gets every package from
# one `make deb`; DEB_ARCHES=amd64 builds the host's only, for instance).
DEB_ARCHES ?= amd64 arm64
export DEB_ARCHES
deb_host_arch := $(shell dpkg --print-architecture 2> /dev/null)
deb_cross_gcc = $(if $(filter arm64,$(1)),gcc-aarch64-linux-gnu,$(if \
	$(filter amd64,$(1)),gcc-x86-64-linux-gnu))
PKG_DEBS += $(foreach a,$(filter-out $(deb_host_arch),$(DEB_ARCHES)),\
	$(call deb_cross_gcc,$(a)) libc6-dev-$(a)-cross)

# These act on the running kernel unless KVER is given (a list, or "all").
INSTALL_KVERS = $(if $(filter command line environment,$(origin KVER)),$(KVER),$(shell uname -r))

deps-package:
	@$(HARNESS)/deps.sh $(PKG_DEBS)

# No automatic apt-get here: install.sh says what is missing.
install uninstall dkms-install dkms-uninstall:
	@packaging/install.sh $@ $(INSTALL_KVERS)

# build/pkg/rcvfix-dkms_<version>_all.deb and rcvfix-tools_<version>_<arch>.deb
# for each arch of DEB_ARCHES.
deb: | deps-package
	@packaging/deb.sh

# Builds the packages, installs them on this host (dkms builds for the guest
# kernels), boots the guests on tests/guest/7*.t, exercises make install and
# dkms-install, then purges everything it installed.
check-package: | deps-package deps
	@PKG_KVERS="$(KVERS)" packaging/check-package.sh

# The upgrade from the last release (packaging/releases, built from its
# commit) to this tree's packages, in one guest (tests/guest/77-upgrade.t);
# changes nothing on the host but build/. make check-all runs it.
UPGRADE_KVER ?= $(KVER_612)
check-upgrade: | deps-package deps progs
	@packaging/check-upgrade.sh $(UPGRADE_KVER)

help-package:
	@echo "make install [KVER=...] [PREFIX=/usr/local]   module into /lib/modules/KVER/updates, tools"
	@echo "make uninstall [KVER=...]      (KVER: default the running kernel; a list, or all)"
	@echo "make dkms-install [KVER=...]   dkms add/build/install from /usr/src/rcvfix-<version>"
	@echo "make dkms-uninstall [KVER=...] and unregister it when no kernel keeps it"
	@echo "make deb [DEB_ARCHES='$(DEB_ARCHES)']   build/pkg/rcvfix-dkms_<version>_all.deb"
	@echo "                               + rcvfix-tools_<version>_<arch>.deb each (cross-built), lintian"
	@echo "make check-package             install the .debs here, guest tests 7*, purge (mutates the host)"
	@echo "make check-upgrade [UPGRADE_KVER=...]   apt upgrade from the last release in a guest (test 77)"

.PHONY: deps-package install uninstall dkms-install dkms-uninstall deb \
	check-package check-upgrade help-package
