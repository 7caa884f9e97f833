// SPDX-License-Identifier: GPL-2.0
/*
 * Member offsets of private kernel structs, from the running kernel's BTF.
 * Some of what rcvfix reads lives in structs that only one subsystem's
 * source declares (struct mptcp_sock is in net/mptcp/protocol.h, not in
 * the headers package), and their layout changes between and within
 * kernel lines. Debian's kernels carry their own type information
 * (CONFIG_DEBUG_INFO_BTF) in /sys/kernel/btf/vmlinux: this file reads it
 * once, walks its type section and answers where a named member of a named
 * struct is (also inside its anonymous members, as struct_group() makes
 * them), checking that the member is what the caller expects (the
 * size of its type, no bit field). Nothing is guessed: a struct that is
 * missing or named twice, a member that is missing or of another size, a
 * type kind this code does not know, or a malformed file is an error, with
 * the reason in @why for the caller's one log line.
 *
 * The format: include/uapi/linux/btf.h and Documentation/bpf/btf.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>	/* before btf.h: 5.10's uses its types */
#include <linux/btf.h>
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/path.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "btf_layout.h"

#define RCVFIX_BTF_PATH "/sys/kernel/btf/vmlinux"

/* Kinds newer than some of the uapi headers rcvfix builds against. */
#define RCVFIX_BTF_KIND_FLOAT		16
#define RCVFIX_BTF_KIND_DECL_TAG	17
#define RCVFIX_BTF_KIND_TYPE_TAG	18
#define RCVFIX_BTF_KIND_ENUM64		19

struct rcvfix_btf {
	const u8 *types;	/* the type section */
	u32 types_len;
	const char *strs;	/* the string section */
	u32 strs_len;
	const struct btf_type **by_id;	/* by_id[id], id 1..nr */
	u32 nr;
};

/* Bytes that follow a struct btf_type of @t's kind, or -1 if unknown. */
static long rcvfix_btf_extra(const struct btf_type *t)
{
	u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
		return sizeof(u32);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case RCVFIX_BTF_KIND_FLOAT:
	case RCVFIX_BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case RCVFIX_BTF_KIND_DECL_TAG:
		return sizeof(u32);	/* struct btf_decl_tag */
	case RCVFIX_BTF_KIND_ENUM64:
		return (long)vlen * 3 * sizeof(u32);	/* struct btf_enum64 */
	default:
		return -1;
	}
}

static const char *rcvfix_btf_name(const struct rcvfix_btf *btf, u32 off)
{
	if (off >= btf->strs_len)
		return NULL;
	/* the section ends with a NUL (checked at parse) */
	return btf->strs + off;
}

/* Indexes every type of the type section; 0 or -EINVAL (with @why). */
static int rcvfix_btf_index(struct rcvfix_btf *btf, char *why, size_t len)
{
	u32 pos = 0, nr = 0, cap = 1024;
	const struct btf_type **by_id, **grown;

	by_id = kvmalloc_array(cap, sizeof(*by_id), GFP_KERNEL);
	if (!by_id)
		return -ENOMEM;
	while (pos < btf->types_len) {
		const struct btf_type *t = (const void *)(btf->types + pos);
		long extra;

		if (btf->types_len - pos < sizeof(*t))
			goto bad;
		extra = rcvfix_btf_extra(t);
		if (extra < 0) {
			snprintf(why, len, "%s has a BTF type kind %u rcvfix does not know",
				 RCVFIX_BTF_PATH, BTF_INFO_KIND(t->info));
			kvfree(by_id);
			return -EINVAL;
		}
		if (btf->types_len - pos - sizeof(*t) < extra)
			goto bad;
		if (nr + 2 > cap) {
			grown = kvmalloc_array(cap * 2, sizeof(*by_id),
					       GFP_KERNEL);
			if (!grown) {
				kvfree(by_id);
				return -ENOMEM;
			}
			memcpy(grown, by_id, cap * sizeof(*by_id));
			kvfree(by_id);
			by_id = grown;
			cap *= 2;
		}
		by_id[++nr] = t;
		pos += sizeof(*t) + extra;
	}
	by_id[0] = NULL;	/* id 0 is void */
	btf->by_id = by_id;
	btf->nr = nr;
	return 0;
bad:
	snprintf(why, len, "%s: truncated type section", RCVFIX_BTF_PATH);
	kvfree(by_id);
	return -EINVAL;
}

