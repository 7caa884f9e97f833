// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_direct: test-only module that provides a function named
 * __sock_set_rcvbuf, a copy of the stock one, so that rcvfix loaded after
 * it finds that symbol and uses its "direct" strategy on it. No kernel
 * the project supports has __sock_set_rcvbuf as a symbol of its own; this
 * is how the tests exercise that strategy. Writing "[lock] VAL" to
 * /proc/rcvfix_test_direct calls it on a fresh kernel TCP socket in the
 * writer's namespace; reading prints "val=VAL rcvbuf=N lock=BITS".
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/sock.h>

/* Found by name through kallsyms; the stock body, always locking. */
noinline void __sock_set_rcvbuf(struct sock *sk, int val);
noinline void __sock_set_rcvbuf(struct sock *sk, int val)
{
	val = min_t(int, val, INT_MAX / 2);
	sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	WRITE_ONCE(sk->sk_rcvbuf, max_t(int, val * 2, SOCK_MIN_RCVBUF));
}

static DEFINE_MUTEX(direct_lock);
static char direct_result[96] = "none\n";

static int direct_run(struct net *net, int val, bool prelock)
{
	struct socket *sock;
	struct sock *sk;
	int err;

	err = sock_create_kern(net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		return err;
	sk = sock->sk;
	lock_sock(sk);
	if (prelock)
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	__sock_set_rcvbuf(sk, val);
	snprintf(direct_result, sizeof(direct_result),
		 "val=%d rcvbuf=%d lock=%u\n", val, READ_ONCE(sk->sk_rcvbuf),
		 sk->sk_userlocks & (SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK));
	release_sock(sk);
	sock_release(sock);
	return 0;
}

static ssize_t direct_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[32], *p;
	bool prelock = false;
	int val, err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	p = strim(buf);
	if (!strncmp(p, "lock ", 5)) {
		prelock = true;
		p += 5;
	}
	if (kstrtoint(p, 0, &val))
		return -EINVAL;

	mutex_lock(&direct_lock);
	err = direct_run(current->nsproxy->net_ns, val, prelock);
	mutex_unlock(&direct_lock);
	return err ? err : len;
}

static int direct_show(struct seq_file *m, void *v)
{
	mutex_lock(&direct_lock);
	seq_puts(m, direct_result);
	mutex_unlock(&direct_lock);
	return 0;
}

static int direct_open(struct inode *inode, struct file *file)
{
	return single_open(file, direct_show, NULL);
}

static const struct proc_ops direct_proc_ops = {
	.proc_open = direct_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = direct_write,
};

static int __init direct_init(void)
{
	if (!proc_create("rcvfix_test_direct", 0600, NULL, &direct_proc_ops))
		return -ENOMEM;
	return 0;
}

static void __exit direct_exit(void)
{
	remove_proc_entry("rcvfix_test_direct", NULL);
}

module_init(direct_init);
module_exit(direct_exit);
MODULE_DESCRIPTION("rcvfix test: a __sock_set_rcvbuf for the direct strategy");
MODULE_LICENSE("GPL");
