#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The controls: net.rcvfix.enable takes exactly 0 or 1 (anything else is
# EINVAL and changes nothing); 1 only with CAP_NET_ADMIN in the initial user
# namespace, 0 with CAP_NET_ADMIN over the namespace; a bad default_enable
# refuses the load; modinfo and /proc/net/rcvfix (host-wide keys to the host).
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/sysctlw" "$RCVFIX_BIN/rcvfixctl"

E=/proc/sys/net/rcvfix/enable
W=$RCVFIX_BIN/sysctlw
loaded() { grep -q '^rcvfix ' /proc/modules; }

# 1. default_enable: bad values refuse the load, good ones load.
rcvfix_unload
for v in 2 -1 abc "" 1x 0x1; do
	if rcvfix_load "default_enable=$v" 2> /dev/null; then
		fail "default_enable='$v' refuses the load" "insmod succeeded"
	elif loaded; then
		fail "default_enable='$v' refuses the load" "module is loaded"
	else
		ok "default_enable='$v' refuses the load"
	fi
	rcvfix_unload
done
for v in 0 1; do
	if rcvfix_load "default_enable=$v"; then
		check_eq "default_enable=$v loads and sets enable" "$v" \
			"$(rcvfix_enabled)"
	else
		fail "default_enable=$v loads"
	fi
	rcvfix_unload
done

# 2. net.rcvfix.enable: bad input, from either value.
rcvfix_load || { fail "load rcvfix"; done_testing; }
ns=$(netns_new sysctl)
bad=(2 -1 abc "" $'\n' " " "1 2" "1abc" 0x1 11 $'1\n1' "2147483648")
for start in 0 1; do
	for where in initial ns; do
		nsa=()
		[[ $where == ns ]] && nsa=(ip netns exec "$ns")
		# One program run writes them all (each its own open+write).
		mapfile -t got <<< "$("${nsa[@]}" sh -c '
			w=$0 e=$1; "$w" "$e" "$2"; shift 2
			"$w" "$e" "$@"
			"$w" --repeat 4096 "$e" 1; "$w" --repeat 65536 "$e" 1
			cat "$e"' "$W" "$E" "$start" "${bad[@]}")"
		check_eq "$where: set to $start" "ret=${#start} errno=0" "${got[0]}"
		i=1
		for v in "${bad[@]}" "4096 bytes" "65536 bytes"; do
			check_eq "$where=$start: write '${v//$'\n'/\\n}' -> EINVAL" \
				"ret=-1 errno=EINVAL" "${got[i]:-}"
			i=$((i + 1))
		done
		check_eq "$where=$start: value unchanged" "$start" "${got[i]:-}"
	done
done

# 3. Good input, including what echo(1) writes.
for v in 1 0 $'1\n' $'0\n'; do
	check_eq "write '${v//$'\n'/\\n}' accepted" "ret=${#v} errno=0" \
		"$("$W" "$E" "$v")"
	check_eq "write '${v//$'\n'/\\n}' reads back" "${v%$'\n'}" "$(cat "$E")"
done

# 4. Permission: CAP_NET_ADMIN over the namespace's owning user namespace.
for where in initial ns; do
	nsa=()
	[[ $where == ns ]] && nsa=(ip netns exec "$ns")
	"${nsa[@]}" "$W" "$E" 0 > /dev/null
	check_eq "$where: write without CAP_NET_ADMIN -> EPERM" \
		"ret=-1 errno=EPERM" "$("${nsa[@]}" "$W" --drop-cap "$E" 1)"
	check_eq "$where: value unchanged after EPERM" 0 "$("${nsa[@]}" cat "$E")"
	check "$where: still readable without CAP_NET_ADMIN" \
		"${nsa[@]}" setpriv --inh-caps=-net_admin \
		--bounding-set=-net_admin cat "$E"
