// SPDX-License-Identifier: GPL-2.0
/*
 * stress-nschurn: creates and destroys network namespaces continuously
 * (unshare(CLONE_NEWNET) per thread) while switching net.rcvfix.enable in
 * each and loading/unloading rcvfix, so that the module's per-namespace
 * init and exit race its own registration and removal.
 */
#include "stress.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>

static const char usage[] =
"usage: stress-nschurn [--ko PATH] [options]\n"
"       stress-nschurn --keep K\n"
"Worker threads each create a fresh network namespace with\n"
"unshare(CLONE_NEWNET) (dropping the previous one, which the kernel then\n"
"destroys), write net.rcvfix.enable there, check a SO_RCVBUF call and\n"
"/proc/net/rcvfix against it, and sometimes leave a TCP connection and a\n"
"TIME_WAIT socket behind for the namespace's exit to clean up. Meanwhile\n"
"the main thread loads and unloads PATH (omit --ko for a control run\n"
"without the module).\n"
"--keep K creates K namespaces, keeps them alive until standard input\n"
"reaches end of file or a line, and prints \"kept K\" once they exist.\n"
"Options:\n"
"  --namespaces N   namespaces to create in total (100)\n"
"  --threads K      worker threads (3)\n"
"  --rate R         create at most R namespaces per second in all (10), so\n"
"                   that the module goes through several load cycles\n"
"  --cycle-ms MS    the module stays loaded MS/2..3MS/2 at a time, then\n"
"                   unloaded up to MS/2 (1000)\n"
"  --min-loads L    go on past N namespaces until the module has been\n"
"                   loaded L times during the churn (0)\n"
"  --time-wait      leave TIME_WAIT sockets behind (namespaces then live\n"
"                   on for up to a minute after they are dropped)\n"
"  --seed N, --timeout S (900)\n"
"Prints FAIL: lines and one closing line: summary key=value...\n"
"Exit: 0 all right, 1 failures, 2 usage, 3 setup error, 124 timed out.\n";

#define MODULE_NAME "rcvfix"

/* default_enable of the loaded instance; valid while ms.files */
static atomic_int cur_default;
static struct mod_state ms;
static atomic_long created, target;
/* set once the module has been loaded --min-loads times (or no --ko) */
static atomic_int loads_enough;
static uint64_t seed;
static double t_start, rate = 10;
static bool time_wait;

static struct {
	atomic_long sets, strict, writes, proc_reads, conns, loads;
} st;

/* Make close() of @fd send a reset (no FIN_WAIT or TIME_WAIT left). */
static void abort_on_close(int fd)
{
	struct linger lg = { 1, 0 };

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/*
 * A connection over lo with some traffic; the listener is left open until
 * the namespace is dropped (*keep). With --time-wait the client closes
 * first, leaving a TIME_WAIT socket, which keeps the namespace alive for
 * up to a minute; otherwise it resets the connection.
 */
static void connection(int *keep)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char buf[1024], got[sizeof(buf)];
	int l, c, s = -1;
	long long bad;

	if (!lo_up())
		die(EXIT_SETUP, "lo is down in a new namespace: run as root");
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 4) || getsockname(l, (struct sockaddr *)&a, &alen) ||
	    connect(c, (struct sockaddr *)&a, sizeof(a))) {
		failure("TCP connect over lo: %s", strerror(errno));
	} else {
		s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		pattern_fill(buf, sizeof(buf), 0, 0);
		if (s < 0 || send(c, buf, sizeof(buf), 0) != sizeof(buf) ||
		    recv(s, got, sizeof(got), MSG_WAITALL) != sizeof(got))
			failure("traffic over lo: %s", strerror(errno));
		else if ((bad = pattern_bad(got, sizeof(got), 0, 0)) >= 0)
			failure("traffic over lo: byte %lld of %zu changed",
				bad, sizeof(got));
		else
			atomic_fetch_add(&st.conns, 1);
	}
	/* without --time-wait both ends reset: no orphan outlives them */
	if (!time_wait)
		abort_on_close(s);
	if (!time_wait)
		abort_on_close(c);
	if (c >= 0)
		close(c);
	if (s >= 0)
		close(s);
	*keep = l;
}

