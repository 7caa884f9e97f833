#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the Debian packages of a recorded release (packaging/releases) from
# the commit it was cut from, with that commit's own packaging: a git archive
# of it in build/releases/VERSION/src, then its packaging/deb.sh there for
# the host's architecture only (DEB_ARCHES). Kept while the commit is the
# same: a second run only prints where they are.
# Output: the paths of rcvfix-dkms_VERSION_all.deb and
# rcvfix-tools_VERSION_ARCH.deb, one a line.
# Usage: release-debs.sh VERSION
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

[[ $# -eq 1 ]] || die "usage: release-debs.sh VERSION (one of packaging/releases)"
version=$1
commit=$(releases | awk -v v="$version" '$1 == v { print $2 }')
[[ -n $commit ]] || die "$version is not a release of packaging/releases"
git -C "$RCVFIX_REPO" cat-file -e "$commit^{commit}" 2> /dev/null ||
	die "commit $commit of $version is not in this repository (git fetch it)"

arch=$(dpkg --print-architecture)
dir=$RCVFIX_BUILD/releases/$version
pkg=$dir/src/build/pkg
debs=("$pkg/rcvfix-dkms_${version}_all.deb" "$pkg/rcvfix-tools_${version}_$arch.deb")
if [[ $(cat "$dir/commit" 2> /dev/null) == "$commit" && -f ${debs[0]} && -f ${debs[1]} ]]; then
	msg "rcvfix $version ($commit): packages already built in $pkg"
	printf '%s\n' "${debs[@]}"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/src"
git -C "$RCVFIX_REPO" archive "$commit" | tar -x -C "$dir/src"
msg "rcvfix $version: building its packages from $commit in $dir/src"
# The tree is no git checkout of its own: its deb.sh must not take it for
# a folder of this repository (build/ is ignored here, so it would copy
# nothing), hence the ceiling.
if ! (cd "$dir/src" && GIT_CEILING_DIRECTORIES=$dir DEB_ARCHES=$arch \
	RCVFIX_BUILD="$dir/src/build" packaging/deb.sh) > "$dir/deb.log" 2>&1; then
	tail -n 30 "$dir/deb.log" >&2
	die "rcvfix $version: its packaging/deb.sh failed: see $dir/deb.log"
fi
for f in "${debs[@]}"; do
	[[ -f $f ]] || die "rcvfix $version: no $f after its deb.sh (see $dir/deb.log)"
done
echo "$commit" > "$dir/commit"
msg "rcvfix $version: $(grep -m 1 'lintian' "$dir/deb.log" | sed 's/^rcvfix: //')"
printf '%s\n' "${debs[@]}"
