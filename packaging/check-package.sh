#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check-package`: proves the ways operators install rcvfix, on this host
# (it installs and removes system files, so it is not part of `make check`).
# Builds the .debs (lintian clean), installs them so dkms builds for the
# guest kernels, boots each guest on tests/guest/70-dkms.t, purges; then the
# same with make dkms-install, and make install with 71-install.t. Leaves the
# host as it found it (refuses to start if rcvfix is already installed).
#
# Environment: PKG_KVERS   guest kernels (default: supported ones with headers)
#              PKG_GUEST=0 skip the guest boots
#              DEB_ARCHES  architectures of rcvfix-tools (deb.sh; amd64 arm64)
# Output: TAP lines, timings, and a closing "N passed, M failed" line.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR source=../vm/summary.sh
source "$RCVFIX_REPO/vm/summary.sh"
export LC_ALL=C

cd "$RCVFIX_REPO" || exit 2
[[ $EUID -eq 0 ]] || die "check-package installs packages: run it as root"
VERSION=$(rcvfix_version)
OUT=$RCVFIX_BUILD/pkg
LOG=$OUT/check-package.log
GUEST_BUILD=$OUT/guest
mkdir -p "$OUT"
: > "$LOG"

if [[ -n ${PKG_KVERS:-} ]]; then
	read -ra kvers <<< "$PKG_KVERS"
else
	mapfile -t kvers < <(for k in $(kernels_with_headers); do
		kver_unsupported "$k" > /dev/null || echo "$k"; done)
