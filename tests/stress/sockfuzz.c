// SPDX-License-Identifier: GPL-2.0
/*
 * stress-sockfuzz: a bounded, seeded random fuzzer of socket system calls,
 * meant for kernels with KASAN, lockdep and the like. Worker threads share
 * a small table of sockets (TCP, MPTCP, UDP, UNIX) and call setsockopt()
 * and getsockopt() on them with interesting values, odd lengths and bad
 * pointers, bind, listen, connect, accept, send, receive, poll, shut down
 * and close them at random: one thread may close a socket while another is
 * in the middle of a call on it. Optionally one more thread flips
 * net.rcvfix.enable, and the run can drop every privilege first. The
 * kernel's errors are expected and only counted; the real detector is the
 * kernel log, which the test reads.
 */
#include "stress.h"

#include <grp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>

static const char usage[] =
"usage: stress-sockfuzz [options]\n"
"Worker threads share a table of 32 sockets (TCP, MPTCP, UDP over IPv4\n"
"and IPv6, UNIX stream pairs), all non-blocking, and make random socket\n"
"calls on them: socket, setsockopt and getsockopt (SO_RCVBUF,\n"
"SO_RCVBUFFORCE, SO_SNDBUF, SO_RCVLOWAT, SO_BUF_LOCK, TCP_WINDOW_CLAMP,\n"
"... with interesting values, lengths 0-16 and sometimes a NULL or\n"
"inaccessible pointer), bind and listen on 127.0.0.1 or ::1, connect to a\n"
"listener of the table, accept4, send, recv and recvmsg with MSG_DONTWAIT,\n"
"poll and epoll with a zero timeout, ioctl SIOCINQ, shutdown and close;\n"
"one thread may close a socket while another is in a call on it.\n"
"Everything happens in the current network namespace (lo is brought up\n"
"when it is down and the program runs as root).\n"
"Options:\n"
"  --seconds S      stop after S seconds (10)\n"
"  --ops N          or after N operations in all (one to three calls\n"
"                   each), whichever comes first (200000)\n"
"  --threads K      worker threads (3)\n"
"  --seed N         seed of every random choice (default: from the clock;\n"
"                   printed first and in the summary)\n"
"  --toggle         one more thread writes 0 or 1 to\n"
"                   /proc/sys/net/rcvfix/enable every 0-20 ms (a missing\n"
"                   file is counted as toggle_missing)\n"
"  --unprivileged   after setup become uid and gid 65534, without\n"
"                   supplementary groups or any capability: SO_RCVBUFFORCE\n"
"                   must then fail with EPERM, and a write to\n"
"                   net.rcvfix.enable (one at start, and every toggle)\n"
"                   with EACCES or EPERM\n"
"  --timeout S      watchdog: give up after S seconds (3 * seconds + 30)\n"
"The kernel's errors are counted, not failures. FAIL: lines report what\n"
"must not happen: a return value or optlen outside the call's contract\n"
"(a negative buffer size, an optlen beyond the one given), a sysctl\n"
"write that succeeded without privilege, a socket of the table lost or\n"
"leaked. Prints \"seed N\" first, \"errnos NAME=COUNT...\" and one closing\n"
"line: summary seed= ops= calls= errors=, then KIND= and KIND_err= (calls\n"
"and errors) for every kind of call, set_rcvbuf= (setsockopt SO_RCVBUF\n"
"calls), rcvbufforce_eperm=, accepted=, toggle_writes=, toggle_missing=,\n"
"sysctl_denied=, ... failures=.\n"
"Exit: 0 all right, 1 failures, 2 usage, 3 setup error, 124 timed out.\n";

#ifndef SOL_MPTCP
#define SOL_MPTCP 284
#endif
#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif
/* getsockopt(SOL_MPTCP) options (linux/mptcp.h; FULL_INFO since 6.5) */
#define FUZZ_MPTCP_INFO 1
#define FUZZ_MPTCP_TCPINFO 2
#define FUZZ_MPTCP_SUBFLOW_ADDRS 3
#define FUZZ_MPTCP_FULL_INFO 4

#define ENABLE_PATH "/proc/sys/net/rcvfix/enable"
#define NOBODY 65534
#define N_SLOTS 32
#define DATA_SIZE 65536
#define OPT_MAX 1024		/* longest option buffer handed over */
#define MAX_THREADS 64
#define MAX_ERRNO 256
#define MAX_FDS 4096		/* descriptors checked for leaks */

/* ---- what was done: counted per kind of call ---- */

enum op_kind {
	OP_SOCKET, OP_SOCKETPAIR, OP_SETSOCKOPT, OP_GETSOCKOPT, OP_BIND,
	OP_LISTEN, OP_CONNECT, OP_CONNECT_BLOCKING, OP_ACCEPT, OP_SEND,
	OP_RECV, OP_RECVMSG, OP_POLL, OP_EPOLL, OP_SHUTDOWN, OP_LOWAT_READ,
	OP_IOCTL, OP_CLOSE, N_OPS
};

static const char *const op_names[N_OPS] = {
	"socket", "socketpair", "setsockopt", "getsockopt", "bind", "listen",
	"connect", "connect_blocking", "accept", "send", "recv", "recvmsg",
	"poll", "epoll", "shutdown", "lowat_read", "ioctl", "close",
};

/* how often each is chosen, relative to the others (close: see op_close) */
static const int op_weight[N_OPS] = {
	8, 1, 24, 10, 4, 4, 6, 1, 6, 8, 6, 3, 3, 2, 2, 3, 2, 6,
};

static atomic_long op_calls[N_OPS], op_errors[N_OPS];
static atomic_long errno_seen[MAX_ERRNO];

static struct {
	atomic_long set_rcvbuf, set_rcvbufforce, rcvbufforce_eperm;
	atomic_long get_rcvbuf, bad_ptr, mptcp, mptcp_unsupported;
	atomic_long connects, disconnects, accepted, sent_bytes, recv_bytes;
	atomic_long unix_oob_zero;
	atomic_long toggle_writes, toggle_missing, toggle_errors;
	atomic_long sysctl_denied;
} st;

