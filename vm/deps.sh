#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Installs the given Debian packages if any is missing: one dpkg-query when
# all are present (no apt at all), else apt-get update (at most hourly) and
# one install. Works without a terminal (CI). Usage: deps.sh PACKAGE...
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

declare -A installed=()
while read -r pkg status; do
	[[ $status != installed ]] || installed[$pkg]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" \
	2> /dev/null || true)
missing=()
for p in "$@"; do
	[[ -n ${installed[$p]:-} ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

command -v apt-get > /dev/null ||
	die "missing packages ${missing[*]} and no apt-get: install them by hand"
sudo=()
if ((EUID != 0)); then
	command -v sudo > /dev/null ||
		die "missing packages ${missing[*]}: run 'make deps' as root"
	sudo=(sudo)
fi
msg "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q)
# One `apt-get update` per hour is enough, however many deps.sh calls a
# make run makes (mk/*.mk fragments call it too); retried once on failure.
stamp=$RCVFIX_BUILD/.apt-updated
updated=0
if [[ -z $(find "$stamp" -mmin -60 2> /dev/null) ]]; then
	"${apt[@]}" update < /dev/null
	mkdir -p "$RCVFIX_BUILD" && touch "$stamp"
	updated=1
fi
install=("${apt[@]}" install -y --no-install-recommends "${missing[@]}")
if ! "${install[@]}" < /dev/null; then
	((updated == 0)) || die "apt-get install ${missing[*]} failed"
	"${apt[@]}" update < /dev/null
	touch "$stamp"
	"${install[@]}" < /dev/null
fi
