# SPDX-License-Identifier: GPL-2.0
#
# The refusal paths whole (issue 58): tests 25 (every byte after a
# fallback) and 43 (MPTCP SO_RCVLOWAT in each MPTCP state) with each MPTCP
# hook refused through the test switch refuse_hooks=, as on a host that
# cannot use it (a CPU enforcing IBT refuses a sealed entry). On 6.12, the
# line whose MPTCP needs the DATA_FIN placement; test 26 (make check) runs
# every refusal path briefly. About 4 minutes a hook; check-all runs it.

REFUSED_HOOKS ?= mptcp_update_rcv_data_fin mptcp_sol_socket_sync_intval \
	subflow_data_ready subflow_state_change mptcp_poll mptcp_set_rcvlowat
REFUSED_KVERS ?= $(KVER_612)

check-refused: deps tools progs $(addprefix kbuild-,$(REFUSED_KVERS))
	@st=0; for h in $(REFUSED_HOOKS); do \
		echo "# refuse_hooks=$$h: tests 25 and 43 on $(REFUSED_KVERS)"; \
		RCVFIX_LOAD_PARAMS=refuse_hooks=$$h RCVFIX_TESTS='25 43' \
			$(HARNESS)/check.sh $(REFUSED_KVERS) || st=1; \
	done; exit $$st

help-refused:
	@echo "make check-refused      tests 25 and 43 with each MPTCP hook refused (refuse_hooks=),"
	@echo "                        on $(REFUSED_KVERS): the paths an IBT host takes"

.PHONY: check-refused help-refused