static uint64_t seed;
static bool unprivileged, toggle;
static long max_ops = 200000;
static double t_end;
static atomic_long ops_started, ops_done;
static atomic_bool stop;

static void count_errno(int e)
{
	atomic_fetch_add(&errno_seen[e > 0 && e < MAX_ERRNO ? e : 0], 1);
}

/* One call of @kind returned @ret (-1: failed with errno). */
static void count(enum op_kind kind, long ret)
{
	int e = errno;

	atomic_fetch_add(&op_calls[kind], 1);
	if (ret < 0) {
		atomic_fetch_add(&op_errors[kind], 1);
		count_errno(e);
	}
	errno = e;
}

/* ---- random numbers ---- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 1;	/* xorshift must not start at 0 */
}

/* true with probability 1 / @n */
static bool one_in(uint64_t *r, uint32_t n)
{
	return rnd(r) % n == 0;
}

static const int interesting[] = {
	0, 1, -1, INT_MIN, INT_MAX, INT_MAX / 2, INT_MAX / 2 + 1, 256, 2303,
	2304, 4607, 65535, 65536, 87380, 131072, 6291456,
};

static int pick_val(uint64_t *r)
{
	uint32_t x = rnd(r) % (ARRAY_SIZE(interesting) + 4);

	if (x < ARRAY_SIZE(interesting))
		return interesting[x];
	if (x == ARRAY_SIZE(interesting))
		return (int)rnd(r);
	return (int)(rnd(r) % 1000000);
}

/* ---- the table: a slot is 0 or (fd + 1) | meta << 32 ---- */

enum {
	M_INET = 0, M_INET6 = 1, M_UNIX = 2,	/* family, bits 0-1 */
	M_STREAM = 4, M_MPTCP = 8,
};

static atomic_ullong slots[N_SLOTS];

static int meta_family(int meta)
{
	switch (meta & 3) {
	case M_INET: return AF_INET;
	case M_INET6: return AF_INET6;
	default: return AF_UNIX;
	}
}

/*
 * close() of a descriptor that a slot exchange handed to this thread: it
 * owns it, nobody else closes it, so EBADF means the bookkeeping is lost.
 */
static void close_owned(int fd)
{
	long ret = close(fd);

	count(OP_CLOSE, ret);
	if (ret && errno == EBADF)
		failure("close(%d) of a socket of the table: EBADF", fd);
}

/* Put @fd into slot @k; whatever was there is closed. */
static void slot_put(int k, int fd, int meta)
{
	uint64_t old = atomic_exchange(&slots[k], (uint64_t)(uint32_t)(fd + 1) |
				       (uint64_t)meta << 32);

	if (old)
		close_owned((int)(uint32_t)old - 1);
}

/* A descriptor of the table (-1: none found), not owned: it may be closed
 * meanwhile, even reused for another socket.
 */
static int pick_fd(uint64_t *r, int *meta)
{
	uint64_t v;
	int i;

	for (i = 0; i < 4; i++) {
		v = atomic_load(&slots[rnd(r) % N_SLOTS]);
		if (v) {
			*meta = (int)(v >> 32);
			return (int)(uint32_t)v - 1;
		}
	}
	return -1;
}

/* ---- a worker ---- */

struct worker {
	pthread_t th;
	int id, epfd;
	uint64_t r;
	unsigned char *page;	/* one read-write page of option buffer, */
	unsigned char *noaccess;	/* then one PROT_NONE page */
	char *data;		/* DATA_SIZE bytes to send or receive */
};

static long pagesz;

/*
 * The pointer handed to a call that reads or writes @w->page: usually the
 * page itself (*valid), sometimes NULL, 1, the inaccessible page, two
 * bytes before it (a copy faults half way) or a kernel address.
 */
static void *pick_ptr(struct worker *w, bool *valid)
{
	*valid = false;
	switch (rnd(&w->r) % 40) {
	case 0:
		atomic_fetch_add(&st.bad_ptr, 1);
		return NULL;
	case 1:
		atomic_fetch_add(&st.bad_ptr, 1);
		return (void *)1;
	case 2:
		atomic_fetch_add(&st.bad_ptr, 1);
		return w->noaccess;
	case 3:
		atomic_fetch_add(&st.bad_ptr, 1);
		return w->noaccess - 2;
	case 4:
		atomic_fetch_add(&st.bad_ptr, 1);
		return (void *)0xffffffff81000000UL;
	default:
		*valid = true;
		return w->page;
	}
}

static int pick_len(uint64_t *r, int natural)
{
	static const int lens[] = { 0, 1, 2, 4, 8, 16, -1, OPT_MAX };

	if (rnd(r) % 10 < 7)
		return natural;
	return lens[rnd(r) % ARRAY_SIZE(lens)];
}

static socklen_t loopback(int family, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_addr = in6addr_loopback;
		return sizeof(*sin6);
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof(*sin);
}

/* Port and family of @fd's local address; 0 if it has none. */
static int local_port(int fd, int *family)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	*family = ss.ss_family;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static bool is_listener(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return !getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) && v == 1;
}

/*
 * An address of the table to connect or send to from a socket of
 * @family: a listener's if one of a few random slots is one, else any
 * bound one's; an IPv4 one as ::ffff:127.0.0.1 from IPv6. Port 0 if none.
 */
static socklen_t pick_peer(uint64_t *r, int family, bool want_listener,
			   struct sockaddr_storage *ss)
{
	int i, fd, meta, port = 0, p, fam = AF_INET;
	socklen_t len;

	for (i = 0; i < 4; i++) {
		fd = pick_fd(r, &meta);
		if (fd < 0 || (meta & 3) == M_UNIX)
			continue;
		p = local_port(fd, &fam);
		if (!p)
			continue;
		port = p;
		if (!want_listener || is_listener(fd))
			break;
	}
	if (family == AF_INET6 && fam == AF_INET) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		len = loopback(AF_INET6, port, ss);
		memset(&sin6->sin6_addr, 0, sizeof(sin6->sin6_addr));
		sin6->sin6_addr.s6_addr[10] = 0xff;
		sin6->sin6_addr.s6_addr[11] = 0xff;
		sin6->sin6_addr.s6_addr[12] = 127;
		sin6->sin6_addr.s6_addr[15] = 1;
		return len;
	}
	return loopback(fam == AF_INET6 ? AF_INET6 : AF_INET, port, ss);
}

