#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fixes we send upstream (upstream/NAME/LINE/*.patch, git format-patch
# series against Debian's LINE source), for mk/upstream.mk:
#   upstream.sh check           each series applies (patch -p1) to a fresh
#                               copy of its Debian source (after the series
#                               its BASE file names, if any), and the
#                               kernel's checkpatch.pl --strict passes on it
#   upstream.sh top LINE        the series to build LINE's kernel with: the
#                               one of upstream/*/LINE/ that no other names
#                               as its BASE (the others go under it)
#   upstream.sh chain-of DIR    the series DIR is sent on top of (by BASE
#                               files) and DIR, one a line, in the order they
#                               apply (for vm/debug-kernel.sh)
#   upstream.sh build SRC       the MPTCP selftests' programs of a patched
#                               source (SRC/tools/testing/selftests/net/mptcp,
#                               the series' mptcp_rcvlowat among them), and
#                               again by their own Makefile (it must build)
#   upstream.sh boot MODE KVER SRC LOG
#                               one guest of KVER (MODE stock: Debian's own
#                               kernel; patched: the series applied), rcvfix
#                               never loaded, running "guest MODE SRC" there;
#                               its output also goes to LOG
#   upstream.sh guest MODE SRC [STEP...]
#                               (in the guest) test 42's MPTCP cells
#                               (lowatstall) and series 1's selftest: they
#                               complete on the patched kernel and stall on
#                               the stock one; 4 MiB into a 64 KiB locked
#                               buffer, 5 kinds x 3 (window_cells: series
#                               2's retransmission bound); the kernel's own
#                               mptcp_connect.sh, mptcp_sockopt.sh and
#                               simult_flows.sh of SRC, one result per subtest
#                               (STEP: only stall, window, rcvlowat or
#                               kernel, of those four in that order)
#   upstream.sh summary LOG...  "N passed, N failed" over the logs above
#   upstream.sh compare LINE STOCK PATCHED
#                               every subtest that passed on the stock kernel
#                               passes on the patched one; of each series
#                               LINE's kernel carries, its own subtests fail
#                               on stock and pass patched (at least one)
# checkpatch runs with --ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES: the
# unpacked source has no git history to find the Fixes: commit in, and a
# new selftest file is covered by MPTCP's MAINTAINERS entry (F:
# tools/testing/selftests/net/mptcp/).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C
series_root=$RCVFIX_REPO/upstream
usage() { die "usage: upstream.sh check | top LINE | chain-of DIR | build SRC | boot MODE KVER SRC LOG [STEP...] | guest MODE SRC [STEP...] | compare LINE STOCK PATCHED"; }

src_tar() {	# src_tar LINE: Debian's source tarball of LINE
	case $1 in
	7.3) echo "$RCVFIX_BUILD/newest/chroot/usr/src/linux-source-7.3.tar.xz" ;;
	*) echo "/usr/src/linux-source-$1.tar.xz" ;;
	esac
}

# series_patches DIR: the patches of the series in DIR, in order, without
# its cover letter
series_patches() {
	local p
	for p in "${1%/}"/[0-9]*.patch; do
		[[ $(basename "$p") == 0000-* ]] || echo "$p"
	done
}

# series_base DIR: the series DIR is sent on top of (its BASE file names
# it, as NAME/LINE of the same LINE), or nothing
series_base() {
	local dir=${1%/} base
	[[ -f $dir/BASE ]] || return 0
	base=$(< "$dir/BASE")
	[[ $base =~ ^[A-Za-z0-9._-]+/([0-9.]+)$ && ${BASH_REMATCH[1]} == "$(basename "$dir")" &&
		-d $series_root/$base ]] ||
		die "$dir/BASE: '$base' is not a series of the same line (NAME/$(basename "$dir") under upstream/)"
	echo "$series_root/$base"
}