fi
((${#kvers[@]})) || die "no supported kernel with headers: make deps"

n_pass=0 n_fail=0
ok() { echo "ok - $*"; n_pass=$((n_pass + 1)); }
fail() {
	local d=$1
	shift
	echo "not ok - $d"
	local l
	for l in "$@"; do echo "#   $l"; done
	n_fail=$((n_fail + 1))
}
check() {	# check DESC CMD...: output goes to the log, shown on failure
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		fail "$desc" "command: $*" "${out:0:3000}"
	fi
	printf '### %s\n%s\n' "$desc" "$out" >> "$LOG"
}
check_fails() {	# check_fails DESC PATTERN CMD...: CMD fails, saying PATTERN
	local desc=$1 pat=$2 out st=0
	shift 2
	out=$("$@" 2>&1) || st=$?
	if ((st != 0)) && [[ $out == *"$pat"* ]]; then
		ok "$desc"
	else
		fail "$desc" "command: $*" "status $st, expected failure saying '$pat'" "${out:0:2000}"
	fi
	printf '### %s\n%s\n' "$desc" "$out" >> "$LOG"
}
check_says() {	# check_says DESC PATTERN CMD...: CMD succeeds, saying PATTERN
	local desc=$1 pat=$2 out st=0
	shift 2
	out=$("$@" 2>&1) || st=$?
	if ((st == 0)) && [[ $out == *"$pat"* ]]; then
		ok "$desc"
	else
		fail "$desc" "command: $*" "status $st, expected success saying '$pat'" "${out:0:2000}"
	fi
	printf '### %s\n%s\n' "$desc" "$out" >> "$LOG"
}
timed() {	# timed VAR CMD...: run CMD (output to the log), seconds in VAR
	local -n _t=$1
	local t0=$EPOCHREALTIME st=0
	shift
	"${@}" >> "$LOG" 2>&1 || st=$?
	_t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	return $st
}
note() { echo "# $*"; }

# --- the host must start (and end) without rcvfix ---------------------------

installed_traces() {	# every rcvfix file or registration on the host
	local f
	for f in /usr/src/rcvfix-* /var/lib/dkms/rcvfix \
		/lib/modules/*/updates/rcvfix.ko* \
		/lib/modules/*/updates/dkms/rcvfix.ko* \
		/etc/modprobe.d/rcvfix.conf /etc/modules-load.d/rcvfix.conf \
		/usr/sbin/rcvfixctl /usr/bin/rcvfix-bench \
		/usr/local/sbin/rcvfixctl /usr/local/bin/rcvfix-bench \
		/usr/local/share/man/man8/rcvfixctl.8 \
		/usr/local/share/man/man1/rcvfix-bench.1 \
		/usr/share/man/man8/rcvfixctl.8.gz; do
		[[ -e $f ]] && echo "$f"
	done
	grep -l 'rcvfix' /lib/modules/*/modules.dep 2> /dev/null |
		sed 's/$/ (lists rcvfix)/'
	for f in rcvfix-dkms rcvfix-tools; do
		pkg_installed "$f" && echo "package $f"
	done
	return 0
}

left=$(installed_traces)
[[ -z $left ]] || die "rcvfix is already installed here; remove it first" \
	"(apt-get purge rcvfix-dkms rcvfix-tools; make dkms-uninstall KVER=all;" \
	"make uninstall KVER=all):"$'\n'"$left"

# dkms makes a signing key on its first signed build; remove it if we did.
mok_existed=0
[[ -e /var/lib/dkms/mok.key ]] && mok_existed=1
declare -A dep_sum=()
for k in /lib/modules/*/modules.dep; do
	dep_sum[$k]=$(md5sum < "$k")
done

cleanup() {
	local p
	for p in rcvfix-dkms rcvfix-tools; do
		pkg_installed "$p" && dpkg --purge "$p" >> "$LOG" 2>&1
	done
	packaging/install.sh dkms-uninstall all >> "$LOG" 2>&1
	packaging/install.sh uninstall all >> "$LOG" 2>&1
	if ((!mok_existed)); then
		rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	fi
	rm -rf /tmp/rcvfix-fakek.$$
}
trap cleanup EXIT

start=$SECONDS
note "kernels: ${kvers[*]}; log: $LOG"

# --- guest runs ---------------------------------------------------------------

# guest KVER TEST: boot KVER on tests/guest/TEST*.t; pass if it ran (not
# skipped) and nothing failed.
guest() {
	local kver=$1 t=$2 secs
	if [[ ${PKG_GUEST:-1} == 0 ]]; then
		note "guest $t on $kver: skipped (PKG_GUEST=0)"
		return
	fi
	# A build folder of our own: the logs, initramfs and settings file of
	# build/KVER belong to `make check`, which may be running meanwhile.
	rm -f "$GUEST_BUILD/$kver/logs/summary"
	timed secs env RCVFIX_BUILD="$GUEST_BUILD" RCVFIX_TESTS="$t" \
		vm/vm.sh test "$kver"
	read_summary "$kver" "$GUEST_BUILD"
	if ((sum_passed > 0 && sum_failed == 0 && sum_skipped == 0)); then
		ok "guest $kver: tests/guest/$t*.t: $sum_passed passed (${secs}s)"
	else
		fail "guest $kver: tests/guest/$t*.t: $sum_passed passed, $sum_failed failed, $sum_skipped skipped (${secs}s)" \
			"see $GUEST_BUILD/$kver/logs/results.tap"
		grep -E '^(not ok|#  )' "$GUEST_BUILD/$kver/logs/results.tap" 2> /dev/null |
			head -n 20 | sed 's/^/#   /'
	fi
}

nothing_left() {	# nothing_left WHAT: no trace of rcvfix on the host
	local left k
	left=$(installed_traces)
	if [[ -z $left ]]; then
		ok "$1: nothing left in /usr/src, /var/lib/dkms, /lib/modules, /etc, /usr"
	else
		fail "$1: leftovers" "$left"
	fi
	for k in "${!dep_sum[@]}"; do
		[[ $(md5sum < "$k") == "${dep_sum[$k]}" ]] ||
			fail "$1: $k differs from before the test"
	done
}

# --- 1. the packages ------------------------------------------------------

if timed t packaging/deb.sh; then
	ok "deb: built rcvfix-dkms_${VERSION}_all.deb and rcvfix-tools, lintian clean (${t}s with lintian)"
else
	fail "deb: build or lintian failed (${t}s)" "$(tail -n 30 "$LOG")"
	exit 1
fi
grep -E '^rcvfix: (built in|lintian)' "$LOG" | sed 's/^/# /'
dkms_deb=$OUT/rcvfix-dkms_${VERSION}_all.deb
tools_deb=$OUT/rcvfix-tools_${VERSION}_$(dpkg --print-architecture).deb
check "deb: rcvfix-dkms ships dkms.conf, the module source and the /etc examples" \
	bash -c "dpkg-deb -c '$dkms_deb' | grep -q ' ./usr/src/rcvfix-$VERSION/dkms.conf$' &&
		dpkg-deb -c '$dkms_deb' | grep -q ' ./usr/src/rcvfix-$VERSION/module/Kbuild$' &&
		dpkg-deb -c '$dkms_deb' | grep -q ' ./etc/modprobe.d/rcvfix.conf$' &&
		dpkg-deb -c '$dkms_deb' | grep -q ' ./etc/modules-load.d/rcvfix.conf$'"
check "deb: rcvfix-tools ships both tools and their man pages" \
	bash -c "dpkg-deb -c '$tools_deb' | grep -q ' ./usr/sbin/rcvfixctl$' &&
		dpkg-deb -c '$tools_deb' | grep -q ' ./usr/bin/rcvfix-bench$' &&
		dpkg-deb -c '$tools_deb' | grep -q ' ./usr/share/man/man8/rcvfixctl.8.gz$' &&
		dpkg-deb -c '$tools_deb' | grep -q ' ./usr/share/man/man1/rcvfix-bench.1.gz$'"
# make deb builds rcvfix-tools for each of DEB_ARCHES (cross-built but the
# host's): each holds programs of its own architecture, as file(1) reads them.
for a in ${DEB_ARCHES:-amd64 arm64}; do
	check "deb: rcvfix-tools_${VERSION}_$a.deb holds $a programs only (file)" \
		deb_elf_check "$OUT/rcvfix-tools_${VERSION}_$a.deb" "$a"
done

# Every long option of --help is in the man page.
bin=$OUT/rcvfix-$VERSION/debian/tools-build
for tool in rcvfixctl:8 rcvfix-bench:1; do
	name=${tool%:*}
	page=packaging/man/$name.${tool#*:}
	undocumented=$(for o in $("$bin/$name" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		sed 's/\\//g' "$page" | grep -qF -- "$o" || echo "$o"
	done)
	if [[ -z $undocumented ]]; then
		ok "man: $page documents every option of $name --help"
	else
		# shellcheck disable=SC2086 # one option per detail line
		fail "man: $page lacks options of $name --help:" $undocumented
	fi
	check "man: $page renders without warnings" bash -c \
		"out=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$page' 2>&1 >/dev/null); [[ -z \$out ]] || { echo \"\$out\"; false; }"
done

# --- 2. installing the packages: dkms builds for every kernel ----------------

if timed t dpkg -i "$tools_deb" "$dkms_deb"; then
	ok "apt: dpkg -i rcvfix-tools rcvfix-dkms (dkms built for every kernel in /lib/modules: ${t}s)"
else
	fail "apt: dpkg -i failed (${t}s)" "$(tail -n 30 "$LOG")"
fi
grep -E '^(Building (for|initial)|Done|Skipped)' "$LOG" | sed 's/^/# dpkg: /'
for k in "${kvers[@]}"; do
	check "apt: dkms status: installed for $k" bash -c \
		"dkms status -m rcvfix -v '$VERSION' -k '$k' | grep -q ': installed'"
	check "apt: /var/lib/dkms holds the module built for $k" bash -c \
		"ls /var/lib/dkms/rcvfix/$VERSION/'$k'/x86_64/module/rcvfix.ko*"
	check "apt: /lib/modules/$k/updates/dkms holds it, modules.dep lists it" bash -c \
		"ls /lib/modules/'$k'/updates/dkms/rcvfix.ko* &&
		grep -q '^updates/dkms/rcvfix.ko' /lib/modules/'$k'/modules.dep"
done
check "apt: /usr/sbin/rcvfixctl --version" /usr/sbin/rcvfixctl --version
check "apt: man -w rcvfixctl finds /usr/share/man/man8/rcvfixctl.8.gz" \
	bash -c "[[ \$(man -w rcvfixctl) == /usr/share/man/man8/rcvfixctl.8.gz ]]"
check "apt: /etc examples are conffiles" bash -c \
	"dpkg-query -W -f='\${Conffiles}' rcvfix-dkms | grep -q /etc/modprobe.d/rcvfix.conf &&
	dpkg-query -W -f='\${Conffiles}' rcvfix-dkms | grep -q /etc/modules-load.d/rcvfix.conf"
check_fails "apt: make dkms-install refuses while the package is installed" \
	"package rcvfix-dkms is installed" \
	packaging/install.sh dkms-install "${kvers[0]}"
check_fails "apt: make install refuses while the package is installed" \
	"package rcvfix-dkms is installed" packaging/install.sh install "${kvers[0]}"

for k in "${kvers[@]}"; do
	guest "$k" 70
done

# Purge: everything goes, modules.dep is as before.
if timed t dpkg --purge rcvfix-dkms rcvfix-tools; then
	ok "apt: dpkg --purge rcvfix-dkms rcvfix-tools (${t}s)"
else
	fail "apt: dpkg --purge failed" "$(tail -n 20 "$LOG")"
fi
nothing_left "apt purge"

# --- 3. make dkms-install / dkms-uninstall -----------------------------------

for k in "${kvers[@]}"; do
	if timed t packaging/install.sh dkms-install "$k"; then
		ok "dkms-install $k: dkms add/build/install (${t}s)"
	else
		fail "dkms-install $k failed (${t}s)" "$(tail -n 20 "$LOG")"
	fi
done
check_says "dkms-install again: nothing to do" \
	"is already installed for ${kvers[0]} by dkms" \
	packaging/install.sh dkms-install "${kvers[@]}"
for k in "${kvers[@]}"; do
	check "dkms-install: /lib/modules/$k/updates/dkms/rcvfix.ko*" bash -c \
		"ls /lib/modules/'$k'/updates/dkms/rcvfix.ko*"
done
check_fails "dkms-install: make install refuses the same kernel" \
	"already installed for ${kvers[0]} by dkms" \
	packaging/install.sh install "${kvers[0]}"

# dkms refuses unsupported kernels (BUILD_EXCLUSIVE_*), exit status 77.
check "dkms.conf: dkms refuses a 5.4 kernel (BUILD_EXCLUSIVE_KERNEL)" bash -c \
	"dkms build rcvfix/$VERSION -k 5.4.0-30-amd64 --kernelsourcedir /lib/modules/${kvers[0]}/build; [[ \$? == 77 ]]"
fake=/tmp/rcvfix-fakek.$$
mkdir -p "$fake/include"
touch "$fake/Makefile"
grep -v '^CONFIG_KPROBES_ON_FTRACE=' "/lib/modules/${kvers[0]}/build/.config" > "$fake/.config"
check "dkms.conf: dkms refuses a kernel without CONFIG_KPROBES_ON_FTRACE (BUILD_EXCLUSIVE_CONFIG)" \
	bash -c "dkms build rcvfix/$VERSION -k 6.1.0-999-amd64 --kernelsourcedir $fake; [[ \$? == 77 ]]"
rm -rf "$fake"

check "dkms-uninstall ${kvers[*]}" packaging/install.sh dkms-uninstall "${kvers[@]}"
check_says "dkms-uninstall again: nothing to do" "not installed with dkms" \
	packaging/install.sh dkms-uninstall "${kvers[@]}"
nothing_left "dkms-uninstall"
check_says "dkms-uninstall of a kernel never installed: nothing to do" \
	"not installed with dkms" packaging/install.sh dkms-uninstall 6.1.0-999-amd64

# --- 4. make install / uninstall (no dkms) ------------------------------------

check "install ${kvers[*]}" packaging/install.sh install "${kvers[@]}"
check_says "install again: up to date" "is up to date" \
	packaging/install.sh install "${kvers[@]}"
for k in "${kvers[@]}"; do
	check "install: /lib/modules/$k/updates/rcvfix.ko, modules.dep lists it" \
		grep -q '^updates/rcvfix.ko:' "/lib/modules/$k/modules.dep"
done
check_fails "install: make dkms-install refuses the same kernel" \
	"already installed for ${kvers[0]} by 'make install'" \
	packaging/install.sh dkms-install "${kvers[0]}"
guest "${kvers[0]}" 71
check "uninstall ${kvers[*]}" packaging/install.sh uninstall "${kvers[@]}"
check_says "uninstall again: nothing to do" "not installed for" \
	packaging/install.sh uninstall "${kvers[@]}"
nothing_left "uninstall"
check "install with DESTDIR stages files, no depmod" bash -c \
	"d=\$(mktemp -d) && DESTDIR=\$d packaging/install.sh install '${kvers[0]}' &&
	test -f \$d/lib/modules/'${kvers[0]}'/updates/rcvfix.ko &&
	test -x \$d/usr/local/sbin/rcvfixctl && test -f \$d/etc/modprobe.d/rcvfix.conf &&
	DESTDIR=\$d packaging/install.sh uninstall '${kvers[0]}' &&
	[[ -z \$(find \$d -type f) ]] && rm -rf \$d"

trap - EXIT
cleanup
if ((!mok_existed)) && [[ -e /var/lib/dkms/mok.key ]]; then
	fail "dkms signing key left in /var/lib/dkms"
fi
nothing_left "the end"
echo "# check-package done in $((SECONDS - start))s (log: $LOG)"
echo "$n_pass passed, $n_fail failed"
((n_fail == 0))
