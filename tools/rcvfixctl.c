// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfixctl: show and switch the rcvfix module per network namespace.
 * This file holds the commands and options; the namespaces it sees are in
 * ctl-netns.c, the status read from /proc/net/rcvfix in ctl-status.c, and
 * the output formats (text, JSON, Prometheus) in ctl-output.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rcvfixctl.h"

const char *const proc_status = "/proc/self/net/rcvfix";
const char *const proc_enable = "/proc/sys/net/rcvfix/enable";
const char *const netns_run_dir = "/run/netns";

const char *prog = "rcvfixctl";
static enum {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_PROMETHEUS,
} opt_format;
static const char *opt_output; /* --output FILE, or NULL for stdout */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [OPTIONS] COMMAND\n"
		"Show and switch rcvfix, the SO_RCVBUF lock fix, per network namespace.\n"
		"\n"
		"Commands:\n"
		"  status            module state, strategy, and this namespace's switch\n"
		"                    and counters (from /proc/net/rcvfix)\n"
		"  enable            turn the fix on  (writes 1 to %s)\n"
		"  disable           turn the fix off (writes 0; stock kernel behaviour)\n"
		"\n"
		"Options:\n"
		"  -n, --netns NAME  act on the namespace NAME under %s (as 'ip netns'),\n"
		"                    or on the namespace file at a path starting with '/'\n"
		"  -a, --all         act on every network namespace visible: those of all\n"
		"                    processes (/proc/*/ns/net) and the named ones\n"
		"  -j, --json        machine-readable output (status only; one line of JSON)\n"
		"  -p, --prometheus  status in the Prometheus text format (metrics rcvfix_*,\n"
		"                    labels netns_inode and netns_name), for node_exporter's\n"
		"                    textfile collector; use with --all and --output\n"
		"  -o, --output FILE write the status to FILE atomically (a temporary file\n"
		"                    FILE.XXXXXX in the same directory, renamed over FILE)\n"
		"  -h, --help        show this help\n"
		"  -V, --version     show the version\n"
		"\n"
		"enable and disable print nothing on success. enable needs CAP_NET_ADMIN in\n"
		"the initial user namespace (the host's root: it arms host-wide hooks),\n"
		"disable CAP_NET_ADMIN over the namespace; entering another namespace\n"
		"needs root.\n"
		"\n"
		"Exit status:\n"
		"  0  success\n"
		"  1  bad usage\n"
		"  2  the rcvfix module is not loaded\n"
		"  3  not permitted (run as root)\n"
		"  4  network namespace not found\n"
		"  5  other error\n",
		prog, proc_enable, netns_run_dir);
}

static int not_loaded(void)
{
	struct module_state m;
	char by[96];

	msg("rcvfix module not loaded: run 'modprobe rcvfix' (or 'insmod rcvfix.ko')");
	module_state_get(&m);
	if (sig_enforced(&m))
		msg("this kernel loads only modules signed by a key it trusts (%s): if modprobe says 'Key was rejected by service', rcvfix.ko is unsigned or its key is not enrolled: sign it with dkms's MOK key and enroll that key with 'mokutil --import /var/lib/dkms/mok.pub' (see SECURE BOOT in rcvfixctl(8))",
		    sig_enforced_by(&m, by, sizeof(by)));
	return EXIT_NOT_LOADED;
}

static int errno_exit(int err)
{
	switch (err) {
	case 0:
		return EXIT_OK;
	case ENOENT:
		return EXIT_NOT_LOADED;
	case EPERM:
	case EACCES:
		return EXIT_NOT_PERMITTED;
	default:
		return EXIT_OTHER;
	}
}

/* What to do about a failure, by the step that failed. */
static const char *err_hint(const struct netns *ns)
{
	switch (ns->err) {
	case EPERM:
	case EACCES:
		if (!strncmp(ns->what, "write", 5) ||
		    !strncmp(ns->what, "open /proc/sys", 14))
			return " (enable needs CAP_NET_ADMIN in the initial user namespace, disable over the namespace: run as root, on the host)";
		return " (entering another namespace needs CAP_SYS_ADMIN: run as root)";
	case ENOENT:
		return " (is the rcvfix module loaded? 'modprobe rcvfix')";
	case EBUSY:
		return " (another IP-modifying ftrace user, e.g. a livepatch, owns a function rcvfix hooks: see dmesg and 'rcvfixctl status')";
	default:
		return "";
	}
}

static void report_ns_error(const struct netns *ns, const char *verb)
{
	char label[256];

	msg("%s in namespace %s: cannot %s: %s%s", verb,
	    ns_label(ns, label, sizeof(label)), ns->what, strerror(ns->err),
	    err_hint(ns));
}

static int worst(int a, int b)
{
	/* Anything beats success; "not permitted" beats the rest. */
	if (a == EXIT_OK)
		return b;
	if (b == EXIT_NOT_PERMITTED)
		return b;
	return a;
}

/* The status in the format of the options, on stdout. */
static void print_status(const struct module_state *m, const struct nslist *l,
			 const struct kvlist *mod)
{
	if (opt_format == FORMAT_JSON)
		print_json(m, l, mod);
	else if (opt_format == FORMAT_PROMETHEUS)
		print_prometheus(m, l, mod);
	else
		print_text(m, l, mod);
}

