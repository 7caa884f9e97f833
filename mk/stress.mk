# SPDX-License-Identifier: GPL-2.0
#
# The stress and fault suite: builds tests/stress/ with the other test
# programs (so `make check` runs tests/guest/82-89*.t in their short form),
# and `make stress` runs the long form of the reliability tests (80-89) on
# every kernel of KVERS and its PREEMPT_RT flavour, with slab poisoning.

# Tests of the long run, and how long a guest and a script may take.
STRESS_TESTS ?= 80 81 82 83 84 85 86 87 88 89
# rcvfix_stress=long reaches the test scripts as an environment variable
# (the kernel hands unknown name=value parameters to init); slub_debug
# poisons freed objects and red-zones live ones, KFENCE (6.12) samples.
STRESS_APPEND ?= rcvfix_stress=long slub_debug=FZP kfence.sample_interval=100
STRESS_TEST_TIMEOUT ?= 2400
STRESS_GUEST_TIMEOUT ?= 10800

# RCVFIX_STRESS=long make check: the long form of 82-89 within a normal run.
ifneq ($(RCVFIX_STRESS),)
export RCVFIX_APPEND := $(strip $(RCVFIX_APPEND) rcvfix_stress=$(RCVFIX_STRESS))
endif

stress-progs: | deps-build
	$(MAKE) -C tests/stress OUT=$(BIN)

progs: stress-progs

stress:
	@$(MAKE) --no-print-directory check KVERS="$(KVERS) $(KVERS_RT)" \
		TESTS="$(STRESS_TESTS)" \
		RCVFIX_APPEND="$(strip $(filter-out rcvfix_stress=%,$(RCVFIX_APPEND)) $(STRESS_APPEND))" \
		RCVFIX_TEST_TIMEOUT=$(STRESS_TEST_TIMEOUT) \
		RCVFIX_GUEST_TIMEOUT=$(STRESS_GUEST_TIMEOUT)

help-stress:
	@echo "make stress             long reliability suite (tests $(STRESS_TESTS)) on:"
	@echo "                        $(KVERS) $(KVERS_RT)"
	@echo "                        (RCVFIX_STRESS=long make check: long form in a normal run)"

.PHONY: stress-progs stress help-stress
