/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the rcvfix stress programs, on top of the test programs'
 * common.h (tests/progs): failure reporting, the receive-buffer rule as the
 * tests model it, the "epoch" that tells a worker whether the module state
 * stayed put for the whole of a call, namespace switching, module
 * load/unload syscalls, bringing lo up and reading a thread's kernel stack.
 */
#ifndef RCVFIX_STRESS_H
#define RCVFIX_STRESS_H

#define WATCHDOG_MSG "watchdog expired, giving up"
#include "common.h"

#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define LOCK_SND 1		/* SOCK_SNDBUF_LOCK as SO_BUF_LOCK shows it */
#define LOCK_RCV 2		/* SOCK_RCVBUF_LOCK */

/* Exit codes of every stress program: common.h's and this one. */
enum { EXIT_FAILED = 1 };

/* ---- failures: counted, the first few printed ---- */

static atomic_long n_failures;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_PRINTED_FAILURES 30

static inline void __attribute__((format(printf, 1, 2)))
failure(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&n_failures, 1) >= MAX_PRINTED_FAILURES)
		return;
	pthread_mutex_lock(&print_lock);
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

static inline void __attribute__((format(printf, 1, 2)))
say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&print_lock);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

static inline long long parse_num(const char *what, const char *s,
				  long long min, long long max)
{
	long long v;

	if (num_parse(s, 0, 0, min, max, &v))
		die(EXIT_USAGE, "%s: want a number in %lld..%lld, got '%s'",
		    what, min, max, s);
	return v;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* xorshift: a cheap per-thread random number generator */
static inline uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

static inline pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- the rule (see module/rule.h), as the tests predict it ---- */

struct rule_env {
	int tcp_rmem1;		/* tcp_rmem[1] of its namespace */
	int rmem_max;		/* net.core.rmem_max */
	int min_rcvbuf;		/* SOCK_MIN_RCVBUF of this kernel */
};

/* The clamps of the two options, applied before the buffer setter. */
static inline int clamp_rcvbuf(const struct rule_env *e, int val)
{
	return (unsigned int)val > (unsigned int)e->rmem_max ? e->rmem_max :
								val;
}

static inline int clamp_force(int val)
{
	return val < 0 ? 0 : val;
}

/* sk_rcvbuf after the setter, stock and rcvfix alike. */
static inline int rule_size(const struct rule_env *e, int val)
{
	long long v = val < INT_MAX / 2 ? val : INT_MAX / 2;
	int size = (int)((unsigned int)v * 2u);

	return size < e->min_rcvbuf ? e->min_rcvbuf : size;
}

/* SO_BUF_LOCK receive bit after the setter. */
static inline int rule_lock(const struct rule_env *e, bool enabled,
			    int was_locked, int size)
{
	if (!enabled || (was_locked & LOCK_RCV) || size < e->tcp_rmem1)
		return LOCK_RCV;
	return 0;
}

/* ---- the module state a worker's call met ---- */

#define MAX_NS 8

/*
 * The controller makes the epoch odd before it changes the module state
 * (load, unload, a write of net.rcvfix.enable) and even again once the
 * change is complete. A call that starts and ends in the same even epoch
 * met exactly the recorded state: it is checked strictly. Any other call
 * may have met either state: both outcomes are accepted.
 *
 * "hooked" and "files" differ during rmmod: once rmmod waits in
 * rcvfix_hook_quiesce() every hook is disarmed (new calls run stock code)
 * while the sysctl and /proc/net/rcvfix are still there.
 */
struct mod_state {
	atomic_ulong epoch;
	atomic_int hooked;		/* the entry callbacks are armed */
	atomic_int files;		/* the sysctl and proc files exist */
	atomic_int enabled[MAX_NS];	/* net.rcvfix.enable while files */
};

struct call_window {
	unsigned long epoch;
	bool enabled;		/* hooked and enabled: the rule applies */
	bool files;
	int enable;		/* what net.rcvfix.enable reads */
};

static inline void window_open(struct mod_state *m, int ns,
			       struct call_window *w)
{
	w->epoch = atomic_load(&m->epoch);
	w->files = atomic_load(&m->files);
	w->enable = atomic_load(&m->enabled[ns]);
	w->enabled = atomic_load(&m->hooked) && w->enable;
}

/* true if the call between window_open() and now met one known state */
static inline bool window_strict(struct mod_state *m,
				 const struct call_window *w)
{
	return !(w->epoch & 1) && atomic_load(&m->epoch) == w->epoch;
}

static inline void state_begin(struct mod_state *m)
{
	atomic_fetch_add(&m->epoch, 1);
}

static inline void state_end(struct mod_state *m)
{
	atomic_fetch_add(&m->epoch, 1);
}

/* ---- namespaces, sysctls, sockets ---- */

/* An fd for /run/netns/NAME (as `ip netns add` creates it). */
static inline int netns_open(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(EXIT_SETUP, "open %s: %s (create it with ip netns add)",
		    path, strerror(errno));
	return fd;
}

/* Move the calling thread (only) into the namespace of @fd. */
static inline void netns_enter(int fd)
{
	if (setns(fd, CLONE_NEWNET))
		die(EXIT_SETUP, "setns: %s", strerror(errno));
}

/* Read a small file into @buf; -errno on failure. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got + 1 < size) {
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0) {
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (!n)
			break;
		got += n;
	}
	buf[got] = '\0';
	close(fd);
	return (int)got;
}

/* The Nth integer of a sysctl file of the calling thread's namespace. */
static inline long long sysctl_int(const char *path, int nth)
{
	char buf[256], *p = buf, *end;
	long long v = 0;
	int i;

	if (read_file(path, buf, sizeof(buf)) < 0)
		die(EXIT_SETUP, "read %s: %s", path, strerror(errno));
	for (i = 0; i <= nth; i++) {
		v = strtoll(p, &end, 10);
		if (end == p)
			die(EXIT_SETUP, "%s: no field %d", path, nth);
		p = end;
	}
	return v;
}

/*
 * net.core.rmem_max. The sysctl is visible only from the initial namespace
 * on 6.1; SO_RCVBUF INT_MAX gives 2 * rmem_max everywhere, stock or fixed.
 */
static inline int rmem_max_read(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), v = INT_MAX, size;
	socklen_t len = sizeof(size);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) ||
	    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &len))
		die(EXIT_SETUP, "cannot measure net.core.rmem_max: %s",
		    strerror(errno));
	close(fd);
	return size / 2;
}

