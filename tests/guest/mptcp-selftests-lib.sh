# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Running the kernel's MPTCP selftests (tools/testing/selftests/net/mptcp)
# in a guest and reading their logs into one result per subtest: sourced
# by test 45 (rcvfix disabled against enabled) and vm/upstream.sh (a
# stock kernel against a patched one).

# load_selftest_modules: what the scripts expect loaded: modprobe cannot
# autoload from the read-only root here. A module the kernel lacks fails
# its subtests in both runs alike.
load_selftest_modules() {
	local m
	for m in veth sch_netem sch_tbf sch_htb inet_diag tcp_diag mptcp_diag \
		nf_tables nft_tproxy nft_socket nft_compat xt_socket xt_TPROXY \
		xt_mark xt_connmark nf_conntrack; do
		modprobe -q "$m" 2> /dev/null || echo "# no module $m"
	done
}

# mptcp_connect.sh as issue 50 found it losing a byte: 1 MB files (3 MB a
# connection in the full-disconnect group), IPv4, netem loss and
# reordering, GSO off: its whole run in minutes under emulation.
# shellcheck disable=SC2034 # used by the files that source this one
selftest_connect_args=(-4 -f 1048576 -d 10 -l 0.1% -r "25% 50%" -e gso)

# results LOG: one "STATUS<TAB>NAME" line per subtest. The kernel's TAP
# (6.6 and later print it at the end; its time= and a flaky subtest's
# IGNORE are not part of the name) when there is one; else (6.1) the
# lines "PASS: NAME"/"FAIL: NAME" and those with "[ OK ]", "[FAIL]",
# "[SKIP]" in any case, named by their text before the status (or the
# line before, where the status opens its line), a name seen again
# failing if any of its lines failed.
results() {
	if grep -Eq '^(not )?ok [0-9]+ - ' "$1"; then
		awk '{ gsub(/\r/, "") }
		match($0, /^(not )?ok [0-9]+ - /) {
			st = /^not / ? "FAIL" : "OK"; name = substr($0, RLENGTH + 1)
			if ((i = index(name, " # "))) {
				why = substr(name, i + 3); name = substr(name, 1, i - 1)
				if (why ~ /^SKIP/) st = "SKIP"
				else if (st == "FAIL" && why ~ /^(XFAIL|TODO|IGNORE)/) st = "XFAIL"
			}
			print st "\t" name
		}' "$1"
		return
	fi
	awk '
	# a name without the figures a run measures (6.1 prints them in it):
	# a number standing alone, or of 3 or more digits glued to a word,
	# goes; addresses, ports, ns1, ipv6, -6 stay
	function plain(s,   out, c, p, n) {
		out = ""
		while (match(s, /[0-9]+/)) {
			p = substr(s, RSTART - 1, 1); n = substr(s, RSTART + RLENGTH, 1)
			c = substr(s, RSTART, RLENGTH)
			out = out substr(s, 1, RSTART - 1)
			if (p ~ /[.:-]/ || n ~ /[.:]/)
				out = out c
			else if (p !~ /^[ \t(]?$/ && length(c) < 3)
				out = out c
			s = substr(s, RSTART + RLENGTH)
		}
		s = out s
		gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s)
		return s
	}
	function seen(name, st) {
		if (name == "") return
		if (!(name in s)) order[n++] = name
		if (s[name] != "FAIL") s[name] = st
	}
	{
		gsub(/\r/, "")
		line = $0
		if (match(line, /^(PASS|FAIL|SKIP): /)) {
			st = substr(line, 1, RLENGTH - 2); sub(/PASS/, "OK", st)
			seen(plain(substr(line, RLENGTH + 1)), st)
		} else if (match(tolower(line), /\[ *(ok|fail|skip) *\]/)) {
			st = toupper(substr(line, RSTART, RLENGTH)); gsub(/[][ ]/, "", st)
			name = substr(line, 1, RSTART - 1)
			sub(/\(duration[^)]*\)/, "", name)
			name = plain(name)
			seen(name == "" ? prev : name, st)
		} else if (line !~ /^[ \t]*$/) {
			prev = plain(line)
		}
	} END { for (i = 0; i < n; i++) print s[order[i]] "\t" order[i] }' "$1"
}
