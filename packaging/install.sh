#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Installs rcvfix on this machine from the source tree, behind `make install`,
# `make uninstall`, `make dkms-install` and `make dkms-uninstall`: the module
# for each kernel given (plain, or through dkms), plus the tools, their man
# pages and the commented-out /etc examples. Every action is idempotent.
#
# Usage: install.sh ACTION [KVER...]
#   install          build module/ for KVER, copy it to
#                    /lib/modules/KVER/updates/rcvfix.ko, run depmod
#   uninstall        remove that module (and run depmod)
#   dkms-install     register /usr/src/rcvfix-VERSION with dkms, build and
#                    install it for KVER (/lib/modules/KVER/updates/dkms)
#   dkms-uninstall   remove it from KVER; unregister and delete the source
#                    when no kernel keeps it
# KVER: kernel releases, or "all" (default: the running kernel).
# The tools (PREFIX, default /usr/local), man pages and the /etc/modprobe.d
# and /etc/modules-load.d examples come with the first module installed and
# go with the last one removed. DESTDIR stages `install` (no depmod).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
VERSION=$(rcvfix_version)
NAME=rcvfix
SRC_DIR=/usr/src/$NAME-$VERSION
DKMS_TREE=/var/lib/dkms
WORK=$RCVFIX_BUILD/install

# Files owned by a plain or dkms install, beside the modules.
MODPROBE_CONF=/etc/modprobe.d/rcvfix.conf
MODULES_LOAD_CONF=/etc/modules-load.d/rcvfix.conf
MAN_PAGES=("man8/rcvfixctl.8" "man1/rcvfix-bench.1")

usage() {
	sed -n '/^# Usage:/,/^# go with/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

need_root() {
	[[ $EUID -eq 0 ]] ||
		die "$1 needs root: run 'sudo make ${action} KVER=...'"
}

# The rcvfix-dkms / rcvfix-tools packages own the same files: never mix.
refuse_if_packaged() {
	local p
	for p in rcvfix-dkms rcvfix-tools; do
		if pkg_installed "$p"; then
			die "the Debian package $p is installed and owns rcvfix here;" \
				"remove it first (apt-get purge rcvfix-dkms rcvfix-tools)" \
				"or manage rcvfix with apt/dkms only"
		fi
	done
}

# --- where rcvfix is installed ----------------------------------------------

plain_ko() { echo "$DESTDIR/lib/modules/$1/updates/$NAME.ko"; }

dkms_ko() {	# dkms_ko KVER: the dkms-installed module file, if any
	local f
	for f in "/lib/modules/$1/updates/dkms/$NAME.ko"{,.xz,.zst,.gz}; do
		[[ -e $f ]] && { echo "$f"; return 0; }
	done
	return 1
}

# dkms_state VERSION KVER: "installed", "built", "added" or "" (not there).
dkms_state() {
	local line
	line=$(dkms status -m "$NAME" -v "$1" -k "$2" 2> /dev/null | head -n 1)
	case $line in
	*": installed"*) echo installed ;;
	*": built"*) echo built ;;
	*) [[ -d $DKMS_TREE/$NAME/$1 ]] && echo added ;;
	esac
	return 0
}

dkms_versions() {	# every version of rcvfix registered with dkms
	local d
	for d in "$DKMS_TREE/$NAME"/*/; do
		[[ -d $d && ! -L ${d%/} ]] && basename "$d"
	done
	return 0
}

# Kernels (with a /lib/modules folder) on which some rcvfix is installed,
# by this script or by dkms.
kernels_with_rcvfix() {
	local d k
	for d in "$DESTDIR"/lib/modules/*/; do
		[[ -d $d ]] || continue
		k=$(basename "$d")
		[[ -e $(plain_ko "$k") ]] || dkms_ko "$k" > /dev/null &&
			echo "$k"
	done
	return 0
}

