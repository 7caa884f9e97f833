// SPDX-License-Identifier: GPL-2.0
/*
 * The SO_RCVLOWAT wakeup fix: TCP must signal data-ready only once
 * rcv_nxt - copied_seq reaches sk_rcvlowat, not on every packet. Linux
 * does this since 4.18 in tcp_data_ready() (commit 03f45c883c6f, "tcp:
 * avoid extra wakeups for SO_RCVLOWAT users"), so on every kernel rcvfix
 * builds for it is native: this file only detects and reports it. The
 * in-guest tests prove the property itself (wakeups per MB). The probe is a
 * symbol lookup only: nothing is ever armed on tcp_data_ready(), which runs
 * for every received packet (see rcvfix_hook_resolve()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/string.h>

#include "hook.h"
#include "rcvlowat.h"
#include "status_keys.h"

static const char *rcvfix_rcvlowat = "unknown";

/*
 * tcp_data_ready() was introduced by the fix itself. Where it is not a
 * symbol (inlined by some future compiler), say "unknown" rather than
 * guess: the module then still fixes SO_RCVBUF.
 */
void rcvfix_rcvlowat_detect(void)
{
	struct rcvfix_hook probe = { .name = "tcp_data_ready" };

	if (!rcvfix_hook_resolve(&probe))
		rcvfix_rcvlowat = "native (tcp_data_ready)";
}

const char *rcvfix_rcvlowat_state(void)
{
	return rcvfix_rcvlowat;
}

void rcvfix_rcvlowat_show(struct seq_file *m)
{
	/* the first word only: the value of a key must be one word */
	seq_printf(m, RCVFIX_KEY_RCVLOWAT_WAKEUP " %.*s\n",
		   (int)strcspn(rcvfix_rcvlowat, " "), rcvfix_rcvlowat);
}