/* ---- the operations ---- */

static const struct {
	int family, type, proto, meta, weight;
} sock_kinds[] = {
	{ AF_INET, SOCK_STREAM, 0, M_INET | M_STREAM, 2 },
	{ AF_INET, SOCK_STREAM, IPPROTO_TCP, M_INET | M_STREAM, 1 },
	{ AF_INET, SOCK_STREAM, IPPROTO_MPTCP, M_INET | M_STREAM | M_MPTCP, 3 },
	{ AF_INET6, SOCK_STREAM, 0, M_INET6 | M_STREAM, 1 },
	{ AF_INET6, SOCK_STREAM, IPPROTO_TCP, M_INET6 | M_STREAM, 1 },
	{ AF_INET6, SOCK_STREAM, IPPROTO_MPTCP, M_INET6 | M_STREAM | M_MPTCP,
	  2 },
	{ AF_INET, SOCK_DGRAM, 0, M_INET, 1 },
	{ AF_INET6, SOCK_DGRAM, 0, M_INET6, 1 },
	{ AF_UNIX, SOCK_STREAM, 0, M_UNIX | M_STREAM, 1 },
};

static void op_socket(struct worker *w)
{
	int i, total = 0, x, fd;

	for (i = 0; i < (int)ARRAY_SIZE(sock_kinds); i++)
		total += sock_kinds[i].weight;
	x = (int)(rnd(&w->r) % total);
	for (i = 0; x >= sock_kinds[i].weight; i++)
		x -= sock_kinds[i].weight;
	fd = socket(sock_kinds[i].family,
		    sock_kinds[i].type | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    sock_kinds[i].proto);
	count(OP_SOCKET, fd);
	if (sock_kinds[i].proto == IPPROTO_MPTCP) {
		atomic_fetch_add(&st.mptcp, 1);
		/* no MPTCP here (net.mptcp.enabled 0, or not built) */
		if (fd < 0 && (errno == EPROTONOSUPPORT || errno == EINVAL ||
			       errno == ENOPROTOOPT))
			atomic_fetch_add(&st.mptcp_unsupported, 1);
	}
	if (fd >= 0)
		slot_put((int)(rnd(&w->r) % N_SLOTS), fd, sock_kinds[i].meta);
}

static void op_socketpair(struct worker *w)
{
	int sv[2];
	long ret = socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
			      SOCK_CLOEXEC, 0, sv);

	count(OP_SOCKETPAIR, ret);
	if (ret)
		return;
	slot_put((int)(rnd(&w->r) % N_SLOTS), sv[0], M_UNIX | M_STREAM);
	slot_put((int)(rnd(&w->r) % N_SLOTS), sv[1], M_UNIX | M_STREAM);
}

enum val_kind { V_INT, V_BOOL, V_BITS, V_LINGER, V_TIMEVAL, V_RAW };

static const struct set_opt {
	int level, name;
	enum val_kind v;
	int weight;
} set_opts[] = {
	{ SOL_SOCKET, SO_RCVBUF, V_INT, 10 },
	{ SOL_SOCKET, SO_RCVBUFFORCE, V_INT, 5 },
	{ SOL_SOCKET, SO_SNDBUF, V_INT, 2 },
	{ SOL_SOCKET, SO_RCVLOWAT, V_INT, 3 },
	{ SOL_SOCKET, SO_BUF_LOCK, V_BITS, 3 },
	{ SOL_SOCKET, SO_KEEPALIVE, V_BOOL, 1 },
	{ SOL_SOCKET, SO_LINGER, V_LINGER, 1 },
	{ SOL_SOCKET, SO_RCVTIMEO, V_TIMEVAL, 1 },
	{ IPPROTO_TCP, TCP_WINDOW_CLAMP, V_INT, 3 },
	{ IPPROTO_TCP, TCP_NODELAY, V_BOOL, 1 },
	{ IPPROTO_TCP, TCP_MAXSEG, V_INT, 1 },
	{ IPPROTO_TCP, TCP_QUICKACK, V_BOOL, 1 },
	{ IPPROTO_TCP, TCP_CORK, V_BOOL, 1 },
	{ IPPROTO_TCP, TCP_NOTSENT_LOWAT, V_INT, 1 },
	{ SOL_MPTCP, FUZZ_MPTCP_INFO, V_RAW, 1 },
	{ SOL_MPTCP, FUZZ_MPTCP_TCPINFO, V_RAW, 1 },
};

/*
 * Write a value for @o into @w->page (and its first two bytes just before
 * the inaccessible page); returns the option's natural length.
 */
static int fill_value(struct worker *w, const struct set_opt *o)
{
	static const long secs[] = { 0, 1, -1, LONG_MAX, LONG_MIN, 2 };
	static const long usecs[] = { 0, 1, 999999, 1000000, -1 };
	uint64_t *r = &w->r;
	struct linger lg;
	struct timeval tv;
	int v, i, len = sizeof(int);

	switch (o->v) {
	case V_INT:
		v = pick_val(r);
		break;
	case V_BOOL:
		v = one_in(r, 8) ? pick_val(r) : (int)(rnd(r) % 2);
		break;
	case V_BITS:
		v = one_in(r, 4) ? pick_val(r) : (int)(rnd(r) % 4);
		break;
	case V_LINGER:
		/* never more than 1 s: close() waits that long */
		lg.l_onoff = one_in(r, 4) ? pick_val(r) : (int)(rnd(r) % 2);
		lg.l_linger = one_in(r, 16);
		memcpy(w->page, &lg, sizeof(lg));
		len = sizeof(lg);
		goto straddle;
	case V_TIMEVAL:
		tv.tv_sec = secs[rnd(r) % ARRAY_SIZE(secs)];
		tv.tv_usec = usecs[rnd(r) % ARRAY_SIZE(usecs)];
		memcpy(w->page, &tv, sizeof(tv));
		len = sizeof(tv);
		goto straddle;
	default:
		for (i = 0; i < 64; i++)
			w->page[i] = (unsigned char)rnd(r);
		len = 16;
		goto straddle;
	}
	memcpy(w->page, &v, sizeof(v));
straddle:
	memcpy(w->noaccess - 2, w->page, 2);
	return len;
}

