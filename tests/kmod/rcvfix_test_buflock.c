// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_buflock: test-only module that shows a socket's buffer locks
 * on kernels without getsockopt(SO_BUF_LOCK) (before 5.15). A process
 * writes the number of one of its socket descriptors to
 * /proc/rcvfix_test_buflock, then reads the same open file: it gets the
 * socket's sk_userlocks & (SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK), the value
 * SO_BUF_LOCK reports (2 = receive buffer locked). The descriptor is looked
 * up in the writer's own file table (the write runs in its context). Used
 * by sock_buf_lock() in tests/progs/common.h; tests/guest/lib.sh loads it.
 * Root only (mode 0600), as the test programs run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/proc_fs.h>
#include <linux/uaccess.h>
#include <net/sock.h>

/* private_data of an open file: the locks read last, plus this flag. */
#define BUFLOCK_VALID 0x100UL

static ssize_t buflock_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct socket *sock;
	unsigned int locks;
	char buf[16];
	int fd, err;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	err = kstrtoint(strim(buf), 10, &fd);
	if (err)
		return err;

	sock = sockfd_lookup(fd, &err);
	if (!sock)
		return err;
	locks = sock->sk->sk_userlocks &
		(SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK);
	sockfd_put(sock);
	file->private_data = (void *)(BUFLOCK_VALID | locks);
	return count;
}

static ssize_t buflock_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	unsigned long v = (unsigned long)file->private_data;
	char buf[16];
	int n;

	if (!(v & BUFLOCK_VALID))
		return -ENODATA;
	n = scnprintf(buf, sizeof(buf), "%lu\n", v & ~BUFLOCK_VALID);
	return simple_read_from_buffer(ubuf, count, ppos, buf, n);
}

static const struct proc_ops buflock_ops = {
	.proc_read = buflock_read,
	.proc_write = buflock_write,
	.proc_lseek = default_llseek,
};

static struct proc_dir_entry *buflock_entry;

static int __init buflock_init(void)
{
	buflock_entry = proc_create("rcvfix_test_buflock", 0600, NULL,
				    &buflock_ops);
	return buflock_entry ? 0 : -ENOMEM;
}

static void __exit buflock_exit(void)
{
	proc_remove(buflock_entry);
}

module_init(buflock_init);
module_exit(buflock_exit);
MODULE_DESCRIPTION("rcvfix test helper: a socket's buffer locks before SO_BUF_LOCK");
MODULE_AUTHOR("rcvfix developers");
MODULE_LICENSE("GPL");
