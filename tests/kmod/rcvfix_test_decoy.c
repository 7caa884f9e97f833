// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_decoy: test-only module with a traceable function named
 * sock_set_rcvbuf.constprop.0, as a compiler names a copy of
 * sock_set_rcvbuf() it made for some callers. rcvfix cannot promise the
 * rule where callers may reach such a copy past its hook: loaded after
 * this module, it must refuse to load and name the function (test 81).
 */
#include <linux/compiler.h>
#include <linux/module.h>

/* The decoy: a plain function, kept out of line and traced like any. */
#define RCVFIX_TEST_DECOY_NAME "sock_set_rcvbuf.constprop.0"
#define RCVFIX_TEST_DECOY_LABEL __asm__(RCVFIX_TEST_DECOY_NAME)
noinline int rcvfix_test_decoy(int val) RCVFIX_TEST_DECOY_LABEL;
noinline int rcvfix_test_decoy(int val)
{
	barrier();
	return val;
}

static int __init rcvfix_test_decoy_init(void)
{
	return rcvfix_test_decoy(0);
}

static void __exit rcvfix_test_decoy_exit(void)
{
}

module_init(rcvfix_test_decoy_init);
module_exit(rcvfix_test_decoy_exit);
MODULE_DESCRIPTION("rcvfix test: a look-alike compiler copy of sock_set_rcvbuf");
MODULE_LICENSE("GPL");
