// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfixctl: namespace discovery (this one, every process's, the named
 * ones under /run/netns, or one given by --netns) and running a step
 * inside a namespace with setns().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rcvfixctl.h"

int self_ns_fd = -1; /* our own namespace, to come back to */
static dev_t nsfs_dev; /* device of every nsfs file, from /proc/self/ns/net */

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
int ns_run(struct netns *ns, int (*fn)(struct netns *, void *), void *arg)
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

/* The namespaces to act on, by the options. */
int collect(struct nslist *l, const char *netns, bool all)
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
