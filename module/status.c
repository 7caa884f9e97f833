// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/rcvfix, in every network namespace: one "key value" per line.
 * This file owns the file and the order of its lines; each unit prints its
 * own keys: the version, the build's srcversion and the module's signature
 * here, the strategy's targets (rcvbuf.c), arming and livepatches (arm.c),
 * the kernel's SO_RCVLOWAT behaviour (rcvlowat.c), then the namespace's
 * switch and counters (netns.c).
 *
 * The module-wide keys describe the host: shown in the initial namespace,
 * and elsewhere to a reader who opened the file with CAP_NET_ADMIN in the
 * initial user namespace. A container sees the version and srcversion, its
 * own switch and its own counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "arm.h"
#include "netns.h"
#include "rcvlowat.h"
#include "status.h"
#include "status_keys.h"
#include "targets.h"
#include "version.h"

static bool rcvfix_status_shows_host(struct seq_file *m, const struct net *net)
{
	return net_eq(net, &init_net) ||
	       file_ns_capable(m->file, &init_user_ns, CAP_NET_ADMIN);
}

/*
 * What the kernel found when it loaded rcvfix: a signature it verified
 * against a trusted key (builtin, secondary, machine or, on Debian, the
 * platform keyring of UEFI db/MOK), or none it could verify (then it set
 * taint E, or refused the load where signatures are enforced).
 */
const char *rcvfix_status_signature(void)
{
	if (!IS_ENABLED(CONFIG_MODULE_SIG))
		return "unchecked";
	return module_sig_ok(THIS_MODULE) ? "verified" : "unverified";
}

/*
 * modpost's checksum of the module's sources, in .modinfo because the
 * module has a MODULE_VERSION(): builds of one version from different
 * sources differ here; the same sources built for another kernel do not
 * (modinfo -F srcversion, /sys/module/rcvfix/srcversion).
 */
static const char *rcvfix_status_srcversion(void)
{
	return THIS_MODULE->srcversion ?: "none";
}

static int rcvfix_status_show(struct seq_file *m, void *v)
{
	struct net *net = seq_file_single_net(m);

	seq_printf(m, RCVFIX_KEY_VERSION " %s\n", RCVFIX_VERSION);
	seq_printf(m, RCVFIX_KEY_SRCVERSION " %s\n", rcvfix_status_srcversion());
	if (rcvfix_status_shows_host(m, net)) {
		seq_printf(m, RCVFIX_KEY_SIGNATURE " %s\n", rcvfix_status_signature());
		seq_printf(m, RCVFIX_KEY_SIG_ENFORCED " %s\n",
			   is_module_sig_enforced() ? "yes" : "no");
		rcvfix_targets_show(m);
		rcvfix_arm_show(m);
		rcvfix_rcvlowat_show(m);
		rcvfix_targets_show_parts(m);
	}
	rcvfix_netns_show(m, net);
	return 0;
}

static int __net_init rcvfix_status_net_init(struct net *net)
{
	if (!proc_create_net_single("rcvfix", 0444, net->proc_net,
				    rcvfix_status_show, NULL))
		return -ENOMEM;
	return 0;
}

static void __net_exit rcvfix_status_net_exit(struct net *net)
{
	remove_proc_entry("rcvfix", net->proc_net);
}

static struct pernet_operations rcvfix_status_net_ops = {
	.init = rcvfix_status_net_init,
	.exit = rcvfix_status_net_exit,
};

/*
 * After rcvfix_netns_init(): a namespace's file appears once its state
 * exists (pernet init methods run in registration order, exit methods in
 * reverse), and goes before it.
 */
int rcvfix_status_init(void)
{
	return register_pernet_subsys(&rcvfix_status_net_ops);
}

void rcvfix_status_exit(void)
{
	unregister_pernet_subsys(&rcvfix_status_net_ops);
}
