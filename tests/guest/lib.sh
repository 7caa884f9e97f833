# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the in-guest tests: TAP results, namespaces, module
# load/unload, and kernel-log checks. Sourced by every tests/guest/*.t script.
#
# Contract with the runner (tests/guest/run.sh):
#  - every test script is run as `bash SCRIPT` with these variables set:
#      RCVFIX_REPO  repository root (read-only in the guest)
#      RCVFIX_KO    path of the rcvfix.ko built for the running kernel
#      RCVFIX_BIN   folder of the test programs and tools built for it
#      RCVFIX_KMOD  folder of test-only kernel modules built for it
#      KVER         `uname -r` of the guest
#      RCVFIX_TIMEOUT_SCALE  how many times slower than an amd64 guest this
#                   one runs (1; arm64 under TCG: 3): see scaled below
#  - a script prints TAP result lines through ok/fail/check below, never a
#    plan; anything else it prints is turned into TAP comments by the runner;
#  - exit 0 when done, 77 to skip the whole script (say why first with skip),
#    anything else counts as one more failure;
#  - the module is not loaded when a script starts and must not be loaded
#    when it ends (the cleanup trap of rcvfix_cleanup sees to it).

set -u

RCVFIX_TEST=$(basename "$0" .t)
_n_fail=0

# ok DESC: record a passing assertion.
ok() { echo "ok - $RCVFIX_TEST: $*"; }

# fail DESC [DETAIL...]: record a failing assertion, with details as comments.
fail() {
	local desc=$1
	shift
	echo "not ok - $RCVFIX_TEST: $desc"
	local d
	for d in "$@"; do echo "#   $d"; done
	_n_fail=$((_n_fail + 1))
}

# skip WHY: the whole script is skipped; exits 77.
skip() { echo "ok - $RCVFIX_TEST # SKIP $*"; exit 77; }

# check DESC CMD...: pass if CMD exits 0, fail with its output otherwise.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$desc"; else fail "$desc" "command: $*" "$out"; fi
}

# check_not DESC CMD...: pass if CMD exits non-zero (grep finds nothing).
check_not() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then fail "$desc" "command: $*" "$out"; else ok "$desc"; fi
}

# check_eq DESC EXPECTED ACTUAL
check_eq() {
	if [[ "$2" == "$3" ]]; then ok "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi
}

# scaled SECONDS: a time bound measured on the amd64 guests, stretched for
# a slower guest (vm/vm.sh's RCVFIX_TIMEOUT_SCALE). For hang detectors
# only: what a test measures is never scaled. wait_for scales its own.
scaled() { echo $(($1 * ${RCVFIX_TIMEOUT_SCALE:-1})); }

# slow_guest: a guest 3 or more times slower than the amd64 ones (arm64
# under TCG, 3; its PREEMPT_RT flavour, 9; the debug kernel of make
# check-debug, 4): the stress tests run fewer load cycles there.
slow_guest() { ((${RCVFIX_TIMEOUT_SCALE:-1} >= 3)); }

# pp CMD...: print a command, then run it (for readable logs).
pp() { echo "# + $*"; "$@"; }

# Network namespaces named after the script's PID, removed on exit. Usually
# called as ns=$(netns_new NAME), in a subshell: so the cleanup finds them
# by the PID suffix rather than by a list kept here.
netns_new() {	# netns_new NAME: create rcvfix-NAME-$$, print its name
	local ns="rcvfix-$1-$$"
	ip netns add "$ns" && ip -n "$ns" link set lo up && echo "$ns"
}

# in_ns NS CMD...: run CMD inside network namespace NS.
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# veth_pair NS1 NS2 ADDR1 ADDR2: join two namespaces by a veth pair with
# addresses ADDR1/24 and ADDR2/24 (use 10.99.x.y: inside the guest only).
veth_pair() {
	local a=veth-$$-a b=veth-$$-b
	ip link add "$a" netns "$1" type veth peer name "$b" netns "$2" &&
		ip -n "$1" addr add "$3/24" dev "$a" && ip -n "$1" link set "$a" up &&
		ip -n "$2" addr add "$4/24" dev "$b" && ip -n "$2" link set "$b" up
}

