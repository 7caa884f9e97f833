// SPDX-License-Identifier: GPL-2.0
/*
 * stress-badinput: feeds rcvfix's entry points what callers get wrong: bad
 * setsockopt() lengths, pointers and values, and every class of bad write
 * to net.rcvfix.enable (also from several threads at once). Prints one line
 * per case so that the test can compare runs with the module absent,
 * loaded but disabled, and enabled.
 */
#include "stress.h"

#include <sys/mman.h>

static const char usage[] =
"usage: stress-badinput sockopt\n"
"       stress-badinput sysctl PATH\n"
"       stress-badinput sysctl-race PATH [--threads K] [--seconds S]\n"
"sockopt: a fixed matrix of SO_RCVBUF / SO_RCVBUFFORCE calls on fresh TCP,\n"
"  UDP and UNIX sockets: short and odd optlen, NULL, unmapped, kernel and\n"
"  page-straddling pointers, negative and huge values, and without\n"
"  CAP_NET_ADMIN. One line per case:\n"
"    case=NAME ret=R errno=E before=RCVBUF/LOCK after=RCVBUF/LOCK\n"
"sysctl: writes every class of input to PATH (net.rcvfix.enable): valid,\n"
"  out of range, not a number, empty, very long, at an offset, from a bad\n"
"  pointer; checks each against the rcvfix contract (0 or 1, optionally\n"
"  surrounded by white space; else EINVAL and the value stays). One line:\n"
"    case=NAME ret=R errno=E start=S value=V want=W verdict=ok|FAIL\n"
"sysctl-race: K threads (4) write valid and invalid values to PATH and read\n"
"  it back for S seconds (3): every write must succeed or fail as its\n"
"  input says, every read must give 0 or 1.\n"
"Exit: 0 all cases as expected (sockopt: ran), 1 not, 2 usage, 3 setup.\n";

/* ---- sockopt ---- */

enum ptr_kind {
	P_VALID, P_NULL, P_ONE, P_KERNEL, P_UNMAPPED, P_NOACCESS, P_STRADDLE,
	P_READONLY,
};

static const char *const ptr_names[] = {
	"valid", "null", "addr1", "kernel", "unmapped", "prot_none",
	"straddle", "readonly",
};

static char *rw_page, *none_page, *ro_page, *unmapped;
static long pagesz;
static struct rule_env env;	/* read before CAP_NET_ADMIN is dropped */

