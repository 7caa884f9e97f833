# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own MPTCP selftests against rcvfix (vm/peer.sh builds them
# from Debian's source of each line; tests/guest/45-mptcp-selftests.t runs
# them disabled, then with default_enable=1, in one boot, and fails on a
# subtest that passes only disabled). A quarter of an hour per kernel under
# emulation: part of check-all (6.1, 6.12 and the newest 7.x), never of
# make check.

PEER_SH := $(HARNESS)/peer.sh
# PEER: what runs, script names and disconnect:N (the full-disconnect
# group of mptcp_connect.sh alone, N times).
PEER ?= mptcp_connect.sh mptcp_sockopt.sh diag.sh simult_flows.sh
# PEER_KVERS: the kernels it boots; check-all adds the newest 7.x.
PEER_KVERS ?= $(KVERS)
PEER_NEWEST ?=

check-peer: deps tools progs
	@ks="$(PEER_KVERS)"; \
	if [ -n "$(PEER_NEWEST)" ]; then \
		k=$$($(CHROOT_KERNEL) prepare newest) || exit 2; ks+=" $$k"; \
	fi; \
	lines=$$(for k in $$ks; do $(PEER_SH) line $$k || exit 2; done | sort -u); \
	$(HARNESS)/deps.sh $$($(PEER_SH) deps $$lines) && \
	$(PEER_SH) build $$lines || exit 2; \
	for k in $$ks; do \
		$(MAKE) --no-print-directory kbuild-$$k KVERS=$$k || exit 2; \
	done; \
	RCVFIX_TESTS=45 RCVFIX_PEER='$(PEER)' \
	RCVFIX_GUEST_TIMEOUT=$${RCVFIX_GUEST_TIMEOUT:-14400} $(HARNESS)/check.sh $$ks

check-all: check-peer
check-all: PEER_NEWEST := 1

help-peer:
	@echo "make check-peer         the kernel's own MPTCP selftests (Debian's source of"
	@echo "                        each line) with rcvfix disabled, then default_enable=1:"
	@echo "                        $(PEER_KVERS) (check-all: and the newest 7.x);"
	@echo "                        PEER='disconnect:20' repeats the full-disconnect group"

.PHONY: check-peer help-peer
