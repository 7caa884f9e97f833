/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The /proc file of the rcvfix test modules that call a receive-buffer
 * setter on a fresh kernel TCP socket (rcvfix_test_ksock, rcvfix_test_direct).
 * Writing "[full] [lock] VAL" creates the socket in the writer's network
 * namespace, sets SOCK_RCVBUF_LOCK first with "lock", and calls the module's
 * test_proc_call(sk, VAL, prelock); reading prints the result of the last
 * write, "val=VAL rcvbuf=<sk_rcvbuf> lock=<sk_userlocks>" (lock bits as
 * SO_BUF_LOCK reports them: 2 = receive buffer locked), or "none"; "full"
 * adds " sndbuf=.. window_clamp=.. rcv_ssthresh=.." (the stock-diff test).
 * Included by one .c file per module: its state is the module's own.
 */
#ifndef RCVFIX_TEST_PROC_H
#define RCVFIX_TEST_PROC_H

#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "rcvfix_test_procfile.h"

/* Defined by the module: the call under test on @sk, not locked. */
static void test_proc_call(struct sock *sk, int val, bool prelock);

static DEFINE_MUTEX(test_proc_lock);
static char test_proc_result[160] = "none\n";
static struct proc_dir_entry *test_proc_entry;

/* One test_proc_call() on a fresh kernel socket in @net. */
static int test_proc_run(struct net *net, int val, bool prelock, bool full)
{
	struct socket *sock;
	struct sock *sk;
	int err, n;

	err = sock_create_kern(net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		return err;
	sk = sock->sk;
	test_proc_call(sk, val, prelock);
	lock_sock(sk);
	n = snprintf(test_proc_result, sizeof(test_proc_result),
		     "val=%d rcvbuf=%d lock=%u", val, READ_ONCE(sk->sk_rcvbuf),
		     sk->sk_userlocks & (SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK));
	if (full)
		n += snprintf(test_proc_result + n,
			      sizeof(test_proc_result) - n,
			      " sndbuf=%d window_clamp=%u rcv_ssthresh=%u",
			      READ_ONCE(sk->sk_sndbuf),
			      READ_ONCE(tcp_sk(sk)->window_clamp),
			      READ_ONCE(tcp_sk(sk)->rcv_ssthresh));
	snprintf(test_proc_result + n, sizeof(test_proc_result) - n, "\n");
	release_sock(sk);
	sock_release(sock);
	return 0;
}

static ssize_t test_proc_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char buf[32], *p;
	bool prelock = false, full = false;
	int val, err;

	p = rcvfix_test_proc_line(buf, sizeof(buf), ubuf, count);
	if (IS_ERR(p))
		return PTR_ERR(p);
	if (!strncmp(p, "full ", 5)) {
		full = true;
		p = skip_spaces(p + 5);
	}
	if (!strncmp(p, "lock ", 5)) {
		prelock = true;
		p = skip_spaces(p + 5);
	}
	err = kstrtoint(p, 0, &val);
	if (err)
		return err;

	mutex_lock(&test_proc_lock);
	err = test_proc_run(current->nsproxy->net_ns, val, prelock,
			    full);
	mutex_unlock(&test_proc_lock);
	return err ? err : count;
}

static int test_proc_show(struct seq_file *m, void *v)
{
	mutex_lock(&test_proc_lock);
	seq_puts(m, test_proc_result);
	mutex_unlock(&test_proc_lock);
	return 0;
}

RCVFIX_TEST_PROC_OPS(test_proc);

/* /proc/@name, mode 0600; for the module's init. */
static int __init test_proc_create(const char *name)
{
	test_proc_entry = proc_create(name, 0600, NULL, &test_proc_proc_ops);
	return test_proc_entry ? 0 : -ENOMEM;
}

/* For the module's exit. */
static void __exit test_proc_remove(void)
{
	proc_remove(test_proc_entry);
}

#endif /* RCVFIX_TEST_PROC_H */
