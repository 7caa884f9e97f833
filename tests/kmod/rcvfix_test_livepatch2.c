// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_livepatch2: rcvfix_test_livepatch under a name of its own,
 * so that two livepatches can be loaded at once (test 51: an atomic
 * replace of the first by the second).
 */
#include "rcvfix_test_livepatch.c"
