// SPDX-License-Identifier: GPL-2.0
/*
 * sockopt: apply a sequence of SOL_SOCKET buffer options to one socket and
 * print, after each, the return code, errno, SO_RCVBUF and SO_BUF_LOCK, so
 * the guest tests can compare a value table with what the rule predicts.
 */
#include "common.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

static const char usage[] =
"usage: sockopt [-f inet|inet6|unix] [-t stream|dgram] [-p PROTO] OP...\n"
"Runs each OP in order on one socket (TCP over IPv4 by default) and prints\n"
"  op=<OP> ret=<rc> errno=<name|0> rcvbuf=<SO_RCVBUF> lock=<SO_BUF_LOCK>\n"
"OPs:\n"
"  rcvbuf=V rcvbufforce=V sndbuf=V sndbufforce=V buflock=V rcvlowat=V\n"
"              setsockopt(SOL_SOCKET, <option>, &V, 4); V is decimal, 0x..,\n"
"              INT_MAX or INT_MIN\n"
"  OPT:short=V the same with optlen 2          (stock: EINVAL)\n"
"  OPT:long=V  the same with optlen 8          (stock: accepted)\n"
"  OPT:badptr  optval (void *)1, optlen 4      (stock: EFAULT)\n"
"  get         print the state only\n"
"  new         close the socket, open a fresh one, print its state\n"
"  dropcap     drop CAP_NET_ADMIN from this process (all sets)\n"
"  write:PATH=DATA  write DATA to the file PATH (e.g. a sysctl) in between\n"
"Flags: -p PROTO  socket()'s protocol: 0 (default), tcp, udp or mptcp\n"
"       -n N  run the OP list N times (fresh socket each time), printing\n"
"             only the last run (a load generator for unload tests)\n"
"Exit: 0 when every OP ran (whatever setsockopt returned), 2 usage,\n"
"3 when the socket cannot be created or read back.\n";

struct opt_name {
	const char *name;
	int opt;
};

static const struct opt_name opt_names[] = {
	{ "rcvbuf", SO_RCVBUF },
	{ "rcvbufforce", SO_RCVBUFFORCE },
	{ "sndbuf", SO_SNDBUF },
	{ "sndbufforce", SO_SNDBUFFORCE },
	{ "buflock", SO_BUF_LOCK },
	{ "rcvlowat", SO_RCVLOWAT },
};

static int family = AF_INET, type = SOCK_STREAM, protocol;
static int quiet;	/* -n: suppress output of all runs but the last */

static int open_socket(void)
{
	int fd = socket(family, type, protocol);

	if (fd < 0)
		die(EXIT_SETUP, "socket: %s", strerror(errno));
	return fd;
}

static void print_state(int fd, const char *op, int ret, int err)
{
	int rcvbuf = -1, lock = -1;
	socklen_t len = sizeof(rcvbuf);
	char lockbuf[16];

	if (quiet)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len))
		die(EXIT_SETUP, "getsockopt(SO_RCVBUF): %s", strerror(errno));
	lock = sock_buf_lock(fd);
	if (lock < 0)
		snprintf(lockbuf, sizeof(lockbuf), "?");
	else
		snprintf(lockbuf, sizeof(lockbuf), "%d", lock);
	printf("op=%s ret=%d errno=%s rcvbuf=%d lock=%s\n", op, ret,
	       errno_name(err), rcvbuf, lockbuf);
	fflush(stdout);
}

static int lookup_opt(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(opt_names) / sizeof(opt_names[0]); i++)
		if (strlen(opt_names[i].name) == len &&
		    !strncmp(opt_names[i].name, name, len))
			return opt_names[i].opt;
	die(EXIT_USAGE, "unknown option '%.*s' (try --help)", (int)len, name);
}

/* "write:PATH=DATA": write DATA to PATH in one write() call. */
static void run_write(int fd, const char *op)
{
	const char *path = op + strlen("write:"), *eq = strchr(path, '=');
	char file[4096];
	int f, ret = 0, err = 0;

	if (!eq || (size_t)(eq - path) >= sizeof(file))
		die(EXIT_USAGE, "'%s': need write:PATH=DATA", op);
	snprintf(file, sizeof(file), "%.*s", (int)(eq - path), path);
	f = open(file, O_WRONLY);
	if (f < 0 || write(f, eq + 1, strlen(eq + 1)) < 0) {
		ret = -1;
		err = errno;
	}
	if (f >= 0)
		close(f);
	print_state(fd, op, ret, err);
}

