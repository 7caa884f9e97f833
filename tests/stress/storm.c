// SPDX-License-Identifier: GPL-2.0
/*
 * stress-storm: loads and unloads rcvfix cycle after cycle while worker
 * threads in several network namespaces hammer SO_RCVBUF, SO_RCVBUFFORCE,
 * unrelated SOL_SOCKET options and TCP connections, and checks every result
 * against the rule for the module state the call met. Each cycle can also
 * leave threads asleep on a socket lock inside rcvfix's replacement of
 * sk_setsockopt() while rmmod runs (see hold_*() below), and, between
 * load and unload, turns the fix off in every namespace and on again
 * (--flips): the last namespace to turn it off disarms the hooks, the
 * first to turn it on arms them, all under fire. The module's counters of
 * arms and disarms must match the transitions made.
 */
#include "stress.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/un.h>

static const char usage[] =
"usage: stress-storm --ko PATH --ns NAME [--ns NAME...] [options]\n"
"Loads and unloads PATH (rcvfix.ko) CYCLES times while workers in each\n"
"namespace (/run/netns/NAME) hammer socket options and TCP connections.\n"
"Options:\n"
"  --cycles N       load/unload cycles (10)\n"
"  --phase-ms MS    time between two state changes (250)\n"
"  --hold N         threads left blocked on a socket lock inside rcvfix's\n"
"                   replacement at each rmmod (3; 0: plain rmmod)\n"
"  --flips N        disarm/arm cycles per load: the fix off everywhere,\n"
"                   then on again (2; not with default_enable=1)\n"
"  --target I=ADDR  the connection worker of namespace I connects to ADDR\n"
"                   (default 127.0.0.1: its own namespace)\n"
"  --port P         TCP port of the listener in every namespace (7301)\n"
"  --ksock          also drive sock_set_rcvbuf() through\n"
"                   /proc/rcvfix_test_ksock (tests/kmod) in namespace 0\n"
"  --show-stacks    print the kernel stacks of the first hold\n"
"  --pace-us US     workers sleep US per iteration (100; 0: none)\n"
"  --calm-load      workers pause while insmod runs (unloads stay under\n"
"                   fire); see the note at load() in storm.c\n"
"  --hammer S       no module: only run the workers for S seconds and\n"
"                   check stock results (a load generator for other tests)\n"
"  --seed N         random seed (time)\n"
"  --time-scale N   a guest N times slower than amd64 under TCG: the\n"
"                   bounds on a hold (30 s) and on rmmod reaching\n"
"                   rcvfix_hook_quiesce (300 s) grow N times (1)\n"
"  --timeout S      give up after S seconds (900)\n"
"Prints FAIL: lines for every wrong result and one closing line\n"
"  summary key=value...\n"
"Exit: 0 all results right, 1 wrong results, 2 usage, 3 setup error,\n"
"124 timed out.\n";

#define MODULE_NAME "rcvfix"
#define MAX_HOLD 8
#define MAX_WORKERS 64
#define CONN_MAX (256 * 1024)

struct ns_ctx {
	int idx;
	const char *name;
	int fd;			/* /run/netns/NAME */
	struct rule_env env;
	struct sockaddr_in target;
	int listen_fd;
	int enable_fd;		/* net.rcvfix.enable while loaded */
};

static struct ns_ctx nss[MAX_NS];
static int n_ns;
static struct mod_state ms;
static atomic_int stop;		/* workers finish their current call */
static atomic_int stop_servers;	/* set once every client has finished */
static int init_ns_fd;
static int port = 7301;
static uint64_t seed;
static bool show_stacks;
static int pace_us = 100;	/* workers sleep this long per iteration */
static bool calm_load;		/* --calm-load */
static int time_scale = 1;	/* --time-scale: stretches the hang bounds */
static atomic_int calm;		/* workers pause while set */
static int hold_ms = 200;	/* rmmod is kept waiting at least this long */

/*
 * Arming, as the controller (the only writer of the switches) expects it:
 * namespaces of ours enabled now, and arms and disarms since the load.
 * Only counted when no other namespace is enabled (default_enable=0).
 */
static struct {
	bool counted;
	int n_enabled;
	long arms, disarms;		/* expected since the load */
	long total_arms, total_disarms;	/* seen, over every load */
	long flips;
} arming;

static struct {
	atomic_long sets, strict, ambiguous, eperm, other, conns, bytes;
	atomic_long proc_reads, ksock, contended;
} st;

/* ---- checked calls ---- */

static const char *opt_name(int opt)
{
	return opt == SO_RCVBUF ? "SO_RCVBUF" : "SO_RCVBUFFORCE";
}

/*
 * One SO_RCVBUF or SO_RCVBUFFORCE call on @fd, a socket of namespace @ns,
 * checked against the rule. @may_grow: a connected socket whose unlocked
 * buffer autotuning may raise at any time.
 */
static void checked_set(struct ns_ctx *ns, int fd, int opt, int val,
			bool may_grow, const char *what)
{
	const struct rule_env *e = &ns->env;
	int was = get_int_opt(fd, SO_BUF_LOCK);
	int clamped = opt == SO_RCVBUF ? clamp_rcvbuf(e, val) :
					 clamp_force(val);
	int size = rule_size(e, clamped);
	int want_stock = (was & LOCK_SND) | LOCK_RCV;
	int want_en = rule_applies(fd) ?
		      (was & LOCK_SND) | rule_lock(e, true, was, size) :
		      want_stock;
	struct call_window w;
	int ret, err, rcvbuf, lock;
	bool strict, size_ok;

	window_open(&ms, ns->idx, &w);
	ret = setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val));
	err = ret ? errno : 0;
	strict = window_strict(&ms, &w);
	rcvbuf = get_int_opt(fd, SO_RCVBUF);
	lock = get_int_opt(fd, SO_BUF_LOCK);

	atomic_fetch_add(&st.sets, 1);
	atomic_fetch_add(strict ? &st.strict : &st.ambiguous, 1);
	if (ret) {
		failure("%s ns%d %s(%d): ret %d errno %s, want 0", what,
			ns->idx, opt_name(opt), val, ret, errno_name(err));
		return;
	}
	size_ok = rcvbuf == size || (may_grow && !(lock & LOCK_RCV) &&
				     rcvbuf > size);
	if (!size_ok)
		failure("%s ns%d %s(%d): rcvbuf %d, want %d", what, ns->idx,
			opt_name(opt), val, rcvbuf, size);
	if (strict && lock != (w.enabled ? want_en : want_stock))
		failure("%s ns%d %s(%d) %s: lock %d, want %d (was %d, size %d, tcp_rmem[1] %d)",
			what, ns->idx, opt_name(opt), val,
			w.enabled ? "enabled" : w.files ? "disabled" : "absent",
			lock, w.enabled ? want_en : want_stock, was, size,
			e->tcp_rmem1);
	if (!strict && lock != want_en && lock != want_stock)
		failure("%s ns%d %s(%d) during a change: lock %d, want %d or %d",
			what, ns->idx, opt_name(opt), val, lock, want_en,
			want_stock);
}