static void map_pages(void)
{
	pagesz = sysconf(_SC_PAGESIZE);
	/* three pages: read-write, no access, read-only */
	rw_page = mmap(NULL, 3 * pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped = mmap(NULL, pagesz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (rw_page == MAP_FAILED || unmapped == MAP_FAILED)
		die(EXIT_SETUP, "mmap: %s", strerror(errno));
	none_page = rw_page + pagesz;
	ro_page = rw_page + 2 * pagesz;
	if (mprotect(none_page, pagesz, PROT_NONE) ||
	    munmap(unmapped, pagesz))
		die(EXIT_SETUP, "mprotect/munmap: %s", strerror(errno));
}

static const void *make_ptr(enum ptr_kind k, int val)
{
	switch (k) {
	case P_VALID:
		memcpy(rw_page, &val, sizeof(val));
		return rw_page;
	case P_NULL: return NULL;
	case P_ONE: return (const void *)1;
	case P_KERNEL: return (const void *)0xffffffff81000000UL;
	case P_UNMAPPED: return unmapped;
	case P_NOACCESS: return none_page;
	case P_STRADDLE:	/* 2 readable bytes, then PROT_NONE */
		return none_page - 2;
	case P_READONLY:
		mprotect(ro_page, pagesz, PROT_READ | PROT_WRITE);
		memcpy(ro_page, &val, sizeof(val));
		mprotect(ro_page, pagesz, PROT_READ);
		return ro_page;
	}
	return NULL;
}

static void sock_case(const char *tag, int family, int type, int opt,
		      enum ptr_kind pk, int optlen, int val)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0), ret, err;
	int b_rcv, b_lock;

	if (fd < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	b_rcv = get_int_opt(fd, SO_RCVBUF);
	b_lock = get_int_opt(fd, SO_BUF_LOCK);
	ret = (int)syscall(SYS_setsockopt, fd, SOL_SOCKET, opt,
			   make_ptr(pk, val), optlen);
	err = ret ? errno : 0;
	printf("case=%s/%s/%s/len%d/val%d ret=%d errno=%s before=%d/%d after=%d/%d\n",
	       tag, opt == SO_RCVBUF ? "rcvbuf" : "force", ptr_names[pk],
	       optlen, val, ret, errno_name(err), b_rcv, b_lock,
	       get_int_opt(fd, SO_RCVBUF), get_int_opt(fd, SO_BUF_LOCK));
	close(fd);
}

static void sockopt_matrix(bool nocap)
{
	static const struct {
		const char *tag;
		int family, type;
	} socks[] = {
		{ "tcp", AF_INET, SOCK_STREAM },
		{ "udp", AF_INET, SOCK_DGRAM },
		{ "unix", AF_UNIX, SOCK_STREAM },
	};
	static const int lens[] = { 0, 1, 2, 3, -1, INT_MIN, 5, 8, 4096,
				    INT_MAX };
	int vals[8], opts[] = { SO_RCVBUF, SO_RCVBUFFORCE };
	unsigned int s, o, i;
	enum ptr_kind p;

	vals[0] = -1;
	vals[1] = INT_MIN;
	vals[2] = 0;
	vals[3] = env.tcp_rmem1 / 2 - 1;
	vals[4] = env.tcp_rmem1 / 2;
	vals[5] = INT_MAX;
	vals[6] = INT_MAX / 2 + 1;
	vals[7] = env.rmem_max + 1;
	for (s = 0; s < 3; s++) {
		const char *tag = socks[s].tag;
		char ntag[16];

		if (nocap) {
			snprintf(ntag, sizeof(ntag), "nocap-%s", tag);
			tag = ntag;
		}
		for (o = 0; o < 2; o++) {
			for (i = 0; i < ARRAY_SIZE(lens); i++)
				sock_case(tag, socks[s].family, socks[s].type,
					  opts[o], P_VALID, lens[i], vals[4]);
			for (p = P_NULL; p <= P_READONLY; p++)
				sock_case(tag, socks[s].family, socks[s].type,
					  opts[o], p, 4, vals[4]);
			/* a bad pointer and a short length: length first */
			sock_case(tag, socks[s].family, socks[s].type,
				  opts[o], P_NULL, 2, vals[4]);
			for (i = 0; i < 8; i++)
				sock_case(tag, socks[s].family, socks[s].type,
					  opts[o], P_VALID, 4, vals[i]);
		}
	}
}

static void *nocap_main(void *arg)
{
	(void)arg;
	drop_net_admin();
	sockopt_matrix(true);
	return NULL;
}

/* ---- sysctl ---- */

static int sysctl_get(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

static void sysctl_set(const char *path, int v)
{
	char text[3] = { (char)('0' + v), '\n', 0 };
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, 2) != 2)
		die(EXIT_SETUP, "cannot set %s to %d: %s", path, v,
		    strerror(errno));
	close(fd);
}

/*
 * What a case must give. OK_0/OK_1: write() returns its length and the
 * value is 0/1. EINVAL_KEPT: -1 EINVAL, value unchanged. KEPT: any error
 * (or an ignored write) but the value unchanged. EITHER_1: OK_1 or
 * EINVAL_KEPT (the contract leaves the case open; it must never read as a
 * wrong value).
 */
enum want { OK_0, OK_1, EINVAL_KEPT, KEPT, EITHER_1 };
static const char *const want_names[] = {
	"ok:0", "ok:1", "EINVAL:kept", "error:kept", "ok:1|EINVAL:kept"
};

struct wcase {
	const char *name;
	const char *data;	/* NULL: built by the case */
	size_t len;
	enum want want;
	int start;		/* value before the case */
};

static bool verdict(const struct wcase *c, ssize_t ret, int err, int value,
		    size_t len)
{
	bool ok_write = ret == (ssize_t)len;

	switch (c->want) {
	case OK_0: return ok_write && value == 0;
	case OK_1: return ok_write && value == 1;
	case EINVAL_KEPT: return ret == -1 && err == EINVAL &&
				 value == c->start;
	case KEPT: return value == c->start;
	case EITHER_1: return (ok_write && value == 1) ||
			      (ret == -1 && err == EINVAL &&
			       value == c->start);
	}
	return false;
}

