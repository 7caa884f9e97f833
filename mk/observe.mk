# SPDX-License-Identifier: GPL-2.0
#
# Observability: the real consumers the guest tests 62-65 run against the
# tracepoint rcvfix:rcvbuf_set and `rcvfixctl --prometheus` (perf, bpftrace,
# node_exporter and curl to fetch its /metrics). Installed by `make deps`.

DEB_CHECK += linux-perf bpftrace prometheus-node-exporter curl

help-observe:
	@echo "Observing (docs/operations.md \"Observing it\"): tests 62-65 run perf, bpftrace and"
	@echo "                        prometheus-node-exporter in the guest (make deps installs them)"

.PHONY: help-observe