# client_server TAG NET: a client namespace $cns (rcvfix-TAGa-PID) and a
# server namespace $sns (rcvfix-TAGb-PID) joined by a veth pair with
# 10.99.NET.1 and 10.99.NET.2; skips the script if they cannot be made.
client_server() {
	cns=$(netns_new "${1}a")
	sns=$(netns_new "${1}b")
	veth_pair "$cns" "$sns" "10.99.$2.1" "10.99.$2.2" ||
		skip "cannot create veth pair"
}

# mptcp_client_server [TCP_RMEM]: net.mptcp.enabled 1 (and tcp_rmem
# TCP_RMEM, if given) in $cns and $sns (client_server); skips the script
# where the kernel has no MPTCP sockets.
mptcp_client_server() {
	local ns
	in_ns "$sns" "$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1 ||
		skip "no MPTCP sockets on this kernel"
	for ns in "$cns" "$sns"; do
		[[ -z ${1:-} ]] || ns_write /proc/sys/net/ipv4/tcp_rmem "$1" "$ns"
		ns_write /proc/sys/net/mptcp/enabled 1 "$ns"
	done
}

# rmem_max_set VALUE: net.core.rmem_max (host-wide) is VALUE until the
# script exits, then what it was.
rmem_max_set() {
	on_exit "echo $(cat /proc/sys/net/core/rmem_max) > /proc/sys/net/core/rmem_max"
	echo "$1" > /proc/sys/net/core/rmem_max
}

# rcvfix_load [PARAM=VALUE...]: insmod the module under test, with
# RCVFIX_LOAD_PARAMS first (make check-refused: refuse_hooks=..., the test
# switch that makes rcvfix act as on a host that refuses those hooks).
rcvfix_load() { insmod "$RCVFIX_KO" ${RCVFIX_LOAD_PARAMS:-} "$@"; }

# rcvfix_unload: rmmod if loaded.
rcvfix_unload() {
	if grep -q '^rcvfix ' /proc/modules; then rmmod rcvfix; fi
}