# top LINE: the series LINE's patched kernel is built with (the others of
# the line are under it, named by BASE files): exactly one.
top() {
	local line=$1 dir base tops=()
	local -A is_base
	for dir in "$series_root"/*/"$line"; do
		[[ -d $dir ]] || continue
		base=$(series_base "$dir") || exit 1
		[[ -z $base ]] || is_base[$base]=1
	done
	for dir in "$series_root"/*/"$line"; do
		[[ -d $dir && -z ${is_base[$dir]:-} ]] || continue
		tops+=("$dir")
	done
	((${#tops[@]} == 1)) ||
		die "line $line: ${#tops[@]} series on top (${tops[*]:-none}): one must name the others in BASE"
	echo "${tops[0]}"
}

# series_chain DIR: the series under DIR (by BASE files) and DIR itself,
# one directory a line, the deepest first: the order they apply in
series_chain() {
	local dir=${1%/} dirs=()
	while [[ -n $dir ]]; do
		((${#dirs[@]} < 8)) || die "$1: its BASE files go 8 deep (a loop?)"
		dirs=("$dir" "${dirs[@]}")
		dir=$(series_base "$dir") || exit 1
	done
	printf '%s\n' "${dirs[@]}"
}

# chain LINE: the series LINE's kernel carries, their names, base first
chain() {
	local dir names=() dirs
	dirs=$(top "$1") && dirs=$(series_chain "$dirs") || exit 1
	for dir in $dirs; do names+=("$(basename "$(dirname "$dir")")"); done
	echo "${names[@]}"
}

check() {
	local dir line tar src p fails=0 series base bases
	for dir in "$series_root"/*/*/; do
		mapfile -t series < <(series_patches "$dir")
		line=$(basename "$dir")
		tar=$(src_tar "$line")
		[[ $line != 7.3 ]] ||
			"$HARNESS/chroot-kernel.sh" tool newest linux-source-7.3 true
		[[ -f $tar ]] || die "$tar missing"
		src=$RCVFIX_BUILD/upstream-check/$line
		rm -rf "$src" && mkdir -p "$src"
		tar -xJf "$tar" -C "$src" --strip-components=1
		# a series sent on top of others names them in BASE files:
		# those first, the deepest first (the chain's last is DIR)
		bases=$(series_chain "$dir") || exit 1
		for base in $(sed '$d' <<< "$bases"); do
			for p in $(series_patches "$base"); do
				patch -d "$src" -p1 --quiet --forward < "$p" ||
					die "${p#"$series_root"/}, under ${dir#"$series_root"/}, does not apply"
			done
		done
		for p in "${series[@]}"; do
			if patch -d "$src" -p1 --quiet --forward < "$p"; then
				echo "ok - ${p#"$series_root"/} applies to $(basename "$tar")"
			else
				echo "not ok - ${p#"$series_root"/} applies to $(basename "$tar")"
				fails=$((fails + 1))
			fi
		done
		if (cd "$src" && perl scripts/checkpatch.pl --strict --no-tree \
			--ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES "${series[@]}"); then
			echo "ok - checkpatch --strict: ${dir#"$series_root"/}"
		else
			echo "not ok - checkpatch --strict: ${dir#"$series_root"/}"
			fails=$((fails + 1))
		fi
	done
	((fails == 0))
}

# The kernel's own MPTCP selftests run on both kernels (the issue's three).
scripts=(mptcp_connect.sh mptcp_sockopt.sh simult_flows.sh)

# build SRC: as test 45's programs are (vm/peer.sh), for the guests; and
# by the selftests' own Makefile against SRC's exported headers, as the
# kernel's CI builds them (a first version of the 6.12 backport's test
# did not build there), into SRC/../selftests-own/
build() {
	local src=$1 built top own hdr
	top=$(dirname "$(realpath "$src")")
	own=$top/selftests-own hdr=$top/headers
	[[ -f $src/tools/testing/selftests/net/mptcp/mptcp_rcvlowat.c ]] ||
		die "$src: no series applied (no mptcp_rcvlowat.c)"
	built=$("$HARNESS/peer.sh" compile "$src")
	msg "MPTCP selftests built in $src: $built"
	rm -rf "$own" "$hdr" && mkdir -p "$own" "$hdr"
	make -s -C "$src" O="$hdr" INSTALL_HDR_PATH="$hdr/usr" headers_install \
		> "$hdr.log" 2>&1 || die "headers_install of $src failed: see $hdr.log"
	make -C "$src/tools/testing/selftests/net/mptcp" OUTPUT="$own" \
		KHDR_INCLUDES="-isystem $hdr/usr/include" > "$own.log" 2>&1 ||
		die "the MPTCP selftests' own Makefile failed in $src: see $own.log"
	[[ -x $own/mptcp_rcvlowat && -x $own/mptcp_sockopt ]] ||
		die "the MPTCP selftests' own Makefile built no mptcp_rcvlowat or mptcp_sockopt: see $own.log"
	msg "MPTCP selftests built by their own Makefile: $(cd "$own" && echo *)"
}

boot() {	# boot MODE KVER SRC LOG [STEP...]
	local st=0 mode=$1 kver=$2 src=$3 log=$4
	shift 4
	mkdir -p "$(dirname "$log")"
	RCVFIX_GUEST_TIMEOUT=${RCVFIX_GUEST_TIMEOUT:-5400} \
		"$HARNESS/vm.sh" cmd "$kver" "$RCVFIX_REPO/vm/upstream.sh guest $mode $(realpath "$src") $*" |
		tee "$log" || st=$?
	return "$st"
}

# stall_cells MODE: test 42's MPTCP cells, rcvfix not loaded; each must
# complete on the patched kernel and stall on the stock one.
stall_cells() {
	local mode=$1 fails=0 scenario wait out want="done" stall=10 port=45300
	[[ $mode == stock ]] && want=stalled stall=3
	for scenario in "" -F -L; do
		for wait in poll epoll epollet block uring; do
			port=$((port + 1)) out=/tmp/upstream-$$
			in_ns "$rcv" "$RCVFIX_BIN/lowatstall" server -m -a 10.99.53.2 \
				-p $port -n 4194304 $scenario -w $wait -t $stall \
				-T $((stall + 60)) > "$out" 2>&1 &
			wait_for "$out" listening 20
			in_ns "$snd" timeout $((stall + 30)) "$RCVFIX_BIN/lowatstall" \
				client -m -a 10.99.53.2 -p $port -n 4194304 \
				-T $((stall + 30)) > /dev/null 2>&1 || true
			wait
			if grep -q "^result=$want" "$out"; then
				echo "ok - $mode: mptcp lowatstall ${scenario:-rcvbuf} $wait: $(grep '^result=' "$out")"
			else
				echo "not ok - $mode: mptcp lowatstall ${scenario:-rcvbuf} $wait: $want expected: $(cat "$out")"
				fails=$((fails + 1))
			fi
			rm -f "$out"
		done
	done
	return "$fails"
}

# mptcp_counter NS NAME: MPTcpExtNAME in NS (MPTCPRetrans: the MPTCP-level
# retransmissions; RcvPruned: skbs the msk dropped over its buffer).
mptcp_counter() {
	in_ns "$1" awk -v name="$2" '/^MPTcpExt:/ { if (!n++) split($0, k); else for (i = 2; i <= NF; i++) if (k[i] == name) print $i }' /proc/net/netstat
}

# window_cells MODE SRC: 4 MiB into a 64 KiB locked buffer whose mark
# (32 KiB) it can hold, three times each over MPTCP, over MPTCP with 8 KiB
# reads (the reader of a grown queue tail, series 2 patch 2), after a
# fallback (an MPTCP reader, a TCP writer: the reader connecting, -r, as
# the report measured it, and the reader accepting) and over TCP:
# docs/mptcp-kernel.md's small buffer report (Debian's 7.3.4 waits for the
# sender's MPTCP retransmit timer, 25-39 times a transfer, where 6.12.118
# needs none). Every transfer must complete on the patched kernel (on
# the stock one a fallen-back reader may stall: recorded). Where SRC
# carries series 2 (mptcp-rcvwnd, its selftest in mptcp_sockopt.sh), the
# MPTCP transfers that read all that is queued are also judged by the
# MPTCP-level retransmissions they need: at most 2 each on the patched
# kernel, more in at least one of the three on the stock one (the bug
# series 2 fixes, which series 1's selftests cannot tell). The seconds,
# their ratio to TCP's in the same boot, the retransmissions and the
# receiver's drops over the buffer are recorded, not judged (speed is for
# benchmarks).
window_cells() {
	local mode=$1 src=$2 fails=0 i out before after s port=45400 runs=3
	local kind server client resent pruned what note series2=0 max_resent=2
	local kinds=(mptcp mptcp-8k fallback fallback-accept tcp) over=0
	local -A secs total drops
	! grep -qs do_rcvwnd_test "$src/tools/testing/selftests/net/mptcp/mptcp_sockopt.sh" ||
		series2=1
	for kind in "${kinds[@]}"; do
		server=() client=()
		[[ $kind == tcp ]] || server=(-m)
		[[ $kind != mptcp* ]] || client=(-m)
		[[ $kind != *-8k ]] || server+=(-R 8192)
		# the reader connects to a TCP writer that listens
		[[ $kind != fallback ]] || server+=(-r) client+=(-r)
		total[$kind]=0 drops[$kind]=0 secs[$kind]=
		for ((i = 1; i <= runs; i++)); do
			port=$((port + 1)) out=/tmp/upstream-$$
			what="$mode: $kind, 4 MiB into a 64 KiB locked buffer, run $i"
			before=$(mptcp_counter "$snd" MPTCPRetrans)
			pruned=$(mptcp_counter "$rcv" RcvPruned)
			if [[ $kind == fallback ]]; then
				in_ns "$snd" timeout 90 "$RCVFIX_BIN/lowatstall" client \
					"${client[@]}" -a 10.99.53.1 -p $port -n 4194304 \
					-T 90 > "$out.w" 2>&1 &
				wait_for "$out.w" listening 20
				in_ns "$rcv" "$RCVFIX_BIN/lowatstall" server "${server[@]}" \
					-a 10.99.53.1 -p $port -n 4194304 -w poll -b 32768 \
					-l 32768 -t 30 -T 90 > "$out" 2>&1 || true
			else
				in_ns "$rcv" "$RCVFIX_BIN/lowatstall" server "${server[@]}" \
					-a 10.99.53.2 -p $port -n 4194304 -w poll -b 32768 \
					-l 32768 -t 30 -T 90 > "$out" 2>&1 &
				wait_for "$out" listening 20
				in_ns "$snd" timeout 90 "$RCVFIX_BIN/lowatstall" client \
					"${client[@]}" -a 10.99.53.2 -p $port -n 4194304 \
					-T 90 > /dev/null 2>&1 || true
			fi
			wait
			after=$(mptcp_counter "$snd" MPTCPRetrans)
			resent=$((after - before))
			pruned=$(($(mptcp_counter "$rcv" RcvPruned) - pruned))
			s=$(grep '^result=' "$out" || tr '\n' ' ' < "$out")
			note="$s; MPTCP retransmissions $resent, dropped over the buffer $pruned"
			if [[ $s != result=done* && $mode == stock ]]; then
				echo "# $what: did not complete (the stock kernel's; recorded, not judged): $note"
			elif [[ $s != result=done* ]]; then
				echo "not ok - $what: completes: $note"
				fails=$((fails + 1))
			elif [[ $kind == mptcp && $series2 == 1 && $mode == patched ]]; then
				if ((resent <= max_resent)); then
					echo "ok - $what: at most $max_resent MPTCP retransmissions: $note"
				else
					echo "not ok - $what: at most $max_resent MPTCP retransmissions: $note"
					fails=$((fails + 1))
				fi
			else
				echo "ok - $what: completes: $note"
			fi
			[[ $kind != mptcp ]] || ((resent <= max_resent)) || over=$((over + 1))
			total[$kind]=$((total[$kind] + resent))
			drops[$kind]=$((drops[$kind] + pruned))
			secs[$kind]+=" $(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<< "$s")"
			rm -f "$out" "$out.w"
		done
	done
	if [[ $series2 == 1 && $mode == stock ]]; then
		if ((over > 0)); then
			echo "ok - $mode: mptcp, 4 MiB into a 64 KiB locked buffer: more than $max_resent MPTCP retransmissions in $over of $runs transfers (series 2's bug shows)"
		else
			echo "not ok - $mode: mptcp, 4 MiB into a 64 KiB locked buffer: more than $max_resent MPTCP retransmissions in at least one of $runs transfers (series 2's bug shows): none"
			fails=$((fails + 1))
		fi
	fi
	# the figures docs/mptcp-kernel.md records: per kind the seconds of
	# each transfer, the median's ratio to TCP's, the retransmissions
	for kind in "${kinds[@]}"; do
		echo "#W $mode $kind: seconds${secs[$kind]}; median/TCP's $(median_ratio "${secs[$kind]}" "${secs[tcp]}"); MPTCP retransmissions ${total[$kind]}, dropped over the buffer ${drops[$kind]}"
	done
	return "$fails"
}

# median "A...": the median of the numbers A (the mean of the middle two
# of an even count), nothing for none
median() {
	tr ' ' '\n' <<< "$1" | sort -g | awk 'NF { v[++n] = $1 }
		END { if (n) print (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}

# median_ratio "A..." "B...": the median of the A over that of the B (two
# decimals), or ? where one is missing
median_ratio() {
	local a b
	a=$(median "$1") b=$(median "$2")
	if [[ -n $a && -n $b ]] && awk -v b="$b" 'BEGIN { exit !(b > 0) }'; then
		awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f\n", a / b }'
	else
		echo "?"
	fi
}

# series_selftest MODE DIR: mptcp_rcvlowat, the series' own test; its
# MPTCP cases without -w (a mark the buffer cannot hold) fail on stock,
# its TCP controls (-r tcp) pass on both kernels. (Its cases with a
# joined subflow, -j, need the endpoints mptcp_sockopt.sh adds: they run
# there, among the kernel's selftests.)
series_selftest() {
	local mode=$1 dir=$2 fails=0 args fam want got err=/tmp/upstream-err-$$
	for args in "-w" "-w -c -t tcp" "" "-l" "-c -t tcp" \
		"-w -r tcp -t tcp" "-r tcp -t tcp" "-l -r tcp -t tcp"; do
		want=passed
		[[ $mode == stock && $args != -w* && $args != *"-r tcp"* ]] &&
			want=failed
		for fam in "" -6; do
			# shellcheck disable=SC2086 # the options, word by word
			if in_ns "$rcv" timeout 60 "$dir/mptcp_rcvlowat" $fam $args > "$err" 2>&1; then
				got=passed
			else
				got=failed
			fi
			if [[ $got == "$want" ]]; then
				echo "ok - $mode: mptcp_rcvlowat $fam $args: $got"
			else
				echo "not ok - $mode: mptcp_rcvlowat $fam $args: $got, expected to have $want"
				fails=$((fails + 1))
			fi
			# what the program said when it failed
			[[ $got == passed ]] || tail -n 2 "$err" | sed 's/^/#   /'
			rm -f "$err"
		done
	done
	return "$fails"
}

# fail_context LOG: each [FAIL] line of a selftest's LOG, the lines before
# it back to the last status (its title, a program's error; at most 3)
# and after it up to the next status (the counters a script prints on
# failure; at most 30)
fail_context() {
	awk 'function status(s) { return s ~ /\[ *OK *\]|\[SKIP\]|\[FAIL\]/ }
	{
		if (n > 0 && status($0) && !/\[FAIL\]/)
			n = 0
		if (n > 0 && !/\[FAIL\]/) {
			print
			n--
			last = NR
		}
		if (/\[FAIL\]/) {
			for (i = 1; i <= 3 && NR - i > last && !status(h[(NR - i) % 4]); i++)
				;
			for (i--; i >= 1; i--)
				print h[(NR - i) % 4]
			print
			n = 30
			last = NR
		}
		h[NR % 4] = $0
	}' "$1"
}

# kernel_selftests MODE SRC: the kernel's own scripts from a copy of SRC's
# net/ selftests on tmpfs; each subtest printed as "#R MODE SCRIPT STATUS
# NAME" for compare, the log's tail as comments.
kernel_selftests() {
	local mode=$1 src=$2 work p rc
	# shellcheck source-path=SCRIPTDIR source=../tests/guest/mptcp-selftests-lib.sh
	source "$RCVFIX_REPO/tests/guest/mptcp-selftests-lib.sh"
	load_selftest_modules
	work=$(mktemp -d /tmp/upstream-selftests.XXXXXX)
	cp -a "$src/tools/testing/selftests/net" "$work/net"
	for p in "${scripts[@]}"; do
		local args=()
		# as test 45 runs it (without rcvfix's -R)
		[[ $p == mptcp_connect.sh ]] && args=("${selftest_connect_args[@]}")
		rc=0
		(cd "$work/net/mptcp" && timeout -k 10 1800 "./$p" "${args[@]}") \
			> "$work/$p.log" 2>&1 < /dev/null || rc=$?
		tail -n 40 "$work/$p.log" | sed 's/^/# /'
		# why a subtest failed (the tail keeps only the TAP summary of
		# a long script)
		fail_context "$work/$p.log" | sed 's/^/# failed: /'
		echo "#R $mode $p EXIT $rc"
		results "$work/$p.log" | sed "s/^/#R $mode $p /"
	done
	rm -rf "$work"
}

guest() {	# guest MODE SRC [STEP...], in the guest
	local mode=$1 src=$2 fails=0 ns steps=" ${*:3} "
	[[ $mode == stock || $mode == patched ]] || die "guest: MODE is stock or patched"
	[[ $steps != "  " ]] || steps=" stall window rcvlowat kernel "
	[[ $steps =~ ^(\ (stall|window|rcvlowat|kernel))+\ $ ]] ||
		die "guest: a STEP is stall, window, rcvlowat or kernel"
	# shellcheck source-path=SCRIPTDIR source=../tests/guest/lib.sh
	source "$RCVFIX_REPO/tests/guest/lib.sh"
	grep -q '^rcvfix ' /proc/modules && die "rcvfix is loaded"
	echo "# $mode kernel $(uname -r); the series' source: $src"
	modprobe veth
	snd=$(netns_new usa) rcv=$(netns_new usb)
	veth_pair "$snd" "$rcv" 10.99.53.1 10.99.53.2 || die "no veth pair"
	for ns in "$snd" "$rcv"; do ns_write /proc/sys/net/mptcp/enabled 1 "$ns"; done
	[[ $steps != *" stall "* ]] || stall_cells "$mode" || fails=$((fails + $?))
	[[ $steps != *" window "* ]] || window_cells "$mode" "$src" ||
		fails=$((fails + $?))
	[[ $steps != *" rcvlowat "* ]] ||
		series_selftest "$mode" "$src/tools/testing/selftests/net/mptcp" ||
		fails=$((fails + $?))
	[[ $steps != *" kernel "* ]] || kernel_selftests "$mode" "$src"
	echo "# upstream guest, $mode kernel $(uname -r): $fails failed"
	((fails == 0))
}

# series_subtests NAME: how the TAP names of series NAME's own subtests in
# the kernel's scripts begin (after "SCRIPT: ", mptcp_lib_result_*() in
# its selftest patch): they fail on stock and must pass patched. (Series
# 2's MPTCP cases also meet series 1's stall on stock, which has no
# series: what tells series 2's own fix there is window_cells'
# retransmission bound, judged on both kernels.)
series_subtests() {
	case $1 in
	mptcp-rcvlowat) echo 'SO_RCVLOWAT: ' ;;
	mptcp-rcvwnd) echo 'window update: ' ;;
	*) die "no subtest titles known for the series $1: add them to series_subtests" ;;
	esac
}

# compare LINE STOCK PATCHED: the two guests' logs. Every subtest that
# passed on the stock kernel passes on the patched one; of each series
# LINE's kernel carries, its own subtests that fail on stock pass patched,
# at least one; another subtest that fails on stock is the kernel's or the
# emulator's (simult_flows times its transfers): shown, not counted, as
# test 45 does.
compare() {
	local line=$1 stock=$2 patched=$3 fails=0 p st name got sname s names
	local -A pattern fixed
	names=$(chain "$line") || exit 1
	for sname in $names; do
		pattern[$sname]=$(series_subtests "$sname")
		fixed[$sname]=0
	done
	for p in "${scripts[@]}"; do
		if ! grep -q "^#R stock $p EXIT " "$stock" ||
			! grep -q "^#R patched $p EXIT " "$patched"; then
			echo "not ok - $p: ran on both kernels"
			fails=$((fails + 1))
			continue
		fi
		while IFS=$'\t' read -r st name; do
			[[ $st == OK || $st == FAIL ]] || continue
			got=$(awk -F '\t' -v n="$name" -v h="#R patched $p " \
				'index($1, h) == 1 && $2 == n { print substr($1, length(h) + 1); exit }' "$patched")
			sname=
			for s in $names; do
				[[ $name == *"${pattern[$s]}"* ]] || continue
				sname=$s
				break
			done
			if [[ $st == FAIL && -z $sname ]]; then
				echo "# $p: $name: FAIL on stock, ${got:-MISSING} patched (none of the series': not counted)"
			elif [[ $got == OK ]]; then
				echo "ok - $p: $name: $st on stock, OK patched"
				[[ $st == FAIL ]] && fixed[$sname]=$((fixed[$sname] + 1))
			else
				echo "not ok - $p: $name: $st on stock, ${got:-MISSING} patched"
				fails=$((fails + 1))
			fi
		done < <(sed -n "s/^#R stock $p \([A-Z]*\)\t/\1\t/p" "$stock")
		# and nothing fails patched that did not run on stock
		while IFS=$'\t' read -r name; do
			grep -qF "$(printf '#R stock %s FAIL\t%s' "$p" "$name")" "$stock" ||
				grep -qF "$(printf '#R stock %s OK\t%s' "$p" "$name")" "$stock" || {
				echo "not ok - $p: $name: FAIL patched (not run on stock)"
				fails=$((fails + 1))
			}
		done < <(sed -n "s/^#R patched $p FAIL\t//p" "$patched")
	done
	for sname in $names; do
		if ((fixed[$sname] > 0)); then
			echo "ok - $sname: ${fixed[$sname]} of its subtests fail on stock and pass patched"
		else
			echo "not ok - $sname: none of its subtests (\"${pattern[$sname]}\") fails on stock and passes patched"
			fails=$((fails + 1))
		fi
	done
	echo "# compare: $fails failed"
	((fails == 0))
}

summary() {	# summary LOG...: the results of every log, one line
	local passed failed
	passed=$(cat "$@" 2> /dev/null | grep -c '^ok - ' || true)
	failed=$(cat "$@" 2> /dev/null | grep -c '^not ok - ' || true)
	echo "$passed passed, $failed failed"
	((failed == 0))
}

# One group, parsed whole before it runs and ending in exit: a run is not
# disturbed by an edit of this file (bash reads a script as it goes).
{
	case ${1:-} in
	check) check ;;
	build) [[ $# -eq 2 ]] || usage; build "$2" ;;
	boot) [[ $# -ge 5 ]] || usage; shift; boot "$@" ;;
	guest) [[ $# -ge 3 ]] || usage; shift; guest "$@" ;;
	top) [[ $# -eq 2 ]] || usage; top "$2" ;;
	chain-of) [[ $# -eq 2 ]] || usage; series_chain "$2" ;;
	compare) [[ $# -eq 4 ]] || usage; compare "$2" "$3" "$4" ;;
	summary) shift; summary "$@" ;;
	*) usage ;;
	esac
	exit
}
