// SPDX-License-Identifier: GPL-2.0
/*
 * stress-loadrace: loads rcvfix with default_enable=1 while setters run in
 * many network namespaces, so that the hooks are armed by the first
 * namespace register_pernet_subsys() initialises while the others still
 * wait for theirs. A namespace not initialised yet has no rcvfix state:
 * the kernel frees a pernet subsystem's state at unload without clearing
 * its slot, and the next load usually gets the same slot, so the slot of
 * such a namespace points at freed memory, often already reused for the
 * new state of another namespace. A setter there must meet stock code,
 * and never count into (or corrupt) somebody else's state.
 */
#include "stress.h"

#include <netinet/in.h>

static const char usage[] =
"usage: stress-loadrace --ko PATH [--namespaces N] [--cycles C] [--pace-us US]\n"
"                       [--timeout S]\n"
"Holds N network namespaces (64), one thread each. In the order they are\n"
"created (the order in which a module load initialises them), they are\n"
"alternately busy (a TCP socket and setsockopt(SO_RCVBUF) in a loop) and\n"
"idle (no socket at all). Each of C cycles (8) loads PATH with\n"
"default_enable=1 while the busy threads run, then stops them and reads\n"
"every namespace's /proc/net/rcvfix: it must be enabled; an idle\n"
"namespace must have counted no call at all, a busy one no more than its\n"
"thread made since the load began (a call counted anywhere else was\n"
"counted into another namespace's state). Then it unloads PATH while the\n"
"setters run again. --pace-us US: busy threads sleep US between calls (0,\n"
"none), which leaves the load CPU time on a slow (emulated) machine.\n"
"Prints a line per cycle, FAIL: lines and one closing line:\n"
"summary key=value...\n"
"Exit: 0 all right, 1 a wrong count, 2 usage, 3 setup error, 124 timed out.\n";

#define MODULE_NAME "rcvfix"
#define MAX_LOADRACE_NS 512

enum phase { PHASE_RUN, PHASE_CHECK, PHASE_STOP };

struct ns_thread {
	pthread_t th;
	int index;
	bool busy;
	atomic_long calls;	/* setsockopt() calls this cycle */
};

static struct ns_thread nst[MAX_LOADRACE_NS];
static atomic_int phase = PHASE_RUN;
static atomic_int cycle;	/* bumped by main to start a cycle */
static atomic_int ready;	/* threads in their namespace / in this cycle */
static atomic_int checked;	/* threads done with this cycle's check */
static int pace_us;		/* busy threads sleep this long per call */

static struct {
	atomic_long calls, counted_busy, counted_idle;
} st;

/*
 * The sum of the "<path>.sets N" lines of this thread's /proc/net/rcvfix,
 * or -errno; *enable from its "enable" line (-1 if missing).
 */
static long rcvfix_sets(int *enable)
{
	char text[4096], *line, *save;
	long sum = 0, v;
	int n;

	*enable = -1;
	n = read_file("/proc/thread-self/net/rcvfix", text, sizeof(text));
	if (n < 0)
		return n;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *dot = strstr(line, ".sets ");

		if (sscanf(line, "enable %ld", &v) == 1)
			*enable = (int)v;
		else if (dot && sscanf(dot, ".sets %ld", &v) == 1)
			sum += v;
	}
	return sum;
}

static void check_counts(struct ns_thread *t, int c)
{
	long calls = atomic_load(&t->calls), sets;
	int enable;

	sets = rcvfix_sets(&enable);
	if (sets < 0) {
		failure("cycle %d: namespace %d: cannot read /proc/net/rcvfix: %s",
			c, t->index, strerror((int)-sets));
		return;
	}
	if (enable != 1)
		failure("cycle %d: namespace %d: enable %d after a load with default_enable=1",
			c, t->index, enable);
	if (sets > calls)
		failure("cycle %d: %s namespace %d counted %ld calls, its thread made %ld",
			c, t->busy ? "busy" : "idle", t->index, sets, calls);
	atomic_fetch_add(t->busy ? &st.counted_busy : &st.counted_idle, sets);
	atomic_fetch_add(&st.calls, calls);
}

/* One setsockopt(SO_RCVBUF) of a busy namespace's thread, counted. */
static void set_rcvbuf(struct ns_thread *t, int fd)
{
	int val = 65536;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
		failure("namespace %d: SO_RCVBUF: %s", t->index,
			strerror(errno));
	atomic_fetch_add(&t->calls, 1);
}

