// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix: fixes a TCP receive-side behaviour on a running kernel, switchable
 * per network namespace with net.rcvfix.enable, and reports another:
 *  - setsockopt(SO_RCVBUF) on TCP and MPTCP sockets locks the buffer only
 *    when it shrinks it below net.ipv4.tcp_rmem[1] (rcvbuf.c, rule.h),
 *    and MPTCP subflows follow their socket's lock (mptcp.c);
 *  - SO_RCVLOWAT readers are not woken per packet: native in every kernel
 *    rcvfix supports, only detected and reported (rcvlowat.c).
 * This file holds only the order of module load and unload.
 *
 *   # sysctl net.ipv4.tcp_rmem        -> 4096 131072 6291456
 *   # python3 -c '...setsockopt(SOL_SOCKET, SO_RCVBUF, 65536)...'
 *     stock:  SO_RCVBUF 131072, SO_BUF_LOCK 2 (locked: no autotuning)
 *   # modprobe rcvfix && sysctl net.rcvfix.enable=1
 *     fixed:  SO_RCVBUF 131072, SO_BUF_LOCK 0 (autotunes up to 6291456)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "netns.h"
#include "rcvbuf.h"
#include "rcvlowat.h"
#include "version.h"

static int __init rcvfix_init(void)
{
	int ret;

	rcvfix_rcvlowat_detect();

	ret = rcvfix_netns_init();
	if (ret) {
		pr_err("cannot register per-namespace state (%d)\n", ret);
		return ret;
	}

	ret = rcvfix_rcvbuf_init();
	if (ret)
		goto err_netns;

	pr_info("%s loaded: strategy %s (%s), SO_RCVLOWAT wakeup fix %s\n",
		RCVFIX_VERSION, rcvfix_rcvbuf_strategy(),
		rcvfix_rcvbuf_targets(), rcvfix_rcvlowat_state());
	return 0;

err_netns:
	rcvfix_netns_exit();
	return ret;
}

static void __exit rcvfix_exit(void)
{
	rcvfix_rcvbuf_exit();
	rcvfix_netns_exit();
	pr_info("unloaded\n");
}

module_init(rcvfix_init);
module_exit(rcvfix_exit);

MODULE_DESCRIPTION("Fix TCP SO_RCVBUF locking per network namespace; reports the native SO_RCVLOWAT wakeup");
MODULE_AUTHOR("rcvfix developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RCVFIX_VERSION);
