#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the Debian packages (debian/) with dpkg-buildpackage from a copy
# of the source tree in build/pkg/rcvfix-VERSION, so the repository stays
# clean: rcvfix-dkms once (architecture all), rcvfix-tools for each
# architecture of DEB_ARCHES, the host's natively, the others cross-built
# (dpkg-buildpackage -B -a ARCH with gcc-TRIPLET). Then checks that each
# rcvfix-tools holds programs of its architecture (file(1); and --version
# under qemu-user-static when it is installed) and runs lintian on them all:
# any error or warning fails.
# Output: build/pkg/rcvfix-dkms_VERSION_all.deb, rcvfix-tools_VERSION_ARCH.deb
# per ARCH, build.log and lintian.txt there.
# Usage: deb.sh   Environment: DEB_ARCHES (default "amd64 arm64")
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

for c in dpkg-buildpackage dh dh_dkms lintian fakeroot file; do
	command -v "$c" > /dev/null ||
		die "$c not found: make deps-package (apt-get install dkms dh-dkms debhelper lintian dpkg-dev fakeroot file)"
done

# The architectures, the host's last: its build (-b) makes rcvfix-dkms too
# and leaves its own programs in debian/tools-build (check-package.sh reads
# their --help). Without the host's, the last one listed makes rcvfix-dkms.
host_arch=$(dpkg --print-architecture)
read -ra wanted <<< "${DEB_ARCHES:-amd64 arm64}"
((${#wanted[@]})) || die "DEB_ARCHES is empty: give one or more of amd64 arm64"
arches=()
for a in "${wanted[@]}"; do
	[[ $a == "$host_arch" ]] || arches+=("$a")
done
[[ " ${wanted[*]} " != *" $host_arch "* ]] || arches+=("$host_arch")
declare -A triplet=()
for a in "${arches[@]}"; do
	triplet[$a]=$(dpkg-architecture -a"$a" -qDEB_HOST_GNU_TYPE 2> /dev/null) ||
		die "DEB_ARCHES: $a is no Debian architecture (dpkg-architecture -L lists them)"
	[[ $a != "$host_arch" ]] || continue
	if ! command -v "${triplet[$a]}-gcc" > /dev/null ||
		[[ ! -f /usr/${triplet[$a]}/include/stdio.h ]]; then
		die "no cross compiler for $a: make deps-package (apt-get install gcc-${triplet[$a]//_/-} libc6-dev-$a-cross), or make deb DEB_ARCHES=$host_arch"
	fi
done

version=$(rcvfix_version)
out=$RCVFIX_BUILD/pkg
tree=$out/rcvfix-$version

# The source tree: what git tracks or would track (.gitignore drops build
# products), or everything but build/ and .git/ outside a git checkout.
list_sources() {
	if git -C "$RCVFIX_REPO" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		git -C "$RCVFIX_REPO" ls-files -z --cached --others --exclude-standard
	else
		(cd "$RCVFIX_REPO" && find . \( -path ./build -o -path ./.git \) \
			-prune -o -type f -printf '%P\0')
	fi
}

rm -rf "$tree"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$tree"
(cd "$RCVFIX_REPO" && list_sources | while IFS= read -r -d '' f; do
	[[ -f $f ]] && printf '%s\0' "$f"
done | tar -c --null -T - -f -) | tar -x -C "$tree"

msg "building the packages of rcvfix $version in $tree for ${arches[*]}"
t0=$EPOCHREALTIME
: > "$out/build.log"
for a in "${arches[@]}"; do
	# -B: rcvfix-tools only; -b: rcvfix-dkms too (the last build). A
	# cross build runs no tests (checked below) and names its compiler.
	kind=-B
	[[ $a != "${arches[-1]}" ]] || kind=-b
	cross=()
	[[ $a == "$host_arch" ]] ||
		cross=(CC="${triplet[$a]}-gcc" DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}")
	echo "### ${cross[*]} dpkg-buildpackage $kind -a$a" >> "$out/build.log"
	if ! (cd "$tree" && env "${cross[@]}" dpkg-buildpackage "$kind" -a"$a" -us -uc) \
		>> "$out/build.log" 2>&1; then
		tail -n 40 "$out/build.log" >&2
		die "dpkg-buildpackage $kind -a$a failed: see $out/build.log"
	fi
done
t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
mapfile -t changes < <(ls "$out"/rcvfix_"$version"_*.changes)
msg "built in ${t}s:"
for f in "$out"/*.deb; do
	echo "    $f ($(stat -c %s "$f") bytes)" >&2
done

# Each rcvfix-tools holds programs of its own architecture, and they run
# (a foreign one under qemu-user-static, with the cross libc, if installed).
for a in "${arches[@]}"; do
	deb=$out/rcvfix-tools_${version}_$a.deb
	[[ -f $deb ]] || die "dpkg-buildpackage -a$a made no $deb: see $out/build.log"
	elf=$(deb_elf_check "$deb" "$a") ||
		die "$deb holds programs of another architecture:"$'\n'"$elf"
	msg "$(basename "$deb"): $elf"
	run=()
	if [[ $a != "$host_arch" ]]; then
		cpu=$(dpkg-architecture -a"$a" -qDEB_HOST_GNU_CPU 2> /dev/null)
		if ! command -v "qemu-$cpu-static" > /dev/null; then
			msg "$(basename "$deb"): --version not run (no qemu-$cpu-static: apt-get install qemu-user-static)"
			continue
		fi
		run=("qemu-$cpu-static" -L "/usr/${triplet[$a]}")
	fi
	x=$(mktemp -d "${TMPDIR:-/tmp}/rcvfix-deb-run.XXXXXX")
	dpkg-deb -x "$deb" "$x"
	got="$("${run[@]}" "$x/usr/sbin/rcvfixctl" --version 2>&1) / $("${run[@]}" "$x/usr/bin/rcvfix-bench" --version 2>&1)"
	rm -rf "$x"
	[[ $got == "rcvfixctl $version / rcvfix-bench $version" ]] ||
		die "$(basename "$deb"): its programs' --version said '$got', not $version${run:+ (run with ${run[*]})}"
	msg "$(basename "$deb"): ${run:+${run[0]}: }$got"
done

t0=$EPOCHREALTIME
st=0
lintian --fail-on error,warning --display-info --pedantic "${changes[@]}" \
	> "$out/lintian.txt" 2>&1 || st=$?
grep -v 'running with root privileges is not recommended' "$out/lintian.txt" \
	> "$out/lintian.txt.new" || true
mv "$out/lintian.txt.new" "$out/lintian.txt"
t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
if [[ -s $out/lintian.txt ]]; then
	sed 's/^/    /' "$out/lintian.txt" >&2
fi
((st == 0)) || die "lintian found errors or warnings (status $st, $out/lintian.txt)"
msg "lintian (errors, warnings, info, pedantic): $(wc -l < "$out/lintian.txt") tags in ${t}s"