static int sysctl_matrix(const char *path)
{
	/* data of the long cases, built below */
	static char pad4k[4096], ones1m[1 << 20], zeros16[17], zeros15[16];
	static char *big;
	struct wcase cases[] = {
		{ "zero", "0", 1, OK_0, 1 },
		{ "one", "1", 1, OK_1, 0 },
		{ "zero-newline", "0\n", 2, OK_0, 1 },
		{ "one-newline", "1\n", 2, OK_1, 0 },
		{ "spaces-around", " \t1 \n", 5, OK_1, 0 },
		{ "two", "2\n", 2, EINVAL_KEPT, 1 },
		{ "minus-one", "-1\n", 3, EINVAL_KEPT, 0 },
		{ "ten", "10\n", 3, EINVAL_KEPT, 1 },
		{ "int-overflow", "4294967297\n", 11, EINVAL_KEPT, 0 },
		{ "huge-number", "99999999999999999999\n", 21, EINVAL_KEPT, 1 },
		{ "letters", "abc\n", 4, EINVAL_KEPT, 0 },
		{ "digit-then-letters", "1abc\n", 5, EINVAL_KEPT, 0 },
		{ "hex", "0x1\n", 4, EINVAL_KEPT, 0 },
		{ "two-numbers", "1 1\n", 4, EINVAL_KEPT, 0 },
		{ "two-lines", "1\n1\n", 4, EINVAL_KEPT, 0 },
		{ "empty-0-bytes", "", 0, EINVAL_KEPT, 1 },
		{ "newline-only", "\n", 1, EINVAL_KEPT, 1 },
		{ "spaces-only", "   ", 3, EINVAL_KEPT, 0 },
		{ "nul-byte", "\0", 1, EINVAL_KEPT, 1 },
		{ "one-nul-junk", "1\0junk", 6, EINVAL_KEPT, 0 },
		{ "plus-one", "+1\n", 3, EITHER_1, 0 },
		{ "leading-zero", "01\n", 3, EITHER_1, 0 },
		{ "15-bytes-001", zeros15, 15, EITHER_1, 0 },
		{ "16-bytes-0001", zeros16, 16, EITHER_1, 0 },
		{ "1-then-4k-spaces", pad4k, sizeof(pad4k), EITHER_1, 0 },
		{ "1MiB-of-ones", ones1m, sizeof(ones1m), EINVAL_KEPT, 0 },
		{ "8MiB", NULL, 8 << 20, KEPT, 0 },
		{ "bad-pointer", NULL, 2, KEPT, 0 },
		{ "at-offset-1", "1\n", 2, KEPT, 0 },
		{ "second-write-same-fd", "0\n", 2, KEPT, 1 },
	};
	unsigned int i;
	int bad = 0;

	memset(pad4k, ' ', sizeof(pad4k));
	pad4k[0] = '1';
	pad4k[sizeof(pad4k) - 1] = '\n';
	memset(ones1m, '1', sizeof(ones1m));
	memset(zeros15, '0', 15);
	zeros15[14] = '1';
	memset(zeros16, '0', 16);
	zeros16[15] = '1';
	big = malloc(8 << 20);
	if (!big)
		die(EXIT_SETUP, "out of memory");
	memset(big, ' ', 8 << 20);
	big[0] = '1';

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct wcase *c = &cases[i];
		const char *data = c->data;
		ssize_t ret;
		int fd, err, value;

		sysctl_set(path, c->start);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			die(EXIT_SETUP, "open %s: %s", path, strerror(errno));
		if (!strcmp(c->name, "8MiB"))
			data = big;
		else if (!strcmp(c->name, "bad-pointer"))
			data = (const char *)1;
		if (!strcmp(c->name, "at-offset-1")) {
			ret = pwrite(fd, data, c->len, 1);
		} else if (!strcmp(c->name, "second-write-same-fd")) {
			/* "1\n" is accepted, then "0\n" at offset 2 */
			if (write(fd, "1\n", 2) != 2)
				die(EXIT_SETUP, "write 1: %s", strerror(errno));
			c->start = 1;
			ret = write(fd, data, c->len);
		} else {
			ret = write(fd, data, c->len);
		}
		err = ret < 0 ? errno : 0;
		close(fd);
		value = sysctl_get(path);
		if (!verdict(c, ret, err, value, c->len))
			bad++;
		printf("case=%s ret=%zd errno=%s start=%d value=%d want=%s verdict=%s\n",
		       c->name, ret, errno_name(err), c->start, value,
		       want_names[c->want],
		       verdict(c, ret, err, value, c->len) ? "ok" : "FAIL");
	}
	free(big);
	return bad ? EXIT_FAILED : 0;
}

