// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfix-bench: a TCP bulk (or rate-limited) transfer that reports what the
 * receive-buffer rules did to it: throughput, window scales, receive buffer
 * and its lock, wakeups and CPU per MB. Modelled on the kernel's tcp_mmap.
 *
 * One connection carries, in order: a hello from the client (its options),
 * the data from the sender until it shuts down writing, and the receiver's
 * measurements back to the sender. Both ends print a report; the sender's
 * has both halves, so the client's report is complete unless -R is given.
 * This file owns the command line: options, their checks, the defaults.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcvfix-bench.h"

struct cfg cfg = {
	.port = 8787,
	.rcvbuf_on = ON_NONE,
	.seconds = 5.0,
	.write_size = 0,
	.read_size = 512 * 1024,
	.timeout = 10.0,
	.wait = -1.0,
};

const char *prog = "rcvfix-bench";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s -s [OPTIONS]            run the server\n"
		"       %s -c ADDRESS [OPTIONS]    run the client\n"
		"Measure a TCP transfer: throughput, window scales, the receive buffer and\n"
		"its lock, wakeups and CPU per MB received. By default the client sends and\n"
		"the server receives; the client's report holds both sides' figures.\n"
		"\n"
		"Roles:\n"
		"  -s, --server           listen, receive (or send with a -R client)\n"
		"  -c, --client ADDRESS   connect to ADDRESS (IPv4, IPv6 or a host name)\n"
		"  -p, --port PORT        TCP port (default 8787)\n"
		"  -B, --bind ADDRESS     server: listen on ADDRESS only (default: all)\n"
		"  -R, --reverse          client: the server sends, the client receives\n"
		"  -1, --once             server: exit after one connection\n"
		"\n"
		"Receive side:\n"
		"      --rcvbuf SIZE      setsockopt(SO_RCVBUF, SIZE) (default: not set,\n"
		"                         autotuning)\n"
		"      --rcvbuf-on WHERE  listener: on the server's listening socket, before\n"
		"                         listen() (server default); accepted: on the\n"
		"                         accepted socket; client: on the client's socket,\n"
		"                         before connect() (client default)\n"
		"      --rcvlowat SIZE    setsockopt(SO_RCVLOWAT) on the receiving socket;\n"
		"                         given to the client, it applies on the receiver\n"
		"      --read-size SIZE   bytes per read (default 512K)\n"
		"\n"
		"Send side (client options; the server follows them with -R):\n"
		"  -t, --time SECONDS     send for SECONDS (default 5)\n"
		"  -n, --bytes SIZE       send SIZE bytes (stops at whichever of -t, -n\n"
		"                         comes first; -n alone sets no time limit)\n"
		"      --rate RATE        rate-limited sender: RATE bit/s (suffix k, M, G:\n"
		"                         powers of 1000), small writes with TCP_NODELAY\n"
		"      --write-size SIZE  bytes per write (default 128K, 1000 with --rate)\n"
		"      --nodelay          TCP_NODELAY without --rate\n"
		"      --verify           the sender writes a pattern of each byte's stream\n"
		"                         offset, the receiver checks every byte it reads\n"
		"                         (exit 2 at the first that differs)\n"
		"\n"
		"Output and limits:\n"
		"      --json             one JSON object per connection on stdout\n"
		"      --csv              a CSV header and one row per connection on stdout\n"
		"  -q, --quiet            no human-readable lines (with --json/--csv they go\n"
		"                         to stderr, otherwise to stdout)\n"
		"  -T, --timeout SECONDS  give up when connecting or any transfer stalls\n"
		"                         this long (default 10); the client retries a\n"
		"                         refused connection until then\n"
		"  -w, --wait SECONDS     server: give up waiting for a connection after\n"
		"                         SECONDS (default: 30 with --once, else forever; 0:\n"
		"                         forever)\n"
		"  -h, --help             show this help\n"
		"  -V, --version          show the version\n"
		"\n"
		"SIZE takes a suffix K, M or G (powers of 1024). MB in per-MB figures is\n"
		"1048576 bytes; Gbit/s is 10^9 bit/s.\n"
		"\n"
		"Exit status: 0 success, 1 bad usage, 2 connection or transfer failed,\n"
		"3 timed out.\n",
		prog, prog);
}