done
# Turning the fix on arms host-wide hooks: it needs CAP_NET_ADMIN in the
# initial user namespace. Root of a child user namespace (a rootless
# container, a pod with hostUsers: false) may only turn its own switch off;
# the host's root can turn it on from outside.
if unshare -U -r true 2> /dev/null; then
	check_eq "root of a child user namespace: initial -> EPERM" \
		"ret=-1 errno=EPERM" "$(unshare -U -r "$W" "$E" 1)"
	check_eq "initial: value unchanged" 0 "$(cat "$E")"
	arms=$(rcvfix_status arms)
	check_eq "root of a child user namespace: its own netns, 1 -> EPERM" \
		"0 ret=-1 errno=EPERM 0" \
		"$(unshare -U -r -n sh -c "cat $E; $W $E 1; cat $E" | tr '\n' ' ' |
		   sed 's/ $//')"
	check_eq "nothing armed by the refused write" "$arms" \
		"$(rcvfix_status arms)"
	unshare -U -r -n sleep 60 &
	upid=$!
	on_exit "kill $upid 2> /dev/null"
	for i in $(seq 50); do
		[[ $(readlink /proc/$upid/ns/net) != "$(readlink /proc/self/ns/net)" ]] && break
		sleep 0.1
	done
	check_eq "the host's root turns that namespace on from outside" \
		"ret=1 errno=0 1" \
		"$(nsenter --net=/proc/$upid/ns/net "$W" "$E" 1) $(nsenter --net=/proc/$upid/ns/net cat "$E")"
	check_eq "its own root may turn it off" "ret=1 errno=0 0" \
		"$(nsenter -t $upid -U -n "$W" "$E" 0) $(nsenter --net=/proc/$upid/ns/net cat "$E")"
	check_eq "... but not on again" "ret=-1 errno=EPERM 0" \
		"$(nsenter -t $upid -U -n "$W" "$E" 1) $(nsenter --net=/proc/$upid/ns/net cat "$E")"
	kill $upid 2> /dev/null
	wait $upid 2> /dev/null
	# Container view: its own switch and counters, no host-wide keys.
	check_eq "root of a child user namespace sees version, srcversion, switch, counters only" \
		"version srcversion enable rcvlowat_wakeups_added rcvlowat_wakeups_held rcvlowat_window_updates setsockopt.sets" \
		"$(unshare -U -r -n awk '{ print $1 }' /proc/net/rcvfix | head -n 7 | tr '\n' ' ' | sed 's/ $//')"
else
	echo "# user namespaces unavailable: child user namespace cases not run"
fi

# Host-wide keys in a namespace other than the initial one: to a reader with
# CAP_NET_ADMIN in the initial user namespace only.
check "ns: root sees the host-wide keys" \
	grep -q '^armed ' <(ip netns exec "$ns" cat /proc/net/rcvfix)
check_eq "ns: without CAP_NET_ADMIN, no host-wide key" 0 \
	"$(ip netns exec "$ns" setpriv --inh-caps=-net_admin --bounding-set=-net_admin \
		cat /proc/net/rcvfix | grep -cE '^(signature|sig_enforced|strategy|targets|armed|enabled_namespaces|arms|disarms|arm_failures|stepped_aside|stepped_aside_for|steps_aside|last_arm_error|rcvlowat_wakeup|rcvbuf_mptcp|mptcp_data_fin|rcvlowat_mptcp|indirect_calls) ')"
check "initial namespace: host-wide keys also without CAP_NET_ADMIN" \
	grep -q '^armed ' <(setpriv --inh-caps=-net_admin --bounding-set=-net_admin cat /proc/net/rcvfix)

# 5. default_enable at run time: validated, used by new namespaces only.
P=/sys/module/rcvfix/parameters/default_enable
check_eq "default_enable param reads 0" 0 "$(cat "$P")"
for v in 2 -1 abc; do
	check_eq "runtime default_enable='$v' -> EINVAL" "ret=-1 errno=EINVAL" \
		"$("$W" "$P" "$v")"