static const struct set_opt *pick_set_opt(uint64_t *r)
{
	int i, total = 0, x;

	for (i = 0; i < (int)ARRAY_SIZE(set_opts); i++)
		total += set_opts[i].weight;
	x = (int)(rnd(r) % total);
	for (i = 0; x >= set_opts[i].weight; i++)
		x -= set_opts[i].weight;
	return &set_opts[i];
}

static void op_setsockopt(struct worker *w, int fd)
{
	const struct set_opt *o = pick_set_opt(&w->r);
	int natural = fill_value(w, o), len;
	bool valid;
	void *p = pick_ptr(w, &valid);
	long ret;

	len = pick_len(&w->r, natural);
	ret = setsockopt(fd, o->level, o->name, p, (socklen_t)len);
	count(OP_SETSOCKOPT, ret);
	if (ret != 0 && ret != -1)
		failure("setsockopt(%d, %d, %d, len %d) returned %ld", fd,
			o->level, o->name, len, ret);
	if (o->level != SOL_SOCKET)
		return;
	if (o->name == SO_RCVBUF)
		atomic_fetch_add(&st.set_rcvbuf, 1);
	if (o->name != SO_RCVBUFFORCE)
		return;
	atomic_fetch_add(&st.set_rcvbufforce, 1);
	if (!unprivileged)
		return;
	if (!ret)
		failure("SO_RCVBUFFORCE %d (len %d) succeeded unprivileged",
			valid ? *(int *)w->page : 0, len);
	else if (errno == EPERM)
		atomic_fetch_add(&st.rcvbufforce_eperm, 1);
}

/*
 * What a successful getsockopt() with a full int must have given. A mark
 * of 0 is possible: a plain TCP connection that an MPTCP listener accepts
 * inherits its subflow listener's SO_RCVLOWAT 0 (seen on 6.18).
 */
enum get_check { C_NONE, C_SIZE, C_LOWAT, C_BITS, C_BOOL };

static const struct get_opt {
	int level, name;
	enum get_check c;
} get_opts[] = {
	{ SOL_SOCKET, SO_RCVBUF, C_SIZE },
	{ SOL_SOCKET, SO_RCVBUF, C_SIZE },
	{ SOL_SOCKET, SO_SNDBUF, C_SIZE },
	{ SOL_SOCKET, SO_RCVLOWAT, C_LOWAT },
	{ SOL_SOCKET, SO_BUF_LOCK, C_BITS },
	{ SOL_SOCKET, SO_KEEPALIVE, C_BOOL },
	{ SOL_SOCKET, SO_LINGER, C_NONE },
	{ SOL_SOCKET, SO_RCVTIMEO, C_NONE },
	{ SOL_SOCKET, SO_MEMINFO, C_NONE },
	{ SOL_SOCKET, SO_ACCEPTCONN, C_BOOL },
	{ IPPROTO_TCP, TCP_WINDOW_CLAMP, C_NONE },
	{ IPPROTO_TCP, TCP_NODELAY, C_BOOL },
	{ IPPROTO_TCP, TCP_MAXSEG, C_NONE },
	{ IPPROTO_TCP, TCP_QUICKACK, C_NONE },
	{ IPPROTO_TCP, TCP_CORK, C_BOOL },
	{ IPPROTO_TCP, TCP_NOTSENT_LOWAT, C_NONE },
	{ IPPROTO_TCP, TCP_INFO, C_NONE },
	{ SOL_MPTCP, FUZZ_MPTCP_INFO, C_NONE },
	{ SOL_MPTCP, FUZZ_MPTCP_TCPINFO, C_NONE },
	{ SOL_MPTCP, FUZZ_MPTCP_SUBFLOW_ADDRS, C_NONE },
	{ SOL_MPTCP, FUZZ_MPTCP_FULL_INFO, C_NONE },
};

/*
 * The input of the MPTCP options: struct mptcp_subflow_data (four u32:
 * its own size, subflows, kernel size, user size) for TCPINFO and
 * SUBFLOW_ADDRS; FULL_INFO reads user pointers from the buffer, so it
 * stays zero there (no arrays: nothing is written through them).
 */
static void fill_mptcp_input(struct worker *w, int name)
{
	static const uint32_t users[] = { 0, 8, 16, 24, 64, 256, 0xffffffff };
	uint32_t hdr[4] = { 16, 0, 0, 0 };

	memset(w->page, 0, OPT_MAX);
	if (name == FUZZ_MPTCP_FULL_INFO || name == FUZZ_MPTCP_INFO)
		return;
	hdr[3] = users[rnd(&w->r) % ARRAY_SIZE(users)];
	if (one_in(&w->r, 8))
		hdr[rnd(&w->r) % 3] = rnd(&w->r);
	memcpy(w->page, hdr, sizeof(hdr));
}

static void get_check(const struct get_opt *o, int fd, int len, int got,
		      const unsigned char *buf)
{
	int v;

	if (got > len)
		failure("getsockopt(%d, %d, %d): optlen %d, %d given", fd,
			o->level, o->name, got, len);
	if (got < (int)sizeof(int) || o->c == C_NONE)
		return;
	memcpy(&v, buf, sizeof(v));
	if ((o->c == C_SIZE && v <= 0) || (o->c == C_LOWAT && v < 0) ||
	    (o->c == C_BITS && (v & ~3)) || (o->c == C_BOOL && (v & ~1)))
		failure("getsockopt(%d, %d, %d) gave %d", fd, o->level,
			o->name, v);
}