/* ---- sysctl-race ---- */

static const char *race_path;
static atomic_int race_stop;
static atomic_long race_writes, race_reads;

static void *race_writer(void *arg)
{
	static const struct {
		const char *data;
		bool valid;
	} inputs[] = {
		{ "0\n", true }, { "1\n", true }, { "2\n", false },
		{ "x\n", false }, { " 1 ", true }, { "", false },
	};
	uint64_t r = (uintptr_t)arg * 7919 + 17;

	while (!atomic_load(&race_stop)) {
		unsigned int k = rnd(&r) % 6;
		size_t len = strlen(inputs[k].data);
		int fd = open(race_path, O_WRONLY | O_CLOEXEC);
		ssize_t ret;

		if (fd < 0) {
			failure("open %s: %s", race_path, strerror(errno));
			return NULL;
		}
		ret = write(fd, inputs[k].data, len);
		if (inputs[k].valid ? ret != (ssize_t)len :
				      (ret != -1 || errno != EINVAL))
			failure("write '%s': ret %zd errno %s", inputs[k].data,
				ret, errno_name(ret < 0 ? errno : 0));
		close(fd);
		atomic_fetch_add(&race_writes, 1);
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	char buf[64];
	int n;

	(void)arg;
	while (!atomic_load(&race_stop)) {
		n = read_file(race_path, buf, sizeof(buf));
		if (n != 2 || (strcmp(buf, "0\n") && strcmp(buf, "1\n")))
			failure("read %s: '%s' (%d)", race_path, buf, n);
		atomic_fetch_add(&race_reads, 1);
	}
	return NULL;
}

static int sysctl_race(const char *path, int threads, int seconds)
{
	pthread_t th[65];
	int i;

	race_path = path;
	for (i = 0; i <= threads; i++)
		if (pthread_create(&th[i], NULL,
				   i ? race_writer : race_reader,
				   (void *)(uintptr_t)i))
			die(EXIT_SETUP, "pthread_create failed");
	sleep_ms(seconds * 1000L);
	atomic_store(&race_stop, 1);
	for (i = 0; i <= threads; i++)
		pthread_join(th[i], NULL);
	i = sysctl_get(path);
	if (i != 0 && i != 1)
		failure("final value %d", i);
	printf("writers=%d writes=%ld reads=%ld final=%d failures=%ld\n",
	       threads, atomic_load(&race_writes), atomic_load(&race_reads), i,
	       atomic_load(&n_failures));
	return atomic_load(&n_failures) ? EXIT_FAILED : 0;
}

const char *prog = "stress-badinput";

int main(int argc, char **argv)
{
	pthread_t th;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	watchdog(600);
	if (argc == 2 && !strcmp(argv[1], "sockopt")) {
		map_pages();
		rule_env_read(&env, rmem_max_read());
		sockopt_matrix(false);
		/* capabilities are per thread: drop them in another one */
		if (pthread_create(&th, NULL, nocap_main, NULL))
			die(EXIT_SETUP, "pthread_create failed");
		pthread_join(th, NULL);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "sysctl"))
		return sysctl_matrix(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "sysctl-race")) {
		int threads = 4, seconds = 3, i;

		for (i = 3; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "--threads"))
				threads = (int)parse_num(argv[i], argv[i + 1],
							 1, 64);
			else if (!strcmp(argv[i], "--seconds"))
				seconds = (int)parse_num(argv[i], argv[i + 1],
							 1, 3600);
			else
				die(EXIT_USAGE, "unknown option '%s'", argv[i]);
		}
		if (i != argc)
			die(EXIT_USAGE, "options come in pairs (try --help)");
		return sysctl_race(argv[2], threads, seconds);
	}
	die(EXIT_USAGE, "want sockopt, sysctl PATH or sysctl-race PATH (try --help)");
}
