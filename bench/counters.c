// SPDX-License-Identifier: GPL-2.0
/*
 * bench-counters: does a counter on one shared cache line, written once
 * per setsockopt(SO_RCVBUF) call (rcvfix's per-namespace atomic_long_t),
 * cost anything next to the call itself when every CPU calls at once?
 * Each of THREADS threads (pinned one per CPU) loops over setsockopt() on
 * its own TCP socket and after every call increments either nothing, one
 * atomic shared by all threads (lock-prefixed add, as atomic_long_inc()),
 * or a counter of its own on its own cache line (as this_cpu_inc()). The
 * same loops without the syscall show the bare cost of the increment.
 * Run it on real hardware (the host), not under TCG, which emulates no
 * cache coherence.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_FAIL = 2 };

#include "util.h" /* tools/lib: die(), parse_long() */

#define MAX_THREADS 64
#define LINE 64

enum mode { MODE_NONE, MODE_SHARED, MODE_PERCPU, MODE_NR };
static const char *const mode_names[MODE_NR] = { "none", "shared", "percpu" };

static struct {
	long v;
	char pad[LINE - sizeof(long)];
} __attribute__((aligned(LINE))) counters[MAX_THREADS];

static long shared_counter __attribute__((aligned(LINE)));
static pthread_barrier_t start;
static long calls = 200000;
static int nthreads;
static int with_syscall;
static enum mode mode;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *worker(void *arg)
{
	long id = (long)arg, i;
	int val = 212992, fd;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(id % sysconf(_SC_NPROCESSORS_ONLN), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die(EXIT_FAIL, "socket: %s", strerror(errno));
	pthread_barrier_wait(&start);
	for (i = 0; i < calls; i++) {
		if (with_syscall &&
		    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
			die(EXIT_FAIL, "setsockopt: %s", strerror(errno));
		if (mode == MODE_SHARED)
			__atomic_fetch_add(&shared_counter, 1, __ATOMIC_RELAXED);
		else if (mode == MODE_PERCPU)
			__atomic_store_n(&counters[id].v, counters[id].v + 1,
					 __ATOMIC_RELAXED);
	}
	close(fd);
	return NULL;
}

/* ns per call and thread for one run of all threads. */
static double run(void)
{
	pthread_t t[MAX_THREADS];
	double t0;
	long i;

	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			die(EXIT_FAIL, "pthread_create failed");
	t0 = now_ns();
	pthread_barrier_wait(&start);
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	return (now_ns() - t0) / calls;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

const char *prog = "bench-counters";

int main(int argc, char **argv)
{
	int rounds = 7, c, r, s;
	double v[MODE_NR][64];

	nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	while ((c = getopt(argc, argv, "n:r:t:h")) != -1) {
		switch (c) {
		case 'n':
			calls = parse_long("-n", optarg, 1, 1L << 40, EXIT_USAGE);
			break;
		case 'r':
			rounds = (int)parse_long("-r", optarg, 1, 64, EXIT_USAGE);
			break;
		case 't':
			nthreads = (int)parse_long("-t", optarg, 1, MAX_THREADS,
							EXIT_USAGE);
			break;
		case 'h':
			printf("usage: bench-counters [-n CALLS] [-r ROUNDS] [-t THREADS]\n"
			       "Prints ns per call and thread (median, min) for each counter kind,\n"
			       "with setsockopt(SO_RCVBUF) and without (the bare increment).\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	printf("threads %d, calls %ld per thread, median and min of %d rounds\n",
	       nthreads, calls, rounds);
	/* Modes interleaved round by round: the host's load drifts alike. */
	for (s = 1; s >= 0; s--) {
		with_syscall = s;
		for (r = 0; r < rounds; r++)
			for (mode = 0; mode < MODE_NR; mode++)
				v[mode][r] = run();
		for (mode = 0; mode < MODE_NR; mode++) {
			qsort(v[mode], rounds, sizeof(v[mode][0]), cmp);
			printf("%-22s %-7s %8.1f ns/call (min %.1f)\n",
			       s ? "setsockopt(SO_RCVBUF)" : "increment only",
			       mode_names[mode], v[mode][rounds / 2],
			       v[mode][0]);
		}
	}
	return EXIT_OK;
}