/*
 * The type @id names, following typedefs and qualifiers; NULL for void
 * and for a chain too long or out of range.
 */
static const struct btf_type *rcvfix_btf_resolve(const struct rcvfix_btf *btf,
						 u32 id)
{
	unsigned int depth;

	for (depth = 0; depth < 32 && id && id <= btf->nr; depth++) {
		const struct btf_type *t = btf->by_id[id];

		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case RCVFIX_BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			return t;
		}
	}
	return NULL;
}

/*
 * The size of type @id, following typedefs and qualifiers; 0 where it has
 * none this code can tell (void, functions, forward declarations).
 */
static u32 rcvfix_btf_type_size(const struct rcvfix_btf *btf, u32 id)
{
	const struct btf_type *t = rcvfix_btf_resolve(btf, id);

	if (!t)
		return 0;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case RCVFIX_BTF_KIND_ENUM64:
	case RCVFIX_BTF_KIND_FLOAT:
		return t->size;
	case BTF_KIND_PTR:
		return sizeof(void *);
	default:
		return 0;
	}
}

/* The one struct named @name; NULL (with @why) if none or several. */
static const struct btf_type *rcvfix_btf_struct(const struct rcvfix_btf *btf,
						const char *name,
						char *why, size_t len)
{
	const struct btf_type *found = NULL;
	u32 id;

	for (id = 1; id <= btf->nr; id++) {
		const struct btf_type *t = btf->by_id[id];
		const char *n;

		if (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT)
			continue;
		n = rcvfix_btf_name(btf, t->name_off);
		if (!n || strcmp(n, name))
			continue;
		if (found) {
			snprintf(why, len, "struct %s is defined twice in %s",
				 name, RCVFIX_BTF_PATH);
			return NULL;
		}
		found = t;
	}
	if (!found)
		snprintf(why, len, "no struct %s in %s", name, RCVFIX_BTF_PATH);
	return found;
}

/*
 * The struct or union type @id names, following typedefs and qualifiers;
 * NULL where it is neither.
 */
static const struct btf_type *rcvfix_btf_aggregate(const struct rcvfix_btf *btf,
						   u32 id)
{
	const struct btf_type *t = rcvfix_btf_resolve(btf, id);

	if (t && (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT ||
		  BTF_INFO_KIND(t->info) == BTF_KIND_UNION))
		return t;
	return NULL;
}

/*
 * The member @name of the struct or union @t, searched in its anonymous
 * members too (struct_group() puts fields in an anonymous union of two
 * anonymous structs), depth first in member order: C gives a name to one
 * member of a struct and its anonymous members, so the order cannot
 * matter. Its bit offset from @t's start in @bits, whether it is a bit
 * field in @bitfield. NULL if none within @depth levels.
 */
static const struct btf_member *rcvfix_btf_member(const struct rcvfix_btf *btf,
						  const struct btf_type *t,
						  const char *name,
						  unsigned int depth,
						  u32 *bits, bool *bitfield)
{
	const struct btf_member *m = (const struct btf_member *)(t + 1);
	const struct btf_member *found;
	const struct btf_type *inner;
	u32 i, vlen = BTF_INFO_VLEN(t->info);
	u32 off;
	const char *n;

	for (i = 0; i < vlen; i++, m++) {
		off = BTF_INFO_KFLAG(t->info) ?
			BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		n = rcvfix_btf_name(btf, m->name_off);
		if (n && *n) {
			if (strcmp(n, name))
				continue;
			*bits = off;
			*bitfield = BTF_INFO_KFLAG(t->info) &&
				    BTF_MEMBER_BITFIELD_SIZE(m->offset);
			return m;
		}
		inner = rcvfix_btf_aggregate(btf, m->type);
		if (!inner || !depth)
			continue;
		found = rcvfix_btf_member(btf, inner, name, depth - 1, bits,
					  bitfield);
		if (found) {
			*bits += off;
			return found;
		}
	}
	return NULL;
}