/* The rule's inputs in the calling thread's namespace. */
static inline void rule_env_read(struct rule_env *e, int rmem_max)
{
	int fd, v = 0, size;
	socklen_t len = sizeof(size);

	e->tcp_rmem1 = (int)sysctl_int("/proc/sys/net/ipv4/tcp_rmem", 1);
	e->rmem_max = rmem_max;
	/* SO_RCVBUFFORCE 0 gives SOCK_MIN_RCVBUF, stock and fixed alike */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) ||
	    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &len))
		die(EXIT_SETUP, "cannot measure SOCK_MIN_RCVBUF: %s",
		    strerror(errno));
	e->min_rcvbuf = size;
	close(fd);
}

/*
 * Does rcvfix's rule apply to @fd? Only to TCP and MPTCP stream sockets
 * over IPv4 and IPv6 (rcvfix_sk_in_scope() in module/rcvbuf.h); every
 * other socket keeps the kernel's own code, lock included.
 */
static inline bool rule_applies(int fd)
{
	int dom = 0, type = 0, proto = 0;
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len))
		return false;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return false;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len))
		return false;
	return (dom == AF_INET || dom == AF_INET6) && type == SOCK_STREAM &&
	       (proto == IPPROTO_TCP || proto == IPPROTO_MPTCP);
}

static inline int get_int_opt(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (opt == SO_BUF_LOCK)		/* also before 5.15 (common.h) */
		return sock_buf_lock(fd);

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &len))
		return -1;
	return v;
}

/* ---- the module ---- */

/* finit_module(); 0 or -errno */
/*
 * Bring lo up in the calling thread's namespace, without netlink. False if
 * it is down and stays down: bringing it up needs CAP_NET_ADMIN there.
 */
static inline bool lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool up = true;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr))
		die(EXIT_SETUP, "SIOCGIFFLAGS lo: %s", strerror(errno));
	if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr)) {
			if (errno != EPERM)
				die(EXIT_SETUP, "SIOCSIFFLAGS lo: %s",
				    strerror(errno));
			up = false;
		}
	}
	close(fd);
	return up;
}

static inline int module_load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		die(EXIT_SETUP, "open %s: %s", path, strerror(errno));
	ret = (int)syscall(SYS_finit_module, fd, params, 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

/* delete_module() as rmmod calls it; 0 or -errno */
static inline int module_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/* Is @name in /proc/modules, and in which state ("Live", "Unloading")? */
static inline const char *module_state(const char *name, char *buf,
				       size_t size)
{
	static char text[65536];
	size_t n = strlen(name);
	char *line, *save;

	if (read_file("/proc/modules", text, sizeof(text)) < 0)
		return NULL;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, name, n) || line[n] != ' ')
			continue;
		snprintf(buf, size, "%s",
			 strstr(line, "Unloading") ? "Unloading" :
			 strstr(line, "Loading") ? "Loading" : "Live");
		return buf;
	}
	return NULL;
}

/* /proc/self/task/TID/FILE ("stack", "wchan") into @buf. */
static inline int task_file(pid_t t, const char *file, char *buf,
			    size_t size)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)t, file);
	return read_file(path, buf, size);
}

/* Wait until the kernel stack of thread @t names every one of @need. */
static inline bool wait_stack(pid_t t, const char *const *need, int n_need,
			      double timeout_s, char *stack, size_t size)
{
	double end = now_s() + timeout_s;
	int i;

	do {
		if (task_file(t, "stack", stack, size) >= 0) {
			for (i = 0; i < n_need; i++)
				if (!strstr(stack, need[i]))
					break;
			if (i == n_need)
				return true;
		}
		sleep_ms(10);
	} while (now_s() < end);
	return false;
}

#endif /* RCVFIX_STRESS_H */
