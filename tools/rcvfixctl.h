/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rcvfixctl's pieces and what they share: the namespaces it sees
 * (ctl-netns.c), the status model read from /proc/net/rcvfix (ctl-status.c)
 * and the output formats (ctl-output.c); rcvfixctl.c holds the commands.
 */
#ifndef RCVFIXCTL_H
#define RCVFIXCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "../module/status_keys.h"

/* Exit codes, documented in --help. */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_NOT_LOADED = 2,
	EXIT_NOT_PERMITTED = 3,
	EXIT_NO_NETNS = 4,
	EXIT_OTHER = 5,
};

#define UTIL_OOM_EXIT EXIT_OTHER /* xrealloc(), xstrdup() */
#include "lib/util.h"

extern const char *const proc_status; /* /proc/self/net/rcvfix */
extern const char *const proc_enable; /* /proc/sys/net/rcvfix/enable */
extern const char *const netns_run_dir; /* /run/netns */

/* "key value" lines of /proc/net/rcvfix, in file order. */
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

struct module_state {
	bool loaded;
	char state[32]; /* from /proc/modules: Live, Loading, Unloading */
	char sig_enforce; /* module.sig_enforce: 'Y', 'N', or 0 if unknown */
	char lockdown[24]; /* the selected lockdown level, "" if unknown */
};

/* ctl-netns.c: namespace discovery, and running code inside one */
extern int self_ns_fd;
int collect(struct nslist *l, const char *netns, bool all);
int ns_run(struct netns *ns, int (*fn)(struct netns *, void *), void *arg);

/* ctl-status.c: the status model */
const char *kv_get(const struct kvlist *l, const char *key);
bool is_module_key(const char *key);
bool is_integer(const char *s);
size_t group_len(const char *key);
bool group_seen_before(const struct kvlist *l, size_t idx);
void module_state_get(struct module_state *m);
bool sig_enforced(const struct module_state *m);
const char *sig_enforced_by(const struct module_state *m, char *buf,
			    size_t len);
void ns_read_status(struct netns *ns);
int do_write(struct netns *ns, void *arg);

/* ctl-output.c: text, JSON and Prometheus output, on stdout */
const char *ns_label(const struct netns *ns, char *buf, size_t len);
void print_text(const struct module_state *m, const struct nslist *l,
		const struct kvlist *mod);
void print_json(const struct module_state *m, const struct nslist *l,
		const struct kvlist *mod);
void print_prometheus(const struct module_state *m, const struct nslist *l,
		      const struct kvlist *mod);

#endif /* RCVFIXCTL_H */