/* Run one "OPT[:MOD][=V]" operation on @fd. */
static void run_setsockopt(int fd, const char *op)
{
	const char *eq = strchr(op, '='), *colon = strchr(op, ':');
	size_t namelen = colon ? (size_t)(colon - op) :
			 eq ? (size_t)(eq - op) : strlen(op);
	int opt = lookup_opt(op, namelen);
	long long val64 = 0;
	socklen_t optlen = sizeof(int);
	const void *optval;
	int val = 0, ret, err;

	if (eq)
		val = parse_int(op, eq + 1);
	val64 = val;
	optval = &val;
	if (colon) {
		size_t modlen = eq ? (size_t)(eq - colon - 1) :
				     strlen(colon + 1);

		if (modlen == 5 && !strncmp(colon + 1, "short", 5)) {
			optlen = 2;
		} else if (modlen == 4 && !strncmp(colon + 1, "long", 4)) {
			optlen = sizeof(val64);
			optval = &val64;
		} else if (modlen == 6 && !strncmp(colon + 1, "badptr", 6)) {
			optval = (const void *)1;
		} else {
			die(EXIT_USAGE, "unknown modifier in '%s'", op);
		}
	} else if (!eq) {
		die(EXIT_USAGE, "'%s' needs =VALUE", op);
	}

	ret = setsockopt(fd, SOL_SOCKET, opt, optval, optlen);
	err = ret ? errno : 0;
	print_state(fd, op, ret, err);
}

static void run_ops(int argc, char **argv, int i)
{
	int fd = open_socket();

	for (; i < argc; i++) {
		const char *op = argv[i];

		if (!strcmp(op, "get")) {
			print_state(fd, op, 0, 0);
		} else if (!strcmp(op, "new")) {
			close(fd);
			fd = open_socket();
			print_state(fd, op, 0, 0);
		} else if (!strcmp(op, "dropcap")) {
			drop_net_admin();
			print_state(fd, op, 0, 0);
		} else if (!strncmp(op, "write:", 6)) {
			run_write(fd, op);
		} else {
			run_setsockopt(fd, op);
		}
	}
	close(fd);
}

const char *prog = "sockopt";

int main(int argc, char **argv)
{
	long long runs = 1, r;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (i + 1 >= argc)
			die(EXIT_USAGE, "%s needs an argument", a);
		if (!strcmp(a, "-f")) {
			const char *f = argv[++i];

			family = !strcmp(f, "inet") ? AF_INET :
				 !strcmp(f, "inet6") ? AF_INET6 :
				 !strcmp(f, "unix") ? AF_UNIX : -1;
			if (family < 0)
				die(EXIT_USAGE, "unknown family '%s'", f);
		} else if (!strcmp(a, "-t")) {
			const char *t = argv[++i];

			type = !strcmp(t, "stream") ? SOCK_STREAM :
			       !strcmp(t, "dgram") ? SOCK_DGRAM : -1;
			if (type < 0)
				die(EXIT_USAGE, "unknown type '%s'", t);
		} else if (!strcmp(a, "-p")) {
			const char *p = argv[++i];

			protocol = !strcmp(p, "0") ? 0 :
				   !strcmp(p, "tcp") ? IPPROTO_TCP :
				   !strcmp(p, "udp") ? IPPROTO_UDP :
				   !strcmp(p, "mptcp") ? IPPROTO_MPTCP : -1;
			if (protocol < 0)
				die(EXIT_USAGE, "unknown protocol '%s'", p);
		} else if (!strcmp(a, "-n")) {
			runs = parse_ll("-n", argv[++i]);
			if (runs < 1)
				die(EXIT_USAGE, "-n: at least 1");
		} else {
			die(EXIT_USAGE, "unknown flag '%s' (try --help)", a);
		}
	}
	if (i >= argc)
		die(EXIT_USAGE, "no operation given (try --help)");

	for (r = 1; r <= runs; r++) {
		quiet = r < runs;
		run_ops(argc, argv, i);
	}
	return 0;
}
