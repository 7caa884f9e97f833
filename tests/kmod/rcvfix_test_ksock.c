// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_ksock: test-only module for the in-kernel sock_set_rcvbuf()
 * path. Writing "[lock] VAL" to /proc/rcvfix_test_ksock creates a kernel TCP
 * socket in the writer's network namespace, optionally locks its receive
 * buffer first, calls sock_set_rcvbuf(sk, VAL), and records the result;
 * reading the file prints "val=VAL rcvbuf=<sk_rcvbuf> lock=<sk_userlocks>"
 * (lock bits as SO_BUF_LOCK reports them: 2 = receive buffer locked).
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/sock.h>

static DEFINE_MUTEX(ksock_lock);
static char ksock_result[96] = "none\n";

/* Run one sock_set_rcvbuf() on a fresh kernel socket in @net. */
static int ksock_run(struct net *net, int val, bool prelock)
{
	struct socket *sock;
	struct sock *sk;
	int err;

	err = sock_create_kern(net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		return err;
	sk = sock->sk;
	if (prelock) {
		lock_sock(sk);
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
		release_sock(sk);
	}
	sock_set_rcvbuf(sk, val);
	lock_sock(sk);
	snprintf(ksock_result, sizeof(ksock_result),
		 "val=%d rcvbuf=%d lock=%u\n", val, READ_ONCE(sk->sk_rcvbuf),
		 sk->sk_userlocks & (SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK));
	release_sock(sk);
	sock_release(sock);
	return 0;
}

static ssize_t ksock_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	char buf[32], *p;
	bool prelock = false;
	int val, err;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	p = strim(buf);
	if (!strncmp(p, "lock ", 5)) {
		prelock = true;
		p = skip_spaces(p + 5);
	}
	err = kstrtoint(p, 0, &val);
	if (err)
		return err;

	mutex_lock(&ksock_lock);
	err = ksock_run(current->nsproxy->net_ns, val, prelock);
	mutex_unlock(&ksock_lock);
	return err ? err : count;
}

static int ksock_show(struct seq_file *m, void *v)
{
	mutex_lock(&ksock_lock);
	seq_puts(m, ksock_result);
	mutex_unlock(&ksock_lock);
	return 0;
}

static int ksock_open(struct inode *inode, struct file *file)
{
	return single_open(file, ksock_show, NULL);
}

static const struct proc_ops ksock_proc_ops = {
	.proc_open = ksock_open,
	.proc_read = seq_read,
	.proc_write = ksock_write,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

static struct proc_dir_entry *ksock_entry;

static int __init ksock_init(void)
{
	ksock_entry = proc_create("rcvfix_test_ksock", 0600, NULL,
				  &ksock_proc_ops);
	return ksock_entry ? 0 : -ENOMEM;
}

static void __exit ksock_exit(void)
{
	proc_remove(ksock_entry);
}

module_init(ksock_init);
module_exit(ksock_exit);
MODULE_DESCRIPTION("rcvfix test helper: sock_set_rcvbuf() on a kernel socket");
MODULE_AUTHOR("rcvfix developers");
MODULE_LICENSE("GPL");