# rcvfix_status KEY [NS]: one value from /proc/net/rcvfix (of NS, or here).
rcvfix_status() {
	if [[ $# -gt 1 ]]; then
		ip netns exec "$2" awk -v k="$1" '$1 == k { print $2 }' /proc/net/rcvfix
	else
		awk -v k="$1" '$1 == k { print $2 }' /proc/net/rcvfix
	fi
}

# Kernel log since the script started; the runner also scans it.
dmesg_mark() { echo "rcvfix-test: $RCVFIX_TEST: $*" > /dev/kmsg; }
dmesg_since_mark() {	# dmesg_since_mark TEXT: log lines after that mark
	dmesg | awk -v m="rcvfix-test: $RCVFIX_TEST: $1" 'f; index($0, m) { f = 1 }'
}

# Before Linux 5.15 getsockopt(SO_BUF_LOCK) does not exist: the test module
# rcvfix_test_buflock then shows a socket's locks to the test programs
# (sock_buf_lock() in tests/progs/common.h). Loaded here for the script,
# unloaded by rcvfix_cleanup. RCVFIX_HAVE_BUF_LOCK=0 there: setsockopt of
# the option fails with ENOPROTOOPT (sockopt_model knows it).
RCVFIX_HAVE_BUF_LOCK=1
_buflock_loaded=0
buflock_observable() {
	local kmod=${RCVFIX_KMOD:-}/rcvfix_test_buflock.ko
	[[ -x ${RCVFIX_BIN:-}/sockopt ]] || return 0
	[[ $("$RCVFIX_BIN/sockopt" buflock=0) == *errno=ENOPROTOOPT* ]] || return 0
	RCVFIX_HAVE_BUF_LOCK=0
	grep -q '^rcvfix_test_buflock ' /proc/modules && return 0
	insmod "$kmod" && _buflock_loaded=1
}
buflock_observable

rcvfix_cleanup() {
	local ns
	for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		[[ $ns == rcvfix-*-"$$" ]] && ip netns del "$ns" 2>/dev/null
	done
	rcvfix_unload 2>/dev/null
	((!_buflock_loaded)) || rmmod rcvfix_test_buflock 2>/dev/null
	return 0
}
trap rcvfix_cleanup EXIT

# done_testing: last line of every script; exit status reflects failures.
done_testing() { exit $((_n_fail > 0)); }

# ---- Helpers for the behaviour tests (10-59), added after the contract ----

# on_exit CMD: run shell command CMD when the script exits, before
# rcvfix_cleanup; the last registered runs first.
_on_exit=()
_run_on_exit() {
	local c
	for c in "${_on_exit[@]}"; do eval "$c" > /dev/null 2>&1; done
	return 0
}
on_exit() {
	_on_exit=("$1" "${_on_exit[@]}")
	trap '_run_on_exit; rcvfix_cleanup' EXIT
}

# need FILE...: skip the script unless every FILE exists.
need() {
	local f
	for f in "$@"; do
		[[ -e $f ]] || skip "missing $f (build it first: make)"
	done
}

# ns_cat FILE [NS]: contents of FILE as seen from NS (or from here; no
# program run then: every exec costs tens of ms under emulation).
ns_cat() {
	if [[ $# -gt 1 && -n $2 ]]; then
		in_ns "$2" cat "$1"
	else
		local REPLY
		while IFS= read -r || [[ -n $REPLY ]]; do
			printf '%s\n' "$REPLY"
		done < "$1"
	fi
}

# ns_write FILE VALUE [NS]: write VALUE to FILE inside NS (or here).
ns_write() {
	if [[ $# -gt 2 && -n $3 ]]; then
		in_ns "$3" sh -c 'echo "$1" > "$2"' sh "$2" "$1"
	else
		echo "$2" > "$1"
	fi
}

# tcp_rmem1 [NS]: net.ipv4.tcp_rmem[1] of NS (or here).
tcp_rmem1() {
	local v
	read -r -a v <<< "$(ns_cat /proc/sys/net/ipv4/tcp_rmem "${1:-}")"
	echo "${v[1]}"
}

# rcvfix_enable VALUE [NS]: write net.rcvfix.enable of NS (or here).
rcvfix_enable() { ns_write /proc/sys/net/rcvfix/enable "$1" "${2:-}"; }

# rcvfix_enabled [NS]: net.rcvfix.enable of NS (or here).
rcvfix_enabled() { ns_cat /proc/sys/net/rcvfix/enable "${1:-}"; }

# rcvfix_counters PATH [NS]: "sets locks_set locks_avoided locks_kept" of
# one path (setsockopt, bpf, kernel) in /proc/net/rcvfix of NS (or here).
rcvfix_counters() {
	local k v s=0 l=0 a=0 kept=0
	while read -r k v; do
		case $k in
		"$1.sets") s=$v ;;
		"$1.locks_set") l=$v ;;
		"$1.locks_avoided") a=$v ;;
		"$1.locks_kept") kept=$v ;;
		esac
	done <<< "$(ns_cat /proc/net/rcvfix "${2:-}")"
	echo "$s $l $a $kept"
}

# counters_delta BEFORE AFTER: element-wise AFTER - BEFORE of two
# rcvfix_counters outputs.
counters_delta() {
	local -a b=($1) a=($2)
	echo "$((a[0] - b[0])) $((a[1] - b[1])) $((a[2] - b[2])) $((a[3] - b[3]))"
}

# min_rcvbuf: SOCK_MIN_RCVBUF of the running kernel, as stock gives it for
# SO_RCVBUF 0 (it differs by kernel). Call with rcvfix unloaded.
min_rcvbuf() {
	"$RCVFIX_BIN/sockopt" rcvbuf=0 |
		sed -n 's/^op=rcvbuf=0 ret=0 errno=0 rcvbuf=\([0-9]*\) .*/\1/p'
}

# The receive-buffer rule as a shell model of what a socket should show.
# Inputs (globals): M_EN (rcvfix enabled in the socket's namespace), M_T
# (tcp_rmem[1] there), M_RMAX (net.core.rmem_max), M_MIN (SOCK_MIN_RCVBUF),
# M_NEW (sk_rcvbuf of a new socket), M_CAP (1: has CAP_NET_ADMIN; set per run).
# Outputs: M_SETS M_LSET M_LAVOID M_LKEPT counters (of an enabled namespace).
INT_MAX=2147483647
INT_MIN=-2147483648
model_reset() { M_SETS=0 M_LSET=0 M_LAVOID=0 M_LKEPT=0; }
model_reset

# model_set VAL: apply the rule to (M_RCVBUF, M_LOCK) for an already
# clamped VAL, as the kernel's or rcvfix's buffer setter would.
model_set() {
	local v=$1
	((v > INT_MAX / 2)) && v=$((INT_MAX / 2))
	M_RCVBUF=$((v * 2))
	((M_RCVBUF < M_MIN)) && M_RCVBUF=$M_MIN
	if ((M_EN)); then
		M_SETS=$((M_SETS + 1))
		if ((M_LOCK & 2)); then
			M_LKEPT=$((M_LKEPT + 1))
		elif ((M_RCVBUF < M_T)); then
			M_LSET=$((M_LSET + 1))
			M_LOCK=$((M_LOCK | 2))
		else
			M_LAVOID=$((M_LAVOID + 1))
		fi
	else
		M_LOCK=$((M_LOCK | 2))
	fi
}

# model_val TEXT: set M_VAL to the int a test program parses from TEXT.
model_val() {
	case $1 in
	INT_MAX) M_VAL=$INT_MAX ;;
	INT_MIN) M_VAL=$INT_MIN ;;
	*) M_VAL=$(($1)) ;;
	esac
}

