/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where private kernel structs keep a member, read from the running
 * kernel's own type information (/sys/kernel/btf/vmlinux), for the few
 * fields rcvfix must read in structs no header declares.
 */
#ifndef _RCVFIX_BTF_LAYOUT_H
#define _RCVFIX_BTF_LAYOUT_H

#include <linux/types.h>

/* One member to find: in, its struct, name and type size; out, where. */
struct rcvfix_btf_field {
	const char *type;	/* struct name, e.g. "mptcp_sock" */
	const char *member;	/* member name, e.g. "ack_seq" */
	u32 size;		/* the size its type must have, in bytes */
	u32 offset;		/* out: its byte offset in the struct */
	u32 type_size;		/* out: the size of the whole struct */
};

int rcvfix_btf_find_fields(struct rcvfix_btf_field *fields, unsigned int n,
			   char *why, size_t why_len);
void rcvfix_btf_release(void);

#endif /* _RCVFIX_BTF_LAYOUT_H */
