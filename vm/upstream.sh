#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fixes we send upstream (upstream/NAME/LINE/*.patch, git format-patch
# series against Debian's LINE source), for mk/upstream.mk:
#   upstream.sh check           each series applies (patch -p1 --dry-run) to
#                               a fresh copy of its Debian source, and the
#                               kernel's checkpatch.pl --strict passes on it
#   upstream.sh guest BINDIR    in a guest of a patched kernel, rcvfix never
#                               loaded: test 42's MPTCP cells (lowatstall)
#                               must complete, and the series' selftest
#                               (mptcp_rcvlowat, built into BINDIR) passes
# checkpatch runs with --ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES: the
# unpacked source has no git history to find the Fixes: commit in, and a
# new selftest file is covered by MPTCP's MAINTAINERS entry (F:
# tools/testing/selftests/net/mptcp/).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C
series_root=$RCVFIX_REPO/upstream

src_tar() {	# src_tar LINE: Debian's source tarball of LINE
	case $1 in
	7.3) echo "$RCVFIX_BUILD/newest/chroot/usr/src/linux-source-7.3.tar.xz" ;;
	*) echo "/usr/src/linux-source-$1.tar.xz" ;;
	esac
}

check() {
	local dir line tar src p fails=0
	for dir in "$series_root"/*/*/; do
		line=$(basename "$dir")
		tar=$(src_tar "$line")
		[[ $line != 7.3 ]] ||
			"$HARNESS/chroot-kernel.sh" tool newest linux-source-7.3 true
		[[ -f $tar ]] || die "$tar missing"
		src=$RCVFIX_BUILD/upstream-check/$line
		rm -rf "$src" && mkdir -p "$src"
		tar -xJf "$tar" -C "$src" --strip-components=1
		for p in "$dir"[0-9]*.patch; do
			[[ $(basename "$p") == 0000-* ]] && continue
			if patch -d "$src" -p1 --quiet --forward < "$p"; then
				echo "ok - ${p#"$series_root"/} applies to $(basename "$tar")"
			else
				echo "not ok - ${p#"$series_root"/} applies to $(basename "$tar")"
				fails=$((fails + 1))
			fi
		done
		# shellcheck disable=SC2046 # one word per patch
		if (cd "$src" && perl scripts/checkpatch.pl --strict --no-tree \
			--ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES \
			$(ls "$dir"[0-9]*.patch | grep -v /0000-)); then
			echo "ok - checkpatch --strict: ${dir#"$series_root"/}"
		else
			echo "not ok - checkpatch --strict: ${dir#"$series_root"/}"
			fails=$((fails + 1))
		fi
	done
	((fails == 0))
}

# guest BINDIR: runs in the guest (vm.sh cmd), rcvfix not loaded.
guest() {
	local bin=$1 fails=0 scenario wait args out
	# shellcheck source-path=SCRIPTDIR source=../tests/guest/lib.sh
	source "$RCVFIX_REPO/tests/guest/lib.sh"
	grep -q '^rcvfix ' /proc/modules && die "rcvfix is loaded"
	modprobe veth
	snd=$(netns_new usa) rcv=$(netns_new usb)
	veth_pair "$snd" "$rcv" 10.99.53.1 10.99.53.2 || die "no veth pair"
	for ns in "$snd" "$rcv"; do ns_write /proc/sys/net/mptcp/enabled 1 "$ns"; done
	port=45300
	for scenario in "" -F -L; do
		for wait in poll epoll epollet block uring; do
			port=$((port + 1)) out=/tmp/upstream-$$
			in_ns "$rcv" "$RCVFIX_BIN/lowatstall" server -m -a 10.99.53.2 \
				-p $port -n 4194304 $scenario -w $wait -t 10 -T 70 > "$out" 2>&1 &
			wait_for "$out" listening 20
			in_ns "$snd" "$RCVFIX_BIN/lowatstall" client -m -a 10.99.53.2 \
				-p $port -n 4194304 -T 40 > /dev/null 2>&1 || true
			wait
			if grep -q '^result=done' "$out"; then
				echo "ok - mptcp lowatstall ${scenario:-rcvbuf} $wait: $(grep '^result=' "$out")"
			else
				echo "not ok - mptcp lowatstall ${scenario:-rcvbuf} $wait: $(cat "$out")"
				fails=$((fails + 1))
			fi
			rm -f "$out"
		done
	done
	for args in "-w" "-w -c -t tcp" "" "-l" "-c -t tcp"; do
		for fam in "" -6; do
			# shellcheck disable=SC2086 # the options, word by word
			if in_ns "$rcv" "$bin/mptcp_rcvlowat" $fam $args; then
				echo "ok - mptcp_rcvlowat $fam $args"
			else
				echo "not ok - mptcp_rcvlowat $fam $args"
				fails=$((fails + 1))
			fi
		done
	done
	echo "# upstream guest on $(uname -r): $fails failed"
	((fails == 0))
}

case ${1:-} in
check) check ;;
guest) [[ $# -eq 2 ]] || die "usage: upstream.sh guest BINDIR"; guest "$2" ;;
*) die "usage: upstream.sh check | guest BINDIR" ;;
esac
