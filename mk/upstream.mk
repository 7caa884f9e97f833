# SPDX-License-Identifier: GPL-2.0
#
# The kernel fixes we send upstream (upstream/NAME/LINE/, git format-patch
# series against Debian's LINE source; docs/mptcp-kernel.md):
#   upstream-check   each series applies to Debian's 6.12 (linux-source-6.12)
#                    and 7.3 (linux-source-7.3 in the newest chroot) source
#                    and passes checkpatch --strict (vm/upstream.sh check)
#   check-upstream   (check-all) builds each line's kernel with its series
#                    applied (7.3: series 1, mptcp-rcvlowat, then series 2,
#                    mptcp-rcvwnd, which names it in its BASE; 6.12: series
#                    1's backport), Debian's configuration reduced by
#                    localmodconfig as for the debug kernels
#                    (vm/debug-kernel.sh with RCVFIX_KERNEL_PATCHES, no
#                    detectors, build/upstream-LINE/), boots it and Debian's
#                    own kernel of the line, rcvfix never loaded: test 42's
#                    MPTCP cells (lowatstall) and series 1's selftest stall
#                    on stock and pass patched; 4 MiB into a 64 KiB locked
#                    buffer, 5 kinds x 3, complete patched (7.3, series 2:
#                    MPTCP at most 2 MPTCP retransmissions a transfer
#                    patched, more in one of three on stock); the kernel's
#                    mptcp_connect.sh, mptcp_sockopt.sh and simult_flows.sh
#                    pass patched wherever they pass stock, and of each
#                    series at least one own subtest there fails on stock
#                    and passes patched

UPSTREAM_SH := $(HARNESS)/upstream.sh
UPSTREAM_LINES ?= 6.12 7.3
upstream_dir = $(or $(RCVFIX_BUILD),$(CURDIR)/build)/upstream-$(1)
# the series a line's kernel is built with (those under it by BASE too)
upstream_top = $(shell $(UPSTREAM_SH) top $(1) 2> /dev/null)
upstream_kver = $(shell RCVFIX_KERNEL_PATCHES=$(call upstream_top,$(1)) \
	$(DEBUG_KERNEL) kver $(1) 2> /dev/null)

# the kernels' build, and what the kernel's MPTCP selftests run (ping,
# nft, socat: as for test 45, vm/peer.sh)
deps-upstream:
	@$(HARNESS)/deps.sh linux-source-6.12 patch perl python3-ply \
		$(shell $(DEBUG_KERNEL) deps 6.12) $(shell $(HARNESS)/peer.sh deps 6.12)

upstream-check: deps-upstream
	@$(HARNESS)/upstream.sh check

# Per line: the patched kernel (cached), the selftests' programs from its
# source, then two guests, rcvfix never loaded: Debian's own kernel of the
# line (the stall cells and the series' selftests must stall and fail
# there) and the patched one (they complete and pass), the kernel's own
# MPTCP selftests in both, compared subtest by subtest.
check-upstream: deps deps-upstream progs upstream-check
	@set -o pipefail; fails=0; $(foreach l,$(UPSTREAM_LINES), \
	p=$$($(UPSTREAM_SH) top $(l)) || exit 2; \
	k=$$(RCVFIX_KERNEL_PATCHES=$$p $(DEBUG_KERNEL) prepare $(l)) || exit 2; \
	s=$(if $(filter 7.%,$(l)),$$($(CHROOT_KERNEL) prepare newest),$(KVER_$(subst .,,$(l)))) || exit 2; \
	t=$(call upstream_dir,$(l)); \
	$(UPSTREAM_SH) build $$t/src || exit 2; \
	$(UPSTREAM_SH) boot stock $$s $$t/src $$t/stock.log || fails=$$((fails + 1)); \
	$(UPSTREAM_SH) boot patched $$k $$t/src $$t/patched.log || fails=$$((fails + 1)); \
	$(UPSTREAM_SH) compare $(l) $$t/stock.log $$t/patched.log | tee $$t/compare.log || \
		fails=$$((fails + 1));) \
	$(UPSTREAM_SH) summary $(foreach l,$(UPSTREAM_LINES), \
		$(call upstream_dir,$(l))/{stock,patched,compare}.log) && \
	[ $$fails -eq 0 ]

check-all: check-upstream

help-upstream:
	@echo "make upstream-check     the upstream/ series apply to Debian's $(UPSTREAM_LINES)"
	@echo "                        source and pass checkpatch --strict"
	@echo "make check-upstream     (check-all) build those kernels patched, boot them and"
	@echo "                        the stock ones without rcvfix: the stall cells and the"
	@echo "                        series' selftests fail on stock and pass patched, the"
	@echo "                        kernel's MPTCP selftests pass patched where they pass"
	@echo "                        on stock: $(foreach l,$(UPSTREAM_LINES),$(call upstream_kver,$(l)))"

.PHONY: deps-upstream upstream-check check-upstream help-upstream