# expand_kvers ACTION KVER...: "all" becomes the kernels that apply.
expand_kvers() {
	local act=$1 arg k
	shift
	for arg in "$@"; do
		if [[ $arg != all ]]; then
			echo "$arg"
		elif [[ $act == *uninstall ]]; then
			kernels_with_rcvfix
		else
			for k in $(kernels_with_headers); do
				kver_unsupported "$k" > /dev/null || echo "$k"
			done
		fi
	done
}

check_kver_buildable() {
	local why
	why=$(kver_unsupported "$1") || return 0
	die "cannot build rcvfix for $1: $why." \
		"Kernels with headers here: $(kernels_with_headers | xargs)" \
		"(give them as KVER=...)"
}

# --- tools, man pages, /etc examples -------------------------------------

install_extras() {
	local p dst
	make -s -C "$RCVFIX_REPO/tools" OUT="$WORK/bin" VERSION="$VERSION"
	make -s -C "$RCVFIX_REPO/tools" install OUT="$WORK/bin" \
		DESTDIR="$DESTDIR" PREFIX="$PREFIX"
	for p in "${MAN_PAGES[@]}"; do
		install -D -m 0644 "$RCVFIX_REPO/packaging/man/${p#*/}" \
			"$DESTDIR$PREFIX/share/man/$p"
	done
	# Examples (all commented out): never overwrite an operator's file.
	for p in "$MODPROBE_CONF:modprobe/rcvfix.conf" \
		"$MODULES_LOAD_CONF:modules-load/rcvfix.conf"; do
		dst=$DESTDIR${p%%:*}
		if [[ ! -e $dst ]]; then
			install -D -m 0644 "$RCVFIX_REPO/packaging/${p#*:}" "$dst"
		elif ! cmp -s "$RCVFIX_REPO/packaging/${p#*:}" "$dst"; then
			msg "keeping your ${p%%:*} (differs from packaging/${p#*:})"
		fi
	done
	msg "tools in $PREFIX/sbin/rcvfixctl and $PREFIX/bin/rcvfix-bench," \
		"examples in $MODPROBE_CONF and $MODULES_LOAD_CONF"
}

# Removed only when no kernel keeps an rcvfix installed by this script or
# dkms, so that uninstalling one kernel leaves the tools for the others.
remove_extras() {
	local p dst left
	left=$(kernels_with_rcvfix | xargs)
	if [[ -n $left ]]; then
		msg "keeping the tools: rcvfix is still installed for $left"
		return 0
	fi
	make -s -C "$RCVFIX_REPO/tools" uninstall DESTDIR="$DESTDIR" \
		PREFIX="$PREFIX"
	for p in "${MAN_PAGES[@]}"; do
		rm -f "$DESTDIR$PREFIX/share/man/$p"
		rmdir "$(dirname "$DESTDIR$PREFIX/share/man/$p")" 2> /dev/null || true
	done
	for p in "$MODPROBE_CONF:modprobe/rcvfix.conf" \
		"$MODULES_LOAD_CONF:modules-load/rcvfix.conf"; do
		dst=$DESTDIR${p%%:*}
		[[ -e $dst ]] || continue
		if cmp -s "$RCVFIX_REPO/packaging/${p#*:}" "$dst"; then
			rm -f "$dst"
		else
			msg "keeping ${p%%:*}: you changed it (delete it by hand)"
		fi
	done
}

# --- plain install ----------------------------------------------------------

