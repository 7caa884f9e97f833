#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the Debian packages (debian/) with dpkg-buildpackage -b from a copy
# of the source tree in build/pkg/rcvfix-VERSION, so the repository stays
# clean, then runs lintian on them: any error or warning fails.
# Output: build/pkg/rcvfix-dkms_VERSION_all.deb, rcvfix-tools_VERSION_ARCH.deb,
# build.log and lintian.txt there. Usage: deb.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

for c in dpkg-buildpackage dh dh_dkms lintian fakeroot; do
	command -v "$c" > /dev/null ||
		die "$c not found: make deps-package (apt-get install dkms dh-dkms debhelper lintian dpkg-dev fakeroot)"
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

msg "building the packages of rcvfix $version in $tree"
t0=$EPOCHREALTIME
if ! (cd "$tree" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	die "dpkg-buildpackage failed: see $out/build.log"
fi
t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
changes=$(ls "$out"/rcvfix_"$version"_*.changes)
msg "built in ${t}s:"
for f in "$out"/*.deb; do
	echo "    $f ($(stat -c %s "$f") bytes)" >&2
done

t0=$EPOCHREALTIME
st=0
lintian --fail-on error,warning --display-info --pedantic "$changes" \
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