# sockopt_model OP...: the lines `sockopt OP...` must print (see
# tests/progs/sockopt.c), computed from the model above.
sockopt_model() {
	local op name mod val ret err
	M_RCVBUF=$M_NEW M_LOCK=0 M_CAP=1
	for op in "$@"; do
		ret=0 err=0
		name=${op%%[:=]*} mod= val=
		[[ $op == *:* ]] && { mod=${op#*:}; mod=${mod%%=*}; }
		if [[ $op == *=* && $name != write ]]; then
			model_val "${op#*=}"
			val=$M_VAL
		fi
		case $name in
		get) ;;
		new) M_RCVBUF=$M_NEW M_LOCK=0 ;;
		dropcap) M_CAP=0 ;;
		write)	# write:/proc/sys/net/ipv4/tcp_rmem=A B C (TCP only)
			if [[ $op == *tcp_rmem=* ]]; then
				M_T=$(echo "${op#*=}" | awk '{ print $2 }')
				M_NEW=$M_T
			fi ;;
		rcvbuf | rcvbufforce | buflock)
			if [[ $mod == short ]]; then
				ret=-1 err=EINVAL
			elif [[ $mod == badptr ]]; then
				ret=-1 err=EFAULT
			elif [[ $name == buflock ]]; then
				if ((!RCVFIX_HAVE_BUF_LOCK)); then
					ret=-1 err=ENOPROTOOPT
				elif ((val & ~3)); then
					ret=-1 err=EINVAL
				else
					M_LOCK=$val
				fi
			elif [[ $name == rcvbufforce ]]; then
				if ((!M_CAP)); then
					ret=-1 err=EPERM
				else
					model_set $((val < 0 ? 0 : val))
				fi
			else	# SO_RCVBUF: min_t(u32, val, rmem_max)
				if ((val < 0 || val > M_RMAX)); then
					model_set "$M_RMAX"
				else
					model_set "$val"
				fi
			fi ;;
		*) echo "sockopt_model: cannot model '$op'" >&2; return 1 ;;
		esac
		echo "op=$op ret=$ret errno=$err rcvbuf=$M_RCVBUF lock=$M_LOCK"
	done
}