plain_install() {
	local kver=$1 dir ko dst f
	check_kver_buildable "$kver"
	if f=$(dkms_ko "$kver"); then
		die "rcvfix is already installed for $kver by dkms ($f):" \
			"run 'make dkms-uninstall KVER=$kver' first"
	fi
	# Build a private copy: the kernels do not share objects.
	dir=$WORK/$kver/module
	rm -rf "$dir"
	mkdir -p "$dir"
	for f in "$RCVFIX_REPO"/module/{Kbuild,Makefile} "$RCVFIX_REPO"/module/*.[ch]; do
		[[ $f == *.mod.c ]] || cp -p "$f" "$dir/"
	done
	msg "building rcvfix $VERSION for $kver"
	make -s -C "/lib/modules/$kver/build" M="$dir" modules 2>&1 |
		grep -v '^Skipping BTF generation' || true
	[[ -f $dir/$NAME.ko ]] || die "the build for $kver produced no $NAME.ko"
	# As modules_install INSTALL_MOD_STRIP=1 and dkms do: no debug info.
	ko=$dir/installed/$NAME.ko
	mkdir -p "$dir/installed"
	strip --strip-debug -o "$ko" "$dir/$NAME.ko"
	dst=$(plain_ko "$kver")
	if cmp -s "$ko" "$dst"; then
		msg "$dst is up to date"
	else
		install -D -m 0644 "$ko" "$dst"
		msg "installed $dst"
	fi
	if [[ -z $DESTDIR ]]; then
		depmod -a "$kver"
		msg "load it with: modprobe rcvfix (modinfo -n rcvfix: $(modinfo -k "$kver" -n "$NAME" 2> /dev/null))"
	fi
}

plain_uninstall() {
	local kver=$1 dst f
	dst=$(plain_ko "$kver")
	if [[ ! -e $dst ]]; then
		msg "rcvfix is not installed for $kver ($dst absent): nothing to do"
		if f=$(dkms_ko "$kver"); then
			msg "(dkms installed $f: that is 'make dkms-uninstall KVER=$kver')"
		fi
		return 0
	fi
	rm -f "$dst"
	rmdir "$(dirname "$dst")" 2> /dev/null || true
	msg "removed $dst"
	[[ -n $DESTDIR ]] || depmod -a "$kver"
}

# --- dkms ---------------------------------------------------------------------

need_dkms() {
	command -v dkms > /dev/null ||
		die "dkms is not installed: apt-get install dkms (make deps-package)"
}

# stage_source DIR: the tree dkms builds from: dkms.conf and module/.
stage_source() {
	local dir=$1 f
	rm -rf "$dir"
	mkdir -p "$dir/module"
	install -m 0644 "$RCVFIX_REPO/dkms.conf" "$dir/"
	for f in "$RCVFIX_REPO"/module/{Kbuild,Makefile} "$RCVFIX_REPO"/module/*.[ch]; do
		[[ $f == *.mod.c ]] || install -m 0644 "$f" "$dir/module/"
	done
}

# dkms_register: make /usr/src/rcvfix-VERSION the current sources, registered
# with dkms. When the sources changed since the last dkms-install, rebuild
# for every kernel that had them (printed, one per line).
dkms_register() {
	local stage=$WORK/dkms/$NAME-$VERSION v k state again=()
	stage_source "$stage"
	for v in $(dkms_versions); do
		[[ $v == "$VERSION" ]] && continue
		die "dkms also holds rcvfix $v: remove it first" \
			"(dkms remove $NAME/$v --all; rm -rf /usr/src/$NAME-$v)"
	done
	if [[ -d $SRC_DIR ]] && ! diff -r -q "$stage" "$SRC_DIR" > /dev/null; then
		msg "the sources changed since $SRC_DIR was installed: replacing it"
		if [[ -d $DKMS_TREE/$NAME/$VERSION ]]; then
			for k in /lib/modules/*/; do
				k=$(basename "$k")
				state=$(dkms_state "$VERSION" "$k")
				[[ $state == installed ]] && again+=("$k")
			done
			dkms remove "$NAME/$VERSION" --all > /dev/null
		fi
		rm -rf "$SRC_DIR"
	fi
	if [[ ! -d $SRC_DIR ]]; then
		cp -a "$stage" "$SRC_DIR"
		msg "sources in $SRC_DIR"
	fi
	if [[ ! -d $DKMS_TREE/$NAME/$VERSION ]]; then
		dkms add "$NAME/$VERSION" > /dev/null ||
			die "dkms add $NAME/$VERSION failed"
		msg "registered $NAME/$VERSION with dkms"
	fi
	printf '%s\n' "${again[@]}"
}

