// SPDX-License-Identifier: GPL-2.0
/*
 * sockdiff: the snapshot half of the stock-differential test (tests/guest/
 * 14-stock-diff.t). For each cell of the receive-buffer matrix it creates
 * sockets in the current network namespace (loopback), makes the request,
 * and prints everything observable about them and their peers, one
 * "CELL SOCKET KEY=VALUE" per line, so that two runs compare with diff.
 */
#include "common.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/mptcp.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <stddef.h>

#include "rcvfix_sockdiff.skel.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef SOL_MPTCP
#define SOL_MPTCP 284
#endif

static const char usage[] =
"usage: sockdiff [-p PORT] [-T SECONDS] [-K] [-M] all|CELL...\n"
"  CELL is FAMILY:STAGE:OPT:VALUE; 'all' is the whole matrix (in order):\n"
"  {tcp,mptcp}:{prebind,listen,estab}:{rcvbuf,rcvbufforce}:VALUE, then\n"
"  {udp,unix}:socket:{rcvbuf,rcvbufforce}:VALUE.\n"
"  FAMILY  tcp, mptcp: a listener, its accepted socket and a client over\n"
"          127.0.0.1 (MPTCP on both ends); 1 KB sent each way\n"
"          udp: one socket; unix: a stream socketpair (request on one end)\n"
"  STAGE   prebind: on the listener before bind and the client before\n"
"          connect; listen: on the listener after listen(); estab: on the\n"
"          accepted and the client socket; bpf: no request from here (a\n"
"          sock_ops program makes it, see bpf_rcvbuf); socket: udp, unix\n"
"  OPT     rcvbuf | rcvbufforce: setsockopt(SOL_SOCKET, SO_RCVBUF[FORCE])\n"
"  VALUE   with T = net.ipv4.tcp_rmem[1] here: small 4096 (the report's\n"
"          value), below T/2-1 (doubled, under T), equal T/2 (doubled, T),\n"
"          above T, locked (SO_BUF_LOCK with the receive lock first, then\n"
"          T; MPTCP has no SO_BUF_LOCK: there SO_RCVBUF T/2-1 first, a\n"
"          request that locks)\n"
"  -p PORT first server port (default 14000; below the ephemeral\n"
"          range), one more per cell\n"
"  -T SEC  give up after SEC seconds (default 120), exit 124\n"
"  -K      no kernel view (the iter/tcp BPF program is not loaded)\n"
"  -M      'all' without its mptcp cells (a kernel built without MPTCP)\n"
"Prints: 'CELL SOCKET KEY=VALUE' lines; SOCKET is listener, accepted,\n"
"  client (socket, peer for udp, unix) after the 1 KB exchange, SOCKET@set\n"
"  right after the request, with .sfN for MPTCP_TCPINFO's\n"
"  subflows and .kernel for the BPF view (TCP sockets and MPTCP subflows).\n"
"  A failed getsockopt prints its errno name as the value.\n"
"  The 1 KB each way is a pattern by stream offset, checked byte by byte.\n"
"Exit: 0 done, 1 a byte of the exchange arrived changed, 2 usage,\n"
"  3 setup error, 124 timeout.\n";

enum { XCHG_BYTES = 1024 };	/* one segment: fits the smallest buffer */

struct cell {
	char name[64];
	int family;		/* 't'cp, 'm'ptcp, 'u'dp, 'x' unix */
	char stage;		/* 'p'rebind, 'l'isten, 'e'stab, 'b'pf, 's'ocket */
	int opt;		/* SO_RCVBUF or SO_RCVBUFFORCE */
	int val;
	int prelock;
	int port;
};

static struct rcvfix_sockdiff *iter_skel;
static struct bpf_link *iter_link;
static int tcp_rmem1;

static const char *const families[] = { "tcp", "mptcp", "udp", "unix" };
static const char *const stages[] = { "prebind", "listen", "estab" };
static const char *const opts[] = { "rcvbuf", "rcvbufforce" };
static const char *const values[] = {
	"small", "below", "equal", "above", "locked",
};
#define N_VALUES (sizeof(values) / sizeof(values[0]))