static void op_getsockopt(struct worker *w, int fd)
{
	static const int lens[] = {
		0, 1, 2, 4, 4, 4, 4, 4, 8, 16, 64, 256, OPT_MAX,
	};
	const struct get_opt *o = &get_opts[rnd(&w->r) % ARRAY_SIZE(get_opts)];
	socklen_t len = lens[rnd(&w->r) % ARRAY_SIZE(lens)], given = len;
	socklen_t *lenp = &len;
	bool valid;
	void *p;
	long ret;

	if (o->level == SOL_MPTCP)
		fill_mptcp_input(w, o->name);
	else
		memset(w->page, 0xa5, OPT_MAX);
	p = pick_ptr(w, &valid);
	/* a bad optlen pointer: EFAULT */
	if (one_in(&w->r, 40)) {
		lenp = one_in(&w->r, 2) ? NULL : (socklen_t *)w->noaccess;
		valid = false;
	}
	ret = getsockopt(fd, o->level, o->name, p, lenp);
	count(OP_GETSOCKOPT, ret);
	if (o->level == SOL_SOCKET && o->name == SO_RCVBUF)
		atomic_fetch_add(&st.get_rcvbuf, 1);
	if (ret != 0 && ret != -1)
		failure("getsockopt(%d, %d, %d, len %u) returned %ld", fd,
			o->level, o->name, given, ret);
	if (!ret && valid)
		get_check(o, fd, (int)given, (int)len, w->page);
}

static void op_bind(struct worker *w, int fd, int meta)
{
	struct sockaddr_storage ss;
	int family = meta_family(meta) == AF_INET6 ? AF_INET6 : AF_INET;
	socklen_t len = loopback(family, 0, &ss);
	long ret;

	switch (rnd(&w->r) % 20) {
	case 0:		/* the address of another socket: EADDRINUSE */
		len = pick_peer(&w->r, family, false, &ss);
		break;
	case 1:		/* too short */
		len = 3;
		break;
	case 2:		/* any address */
		if (family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_addr.s_addr = 0;
		else
			memset(&((struct sockaddr_in6 *)&ss)->sin6_addr, 0,
			       sizeof(struct in6_addr));
		break;
	}
	ret = bind(fd, (struct sockaddr *)&ss, len);
	count(OP_BIND, ret);
}

static void op_listen(struct worker *w, int fd)
{
	static const int backlogs[] = { 0, 1, 4, 16, 128, -1 };

	count(OP_LISTEN, listen(fd, backlogs[rnd(&w->r) %
					   ARRAY_SIZE(backlogs)]));
}

static void op_connect(struct worker *w, int fd, int meta)
{
	struct sockaddr_storage ss;
	socklen_t len;
	long ret;

	if (one_in(&w->r, 16)) {
		/* AF_UNSPEC: disconnect (tcp_disconnect, mptcp_disconnect) */
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_UNSPEC;
		ret = connect(fd, (struct sockaddr *)&ss,
			      sizeof(struct sockaddr));
		count(OP_CONNECT, ret);
		atomic_fetch_add(&st.disconnects, 1);
		return;
	}
	len = pick_peer(&w->r, meta_family(meta), true, &ss);
	ret = connect(fd, (struct sockaddr *)&ss, len);
	count(OP_CONNECT, ret);
	if (!ret || errno == EINPROGRESS)
		atomic_fetch_add(&st.connects, 1);
}

/*
 * A blocking connect() of a new TCP or MPTCP socket, which then joins the
 * table. Its descriptor may be a stale one of the table for another
 * thread: it is blocking only for the connect(), with SO_SNDTIMEO and
 * SO_RCVTIMEO of 50 ms, so that no call of another thread on it blocks
 * for longer either.
 */
static void op_connect_blocking(struct worker *w)
{
	const struct timeval tv = { 0, 50000 };
	struct sockaddr_storage ss;
	bool v6 = one_in(&w->r, 3), mptcp = one_in(&w->r, 2);
	int family = v6 ? AF_INET6 : AF_INET;
	int meta = (v6 ? M_INET6 : M_INET) | M_STREAM | (mptcp ? M_MPTCP : 0);
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			mptcp ? IPPROTO_MPTCP : 0);
	socklen_t len;
	long ret;

	if (fd < 0) {
		count(OP_CONNECT_BLOCKING, -1);
		return;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    fcntl(fd, F_SETFL, 0))
		die(EXIT_SETUP, "blocking socket setup: %s", strerror(errno));
	len = pick_peer(&w->r, family, true, &ss);
	ret = connect(fd, (struct sockaddr *)&ss, len);
	count(OP_CONNECT_BLOCKING, ret);
	if (!ret)
		atomic_fetch_add(&st.connects, 1);
	if (fcntl(fd, F_SETFL, O_NONBLOCK))
		die(EXIT_SETUP, "fcntl O_NONBLOCK: %s", strerror(errno));
	slot_put((int)(rnd(&w->r) % N_SLOTS), fd, meta);
}

static void op_accept(struct worker *w, int fd, int meta)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct sockaddr *a = (struct sockaddr *)&ss;
	socklen_t *lenp = &len;
	int nfd;

	switch (rnd(&w->r) % 10) {
	case 0:
		a = NULL;
		lenp = NULL;
		break;
	case 1:		/* EFAULT: the connection is dropped */
		a = (struct sockaddr *)w->noaccess;
		atomic_fetch_add(&st.bad_ptr, 1);
		break;
	case 2:
		len = 2;
		break;
	}
	nfd = accept4(fd, a, lenp, SOCK_NONBLOCK | SOCK_CLOEXEC);
	count(OP_ACCEPT, nfd);
	if (nfd < 0)
		return;
	if (lenp && len > sizeof(ss))
		failure("accept4: address length %u, more than %zu", len,
			sizeof(ss));
	atomic_fetch_add(&st.accepted, 1);
	slot_put((int)(rnd(&w->r) % N_SLOTS), nfd, meta);
}

static size_t pick_size(uint64_t *r)
{
	static const size_t sizes[] = {
		0, 1, 100, 1000, 1460, 4096, 16384, DATA_SIZE,
	};

	return sizes[rnd(r) % ARRAY_SIZE(sizes)];
}

