/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract of /proc/net/rcvfix: every key, once, in the order the
 * module prints them, with its scope, type and help text. The module
 * prints each key by its RCVFIX_KEY_* name; the tools (tools/, user space:
 * plain C, no kernel headers) take from rcvfix_status_keys[] which keys are
 * module-wide and the Prometheus help of each; test 13 reads the list from
 * here and compares it with the file. Adding a key is a name and a line of
 * the list here, then the line that prints it.
 *
 * Scope: MODULE keys describe the host and are the same in every
 * namespace (shown only to the host, see module/status.c); NETNS keys are
 * the namespace's own; PATH keys are the namespace's, once per path
 * ("setsockopt.sets", "bpf.sets", "kernel.sets").
 * Type: TEXT is a word; BOOL is yes/no; GAUGE and COUNTER are integers.
 */
#ifndef _RCVFIX_STATUS_KEYS_H
#define _RCVFIX_STATUS_KEYS_H

/* Scope and type of a key (see above). */
#define RCVFIX_SCOPE_MODULE	0
#define RCVFIX_SCOPE_NETNS	1
#define RCVFIX_SCOPE_PATH	2
#define RCVFIX_TYPE_TEXT	0
#define RCVFIX_TYPE_BOOL	1
#define RCVFIX_TYPE_GAUGE	2
#define RCVFIX_TYPE_COUNTER	3

#define RCVFIX_KEY_VERSION		"version"
#define RCVFIX_KEY_SRCVERSION		"srcversion"
#define RCVFIX_KEY_SIGNATURE		"signature"
#define RCVFIX_KEY_SIG_ENFORCED		"sig_enforced"
#define RCVFIX_KEY_STRATEGY		"strategy"
#define RCVFIX_KEY_TARGETS		"targets"
#define RCVFIX_KEY_ARMED		"armed"
#define RCVFIX_KEY_ENABLED_NAMESPACES	"enabled_namespaces"
#define RCVFIX_KEY_ARMS			"arms"
#define RCVFIX_KEY_DISARMS		"disarms"
#define RCVFIX_KEY_ARM_FAILURES		"arm_failures"
#define RCVFIX_KEY_RECEIVE_HOOKS	"receive_hooks_armed"
#define RCVFIX_KEY_RECEIVE_HOOKS_SINCE	"receive_hooks_armed_since"
#define RCVFIX_KEY_STEPPED_ASIDE	"stepped_aside"
#define RCVFIX_KEY_STEPPED_ASIDE_FOR	"stepped_aside_for"
#define RCVFIX_KEY_STEPS_ASIDE		"steps_aside"
#define RCVFIX_KEY_LAST_ARM_ERROR	"last_arm_error"
#define RCVFIX_KEY_RCVLOWAT_WAKEUP	"rcvlowat_wakeup"
#define RCVFIX_KEY_PART_RCVBUF_MPTCP	"rcvbuf_mptcp"
#define RCVFIX_KEY_PART_DATA_FIN	"mptcp_data_fin"
#define RCVFIX_KEY_PART_RCVLOWAT_MPTCP	"rcvlowat_mptcp"
#define RCVFIX_KEY_INDIRECT_CALLS	"indirect_calls"
#define RCVFIX_KEY_ENABLE		"enable"
#define RCVFIX_KEY_LOWAT_ADDED		"rcvlowat_wakeups_added"
#define RCVFIX_KEY_LOWAT_HELD		"rcvlowat_wakeups_held"
#define RCVFIX_KEY_LOWAT_WINDOW		"rcvlowat_window_updates"
#define RCVFIX_KEY_SETS			"sets"
#define RCVFIX_KEY_LOCKS_SET		"locks_set"
#define RCVFIX_KEY_LOCKS_AVOIDED	"locks_avoided"
#define RCVFIX_KEY_LOCKS_KEPT		"locks_kept"

/*
 * Every key in the file's order, for user space (the tools); the module
 * prints the names above.
 */
#ifndef __KERNEL__
struct rcvfix_status_key {
	const char *name;
	int scope;
	int type;
	const char *help;
};

