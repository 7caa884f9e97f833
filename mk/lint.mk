# SPDX-License-Identifier: GPL-2.0
#
# Code-hygiene gates (packaging/lint.sh), run by `make check` before the
# guest suite: version consistency, checkpatch --strict (linux-source-6.1),
# sparse C=2 + W=1 against the headers of every kernel in KVERS, and
# clang-format with the kernel's style on tools/, and file sizes (size).

LINT_DEBS := sparse clang-format linux-source-6.1 perl make gcc xz-utils
LINT_STEPS := version checkpatch sparse format size

deps-lint:
	@$(HARNESS)/deps.sh $(LINT_DEBS) $(foreach k,$(KVERS),linux-headers-$(k))

lint: | deps-lint
	@LINT_KVERS="$(KVERS)" packaging/lint.sh

$(addprefix lint-,$(LINT_STEPS)): lint-%: | deps-lint
	@LINT_KVERS="$(KVERS)" packaging/lint.sh $*

# Fail fast: lint before the guests boot.
check: lint

help-lint:
	@echo "make lint               checkpatch --strict, sparse C=2 + W=1 ($(KVERS)),"
	@echo "                        clang-format (tools/), version consistency, file sizes"
	@echo "make lint-STEP          one of: $(LINT_STEPS)"

.PHONY: deps-lint lint $(addprefix lint-,$(LINT_STEPS)) help-lint