static void op_send(struct worker *w, int fd, int meta)
{
	struct sockaddr_storage ss;
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
	size_t n = pick_size(&w->r);
	const void *buf = w->data;
	socklen_t len;
	long ret;

	if (one_in(&w->r, 10))
		flags |= MSG_MORE;
	if (one_in(&w->r, 30))
		flags |= MSG_OOB;
	if (one_in(&w->r, 50)) {
		buf = w->noaccess;
		atomic_fetch_add(&st.bad_ptr, 1);
	}
	if (!(meta & M_STREAM) && one_in(&w->r, 2)) {
		/* UDP: to a socket of the table */
		len = pick_peer(&w->r, meta_family(meta), false, &ss);
		ret = sendto(fd, buf, n, flags, (struct sockaddr *)&ss, len);
	} else {
		ret = send(fd, buf, n, flags);
	}
	count(OP_SEND, ret);
	if (ret > (long)n)
		failure("send(%d, %zu): %ld bytes", fd, n, ret);
	else if (ret > 0)
		atomic_fetch_add(&st.sent_bytes, ret);
}

static int recv_flags(uint64_t *r)
{
	int flags = MSG_DONTWAIT;

	if (one_in(r, 5))
		flags |= MSG_PEEK;
	if (one_in(r, 5))
		flags |= MSG_WAITALL;
	if (one_in(r, 30))
		flags |= MSG_OOB;
	return flags;
}

/*
 * A read of 0 bytes with MSG_OOB on a UNIX stream socket that has an
 * out-of-band byte returns 1 and uses the byte up (unix_stream_recv_urg()
 * counts the byte whatever the buffer: 6.1 to 6.18 at least). The
 * kernel's own quirk, counted as unix_oob_zero.
 */
static bool unix_oob_zero(size_t n, int flags, long ret)
{
	if (n || !(flags & MSG_OOB) || ret != 1)
		return false;
	atomic_fetch_add(&st.unix_oob_zero, 1);
	return true;
}

static void op_recv(struct worker *w, int fd)
{
	size_t n = pick_size(&w->r);
	int flags = recv_flags(&w->r);
	void *buf = w->data;
	long ret;

	if (one_in(&w->r, 50)) {
		buf = w->noaccess;
		atomic_fetch_add(&st.bad_ptr, 1);
	}
	ret = recv(fd, buf, n, flags);
	count(OP_RECV, ret);
	if (unix_oob_zero(n, flags, ret))
		return;
	if (ret > (long)n)
		failure("recv(%d, %zu): %ld bytes", fd, n, ret);
	else if (ret > 0)
		atomic_fetch_add(&st.recv_bytes, ret);
}

static void op_recvmsg(struct worker *w, int fd)
{
	char control[64];
	size_t n1 = pick_size(&w->r) / 2, n2 = pick_size(&w->r) / 2;
	struct iovec iov[2] = {
		{ w->data, n1 }, { w->data + DATA_SIZE / 2, n2 },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	int flags = recv_flags(&w->r);
	long ret;

	if (one_in(&w->r, 2)) {
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
	}
	ret = recvmsg(fd, &msg, flags);
	count(OP_RECVMSG, ret);
	if (unix_oob_zero(n1 + n2, flags, ret))
		return;
	if (ret > (long)(n1 + n2) || msg.msg_controllen > sizeof(control))
		failure("recvmsg(%d, %zu): %ld bytes, %zu control", fd,
			n1 + n2, ret, (size_t)msg.msg_controllen);
	else if (ret > 0)
		atomic_fetch_add(&st.recv_bytes, ret);
}

static void op_poll(struct worker *w)
{
	struct pollfd pfd[8];
	int i, n = 1 + (int)(rnd(&w->r) % 8), meta;
	long ret;

	for (i = 0; i < n; i++) {
		pfd[i].fd = pick_fd(&w->r, &meta);
		pfd[i].events = POLLIN | POLLOUT | POLLPRI | POLLRDHUP;
	}
	ret = poll(pfd, n, 0);
	count(OP_POLL, ret);
	if (ret > n)
		failure("poll of %d: %ld ready", n, ret);
}

static void op_epoll(struct worker *w, int fd)
{
	static const uint32_t evs[] = {
		EPOLLIN, EPOLLOUT, EPOLLIN | EPOLLET, EPOLLIN | EPOLLRDHUP,
		EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLET, EPOLLIN | EPOLLONESHOT,
	};
	struct epoll_event ev = { .events = evs[rnd(&w->r) % ARRAY_SIZE(evs)] };
	struct epoll_event out[8];
	long ret;

	ev.data.fd = fd;
	count(OP_EPOLL, epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev));
	ret = epoll_wait(w->epfd, out, 8, 0);
	count(OP_EPOLL, ret);
	if (ret > 8)
		failure("epoll_wait of 8: %ld events", ret);
	if (one_in(&w->r, 2))
		count(OP_EPOLL, epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL));
}

static void op_shutdown(struct worker *w, int fd)
{
	int how = (int)(rnd(&w->r) % 13);	/* 3..12: 3, EINVAL */

	count(OP_SHUTDOWN, shutdown(fd, how < 12 ? how % 3 : 3));
}

/* SO_RCVLOWAT, then what poll() says, then a read */
static void op_lowat_read(struct worker *w, int fd)
{
	static const int marks[] = { 1, 100, 4096, 65536, 131072 };
	int v = one_in(&w->r, 3) ? pick_val(&w->r) :
		marks[rnd(&w->r) % ARRAY_SIZE(marks)];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long ret;

	count(OP_LOWAT_READ, setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &v,
					sizeof(v)));
	count(OP_LOWAT_READ, poll(&pfd, 1, 0));
	ret = recv(fd, w->data, DATA_SIZE, MSG_DONTWAIT);
	count(OP_LOWAT_READ, ret);
	if (ret > DATA_SIZE)
		failure("recv(%d, %d): %ld bytes", fd, DATA_SIZE, ret);
	else if (ret > 0)
		atomic_fetch_add(&st.recv_bytes, ret);
}

static void op_ioctl(struct worker *w, int fd)
{
	static const unsigned long reqs[] = { SIOCINQ, SIOCOUTQ, SIOCOUTQNSD };
	int v;
	void *p = &v;

	if (one_in(&w->r, 20)) {
		p = w->noaccess;
		atomic_fetch_add(&st.bad_ptr, 1);
	}
	count(OP_IOCTL, ioctl(fd, reqs[rnd(&w->r) % ARRAY_SIZE(reqs)], p));
}

