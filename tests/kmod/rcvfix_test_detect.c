// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix_test_detect: test-only module with deliberate bugs, one per bug
 * detector of the debug kernel (vm/debug-kernel.sh), so that `make
 * check-debug` proves each detector reports what it must before it trusts a
 * clean run (vm/check-debug.sh loads it in a guest of its own). Each bug is
 * the kind a socket-path module could make: two locks taken in both orders,
 * a timer on the stack not annotated, a sleeping allocation and a sleep
 * under rcu_read_lock(), a read one byte past a request socket, a read after
 * free (of a slab object for KASAN, of a sampled one for KFENCE) and a list
 * entry added twice. Never loaded by the normal suite; on a production
 * kernel most of these go unseen, which is the point of the debug kernel.
 *
 * Parameter: bugs=lock_order,odebug,rcu_sleep,oob,uaf,kfence,list (any
 * subset, committed in that order: lockdep stops at its first report and at
 * the taint of KASAN's and KFENCE's, and Debian's BUG_ON_DATA_CORRUPTION
 * makes the list bug an oops).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kfence.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tcp.h>
#include <linux/timer.h>

static char *bugs = "lock_order,odebug,rcu_sleep,oob,uaf,kfence,list";
module_param(bugs, charp, 0444);
MODULE_PARM_DESC(bugs, "comma-separated bugs to commit at load");

static DEFINE_MUTEX(detect_lock_a);
static DEFINE_MUTEX(detect_lock_b);

/*
 * A zeroed slab object of @size bytes that KFENCE sampled (@kfence) or did
 * not (KASAN checks only those), or NULL if none came within 30 s: KFENCE
 * samples one allocation per interval, the first one any CPU makes.
 */
static u8 *detect_alloc(size_t size, bool kfence)
{
	unsigned long start = jiffies, end = start + 30 * HZ;
	unsigned int tries = 0;
	u8 *p;

	do {
		tries++;
		p = kzalloc(size, GFP_KERNEL);
		if (!p || is_kfence_address(p) == kfence)
			goto out;
		kfree(p);
		if (kfence)
			usleep_range(200, 400);
	} while (time_before(jiffies, end));
	p = NULL;
out:
	pr_info("%s object of %zu bytes after %u tries in %u ms: %s\n",
		kfence ? "a KFENCE-sampled" : "an unsampled", size, tries,
		jiffies_to_msecs(jiffies - start), p ? "found" : "none");
	return p;
}

/* KASAN: slab-out-of-bounds, one byte past a request-socket-sized object */
static void detect_oob(void)
{
	size_t size = sizeof(struct tcp_request_sock);
	u8 *req = detect_alloc(size, false);

	if (!req)
		return;
	OPTIMIZER_HIDE_VAR(size);
	pr_info("oob: read byte %zu of a %zu-byte request socket: %u\n",
		size, size, READ_ONCE(req[size]));
	kfree(req);
}

/* KASAN: use-after-free of a slab object */
static void detect_uaf(void)
{
	u8 *p = detect_alloc(64, false);

	if (!p)
		return;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("uaf: read of freed memory: %u\n", READ_ONCE(p[8]));
}

/* KFENCE: use-after-free of an object it sampled */
static void detect_kfence(void)
{
	u8 *p = detect_alloc(64, true);

	if (!p) {
		pr_info("kfence: no sampled allocation within 30 s\n");
		return;
	}
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("kfence: read of a freed sampled object: %u\n", READ_ONCE(p[8]));
}

/*
 * DEBUG_LIST: the same entry added twice (refused, so nothing is corrupt;
 * an oops where BUG_ON_DATA_CORRUPTION is set, as Debian sets it)
 */
static void detect_list(void)
{
	LIST_HEAD(head);
	struct list_head entry;

	list_add(&entry, &head);
	list_add(&entry, &head);
	pr_info("list: entry added twice\n");
}

/* renamed in Linux 6.15 (7.3 has only the new name): tests/kmod/Kbuild */
#ifndef RCVFIX_HAVE_TIMER_DESTROY_ON_STACK
#define timer_destroy_on_stack destroy_timer_on_stack
#endif

static void detect_timer_fn(struct timer_list *t)
{
}

/* DEBUG_OBJECTS_TIMERS: a timer on the stack set up as a static one */
static void detect_odebug(void)
{
	struct timer_list t;

	timer_setup(&t, detect_timer_fn, 0);
	pr_info("odebug: stack timer set up without timer_setup_on_stack()\n");
	timer_destroy_on_stack(&t);
}

/*
 * DEBUG_ATOMIC_SLEEP: a sleeping allocation inside an RCU reader; RCU: a
 * sleep there
 */
static void detect_rcu_sleep(void)
{
	rcu_read_lock();
	kfree(kmalloc(64, GFP_KERNEL));
	msleep(20);
	rcu_read_unlock();
	pr_info("rcu_sleep: allocated and slept under rcu_read_lock()\n");
}

/* PROVE_LOCKING: A then B, later B then A (one thread: no deadlock) */
static void detect_lock_order(void)
{
	mutex_lock(&detect_lock_a);
	mutex_lock(&detect_lock_b);
	mutex_unlock(&detect_lock_b);
	mutex_unlock(&detect_lock_a);

	mutex_lock(&detect_lock_b);
	mutex_lock(&detect_lock_a);
	mutex_unlock(&detect_lock_a);
	mutex_unlock(&detect_lock_b);
	pr_info("lock_order: took a, b, then b, a\n");
}

static const struct {
	const char *name;
	void (*commit)(void);
} detect_bugs[] = {
	{ "lock_order", detect_lock_order },
	{ "odebug", detect_odebug },
	{ "rcu_sleep", detect_rcu_sleep },
	{ "oob", detect_oob },
	{ "uaf", detect_uaf },
	{ "kfence", detect_kfence },
	{ "list", detect_list },
};

static bool detect_wanted(const char *name)
{
	size_t len = strlen(name);
	const char *s = bugs;

	while (s && *s) {
		if (!strncmp(s, name, len) && (s[len] == ',' || !s[len]))
			return true;
		s = strchr(s, ',');
		if (s)
			s++;
	}
	return false;
}

static int __init detect_init(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(detect_bugs); i++) {
		if (!detect_wanted(detect_bugs[i].name))
			continue;
		pr_info("committing bug '%s'\n", detect_bugs[i].name);
		detect_bugs[i].commit();
	}
	return 0;
}

static void __exit detect_exit(void)
{
}

module_init(detect_init);
module_exit(detect_exit);
MODULE_DESCRIPTION("rcvfix test: deliberate bugs for the kernel's bug detectors");
MODULE_LICENSE("GPL");