static const struct rcvfix_status_key rcvfix_status_keys[] = {
	{ RCVFIX_KEY_VERSION, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "The rcvfix module's version" },
	{ RCVFIX_KEY_SRCVERSION, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "The build's source checksum (modinfo -F srcversion), or none" },
	{ RCVFIX_KEY_SIGNATURE, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "Module signature at load: verified, unverified (unsigned, unknown key), unchecked" },
	{ RCVFIX_KEY_SIG_ENFORCED, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_BOOL,
	  "yes when module.sig_enforce refuses modules without a trusted signature" },
	{ RCVFIX_KEY_STRATEGY, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "How rcvfix reaches __sock_set_rcvbuf(): callers" },
	{ RCVFIX_KEY_TARGETS, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "The kernel functions rcvfix hooks, comma-separated" },
	{ RCVFIX_KEY_ARMED, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_BOOL,
	  "1 when the module's hooks are armed" },
	{ RCVFIX_KEY_ENABLED_NAMESPACES, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_GAUGE,
	  "Namespaces with net.rcvfix.enable 1" },
	{ RCVFIX_KEY_ARMS, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_COUNTER,
	  "Times the hooks were armed since the module loaded" },
	{ RCVFIX_KEY_DISARMS, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_COUNTER,
	  "Times the hooks were disarmed since the load" },
	{ RCVFIX_KEY_ARM_FAILURES, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_COUNTER,
	  "Times arming the hooks failed" },
	{ RCVFIX_KEY_RECEIVE_HOOKS, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_BOOL,
	  "1 when MPTCP's receive-path hooks are armed (an MPTCP socket set SO_RCVLOWAT)" },
	{ RCVFIX_KEY_RECEIVE_HOOKS_SINCE, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_GAUGE,
	  "Seconds since boot when the receive-path hooks were last armed, 0 while not armed" },
	{ RCVFIX_KEY_STEPPED_ASIDE, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_BOOL,
	  "1 while rcvfix stays disarmed for a livepatch (the fix is not in force)" },
	{ RCVFIX_KEY_STEPPED_ASIDE_FOR, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "What rcvfix stands aside for: livepatch:MODULE:FUNCTION (its holder), or none" },
	{ RCVFIX_KEY_STEPS_ASIDE, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_COUNTER,
	  "Times rcvfix stepped aside for a livepatch since the load" },
	{ RCVFIX_KEY_LAST_ARM_ERROR, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "ERRNO:FUNCTION:OWNER of the last failed arm, or none" },
	{ RCVFIX_KEY_RCVLOWAT_WAKEUP, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "SO_RCVLOWAT wakeups, tcp:S,mptcp:S; S native|rcvfix|native+rcvfix|kernel|none|unknown" },
	{ RCVFIX_KEY_PART_RCVBUF_MPTCP, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "SO_RCVBUF rule on MPTCP sockets: in-force, none, off:WHY (kernel's lock)" },
	{ RCVFIX_KEY_PART_DATA_FIN, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "Fallen-back MPTCP DATA_FIN after queued data: in-force, not-needed, none, off:WHY" },
	{ RCVFIX_KEY_PART_RCVLOWAT_MPTCP, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "MPTCP SO_RCVLOWAT wakeups as TCP's: in-force, none, off:WHY (kernel's rule)" },
	{ RCVFIX_KEY_INDIRECT_CALLS, RCVFIX_SCOPE_MODULE, RCVFIX_TYPE_TEXT,
	  "Kernel functions rcvfix calls through a pointer, NAME:endbr64|no-ibt|sealed, or none" },
	{ RCVFIX_KEY_ENABLE, RCVFIX_SCOPE_NETNS, RCVFIX_TYPE_GAUGE,
	  "net.rcvfix.enable of the namespace: 1 fixed, 0 stock behaviour" },
	{ RCVFIX_KEY_LOWAT_ADDED, RCVFIX_SCOPE_NETNS, RCVFIX_TYPE_COUNTER,
	  "MPTCP SO_RCVLOWAT readers rcvfix woke where the kernel did not (TCP's rule)" },
	{ RCVFIX_KEY_LOWAT_HELD, RCVFIX_SCOPE_NETNS, RCVFIX_TYPE_COUNTER,
	  "MPTCP wakeups rcvfix held back below the SO_RCVLOWAT mark (kernels before 6.7)" },
	{ RCVFIX_KEY_LOWAT_WINDOW, RCVFIX_SCOPE_NETNS, RCVFIX_TYPE_COUNTER,
	  "window updates rcvfix sent after an MPTCP SO_RCVLOWAT reader's read (TCP's rule)" },
	{ RCVFIX_KEY_SETS, RCVFIX_SCOPE_PATH, RCVFIX_TYPE_COUNTER,
	  "SO_RCVBUF settings rcvfix applied in the namespace, by path" },
	{ RCVFIX_KEY_LOCKS_SET, RCVFIX_SCOPE_PATH, RCVFIX_TYPE_COUNTER,
	  "Receive buffers locked because the size is below tcp_rmem[1]" },
	{ RCVFIX_KEY_LOCKS_AVOIDED, RCVFIX_SCOPE_PATH, RCVFIX_TYPE_COUNTER,
	  "Receive buffers left unlocked where stock Linux locks them" },
	{ RCVFIX_KEY_LOCKS_KEPT, RCVFIX_SCOPE_PATH, RCVFIX_TYPE_COUNTER,
	  "Receive buffers that were locked already and stay locked" },
};
#endif /* !__KERNEL__ */

#endif /* _RCVFIX_STATUS_KEYS_H */