# check_sockopt DESC NS [SOCKOPT_FLAGS --] OP...: run sockopt in NS (""
# for here) and check every output line against sockopt_model; one TAP
# line per operation.
check_sockopt() {
	local desc=$1 ns=$2 flags=() i
	shift 2
	if [[ " $* " == *" -- "* ]]; then
		while [[ $1 != -- ]]; do flags+=("$1"); shift; done
		shift
	fi
	local -a want got
	local tmp=${TMPDIR:-/tmp}/rcvfix-sockopt-$$
	sockopt_model "$@" > "$tmp"	# not in a subshell: counts M_*
	mapfile -t want < "$tmp"
	if [[ -n $ns ]]; then
		in_ns "$ns" "$RCVFIX_BIN/sockopt" "${flags[@]}" "$@" > "$tmp" 2>&1
	else
		"$RCVFIX_BIN/sockopt" "${flags[@]}" "$@" > "$tmp" 2>&1
	fi
	mapfile -t got < "$tmp"
	rm -f "$tmp"
	for ((i = 0; i < ${#want[@]} || i < ${#got[@]}; i++)); do
		check_eq "$desc: ${want[i]%% ret=*}" "${want[i]:-}" "${got[i]:-}"
	done
}

# wait_eq WANT CMD...: wait (10 s, scaled) until CMD prints WANT, running
# it every 0.2 s (reading /proc/net/rcvfix has a rcvfix that stands aside
# for a livepatch try to arm again).
wait_eq() {
	local want=$1 i
	shift
	for i in $(seq "$(scaled 50)"); do
		[[ $("$@") == "$want" ]] && return 0
		sleep 0.2
	done
	return 1
}

# wait_for FILE RE [SECONDS]: wait until a line of FILE matches the
# extended regular expression RE (default 20 s, scaled). Bash builtins
# only: a fork per poll costs the emulated guest more than the wait itself.
wait_for() {
	local line end=$((SECONDS + ${3:-20} * ${RCVFIX_TIMEOUT_SCALE:-1}))
	while :; do
		if [[ -r $1 ]]; then
			while IFS= read -r line || [[ -n $line ]]; do
				[[ $line =~ $2 ]] && return 0
			done < "$1"
		fi
		((SECONDS < end)) || return 1
		sleep 0.1
	done
}

# per_mib_x100 LINE [KEY]: voluntary context switches (KEY, default nvcsw;
# poll_nvcsw: those inside poll()) per MiB, x100, of a result line of
# lowat (bytes=.. nvcsw=.. poll_nvcsw=..).
per_mib_x100() {
	local bytes
	bytes=$(kv bytes "$1")
	echo $(($(kv "${2:-nvcsw}" "$1") * 100 * 1048576 / (bytes > 0 ? bytes : 1)))
}

# rcvfix_hooks: how many functions ftrace lists with an rcvfix callback.
rcvfix_hooks() { grep -c '\[rcvfix\]' /sys/kernel/tracing/enabled_functions; }

# kv KEY LINE: the value of KEY=value in a line of key=value pairs.
kv() {
	local w
	for w in $2; do
		[[ $w == "$1="* ]] && { echo "${w#*=}"; return 0; }
	done
	return 1
}

# cgroup2_mount: set CGROUP2 to a cgroup v2 mount point, mounting one under
# /run if none is mounted (unmounted again at exit). Not in a subshell.
cgroup2_mount() {
	CGROUP2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [[ -z $CGROUP2 ]]; then
		CGROUP2=/run/rcvfix-cgroup2
		mkdir -p "$CGROUP2" && mount -t cgroup2 none "$CGROUP2" ||
			return 1
		on_exit "umount $CGROUP2; rmdir $CGROUP2"
	fi
}

# wscale_pair LABEL SRV_NS CLI_NS ADDR PORT SERVER_ARGS CLIENT_ARGS: one
# connection of $RCVFIX_BIN/wscale from CLI_NS to ADDR:PORT in SRV_NS. Sets S
# and C to the server's and the client's result lines and SS to the
# `ss -tnmH` lines (TCP sockets and MPTCP subflows, with skmem) of CLI_NS
# while the connection is established, before any data (both ends hold
# until ss has looked). Returns 1 on failure.
wscale_pair() {
	local label=$1 sns=$2 cns=$3 addr=$4 port=$5 out=/tmp/rcvfix-wp-$$
	local cout=/tmp/rcvfix-wpc-$$ gate=/tmp/rcvfix-wpg-$$ spid cpid
	S= C= SS=
	rm -f "$gate"
	# shellcheck disable=SC2086 # $6 and $7 are lists of options
	in_ns "$sns" "$RCVFIX_BIN/wscale" server -a "$addr" -p "$port" \
		-T "$(scaled 30)" -H "$gate" $6 > "$out" 2>&1 &
	spid=$!
	if ! wait_for "$out" listening 20; then
		fail "$label: server listening" "$(cat "$out")"
		kill $spid 2> /dev/null
		return 1
	fi
	# shellcheck disable=SC2086
	in_ns "$cns" "$RCVFIX_BIN/wscale" client -a "$addr" -p "$port" \
		-T "$(scaled 30)" -H "$gate" $7 > "$cout" 2>&1 &
	cpid=$!
	wait_for "$cout" holding 20 && wait_for "$out" holding 20 &&
		SS=$(in_ns "$cns" ss -tnmH state established | tr '\n\t' '  ')
	touch "$gate"
	wait $cpid $spid
	rm -f "$gate"
	S=$(grep '^side=server' "$out")
	C=$(grep '^side=client' "$cout")
	echo "# $label: $S"
	echo "# $label: $C"
	echo "# $label: ss: $SS"
	[[ -n $S && -n $C ]] || {
		fail "$label: connection completed" "server: $(tail -n 3 "$out")" \
			"client: $(tail -n 3 "$cout")"
		rm -f "$out" "$cout"
		return 1
	}
	rm -f "$out" "$cout"
}

# ss_rb SS: the first receive-buffer size (skmem rb) in `ss -m` output SS.
ss_rb() { grep -oE '\brb[0-9]+' <<< "$1" | head -1 | tr -d rb; }

# have_livepatch: sets livepatch= to the test livepatch of tests/kmod;
# false where this kernel has no livepatch (CONFIG_LIVEPATCH unset, as on
# Debian's arm64 kernels; tests/kmod builds it only with livepatch), and
# skips the script where the kernel has one but the module is missing.
have_livepatch() {
	livepatch=$RCVFIX_KMOD/rcvfix_test_livepatch.ko
	[[ -f $livepatch || -d /sys/kernel/livepatch ]] || return 1
	need "$livepatch"
}
no_livepatch_why="$KVER has no livepatch (CONFIG_LIVEPATCH unset)"

# check_all_only WHY: skip unless this run is `make check-all` (kernel
# parameter rcvfix_suite=all, set by mk/containers.mk; the kernel hands it
# to init as an environment variable) or TESTS=... picked scripts by name.
check_all_only() {
	local picked=
	[[ ${rcvfix_suite:-} == all ]] && return 0
	[[ -r ${rcvfix_env:-} ]] &&
		picked=$(sed -n 's/^RCVFIX_TESTS=//p' "$rcvfix_env")
	[[ -n $picked && $picked != "''" ]] && return 0
	skip "make check-all only: $1; or make check TESTS=$RCVFIX_TEST"
}
