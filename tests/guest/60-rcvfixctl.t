#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcvfixctl against the real module: status (text and JSON, every key of
# /proc/net/rcvfix passed through), enable/disable here, by name and --all,
# and each documented exit status (usage, not loaded, not permitted, no netns).
source "$RCVFIX_REPO/tests/guest/lib.sh"

ctl=$RCVFIX_BIN/rcvfixctl
[[ -x $ctl ]] || skip "$ctl not built"
command -v jq > /dev/null || skip "jq missing (apt-get install jq)"

# run_ctl CMD...: run rcvfixctl, setting $out, $err and $rc.
run_ctl() {
	local e
	e=$(mktemp)
	rc=0
	out=$("$ctl" "$@" 2> "$e") || rc=$?
	err=$(< "$e")
	rm -f "$e"
}

# check_rc DESC EXPECTED_RC [PATTERN_IN_STDERR]: on the last run_ctl.
check_rc() {
	if [[ $rc != "$2" ]]; then
		fail "$1" "exit status $rc, expected $2" "stdout: $out" "stderr: $err"
	elif [[ -n ${3:-} && ! $err =~ $3 ]]; then
		fail "$1" "stderr lacks /$3/" "stderr: $err"
	else
		ok "$1"
	fi
}

enable_of() {	# enable_of [NS]: the sysctl's value there
	if [[ $# -gt 0 ]]; then
		in_ns "$1" cat /proc/sys/net/rcvfix/enable
	else
		cat /proc/sys/net/rcvfix/enable
	fi
}

# --- without the module ------------------------------------------------------

run_ctl --help
check_rc "--help exits 0" 0
[[ $out == *"Exit status:"* && $out == *"module is not loaded"* ]] &&
	ok "--help documents the exit statuses" ||
	fail "--help documents the exit statuses" "$out"
run_ctl --version
check_eq "--version is the module's" \
	"rcvfixctl $(sed -n 's/^#define RCVFIX_VERSION "\(.*\)"/\1/p' module/version.h)" "$out"

run_ctl
check_rc "no command: usage error" 1 "no command"
run_ctl frobnicate
check_rc "unknown command: usage error" 1 "unknown command"
run_ctl --bogus status
check_rc "unknown option: usage error" 1 "unknown option"
run_ctl status --all --netns x
check_rc "--all with --netns: usage error" 1 "exclude"
run_ctl status extra
check_rc "extra argument: usage error" 1 "unexpected argument"

run_ctl status
check_rc "status without the module: exit 2" 2 "not loaded: run 'modprobe rcvfix'"
run_ctl --json status
check_rc "status --json without the module: exit 2" 2
check_eq "status --json says loaded false" false "$(jq -M .module.loaded <<< "$out")"
run_ctl enable
check_rc "enable without the module: exit 2" 2 "modprobe rcvfix"
run_ctl disable --netns no-such-ns-$$
check_rc "unknown namespace is reported before the module: exit 4" 4 "not found"

# --- status --------------------------------------------------------------------

check "insmod rcvfix.ko" rcvfix_load

run_ctl status
check_rc "status: exit 0" 0
[[ $out == *"strategy:"*"$(rcvfix_status strategy)"* &&
	$out == *"this namespace"* && $out == *"enable:"* ]] &&
	ok "status text shows strategy, namespace and switch" ||
	fail "status text shows strategy, namespace and switch" "$out"
[[ $out =~ setsockopt\ +[0-9]+ ]] && ok "status text shows the counters" ||
	fail "status text shows the counters" "$out"
# Two builds of one version differ in their srcversion (modpost's checksum
# of the sources, in .modinfo because of MODULE_VERSION()).
srcversion=$(modinfo -F srcversion "$RCVFIX_KO")
check "modinfo -F srcversion of the module is not empty" test -n "$srcversion"
check_eq "/proc/net/rcvfix: srcversion is modinfo's" "$srcversion" \
	"$(rcvfix_status srcversion)"
check_eq "status text: the module's version, then its srcversion" \
	"module:          rcvfix $(rcvfix_status version) (Live)
srcversion:      $srcversion" "$(head -n 2 <<< "$out")"

run_ctl --json status
check_rc "status --json: exit 0" 0
check "status --json is one valid JSON document" jq -e . <<< "$out"
check_eq "JSON: loaded" true "$(jq -M .module.loaded <<< "$out")"
check_eq "JSON: module state Live" '"Live"' "$(jq -M .module.state <<< "$out")"
check_eq "JSON: module version and srcversion are modinfo's" \
	"$(modinfo -F version "$RCVFIX_KO") $srcversion" \
	"$(jq -M -r '"\(.module.version) \(.module.srcversion)"' <<< "$out")"
check_eq "JSON: one namespace, the current one" "1 true" \
	"$(jq -M -r '"\(.netns | length) \(.netns[0].current)"' <<< "$out")"
check_eq "JSON: namespace id is this one's" "$(readlink /proc/self/ns/net)" \
	"$(jq -M -r '.netns[0].id' <<< "$out")"
# The kernel's signature policy (76-secure-boot checks it enforced): this
# guest boots without Secure Boot or module.sig_enforce.
check_eq "JSON: kernel.sig_enforced, .sig_enforce" "false false" \
	"$(jq -M -r '"\(.kernel.sig_enforced) \(.kernel.sig_enforce)"' <<< "$out")"

# Every line of /proc/net/rcvfix reaches the JSON with the same value, and
# nothing else: module-wide keys under .module, the rest under the namespace,
# "a.b" keys nested as {"a": {"b": ...}}.
flat=$(jq -M -r '
	(.module | to_entries[] | select(.key | IN("loaded", "state") | not)),
	(.netns[0] | to_entries[] |
	 select(.key | IN("id", "inode", "current", "names", "pid", "nprocs") | not) |
	 if (.value | type) == "object" then
		.key as $g | .value | to_entries[] | .key = "\($g).\(.key)"
	 else . end) | "\(.key) \(.value)"' <<< "$out" | sort)
file=$(awk '{ k = $1; $1 = ""; sub(/^ +/, ""); print k " " $0 }' /proc/net/rcvfix | sort)
check_eq "JSON carries exactly the keys and values of /proc/net/rcvfix" "$file" "$flat"
check_eq "JSON: counters are numbers" number \
	"$(jq -M -r '.netns[0].setsockopt.sets | type' <<< "$out")"

# --- enable / disable here ---------------------------------------------------

run_ctl enable
check_rc "enable: exit 0" 0
check_eq "enable prints nothing" "" "$out$err"
check_eq "enable sets the sysctl" 1 "$(enable_of)"
run_ctl --json status
check_eq "status --json follows" 1 "$(jq -M .netns[0].enable <<< "$out")"
run_ctl disable
check_rc "disable: exit 0" 0
check_eq "disable prints nothing" "" "$out$err"
check_eq "disable clears the sysctl" 0 "$(enable_of)"

# --- other namespaces ------------------------------------------------------------

nsa=$(netns_new a)
nsb=$(netns_new b)
# Lives until killed below: under emulation this script can take minutes (a
# 60 s sleep ended before the last checks on an arm64 guest beside three
# others).
unshare -n sleep 3600 &
anon=$!
on_exit "kill $anon 2> /dev/null"
# wait until the child is inside its own namespace
for _ in $(seq 50); do
	[[ $(readlink /proc/$anon/ns/net) != "$(readlink /proc/self/ns/net)" ]] && break
	sleep 0.1
done

run_ctl enable --netns "$nsa"
check_rc "enable --netns NAME: exit 0" 0
check_eq "enable --netns NAME: that namespace" 1 "$(enable_of "$nsa")"
check_eq "enable --netns NAME: not the others" "0 0" "$(enable_of) $(enable_of "$nsb")"
run_ctl --json status --netns "$nsa"
check_eq "status --netns NAME names it and shows its switch" \
	"[\"$nsa\"] 1 false" \
	"$(jq -M -c -r '.netns[0] | "\(.names) \(.enable) \(.current)"' <<< "$out")"
run_ctl disable --netns "/run/netns/$nsa"
check_rc "disable --netns PATH: exit 0" 0
check_eq "disable --netns PATH: that namespace" 0 "$(enable_of "$nsa")"

run_ctl enable --netns "no-such-ns-$$"
check_rc "enable --netns unknown: exit 4" 4 "not found.*ip netns list"
run_ctl status --netns /etc/hostname
check_rc "a file that is no namespace: exit 4" 4 "not a namespace"
run_ctl status --netns /proc/self/ns/uts
check_rc "a namespace that is no network namespace: exit 4" 4 "not a network namespace"

run_ctl enable --all
check_rc "enable --all: exit 0" 0
check_eq "enable --all: here, both named and the unnamed one" "1 1 1 1" \
	"$(enable_of) $(enable_of "$nsa") $(enable_of "$nsb") $(nsenter -t "$anon" -n cat /proc/sys/net/rcvfix/enable)"
run_ctl --json status --all
check_rc "status --all: exit 0" 0
ids=$(jq -M -r '.netns[].id' <<< "$out" | sort)
wanted=$(for p in self "$anon"; do readlink /proc/$p/ns/net; done
	for n in "$nsa" "$nsb"; do in_ns "$n" readlink /proc/self/ns/net; done)
wanted=$(sort <<< "$wanted")
[[ $(comm -13 <(echo "$ids") <(echo "$wanted")) == "" ]] &&
	ok "status --all lists this, the named and the unnamed namespaces" ||
	fail "status --all lists this, the named and the unnamed namespaces" \
		"listed: ${ids//$'\n'/ }" "wanted: ${wanted//$'\n'/ }"
check_eq "status --all: unique namespaces" "$(wc -l <<< "$ids")" \
	"$(sort -u <<< "$ids" | wc -l)"
check_eq "status --all: every one enabled" "" \
	"$(jq -M -r '.netns[] | select(.enable != 1) | .id' <<< "$out")"
check_eq "status --all: the unnamed one found by its process" "$anon" \
	"$(jq -M -r --arg id "$(readlink /proc/$anon/ns/net)" \
		'.netns[] | select(.id == $id) | .pid' <<< "$out")"
run_ctl disable --all
check_rc "disable --all: exit 0" 0
check_eq "disable --all: all off" "0 0 0 0" \
	"$(enable_of) $(enable_of "$nsa") $(enable_of "$nsb") $(nsenter -t "$anon" -n cat /proc/sys/net/rcvfix/enable)"
kill "$anon" 2> /dev/null
wait "$anon" 2> /dev/null

# --- not permitted ---------------------------------------------------------------

# An unprivileged user, and root without CAP_NET_ADMIN.
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
# shellcheck disable=SC2054 # the commas belong to setpriv
noadmin=(setpriv --inh-caps=-all --bounding-set=-net_admin,-sys_admin)

rc=0
err=$("${nobody[@]}" "$ctl" enable 2>&1 > /dev/null) || rc=$?
out=
check_rc "enable as an unprivileged user: exit 3" 3 "run as root"
check_eq "... the switch stays off" 0 "$(enable_of)"
rc=0
err=$("${noadmin[@]}" "$ctl" enable 2>&1 > /dev/null) || rc=$?
check_rc "enable without CAP_NET_ADMIN: exit 3" 3 "CAP_NET_ADMIN"
check_eq "... the switch stays off" 0 "$(enable_of)"
rc=0
err=$("${noadmin[@]}" "$ctl" enable --netns "$nsa" 2>&1 > /dev/null) || rc=$?
check_rc "enable --netns without CAP_SYS_ADMIN: exit 3" 3 "run as root"
check_eq "... its switch stays off" 0 "$(enable_of "$nsa")"
rc=0
out=$("${nobody[@]}" "$ctl" status 2> /dev/null) || rc=$?
check_rc "status of this namespace needs no privilege" 0
rc=0
err=$("${nobody[@]}" "$ctl" status --netns "$nsa" 2>&1 > /dev/null) || rc=$?
check_rc "status --netns as an unprivileged user: exit 3" 3 "run as root"

# --- the module going away -----------------------------------------------------

check "rmmod rcvfix" rmmod rcvfix
run_ctl --json status --all
check_rc "status after rmmod: exit 2" 2 "not loaded"
run_ctl disable --all
check_rc "disable --all after rmmod: exit 2" 2 "not loaded"

done_testing