/* Take a random slot's socket out of the table and close it. */
static void op_close(struct worker *w)
{
	uint64_t v;
	int i;

	for (i = 0; i < 4; i++) {
		v = atomic_exchange(&slots[rnd(&w->r) % N_SLOTS], 0);
		if (v) {
			close_owned((int)(uint32_t)v - 1);
			return;
		}
	}
}

static enum op_kind pick_op(uint64_t *r)
{
	int i, total = 0, x;

	for (i = 0; i < N_OPS; i++)
		total += op_weight[i];
	x = (int)(rnd(r) % total);
	for (i = 0; x >= op_weight[i]; i++)
		x -= op_weight[i];
	return (enum op_kind)i;
}

static void one_op(struct worker *w)
{
	enum op_kind op = pick_op(&w->r);
	int fd = -1, meta = 0;

	switch (op) {
	case OP_SOCKET:
	case OP_SOCKETPAIR:
	case OP_CONNECT_BLOCKING:
	case OP_POLL:
	case OP_CLOSE:
		break;
	default:
		fd = pick_fd(&w->r, &meta);
		if (fd < 0)
			op = OP_SOCKET;	/* an empty table: fill it */
	}
	switch (op) {
	case OP_SOCKET:
		op_socket(w);
		break;
	case OP_SOCKETPAIR:
		op_socketpair(w);
		break;
	case OP_SETSOCKOPT:
		op_setsockopt(w, fd);
		break;
	case OP_GETSOCKOPT:
		op_getsockopt(w, fd);
		break;
	case OP_BIND:
		op_bind(w, fd, meta);
		break;
	case OP_LISTEN:
		op_listen(w, fd);
		break;
	case OP_CONNECT:
		op_connect(w, fd, meta);
		break;
	case OP_CONNECT_BLOCKING:
		op_connect_blocking(w);
		break;
	case OP_ACCEPT:
		op_accept(w, fd, meta);
		break;
	case OP_SEND:
		op_send(w, fd, meta);
		break;
	case OP_RECV:
		op_recv(w, fd);
		break;
	case OP_RECVMSG:
		op_recvmsg(w, fd);
		break;
	case OP_POLL:
		op_poll(w);
		break;
	case OP_EPOLL:
		op_epoll(w, fd);
		break;
	case OP_SHUTDOWN:
		op_shutdown(w, fd);
		break;
	case OP_LOWAT_READ:
		op_lowat_read(w, fd);
		break;
	case OP_IOCTL:
		op_ioctl(w, fd);
		break;
	default:
		op_close(w);
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop)) {
		if (atomic_fetch_add(&ops_started, 1) >= max_ops ||
		    now_s() >= t_end)
			break;
		one_op(w);
		atomic_fetch_add(&ops_done, 1);
	}
	return NULL;
}

/* ---- net.rcvfix.enable ---- */

/* One write of 0 or 1 to net.rcvfix.enable, counted. */
static void sysctl_write(uint64_t *r)
{
	char text[2] = { (char)('0' + rnd(r) % 2), '\n' };
	int fd = open(ENABLE_PATH, O_WRONLY | O_CLOEXEC), e;
	ssize_t n = -1;

	if (fd >= 0) {
		n = write(fd, text, sizeof(text));
		e = errno;
		close(fd);
	} else {
		e = errno;
	}
	if (n == (ssize_t)sizeof(text)) {
		if (unprivileged)
			failure("writing %c to %s succeeded without privilege",
				text[0], ENABLE_PATH);
		else
			atomic_fetch_add(&st.toggle_writes, 1);
	} else if (unprivileged && (e == EACCES || e == EPERM)) {
		atomic_fetch_add(&st.sysctl_denied, 1);
	} else if (e == ENOENT) {	/* not loaded, or unloaded meanwhile */
		atomic_fetch_add(&st.toggle_missing, 1);
	} else {
		atomic_fetch_add(&st.toggle_errors, 1);
		count_errno(e);
	}
}

static void *toggle_main(void *arg)
{
	uint64_t r = mix64(seed ^ 0x746f67676c65ULL);

	(void)arg;
	while (!atomic_load(&stop)) {
		sleep_ms((long)(rnd(&r) % 21));
		if (!atomic_load(&stop))
			sysctl_write(&r);
	}
	return NULL;
}

/* ---- setup ---- */

/* Become nobody, with no group and no capability left anywhere. */
static void drop_privileges(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { { 0 } };
	int c;

	for (c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno == EINVAL)
			break;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		die(EXIT_SETUP, "becoming uid %d: %s", NOBODY, strerror(errno));
	if (syscall(SYS_capset, &hdr, data) || syscall(SYS_capget, &hdr, data))
		die(EXIT_SETUP, "capset: %s", strerror(errno));
	if (data[0].effective | data[0].permitted | data[0].inheritable |
	    data[1].effective | data[1].permitted | data[1].inheritable)
		die(EXIT_SETUP, "capabilities left after dropping them");
	if (!setuid(0) || getuid() != NOBODY || getgid() != NOBODY)
		die(EXIT_SETUP, "privileges not dropped");
}

/* Open descriptors below MAX_FDS, as a bitmap; returns how many. */
static int open_fds(unsigned char *map)
{
	struct rlimit rl;
	int fd, n = 0, max = MAX_FDS;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)max)
		max = (int)rl.rlim_cur;
	memset(map, 0, MAX_FDS);
	for (fd = 0; fd < max; fd++)
		if (fcntl(fd, F_GETFD) != -1) {
			map[fd] = 1;
			n++;
		}
	return n;
}

static void worker_init(struct worker *w, int id)
{
	w->id = id;
	w->r = mix64(seed + (uint64_t)id * 0x632be59bd9b4e019ULL);
	w->page = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->data = malloc(DATA_SIZE);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->page == MAP_FAILED || !w->data || w->epfd < 0)
		die(EXIT_SETUP, "worker setup: %s", strerror(errno));
	w->noaccess = w->page + pagesz;
	if (mprotect(w->noaccess, pagesz, PROT_NONE))
		die(EXIT_SETUP, "mprotect: %s", strerror(errno));
	memset(w->data, 'x', DATA_SIZE);
}