static int rcvfix_btf_field(const struct rcvfix_btf *btf,
			    struct rcvfix_btf_field *f, char *why, size_t len)
{
	const struct btf_type *t = rcvfix_btf_struct(btf, f->type, why, len);
	const struct btf_member *m;
	bool bitfield;
	u32 bits, size;

	if (!t)
		return -ENOENT;
	m = rcvfix_btf_member(btf, t, f->member, 4, &bits, &bitfield);
	if (!m) {
		snprintf(why, len, "struct %s has no member %s", f->type,
			 f->member);
		return -ENOENT;
	}
	size = rcvfix_btf_type_size(btf, m->type);
	if (bitfield || bits % 8) {
		snprintf(why, len, "%s.%s is a bit field", f->type, f->member);
		return -EINVAL;
	}
	if (size != f->size) {
		snprintf(why, len, "%s.%s is %u bytes, not %u", f->type,
			 f->member, size, f->size);
		return -EINVAL;
	}
	if (bits / 8 + size > t->size) {
		snprintf(why, len, "%s.%s lies outside its struct",
			 f->type, f->member);
		return -EINVAL;
	}
	f->offset = bits / 8;
	f->type_size = t->size;
	return 0;
}

/* file_open_root() takes a struct path since 5.12; before, its parts. */
static struct file *rcvfix_file_open_root(const struct path *root,
					  const char *name, int flags)
{
#ifdef RCVFIX_HAVE_FILE_OPEN_ROOT_PATH
	return file_open_root(root, name, flags, 0);
#else
	return file_open_root(root->dentry, root->mnt, name, flags, 0);
#endif
}

/* The header's fields this code reads, as every kernel has them. */
#define RCVFIX_BTF_HDR_MIN offsetofend(struct btf_header, str_len)

/*
 * Reads the whole of /sys/kernel/btf/vmlinux in init's root (also when
 * modprobe runs in a container), or where that has no sysfs in the
 * caller's, into a vmalloc()ed @bufp with plain VFS reads. Not
 * kernel_read_file(): it asks the LSMs about a read of a kind they know (a
 * module, firmware, a policy...), and IPE (6.12+) warns about any other, a
 * kernel WARNING in every log. Returns the size read, or an
 * error.
 */
