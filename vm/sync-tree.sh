#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Mirrors the sources of a kbuild folder (module/, tests/kmod/) into a
# per-kernel build folder, keeping timestamps so kbuild rebuilds only what
# changed; build products are neither copied nor deleted.
# Usage: sync-tree.sh SRC DST
set -euo pipefail

[[ $# -eq 2 && -d $1 ]] || { echo "usage: sync-tree.sh SRC DST" >&2; exit 2; }
src=$1 dst=$2

# Build products and kbuild's hidden files (.*.cmd, .tmp_*, ...).
is_product() {
	case ${1##*/} in
	.* | *.o | *.ko | *.mod | *.mod.c | *.a | *.order | *.symvers | \
	*.dwo | *.su | *.s | *.i | *.ll | *.lst) return 0 ;;
	esac
	return 1
}

mkdir -p "$dst"
(cd "$src" && find . -type f -print0) | while IFS= read -r -d '' f; do
	is_product "$f" && continue
	if [[ ! -e $dst/$f || $src/$f -nt $dst/$f || $src/$f -ot $dst/$f ]] ||
		! cmp -s "$src/$f" "$dst/$f"; then
		mkdir -p "$(dirname "$dst/$f")"
		cp -p "$src/$f" "$dst/$f"
	fi
done
# Sources deleted from SRC go away in DST too.
(cd "$dst" && find . -type f -print0) | while IFS= read -r -d '' f; do
	is_product "$f" || [[ -e $src/$f ]] || rm -f "$dst/$f"
done