__attribute__((format(printf, 1, 2), noreturn)) static void
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	exit(EXIT_USAGE);
}

/*
 * A number with an optional suffix: K/M/G are powers of `base` (1024 for
 * sizes, 1000 for rates). The whole string must be used.
 */
static long long parse_num(const char *opt, const char *s, long long min,
			   long long max, long long base, const char *what)
{
	long long v;

	switch (num_parse(s, 10, base > 1 ? base : 0, min, max, &v)) {
	case NUM_OK:
		return v;
	case NUM_RANGE:
		usage_error(
			"%s: '%s' is out of range: it must be between %lld and %lld",
			opt, s, min, max);
	default:
		usage_error("%s: '%s' is not %s", opt, s, what);
	}
}

static long long parse_size(const char *opt, const char *s, long long min,
			    long long max)
{
	return parse_num(opt, s, min, max, 1024,
			 "a size (bytes, with an optional K, M or G suffix)");
}

static double parse_seconds(const char *opt, const char *s, double min,
			    double max)
{
	double v;

	switch (num_parse_double(s, min, max, &v)) {
	case NUM_OK:
		return v;
	case NUM_RANGE:
		usage_error(
			"%s: '%s' is out of range: it must be between %g and %g seconds",
			opt, s, min, max);
	default:
		usage_error("%s: '%s' is not a number of seconds", opt, s);
	}
}

