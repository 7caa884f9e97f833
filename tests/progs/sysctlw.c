// SPDX-License-Identifier: GPL-2.0
/*
 * sysctlw: write bytes to a file (a sysctl) in exactly one write() call and
 * print what write() returned and errno; optionally without CAP_NET_ADMIN.
 * Lets the tests check -EINVAL / -EPERM from sysctl handlers precisely.
 */
#include "common.h"

#include <fcntl.h>

static const char usage[] =
"usage: sysctlw [--drop-cap] [--repeat N] PATH DATA...\n"
"For each DATA: opens PATH for writing and writes DATA (repeated N times,\n"
"default once; DATA may be empty) with one write() call, then prints\n"
"  ret=<write() return> errno=<name|0>\n"
"  --drop-cap  drop CAP_NET_ADMIN (effective, permitted, inheritable) first\n"
"Exit: 0 if every byte of every DATA was written, 1 if a write() failed or\n"
"was short, 3 if PATH cannot be opened (printed as ret=open errno=<name>).\n";

/* One open(), one write() of @data repeated @repeat times, one line. */
static int write_once(const char *path, const char *data, long long repeat)
{
	size_t dlen = strlen(data), len = dlen * repeat;
	char *buf = malloc(len + 1);
	long long i;
	ssize_t n;
	int fd;

	if (!buf)
		die(EXIT_SETUP, "out of memory");
	for (i = 0; i < repeat; i++)
		memcpy(buf + i * dlen, data, dlen);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		printf("ret=open errno=%s\n", errno_name(errno));
		free(buf);
		return EXIT_SETUP;
	}
	n = write(fd, buf, len);
	printf("ret=%zd errno=%s\n", n, errno_name(n < 0 ? errno : 0));
	fflush(stdout);
	close(fd);
	free(buf);
	return n == (ssize_t)len ? 0 : 1;
}

const char *prog = "sysctlw";

int main(int argc, char **argv)
{
	long long repeat = 1;
	int a = 1, ret = 0, r;

	for (; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a++) {
		if (!strcmp(argv[a], "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[a], "--drop-cap")) {
			drop_net_admin();
		} else if (!strcmp(argv[a], "--repeat") && a + 1 < argc) {
			repeat = parse_ll("--repeat", argv[++a]);
			if (repeat < 0 || repeat > (1 << 24))
				die(EXIT_USAGE, "--repeat: 0..16777216");
		} else if (!strcmp(argv[a], "--")) {
			a++;
			break;
		} else {
			die(EXIT_USAGE, "unknown flag '%s' (try --help)",
			    argv[a]);
		}
	}
	if (argc - a < 2)
		die(EXIT_USAGE, "need PATH and DATA (try --help)");

	for (r = a + 1; r < argc; r++) {
		int rc = write_once(argv[a], argv[r], repeat);

		if (rc > ret)
			ret = rc;
	}
	return ret;
}