static int pick_rcvbuf_val(const struct rule_env *e, uint64_t *r)
{
	int h = e->tcp_rmem1 / 2;
	int table[] = { 0, 1, h - 1, h, h + 1, e->tcp_rmem1 - 1,
			2 * e->tcp_rmem1, e->rmem_max, e->rmem_max + 1,
			INT_MAX, -1, INT_MIN, 0 };
	unsigned int n = ARRAY_SIZE(table);

	table[n - 1] = (int)(rnd(r) % (2u * e->tcp_rmem1));
	return table[rnd(r) % n];
}

static int pick_force_val(const struct rule_env *e, uint64_t *r)
{
	int h = e->tcp_rmem1 / 2;
	int table[] = { 0, -1, INT_MIN, h - 1, h, h + 1, INT_MAX,
			INT_MAX / 2 + 1, 0 };
	unsigned int n = ARRAY_SIZE(table);

	table[n - 1] = (int)(rnd(r) % (4u * e->tcp_rmem1));
	return table[rnd(r) % n];
}

static int new_socket(uint64_t *r)
{
	static const int kinds[][2] = {
		{ AF_INET, SOCK_STREAM }, { AF_INET, SOCK_STREAM },
		{ AF_INET, SOCK_STREAM }, { AF_INET, SOCK_DGRAM },
		{ AF_UNIX, SOCK_STREAM }, { AF_UNIX, SOCK_DGRAM },
	};
	unsigned int k = rnd(r) % 6;
	int fd = socket(kinds[k][0], kinds[k][1] | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	return fd;
}

/* ---- workers ---- */

enum worker_kind {
	W_RCVBUF, W_FORCE, W_NOCAP, W_OTHER, W_CONN, W_SERVER, W_PROC,
	W_CONTEND, W_KSOCK,
};

struct worker {
	enum worker_kind kind;
	struct ns_ctx *ns;
	uint64_t rnd;
	int shared_fd;		/* W_CONTEND */
	int val;		/* W_CONTEND */
	int other_val;		/* W_CONTEND: the other thread's value */
	pthread_t th;
};

static struct worker workers[MAX_WORKERS];
static int n_workers;

static void work_rcvbuf(struct worker *w, int opt)
{
	int fd = new_socket(&w->rnd), two = 2, val;

	/* A lock set beforehand; SO_BUF_LOCK does not exist before 5.15. */
	if (rnd(&w->rnd) % 8 == 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &two, sizeof(two)) &&
	    errno != ENOPROTOOPT)
		failure("SO_BUF_LOCK 2: %s", strerror(errno));
	val = opt == SO_RCVBUF ? pick_rcvbuf_val(&w->ns->env, &w->rnd) :
				 pick_force_val(&w->ns->env, &w->rnd);
	checked_set(w->ns, fd, opt, val, false, "fresh socket");
	if (rnd(&w->rnd) % 4 == 0)	/* a second call meets its own lock */
		checked_set(w->ns, fd, opt, pick_rcvbuf_val(&w->ns->env,
							     &w->rnd),
			    false, "second call");
	close(fd);
}

/* Without CAP_NET_ADMIN: SO_RCVBUFFORCE is refused, nothing changes. */
static void work_nocap(struct worker *w)
{
	int fd = new_socket(&w->rnd);
	int r0 = get_int_opt(fd, SO_RCVBUF), val = w->ns->env.tcp_rmem1;
	int ret = setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &val, sizeof(val));
	int err = ret ? errno : 0;

	atomic_fetch_add(&st.eperm, 1);
	if (ret != -1 || err != EPERM)
		failure("no CAP_NET_ADMIN: SO_RCVBUFFORCE ret %d errno %s, want EPERM",
			ret, errno_name(err));
	if (get_int_opt(fd, SO_RCVBUF) != r0 || get_int_opt(fd, SO_BUF_LOCK))
		failure("no CAP_NET_ADMIN: a refused SO_RCVBUFFORCE changed the socket");
	checked_set(w->ns, fd, SO_RCVBUF, pick_rcvbuf_val(&w->ns->env, &w->rnd),
		    false, "no CAP_NET_ADMIN");
	close(fd);
}

/* Other SOL_SOCKET options go through the hooked function untouched. */
static void work_other(struct worker *w)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r0 = get_int_opt(fd, SO_RCVBUF), opt, val, want, got, ret;
	static const int opts[] = { SO_KEEPALIVE, SO_PRIORITY, SO_RCVLOWAT,
				    SO_SNDBUF };

	if (fd < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	opt = opts[rnd(&w->rnd) % 4];
	switch (opt) {
	case SO_KEEPALIVE:
		val = rnd(&w->rnd) % 2;
		break;
	case SO_PRIORITY:	/* 0..6 need no CAP_NET_ADMIN */
		val = rnd(&w->rnd) % 7;
		break;
	case SO_RCVLOWAT:	/* too small to grow the buffer */
		val = 1 + rnd(&w->rnd) % 1000;
		break;
	default:		/* well below the default net.core.wmem_max */
		val = 4096 + rnd(&w->rnd) % 65536;
		break;
	}
	want = opt == SO_SNDBUF ? 2 * val : val;
	ret = setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val));
	atomic_fetch_add(&st.other, 1);
	if (ret)
		failure("option %d = %d: %s", opt, val, strerror(errno));
	got = get_int_opt(fd, opt);
	if (got != want)
		failure("option %d = %d reads back %d", opt, val, got);
	if (get_int_opt(fd, SO_RCVBUF) != r0)
		failure("option %d changed SO_RCVBUF: %d -> %d", opt, r0,
			get_int_opt(fd, SO_RCVBUF));
	if (get_int_opt(fd, SO_BUF_LOCK) != (opt == SO_SNDBUF ? LOCK_SND : 0))
		failure("option %d: SO_BUF_LOCK %d", opt,
			get_int_opt(fd, SO_BUF_LOCK));
	close(fd);
}

