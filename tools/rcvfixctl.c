// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfixctl: show and switch the rcvfix module per network namespace.
 * Reads /proc/net/rcvfix ("key value" lines, passed through generically),
 * writes /proc/sys/net/rcvfix/enable, and enters other namespaces with setns.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common.h"

/* Exit codes, documented in --help. */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_NOT_LOADED = 2,
	EXIT_NOT_PERMITTED = 3,
	EXIT_NO_NETNS = 4,
	EXIT_OTHER = 5,
};

static const char *const proc_status = "/proc/self/net/rcvfix";
static const char *const proc_enable = "/proc/sys/net/rcvfix/enable";
static const char *const netns_run_dir = "/run/netns";

/* Keys of /proc/net/rcvfix that describe the module, not the namespace. */
static const char *const module_keys[] = {
	"version",	  "strategy",		"targets",
	"armed",	  "enabled_namespaces", "arms",
	"disarms",	  "arm_failures",	"last_arm_error",
	"rcvlowat_wakeup"
};

const char *prog = "rcvfixctl";
static bool opt_json;
static dev_t nsfs_dev; /* device of every nsfs file, from /proc/self/ns/net */
static int self_ns_fd = -1; /* our own namespace, to come back to */

struct kv {
	char *key;
	char *val;
};

struct kvlist {
	struct kv *v;
	size_t n;
};

/* One network namespace we can see, and what we learnt about it. */
struct netns {
	dev_t dev;
	ino_t ino;
	pid_t pid; /* one process inside it, 0 if none seen */
	unsigned int nprocs;
	char **names; /* bind mounts under /run/netns */
	size_t nnames;
	char *path; /* explicit --netns PATH */
	bool current;
	struct kvlist kv;
	int err; /* errno of the read or write, 0 if fine */
	const char *what; /* which step failed */
};

struct nslist {
	struct netns *v;
	size_t n;
};

static void die_oom(void)
{
	fprintf(stderr, "%s: out of memory\n", prog);
	exit(EXIT_OTHER);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die_oom();
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die_oom();
	return d;
}

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
		"  -h, --help        show this help\n"
		"  -V, --version     show the version\n"
		"\n"
		"enable and disable print nothing on success. Changing the switch needs\n"
		"CAP_NET_ADMIN over the namespace; entering another namespace needs root.\n"
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

/* ---- /proc/net/rcvfix parsing ---- */

static void kv_add(struct kvlist *l, const char *key, const char *val)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].key = xstrdup(key);
	l->v[l->n].val = xstrdup(val);
	l->n++;
}

static const char *kv_get(const struct kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].val;
	return NULL;
}

static void kv_free(struct kvlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].val);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/*
 * Parse "key value" lines: the key is the first word, the value the rest of
 * the line with surrounding blanks removed. Blank lines are skipped.
 */
static int kv_read(const char *path, struct kvlist *l)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *key = line, *val, *end;

		while (isspace((unsigned char)*key))
			key++;
		if (!*key)
			continue;
		val = key;
		while (*val && !isspace((unsigned char)*val))
			val++;
		if (*val)
			*val++ = '\0';
		while (isspace((unsigned char)*val))
			val++;
		end = val + strlen(val);
		while (end > val && isspace((unsigned char)end[-1]))
			*--end = '\0';
		kv_add(l, key, val);
	}
	free(line);
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		fclose(f);
		return -e;
	}
	fclose(f);
	return 0;
}

static bool is_module_key(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(module_keys) / sizeof(module_keys[0]); i++)
		if (!strcmp(key, module_keys[i]))
			return true;
	return false;
}

/*
 * True if s is an integer as JSON writes numbers (no '+', no leading zero)
 * that fits a long long: then it goes out as a number, else as a string.
 */