done
check_eq "default_enable unchanged" 0 "$(cat "$P")"
"$W" "$P" 1 > /dev/null
n2=$(netns_new sysctl2)
check_eq "new namespace after default_enable=1 starts at 1" 1 \
	"$(ip netns exec "$n2" cat "$E")"
check_eq "existing namespace keeps its value" 0 \
	"$(ip netns exec "$ns" cat "$E")"

# 6. A socket set by a task other than the one that created it (a descriptor
# passed with SCM_RIGHTS or taken with pidfd_getfd()): the socket's namespace
# decides (its switch, its tcp_rmem[1], its counters); the caller's own
# privilege counts (SO_RCVBUFFORCE: CAP_NET_ADMIN in the initial user
# namespace, sockopt_capable()), as in the kernel's sk_setsockopt().
HAND='
import ctypes, errno, os, socket, sys
mode, path = sys.argv[1], sys.argv[2]
if mode == "give":	# a TCP socket, handed to every taker
	s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
	srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	srv.bind(path)
	srv.listen(4)
	with open(path + ".tmp", "w") as f:
		f.write("%d %d\n" % (os.getpid(), s.fileno()))
	os.rename(path + ".tmp", path + ".info")
	while True:
		c = srv.accept()[0]
		socket.send_fds(c, [b"x"], [s.fileno()])
		c.close()
via, opt, val = sys.argv[3], {"rcvbuf": 8, "force": 33}[sys.argv[4]], int(sys.argv[5])
if via == "scm":
	u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	u.connect(path)
	fd = socket.recv_fds(u, 1, 1)[1][0]
else:
	pid, tfd = map(int, open(path + ".info").read().split())
	libc = ctypes.CDLL(None, use_errno=True)
	fd = libc.syscall(438, os.pidfd_open(pid), tfd, 0)	# pidfd_getfd
	if fd < 0:
		sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
s = socket.socket(fileno=fd)
try:
	s.setsockopt(socket.SOL_SOCKET, opt, val)
	err = "0"
except OSError as e:
	err = errno.errorcode[e.errno]
print(err, s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
      "locked" if s.getsockopt(socket.SOL_SOCKET, 72) & 2 else "unlocked")
'
# hand_give NAME CMD...: a giver run by CMD (with its namespaces) in the
# background; its socket is /tmp/rcvfix-hand-$$-NAME.
hand_give() {
	local path=/tmp/rcvfix-hand-$$-$1
	shift
	"$@" python3 -c "$HAND" give "$path" &
	on_exit "kill $!; rm -f $path $path.info"
	wait_for "$path.info" . 10 || fail "giver $path started"
}
# hand_take NAME scm|pidfd rcvbuf|force VALUE CMD...: "ERRNO SO_RCVBUF LOCK"
hand_take() {
	local path=/tmp/rcvfix-hand-$$-$1
	"${@:5}" python3 -c "$HAND" take "$path" "$2" "$3" "$4" 2>&1
}
if python3 -c 'import socket, os; socket.send_fds; os.pidfd_open' 2> /dev/null; then
	on=$(netns_new handon)
	rcvfix_enable 1 "$on"
	rcvfix_enable 0
	hand_give on ip netns exec "$on"
	hand_give init env
	r=$(tcp_rmem1 "$on")	# SO_RCVBUF r/2: a buffer of r, not below it
	[[ $(tcp_rmem1) == "$r" ]] || fail "tcp_rmem[1] alike here and in $on"
	before=$(rcvfix_counters setsockopt "$on")
	here=$(rcvfix_counters setsockopt)
	check_eq "a socket of an enabled namespace, set from a disabled one: the rule" \
		"0 $r unlocked" "$(hand_take on scm rcvbuf $((r / 2)))"
	check_eq "... counted in the socket's namespace" "1 0 1 0" \
		"$(counters_delta "$before" "$(rcvfix_counters setsockopt "$on")")"
	check_eq "... not in the caller's" "$here" "$(rcvfix_counters setsockopt)"
	check_eq "a socket of a disabled namespace, set from an enabled one: stock" \
		"0 $r locked" "$(hand_take init scm rcvbuf $((r / 2)) ip netns exec "$on")"
	check_eq "... counted nowhere" "1 0 1 0" \
		"$(counters_delta "$before" "$(rcvfix_counters setsockopt "$on")")"
	if unshare -U -r true 2> /dev/null; then
		unshare -U -r -n sleep 120 &
		upid=$!
		on_exit "kill $upid"
		for i in $(seq 50); do
			[[ $(readlink /proc/$upid/ns/net) != "$(readlink /proc/self/ns/net)" ]] && break
			sleep 0.1
		done
		nsenter --net=/proc/$upid/ns/net "$W" "$E" 1 > /dev/null
		hand_give user nsenter -t $upid -U -n
		force=$((2 * $(cat /proc/sys/net/core/rmem_max)))
		check_eq "SO_RCVBUFFORCE by root of a child user namespace, its own enabled namespace: EPERM" \
			"EPERM $r unlocked" \
			"$(hand_take user scm force $force nsenter -t $upid -U -n)"
		check_eq "the same socket taken by the host's root (pidfd_getfd): its privilege, the socket's rule" \
			"0 $((2 * force)) unlocked" "$(hand_take user pidfd force $force)"
	else
		echo "# user namespaces unavailable: SO_RCVBUFFORCE across them not run"
	fi