/* "KEY=VALUE" of socket @sock in @c. */
static void __attribute__((format(printf, 3, 4)))
out(const struct cell *c, const char *sock, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s ", c->name, sock);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* One int socket option as KEY=VALUE, or KEY=ERRNO_NAME. */
static void out_intopt(const struct cell *c, const char *sock, const char *key,
		       int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = 0;

	if (getsockopt(fd, level, name, &v, &len))
		out(c, sock, "%s=%s", key, errno_name(errno));
	else
		out(c, sock, "%s=%d", key, v);
}

/*
 * The buffer lock bits of @fd as KEY=VALUE: the one place that reads them
 * (SO_BUF_LOCK since 5.15; before, the rcvfix_test_buflock test module,
 * through sock_buf_lock()).
 */
static void out_lock(const struct cell *c, const char *sock, int fd)
{
	out(c, sock, "buf_lock=%d", sock_buf_lock(fd));
}

/* Every field of a struct tcp_info the kernel filled (@len bytes). */
static void out_tcp_info(const struct cell *c, const char *sock,
			 const struct tcp_info *ti, size_t len)
{
#define TI(f)								\
	do {								\
		if (offsetof(struct tcp_info, tcpi_##f) +		\
		    sizeof(ti->tcpi_##f) <= len)			\
			out(c, sock, "tcpi_" #f "=%llu",		\
			    (unsigned long long)ti->tcpi_##f);		\
	} while (0)
	TI(state); TI(ca_state); TI(retransmits); TI(probes); TI(backoff);
	TI(options);
	out(c, sock, "tcpi_snd_wscale=%u", ti->tcpi_snd_wscale);
	out(c, sock, "tcpi_rcv_wscale=%u", ti->tcpi_rcv_wscale);
	out(c, sock, "tcpi_delivery_rate_app_limited=%u",
	    ti->tcpi_delivery_rate_app_limited);
	out(c, sock, "tcpi_fastopen_client_fail=%u",
	    ti->tcpi_fastopen_client_fail);
	TI(rto); TI(ato); TI(snd_mss); TI(rcv_mss); TI(unacked); TI(sacked);
	TI(lost); TI(retrans); TI(fackets); TI(last_data_sent);
	TI(last_ack_sent); TI(last_data_recv); TI(last_ack_recv); TI(pmtu);
	TI(rcv_ssthresh); TI(rtt); TI(rttvar); TI(snd_ssthresh);
	TI(snd_cwnd); TI(advmss); TI(reordering); TI(rcv_rtt); TI(rcv_space);
	TI(total_retrans); TI(pacing_rate); TI(max_pacing_rate);
	TI(bytes_acked); TI(bytes_received); TI(segs_out); TI(segs_in);
	TI(notsent_bytes); TI(min_rtt); TI(data_segs_in); TI(data_segs_out);
	TI(delivery_rate); TI(busy_time); TI(rwnd_limited);
	TI(sndbuf_limited); TI(delivered); TI(delivered_ce); TI(bytes_sent);
	TI(bytes_retrans); TI(dsack_dups); TI(reord_seen); TI(rcv_ooopack);
	TI(snd_wnd);
#undef TI
}

/* MPTCP_INFO (connection level) and MPTCP_TCPINFO (each subflow). */
static void out_mptcp(const struct cell *c, const char *sock, int fd)
{
	struct {
		struct mptcp_subflow_data d;
		struct tcp_info ti[4];
	} sf;
	struct mptcp_info mi;
	socklen_t len = sizeof(mi);
	char name[64];
	unsigned int i, n;
	size_t one;

	memset(&mi, 0, sizeof(mi));
	if (getsockopt(fd, SOL_MPTCP, MPTCP_INFO, &mi, &len)) {
		out(c, sock, "mptcp_info=%s", errno_name(errno));
	} else {
		/* The token and the sequence numbers are random per connection. */
		out(c, sock, "mptcpi_subflows=%u", mi.mptcpi_subflows);
		out(c, sock, "mptcpi_flags=%u", mi.mptcpi_flags);
		out(c, sock, "mptcpi_unacked=%llu",
		    (unsigned long long)(mi.mptcpi_write_seq - mi.mptcpi_snd_una));
		out(c, sock, "mptcpi_local_addr_used=%u",
		    mi.mptcpi_local_addr_used);
		out(c, sock, "mptcpi_csum_enabled=%u", mi.mptcpi_csum_enabled);
	}
	memset(&sf, 0, sizeof(sf));
	sf.d.size_subflow_data = sizeof(sf.d);
	sf.d.size_user = sizeof(struct tcp_info);
	len = sizeof(sf);
	if (getsockopt(fd, SOL_MPTCP, MPTCP_TCPINFO, &sf, &len)) {
		out(c, sock, "mptcp_tcpinfo=%s", errno_name(errno));
		return;
	}
	out(c, sock, "mptcp_tcpinfo_subflows=%u", sf.d.num_subflows);
	n = sf.d.num_subflows < 4 ? sf.d.num_subflows : 4;
	one = sf.d.size_kernel < sf.d.size_user ? sf.d.size_kernel :
						  sf.d.size_user;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s.sf%u", sock, i);
		out_tcp_info(c, name, &sf.ti[i], one);
	}
}

/* The user-space view of socket @fd. */
static void snapshot(const struct cell *c, const char *sock, int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	out_intopt(c, sock, "rcvbuf", fd, SOL_SOCKET, SO_RCVBUF);
	out_intopt(c, sock, "sndbuf", fd, SOL_SOCKET, SO_SNDBUF);
	out_lock(c, sock, fd);
	if (c->family != 't' && c->family != 'm')
		return;
	out_intopt(c, sock, "window_clamp", fd, IPPROTO_TCP, TCP_WINDOW_CLAMP);
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		out(c, sock, "tcp_info=%s", errno_name(errno));
	else
		out_tcp_info(c, sock, &ti, len);
	if (c->family == 'm')
		out_mptcp(c, sock, fd);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The kernel view (rcvfix_sockdiff.bpf.c) of the TCP sockets of @c, MPTCP
 * subflows included: one line per socket, renamed by role (the client's
 * port differs per run), sorted, split into KEY=VALUE lines.
 */
static void snapshot_kernel(const struct cell *c)
{
	char buf[16384], *lines[32], *p, *tok, *save;
	int fd, n = 0, i, used = 0, seen[3] = { 0 };
	ssize_t r;

	if (!iter_link)
		return;
	iter_skel->bss->sockdiff_port = c->port;
	fd = bpf_iter_create(bpf_link__fd(iter_link));
	if (fd < 0)
		die(EXIT_SETUP, "bpf_iter_create: %s", strerror(errno));
	while ((r = read(fd, buf + used, sizeof(buf) - 1 - used)) > 0)
		used += r;
	if (r < 0)
		die(EXIT_SETUP, "reading the tcp iterator: %s", strerror(errno));
	close(fd);
	buf[used] = '\0';
	for (p = strtok_r(buf, "\n", &save); p && n < 32;
	     p = strtok_r(NULL, "\n", &save))
		lines[n++] = p;
	qsort(lines, n, sizeof(lines[0]), cmp_str);
	for (i = 0; i < n; i++) {
		static const char *const roles[] = {
			"client", "listener", "accepted",
		};
		char name[32];
		int k;

		if (!strncmp(lines[i], "server=0 ", 9))
			k = 0;
		else if (strstr(lines[i], " state=10 "))	/* TCP_LISTEN */
			k = 1;
		else
			k = 2;
		/* More than one per role (extra subflows): .kernel2, ... */
		if (++seen[k] > 1)
			snprintf(name, sizeof(name), "%s.kernel%d", roles[k],
				 seen[k]);
		else
			snprintf(name, sizeof(name), "%s.kernel", roles[k]);
		for (tok = strtok_r(lines[i], " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save))
			if (strncmp(tok, "server=", 7))
				out(c, name, "%s", tok);
	}
}

/* The request of @c on @fd, its results recorded under @sock. */
static void request(const struct cell *c, const char *sock, int fd)
{
	int two = 2, lockval = tcp_rmem1 / 2 - 1, r;
	char name[32];

	/*
	 * MPTCP has no SO_BUF_LOCK (EOPNOTSUPP), nor has any socket before
	 * 5.15 (ENOPROTOOPT): a locking request first.
	 */
	if (c->prelock && (c->family == 'm' || !have_so_buf_lock())) {
		r = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &lockval,
			       sizeof(lockval));
		out(c, sock, "prelock_rcvbuf=%s", r ? errno_name(errno) : "0");
	} else if (c->prelock) {
		r = setsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &two, sizeof(two));
		out(c, sock, "prelock=%s", r ? errno_name(errno) : "0");
	}
	r = setsockopt(fd, SOL_SOCKET, c->opt, &c->val, sizeof(c->val));
	out(c, sock, "set=%s", r ? errno_name(errno) : "0");
	/* As the request left it, before any traffic (autotuning) moves it. */
	snprintf(name, sizeof(name), "%s@set", sock);
	snapshot(c, name, fd);
}

static int stream_socket(const struct cell *c)
{
	int fd = socket(AF_INET, SOCK_STREAM,
			c->family == 'm' ? IPPROTO_MPTCP : IPPROTO_TCP);

	if (fd < 0)
		die(EXIT_SETUP, "%s: socket: %s%s", c->name, strerror(errno),
		    c->family == 'm' ? " (is net.mptcp.enabled 1?)" : "");
	return fd;
}

/*
 * XCHG_BYTES of the stream pattern (common.h) of direction @seed from
 * @from to @to; every byte read is checked (exit 1 at the first that
 * differs).
 */
static void xfer(const struct cell *c, int from, int to, unsigned int seed)
{
	static char buf[XCHG_BYTES];
	ssize_t n;
	int got = 0;

	pattern_fill(buf, sizeof(buf), 0, seed);
	if (send(from, buf, sizeof(buf), MSG_NOSIGNAL) != sizeof(buf))
		die(EXIT_SETUP, "%s: send: %s", c->name, strerror(errno));
	memset(buf, 0, sizeof(buf));
	while (got < XCHG_BYTES) {
		n = recv(to, buf + got, sizeof(buf) - got, 0);
		if (n <= 0)
			die(EXIT_SETUP, "%s: recv: %s", c->name,
			    n ? strerror(errno) : "EOF");
		got += n;
	}
	pattern_check(c->name, buf, sizeof(buf), 0, seed);
}

/* A listener, a client and the accepted socket; requests per stage. */
static void run_stream(const struct cell *c)
{
	struct sockaddr_in sa;
	int l, a, cl;

	ipv4_addr(&sa, "127.0.0.1", c->port);
	l = stream_socket(c);
	if (c->stage == 'p')
		request(c, "listener", l);
	tcp_listen(l, &sa, "127.0.0.1", c->port);
	if (c->stage == 'l')
		request(c, "listener", l);
	cl = stream_socket(c);
	if (c->stage == 'p')
		request(c, "client", cl);
	if (connect(cl, (struct sockaddr *)&sa, sizeof(sa)))
		die(EXIT_SETUP, "%s: connect: %s", c->name, strerror(errno));
	a = accept(l, NULL, NULL);
	if (a < 0)
		die(EXIT_SETUP, "%s: accept: %s", c->name, strerror(errno));
	if (c->stage == 'e') {
		request(c, "accepted", a);
		request(c, "client", cl);
	}
	xfer(c, cl, a, 0);
	xfer(c, a, cl, 1);
	snapshot(c, "listener", l);
	snapshot(c, "accepted", a);
	snapshot(c, "client", cl);
	snapshot_kernel(c);
	close(cl);
	close(a);
	close(l);
}

static void run_other(const struct cell *c)
{
	int sv[2];

	if (c->family == 'u') {
		sv[0] = socket(AF_INET, SOCK_DGRAM, 0);
		sv[1] = -1;
		if (sv[0] < 0)
			die(EXIT_SETUP, "udp socket: %s", strerror(errno));
	} else if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		die(EXIT_SETUP, "socketpair: %s", strerror(errno));
	}
	request(c, "socket", sv[0]);
	snapshot(c, "socket", sv[0]);
	if (sv[1] >= 0) {
		snapshot(c, "peer", sv[1]);
		close(sv[1]);
	}
	close(sv[0]);
}

static int lookup(const char *what, const char *s, const char *const *names,
		  int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	die(EXIT_USAGE, "unknown %s '%s' (try --help)", what, s);
}

/* Parse "FAMILY:STAGE:OPT:VALUE" into @c, or die. */
static void parse_cell(struct cell *c, const char *spec, int port)
{
	char f[16], s[16], o[16], v[16];
	int fi, vi, stream;

	if (strlen(spec) >= sizeof(c->name) ||
	    sscanf(spec, "%15[^:]:%15[^:]:%15[^:]:%15s", f, s, o, v) != 4)
		die(EXIT_USAGE, "'%s' is not FAMILY:STAGE:OPT:VALUE", spec);
	memset(c, 0, sizeof(*c));
	strcpy(c->name, spec);
	fi = lookup("family", f, families, 4);
	c->family = "tmux"[fi];
	stream = fi < 2;
	if (!strcmp(s, "bpf") && stream)
		c->stage = 'b';
	else if (!strcmp(s, "socket") && !stream)
		c->stage = 's';
	else if (stream)
		c->stage = stages[lookup("stage", s, stages, 3)][0];
	else
		die(EXIT_USAGE, "%s: udp and unix take the stage 'socket'",
		    spec);
	c->opt = lookup("option", o, opts, 2) ? SO_RCVBUFFORCE : SO_RCVBUF;
	vi = lookup("value", v, values, (int)N_VALUES);
	switch (vi) {
	case 0: c->val = 4096; break;
	case 1: c->val = tcp_rmem1 / 2 - 1; break;
	case 2: c->val = tcp_rmem1 / 2; break;
	default: c->val = tcp_rmem1; break;
	}
	c->prelock = vi == 4;
	c->port = port;
}

static void run_cell(const char *spec, int port)
{
	struct cell c;

	parse_cell(&c, spec, port);
	out(&c, "request", "val=%d", c.val);
	if (c.family == 't' || c.family == 'm')
		run_stream(&c);
	else
		run_other(&c);
	fflush(stdout);
}

static void read_tcp_rmem1(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_rmem", "r");
	int lo;

	if (!f || fscanf(f, "%d %d", &lo, &tcp_rmem1) != 2)
		die(EXIT_SETUP, "cannot read /proc/sys/net/ipv4/tcp_rmem");
	fclose(f);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void load_iter(void)
{
	libbpf_set_print(libbpf_quiet);
	iter_skel = rcvfix_sockdiff__open_and_load();
	if (!iter_skel)
		die(EXIT_SETUP, "cannot load the tcp iterator: %s (needs BTF "
		    "and root; -K runs without it)", strerror(errno));
	iter_link = bpf_program__attach_iter(iter_skel->progs.rcvfix_sockdiff_tcp,
					     NULL);
	if (!iter_link)
		die(EXIT_SETUP, "cannot attach the tcp iterator: %s",
		    strerror(errno));
}

const char *prog = "sockdiff";

int main(int argc, char **argv)
{
	int port = 14000, timeout = 120, kernel = 1, mptcp = 1, c, i, s, o, v;
	char spec[64];

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	while ((c = getopt(argc, argv, "p:T:KM")) != -1) {
		switch (c) {
		case 'p': port = parse_int("-p", optarg); break;
		case 'T': timeout = parse_int("-T", optarg); break;
		case 'K': kernel = 0; break;
		case 'M': mptcp = 0; break;
		default: die(EXIT_USAGE, "bad option (try --help)");
		}
	}
	if (optind >= argc)
		die(EXIT_USAGE, "no cell given (try --help)");
	watchdog(timeout);
	read_tcp_rmem1();
	if (kernel)
		load_iter();
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	for (i = optind; i < argc; i++) {
		if (strcmp(argv[i], "all")) {
			run_cell(argv[i], port++);
			continue;
		}
		for (c = 0; c < 4; c++) {
			if (c == 1 && !mptcp)
				continue;
			for (s = 0; s < (c < 2 ? 3 : 1); s++)
				for (o = 0; o < 2; o++)
					for (v = 0; v < (int)N_VALUES;
					     v++) {
						snprintf(spec, sizeof(spec),
							 "%s:%s:%s:%s",
							 families[c],
							 c < 2 ? stages[s] :
							 "socket", opts[o],
							 values[v]);
						run_cell(spec, port++);
					}
		}
	}
	if (iter_link)
		bpf_link__destroy(iter_link);
	rcvfix_sockdiff__destroy(iter_skel);
	return 0;
}