static bool is_integer(const char *s)
{
	const char *p = s + (*s == '-');
	char *end;

	if (!isdigit((unsigned char)*p) || (p[0] == '0' && p[1]))
		return false;
	errno = 0;
	strtoll(s, &end, 10);
	return !errno && !*end;
}

/* ---- module state ---- */

struct module_state {
	bool loaded;
	char state[32]; /* from /proc/modules: Live, Loading, Unloading */
};

static void module_state_get(struct module_state *m)
{
	char *line = NULL;
	size_t cap = 0;
	struct stat st;
	FILE *f;

	memset(m, 0, sizeof(*m));
	f = fopen("/proc/modules", "re");
	if (f) {
		while (getline(&line, &cap, f) > 0) {
			char name[64], state[32];

			if (sscanf(line, "%63s %*s %*s %*s %31s", name,
				   state) == 2 &&
			    !strcmp(name, "rcvfix")) {
				m->loaded = true;
				snprintf(m->state, sizeof(m->state), "%s",
					 state);
			}
		}
		free(line);
		fclose(f);
	}
	if (!stat("/sys/module/rcvfix", &st))
		m->loaded = true;
	if (!access(proc_status, F_OK))
		m->loaded = true;
}

static int not_loaded(void)
{
	msg("rcvfix module not loaded: run 'modprobe rcvfix' (or 'insmod rcvfix.ko')");
	return EXIT_NOT_LOADED;
}

/* ---- namespace discovery ---- */

static struct netns *ns_find(struct nslist *l, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].dev == dev && l->v[i].ino == ino)
			return &l->v[i];
	return NULL;
}

static struct netns *ns_add(struct nslist *l, dev_t dev, ino_t ino)
{
	struct netns *ns = ns_find(l, dev, ino);

	if (ns)
		return ns;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	ns = &l->v[l->n++];
	memset(ns, 0, sizeof(*ns));
	ns->dev = dev;
	ns->ino = ino;
	return ns;
}

static void ns_add_name(struct netns *ns, const char *name)
{
	ns->names = xrealloc(ns->names, (ns->nnames + 1) * sizeof(char *));
	ns->names[ns->nnames++] = xstrdup(name);
}

static int ns_self(struct nslist *l)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st)) {
		msg("cannot read /proc/self/ns/net: %s (is /proc mounted?)",
		    strerror(errno));
		return EXIT_OTHER;
	}
	nsfs_dev = st.st_dev;
	ns_add(l, st.st_dev, st.st_ino)->current = true;
	return EXIT_OK;
}

/* Every namespace held by a process we may look at. */
static void ns_scan_procs(struct nslist *l)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[64], *end;
		struct netns *ns;
		struct stat st;
		long pid;

		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		if (stat(path, &st))
			continue; /* gone, a kernel thread, or not ours */
		ns = ns_add(l, st.st_dev, st.st_ino);
		if (!ns->pid)
			ns->pid = (pid_t)pid;
		ns->nprocs++;
	}
	closedir(d);
}

/*
 * Named namespaces: nsfs files bind-mounted under /run/netns. A name whose
 * mount is gone is a plain empty file on another device: skip it. With
 * only_known, just attach names to namespaces already in the list.
 */
static void ns_scan_named(struct nslist *l, bool only_known)
{
	struct dirent *de;
	DIR *d = opendir(netns_run_dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		struct netns *ns;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", netns_run_dir,
			 de->d_name);
		if (stat(path, &st) || st.st_dev != nsfs_dev)
			continue;
		ns = only_known ? ns_find(l, st.st_dev, st.st_ino) :
				  ns_add(l, st.st_dev, st.st_ino);
		if (ns)
			ns_add_name(ns, de->d_name);
	}
	closedir(d);
}