static const struct {
	const char *name;
	atomic_long *v;
} extras[] = {
	{ "set_rcvbuf", &st.set_rcvbuf },
	{ "set_rcvbufforce", &st.set_rcvbufforce },
	{ "rcvbufforce_eperm", &st.rcvbufforce_eperm },
	{ "get_rcvbuf", &st.get_rcvbuf },
	{ "bad_ptr", &st.bad_ptr },
	{ "mptcp", &st.mptcp },
	{ "mptcp_unsupported", &st.mptcp_unsupported },
	{ "connects", &st.connects },
	{ "disconnects", &st.disconnects },
	{ "accepted", &st.accepted },
	{ "sent_bytes", &st.sent_bytes },
	{ "recv_bytes", &st.recv_bytes },
	{ "unix_oob_zero", &st.unix_oob_zero },
	{ "toggle_writes", &st.toggle_writes },
	{ "toggle_missing", &st.toggle_missing },
	{ "toggle_errors", &st.toggle_errors },
	{ "sysctl_denied", &st.sysctl_denied },
};

static void print_summary(int threads, double secs)
{
	long calls = 0, errors = 0;
	int i;

	printf("errnos");
	for (i = 0; i < MAX_ERRNO; i++)
		if (atomic_load(&errno_seen[i]))
			printf(" %s=%ld", i ? errno_name(i) : "other",
			       atomic_load(&errno_seen[i]));
	printf("\nsummary seed=%llu seconds=%.1f threads=%d unprivileged=%d",
	       (unsigned long long)seed, secs, threads, unprivileged);
	for (i = 0; i < N_OPS; i++) {
		calls += atomic_load(&op_calls[i]);
		errors += atomic_load(&op_errors[i]);
	}
	printf(" ops=%ld calls=%ld errors=%ld", atomic_load(&ops_done), calls,
	       errors);
	for (i = 0; i < N_OPS; i++)
		printf(" %s=%ld %s_err=%ld", op_names[i],
		       atomic_load(&op_calls[i]), op_names[i],
		       atomic_load(&op_errors[i]));
	for (i = 0; i < (int)ARRAY_SIZE(extras); i++)
		printf(" %s=%ld", extras[i].name, atomic_load(extras[i].v));
	printf(" failures=%ld\n", atomic_load(&n_failures));
}

const char *prog = "stress-sockfuzz";

int main(int argc, char **argv)
{
	static unsigned char fds0[MAX_FDS], fds1[MAX_FDS];
	static struct worker w[MAX_THREADS];
	int threads = 3, seconds = 10, timeout = -1, i, n0, n1;
	struct timespec ts;
	pthread_t tog;
	uint64_t r;
	uint64_t v;
	double t0;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = ((uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000) &
	       0xffffffffffffULL;
	for (i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(o, "--toggle")) {
			toggle = true;
			continue;
		}
		if (!strcmp(o, "--unprivileged")) {
			unprivileged = true;
			continue;
		}
		if (!val)
			die(EXIT_USAGE, "incomplete option '%s' (try --help)",
			    o);
		i++;
		if (!strcmp(o, "--seconds"))
			seconds = (int)parse_num(o, val, 1, 86400);
		else if (!strcmp(o, "--ops"))
			max_ops = (long)parse_num(o, val, 1, LONG_MAX / 2);
		else if (!strcmp(o, "--threads"))
			threads = (int)parse_num(o, val, 1, MAX_THREADS);
		else if (!strcmp(o, "--seed"))
			seed = (uint64_t)parse_num(o, val, 0, LLONG_MAX);
		else if (!strcmp(o, "--timeout"))
			timeout = (int)parse_num(o, val, 1, 86400 * 4);
		else
			die(EXIT_USAGE, "unknown option '%s' (try --help)", o);
	}
	if (timeout < 0)
		timeout = seconds * 3 + 30;
	if (unprivileged && geteuid())
		die(EXIT_SETUP, "--unprivileged drops privileges: run as root");
	watchdog(timeout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %llu\n", (unsigned long long)seed);

	/* 0-2 open, so that no socket of the table becomes stdout */
	while ((i = open("/dev/null", O_RDWR)) >= 0 && i < 3)
		;
	if (i > 2)
		close(i);
	signal(SIGPIPE, SIG_IGN);
	pagesz = sysconf(_SC_PAGESIZE);
	if (!lo_up())
		msg("lo is down and this is not root: no connections");
	for (i = 0; i < threads; i++)
		worker_init(&w[i], i);
	if (unprivileged) {
		drop_privileges();
		r = mix64(seed ^ 0x756e70726976ULL);
		sysctl_write(&r);
	}

	n0 = open_fds(fds0);
	t0 = now_s();
	t_end = t0 + seconds;
	for (i = 0; i < threads; i++)
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			die(EXIT_SETUP, "pthread_create failed");
	if (toggle && pthread_create(&tog, NULL, toggle_main, NULL))
		die(EXIT_SETUP, "pthread_create failed");
	for (i = 0; i < threads; i++)
		pthread_join(w[i].th, NULL);
	atomic_store(&stop, true);
	if (toggle)
		pthread_join(tog, NULL);

	/* every socket left is in the table, once: close them all */
	for (i = 0; i < N_SLOTS; i++) {
		v = atomic_exchange(&slots[i], 0);
		if (v)
			close_owned((int)(uint32_t)v - 1);
	}
	n1 = open_fds(fds1);
	if (n1 != n0) {
		for (i = 0; i < MAX_FDS; i++)
			if (fds0[i] != fds1[i])
				break;
		failure("%d descriptors open at the end, %d at the start (first difference: %d)",
			n1, n0, i);
	}
	for (i = 0; i < threads; i++)
		close(w[i].epfd);
	print_summary(threads, now_s() - t0);
	return atomic_load(&n_failures) ? EXIT_FAILED : 0;
}