dkms_install_one() {
	local kver=$1 f t0 st
	if [[ $(dkms_state "$VERSION" "$kver") == installed ]] &&
		f=$(dkms_ko "$kver"); then
		msg "rcvfix $VERSION is already installed for $kver by dkms ($f): nothing to do"
		return 0
	fi
	t0=$EPOCHREALTIME
	st=0
	dkms install "$NAME/$VERSION" -k "$kver" || st=$?
	case $st in
	0) ;;
	77) die "dkms skipped $kver (BUILD_EXCLUSIVE in dkms.conf):" \
		"$(kver_unsupported "$kver" || echo "see dkms.conf")" ;;
	*) die "dkms install $NAME/$VERSION -k $kver failed (status $st):" \
		"see $DKMS_TREE/$NAME/$VERSION/build/make.log" ;;
	esac
	f=$(dkms_ko "$kver") || die "dkms reported success but no module is in /lib/modules/$kver/updates/dkms"
	msg "installed $f with dkms in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s; load it with: modprobe rcvfix"
}

dkms_install() {
	local kver again
	need_dkms
	# Refuse before touching /usr/src or the dkms tree.
	for kver in "$@"; do
		check_kver_buildable "$kver"
		if [[ -e $(plain_ko "$kver") ]]; then
			die "rcvfix is already installed for $kver by 'make install'" \
				"($(plain_ko "$kver")): run 'make uninstall KVER=$kver' first"
		fi
	done
	again=$(dkms_register)
	for kver in $(printf '%s\n' "$again" "$@" | awk 'NF && !seen[$0]++'); do
		dkms_install_one "$kver"
	done
}

dkms_uninstall() {
	local kver v state any
	need_dkms
	for kver in "$@"; do
		any=0
		for v in $(dkms_versions); do
			state=$(dkms_state "$v" "$kver")
			[[ $state == installed || $state == built ]] || continue
			dkms remove "$NAME/$v" -k "$kver" > /dev/null
			msg "removed rcvfix $v for $kver from dkms"
			any=1
		done
		((any)) ||
			msg "rcvfix is not installed with dkms for $kver: nothing to do"
	done
	# No kernel left: unregister and delete the sources dkms-install staged.
	for v in $(dkms_versions); do
		if dkms status -m "$NAME" -v "$v" 2> /dev/null |
			grep -qE ': (built|installed)'; then
			continue
		fi
		dkms remove "$NAME/$v" --all > /dev/null 2>&1 || true
		rm -rf "${DKMS_TREE:?}/$NAME/$v" "/usr/src/$NAME-$v"
		msg "unregistered rcvfix $v from dkms and removed /usr/src/$NAME-$v"
	done
	rmdir "$DKMS_TREE/$NAME" 2> /dev/null || true
	# (dkms itself drops a module whose last kernel went, but not its source)
	if [[ -z $(dkms_versions) && -d $SRC_DIR ]]; then
		rm -rf "$SRC_DIR"
		msg "no kernel keeps rcvfix $VERSION: removed $SRC_DIR"
	fi
}

# --- main -------------------------------------------------------------------

[[ $# -ge 1 ]] || usage
action=$1
shift
[[ $# -ge 1 ]] || set -- "$(uname -r)"
mapfile -t kvers < <(expand_kvers "$action" "$@")
case $action in
install | uninstall | dkms-install | dkms-uninstall) ;;
*) usage ;;
esac
if ((${#kvers[@]} == 0)); then
	msg "no kernel matches '$*': nothing to do"
	[[ $action == *uninstall ]] || exit 1
fi
[[ -n $DESTDIR && $action != install && $action != uninstall ]] &&
	die "DESTDIR works with install and uninstall only"
[[ -n $DESTDIR ]] || need_root "$action"
[[ -n $DESTDIR ]] || refuse_if_packaged

case $action in
install)
	for k in "${kvers[@]}"; do plain_install "$k"; done
	install_extras
	;;
uninstall)
	for k in "${kvers[@]}"; do plain_uninstall "$k"; done
	remove_extras
	;;
dkms-install)
	dkms_install "${kvers[@]}"
	install_extras
	;;
dkms-uninstall)
	dkms_uninstall "${kvers[@]}"
	remove_extras
	;;
esac