/* --netns ARG: a name under /run/netns, or a path to a namespace file. */
static int ns_resolve(struct nslist *l, const char *arg)
{
	char path[PATH_MAX];
	struct netns *ns;
	struct stat st;
	int fd, type;

	if (strchr(arg, '/'))
		snprintf(path, sizeof(path), "%s", arg);
	else if (!*arg || !strcmp(arg, ".") || !strcmp(arg, "..")) {
		msg("invalid namespace name '%s'", arg);
		return EXIT_USAGE;
	} else
		snprintf(path, sizeof(path), "%s/%s", netns_run_dir, arg);

	if (stat(path, &st)) {
		if (errno == ENOENT) {
			msg("network namespace '%s' not found: no %s (see 'ip netns list')",
			    arg, path);
			return EXIT_NO_NETNS;
		}
		if (errno == EACCES || errno == EPERM) {
			msg("cannot look at %s: %s (run as root)", path,
			    strerror(errno));
			return EXIT_NOT_PERMITTED;
		}
		msg("cannot look at %s: %s", path, strerror(errno));
		return EXIT_OTHER;
	}
	if (st.st_dev != nsfs_dev) {
		msg("network namespace '%s' not found: %s is not a namespace file%s",
		    arg, path,
		    strchr(arg, '/') ? "" :
				       " (stale name? see 'ip netns list')");
		return EXIT_NO_NETNS;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		type = ioctl(fd, NS_GET_NSTYPE);
		close(fd);
		if (type >= 0 && type != CLONE_NEWNET) {
			msg("%s is a namespace, but not a network namespace",
			    path);
			return EXIT_NO_NETNS;
		}
	}
	ns = ns_add(l, st.st_dev, st.st_ino);
	if (!ns->path)
		ns->path = xstrdup(path);
	return EXIT_OK;
}

/* ---- doing things inside a namespace ---- */

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

static int ns_open(const struct netns *ns)
{
	char path[PATH_MAX];
	int fd;

	if (ns->path)
		snprintf(path, sizeof(path), "%s", ns->path);
	else if (ns->nnames)
		snprintf(path, sizeof(path), "%s/%s", netns_run_dir,
			 ns->names[0]);
	else
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)ns->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Run fn in the namespace ns: enter it with setns(), then come back. A
 * failure to come back leaves us in the wrong namespace: give up at once.
 */
static int ns_run(struct netns *ns, int (*fn)(struct netns *, void *),
		  void *arg)
{
	int fd, ret;

	if (ns->current)
		return fn(ns, arg);
	fd = ns_open(ns);
	if (fd < 0) {
		ns->what = "open the namespace";
		return ns->err = -fd;
	}
	if (setns(fd, CLONE_NEWNET)) {
		ns->what = "enter the namespace";
		ns->err = errno;
		close(fd);
		return ns->err;
	}
	close(fd);
	ret = fn(ns, arg);
	if (setns(self_ns_fd, CLONE_NEWNET)) {
		msg("cannot return to the original network namespace: %s",
		    strerror(errno));
		exit(EXIT_OTHER);
	}
	return ret;
}

static int do_read(struct netns *ns, void *arg)
{
	int ret;

	(void)arg;
	ret = kv_read(proc_status, &ns->kv);
	if (ret) {
		ns->what = "read /proc/net/rcvfix";
		ns->err = -ret;
	}
	return ns->err;
}

/*
 * Read a namespace's status. Without the right to enter it, a process
 * inside it still shows the file as /proc/PID/net/rcvfix; check afterwards
 * that the process did not change namespace meanwhile.
 */
static void ns_read_status(struct netns *ns)
{
	char path[64];
	struct stat st;
	int ret;

	if (!ns_run(ns, do_read, NULL) || !ns->pid ||
	    (ns->err != EPERM && ns->err != EACCES))
		return;
	snprintf(path, sizeof(path), "/proc/%d/net/rcvfix", (int)ns->pid);
	kv_free(&ns->kv);
	ret = kv_read(path, &ns->kv);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)ns->pid);
	if (!ret &&
	    (stat(path, &st) || st.st_ino != ns->ino || st.st_dev != ns->dev))
		ret = -ESRCH;
	if (ret) {
		kv_free(&ns->kv);
		return; /* keep the first error, it says more */
	}
	ns->err = 0;
	ns->what = NULL;
}