int main(int argc, char **argv)
{
	enum {
		O_RCVBUF = 256,
		O_RCVBUF_ON,
		O_RCVLOWAT,
		O_READ_SIZE,
		O_RATE,
		O_WRITE_SIZE,
		O_NODELAY,
		O_VERIFY,
		O_JSON,
		O_CSV,
	};
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'B' },
		{ "reverse", no_argument, NULL, 'R' },
		{ "once", no_argument, NULL, '1' },
		{ "rcvbuf", required_argument, NULL, O_RCVBUF },
		{ "rcvbuf-on", required_argument, NULL, O_RCVBUF_ON },
		{ "rcvlowat", required_argument, NULL, O_RCVLOWAT },
		{ "read-size", required_argument, NULL, O_READ_SIZE },
		{ "time", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, O_RATE },
		{ "write-size", required_argument, NULL, O_WRITE_SIZE },
		{ "nodelay", no_argument, NULL, O_NODELAY },
		{ "verify", no_argument, NULL, O_VERIFY },
		{ "json", no_argument, NULL, O_JSON },
		{ "csv", no_argument, NULL, O_CSV },
		{ "quiet", no_argument, NULL, 'q' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool time_set = false, rcvbuf_on_set = false, sender_opt = false;
	const char *rcvbuf_on = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sc:p:B:R1t:n:qT:w:hV", opts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			cfg.server = true;
			break;
		case 'c':
			cfg.host = optarg;
			break;
		case 'p':
			cfg.port = (int)parse_num("--port", optarg, 1, 65535, 1,
						  "a port number");
			break;
		case 'B':
			cfg.bind = optarg;
			break;
		case 'R':
			cfg.reverse = true;
			break;
		case '1':
			cfg.once = true;
			break;
		case O_RCVBUF:
			cfg.rcvbuf = parse_size("--rcvbuf", optarg, 1, INT_MAX);
			break;
		case O_RCVBUF_ON:
			rcvbuf_on = optarg;
			rcvbuf_on_set = true;
			break;
		case O_RCVLOWAT:
			cfg.rcvlowat =
				parse_size("--rcvlowat", optarg, 1, INT_MAX);
			break;
		case O_READ_SIZE:
			cfg.read_size =
				parse_size("--read-size", optarg, 1, 1LL << 30);
			break;
		case 't':
			cfg.seconds =
				parse_seconds("--time", optarg, 0.001, 86400);
			time_set = true;
			sender_opt = true;
			break;
		case 'n':
			cfg.bytes = parse_size("--bytes", optarg, 1, LLONG_MAX);
			sender_opt = true;
			break;
		case O_RATE:
			cfg.rate = parse_num(
				"--rate", optarg, 1000, 1000000000000LL, 1000,
				"a rate (bit/s, with an optional k, M or G suffix)");
			sender_opt = true;
			break;
		case O_WRITE_SIZE:
			cfg.write_size =
				parse_size("--write-size", optarg, 1, 64 << 20);
			sender_opt = true;
			break;
		case O_NODELAY:
			cfg.nodelay = true;
			break;
		case O_VERIFY:
			cfg.verify = true;
			break;
		case O_JSON:
			cfg.json = true;
			break;
		case O_CSV:
			cfg.csv = true;
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'T':
			cfg.timeout =
				parse_seconds("--timeout", optarg, 0.1, 86400);
			break;
		case 'w':
			cfg.wait = parse_seconds("--wait", optarg, 0, 86400);
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("%s %s\n", prog, RCVFIX_VERSION);
			return EXIT_OK;
		case ':':
			usage_error("option %s needs an argument",
				    argv[optind - 1]);
			break;
		default:
			if (optopt && optopt != '?')
				usage_error("unknown option -%c", optopt);
			usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (cfg.server == !!cfg.host)
		usage_error("give either -s (server) or -c ADDRESS (client)");

	if (rcvbuf_on_set) {
		if (!strcmp(rcvbuf_on, "listener"))
			cfg.rcvbuf_on = ON_LISTENER;
		else if (!strcmp(rcvbuf_on, "accepted"))
			cfg.rcvbuf_on = ON_ACCEPTED;
		else if (!strcmp(rcvbuf_on, "client"))
			cfg.rcvbuf_on = ON_CLIENT;
		else
			usage_error(
				"--rcvbuf-on: '%s' is not one of listener, accepted, client",
				rcvbuf_on);
		if (!cfg.rcvbuf)
			usage_error("--rcvbuf-on needs --rcvbuf SIZE");
		if (cfg.server && cfg.rcvbuf_on == ON_CLIENT)
			usage_error(
				"--rcvbuf-on client: give it to the client (-c), not the server");
		if (!cfg.server && cfg.rcvbuf_on == ON_LISTENER)
			usage_error(
				"--rcvbuf-on listener: give it to the server (-s); the listener exists before any client");
	} else if (cfg.rcvbuf) {
		cfg.rcvbuf_on = cfg.server ? ON_LISTENER : ON_CLIENT;
	}
	if (cfg.server) {
		if (sender_opt || cfg.reverse || cfg.nodelay || cfg.verify)
			usage_error(
				"-t, -n, --rate, --write-size, --nodelay, --verify and -R are client options: the server follows the client's");
	} else {
		if (cfg.once || cfg.bind || cfg.wait >= 0)
			usage_error(
				"--once, --bind and --wait are server options");
		if (cfg.reverse && cfg.rcvbuf_on == ON_ACCEPTED)
			usage_error(
				"--rcvbuf-on accepted with -R would set the sender's buffer: use --rcvbuf-on client");
		if (cfg.bytes && !time_set)
			cfg.seconds = 0; /* -n alone: no time limit */
		if (!cfg.write_size)
			cfg.write_size = cfg.rate ? 1000 : 128 * 1024;
		if (cfg.rate && cfg.seconds == 0 && !cfg.bytes)
			usage_error("--rate needs -t or -n");
	}
	return cfg.server ? run_server() : run_client();
}