static void *worker_main(void *arg)
{
	uint64_t r = seed * 2654435761u + (uintptr_t)arg * 40503u + 1;
	int rmem_max = rmem_max_read(), keep = -1;
	struct rule_env env;
	char buf[2048], *en;
	int n;

	while ((n = (int)atomic_fetch_add(&created, 1)) <
	       atomic_load(&target) || !atomic_load(&loads_enough)) {
		struct call_window w0, w;
		int fd, v = (int)(rnd(&r) % 2), ret, val, lock, size;
		char text[3] = { (char)('0' + v), '\n', 0 };
		bool wrote = false, strict;
		double due = t_start + n / rate;

		if (now_s() < due)
			sleep_ms((long)((due - now_s()) * 1000) + 1);
		if (keep >= 0)
			close(keep);
		keep = -1;
		if (unshare(CLONE_NEWNET))
			die(EXIT_SETUP, "unshare(CLONE_NEWNET): %s",
			    strerror(errno));
		rule_env_read(&env, rmem_max);

		/* the switch of a new namespace starts at default_enable */
		window_open(&ms, 0, &w0);
		fd = open("/proc/sys/net/rcvfix/enable", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			n = (int)pread(fd, buf, sizeof(buf) - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			if (window_strict(&ms, &w0) &&
			    atoi(buf) != atomic_load(&cur_default))
				failure("new namespace: enable %s, default_enable %d",
					buf, atomic_load(&cur_default));
			window_open(&ms, 0, &w0);
			ret = (int)pwrite(fd, text, 2, 0);
			atomic_fetch_add(&st.writes, 1);
			wrote = ret == 2;
			if (!wrote && window_strict(&ms, &w0))
				failure("write %d to net.rcvfix.enable: %s", v,
					strerror(errno));
			close(fd);
		} else if (window_strict(&ms, &w0) && w0.files) {
			failure("net.rcvfix.enable missing while loaded: %s",
				strerror(errno));
		}

		/*
		 * One checked SO_RCVBUF; its state is known only if nothing
		 * changed since the write (or the module stayed away).
		 */
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		val = rnd(&r) % 2 ? env.tcp_rmem1 / 2 : env.tcp_rmem1 / 2 - 1;
		size = rule_size(&env, clamp_rcvbuf(&env, val));
		window_open(&ms, 0, &w);
		ret = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val));
		strict = window_strict(&ms, &w) &&
			 (wrote ? w0.epoch == w.epoch : !w.files);
		lock = get_int_opt(fd, SO_BUF_LOCK);
		atomic_fetch_add(&st.sets, 1);
		atomic_fetch_add(&st.strict, strict);
		if (ret || get_int_opt(fd, SO_RCVBUF) != size)
			failure("SO_RCVBUF %d: ret %d rcvbuf %d, want 0 %d", val,
				ret, get_int_opt(fd, SO_RCVBUF), size);
		if (strict && lock != rule_lock(&env, w.files && v, 0, size))
			failure("SO_RCVBUF %d with %s: lock %d", val,
				!w.files ? "rcvfix absent" :
				v ? "enable 1" : "enable 0", lock);
		close(fd);

		window_open(&ms, 0, &w);
		n = read_file("/proc/thread-self/net/rcvfix", buf, sizeof(buf));
		strict = window_strict(&ms, &w) && (wrote || !w.files) &&
			 (!wrote || w0.epoch == w.epoch);
		atomic_fetch_add(&st.proc_reads, 1);
		en = n >= 0 ? strstr(buf, "\nenable ") : NULL;
		if (n >= 0 && (!en || (strict && wrote && atoi(en + 8) != v)))
			failure("/proc/net/rcvfix: enable wrong or missing (wrote %d)",
				v);
		if (n < 0 && strict && w.files)
			failure("/proc/net/rcvfix: %s while loaded",
				strerror(-n));
		if (n >= 0 && strict && !w.files)
			failure("/proc/net/rcvfix present while unloaded");

		if (rnd(&r) % 3 == 0)
			connection(&keep);
	}
	if (keep >= 0)
		close(keep);
	return NULL;
}