static int do_write(struct netns *ns, void *arg)
{
	const char *val = arg;
	ssize_t n;
	int fd;

	fd = open(proc_enable, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		ns->what = "open /proc/sys/net/rcvfix/enable";
		return ns->err = errno;
	}
	n = write(fd, val, strlen(val));
	if (n < 0 || (size_t)n != strlen(val)) {
		ns->what = "write /proc/sys/net/rcvfix/enable";
		ns->err = n < 0 ? errno : EIO;
	}
	if (close(fd) && !ns->err) {
		ns->what = "write /proc/sys/net/rcvfix/enable";
		ns->err = errno;
	}
	return ns->err;
}

/* ---- output ---- */

static const char *ns_label(const struct netns *ns, char *buf, size_t len)
{
	int n = snprintf(buf, len, "net:[%llu]", (unsigned long long)ns->ino);
	size_t i;

	for (i = 0; i < ns->nnames && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? "," : " (",
			      ns->names[i]);
	if (ns->nnames && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, ")");
	return buf;
}

/* What to do about a failure, by the step that failed. */
static const char *err_hint(const struct netns *ns)
{
	switch (ns->err) {
	case EPERM:
	case EACCES:
		if (!strncmp(ns->what, "write", 5) ||
		    !strncmp(ns->what, "open /proc/sys", 14))
			return " (switching needs CAP_NET_ADMIN over the namespace: run as root)";
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

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* A value: a JSON number when it is an integer, a string otherwise. */
static void json_val(const char *v)
{
	if (is_integer(v))
		fputs(v, stdout);
	else
		json_str(v);
}

static void json_kv(bool *first, const char *key, const char *val)
{
	printf("%s", *first ? "" : ",");
	*first = false;
	json_str(key);
	putchar(':');
	json_val(val);
}

/* Length of the group prefix of a dotted key ("bpf.sets" -> 3), or 0. */
static size_t group_len(const char *key)
{
	const char *dot = strchr(key, '.');

	return dot && dot != key && dot[1] ? (size_t)(dot - key) : 0;
}

static bool group_seen_before(const struct kvlist *l, size_t idx)
{
	size_t g = group_len(l->v[idx].key), i;

	for (i = 0; i < idx; i++)
		if (group_len(l->v[i].key) == g &&
		    !strncmp(l->v[i].key, l->v[idx].key, g))
			return true;
	return false;
}

/* Namespace keys; "a.b" keys become nested objects {"a":{"b":...}}. */
static void json_ns_keys(const struct kvlist *l, bool *first)
{
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		const char *key = l->v[i].key;
		size_t g = group_len(key);
		bool inner = true;

		if (is_module_key(key))
			continue;
		if (!g) {
			json_kv(first, key, l->v[i].val);
			continue;
		}
		if (group_seen_before(l, i))
			continue;
		printf("%s\"%.*s\":{", *first ? "" : ",", (int)g, key);
		*first = false;
		for (j = i; j < l->n; j++)
			if (group_len(l->v[j].key) == g &&
			    !strncmp(l->v[j].key, key, g))
				json_kv(&inner, l->v[j].key + g + 1,
					l->v[j].val);
		putchar('}');
	}
}

static void print_json(const struct module_state *m, const struct nslist *l,
		       const struct kvlist *mod)
{
	bool first = true;
	size_t i, j;

	printf("{\"module\":{\"loaded\":%s", m->loaded ? "true" : "false");
	if (m->state[0]) {
		printf(",\"state\":");
		json_str(m->state);
	}
	first = false;
	for (i = 0; mod && i < mod->n; i++)
		if (is_module_key(mod->v[i].key))
			json_kv(&first, mod->v[i].key, mod->v[i].val);
	printf("},\"netns\":[");
	for (i = 0; l && i < l->n; i++) {
		const struct netns *ns = &l->v[i];

		printf("%s{\"id\":\"net:[%llu]\",\"inode\":%llu,\"current\":%s",
		       i ? "," : "", (unsigned long long)ns->ino,
		       (unsigned long long)ns->ino,
		       ns->current ? "true" : "false");
		printf(",\"names\":[");
		for (j = 0; j < ns->nnames; j++) {
			printf("%s", j ? "," : "");
			json_str(ns->names[j]);
		}
		printf("]");
		if (ns->pid)
			printf(",\"pid\":%d,\"nprocs\":%u", (int)ns->pid,
			       ns->nprocs);
		if (ns->err) {
			printf(",\"error\":");
			json_str(strerror(ns->err));
		}
		first = false;
		json_ns_keys(&ns->kv, &first);
		putchar('}');
	}
	printf("]}\n");
}

static void print_counters(const struct kvlist *l)
{
	const char *cols[16], *rows[16];
	size_t ncols = 0, nrows = 0, i, j, k;

	/* Columns: suffixes in order of appearance; rows: groups. */
	for (i = 0; i < l->n; i++) {
		size_t g = group_len(l->v[i].key);
		const char *suf = l->v[i].key + g + 1;

		if (!g || is_module_key(l->v[i].key))
			continue;
		for (j = 0; j < ncols && strcmp(cols[j], suf); j++)
			;
		if (j == ncols && ncols < 16)
			cols[ncols++] = suf;
		if (!group_seen_before(l, i) && nrows < 16)
			rows[nrows++] = l->v[i].key;
	}
	if (!nrows)
		return;
	printf("  %-12s", "counters");
	for (j = 0; j < ncols; j++)
		printf(" %*s",
		       (int)(strlen(cols[j]) > 10 ? strlen(cols[j]) : 10),
		       cols[j]);
	putchar('\n');
	for (k = 0; k < nrows; k++) {
		size_t g = group_len(rows[k]);

		printf("  %-12.*s", (int)g, rows[k]);
		for (j = 0; j < ncols; j++) {
			const char *v = "-";
			int w = (int)(strlen(cols[j]) > 10 ? strlen(cols[j]) :
							     10);

			for (i = 0; i < l->n; i++)
				if (group_len(l->v[i].key) == g &&
				    !strncmp(l->v[i].key, rows[k], g) &&
				    !strcmp(l->v[i].key + g + 1, cols[j]))
					v = l->v[i].val;
			printf(" %*s", w, v);
		}
		putchar('\n');
	}
}

/* "a:b:c" of last_arm_error as "a on b (owner: c)"; "none" as is. */
static void print_arm_error(const char *v)
{
	const char *h = strchr(v, ':');
	const char *o = h ? strchr(h + 1, ':') : NULL;

	if (!o) {
		printf("last arm error:  %s\n", v);
		return;
	}
	printf("last arm error:  %.*s on %.*s (owner: %s)\n", (int)(h - v), v,
	       (int)(o - h - 1), h + 1, o + 1);
}

/* Whether the hooks are armed, and why not if arming failed. */
static void print_arming(const struct kvlist *mod)
{
	const char *armed = mod ? kv_get(mod, "armed") : NULL;
	const char *n = mod ? kv_get(mod, "enabled_namespaces") : NULL;
	const char *err = mod ? kv_get(mod, "last_arm_error") : NULL;
	const char *arms = mod ? kv_get(mod, "arms") : NULL;
	const char *disarms = mod ? kv_get(mod, "disarms") : NULL;

	if (!armed)
		return;
	printf("armed:           %s%s\n", armed,
	       !strcmp(armed, "yes") ?
		       "" :
		       " (no callback: the kernel's own code runs)");
	if (n)
		printf("enabled in:      %s namespace%s (arms %s, disarms %s)\n",
		       n, strcmp(n, "1") ? "s" : "", arms ? arms : "?",
		       disarms ? disarms : "?");
	if (err && strcmp(err, "none"))
		print_arm_error(err);
}

static void print_text(const struct module_state *m, const struct nslist *l,
		       const struct kvlist *mod)
{
	const char *v;
	size_t i, j;

	v = mod ? kv_get(mod, "version") : NULL;
	printf("module:          rcvfix %s%s%s%s\n",
	       v ? v : "(version unknown)", m->state[0] ? " (" : "", m->state,
	       m->state[0] ? ")" : "");
	v = mod ? kv_get(mod, "strategy") : NULL;
	if (v)
		printf("strategy:        %s\n", v);
	v = mod ? kv_get(mod, "targets") : NULL;
	if (v)
		printf("targets:         %s\n", v);
	print_arming(mod);
	v = mod ? kv_get(mod, "rcvlowat_wakeup") : NULL;
	if (v)
		printf("rcvlowat wakeup: %s\n", v);
	for (i = 0; i < l->n; i++) {
		const struct netns *ns = &l->v[i];
		char label[256];

		printf("\nnetns %s%s", ns_label(ns, label, sizeof(label)),
		       ns->current ? " (this namespace)" : "");
		if (ns->pid)
			printf(", pid %d%s", (int)ns->pid,
			       ns->nprocs > 1 ? " and others" : "");
		putchar('\n');
		if (ns->err) {
			printf("  cannot %s: %s\n", ns->what,
			       strerror(ns->err));
			continue;
		}
		for (j = 0; j < ns->kv.n; j++) {
			const char *key = ns->kv.v[j].key;
			const char *val = ns->kv.v[j].val;

			if (is_module_key(key) || group_len(key))
				continue;
			if (!strcmp(key, "enable"))
				printf("  enable:      %s (%s)\n", val,
				       !strcmp(val, "1") ? "fixed" :
				       !strcmp(val, "0") ? "stock behaviour" :
							   "?");
			else
				printf("  %s: %s\n", key, val);
		}
		print_counters(&ns->kv);
	}
}

/* ---- commands ---- */

/* The namespaces to act on, by the options. */
static int collect(struct nslist *l, const char *netns, bool all)
{
	struct nslist self = { 0 };
	int ret;

	ret = ns_self(&self); /* learns nsfs_dev */
	if (ret)
		return ret;
	if (netns) {
		ret = ns_resolve(l, netns);
		if (ret)
			return ret;
		if (l->v[0].ino == self.v[0].ino &&
		    l->v[0].dev == self.v[0].dev)
			l->v[0].current = true;
	} else {
		*l = self;
		self.v = NULL;
		if (all)
			ns_scan_procs(l);
	}
	free(self.v);
	ns_scan_named(l, !all);
	return EXIT_OK;
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

static int cmd_status(const char *netns, bool all)
{
	struct module_state m;
	const struct kvlist *mod = NULL;
	struct nslist l = { 0 };
	int ret, rc = EXIT_OK;
	size_t i;

	ret = collect(&l, netns, all);
	if (ret)
		return ret;
	module_state_get(&m);
	if (!m.loaded) {
		if (opt_json)
			print_json(&m, NULL, NULL);
		return not_loaded();
	}
	for (i = 0; i < l.n; i++) {
		ns_read_status(&l.v[i]);
		if (!mod && !l.v[i].err)
			mod = &l.v[i].kv;
		if (l.v[i].err) {
			report_ns_error(&l.v[i], "status");
			rc = worst(rc, errno_exit(l.v[i].err));
		}
	}
	if (opt_json)
		print_json(&m, &l, mod);
	else
		print_text(&m, &l, mod);
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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *netns = NULL, *cmd;
	bool all = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:ajhV", opts, NULL)) != -1) {
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
			opt_json = true;
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
