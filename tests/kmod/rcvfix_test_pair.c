// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_pair: test-only module that watches whether rcvfix applies
 * its rule on every path that sets a receive buffer or on none, at every
 * moment, while its hooks are armed and disarmed around it (test 51).
 *
 * Writing "start VAL" to /proc/rcvfix_test_pair starts a kernel thread
 * that, over and over, clears the lock of three kernel TCP sockets of the
 * writer's network namespace and sets a receive buffer of VAL on them
 * back to back: sock_set_rcvbuf() (A), setsockopt(SO_RCVBUF) through
 * sock_setsockopt() (B), sock_set_rcvbuf() again (C), then reads their
 * lock bits. "stop" stops it. Reading prints
 *
 *   triples=N rule=N stock=N switched=N half=N
 *
 * rule: none of the three locked (VAL is one whose lock the rule avoids);
 * stock: all three locked; switched: one change between A and C (the fix
 * came into force, or went, between two calls); half: B differs from
 * both A and C, that is setsockopt() and sock_set_rcvbuf() went by
 * different rules at the same moment, which only a half-armed strategy
 * does (two switches within one triple, a few microseconds, cannot happen:
 * each is a transition of ftrace hooks).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/sockptr.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "rcvfix_test_procfile.h"

static DEFINE_MUTEX(pair_lock);		/* start, stop and reads */
static struct task_struct *pair_thread;
static struct socket *pair_sock[3];
static struct net *pair_net;
static int pair_val;
static unsigned long pair_triples, pair_rule, pair_stock, pair_switched,
		     pair_half;
static struct proc_dir_entry *pair_entry;

/* @sk's receive buffer lock, cleared first; then one path sets @val. */
static bool pair_set(struct socket *sock, bool setsockopt)
{
	struct sock *sk = sock->sk;
	int val = pair_val;
	bool locked;

	lock_sock(sk);
	sk->sk_userlocks &= ~SOCK_RCVBUF_LOCK;
	release_sock(sk);
	if (setsockopt)
		sock_setsockopt(sock, SOL_SOCKET, SO_RCVBUF,
				KERNEL_SOCKPTR(&val), sizeof(val));
	else
		sock_set_rcvbuf(sk, val);
	lock_sock(sk);
	locked = sk->sk_userlocks & SOCK_RCVBUF_LOCK;
	release_sock(sk);
	return locked;
}

static int pair_fn(void *data)
{
	bool a, b, c;

	while (!kthread_should_stop()) {
		a = pair_set(pair_sock[0], false);
		b = pair_set(pair_sock[1], true);
		c = pair_set(pair_sock[2], false);
		if (a == b && b == c && a)
			WRITE_ONCE(pair_stock, pair_stock + 1);
		else if (a == b && b == c)
			WRITE_ONCE(pair_rule, pair_rule + 1);
		else if (a != b && b != c)
			WRITE_ONCE(pair_half, pair_half + 1);
		else
			WRITE_ONCE(pair_switched, pair_switched + 1);
		WRITE_ONCE(pair_triples, pair_triples + 1);
		/* sleep: livepatch transitions need this task off the CPU */
		usleep_range(1000, 2000);
	}
	return 0;
}

/* Under pair_lock. */
static void pair_stop(void)
{
	int i;

	if (!pair_thread)
		return;
	kthread_stop(pair_thread);
	pair_thread = NULL;
	for (i = 0; i < ARRAY_SIZE(pair_sock); i++) {
		sock_release(pair_sock[i]);
		pair_sock[i] = NULL;
	}
	put_net(pair_net);
	pair_net = NULL;
}

/* Under pair_lock. Kernel sockets hold no reference on their namespace. */
static int pair_start(int val)
{
	struct task_struct *t;
	int i, err;

	if (pair_thread)
		return -EBUSY;
	pair_net = get_net(current->nsproxy->net_ns);
	for (i = 0; i < ARRAY_SIZE(pair_sock); i++) {
		err = sock_create_kern(pair_net, AF_INET, SOCK_STREAM,
				       IPPROTO_TCP, &pair_sock[i]);
		if (err)
			goto err_release;
	}
	pair_val = val;
	pair_triples = 0;
	pair_rule = 0;
	pair_stock = 0;
	pair_switched = 0;
	pair_half = 0;
	t = kthread_run(pair_fn, NULL, "rcvfix_test_pair");
	if (IS_ERR(t)) {
		err = PTR_ERR(t);
		goto err_release;
	}
	pair_thread = t;
	return 0;

err_release:
	while (i-- > 0) {
		sock_release(pair_sock[i]);
		pair_sock[i] = NULL;
	}
	put_net(pair_net);
	pair_net = NULL;
	return err;
}

static ssize_t pair_write(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	char buf[32], *p;
	int val, err;

	p = rcvfix_test_proc_line(buf, sizeof(buf), ubuf, count);
	if (IS_ERR(p))
		return PTR_ERR(p);
	mutex_lock(&pair_lock);
	if (!strcmp(p, "stop")) {
		pair_stop();
		err = 0;
	} else if (!strncmp(p, "start ", 6)) {
		err = kstrtoint(skip_spaces(p + 6), 0, &val);
		if (!err)
			err = pair_start(val);
	} else {
		err = -EINVAL;
	}
	mutex_unlock(&pair_lock);
	return err ? err : count;
}

static int pair_show(struct seq_file *m, void *v)
{
	seq_printf(m, "triples=%lu rule=%lu stock=%lu switched=%lu half=%lu\n",
		   READ_ONCE(pair_triples), READ_ONCE(pair_rule),
		   READ_ONCE(pair_stock), READ_ONCE(pair_switched),
		   READ_ONCE(pair_half));
	return 0;
}

RCVFIX_TEST_PROC_OPS(pair);

static int __init pair_init(void)
{
	pair_entry = proc_create("rcvfix_test_pair", 0600, NULL,
				 &pair_proc_ops);
	return pair_entry ? 0 : -ENOMEM;
}

static void __exit pair_exit(void)
{
	proc_remove(pair_entry);
	mutex_lock(&pair_lock);
	pair_stop();
	mutex_unlock(&pair_lock);
}

module_init(pair_init);
module_exit(pair_exit);
MODULE_DESCRIPTION("rcvfix test: setsockopt() and sock_set_rcvbuf() go by one rule at every moment");
MODULE_AUTHOR("rcvfix developers");
MODULE_LICENSE("GPL");
