// SPDX-License-Identifier: GPL-2.0
/*
 * rcvfixctl: output formats of the status model: text for people, one line
 * of JSON, and the Prometheus text exposition format (for node_exporter's
 * textfile collector).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "lib/strout.h"
#include "rcvfixctl.h"

const char *ns_label(const struct netns *ns, char *buf, size_t len)
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

/* A value: a JSON number when it is an integer, a string otherwise. */
static void json_val(const char *v)
{
	if (is_integer(v))
		fputs(v, stdout);
	else
		json_write_str(stdout, v);
}

static void json_kv(bool *first, const char *key, const char *val)
{
	printf("%s", *first ? "" : ",");
	*first = false;
	json_write_str(stdout, key);
	putchar(':');
	json_val(val);
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

void print_json(const struct module_state *m, const struct nslist *l,
		const struct kvlist *mod)
{
	bool first = true;
	size_t i, j;

	printf("{\"module\":{\"loaded\":%s", m->loaded ? "true" : "false");
	if (m->state[0]) {
		printf(",\"state\":");
		json_write_str(stdout, m->state);
	}
	first = false;
	for (i = 0; mod && i < mod->n; i++)
		if (is_module_key(mod->v[i].key))
			json_kv(&first, mod->v[i].key, mod->v[i].val);
	/* the kernel's module signature policy, not the module's keys */
	printf("},\"kernel\":{\"sig_enforced\":%s",
	       sig_enforced(m) ? "true" : "false");
	if (m->sig_enforce)
		printf(",\"sig_enforce\":%s",
		       m->sig_enforce == 'Y' ? "true" : "false");
	if (m->lockdown[0]) {
		printf(",\"lockdown\":");
		json_write_str(stdout, m->lockdown);
	}
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
			json_write_str(stdout, ns->names[j]);
		}
		printf("]");
		if (ns->pid)
			printf(",\"pid\":%d,\"nprocs\":%u", (int)ns->pid,
			       ns->nprocs);
		if (ns->err) {
			printf(",\"error\":");
			json_write_str(stdout, strerror(ns->err));
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
	const char *aside = mod ? kv_get(mod, "stepped_aside") : NULL;
	const char *aside_for = mod ? kv_get(mod, "stepped_aside_for") : NULL;

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
	if (aside && !strcmp(aside, "yes"))
		printf("stepped aside:   for %s (the fix is not in force; it arms again when that is gone)\n",
		       aside_for ? aside_for : "?");
}

/* The module's signature as the kernel checked it, and the kernel's policy. */
static void print_signature(const struct module_state *m,
			    const struct kvlist *mod)
{
	const char *v = mod ? kv_get(mod, "signature") : NULL;
	char by[96];

	if (v)
		printf("signature:       %s%s\n", v,
		       !strcmp(v, "verified") ?
			       " (by a key this kernel trusts)" :
		       !strcmp(v, "unverified") ?
			       " (unsigned, or signed by a key this kernel does not trust: taint E)" :
		       !strcmp(v, "unchecked") ?
			       " (this kernel does not check module signatures)" :
			       "");
	printf("signatures:      %s (%s)\n",
	       sig_enforced(m) ?
		       "enforced: only modules signed by a trusted key load" :
		       "not enforced",
	       sig_enforced_by(m, by, sizeof(by)));
}

/* Module keys print_text() shows in its own way. */
static bool text_shown_key(const char *key)
{
	static const char *const shown[] = {
		"version",
		"srcversion",
		"signature",
		"sig_enforced",
		"strategy",
		"targets",
		"rcvlowat_wakeup",
		"armed",
		"arms",
		"disarms",
		"last_arm_error",
		"enabled_namespaces",
		"stepped_aside",
		"stepped_aside_for",
	};
	size_t i;

	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		if (!strcmp(key, shown[i]))
			return true;
	return false;
}

void print_text(const struct module_state *m, const struct nslist *l,
		const struct kvlist *mod)
{
	const char *v;
	size_t i, j;

	v = mod ? kv_get(mod, "version") : NULL;
	printf("module:          rcvfix %s%s%s%s\n",
	       v ? v : "(version unknown)", m->state[0] ? " (" : "", m->state,
	       m->state[0] ? ")" : "");
	/* what tells two builds of one version apart */
	v = mod ? kv_get(mod, "srcversion") : NULL;
	if (v)
		printf("srcversion:      %s\n", v);
	print_signature(m, mod);
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
	/* Other module keys (arm_failures, ...) as they are. */
	for (i = 0; mod && i < mod->n; i++) {
		const char *key = mod->v[i].key;

		if (is_module_key(key) && !text_shown_key(key))
			printf("%s:%*s%s\n", key,
			       (int)(strlen(key) < 16 ? 16 - strlen(key) : 1),
			       "", mod->v[i].val);
	}
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

/* ---- Prometheus text exposition format (0.0.4) ---- */

/* A label value: backslash, double quote and newline escaped. */
static void prom_str(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
}

/* A sample value: integers as they are, yes/no as 1/0; NULL otherwise. */
static const char *prom_value(const char *v)
{
	if (is_integer(v))
		return v;
	if (!strcmp(v, "yes"))
		return "1";
	if (!strcmp(v, "no"))
		return "0";
	return NULL;
}

/* "rcvfix_" + the key part (non-name characters as '_') + suffix. */
static void prom_name(char *buf, size_t len, const char *part, size_t n,
		      const char *suffix)
{
	size_t i, o = snprintf(buf, len, "rcvfix_");

	for (i = 0; i < n && part[i] && o + 1 < len; i++)
		buf[o++] = isalnum((unsigned char)part[i]) ? part[i] : '_';
	snprintf(buf + o, len - o, "%s", suffix);
}

/*
 * The metric a namespace key becomes, or false if none: "KEY N" gives
 * the gauge rcvfix_KEY; "GROUP.KEY N" the counter rcvfix_KEY_total with
 * label path="GROUP" (the groups are the paths: setsockopt, bpf, kernel).
 */
static bool prom_ns_metric(const struct kv *kv, char *name, size_t len)
{
	size_t g = group_len(kv->key);

	if (is_module_key(kv->key) || !prom_value(kv->val))
		return false;
	if (g)
		prom_name(name, len, kv->key + g + 1, strlen(kv->key + g + 1),
			  "_total");
	else
		prom_name(name, len, kv->key, strlen(kv->key), "");
	return true;
}

/* The metrics rcvfixctl makes itself; every other one is a key's. */
static const struct {
	const char *name;
	const char *help;
} prom_help[] = {
	{ "rcvfix_loaded", "1 when the rcvfix module is loaded" },
	{ "rcvfix_module_info",
	  "The rcvfix module's version, srcversion and strategy" },
};

/* Help of the metric @name made from a key (status_keys.h), or NULL. */
static const char *prom_key_help(const char *name)
{
	const char *part = name + strlen("rcvfix_");
	size_t i, n;

	for (i = 0;
	     i < sizeof(rcvfix_status_keys) / sizeof(rcvfix_status_keys[0]);
	     i++) {
		const struct rcvfix_status_key *k = &rcvfix_status_keys[i];

		n = strlen(k->name);
		if (k->scope == RCVFIX_SCOPE_PATH ?
			    !strncmp(part, k->name, n) &&
				    !strcmp(part + n, "_total") :
			    !strcmp(part, k->name))
			return k->help;
	}
	return NULL;
}

static void prom_family(const char *name, const char *type)
{
	const char *help = "rcvfix: a value of /proc/net/rcvfix";
	const char *key_help;
	size_t i;

	for (i = 0; i < sizeof(prom_help) / sizeof(prom_help[0]); i++)
		if (!strcmp(prom_help[i].name, name))
			help = prom_help[i].help;
	key_help = strncmp(name, "rcvfix_", strlen("rcvfix_")) ?
			   NULL :
			   prom_key_help(name);
	if (key_help)
		help = key_help;
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_ns_labels(const struct netns *ns)
{
	size_t i;

	printf("netns_inode=\"%llu\",netns_name=\"",
	       (unsigned long long)ns->ino);
	for (i = 0; i < ns->nnames; i++) {
		if (i)
			putchar(',');
		prom_str(ns->names[i]);
	}
	putchar('"');
}

/* Every sample of the family NAME, namespace by namespace. */
static void prom_ns_samples(const struct nslist *l, const char *name)
{
	char n[128];
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		const struct netns *ns = &l->v[i];

		for (j = 0; !ns->err && j < ns->kv.n; j++) {
			const struct kv *kv = &ns->kv.v[j];
			size_t g = group_len(kv->key);

			if (!prom_ns_metric(kv, n, sizeof(n)) ||
			    strcmp(n, name))
				continue;
			printf("%s{", name);
			prom_ns_labels(ns);
			if (g)
				printf(",path=\"%.*s\"", (int)g, kv->key);
			printf("} %s\n", prom_value(kv->val));
		}
	}
}

/* Has a namespace key before (i, j) made the family NAME already? */
static bool prom_seen(const struct nslist *l, size_t i, size_t j,
		      const char *name)
{
	char n[128];
	size_t a, b;

	for (a = 0; a <= i; a++)
		for (b = 0; b < l->v[a].kv.n && (a < i || b < j); b++)
			if (!l->v[a].err &&
			    prom_ns_metric(&l->v[a].kv.v[b], n, sizeof(n)) &&
			    !strcmp(n, name))
				return true;
	return false;
}

/*
 * The module (rcvfix_loaded, rcvfix_module_info with its text keys as
 * labels, a gauge per numeric module key), then one family per namespace
 * key, each with a sample per namespace labelled netns_inode and
 * netns_name (the names under /run/netns, comma-separated).
 */
void print_prometheus(const struct module_state *m, const struct nslist *l,
		      const struct kvlist *mod)
{
	char name[128];
	size_t i, j;

	prom_family("rcvfix_loaded", "gauge");
	printf("rcvfix_loaded %d\n", m->loaded);
	if (!mod)
		return;
	prom_family("rcvfix_module_info", "gauge");
	printf("rcvfix_module_info{");
	for (i = 0, j = 0; i < mod->n; i++) {
		if (!is_module_key(mod->v[i].key) || prom_value(mod->v[i].val))
			continue;
		prom_name(name, sizeof(name), mod->v[i].key,
			  strlen(mod->v[i].key), "");
		printf("%s%s=\"", j++ ? "," : "", name + strlen("rcvfix_"));
		prom_str(mod->v[i].val);
		putchar('"');
	}
	printf("} 1\n");
	for (i = 0; i < mod->n; i++) {
		if (!is_module_key(mod->v[i].key) || !prom_value(mod->v[i].val))
			continue;
		prom_name(name, sizeof(name), mod->v[i].key,
			  strlen(mod->v[i].key), "");
		prom_family(name, "gauge");
		printf("%s %s\n", name, prom_value(mod->v[i].val));
	}
	for (i = 0; i < l->n; i++) {
		for (j = 0; !l->v[i].err && j < l->v[i].kv.n; j++) {
			const struct kv *kv = &l->v[i].kv.v[j];

			if (!prom_ns_metric(kv, name, sizeof(name)) ||
			    prom_seen(l, i, j, name))
				continue;
			prom_family(name,
				    group_len(kv->key) ? "counter" : "gauge");
			prom_ns_samples(l, name);
		}
	}
}
