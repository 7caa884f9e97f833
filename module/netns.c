// SPDX-License-Identifier: GPL-2.0
/*
 * Per-network-namespace state: net.rcvfix.enable (a sysctl in every
 * namespace, 0 or 1), the default_enable module parameter new namespaces
 * start from, and the counters, with their lines of /proc/net/rcvfix
 * (status.c owns the file).
 *
 * Who may switch: the switch is per namespace, but what turning it on arms
 * is host-wide (kernel text is patched, RCU-tasks grace periods interrupt
 * every CPU, and a hooked function is held against other IP-modifying
 * ftrace users). So turning the fix on needs CAP_NET_ADMIN in the initial
 * user namespace: root of a user namespace (a rootless container, a pod
 * with hostUsers: false) gets -EPERM, and the host's administrator can
 * still enable that container's namespace from the host (nsenter --net,
 * ip netns exec). Turning it off only gives the host-wide power back:
 * CAP_NET_ADMIN over the namespace is enough.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysctl.h>

#include "arm.h"
#include "netns.h"
#include "status_keys.h"

unsigned int rcvfix_net_id __read_mostly;

/*
 * Set once register_pernet_subsys() has given every namespace its state,
 * and never cleared: from then on a namespace's slot is NULL or its state
 * (see rcvfix_net()), and a namespace made later never fails to arm.
 */
bool rcvfix_netns_ready __read_mostly;

/* ---- default_enable: module parameter, 0 or 1 ---- */

static int rcvfix_default_enable;