/* --keep: K namespaces alive at once, for footprint measurements. */
static int keep_namespaces(long k)
{
	char line[16];
	long i;

	for (i = 0; i < k; i++) {
		if (unshare(CLONE_NEWNET))
			die(EXIT_SETUP, "unshare(CLONE_NEWNET): %s",
			    strerror(errno));
		/* an open fd keeps the namespace when we move on */
		if (open("/proc/thread-self/ns/net", O_RDONLY) < 0)
			die(EXIT_SETUP, "open ns fd %ld: %s (ulimit -n?)", i,
			    strerror(errno));
	}
	printf("kept %ld\n", k);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return 0;
}

const char *prog = "stress-nschurn";

int main(int argc, char **argv)
{
	const char *ko = NULL;
	int threads = 3, cycle = 1000, timeout = 900, i, ret, def = 0;
	long min_loads = 0;
	pthread_t th[64];
	uint64_t r;
	double t0;
	char params[32], mstate[16];
	long done;

	seed = (uint64_t)time(NULL);
	atomic_store(&target, 100);
	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(o, "--time-wait")) {
			time_wait = true;
			continue;
		}
		if (!v)
			die(EXIT_USAGE, "unknown or incomplete option '%s' (try --help)", o);
		i++;
		if (!strcmp(o, "--ko"))
			ko = v;
		else if (!strcmp(o, "--namespaces"))
			atomic_store(&target, parse_num(o, v, 1, 1000000));
		else if (!strcmp(o, "--min-loads"))
			min_loads = parse_num(o, v, 0, 1000);
		else if (!strcmp(o, "--threads"))
			threads = (int)parse_num(o, v, 1, 64);
		else if (!strcmp(o, "--keep"))
			return keep_namespaces(parse_num(o, v, 1, 100000));
		else if (!strcmp(o, "--rate"))
			rate = (double)parse_num(o, v, 1, 100000);
		else if (!strcmp(o, "--cycle-ms"))
			cycle = (int)parse_num(o, v, 10, 600000);
		else if (!strcmp(o, "--seed"))
			seed = (uint64_t)parse_num(o, v, 0, LLONG_MAX);
		else if (!strcmp(o, "--timeout"))
			timeout = (int)parse_num(o, v, 1, 86400);
		else
			die(EXIT_USAGE, "unknown option '%s' (try --help)", o);
	}
	if (ko && module_state(MODULE_NAME, mstate, sizeof(mstate)))
		die(EXIT_SETUP, "rcvfix is already loaded: rmmod it first");
	watchdog(timeout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	r = seed | 1;
	atomic_store(&loads_enough, !ko || min_loads == 0);

	t0 = t_start = now_s();
	for (i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, worker_main,
				   (void *)(uintptr_t)i))
			die(EXIT_SETUP, "pthread_create failed");
	while (ko && (atomic_load(&created) < atomic_load(&target) ||
		      atomic_load(&st.loads) < min_loads)) {
		def = (int)(rnd(&r) % 2);
		snprintf(params, sizeof(params), "default_enable=%d", def);
		state_begin(&ms);
		ret = module_load(ko, params);
		if (ret)
			die(EXIT_FAILED, "load %s %s: %s", ko, params,
			    strerror(-ret));
		atomic_store(&cur_default, def);
		atomic_store(&ms.hooked, 1);
		atomic_store(&ms.files, 1);
		state_end(&ms);
		if (atomic_fetch_add(&st.loads, 1) + 1 >= min_loads)
			atomic_store(&loads_enough, 1);
		sleep_ms(cycle / 2 + rnd(&r) % cycle);

		state_begin(&ms);
		ret = module_unload(MODULE_NAME);
		if (ret)
			die(EXIT_FAILED, "rmmod: %s", strerror(-ret));
		atomic_store(&ms.hooked, 0);
		atomic_store(&ms.files, 0);
		state_end(&ms);
		sleep_ms(rnd(&r) % (cycle / 2));
	}
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	/* every thread's last count went one past the target */
	done = atomic_load(&created) - threads;
	printf("summary namespaces=%ld loads=%ld setsockopt_checked=%ld strict=%ld enable_writes=%ld proc_reads=%ld connections=%ld seconds=%.1f failures=%ld\n",
	       done, atomic_load(&st.loads), atomic_load(&st.sets),
	       atomic_load(&st.strict), atomic_load(&st.writes),
	       atomic_load(&st.proc_reads), atomic_load(&st.conns),
	       now_s() - t0, atomic_load(&n_failures));
	return atomic_load(&n_failures) ? EXIT_FAILED : 0;
}
