// SPDX-License-Identifier: GPL-2.0
/*
 * stress-pair: two threads set options on the same fresh socket at the same
 * moment, thousands of times: SO_RCVBUF against SO_SNDBUF, the FORCE pair,
 * and SO_RCVBUF against SO_NO_CHECK (whose bit shares a byte with the lock
 * bits on 6.1). Neither may lose the other's update.
 */
#include "stress.h"

static const char usage[] =
"usage: stress-pair [--iterations N] [--expect enabled|stock|either]\n"
"                   [--burst B] [--min-overlapped K] [--seed N]\n"
"                   [--timeout S]\n"
"Runs three races, N iterations each (2000), on fresh sockets of the\n"
"calling thread's namespace; thread A sets the receive buffer while\n"
"thread B sets another option of the same socket:\n"
"  rcvbuf-sndbuf    SO_RCVBUF      | SO_SNDBUF        (TCP)\n"
"  force-sndforce   SO_RCVBUFFORCE | SO_SNDBUFFORCE   (TCP)\n"
"  rcvbuf-nocheck   SO_RCVBUF      | SO_NO_CHECK 1    (UDP)\n"
"Each thread repeats its call B times (8) per round, which widens the window\n"
"in which the two meet. After each round: B's result is intact (SOCK_SNDBUF_LOCK set, sndbuf right, or\n"
"SO_NO_CHECK 1), rcvbuf is right and SOCK_RCVBUF_LOCK is what the rule\n"
"says for --expect: enabled (rcvfix on here), stock, or either (the\n"
"switch is being flipped meanwhile).\n"
"With --min-overlapped K, a race whose calls met in fewer than K rounds goes\n"
"on, up to 20 times N rounds, until they have (the virtual CPUs of an\n"
"emulated guest rarely run at the same moment).\n"
"Prints per race: race=NAME iterations=N overlapped=K failures=F\n"
"(N the rounds run).\n"
"Exit: 0 all right, 1 a lost or wrong update, 2 usage, 3 setup error.\n";

enum expect { EXPECT_ENABLED, EXPECT_STOCK, EXPECT_EITHER };

/*
 * Each side raises its flag before its call and lowers it after; a side
 * that sees the other's flag up at either end of its own call overlapped
 * with it (no clock needed: some emulated clocks are too coarse).
 */
struct side {
	int opt, val;
	int ret, err;
	atomic_int busy;
	bool saw_other;
};

static struct side side_a, side_b;
static atomic_int gen, b_done, quit;
static int cur_fd, burst = 8;

/*
 * A burst of identical calls: the result is that of one call, and the
 * window in which the other thread can meet this one is wider (its
 * virtual CPU may not be running at every moment on a busy host).
 */
static void call(struct side *s, struct side *other)
{
	int j;

	atomic_store(&s->busy, 1);
	s->saw_other = atomic_load(&other->busy);
	for (j = 0; j < burst; j++) {
		s->ret = setsockopt(cur_fd, SOL_SOCKET, s->opt, &s->val,
				    sizeof(s->val));
		s->err = s->ret ? errno : 0;
		s->saw_other |= atomic_load(&other->busy);
		if (s->ret)
			break;
	}
	atomic_store(&s->busy, 0);
}

/*
 * Pin the calling thread to one CPU: A and B on different CPUs really run
 * at the same time (a scheduler may otherwise keep them on one CPU).
 */
