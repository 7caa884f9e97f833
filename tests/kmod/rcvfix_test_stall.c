// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_stall: test-only module that keeps a task asleep inside
 * sock_set_keepalive() from its load to its unload, so that a livepatch of
 * that function cannot end its transition meanwhile (test 51: an atomic
 * replace whose transition outlives the new livepatch's live event, with
 * the replaced livepatch's handlers still in place). One kernel thread
 * owns a kernel TCP socket's lock; another calls sock_set_keepalive() on
 * that socket and sleeps in its lock_sock() until the unload lets the
 * first one release it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/sched.h>
#include <net/net_namespace.h>
#include <net/sock.h>

static struct socket *stall_sock;
static struct task_struct *stall_holder, *stall_sleeper;
static DECLARE_COMPLETION(stall_held);
static DECLARE_COMPLETION(stall_release);

/* Until kthread_stop(): a thread function must not return before it. */
static void stall_wait_stop(void)
{
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

static int stall_holder_fn(void *data)
{
	struct sock *sk = stall_sock->sk;

	lock_sock(sk);
	complete(&stall_held);
	wait_for_completion(&stall_release);
	release_sock(sk);
	stall_wait_stop();
	return 0;
}

static int stall_sleeper_fn(void *data)
{
	wait_for_completion(&stall_held);
	sock_set_keepalive(stall_sock->sk);	/* sleeps in lock_sock() */
	stall_wait_stop();
	return 0;
}

static int __init stall_init(void)
{
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP,
			       &stall_sock);
	if (err)
		return err;
	stall_holder = kthread_run(stall_holder_fn, NULL, "rcvfix_stall_hold");
	if (IS_ERR(stall_holder)) {
		err = PTR_ERR(stall_holder);
		goto err_sock;
	}
	stall_sleeper = kthread_run(stall_sleeper_fn, NULL, "rcvfix_stall");
	if (IS_ERR(stall_sleeper)) {
		err = PTR_ERR(stall_sleeper);
		goto err_holder;
	}
	return 0;

err_holder:
	complete(&stall_release);
	kthread_stop(stall_holder);
err_sock:
	sock_release(stall_sock);
	return err;
}

static void __exit stall_exit(void)
{
	complete(&stall_release);
	kthread_stop(stall_sleeper);	/* once it has the lock */
	kthread_stop(stall_holder);
	sock_release(stall_sock);
}

module_init(stall_init);
module_exit(stall_exit);
MODULE_DESCRIPTION("rcvfix test: a task asleep in sock_set_keepalive() while loaded");
MODULE_AUTHOR("rcvfix developers");
MODULE_LICENSE("GPL");
