#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-upgrade: the upgrade from the last release to this tree, as
# docs/operations.md ("Upgrading") tells operators to run it. Builds this
# tree's packages (deb.sh) and the last release's from its recorded commit
# (release-debs.sh), then boots KVER on tests/guest/77-upgrade.t, which
# installs the old ones with apt in a writable overlay of the guest's root,
# upgrades to the new ones under traffic, replaces the loaded module and
# purges. Changes nothing on the host but build/.
#
# The last release is the newest of packaging/releases; when this tree is
# that release (same version, module/, tools/ and the packaging unchanged
# since its commit), the one before it. A change whose version was not
# raised is then upgraded "from" its own version, and the test fails: apt
# keeps the installed package, so the old module stays.
# Usage: check-upgrade.sh KVER
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR source=../vm/summary.sh
source "$RCVFIX_REPO/vm/summary.sh"
export LC_ALL=C

[[ $# -eq 1 ]] || die "usage: check-upgrade.sh KVER"
kver=$1
new=$(rcvfix_version)
arch=$(dpkg --print-architecture)
t_start=$EPOCHREALTIME

read -r old old_commit < <(releases | tail -n 1) ||
	die "packaging/releases lists no release"
if dpkg --compare-versions "$new" eq "$old" && release_tree_unchanged "$old_commit"; then
	read -r old old_commit < <(release_before "$new") ||
		die "$new is the first release: nothing to upgrade from"
fi
dpkg --compare-versions "$new" ge "$old" ||
	die "module/version.h says $new, below the last release $old"
msg "upgrade: $old ($old_commit) -> $new (this tree) on $kver"

mapfile -t old_debs < <("$RCVFIX_REPO/packaging/release-debs.sh" "$old")
((${#old_debs[@]} == 2)) || die "release-debs.sh $old gave no packages"
DEB_ARCHES=$arch "$RCVFIX_REPO/packaging/deb.sh"
new_debs=("$RCVFIX_BUILD/pkg/rcvfix-dkms_${new}_all.deb"
	"$RCVFIX_BUILD/pkg/rcvfix-tools_${new}_$arch.deb")
for f in "${new_debs[@]}"; do
	[[ -f $f ]] || die "deb.sh made no $f"
done
t_build=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# The guest's settings (test 77 reads them), and a build folder of its own:
# build/KVER belongs to `make check`, which may run meanwhile.
out=$RCVFIX_BUILD/upgrade
mkdir -p "$out"
{
	printf 'OLD_VERSION=%q\nNEW_VERSION=%q\n' "$old" "$new"
	printf 'OLD_DEBS=(%q %q)\n' "${old_debs[@]}"
	printf 'NEW_DEBS=(%q %q)\n' "${new_debs[@]}"
} > "$out/upgrade.env"
rm -f "$out/guest/$kver/logs/summary"
t0=$EPOCHREALTIME
st=0
bin=$RCVFIX_BUILD/bin	# make progs: the test programs (lowat, sockopt)
# Two dkms builds under TCG: 1900-2100 s of guest alone, 2400 s and more
# beside other guests (test 77's own limit is 4800 s).
RCVFIX_BUILD=$out/guest RCVFIX_GUEST_BIN=$bin \
	RCVFIX_GUEST_TIMEOUT=${RCVFIX_GUEST_TIMEOUT:-5400} \
	RCVFIX_TESTS=77-upgrade RCVFIX_UPGRADE=$out/upgrade.env \
	"$RCVFIX_REPO/vm/vm.sh" test "$kver" || st=$?
t_guest=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

if ! read_summary "$kver" "$out/guest"; then
	echo "check-upgrade: $old -> $new on $kver: the guest did not finish (status $st, $out/guest/$kver/logs)"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "check-upgrade: $old -> $new on $kver: packages ${t_build} s, guest ${t_guest} s (logs: $out/guest/$kver/logs)"
# The test must run: a skip here is a failure.
((sum_skipped == 0)) || sum_failed=$((sum_failed + 1))
echo "$sum_passed passed, $sum_failed failed"
((st == 0 && sum_failed == 0 && sum_passed > 0))
