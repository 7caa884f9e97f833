// SPDX-License-Identifier: GPL-2.0
/*
 * The SO_RCVLOWAT wakeup fix, per protocol: a stream socket must signal
 * data-ready only once the data queued for its reader reaches sk_rcvlowat,
 * not on every packet. TCP does this since 4.18 in tcp_data_ready()
 * (commit 03f45c883c6f, "tcp: avoid extra wakeups for SO_RCVLOWAT
 * users"), so on every kernel rcvfix builds for it is native: this file
 * only detects and reports it. The probe is a symbol lookup only: nothing
 * is ever armed on tcp_data_ready(), which runs for every received packet
 * (see rcvfix_hook_resolve()). MPTCP has it since 6.7; before, rcvfix
 * fixes it (mptcp_lowat.c). This file owns the report of both: the
 * "rcvlowat_wakeup" line of /proc/net/rcvfix and the load log's words.
 * The in-guest tests prove the property itself (wakeups per MB).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/string.h>

#include "hook.h"
#include "mptcp_lowat.h"
#include "rcvlowat.h"
#include "status_keys.h"

static const char *rcvfix_rcvlowat = "unknown";
static char rcvfix_rcvlowat_words[80];

/*
 * tcp_data_ready() was introduced by the fix itself. Where it is not a
 * symbol (inlined by some future compiler), say "unknown" rather than
 * guess: the module then still fixes SO_RCVBUF. The probe is never armed,
 * so it is resolved as an observing hook: only a redirect needs the
 * search for a compiler copy (NAME.isra.N ...), which walks every
 * traceable function, and a copy would not make the fix any less native.
 */
void rcvfix_rcvlowat_detect(void)
{
	struct rcvfix_hook probe = { .name = "tcp_data_ready", .observe = true };

	if (!rcvfix_hook_resolve(&probe))
		rcvfix_rcvlowat = "native (tcp_data_ready)";
	rcvfix_mptcp_lowat_detect();
}

/* For the load log, once the hooks are resolved: "tcp native (...), mptcp rcvfix". */
const char *rcvfix_rcvlowat_state(void)
{
	snprintf(rcvfix_rcvlowat_words, sizeof(rcvfix_rcvlowat_words),
		 "tcp %s, mptcp %s", rcvfix_rcvlowat,
		 rcvfix_mptcp_lowat_state());
	return rcvfix_rcvlowat_words;
}

/*
 * "rcvlowat_wakeup tcp:native,mptcp:rcvfix": the value of a key must be one
 * word; per protocol, the first word of its state.
 */
void rcvfix_rcvlowat_show(struct seq_file *m)
{
	seq_printf(m, RCVFIX_KEY_RCVLOWAT_WAKEUP " tcp:%.*s,mptcp:%s\n",
		   (int)strcspn(rcvfix_rcvlowat, " "), rcvfix_rcvlowat,
		   rcvfix_mptcp_lowat_state());
}
