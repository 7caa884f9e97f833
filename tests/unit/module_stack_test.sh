#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# module/ is a stack: docs/design.md's source map lists the units in order,
# each calling only those after it. Every file of module/ is in the map,
# and every #include "UNIT.h" of one of them names a unit listed after its
# own (status_keys.h, the keys' names, aside). TAP.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
n=0 failed=0
declare -A rank=()

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

# The units in the order the source map first names them (`NAME.c`).
i=0
# shellcheck disable=SC2016 # backquotes, not an expansion
while read -r unit; do
	[[ -n ${rank[$unit]:-} ]] || rank[$unit]=$((i++))
done < <(sed -n '/^## Source map/,/^## /p' "$repo/docs/design.md" |
	grep -oE '`[a-z_0-9]+\.[ch]`' | tr -d '`' | sed 's/\.[ch]$//')

for f in "$repo"/module/*.[ch]; do
	[[ $f == *.mod.c ]] && continue
	unit=$(basename "${f%.[ch]}")
	if [[ -z ${rank[$unit]:-} ]]; then
		not_ok "module/${f##*/} is in docs/design.md's source map"
		continue
	fi
	bad=()
	while read -r dep; do
		[[ $dep == "$unit" || $dep == status_keys ]] && continue
		if [[ -z ${rank[$dep]:-} ]] || ((rank[$dep] <= rank[$unit])); then
			bad+=("$dep.h")
		fi
	done < <(sed -nE 's/^#include "([a-z_0-9]+)\.h".*/\1/p' "$f")
	if ((${#bad[@]})); then
		not_ok "module/${f##*/} includes only units below it: not ${bad[*]}"
	else
		ok "module/${f##*/} includes only units below it"
	fi
done
echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
((failed == 0))