static void fill_pattern(unsigned char *p, size_t len, size_t off,
			 uint32_t s)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)((off + i) * 31u + s);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = recv(fd, p, len, 0);
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* TCP state of a connection that broke, for the failure message. */
static const char *tcp_state(int fd)
{
	static __thread char text[200];
	struct tcp_info ti = { 0 };
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return "no TCP_INFO";
	snprintf(text, sizeof(text),
		 "state %u rto %u us retransmits %u backoff %u unacked %u rcv_space %u snd_cwnd %u rcvbuf %d lock %d",
		 ti.tcpi_state, ti.tcpi_rto, ti.tcpi_retransmits,
		 ti.tcpi_backoff, ti.tcpi_unacked, ti.tcpi_rcv_space,
		 ti.tcpi_snd_cwnd, get_int_opt(fd, SO_RCVBUF),
		 get_int_opt(fd, SO_BUF_LOCK));
	return text;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { 60, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void show_task(const char *who, pid_t t);

/*
 * A connection that timed out: its peer's server thread has not read for
 * a minute. Show every thread's kernel stack and every namespace's TCP
 * sockets (queues, windows, memory) once, to see where it is stuck.
 */
static void show_all_tasks_once(void)
{
	static atomic_flag shown = ATOMIC_FLAG_INIT;
	struct dirent *de;
	char cmd[256];
	DIR *dir;
	int i;

	if (atomic_flag_test_and_set(&shown))
		return;
	dir = opendir("/proc/self/task");
	if (dir) {
		while ((de = readdir(dir)))
			if (de->d_name[0] != '.')
				show_task("timed out", (pid_t)atoi(de->d_name));
		closedir(dir);
	}
	fflush(stdout);
	for (i = 0; i < n_ns; i++) {
		snprintf(cmd, sizeof(cmd),
			 "echo '# ns%d %s:'; ip netns exec %s ss -tnimoe | sed 's/^/# /'",
			 i, nss[i].name, nss[i].name);
		if (system(cmd))
			say("ss in %s failed\n", nss[i].name);
	}
}

/* One TCP connection with traffic; the client side. */
static void work_conn(struct worker *w)
{
	static __thread unsigned char buf[16384];
	uint32_t hdr[2], len, s = rnd(&w->rnd), reply, off;
	int err;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct ns_ctx *ns = w->ns;

	if (fd < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	set_timeouts(fd);
	if (rnd(&w->rnd) % 2)
		checked_set(ns, fd, SO_RCVBUF,
			    ns->env.tcp_rmem1 / 2 + (int)(rnd(&w->rnd) % 3) - 1,
			    false, "client before connect");
	if (connect(fd, (struct sockaddr *)&ns->target, sizeof(ns->target))) {
		failure("ns%d connect %s:%d: %s", ns->idx,
			inet_ntoa(ns->target.sin_addr), port, strerror(errno));
		sleep_ms(100);
		goto out;
	}
	len = 4096 + rnd(&w->rnd) % (CONN_MAX - 4096);
	hdr[0] = len;
	hdr[1] = s;
	if (write_all(fd, hdr, sizeof(hdr)))
		goto broken;
	for (off = 0; off < len; off += sizeof(buf)) {
		uint32_t n = len - off < sizeof(buf) ? len - off : sizeof(buf);

		fill_pattern(buf, n, off, s);
		if (write_all(fd, buf, n))
			goto broken;
	}
	if (read_all(fd, &reply, sizeof(reply)))
		goto broken;
	if (reply != len)
		failure("ns%d connection: server verified %u of %u bytes",
			ns->idx, reply, len);
	atomic_fetch_add(&st.conns, 1);
	atomic_fetch_add(&st.bytes, len);
	goto out;
broken:
	err = errno;
	failure("ns%d connection broken: %s; client %s", ns->idx,
		strerror(err), tcp_state(fd));
	if (err == EAGAIN)
		show_all_tasks_once();
out:
	close(fd);
}

/* The listener of one namespace: verifies what the clients send. */
static void serve_one(struct worker *w, int c)
{
	static __thread unsigned char buf[16384], want[16384];
	uint32_t hdr[2], got = 0, n;

	set_timeouts(c);
	checked_set(w->ns, c, SO_RCVBUF,
		    w->ns->env.tcp_rmem1 / 2 + (int)(rnd(&w->rnd) % 3) - 1,
		    true, "accepted socket");
	if (read_all(c, hdr, sizeof(hdr)) || hdr[0] > CONN_MAX)
		goto broken;
	while (got < hdr[0]) {
		n = hdr[0] - got < sizeof(buf) ? hdr[0] - got : sizeof(buf);
		if (read_all(c, buf, n))
			goto broken;
		fill_pattern(want, n, got, hdr[1]);
		if (memcmp(buf, want, n))
			break;
		got += n;
	}
	if (!write_all(c, &got, sizeof(got)))
		return;
broken:
	failure("ns%d server: connection broken: %s; %s", w->ns->idx,
		strerror(errno), tcp_state(c));
}

static void *server_main(struct worker *w)
{
	struct pollfd p = { .fd = w->ns->listen_fd, .events = POLLIN };
	int c;

	while (!atomic_load(&stop_servers)) {
		if (poll(&p, 1, 200) <= 0)
			continue;
		c = accept4(p.fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve_one(w, c);
		close(c);
	}
	return NULL;
}

/* /proc/net/rcvfix and net.rcvfix.enable agree with the module state. */
static void work_proc(struct worker *w)
{
	char buf[2048], *en;
	struct call_window cw;
	int n;
	bool strict;

	window_open(&ms, w->ns->idx, &cw);
	n = read_file("/proc/thread-self/net/rcvfix", buf, sizeof(buf));
	strict = window_strict(&ms, &cw);
	atomic_fetch_add(&st.proc_reads, 1);
	if (n < 0) {
		/* EIO: removed between open() and read() by rmmod */
		if (n != -ENOENT && (n != -EIO || strict))
			failure("read /proc/net/rcvfix: %s", strerror(-n));
		else if (strict && cw.files)
			failure("/proc/net/rcvfix missing while loaded");
		return;
	}
	if (strict && !cw.files)
		failure("/proc/net/rcvfix present while unloaded");
	en = strstr(buf, "\nenable ");
	if (strncmp(buf, "version ", 8) || !strstr(buf, "\nstrategy ") || !en) {
		failure("/proc/net/rcvfix malformed: %.80s", buf);
		return;
	}
	if (strict && atoi(en + 8) != cw.enable)
		failure("/proc/net/rcvfix: enable %d, want %d", atoi(en + 8),
			cw.enable);
}

/* Two threads on one socket queue on its lock; the lock bit never drops. */
static void work_contend(struct worker *w, int *seen_lock)
{
	const struct rule_env *e = &w->ns->env;
	int val = w->val, ret, rcvbuf, lock;

	ret = setsockopt(w->shared_fd, SOL_SOCKET, SO_RCVBUF, &val,
			 sizeof(val));
	rcvbuf = get_int_opt(w->shared_fd, SO_RCVBUF);
	lock = get_int_opt(w->shared_fd, SO_BUF_LOCK);
	atomic_fetch_add(&st.contended, 1);
	if (ret)
		failure("shared socket SO_RCVBUF %d: %s", val, strerror(errno));
	if (rcvbuf != rule_size(e, clamp_rcvbuf(e, val)) &&
	    rcvbuf != rule_size(e, clamp_rcvbuf(e, w->other_val)))
		failure("shared socket: rcvbuf %d after %d/%d", rcvbuf, val,
			w->other_val);
	if (*seen_lock && !(lock & LOCK_RCV))
		failure("shared socket: SOCK_RCVBUF_LOCK was set and is gone");
	*seen_lock |= lock & LOCK_RCV;
}

/* sock_set_rcvbuf() on a kernel socket, through the ksock test module. */
static void work_ksock(struct worker *w)
{
	const struct rule_env *e = &w->ns->env;
	int val = clamp_force(pick_force_val(e, &w->rnd)), rv, rl, gv, n;
	bool prelock = rnd(&w->rnd) % 8 == 0, strict;
	int size = rule_size(e, val);
	struct call_window cw;
	char cmd[48], buf[128] = "";
	int fd;

	n = snprintf(cmd, sizeof(cmd), "%s%d", prelock ? "lock " : "", val);
	fd = open("/proc/rcvfix_test_ksock", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die(EXIT_SETUP, "/proc/rcvfix_test_ksock: %s", strerror(errno));
	window_open(&ms, w->ns->idx, &cw);
	if (write(fd, cmd, n) != n)
		failure("ksock write '%s': %s", cmd, strerror(errno));
	strict = window_strict(&ms, &cw);
	close(fd);
	atomic_fetch_add(&st.ksock, 1);
	if (read_file("/proc/rcvfix_test_ksock", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "val=%d rcvbuf=%d lock=%d", &gv, &rv, &rl) != 3) {
		failure("ksock result unreadable: %s", buf);
		return;
	}
	if (gv != val || rv != size)
		failure("ksock %s: rcvbuf %d, want %d", cmd, rv, size);
	if (strict && rl != rule_lock(e, cw.enabled, prelock ? LOCK_RCV : 0,
				      size))
		failure("ksock %s %s: lock %d", cmd,
			cw.enabled ? "enabled" : "stock", rl);
	if (!strict && rl != LOCK_RCV &&
	    rl != rule_lock(e, true, prelock ? LOCK_RCV : 0, size))
		failure("ksock %s during a change: lock %d", cmd, rl);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int seen_lock = 0;
	long n = 0;

	netns_enter(w->ns->fd);
	if (w->kind == W_NOCAP)
		drop_net_admin();
	if (w->kind == W_SERVER)
		return server_main(w);
	while (!atomic_load(&stop)) {
		while (atomic_load(&calm) && !atomic_load(&stop))
			usleep(1000);
		switch (w->kind) {
		case W_RCVBUF:
			work_rcvbuf(w, SO_RCVBUF);
			break;
		case W_FORCE:
			work_rcvbuf(w, SO_RCVBUFFORCE);
			break;
		case W_NOCAP:
			work_nocap(w);
			break;
		case W_OTHER:
			work_other(w);
			break;
		case W_CONN:
			work_conn(w);
			break;
		case W_PROC:
			work_proc(w);
			break;
		case W_CONTEND:
			work_contend(w, &seen_lock);
			break;
		case W_KSOCK:
			work_ksock(w);
			break;
		case W_SERVER:
			break;
		}
		/*
		 * A short sleep per iteration leaves the emulated CPUs some
		 * room for the controller (module loading waits for every
		 * CPU more than once); --pace-us 0 hammers flat out.
		 */
		if (pace_us)
			usleep(pace_us);
		else if (++n % 64 == 0)
			sched_yield();
	}
	return NULL;
}

static void add_worker(enum worker_kind kind, struct ns_ctx *ns)
{
	struct worker *w;

	if (n_workers == MAX_WORKERS)
		die(EXIT_USAGE, "too many workers");
	w = &workers[n_workers++];
	w->kind = kind;
	w->ns = ns;
	w->rnd = seed * 2654435761u + n_workers * 40503u + 1;
	w->shared_fd = -1;
}

/* ---- the controller's view of the module ---- */

static void enable_fds_open(void)
{
	int i;

	for (i = 0; i < n_ns; i++) {
		netns_enter(nss[i].fd);
		nss[i].enable_fd = open("/proc/sys/net/rcvfix/enable",
					O_RDWR | O_CLOEXEC);
		if (nss[i].enable_fd < 0)
			failure("ns%d: net.rcvfix.enable missing after load: %s",
				i, strerror(errno));
	}
	netns_enter(init_ns_fd);
}

static void enable_fds_close(void)
{
	int i;

	for (i = 0; i < n_ns; i++) {
		if (nss[i].enable_fd >= 0)
			close(nss[i].enable_fd);
		nss[i].enable_fd = -1;
	}
}

static int enable_read(int i)
{
	char buf[16] = "";

	if (pread(nss[i].enable_fd, buf, sizeof(buf) - 1, 0) <= 0)
		return -1;
	return atoi(buf);
}

/* net.rcvfix.enable of namespace @i := @v, as one state change */
static void enable_write(int i, int v)
{
	char text[3] = { (char)('0' + v), '\n', 0 };

	int was = atomic_load(&ms.enabled[i]);
	double t0 = now_s();

	state_begin(&ms);
	if (pwrite(nss[i].enable_fd, text, 2, 0) != 2)
		failure("ns%d: write %d to net.rcvfix.enable: %s", i, v,
			strerror(errno));
	atomic_store(&ms.enabled[i], v);
	state_end(&ms);
	/* the writes that arm or disarm take the time: show each one */
	if (v && !was && arming.n_enabled++ == 0) {
		arming.arms++;
		say("ns%d: enable=1 armed in %.0f ms", i, (now_s() - t0) * 1000);
	}
	if (!v && was && --arming.n_enabled == 0) {
		arming.disarms++;
		say("ns%d: enable=0 disarmed in %.0f ms", i,
		    (now_s() - t0) * 1000);
	}
}

/* The value of @key in /proc/net/rcvfix of the initial namespace. */
static long proc_value(const char *key, char *word, size_t size)
{
	char buf[4096], pat[64], *p;
	size_t n;

	word[0] = 0;
	if (read_file("/proc/thread-self/net/rcvfix", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(pat, sizeof(pat), "\n%s ", key);
	p = strstr(buf, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	n = strcspn(p, "\n");
	snprintf(word, size, "%.*s", (int)n, p);
	return atol(word);
}

/* "armed" must read @want, with @n namespaces enabled (counted loads). */
static void expect_armed(int cycle, const char *want)
{
	char w[64];
	long n = proc_value("enabled_namespaces", w, sizeof(w));

	proc_value("armed", w, sizeof(w));
	if (strcmp(w, want))
		failure("cycle %d: armed %s with %d namespace(s) enabled, want %s",
			cycle, w, arming.n_enabled, want);
	if (n != arming.n_enabled)
		failure("cycle %d: enabled_namespaces %ld, want %d", cycle, n,
			arming.n_enabled);
}

/*
 * The fix off in every namespace (the last one disarms), then on again
 * in namespace 0 (which arms) and a random few, under the storm.
 */
static void flip_arming(int cycle, int phase, uint64_t *r)
{
	int i;

	for (i = 0; i < n_ns; i++)
		if (atomic_load(&ms.enabled[i]))
			enable_write(i, 0);
	expect_armed(cycle, "no");
	sleep_ms(phase / 2);
	enable_write(0, 1);
	for (i = 1; i < n_ns; i++)
		if (rnd(r) % 2)
			enable_write(i, 1);
	expect_armed(cycle, "yes");
	arming.flips++;
	sleep_ms(phase / 2);
}

/* Before the unload: the module counted the arms and disarms made. */
static void check_arm_counters(int cycle)
{
	char w[64];
	long arms = proc_value("arms", w, sizeof(w));
	long disarms = proc_value("disarms", w, sizeof(w));

	if (arming.counted && (arms != arming.arms ||
			       disarms != arming.disarms))
		failure("cycle %d: arms %ld disarms %ld, want %ld and %ld",
			cycle, arms, disarms, arming.arms, arming.disarms);
	arming.total_arms += arms;
	arming.total_disarms += disarms;
}

/*
 * Loading arms the hooks: ftrace rewrites the first instruction of
 * sk_setsockopt() and sock_set_rcvbuf() (text_poke_bp) while the workers
 * run through them. Under QEMU 7.2's multi-threaded TCG that has left a
 * virtual CPU executing stale code (a jump to address 0, or an endless
 * int3 at sk_setsockopt+0 whose byte memory no longer holds), never with
 * thread=single (the harness default): an emulator fault, not a kernel
 * or rcvfix one. --calm-load pauses the workers for the load only.
 */
static void load(int default_enable)
{
	char params[64];
	int i, ret;

	/* every flip disarms at once: no hold-off (arm.c) */
	snprintf(params, sizeof(params), "default_enable=%d disarm_holdoff_s=0",
		 default_enable);
	if (calm_load) {
		atomic_store(&calm, 1);
		sleep_ms(20);	/* let calls in flight finish */
	}
	state_begin(&ms);
	ret = module_load(getenv("STORM_KO"), params);
	atomic_store(&calm, 0);
	if (ret)
		die(EXIT_FAILED, "insmod %s %s: %s", getenv("STORM_KO"), params,
		    strerror(-ret));
	atomic_store(&ms.hooked, 1);
	atomic_store(&ms.files, 1);
	for (i = 0; i < n_ns; i++)
		atomic_store(&ms.enabled[i], default_enable);
	state_end(&ms);
	arming.counted = !default_enable;
	arming.n_enabled = default_enable ? n_ns : 0;
	arming.arms = default_enable;
	arming.disarms = 0;
	enable_fds_open();
	for (i = 0; i < n_ns; i++)
		if (enable_read(i) != default_enable)
			failure("ns%d: enable %d after insmod default_enable=%d",
				i, enable_read(i), default_enable);
}

struct rmmod_job {
	pthread_t th;
	atomic_int tid;
	atomic_int done;
	int ret;
};

static void *rmmod_main(void *arg)
{
	struct rmmod_job *j = arg;

	atomic_store(&j->tid, tid());
	j->ret = module_unload(MODULE_NAME);
	atomic_store(&j->done, 1);
	return NULL;
}

static void unloaded(void)
{
	int i;

	atomic_store(&ms.hooked, 0);
	atomic_store(&ms.files, 0);
	for (i = 0; i < n_ns; i++)
		atomic_store(&ms.enabled[i], 0);
}

static void unload_plain(void)
{
	int ret;

	enable_fds_close();
	state_begin(&ms);
	ret = module_unload(MODULE_NAME);
	if (ret)
		die(EXIT_FAILED, "rmmod: %s", strerror(-ret));
	unloaded();
	state_end(&ms);
}

/* ---- the hold: threads asleep in rcvfix's replacement at rmmod ---- */

/*
 * How a thread is kept asleep inside rcvfix_sk_setsockopt(): a "holder"
 * thread owns the socket lock of a connected TCP socket, because its
 * send() copies from a page registered with userfaultfd and so waits in
 * the page fault (handle_userfault) inside tcp_sendmsg(), between
 * lock_sock() and release_sock(), until this program resolves the fault.
 * Setter threads then call setsockopt(SO_RCVBUF) on that socket in an
 * enabled namespace: the ftrace entry callback sends them to the
 * replacement, which sleeps in lock_sock(). Their kernel stacks prove it.
 * rmmod then disarms the hooks and waits in rcvfix_hook_quiesce() for
 * them; the fault is resolved only once rmmod is seen waiting there.
 */
struct hold {
	int cfd, sfd, uffd, n, val;
	char *page;
	long pagesz;
	pthread_t holder;
	atomic_int holder_tid;
	ssize_t sent;
	pthread_t setter[MAX_HOLD];
	atomic_int setter_tid[MAX_HOLD];
	int setter_ret[MAX_HOLD], setter_err[MAX_HOLD];
};

static struct hold hd;

static void *holder_main(void *arg)
{
	(void)arg;
	atomic_store(&hd.holder_tid, tid());
	hd.sent = send(hd.cfd, hd.page, hd.pagesz, MSG_NOSIGNAL);
	return NULL;
}

static void *setter_main(void *arg)
{
	long i = (long)arg;
	int val = hd.val;

	atomic_store(&hd.setter_tid[i], tid());
	hd.setter_ret[i] = setsockopt(hd.cfd, SOL_SOCKET, SO_RCVBUF, &val,
				      sizeof(val));
	hd.setter_err[i] = hd.setter_ret[i] ? errno : 0;
	return NULL;
}

/* A connected TCP pair on 127.0.0.1 in namespace 0. */
static void hold_pair(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int l;

	netns_enter(nss[0].fd);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	hd.cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || hd.cfd < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &alen) ||
	    connect(hd.cfd, (struct sockaddr *)&a, sizeof(a)))
		die(EXIT_SETUP, "hold: TCP pair: %s", strerror(errno));
	hd.sfd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (hd.sfd < 0)
		die(EXIT_SETUP, "hold: accept: %s", strerror(errno));
	close(l);
	netns_enter(init_ns_fd);
}

/* Start the holder and wait until it sleeps in the page fault. */
static void hold_lock(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct pollfd p = { .events = POLLIN };
	struct uffd_msg msg;

	hd.pagesz = sysconf(_SC_PAGESIZE);
	hd.uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (hd.uffd < 0 || ioctl(hd.uffd, UFFDIO_API, &api))
		die(EXIT_SETUP, "userfaultfd: %s (needs CONFIG_USERFAULTFD and root)",
		    strerror(errno));
	hd.page = mmap(NULL, hd.pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hd.page == MAP_FAILED)
		die(EXIT_SETUP, "mmap: %s", strerror(errno));
	reg.range.start = (unsigned long)hd.page;
	reg.range.len = hd.pagesz;
	if (ioctl(hd.uffd, UFFDIO_REGISTER, &reg))
		die(EXIT_SETUP, "UFFDIO_REGISTER: %s", strerror(errno));
	atomic_store(&hd.holder_tid, 0);
	if (pthread_create(&hd.holder, NULL, holder_main, NULL))
		die(EXIT_SETUP, "pthread_create failed");
	p.fd = hd.uffd;
	if (poll(&p, 1, 30000 * time_scale) != 1 ||
	    read(hd.uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		die(EXIT_FAILED, "hold: the holder's send() did not fault");
}

static void hold_release(void)
{
	struct uffdio_zeropage zp = {
		.range = { (unsigned long)hd.page, hd.pagesz },
	};

	if (ioctl(hd.uffd, UFFDIO_ZEROPAGE, &zp))
		die(EXIT_FAILED, "UFFDIO_ZEROPAGE: %s", strerror(errno));
}

static void show_task(const char *who, pid_t t)
{
	char stack[4096], wchan[128] = "";

	task_file(t, "wchan", wchan, sizeof(wchan));
	if (task_file(t, "stack", stack, sizeof(stack)) < 0)
		snprintf(stack, sizeof(stack), "(unreadable)\n");
	say("%s: thread %d, wchan %s, kernel stack:\n%s", who, (int)t, wchan,
	    stack);
}

/*
 * One rmmod with hd.n setters asleep in rcvfix's replacement. @flip: set
 * net.rcvfix.enable of namespace 0 to 0 while they sleep; the replacement
 * re-reads it under the lock and must then act as stock (lock the buffer).
 * Returns how long rmmod was held, in ms.
 */
static int hold_and_unload(int cycle, bool flip)
{
	static const char *const in_replacement[] = { "rcvfix_sk_setsockopt",
						      "lock_sock" };
	static const char *const in_quiesce[] = { "rcvfix_hook_quiesce" };
	const struct rule_env *e = &nss[0].env;
	struct rmmod_job rj = { 0 };
	char stack[4096], mstate[16];
	int size, lock, rcvbuf, i, held_ms;
	double t0, t1, t_quiesce;
	bool quiescing;
	long n;

	/* fixed: stays unlocked; stock: locked */
	hd.val = (e->tcp_rmem1 + 1) / 2;
	size = rule_size(e, clamp_rcvbuf(e, hd.val));
	hold_pair();
	hold_lock();
	for (n = 0; n < hd.n; n++) {
		atomic_store(&hd.setter_tid[n], 0);
		if (pthread_create(&hd.setter[n], NULL, setter_main, (void *)n))
			die(EXIT_SETUP, "pthread_create failed");
	}
	for (i = 0; i < hd.n; i++) {
		while (!atomic_load(&hd.setter_tid[i]))
			sleep_ms(1);
		if (!wait_stack(atomic_load(&hd.setter_tid[i]), in_replacement,
				2, 30 * time_scale, stack, sizeof(stack)))
			failure("cycle %d: setter %d is not asleep in rcvfix_sk_setsockopt/lock_sock:\n%s",
				cycle, i, stack);
	}
	if (show_stacks) {
		show_task("holder (owns the socket lock)",
			  atomic_load(&hd.holder_tid));
		show_task("setter (asleep in rcvfix's replacement)",
			  atomic_load(&hd.setter_tid[0]));
	}
	if (flip)
		enable_write(0, 0);

	enable_fds_close();
	state_begin(&ms);
	t0 = now_s();
	if (pthread_create(&rj.th, NULL, rmmod_main, &rj))
		die(EXIT_SETUP, "pthread_create failed");
	while (!atomic_load(&rj.tid))
		sleep_ms(1);
	/*
	 * rmmod disarms every hook before it waits there: ftrace's walks of
	 * its records, which took over 60 s on an emulated arm64 guest with
	 * the workers running. The wait ends as soon as rmmod is there.
	 */
	quiescing = wait_stack(atomic_load(&rj.tid), in_quiesce, 1,
			       300 * time_scale, stack, sizeof(stack));
	if (!quiescing)
		failure("cycle %d: rmmod is not waiting in rcvfix_hook_quiesce (done %d):\n%s",
			cycle, atomic_load(&rj.done), stack);
	t_quiesce = now_s();
	if (quiescing) {
		/* every hook is disarmed: new calls meet stock code */
		atomic_store(&ms.hooked, 0);
		state_end(&ms);
	}
	sleep_ms(hold_ms);
	if (atomic_load(&rj.done))
		failure("cycle %d: rmmod returned while threads were still in rcvfix's replacement",
			cycle);
	if (!module_state(MODULE_NAME, mstate, sizeof(mstate)) ||
	    strcmp(mstate, "Unloading"))
		failure("cycle %d: /proc/modules does not show rcvfix Unloading",
			cycle);
	if (show_stacks) {
		show_task("rmmod (waiting for the replacement to drain)",
			  atomic_load(&rj.tid));
		say("/proc/modules: rcvfix %s", mstate);
		show_stacks = false;
	}
	if (quiescing)
		state_begin(&ms);
	t1 = now_s();
	hold_release();
	pthread_join(hd.holder, NULL);
	for (i = 0; i < hd.n; i++) {
		pthread_join(hd.setter[i], NULL);
		if (hd.setter_ret[i])
			failure("cycle %d: blocked setter %d: setsockopt ret %d errno %s",
				cycle, i, hd.setter_ret[i],
				errno_name(hd.setter_err[i]));
	}
	pthread_join(rj.th, NULL);
	if (rj.ret)
		die(EXIT_FAILED, "cycle %d: rmmod: %s", cycle,
		    strerror(-rj.ret));
	unloaded();
	state_end(&ms);
	held_ms = (int)((now_s() - t0) * 1000);

	if (hd.sent != hd.pagesz)
		failure("cycle %d: the holder's send() returned %zd", cycle,
			hd.sent);
	rcvbuf = get_int_opt(hd.cfd, SO_RCVBUF);
	lock = get_int_opt(hd.cfd, SO_BUF_LOCK);
	/*
	 * rmmod takes the hooks out of force before it disarms them and
	 * waits: a setter that gets the socket lock after that runs stock
	 * code, enabled or not (arm.c: the rule on every path or on none).
	 */
	if (rcvbuf != size || lock != LOCK_RCV)
		failure("cycle %d: after the held setters (%s): rcvbuf %d lock %d, want %d %d",
			cycle, flip ? "enable flipped to 0" : "enabled",
			rcvbuf, lock, size, LOCK_RCV);
	say("cycle %d: rmmod reached rcvfix_hook_quiesce after %.0f ms, waited there %.0f ms for %d setters asleep in rcvfix's replacement, returned %.0f ms after the lock was released; socket rcvbuf %d lock %d (%s)",
	    cycle, (t_quiesce - t0) * 1000, (t1 - t_quiesce) * 1000, hd.n,
	    (now_s() - t1) * 1000, rcvbuf, lock,
	    flip ? "enable flipped to 0 meanwhile: stock" :
		   "the hooks out of force: stock");
	close(hd.cfd);
	close(hd.sfd);
	close(hd.uffd);
	munmap(hd.page, hd.pagesz);
	return held_ms;
}

/* ---- main ---- */

static void ns_setup(struct ns_ctx *ns, const char *target)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1;

	int rmem_max = rmem_max_read();

	ns->fd = netns_open(ns->name);
	netns_enter(ns->fd);
	rule_env_read(&ns->env, rmem_max);
	a.sin_port = htons(port);
	ns->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ns->listen_fd < 0 ||
	    setsockopt(ns->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
		       sizeof(one)) ||
	    bind(ns->listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ns->listen_fd, 64))
		die(EXIT_SETUP, "ns %s: listen on port %d: %s", ns->name, port,
		    strerror(errno));
	ns->target.sin_family = AF_INET;
	ns->target.sin_port = htons(port);
	if (inet_pton(AF_INET, target ? target : "127.0.0.1",
		      &ns->target.sin_addr) != 1)
		die(EXIT_USAGE, "--target: bad address '%s'", target);
	ns->enable_fd = -1;
	netns_enter(init_ns_fd);
}

const char *prog = "stress-storm";

int main(int argc, char **argv)
{
	const char *names[MAX_NS], *targets[MAX_NS] = { 0 };
	int cycles = 10, phase = 250, hold = 3, timeout = 900, flips = 2, c, i;
	int max_held = 0, holds = 0, shared, hammer = 0;
	bool ksock = false;
	double t_start;
	char mstate[16];
	uint64_t r;

	seed = (uint64_t)time(NULL);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--show-stacks")) {
			show_stacks = true;
			continue;
		} else if (!strcmp(a, "--ksock")) {
			ksock = true;
			continue;
		} else if (!strcmp(a, "--calm-load")) {
			calm_load = true;
			continue;
		}
		if (!v)
			die(EXIT_USAGE, "unknown or incomplete option '%s' (try --help)", a);
		i++;
		if (!strcmp(a, "--ko")) {
			setenv("STORM_KO", v, 1);
		} else if (!strcmp(a, "--ns")) {
			if (n_ns == MAX_NS)
				die(EXIT_USAGE, "at most %d namespaces", MAX_NS);
			names[n_ns++] = v;
		} else if (!strcmp(a, "--cycles")) {
			cycles = (int)parse_num(a, v, 0, 100000);
		} else if (!strcmp(a, "--phase-ms")) {
			phase = (int)parse_num(a, v, 1, 60000);
		} else if (!strcmp(a, "--hold")) {
			hold = (int)parse_num(a, v, 0, MAX_HOLD);
		} else if (!strcmp(a, "--flips")) {
			flips = (int)parse_num(a, v, 0, 1000);
		} else if (!strcmp(a, "--hammer")) {
			hammer = (int)parse_num(a, v, 1, 86400);
			cycles = 0;
		} else if (!strcmp(a, "--pace-us")) {
			pace_us = (int)parse_num(a, v, 0, 1000000);
		} else if (!strcmp(a, "--port")) {
			port = (int)parse_num(a, v, 1, 65535);
		} else if (!strcmp(a, "--seed")) {
			seed = (uint64_t)parse_num(a, v, 0, LLONG_MAX);
		} else if (!strcmp(a, "--timeout")) {
			timeout = (int)parse_num(a, v, 1, 86400);
		} else if (!strcmp(a, "--time-scale")) {
			time_scale = (int)parse_num(a, v, 1, 99);
		} else if (!strcmp(a, "--target")) {
			const char *eq = strchr(v, '=');
			long long ni;

			if (!eq)
				die(EXIT_USAGE, "--target wants I=ADDR");
			ni = parse_num(a, strndupa(v, eq - v), 0, MAX_NS - 1);
			targets[ni] = eq + 1;
		} else {
			die(EXIT_USAGE, "unknown option '%s' (try --help)", a);
		}
	}
	if ((!getenv("STORM_KO") && !hammer) || !n_ns)
		die(EXIT_USAGE, "need --ko PATH (or --hammer S) and at least one --ns NAME (try --help)");
	if (module_state(MODULE_NAME, mstate, sizeof(mstate)))
		die(EXIT_SETUP, "rcvfix is already loaded: rmmod it first");
	hold_ms = phase < 100 ? 100 : phase;
	watchdog(timeout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	r = seed | 1;

	init_ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (init_ns_fd < 0)
		die(EXIT_SETUP, "open own netns: %s", strerror(errno));
	for (i = 0; i < n_ns; i++) {
		nss[i].idx = i;
		nss[i].name = names[i];
		ns_setup(&nss[i], targets[i]);
		say("ns%d %s: tcp_rmem[1] %d rmem_max %d SOCK_MIN_RCVBUF %d",
		    i, names[i], nss[i].env.tcp_rmem1, nss[i].env.rmem_max,
		    nss[i].env.min_rcvbuf);
	}

	for (i = 0; i < n_ns; i++) {
		add_worker(W_RCVBUF, &nss[i]);
		add_worker(W_FORCE, &nss[i]);
		add_worker(W_OTHER, &nss[i]);
		add_worker(W_CONN, &nss[i]);
		add_worker(W_SERVER, &nss[i]);
		if (i < 2)
			add_worker(W_PROC, &nss[i]);
	}
	add_worker(W_NOCAP, &nss[0]);
	if (ksock)
		add_worker(W_KSOCK, &nss[0]);
	/* two threads sharing one socket in namespace 0 */
	netns_enter(nss[0].fd);
	shared = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	netns_enter(init_ns_fd);
	if (shared < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	add_worker(W_CONTEND, &nss[0]);
	workers[n_workers - 1].shared_fd = shared;
	workers[n_workers - 1].val = nss[0].env.tcp_rmem1 / 2 + 3;
	workers[n_workers - 1].other_val = nss[0].env.tcp_rmem1 / 2 - 3;
	add_worker(W_CONTEND, &nss[0]);
	workers[n_workers - 1].shared_fd = shared;
	workers[n_workers - 1].val = nss[0].env.tcp_rmem1 / 2 - 3;
	workers[n_workers - 1].other_val = nss[0].env.tcp_rmem1 / 2 + 3;

	for (i = 0; i < n_workers; i++)
		if (pthread_create(&workers[i].th, NULL, worker_main,
				   &workers[i]))
			die(EXIT_SETUP, "pthread_create failed");
	say("%d workers in %d namespaces, %d cycles, phase %d ms, hold %d, seed %llu",
	    n_workers, n_ns, cycles, phase, hold, (unsigned long long)seed);

	t_start = now_s();
	hd.n = hold;
	for (c = 0; c < cycles; c++) {
		int def = c % 3 == 2, held;
		double tl = now_s();

		load(def);
		say("cycle %d: loaded with default_enable=%d in %.0f ms", c, def,
		    (now_s() - tl) * 1000);
		sleep_ms(phase);
		/* enable in namespace 0 (the hold needs it) and a few others */
		for (i = 0; i < n_ns; i++)
			if (!def && (i == 0 || rnd(&r) % 2))
				enable_write(i, 1);
		sleep_ms(phase);
		if (n_ns > 1) {
			i = 1 + (int)(rnd(&r) % (n_ns - 1));
			enable_write(i, !atomic_load(&ms.enabled[i]));
			sleep_ms(phase);
		}
		for (i = 0; !def && i < flips; i++)
			flip_arming(c, phase, &r);
		check_arm_counters(c);
		if (hold) {
			held = hold_and_unload(c, c % 2 == 1);
			holds++;
			if (held > max_held)
				max_held = held;
		} else {
			tl = now_s();
			unload_plain();
			say("cycle %d: unloaded in %.0f ms", c,
			    (now_s() - tl) * 1000);
		}
		sleep_ms(phase / 2);
	}
	if (hammer)
		sleep_ms(hammer * 1000L);
	/*
	 * Clients first: a client may have connected just before the stop,
	 * and its server must still serve it (servers stopping at the same
	 * time left such a client waiting a minute for a reply, seen on
	 * 6.12-rt). Then the servers, which see no more connections.
	 */
	atomic_store(&stop, 1);
	for (i = 0; i < n_workers; i++)
		if (workers[i].kind != W_SERVER)
			pthread_join(workers[i].th, NULL);
	atomic_store(&stop_servers, 1);
	for (i = 0; i < n_workers; i++)
		if (workers[i].kind == W_SERVER)
			pthread_join(workers[i].th, NULL);
	if (module_state(MODULE_NAME, mstate, sizeof(mstate)))
		failure("rcvfix still loaded at the end");

	printf("summary cycles=%d flips=%ld arms=%ld disarms=%ld holds=%d held_setters=%d max_rmmod_ms=%d setsockopt_checked=%ld strict=%ld during_change=%ld eperm=%ld other_options=%ld connections=%ld bytes=%ld proc_reads=%ld ksock=%ld contended=%ld seconds=%.1f failures=%ld\n",
	       cycles, arming.flips, arming.total_arms, arming.total_disarms,
	       holds, holds * hold, max_held, atomic_load(&st.sets),
	       atomic_load(&st.strict), atomic_load(&st.ambiguous),
	       atomic_load(&st.eperm), atomic_load(&st.other),
	       atomic_load(&st.conns), atomic_load(&st.bytes),
	       atomic_load(&st.proc_reads), atomic_load(&st.ksock),
	       atomic_load(&st.contended), now_s() - t_start,
	       atomic_load(&n_failures));
	return atomic_load(&n_failures) ? EXIT_FAILED : 0;
}