static ssize_t rcvfix_btf_read(void **bufp)
{
	struct file *file;
	struct path root;
	loff_t size, pos = 0;
	ssize_t got = 0;
	void *buf;

	task_lock(&init_task);
	get_fs_root(init_task.fs, &root);
	task_unlock(&init_task);
	file = rcvfix_file_open_root(&root, RCVFIX_BTF_PATH, O_RDONLY);
	path_put(&root);
	/* init's root without sysfs (its initramfs, after a pivot_root) */
	if (IS_ERR(file) && PTR_ERR(file) == -ENOENT)
		file = filp_open(RCVFIX_BTF_PATH, O_RDONLY, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	size = i_size_read(file_inode(file));
	if (size <= 0 || size > INT_MAX) {
		fput(file);
		return size ? -EFBIG : -ENODATA;
	}
	buf = vmalloc(size);
	if (!buf) {
		fput(file);
		return -ENOMEM;
	}
	while (pos < size) {
		got = kernel_read(file, (char *)buf + pos, size - pos, &pos);
		if (got <= 0)
			break;
	}
	fput(file);
	if (got < 0) {
		vfree(buf);
		return got;
	}
	*bufp = buf;
	return pos;
}

/*
 * The kernel's BTF as read at load, kept between the readers of one load
 * (MPTCP's subflow list, its SO_RCVLOWAT fix) and dropped by
 * rcvfix_btf_release(): the file is a few MB, read and indexed once.
 */
static struct {
	bool loaded;
	int err;		/* of reading and indexing it, 0 if usable */
	char why[160];		/* why, when err */
	void *buf;
	struct rcvfix_btf btf;
} rcvfix_btf_vmlinux;

/* Reads and indexes the kernel's BTF into rcvfix_btf_vmlinux, once. */
static void rcvfix_btf_load(void)
{
	struct rcvfix_btf *btf = &rcvfix_btf_vmlinux.btf;
	char *why = rcvfix_btf_vmlinux.why;
	size_t why_len = sizeof(rcvfix_btf_vmlinux.why);
	const struct btf_header *hdr;
	void *buf = NULL;
	ssize_t got;
	int ret;

	rcvfix_btf_vmlinux.loaded = true;
	got = rcvfix_btf_read(&buf);
	if (got < 0) {
		snprintf(why, why_len, "cannot read %s (%zd): the kernel has no BTF",
			 RCVFIX_BTF_PATH, got);
		rcvfix_btf_vmlinux.err = got;
		return;
	}
	hdr = buf;
	ret = -EINVAL;
	/* 7.x's header adds a layout section: read up to str_len only */
	if (got < RCVFIX_BTF_HDR_MIN || hdr->magic != BTF_MAGIC ||
	    hdr->version != BTF_VERSION || hdr->hdr_len < RCVFIX_BTF_HDR_MIN ||
	    (u64)hdr->hdr_len + hdr->type_off + hdr->type_len > got ||
	    (u64)hdr->hdr_len + hdr->str_off + hdr->str_len > got ||
	    !hdr->str_len || hdr->type_off % 4) {
		snprintf(why, why_len, "%s is not BTF this code can read (%zd bytes)",
			 RCVFIX_BTF_PATH, got);
		goto out;
	}
	btf->types = (const u8 *)buf + hdr->hdr_len + hdr->type_off;
	btf->types_len = hdr->type_len;
	btf->strs = (const char *)buf + hdr->hdr_len + hdr->str_off;
	btf->strs_len = hdr->str_len;
	if (btf->strs[btf->strs_len - 1]) {
		snprintf(why, why_len, "%s: unterminated string section",
			 RCVFIX_BTF_PATH);
		goto out;
	}
	ret = rcvfix_btf_index(btf, why, why_len);
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(why, why_len, "no memory to index %s",
				 RCVFIX_BTF_PATH);
		goto out;
	}
	rcvfix_btf_vmlinux.buf = buf;
	return;
out:
	vfree(buf);
	rcvfix_btf_vmlinux.err = ret;
}

/**
 * rcvfix_btf_find_fields - find members of private structs in vmlinux BTF
 * @fields: what to find; each one's offset and type_size are set
 * @n: how many
 * @why: set to the reason on error, one line for the log
 * @why_len: its size
 *
 * The first call of a load reads /sys/kernel/btf/vmlinux of the host
 * (init's root, also when modprobe runs in a container); later ones use
 * what it read, until rcvfix_btf_release(). Sleeps. Returns 0 once every
 * field was found as described, or an error.
 */
int rcvfix_btf_find_fields(struct rcvfix_btf_field *fields, unsigned int n,
			   char *why, size_t why_len)
{
	unsigned int i;
	int ret = 0;

	if (!rcvfix_btf_vmlinux.loaded)
		rcvfix_btf_load();
	if (rcvfix_btf_vmlinux.err) {
		strscpy(why, rcvfix_btf_vmlinux.why, why_len);
		return rcvfix_btf_vmlinux.err;
	}
	for (i = 0; i < n && !ret; i++)
		ret = rcvfix_btf_field(&rcvfix_btf_vmlinux.btf, &fields[i],
				       why, why_len);
	return ret;
}

/**
 * rcvfix_btf_release - drop the BTF read at load
 *
 * Once every reader has its fields (the end of module init, on success and
 * on failure); a later rcvfix_btf_find_fields() would read it again.
 */
void rcvfix_btf_release(void)
{
	kvfree(rcvfix_btf_vmlinux.btf.by_id);
	vfree(rcvfix_btf_vmlinux.buf);
	memset(&rcvfix_btf_vmlinux, 0, sizeof(rcvfix_btf_vmlinux));
}
