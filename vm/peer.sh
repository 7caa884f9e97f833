#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the kernel's own MPTCP selftests (tools/testing/selftests/net/mptcp)
# of each kernel line from Debian's own source package, for test 45 to run
# in the guest against rcvfix disabled and enabled (make check-peer).
# The C programs are built against that source's uapi MPTCP headers, ahead
# of the host's, and tools/include; the scripts are copied as they ship.
# Each line is cached in build/peer/LINE/ (stamp: the source package's
# version): 6.1 and 6.12 from the host's linux-source-LINE, 7.x from the
# newest line's Debian 13 chroot (vm/chroot-kernel.sh).
#
# Usage: peer.sh line KVER      the line of a kernel release: 6.1, 6.12, 7.3
#        peer.sh build LINE...  build (or reuse) build/peer/LINE
#        peer.sh deps LINE...   the host packages a build needs
#        peer.sh compile SRC    build the C programs of an unpacked source
#                               in place (vm/upstream.sh: a patched one)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() { die "usage: peer.sh line KVER | build LINE... | deps LINE... | compile SRC"; }

# The selftests' C programs (mptcp_rcvlowat: our series' own, in a source
# patched with upstream/) and what the scripts source.
programs=(mptcp_connect mptcp_sockopt mptcp_inq mptcp_diag pm_nl_ctl
	mptcp_rcvlowat)
# (net/: mptcp/, lib.sh, net_helper.sh and 7.x's lib/sh, as each line has them).
members=(tools/testing/selftests/net tools/testing/selftests/kselftest.h
	tools/include include/uapi/linux)

kver_line() {	# 6.12.118+deb12-rt-amd64 -> 6.12
	[[ $1 =~ ^([0-9]+\.[0-9]+)[.-] ]] || die "not a kernel release: $1"
	echo "${BASH_REMATCH[1]}"
}

# Lines at 7 and above come from the newest line's chroot.
from_chroot() { [[ ${1%%.*} -ge 7 ]]; }

src_tar() {
	if from_chroot "$1"; then
		echo "$RCVFIX_BUILD/newest/chroot/usr/src/linux-source-$1.tar.xz"
	else
		echo "/usr/src/linux-source-$1.tar.xz"
	fi
}

src_version() {
	local q=(dpkg-query -W -f '${Version}' "linux-source-$1")
	if from_chroot "$1"; then
		"$HARNESS/chroot-kernel.sh" tool newest "linux-source-$1" "${q[@]}"
	else
		"${q[@]}"
	fi
}

# compile_programs SRC: the selftests' C programs that SRC has, built in
# place (SRC/tools/testing/selftests/net/mptcp, a log per program beside
# it) against SRC's uapi MPTCP headers, ahead of the host's older ones,
# and tools/include; prints their names. Also for a patched source
# (vm/upstream.sh).
compile_programs() {
	local src=$1 dir=$1/tools/testing/selftests/net/mptcp uapi=$1/.selftest-uapi p built=()
	mkdir -p "$uapi/linux"
	cp "$src"/include/uapi/linux/mptcp*.h "$uapi/linux/"
	for p in "${programs[@]}"; do
		[[ -f $dir/$p.c ]] || continue	# mptcp_diag: 6.14 and later
		gcc -Wall -O2 -g -I"$uapi" -I"$src/tools/include" \
			-o "$dir/$p" "$dir/$p.c" > "$dir/$p.log" 2>&1 ||
			die "cannot build $p: see $dir/$p.log"
		built+=("$p")
	done
	echo "${built[*]}"
}

build_line() {
	local line=$1 top=$RCVFIX_BUILD/peer/$1 tar version built
	mkdir -p "$top"
	exec 8> "$top/.lock"
	flock 8
	if from_chroot "$line"; then
		"$HARNESS/chroot-kernel.sh" tool newest "linux-source-$line" true > /dev/null
	fi
	tar=$(src_tar "$line")
	[[ -f $tar ]] || die "$tar missing: install linux-source-$line (make deps-peer)"
	version=$(src_version "$line") || die "linux-source-$line: no version"
	if [[ -f $top/stamp && $(< "$top/stamp") == "$version" ]]; then
		msg "MPTCP selftests of $line: linux-source-$line $version, cached in $top"
		return
	fi
	rm -rf "$top/src" "$top/stamp"
	mkdir -p "$top/src"
	msg "unpacking the MPTCP selftests of linux-source-$line $version"
	tar -xJf "$tar" -C "$top/src" --strip-components=1 \
		"${members[@]/#/linux-source-$line/}" ||
		die "cannot unpack the selftests from $tar"
	built=$(compile_programs "$top/src")
	echo "$version" > "$top/stamp"
	msg "MPTCP selftests of $line built in $top/src: $built"
}

[[ $# -ge 2 ]] || usage
case $1 in
line)
	[[ $# -eq 2 ]] || usage
	kver_line "$2"
	;;
build)
	shift
	for l in "$@"; do build_line "$l"; done
	;;
compile)
	[[ $# -eq 2 ]] || usage
	compile_programs "$2"
	;;
deps)
	shift
	pkgs=(gcc xz-utils ethtool nftables iptables iproute2 iputils-ping socat)
	for l in "$@"; do
		from_chroot "$l" || pkgs+=("linux-source-$l")
	done
	echo "${pkgs[*]}"
	;;
*) usage ;;
esac
