/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stepping aside for livepatches: while a livepatch module loads, or holds
 * a hooked function, the hooks stay disarmed. The arming unit (arm.c)
 * lends its lock and transitions at load; nothing here calls it otherwise.
 */
#ifndef _RCVFIX_LIVEPATCH_H
#define _RCVFIX_LIVEPATCH_H

#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/types.h>

struct rcvfix_hook;

/**
 * struct rcvfix_livepatch_arming - what the arming unit lends the step-aside
 * @lock: the arming lock: every member below, and every function here
 *	whose name ends in _locked, is called under it
 * @arm: arm every hook, @first (if not NULL) before the others; 0, or the
 *	error of the hook ftrace refused, stored in *@failed
 * @disarm: disarm the hooks if they are armed; @settle: namespaces still
 *	want the fix
 * @wanted: does some namespace have the fix on?
 */
struct rcvfix_livepatch_arming {
	struct mutex *lock;		/* arm.c's rcvfix_arm_lock */
	int (*arm)(struct rcvfix_hook *first, struct rcvfix_hook **failed);
	void (*disarm)(bool settle);
	bool (*wanted)(void);
};

int rcvfix_livepatch_init(const struct rcvfix_livepatch_arming *arming);
void rcvfix_livepatch_close(void);
void rcvfix_livepatch_exit(void);
bool rcvfix_livepatch_aside(void);
void rcvfix_livepatch_wanted_locked(void);
void rcvfix_livepatch_kick(void);
void rcvfix_livepatch_show(struct seq_file *m);

#endif /* _RCVFIX_LIVEPATCH_H */
