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

# check_eq DESC EXPECTED ACTUAL
check_eq() {
	if [[ "$2" == "$3" ]]; then ok "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi
}

# pp CMD...: print a command, then run it (for readable logs).
pp() { echo "# + $*"; "$@"; }

# Network namespaces named after the script and its PID, removed on exit.
_netns=()
netns_new() {	# netns_new NAME: create rcvfix-NAME-$$, print its name
	local ns="rcvfix-$1-$$"
	ip netns add "$ns" && _netns+=("$ns") && ip -n "$ns" link set lo up &&
		echo "$ns"
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

# rcvfix_load [PARAM=VALUE...]: insmod the module under test.
rcvfix_load() { insmod "$RCVFIX_KO" "$@"; }

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

rcvfix_cleanup() {
	local ns
	for ns in "${_netns[@]}"; do ip netns del "$ns" 2>/dev/null; done
	rcvfix_unload 2>/dev/null
	return 0
}
trap rcvfix_cleanup EXIT

# done_testing: last line of every script; exit status reflects failures.
done_testing() { exit $((_n_fail > 0)); }
