/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The /proc file of a test module that takes one command line per write
 * and shows one result: the line copied and trimmed, and the seq_file
 * operations around a module's NAME_show() and NAME_write().
 */
#ifndef RCVFIX_TEST_PROCFILE_H
#define RCVFIX_TEST_PROCFILE_H

#include <linux/err.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/*
 * A write of @count bytes at @ubuf as a trimmed string in @buf of @size
 * bytes, or ERR_PTR(-EINVAL) if it does not fit, ERR_PTR(-EFAULT).
 */
static inline char *rcvfix_test_proc_line(char *buf, size_t size,
					  const char __user *ubuf,
					  size_t count)
{
	if (count >= size)
		return ERR_PTR(-EINVAL);
	if (copy_from_user(buf, ubuf, count))
		return ERR_PTR(-EFAULT);
	buf[count] = '\0';
	return strim(buf);
}

/*
 * Defines NAME_open() and NAME_proc_ops, the operations of a /proc file
 * read with single_open() on NAME_show() and written by NAME_write().
 */
#define RCVFIX_TEST_PROC_OPS(name)					\
static int name##_open(struct inode *inode, struct file *file)		\
{									\
	return single_open(file, name##_show, NULL);			\
}									\
									\
static const struct proc_ops name##_proc_ops = {			\
	.proc_open = name##_open,					\
	.proc_read = seq_read,						\
	.proc_write = name##_write,					\
	.proc_lseek = seq_lseek,					\
	.proc_release = single_release,					\
}

#endif /* RCVFIX_TEST_PROCFILE_H */
