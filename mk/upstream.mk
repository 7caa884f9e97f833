# SPDX-License-Identifier: GPL-2.0
#
# The kernel fixes we send upstream (upstream/NAME/LINE/, git format-patch
# series against Debian's LINE source; docs/kernels.md):
#   upstream-check   each series applies to Debian's 6.12 (linux-source-6.12)
#                    and 7.3 (linux-source-7.3 in the newest chroot) source
#                    and passes checkpatch --strict (vm/upstream.sh check)
#   check-upstream   (check-all) builds each line's kernel with its series
#                    applied, Debian's configuration reduced by localmodconfig
#                    as for the debug kernels (vm/debug-kernel.sh with
#                    RCVFIX_KERNEL_PATCHES, no detectors, build/upstream-LINE/),
#                    boots it with rcvfix never loaded and runs test 42's
#                    MPTCP cells (lowatstall) and the series' selftest there

UPSTREAM_SERIES := upstream/mptcp-rcvlowat
UPSTREAM_LINES ?= 6.12 7.3
upstream_kver = $(shell RCVFIX_KERNEL_PATCHES=$(UPSTREAM_SERIES)/$(1) \
	$(DEBUG_KERNEL) kver $(1) 2> /dev/null)

deps-upstream:
	@$(HARNESS)/deps.sh linux-source-6.12 patch perl python3-ply \
		$(shell $(DEBUG_KERNEL) deps 6.12)

upstream-check: deps-upstream
	@$(HARNESS)/upstream.sh check

# Per line: build (cached), the selftest program from the patched source,
# then one guest: vm/upstream.sh guest, rcvfix not loaded.
check-upstream: deps deps-upstream progs upstream-check
	@set -e; $(foreach l,$(UPSTREAM_LINES), \
	k=$$(RCVFIX_KERNEL_PATCHES=$(UPSTREAM_SERIES)/$(l) $(DEBUG_KERNEL) prepare $(l)); \
	t=$(or $(RCVFIX_BUILD),$(CURDIR)/build)/upstream-$(l); \
	$(CC) -Wall -O2 -I$$t/src/tools/include -o $$t/mptcp_rcvlowat \
		$$t/src/tools/testing/selftests/net/mptcp/mptcp_rcvlowat.c; \
	$(HARNESS)/vm.sh cmd $$k "$(CURDIR)/vm/upstream.sh guest $$(realpath $$t)";)

check-all: check-upstream

help-upstream:
	@echo "make upstream-check     the upstream/ series apply to Debian's $(UPSTREAM_LINES)"
	@echo "                        source and pass checkpatch --strict"
	@echo "make check-upstream     (check-all) build those kernels patched, boot them"
	@echo "                        without rcvfix: lowatstall's MPTCP cells and the"
	@echo "                        selftest must pass: $(foreach l,$(UPSTREAM_LINES),$(call upstream_kver,$(l)))"

.PHONY: deps-upstream upstream-check check-upstream help-upstream