static void pin_to(int cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu % n, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Thread B: spins until the next round is released, then races A. */
static void *b_main(void *arg)
{
	int g = 0;
	long spins;

	(void)arg;
	pin_to(1);
	for (;;) {
		g++;
		for (spins = 0; atomic_load(&gen) < g; spins++) {
			if (atomic_load(&quit))
				return NULL;
			if (spins % 4096 == 4095)
				sched_yield();
		}
		call(&side_b, &side_a);
		atomic_store(&b_done, g);
	}
}

static int sndbuf_size(int val, int min_sndbuf)
{
	long long v = val < INT_MAX / 2 ? val : INT_MAX / 2;

	return v * 2 < min_sndbuf ? min_sndbuf : (int)(v * 2);
}

const char *prog = "stress-pair";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int type, opt_a, opt_b;
	} races[] = {
		{ "rcvbuf-sndbuf", SOCK_STREAM, SO_RCVBUF, SO_SNDBUF },
		{ "force-sndforce", SOCK_STREAM, SO_RCVBUFFORCE, SO_SNDBUFFORCE },
		{ "rcvbuf-nocheck", SOCK_DGRAM, SO_RCVBUF, SO_NO_CHECK },
	};
	enum expect expect = EXPECT_ENABLED;
	long iterations = 2000, min_overlapped = 0, i, overlapped, fails;
	int timeout = 600, min_sndbuf, r, a;
	uint64_t rs = (uint64_t)time(NULL) | 1;
	struct rule_env env;
	pthread_t b;
	unsigned int k;

	for (a = 1; a < argc; a++) {
		const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(o, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!v)
			die(EXIT_USAGE, "unknown or incomplete option '%s' (try --help)", o);
		a++;
		if (!strcmp(o, "--iterations"))
			iterations = parse_num(o, v, 1, 100000000);
		else if (!strcmp(o, "--min-overlapped"))
			min_overlapped = parse_num(o, v, 0, 1000000);
		else if (!strcmp(o, "--burst"))
			burst = (int)parse_num(o, v, 1, 10000);
		else if (!strcmp(o, "--seed"))
			rs = (uint64_t)parse_num(o, v, 0, LLONG_MAX) | 1;
		else if (!strcmp(o, "--timeout"))
			timeout = (int)parse_num(o, v, 1, 86400);
		else if (!strcmp(o, "--expect") && !strcmp(v, "enabled"))
			expect = EXPECT_ENABLED;
		else if (!strcmp(o, "--expect") && !strcmp(v, "stock"))
			expect = EXPECT_STOCK;
		else if (!strcmp(o, "--expect") && !strcmp(v, "either"))
			expect = EXPECT_EITHER;
		else
			die(EXIT_USAGE, "bad option '%s %s' (try --help)", o, v);
	}
	watchdog(timeout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	rule_env_read(&env, rmem_max_read());
	cur_fd = socket(AF_INET, SOCK_STREAM, 0);
	r = 0;
	if (cur_fd < 0 || setsockopt(cur_fd, SOL_SOCKET, SO_SNDBUFFORCE, &r,
				     sizeof(r)))
		die(EXIT_SETUP, "cannot measure SOCK_MIN_SNDBUF: %s",
		    strerror(errno));
	min_sndbuf = get_int_opt(cur_fd, SO_SNDBUF);
	close(cur_fd);
	pin_to(0);
	if (pthread_create(&b, NULL, b_main, NULL))
		die(EXIT_SETUP, "pthread_create failed");

	for (k = 0; k < ARRAY_SIZE(races); k++) {
		int h = env.tcp_rmem1 / 2;
		/* below tcp_rmem[1] (locks), at it (fixed: no lock), clamped */
		int vals[] = { h - 1000, h, h + 1, env.rmem_max + 5 };

		overlapped = fails = 0;
		for (i = 0; i < iterations ||
		     (overlapped < min_overlapped && i < 20 * iterations); i++) {
			int size, lock, want_lock, rcvbuf, other;
			bool bad = false;

			cur_fd = socket(AF_INET, races[k].type, 0);
			if (cur_fd < 0)
				die(EXIT_SETUP, "socket: %s", strerror(errno));
			side_a.opt = races[k].opt_a;
			side_a.val = vals[rnd(&rs) % 4];
			side_b.opt = races[k].opt_b;
			side_b.val = races[k].opt_b == SO_NO_CHECK ? 1 :
				     4096 + (int)(rnd(&rs) % 65536);
			atomic_store(&gen, (int)(i + 1));	/* go */
			call(&side_a, &side_b);
			for (r = 0; atomic_load(&b_done) != i + 1; r++)
				if (r % 4096 == 4095)
					sched_yield();
			if (side_a.saw_other || side_b.saw_other)
				overlapped++;

			size = rule_size(&env, races[k].opt_a == SO_RCVBUF ?
					 clamp_rcvbuf(&env, side_a.val) :
					 clamp_force(side_a.val));
			rcvbuf = get_int_opt(cur_fd, SO_RCVBUF);
			lock = get_int_opt(cur_fd, SO_BUF_LOCK);
			want_lock = rule_lock(&env, expect == EXPECT_ENABLED &&
					      rule_applies(cur_fd), 0, size);
			if (side_a.ret || side_b.ret) {
				failure("%s #%ld: setsockopt returned %d/%d (%s/%s)",
					races[k].name, i, side_a.ret,
					side_b.ret, errno_name(side_a.err),
					errno_name(side_b.err));
				bad = true;
			}
			if (rcvbuf != size) {
				failure("%s #%ld: rcvbuf %d after %d, want %d",
					races[k].name, i, rcvbuf, side_a.val,
					size);
				bad = true;
			}
			if (expect == EXPECT_EITHER ?
			    !(size < env.tcp_rmem1 ? lock & LOCK_RCV : 1) :
			    (lock & LOCK_RCV) != want_lock) {
				failure("%s #%ld: SOCK_RCVBUF_LOCK %s after %d (size %d, tcp_rmem[1] %d)",
					races[k].name, i,
					lock & LOCK_RCV ? "set" : "lost",
					side_a.val, size, env.tcp_rmem1);
				bad = true;
			}
			if (races[k].opt_b == SO_NO_CHECK) {
				other = get_int_opt(cur_fd, SO_NO_CHECK);
				if (other != 1 || (lock & LOCK_SND)) {
					failure("%s #%ld: SO_NO_CHECK %d, SO_BUF_LOCK %d",
						races[k].name, i, other, lock);
					bad = true;
				}
			} else {
				other = get_int_opt(cur_fd, SO_SNDBUF);
				if (!(lock & LOCK_SND) ||
				    other != sndbuf_size(side_b.val,
							 min_sndbuf)) {
					failure("%s #%ld: SOCK_SNDBUF_LOCK %s, sndbuf %d after %d",
						races[k].name, i,
						lock & LOCK_SND ? "set" : "lost",
						other, side_b.val);
					bad = true;
				}
			}
			fails += bad;
			close(cur_fd);
		}
		printf("race=%s iterations=%ld overlapped=%ld failures=%ld\n",
		       races[k].name, i, overlapped, fails);
		/* the next race restarts the generation count of B */
		atomic_store(&quit, 1);
		pthread_join(b, NULL);
		atomic_store(&quit, 0);
		atomic_store(&gen, 0);
		atomic_store(&b_done, 0);
		if (pthread_create(&b, NULL, b_main, NULL))
			die(EXIT_SETUP, "pthread_create failed");
	}
	atomic_store(&quit, 1);
	pthread_join(b, NULL);
	return atomic_load(&n_failures) ? EXIT_FAILED : 0;
}