/*
 * --output FILE: stdout goes to a new file next to FILE (FILE.XXXXXX,
 * which node_exporter's textfile collector ignores: it reads *.prom) that
 * output_commit() renames over FILE, so a reader sees the old or the new
 * file, never a part. Returns the saved stdout, or -1 (reported).
 */
static char output_tmp[PATH_MAX];

static int output_begin(const char *file)
{
	int fd, saved;

	if (snprintf(output_tmp, sizeof(output_tmp), "%s.XXXXXX", file) >=
	    (int)sizeof(output_tmp)) {
		msg("--output %s: path too long", file);
		return -1;
	}
	fd = mkstemp(output_tmp);
	if (fd < 0) {
		msg("cannot create %s: %s (does its directory exist and is it writable?)",
		    output_tmp, strerror(errno));
		return -1;
	}
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || fchmod(fd, 0644) || dup2(fd, STDOUT_FILENO) < 0) {
		msg("cannot write %s: %s", output_tmp, strerror(errno));
		close(fd);
		unlink(output_tmp);
		if (saved >= 0)
			close(saved);
		return -1;
	}
	close(fd);
	return saved;
}

/* Flush and sync the temporary file, rename it to FILE; stdout back. */
static int output_commit(const char *file, int saved)
{
	int err = 0;

	if (fflush(stdout) || ferror(stdout) || fsync(STDOUT_FILENO))
		err = errno ? errno : EIO;
	dup2(saved, STDOUT_FILENO);
	close(saved);
	if (!err && rename(output_tmp, file))
		err = errno;
	if (err) {
		msg("cannot write %s: %s", file, strerror(err));
		unlink(output_tmp);
		return EXIT_OTHER;
	}
	return EXIT_OK;
}

static int cmd_status(const char *netns, bool all)
{
	struct module_state m;
	const struct kvlist *mod = NULL;
	struct nslist l = { 0 };
	int ret, rc = EXIT_OK, saved = -1;
	size_t i;

	ret = collect(&l, netns, all);
	if (ret)
		return ret;
	module_state_get(&m);
	if (m.loaded) {
		for (i = 0; i < l.n; i++) {
			ns_read_status(&l.v[i]);
			if (!mod && !l.v[i].err)
				mod = &l.v[i].kv;
			if (l.v[i].err) {
				report_ns_error(&l.v[i], "status");
				rc = worst(rc, errno_exit(l.v[i].err));
			}
		}
	} else {
		rc = not_loaded();
	}
	/* Without the module, JSON and Prometheus still say so. */
	if (!m.loaded && opt_format == FORMAT_TEXT)
		return rc;
	if (opt_output) {
		saved = output_begin(opt_output);
		if (saved < 0)
			return EXIT_OTHER;
	}
	print_status(&m, m.loaded ? &l : NULL, mod);
	if (opt_output) {
		ret = output_commit(opt_output, saved);
		return ret ? ret : rc;
	}
	if (fflush(stdout) || ferror(stdout)) {
		msg("cannot write the output: %s", strerror(errno));
		return EXIT_OTHER;
	}
	return rc;
}

static int cmd_switch(const char *verb, const char *val, const char *netns,
		      bool all)
{
	struct module_state m;
	struct nslist l = { 0 };
	int ret, rc = EXIT_OK;
	size_t i;

	ret = collect(&l, netns, all);
	if (ret)
		return ret;
	module_state_get(&m);
	if (!m.loaded)
		return not_loaded();
	for (i = 0; i < l.n; i++) {
		if (!ns_run(&l.v[i], do_write, (void *)val))
			continue;
		report_ns_error(&l.v[i], verb);
		rc = worst(rc, errno_exit(l.v[i].err));
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "netns", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *netns = NULL, *cmd;
	bool all = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:ajpo:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (netns) {
				msg("--netns given twice");
				return EXIT_USAGE;
			}
			netns = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'j':
			opt_format = FORMAT_JSON;
			break;
		case 'p':
			opt_format = FORMAT_PROMETHEUS;
			break;
		case 'o':
			if (!*optarg) {
				msg("--output needs a file name");
				return EXIT_USAGE;
			}
			opt_output = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("%s %s\n", prog, RCVFIX_VERSION);
			return EXIT_OK;
		default:
			if (c == ':')
				msg("option %s needs an argument",
				    argv[optind - 1]);
			else if (optopt && optopt != '?')
				msg("unknown option -%c", optopt);
			else
				msg("unknown option %s", argv[optind - 1]);
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		msg("no command given: use status, enable or disable");
		fprintf(stderr, "Try '%s --help'.\n", prog);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (optind < argc) {
		msg("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (all && netns) {
		msg("--all and --netns exclude each other");
		return EXIT_USAGE;
	}
	if (opt_output && strcmp(cmd, "status") && strcmp(cmd, "show")) {
		msg("--output is for status only");
		return EXIT_USAGE;
	}
	self_ns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self_ns_fd < 0) {
		msg("cannot open /proc/self/ns/net: %s (is /proc mounted?)",
		    strerror(errno));
		return EXIT_OTHER;
	}
	if (!strcmp(cmd, "status") || !strcmp(cmd, "show"))
		return cmd_status(netns, all);
	if (!strcmp(cmd, "enable"))
		return cmd_switch("enable", "1\n", netns, all);
	if (!strcmp(cmd, "disable"))
		return cmd_switch("disable", "0\n", netns, all);
	if (!strcmp(cmd, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	msg("unknown command '%s': use status, enable or disable", cmd);
	return EXIT_USAGE;
}