else
	echo "# python3 without socket.send_fds or os.pidfd_open: section 6 not run"
fi

# 7. modinfo and the status file.
check_eq "modinfo license" GPL "$(modinfo -F license "$RCVFIX_KO")"
check "modinfo description" test -n "$(modinfo -F description "$RCVFIX_KO")"
check "modinfo author" test -n "$(modinfo -F author "$RCVFIX_KO")"
check_eq "modinfo version = /proc/net/rcvfix version" \
	"$(rcvfix_status version)" "$(modinfo -F version "$RCVFIX_KO")"
# modpost writes a srcversion because of MODULE_VERSION(); the module shows
# the one it was loaded with.
check "modinfo srcversion is not empty" \
	test -n "$(modinfo -F srcversion "$RCVFIX_KO")"
check_eq "modinfo srcversion = /proc/net/rcvfix srcversion" \
	"$(modinfo -F srcversion "$RCVFIX_KO")" "$(rcvfix_status srcversion)"
check "modinfo documents default_enable" \
	grep -q '^default_enable:.\+' <<< "$(modinfo -F parm "$RCVFIX_KO")"
# The contract, module/status_keys.h: "KEY SCOPE TYPE" in the file's order.
contract=$(awk '/^#define RCVFIX_KEY_/ { gsub(/"/, "", $3); k[$2] = $3 }
	/^\t\{ RCVFIX_KEY_/ { gsub(/[{},]/, " ")
		sub(/RCVFIX_SCOPE_/, "", $2); sub(/RCVFIX_TYPE_/, "", $3)
		print k[$1], $2, $3 }' "$RCVFIX_REPO/module/status_keys.h")
check "module/status_keys.h lists keys" test "$(wc -l <<< "$contract")" -ge 10
want=$(awk '$2 != "PATH" { printf "%s ", $1 }' <<< "$contract")
for p in setsockopt bpf kernel; do
	want+=$(awk -v p=$p '$2 == "PATH" { printf "%s.%s ", p, $1 }' <<< "$contract")
done
keys=$(awk '{ print $1 }' /proc/net/rcvfix | tr '\n' ' ')
check_eq "/proc/net/rcvfix keys: those of module/status_keys.h, in its order" \
	"$want" "$keys"
# Each value has its type: BOOL yes/no, GAUGE and COUNTER an integer.
bad=$(awk 'NR == FNR { t[$1] = $3; next }
	{ k = $1; sub(/^[a-z]+\./, "", k) }
	(t[k] == "BOOL" && $2 !~ /^(yes|no)$/) ||
	((t[k] == "GAUGE" || t[k] == "COUNTER") && $2 !~ /^-?[0-9]+$/) { print $1 "=" $2 }' \
	<(echo "$contract") /proc/net/rcvfix)
check_eq "every value has its key's type" "" "$bad"
# The tools agree: every number becomes a metric with its contract's help.
prom=$("$RCVFIX_BIN/rcvfixctl" --prometheus status)
missing=$(awk '$3 != "TEXT" { print $1 " " $2 }' <<< "$contract" |
	while read -r k s; do
		m=rcvfix_$k
		[[ $s == PATH ]] && m+=_total
		grep -q "^# HELP $m " <<< "$prom" &&
			! grep -q "^# HELP $m rcvfix: a value of" <<< "$prom" || echo "$m"
	done)
check_eq "rcvfixctl --prometheus: every numeric key a metric with its help" "" \
	"$missing"
# One strategy on every kernel: the two callers of __sock_set_rcvbuf, plus
# the MPTCP subflow hooks where the kernel has them as traceable functions.
# Before 6.0 (no sk_setsockopt) the SOL_SOCKET entry is sock_setsockopt and
# bpf_setsockopt's own SO_RCVBUF code is reached through its two helpers.
# MPTCP's sync comes first: armed first, disarmed last; without it (or
# without MPTCP) no subflow hook.
want_strategy="callers"
traceable=$(awk '{ print $1 }' /sys/kernel/tracing/available_filter_functions)
want_targets=
mptcp=
grep -qx mptcp_sol_socket_sync_intval <<< "$traceable" && mptcp=1
[[ -z $mptcp ]] || want_targets="mptcp_sol_socket_sync_intval,"
if grep -qE ' [tT] sk_setsockopt$' /proc/kallsyms; then
	want_targets+="sk_setsockopt,sock_set_rcvbuf"
else
	want_targets+="sock_setsockopt,sock_set_rcvbuf,bpf_sock_ops_setsockopt,bpf_sock_addr_setsockopt"
fi
# The two places a new subflow takes its socket's buffer: the connecting
# side's handshake, and (6.5+) listen().
for f in subflow_finish_connect __inet_listen_sk; do
	[[ -z $mptcp ]] || ! grep -qx "$f" <<< "$traceable" ||
		want_targets+=",$f"
done
# A fallen-back MPTCP socket's DATA_FIN after its subflow's data (issue
# 50): where MPTCP places it from subflow_state_change(); then the
# subflows' sk_data_ready and sk_state_change (the receive path of the
# SO_RCVLOWAT fix, wrapped there: mptcp_data_ready() is sealed on IBT
# kernels), mptcp_poll and mptcp_release_cb (TCP's window update after
# a read, issue 59).
[[ -z $mptcp ]] || ! grep -qx subflow_state_change <<< "$traceable" ||
	! grep -qx mptcp_update_rcv_data_fin <<< "$traceable" ||
	want_targets+=",mptcp_update_rcv_data_fin"
# Where rcvfix fixes MPTCP's SO_RCVLOWAT wakeups (before 6.7), these two;
# where it adds TCP's net to the kernel's own rule (6.7+), a third.
case $(rcvfix_status rcvlowat_wakeup) in
*mptcp:rcvfix)
	want_targets+=",subflow_data_ready,subflow_state_change,mptcp_poll,mptcp_release_cb" ;;
*mptcp:native+rcvfix)
	want_targets+=",subflow_data_ready,subflow_state_change,mptcp_poll,mptcp_release_cb,mptcp_set_rcvlowat" ;;
esac
echo "# strategy on $(uname -r): $(rcvfix_status strategy) ($(rcvfix_status targets))"
check_eq "/proc/net/rcvfix: strategy for this kernel" "$want_strategy" \
	"$(rcvfix_status strategy)"
check_eq "/proc/net/rcvfix: targets of that strategy" "$want_targets" \
	"$(rcvfix_status targets)"
check_eq "/proc/net/rcvfix: enable matches the sysctl" "$(cat "$E")" \
	"$(rcvfix_status enable)"

done_testing