static void *ns_thread_main(void *arg)
{
	struct ns_thread *t = arg;
	int fd = -1, seen = 0, c;

	if (unshare(CLONE_NEWNET))
		die(EXIT_SETUP, "unshare(CLONE_NEWNET): %s", strerror(errno));
	if (t->busy) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die(EXIT_SETUP, "socket: %s", strerror(errno));
	}
	atomic_fetch_add(&ready, 1);

	for (;;) {
		int p = atomic_load(&phase);

		c = atomic_load(&cycle);
		if (p == PHASE_STOP)
			break;
		if (c != seen) {	/* a new cycle: count from here */
			atomic_store(&t->calls, 0);
			seen = c;
			atomic_fetch_add(&ready, 1);
		}
		if (p == PHASE_CHECK) {
			check_counts(t, c);
			atomic_fetch_add(&checked, 1);
			while (atomic_load(&phase) == PHASE_CHECK)
				sleep_ms(1);
			continue;
		}
		if (t->busy) {
			set_rcvbuf(t, fd);
			if (pace_us)
				usleep(pace_us);
		} else {
			sleep_ms(10);	/* only waits for the next phase */
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void wait_count(atomic_int *v, int want)
{
	while (atomic_load(v) < want)
		sleep_ms(1);
}

const char *prog = "stress-loadrace";

int main(int argc, char **argv)
{
	const char *ko = NULL;
	int n = 64, cycles = 8, timeout = 600, i, c, ret;
	char mstate[16];
	double t0, t_load, t_check, t_unload;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!v)
			die(EXIT_USAGE, "unknown or incomplete option '%s' (try --help)", o);
		i++;
		if (!strcmp(o, "--ko"))
			ko = v;
		else if (!strcmp(o, "--namespaces"))
			n = (int)parse_num(o, v, 2, MAX_LOADRACE_NS);
		else if (!strcmp(o, "--cycles"))
			cycles = (int)parse_num(o, v, 1, 100000);
		else if (!strcmp(o, "--pace-us"))
			pace_us = (int)parse_num(o, v, 0, 1000000);
		else if (!strcmp(o, "--timeout"))
			timeout = (int)parse_num(o, v, 1, 86400);
		else
			die(EXIT_USAGE, "unknown option '%s' (try --help)", o);
	}
	if (!ko)
		die(EXIT_USAGE, "--ko PATH is required (try --help)");
	if (module_state(MODULE_NAME, mstate, sizeof(mstate)))
		die(EXIT_SETUP, "rcvfix is already loaded: rmmod it first");
	watchdog(timeout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = now_s();

	/* one at a time: creation order is the order a load walks them in */
	for (i = 0; i < n; i++) {
		nst[i].index = i;
		nst[i].busy = !(i % 2);
		if (pthread_create(&nst[i].th, NULL, ns_thread_main, &nst[i]))
			die(EXIT_SETUP, "pthread_create failed");
		wait_count(&ready, i + 1);
	}

	for (c = 1; c <= cycles; c++) {
		atomic_store(&ready, 0);
		atomic_store(&cycle, c);
		wait_count(&ready, n);	/* every thread has reset its count */
		sleep_ms(20);
		t_load = now_s();
		ret = module_load(ko, "default_enable=1");
		if (ret)
			die(EXIT_FAILED, "load %s default_enable=1: %s", ko,
			    strerror(-ret));
		t_check = now_s();
		atomic_store(&checked, 0);
		atomic_store(&phase, PHASE_CHECK);
		wait_count(&checked, n);
		atomic_store(&phase, PHASE_RUN);
		sleep_ms(20);
		t_unload = now_s();
		ret = module_unload(MODULE_NAME);
		if (ret)
			die(EXIT_FAILED, "rmmod: %s", strerror(-ret));
		say("cycle %d: load %.0f ms, check %.0f ms, rmmod %.0f ms",
		    c, (t_check - t_load) * 1000, (t_unload - t_check) * 1000,
		    (now_s() - t_unload) * 1000);
	}
	atomic_store(&phase, PHASE_STOP);
	for (i = 0; i < n; i++)
		pthread_join(nst[i].th, NULL);

	printf("summary namespaces=%d cycles=%d calls=%ld counted_busy=%ld counted_idle=%ld seconds=%.1f failures=%ld\n",
	       n, cycles, atomic_load(&st.calls),
	       atomic_load(&st.counted_busy), atomic_load(&st.counted_idle),
	       now_s() - t0, atomic_load(&n_failures));
	return atomic_load(&n_failures) ? EXIT_FAILED : 0;
}