static int rcvfix_param_set_switch(const char *val,
				   const struct kernel_param *kp)
{
	int v;

	if (kstrtoint(val, 10, &v) || (v != 0 && v != 1))
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops rcvfix_param_switch_ops = {
	.set = rcvfix_param_set_switch,
	.get = param_get_int,
};

module_param_cb(default_enable, &rcvfix_param_switch_ops,
		&rcvfix_default_enable, 0644);
MODULE_PARM_DESC(default_enable,
		 "net.rcvfix.enable of every namespace at load and of new ones: 0 (default) or 1");

/* ---- net.rcvfix.enable ---- */

/*
 * Turn the fix on or off in the namespace whose state is @rn: the first
 * namespace to turn it on arms the hooks, the last to turn it off has
 * them disarmed after a hold-off (arm.c explains the order). Writers of
 * one namespace are serialised by its switch_lock; other namespaces do
 * not wait for it.
 * Fails, with the switch unchanged, when the hooks cannot be armed.
 */
static int rcvfix_net_switch(struct rcvfix_net *rn, int val)
{
	int ret = 0;

	mutex_lock(&rn->switch_lock);
	if (rn->enable == val)
		goto out;
	if (val) {
		ret = rcvfix_arm_get();
		if (ret)
			goto out;
	}
	WRITE_ONCE(rn->enable, val);
	if (!val)
		rcvfix_arm_put();
out:
	mutex_unlock(&rn->switch_lock);
	return ret;
}

/* May the current task write @val to the switch of @net? See the top. */
static bool rcvfix_may_switch(const struct net *net, int val)
{
	if (val)
		return capable(CAP_NET_ADMIN);
	return ns_capable(net->user_ns, CAP_NET_ADMIN);
}

/*
 * Strict: exactly "0" or "1", optionally surrounded by white space, at
 * file position 0. Everything else is -EINVAL and changes nothing; a
 * writer without the privilege rcvfix_may_switch() asks for gets -EPERM,
 * also for a write that would change nothing. Turning the fix on fails
 * with the error of arming it (-EBUSY: another IP-modifying ftrace user
 * owns a hooked function), the value stays 0.
 */
static int rcvfix_sysctl_enable(rcvfix_ctl_table_arg *table, int write,
				void *buffer, size_t *lenp, loff_t *ppos)
{
	struct net *net = table->extra1;
	int *enable = table->data;
	char text[16];
	int val, ret;

	if (!write) {
		struct ctl_table tmp = {
			.data = &val,
			.maxlen = sizeof(val),
			.mode = table->mode,
		};

		val = READ_ONCE(*enable);
		return proc_dointvec(&tmp, write, buffer, lenp, ppos);
	}

	if (!ns_capable(net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	if (*ppos || !*lenp || *lenp >= sizeof(text))
		return -EINVAL;
	memcpy(text, buffer, *lenp);
	text[*lenp] = '\0';
	if (strlen(text) != *lenp)	/* an embedded NUL: "1\0junk" */
		return -EINVAL;
	if (kstrtoint(strim(text), 10, &val) || (val != 0 && val != 1))
		return -EINVAL;
	if (!rcvfix_may_switch(net, val))
		return -EPERM;

	ret = rcvfix_net_switch(container_of(enable, struct rcvfix_net,
					     enable), val);
	if (ret)
		return ret;
	*ppos += *lenp;
	return 0;
}

static const struct ctl_table rcvfix_sysctl_template[] = {
	{
		.procname = "enable",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = rcvfix_sysctl_enable,
	},
	RCVFIX_CTL_TABLE_END
};

/* ---- this namespace's lines of /proc/net/rcvfix (status.c) ---- */

static const char *const rcvfix_path_names[RCVFIX_PATH_NR] = {
	[RCVFIX_PATH_SETSOCKOPT] = "setsockopt",
	[RCVFIX_PATH_BPF] = "bpf",
	[RCVFIX_PATH_KERNEL] = "kernel",
};

/* "enable" and the counters of each path, of the namespace @net. */
void rcvfix_netns_show(struct seq_file *m, const struct net *net)
{
	struct rcvfix_net *rn = net_generic(net, rcvfix_net_id);
	enum rcvfix_path path;

	seq_printf(m, RCVFIX_KEY_ENABLE " %d\n", READ_ONCE(rn->enable));
	seq_printf(m, RCVFIX_KEY_LOWAT_ADDED " %ld\n",
		   atomic_long_read(&rn->lowat_added));
	seq_printf(m, RCVFIX_KEY_LOWAT_HELD " %ld\n",
		   atomic_long_read(&rn->lowat_held));
	seq_printf(m, RCVFIX_KEY_LOWAT_WINDOW " %ld\n",
		   atomic_long_read(&rn->lowat_window));
	for (path = 0; path < RCVFIX_PATH_NR; path++) {
		const char *name = rcvfix_path_names[path];
		long set = atomic_long_read(&rn->count[path][RCVFIX_LOCK_SET]);
		long avoided =
			atomic_long_read(&rn->count[path][RCVFIX_LOCK_AVOIDED]);
		long kept = atomic_long_read(&rn->count[path][RCVFIX_LOCK_KEPT]);

		seq_printf(m, "%s." RCVFIX_KEY_SETS " %ld\n", name, set + avoided + kept);
		seq_printf(m, "%s." RCVFIX_KEY_LOCKS_SET " %ld\n", name, set);
		seq_printf(m, "%s." RCVFIX_KEY_LOCKS_AVOIDED " %ld\n", name, avoided);
		seq_printf(m, "%s." RCVFIX_KEY_LOCKS_KEPT " %ld\n", name, kept);
	}
}

/* ---- namespace life cycle ---- */

/*
 * With default_enable=1 a namespace starts enabled, which arms the hooks
 * for the first one. If they cannot be armed, the module load fails (the
 * operator asked for the fix at load); a namespace created later starts
 * with the fix off instead, rather than failing to be created.
 */
static int rcvfix_net_start(struct rcvfix_net *rn)
{
	int ret;

	mutex_init(&rn->switch_lock);
	if (!READ_ONCE(rcvfix_default_enable))
		return 0;
	ret = rcvfix_arm_get();
	if (ret)
		return READ_ONCE(rcvfix_netns_ready) ? 0 : ret;
	WRITE_ONCE(rn->enable, 1);
	return 0;
}

/*
 * The namespace's switch goes with it. The last enabled one has the hooks
 * disarmed a little later, not here: namespace teardown must not wait
 * for ftrace (arm.c).
 */
static void rcvfix_net_stop(struct rcvfix_net *rn)
{
	if (rn->enable) {
		WRITE_ONCE(rn->enable, 0);
		rcvfix_arm_put_deferred();
	}
	mutex_destroy(&rn->switch_lock);
}

static int __net_init rcvfix_net_init(struct net *net)
{
	struct rcvfix_net *rn = net_generic(net, rcvfix_net_id);
	int ret;

	ret = rcvfix_net_start(rn);
	if (ret)
		return ret;

	rn->table = kmemdup(rcvfix_sysctl_template,
			    sizeof(rcvfix_sysctl_template), GFP_KERNEL);
	if (!rn->table)
		goto err_stop;
	rn->table[0].data = &rn->enable;
	rn->table[0].extra1 = net;

	rn->sysctl = rcvfix_register_net_sysctl(net, "net/rcvfix", rn->table,
						1);
	if (!rn->sysctl)
		goto err_free_table;

	return 0;

err_free_table:
	kfree(rn->table);
err_stop:
	rcvfix_net_stop(rn);
	return -ENOMEM;
}

static void __net_exit rcvfix_net_exit(struct net *net)
{
	struct rcvfix_net *rn = net_generic(net, rcvfix_net_id);

	unregister_net_sysctl_table(rn->sysctl);	/* waits for writers */
	kfree(rn->table);
	rcvfix_net_stop(rn);
}

static struct pernet_operations rcvfix_net_ops = {
	.init = rcvfix_net_init,
	.exit = rcvfix_net_exit,
	.id = &rcvfix_net_id,
	.size = sizeof(struct rcvfix_net),
};

/* Creates the state, sysctl and proc file in every namespace, now and later. */
int rcvfix_netns_init(void)
{
	int ret;

	ret = register_pernet_subsys(&rcvfix_net_ops);
	if (ret)
		return ret;
	/* every slot is set: pairs with the acquire in rcvfix_net() */
	smp_store_release(&rcvfix_netns_ready, true);
	return 0;
}

void rcvfix_netns_exit(void)
{
	unregister_pernet_subsys(&rcvfix_net_ops);
}
