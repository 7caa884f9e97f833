#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcvfix-timeout: 10800
# The kernel's own MPTCP selftests (tools/testing/selftests/net/mptcp of
# Debian's source of the booted line, built by vm/peer.sh: make check-peer)
# run twice in one boot: rcvfix loaded and disabled, then loaded again with
# default_enable=1, so that every namespace the scripts create has the fix
# on. mptcp_connect.sh gets -R tcp_rmem[1] (its sockets set SO_RCVBUF at
# the default, which rcvfix leaves unlocked where stock locks it) and the
# options below. A subtest that passes disabled and fails (or is missing)
# enabled fails here; one that fails disabled too is the kernel's or the
# emulator's, and is shown, not counted. Both tables are printed.
#
# RCVFIX_PEER (make check-peer PEER=...) says what runs: script names
# (mptcp_connect.sh mptcp_sockopt.sh diag.sh simult_flows.sh by default)
# and disconnect:N, mptcp_connect.sh's "full disconnect" group alone, N
# times in a row (issue 50: a fallen-back client lost a byte there). Only
# make check-peer (part of check-all) sets it: the whole set takes a
# quarter of an hour per kernel under emulation.
source "$RCVFIX_REPO/tests/guest/lib.sh"
[[ -n ${RCVFIX_PEER:-} ]] ||
	skip "the kernel's own MPTCP selftests: make check-peer (or check-all)"
need "$RCVFIX_KO"

line=$(uname -r | sed -n 's/^\([0-9]*\.[0-9]*\)[.-].*/\1/p')
built=$RCVFIX_REPO/build/peer/$line
[[ -f $built/stamp ]] ||
	skip "the MPTCP selftests of $line are not built: make check-peer KVER=$(uname -r)"
peer=$RCVFIX_PEER
script_timeout=$(scaled 3000)
give_up() { fail "$1"; done_testing; }

# The scripts write next to themselves (mptcp_connect.sh's derived copy):
# a copy on the guest's tmpfs.
work=$(mktemp -d /tmp/rcvfix-peer.XXXXXX)
on_exit "rm -rf '$work'"
cp -a "$built/src/tools/testing/selftests/net" "$work/net" ||
	give_up "cannot copy the selftests"
dir=$work/net/mptcp
echo "# MPTCP selftests of linux-source-$line $(< "$built/stamp")"

# The modules the scripts load, results() for their logs and
# mptcp_connect.sh's options (mptcp-selftests-lib.sh).
# shellcheck source-path=SCRIPTDIR source=mptcp-selftests-lib.sh
source "$RCVFIX_REPO/tests/guest/mptcp-selftests-lib.sh"
load_selftest_modules
rmem1=$(awk '{ print $2 }' /proc/sys/net/ipv4/tcp_rmem)
connect_args=(-R "$rmem1" "${selftest_connect_args[@]}")

# disconnect_only N: a copy of mptcp_connect.sh whose main part is the
# full-disconnect group alone (its setup kept: namespaces, netem).
disconnect_only() {
	awk '/^run_tests_lo / && !cut { cut = 1 }
	     !cut { print; next }
	     /^run_tests_disconnect$/ { tail = 1 }
	     tail { print }' "$dir/mptcp_connect.sh" > "$dir/disconnect_only.sh" &&
		chmod +x "$dir/disconnect_only.sh" &&
		grep -q '^run_tests_disconnect$' "$dir/disconnect_only.sh"
}

# run_script MODE NAME CMD...: run one script, its log shown as comments,
# its results in $work/MODE/NAME (and its exit status in NAME.rc).
run_script() {
	local mode=$1 name=$2 rc
	shift 2
	mkdir -p "$work/$mode"
	(cd "$dir" && timeout -k 10 "$script_timeout" "$@") \
		> "$work/$mode/$name.log" 2>&1 < /dev/null
	rc=$?
	sed 's/^/# /' "$work/$mode/$name.log"
	echo "# $mode: $name exit status $rc"
	echo "$rc" > "$work/$mode/$name.rc"
	results "$work/$mode/$name.log" > "$work/$mode/$name"
}

run_all() {	# run_all MODE
	local p n i
	for p in $peer; do
		case $p in
		disconnect:*)
			n=${p#disconnect:}
			disconnect_only || give_up "cannot derive the full-disconnect group"
			for ((i = 1; i <= n; i++)); do
				run_script "$1" "disconnect#$i" \
					./disconnect_only.sh "${connect_args[@]}"
			done
			;;
		mptcp_connect.sh)
			run_script "$1" "$p" "./$p" "${connect_args[@]}" ;;
		*)
			[[ -x $dir/$p ]] || give_up "no script $p in $line's selftests"
			run_script "$1" "$p" "./$p" ;;
		esac
	done
}

# The whole run in one function, called from the last line: bash has read
# it all before the hours it takes begin.
main() {
	rcvfix_unload
	dmesg_mark "disabled"
	rcvfix_load || give_up "cannot load rcvfix"
	check_eq "loaded, disabled in the initial namespace" 0 "$(rcvfix_enabled)"
	run_all disabled
	rcvfix_unload
	dmesg_mark "default_enable=1"
	rcvfix_load default_enable=1 || give_up "cannot load rcvfix default_enable=1"
	check_eq "loaded with default_enable=1: enabled" 1 "$(rcvfix_enabled)"
	run_all enabled
	rcvfix_unload

	# The tables, then one result per subtest that passed disabled.
	for f in "$work"/disabled/*.rc; do
		name=$(basename "$f" .rc)
		d=$work/disabled/$name e=$work/enabled/$name
		echo "# --- $name: disabled (exit $(< "$f")) | enabled (exit $(cat "$e.rc" 2> /dev/null))"
		join -t $'\t' -j 2 -a 1 -a 2 -e MISSING -o 0,1.1,2.1 \
			<(sort -t $'\t' -k 2 "$d") <(sort -t $'\t' -k 2 "$e") |
			awk -F '\t' '{ printf "# %-8s %-8s %s\n", $2, $3, $1 }'
		check "$name: the disabled run reported subtests" test -s "$d"
		while IFS=$'\t' read -r st sub; do
			[[ $st == OK ]] || continue
			est=$(awk -F '\t' -v n="$sub" '$2 == n { print $1; exit }' "$e")
			check_eq "$name: $sub: passes enabled as disabled" OK "${est:-MISSING}"
		done < "$d"
		if [[ $(< "$f") == 0 ]]; then
			check_eq "$name: exit status enabled as disabled" 0 "$(cat "$e.rc")"
		fi
	done
}

main; done_testing
