// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfixctl: the status model. /proc/net/rcvfix is "key value" lines,
 * kept generically (keys this version does not know are passed through);
 * "a.b" keys are counters grouped by "a". Also the module's state from
 * /proc/modules and the switch write.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rcvfixctl.h"

static void kv_add(struct kvlist *l, const char *key, const char *val)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].key = xstrdup(key);
	l->v[l->n].val = xstrdup(val);
	l->n++;
}

const char *kv_get(const struct kvlist *l, const char *key)
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

/*
 * Keys of /proc/net/rcvfix that describe the module, not the namespace:
 * the same in every namespace (scope MODULE in module/status_keys.h).
 */
bool is_module_key(const char *key)
{
	size_t i;

	for (i = 0;
	     i < sizeof(rcvfix_status_keys) / sizeof(rcvfix_status_keys[0]);
	     i++)
		if (rcvfix_status_keys[i].scope == RCVFIX_SCOPE_MODULE &&
		    !strcmp(key, rcvfix_status_keys[i].name))
			return true;
	return false;
}

/*
 * True if s is an integer as JSON writes numbers (no '+', no leading zero)
 * that fits a long long: then it goes out as a number, else as a string.
 */
bool is_integer(const char *s)
{
	const char *p = s + (*s == '-');
	char *end;

	if (!isdigit((unsigned char)*p) || (p[0] == '0' && p[1]))
		return false;
	errno = 0;
	strtoll(s, &end, 10);
	return !errno && !*end;
}

/* Length of the group prefix of a dotted key ("bpf.sets" -> 3), or 0. */
size_t group_len(const char *key)
{
	const char *dot = strchr(key, '.');

	return dot && dot != key && dot[1] ? (size_t)(dot - key) : 0;
}

bool group_seen_before(const struct kvlist *l, size_t idx)
{
	size_t g = group_len(l->v[idx].key), i;

	for (i = 0; i < idx; i++)
		if (group_len(l->v[i].key) == g &&
		    !strncmp(l->v[i].key, l->v[idx].key, g))
			return true;
	return false;
}

static void kernel_sig_policy(struct module_state *m);

void module_state_get(struct module_state *m)
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
	kernel_sig_policy(m);
}

/*
 * The kernel's module signature policy: module.sig_enforce (Y also when
 * built with CONFIG_MODULE_SIG_FORCE) and the lockdown level, the word in
 * brackets of /sys/kernel/security/lockdown ("none [integrity]
 * confidentiality"); lockdown integrity and above refuse unsigned modules
 * whatever sig_enforce says. Debian's kernels lock down by themselves when
 * booted with UEFI Secure Boot.
 */
static void kernel_sig_policy(struct module_state *m)
{
	char buf[128], *open_b, *close_b;
	ssize_t n;
	int fd;

	fd = open("/sys/module/module/parameters/sig_enforce",
		  O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, buf, 1) == 1 && (buf[0] == 'Y' || buf[0] == 'N'))
			m->sig_enforce = buf[0];
		close(fd);
	}
	fd = open("/sys/kernel/security/lockdown", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	open_b = strchr(buf, '[');
	close_b = open_b ? strchr(open_b, ']') : NULL;
	if (close_b && close_b - open_b - 1 < (long)sizeof(m->lockdown))
		snprintf(m->lockdown, sizeof(m->lockdown), "%.*s",
			 (int)(close_b - open_b - 1), open_b + 1);
}

/* Does this kernel refuse modules without a signature it trusts? */
bool sig_enforced(const struct module_state *m)
{
	return m->sig_enforce == 'Y' ||
	       (m->lockdown[0] && strcmp(m->lockdown, "none"));
}

/* What makes it so, for people: "module.sig_enforce=Y, lockdown integrity". */
const char *sig_enforced_by(const struct module_state *m, char *buf, size_t len)
{
	snprintf(buf, len, "module.sig_enforce=%c, lockdown %s",
		 m->sig_enforce ? m->sig_enforce : '?',
		 m->lockdown[0] ? m->lockdown : "unknown");
	return buf;
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
void ns_read_status(struct netns *ns)
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

int do_write(struct netns *ns, void *arg)
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
