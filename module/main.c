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

#include "arm.h"
#include "btf_layout.h"
#include "netns.h"
#include "rcvlowat.h"
#include "status.h"
#include "targets.h"
#include "version.h"

/*
 * Load: resolve the strategy's hooks first (a missing function refuses the
 * load) and hand them to the arming unit, then give every namespace its
 * switch (that arms the hooks only where default_enable=1 turns a
 * namespace on) and its /proc/net/rcvfix. Unload: disarm for good and wait
 * for every task to leave rcvfix's code, then remove the status files and
 * the namespaces' state (which the replacements read).
 */
static int __init rcvfix_init(void)
{
	struct rcvfix_hook *const *hooks;
	unsigned int n;
	int ret;

	rcvfix_rcvlowat_detect();

	ret = rcvfix_targets_init();
	/* both readers of the kernel's BTF are done: detect, targets */
	rcvfix_btf_release();
	if (ret)
		return ret;
	hooks = rcvfix_targets_hooks(&n);

	ret = rcvfix_arm_init(hooks, n);
	if (ret) {
		pr_err("cannot follow livepatch modules (%d)\n", ret);
		return ret;
	}

	ret = rcvfix_netns_init();
	if (ret) {
		pr_err("cannot register per-namespace state (%d)\n", ret);
		goto err_arm;
	}

	ret = rcvfix_status_init();
	if (ret) {
		pr_err("cannot create /proc/net/rcvfix (%d)\n", ret);
		goto err_netns;
	}

	pr_info("%s loaded: strategy callers (%s), armed while a namespace enables it%s, SO_RCVLOWAT wakeup fix %s, signature %s\n",
		RCVFIX_VERSION, rcvfix_targets_names(),
		rcvfix_arm_has_demand_hooks() ?
		" (MPTCP's receive path on demand: once a socket there sets SO_RCVLOWAT)" : "",
		rcvfix_rcvlowat_state(), rcvfix_status_signature());
	return 0;

err_netns:
	rcvfix_arm_close();
	rcvfix_netns_exit();
	rcvfix_arm_exit();
	return ret;
err_arm:
	rcvfix_arm_close();
	rcvfix_arm_exit();
	return ret;
}

static void __exit rcvfix_exit(void)
{
	rcvfix_arm_close();
	rcvfix_status_exit();
	rcvfix_netns_exit();
	rcvfix_arm_exit();
	pr_info("unloaded\n");
}

module_init(rcvfix_init);
module_exit(rcvfix_exit);

MODULE_DESCRIPTION("Fix TCP SO_RCVBUF locking per network namespace; reports the native SO_RCVLOWAT wakeup");
MODULE_AUTHOR("rcvfix developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RCVFIX_VERSION);
