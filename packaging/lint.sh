#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The code-hygiene gates behind `make lint` (run by `make check`): version
# consistency, checkpatch.pl --strict from linux-source-6.1, sparse (C=2) and
# W=1 builds of module/ and tests/kmod/ against each kernel's headers, and
# clang-format with the kernel's style on tools/, and file sizes. Every
# problem is printed as FILE:LINE: ...; exit status 1 if there is any.
#
# Usage: lint.sh [STEP...]   steps: version checkpatch sparse format size (all)
# Environment: LINT_KVERS  kernels for the sparse/W=1 step (default: every
#              kernel with headers under /lib/modules that rcvfix supports)
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

cd "$RCVFIX_REPO" || exit 2
LINT=$RCVFIX_BUILD/lint
KSRC_TAR=/usr/src/linux-source-6.1.tar.xz
KSRC=$LINT/linux-source-6.1	# the few files lint needs from it

failed=()
problem() { echo "$*"; n_problems=$((n_problems + 1)); }

# --- version: module/version.h is the one source of truth ----------------
# The tools and the packages' file names take it from there at build time;
# the copies that must stay literal are checked here: dkms.conf (dh_dkms
# and vm/chroot-kernel.sh read PACKAGE_VERSION as text, not by
# running the file), debian/changelog (dpkg's own format), NEWS.md's top
# entry, the releases (packaging/releases) and the package names in the
# README.
# deploy/kubernetes is checked by tests/unit/k8s_manifests_test.py.

lint_version() {
	local v line val f
	v=$(rcvfix_version) || return
	grep -q 'MODULE_VERSION(RCVFIX_VERSION)' module/*.c ||
		problem "module/main.c:1: no MODULE_VERSION(RCVFIX_VERSION): modinfo would not show $v"

	line=$(grep -n '^PACKAGE_VERSION=' dkms.conf | head -n 1)
	val=$(dkms_conf_get PACKAGE_VERSION)
	[[ $val == "$v" ]] ||
		problem "dkms.conf:${line%%:*}: PACKAGE_VERSION=\"$val\", module/version.h says \"$v\""

	# debian/changelog: first entry "rcvfix (VERSION[-REV]) ...".
	val=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
	val=${val#*:}
	val=${val%-*}
	[[ $val == "$v" ]] ||
		problem "debian/changelog:1: version \"$val\", module/version.h says \"$v\" (add a changelog entry)"

	lint_releases "$v"

	# The package names the README tells users to install.
	while IFS=: read -r line val; do
		[[ $val == "$v" ]] ||
			problem "README.md:$line: rcvfix-*_${val}_*.deb, module/version.h says \"$v\""
	done < <(grep -noE 'rcvfix-(dkms|tools)_[^_]+_' README.md |
		sed -E 's/^([0-9]+):rcvfix-[a-z]+_([^_]+)_$/\1:\2/')

	# The tools' fallback version, if they keep one.
	f=tools/Makefile
	if line=$(grep -nE '^VERSION[[:space:]]*[:?]?=[[:space:]]*[0-9]' "$f" 2> /dev/null); then
		val=$(sed -E 's/^[0-9]+:VERSION[[:space:]]*[:?]?=[[:space:]]*//' <<< "$line")
		[[ $val == "$v" ]] ||
			problem "$f:${line%%:*}: VERSION $val, module/version.h says \"$v\""
	fi
}

# lint_releases VERSION: NEWS.md's top entry is VERSION; every release of
# packaging/releases is well formed, in order and in NEWS.md with its
# commit; VERSION is above the last release (dpkg's order), or equal to it
# with NEWS.md's top entry for it and what it shipped unchanged since its
# commit (this tree is that release): a change made after a release without
# raising the version is caught here.
lint_releases() {
	local v=$1 top line n=0 rv rc prev="" last="" last_commit=""
	top=$(news_top)
	line=$(grep -n -m 1 '^## ' NEWS.md 2> /dev/null)
	[[ $top == "$v" ]] ||
		problem "NEWS.md:${line%%:*}: top entry \"${top:-none}\", module/version.h says \"$v\" (add an entry)"
	while IFS= read -r line; do
		n=$((n + 1))
		line=${line%%#*}
		[[ $line =~ [^[:space:]] ]] || continue
		if ! [[ $line =~ ^([^[:space:]]+)[[:space:]]+([0-9a-f]{40})[[:space:]]*$ ]]; then
			problem "packaging/releases:$n: not \"VERSION COMMIT\" (a full hash): $line"
			continue
		fi
		rv=${BASH_REMATCH[1]} rc=${BASH_REMATCH[2]}
		[[ -z $prev ]] || dpkg --compare-versions "$rv" gt "$prev" ||
			problem "packaging/releases:$n: $rv is not above $prev (oldest first)"
		prev=$rv last=$rv last_commit=$rc
		awk -v v="$rv" -v c="$rc" '
			/^## / { in_v = ($2 == v) }
			in_v && index($0, c) { found = 1 }
			END { exit !found }' NEWS.md ||
			problem "NEWS.md:1: no entry \"## $rv\" naming its commit $rc (packaging/releases:$n)"
		if git rev-parse --git-dir > /dev/null 2>&1 &&
			! git cat-file -e "$rc^{commit}" 2> /dev/null; then
			problem "packaging/releases:$n: $rc is no commit of this repository"
		fi
	done < packaging/releases
	[[ -n $last ]] || { problem "packaging/releases:1: no release recorded"; return; }
	if dpkg --compare-versions "$v" lt "$last"; then
		problem "module/version.h:1: version $v is below the last release $last (packaging/releases)"
	elif dpkg --compare-versions "$v" eq "$last"; then
		[[ $top == "$last" ]] ||
			problem "module/version.h:1: version $v is the released $last: raise it for a change, with a NEWS.md entry"
		release_tree_unchanged "$last_commit" ||
			problem "module/version.h:1: version $v is the released $last, but module/, tools/ or the packaging changed since its commit ${last_commit:0:12}: raise the version, with a NEWS.md entry"
	fi
}

# --- checkpatch.pl --strict from the target kernel's source package -------

ksrc_extract() {
	local files=(scripts/checkpatch.pl scripts/spelling.txt
		scripts/const_structs.checkpatch .clang-format)
	[[ -f $KSRC/.stamp && $KSRC/.stamp -nt $KSRC_TAR ]] && return 0
	if [[ ! -r $KSRC_TAR ]]; then
		problem "$KSRC_TAR: missing: install linux-source-6.1 (make deps-lint)"
		return 1
	fi
	rm -rf "$KSRC"
	mkdir -p "$KSRC"
	tar -xJf "$KSRC_TAR" -C "$KSRC" --strip-components=1 \
		"${files[@]/#/linux-source-6.1/}" ||
		{ problem "$KSRC_TAR: cannot extract ${files[*]}"; return 1; }
	touch "$KSRC/.stamp"
}

lint_checkpatch() {
	local files=() f
	ksrc_extract || return
	for f in module/*.[ch] tests/kmod/*.[ch]; do
		[[ -f $f && $f != *.mod.c && $f != module/trace.h ]] &&
			files+=("$f")
	done
	checkpatch_run "" "${files[@]}"
	# module/trace.h keeps the layout of the kernel's own TRACE_EVENT()
	# headers (include/trace/events/*.h), which --strict flags with these
	# two checks on every event (7 and 8 times in events/sock.h of 6.1).
	checkpatch_run PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE module/trace.h
	echo "checked $((${#files[@]} + 1)) files"
}

# checkpatch_run IGNORE FILE...: checkpatch --strict, ignoring the IGNORE
# types (comma-separated, may be empty); every finding is a problem.
checkpatch_run() {
	local ignore=$1 out line
	shift
	out=$(perl "$KSRC/scripts/checkpatch.pl" --no-tree --strict --terse \
		--show-types --color=never ${ignore:+--ignore "$ignore"} \
		-f "$@" 2>&1)
	local st=$?
	while IFS= read -r line; do
		case $line in
		"" | "total: "*) ;;
		*) problem "$line" ;;
		esac
	done <<< "$out"
	((st == 0)) || ((n_problems)) ||
		problem "checkpatch.pl exited with status $st: $out"
}

# --- sparse (C=2) and W=1 against each kernel's headers -------------------

lint_kvers() {
	local k
	if [[ -n ${LINT_KVERS:-} ]]; then
		echo "$LINT_KVERS"
		return
	fi
	for k in $(kernels_with_headers); do
		kver_unsupported "$k" > /dev/null || echo "$k"
	done
}

# On PREEMPT_RT, rt_spin_unlock() carries no __releases(): the fast branch
# of unlock_sock_fast() (inline, spin_unlock_bh()) releases nothing sparse
# can see while its slow branch says __release(), so every function that
# calls it is reported as unbalanced on -rt headers only. Ours, by name:
rt_unlock_sock_fast="^module/mptcp\\.c:[0-9:]+ warning: context imbalance in 'rcvfix_mptcp_sync_rcvbuf' - different lock contexts for basic block\$"

# sparse_one KVER FOLDER: build a fresh copy of FOLDER (module/, tests/kmod/)
# in build/lint/KVER/ with C=2 W=1; every warning or error is a problem.
# The copies sit side by side (module, kmod), as in build/KVER/: the test
# modules' Kbuild includes ../module/Kbuild.
sparse_one() {
	local kver=$1 folder=$2 dir out line src n0 st known=0
	dir=$LINT/$kver/${folder##*/}
	rm -rf "$dir"
	mkdir -p "$dir"
	for src in "$folder"/Kbuild "$folder"/Makefile "$folder"/*.[ch]; do
		[[ -f $src && $src != *.mod.c ]] && cp -p "$src" "$dir/"
	done
	out=$(make -s -j"$(nproc)" -C "/lib/modules/$kver/build" M="$dir" C=2 W=1 \
		modules 2>&1)
	st=$?
	out=$(grep -v '^Skipping BTF generation for ' <<< "$out" |
		sed "s|$dir/|$folder/|g")
	n0=$n_problems
	if [[ -n $out ]]; then
		echo "-- $folder/ on $kver:"
		while IFS= read -r line; do
			if [[ $kver == *-rt-* && $line =~ $rt_unlock_sock_fast ]]; then
				echo "    $line (PREEMPT_RT's annotations, not ours: see lint.sh)"
				known=1
			elif [[ $line =~ ^[^\ ]+:[0-9]+(:[0-9]+)?:\ (warning|error): ]]; then
				problem "$line"
			else
				echo "    $line"
			fi
		done <<< "$out"
		((n_problems > n0 || known)) ||
			problem "$folder/: unexpected output building for $kver (above)"
	fi
	((st == 0)) || problem "$folder/: build failed for $kver (status $st)"
}

lint_sparse() {
	local kver kvers why folder folders=() built=()
	command -v sparse > /dev/null ||
		{ problem "sparse: not installed: apt-get install sparse (make deps-lint)"; return; }
	kvers=$(lint_kvers)
	[[ -n $kvers ]] ||
		{ problem "no kernel headers to build against: install linux-headers-<kernel> (make deps)"; return; }
	for folder in module tests/kmod; do
		[[ -f $folder/Kbuild ]] && folders+=("$folder")
	done
	for kver in $kvers; do
		if why=$(kver_unsupported "$kver"); then
			problem "$kver: $why"
			continue
		fi
		for folder in "${folders[@]}"; do
			sparse_one "$kver" "$folder"
		done
		built+=("$kver")
	done
	echo "built ${folders[*]} with C=2 W=1 for: ${built[*]}"
}

# --- clang-format with the kernel's .clang-format on tools/ and tools/lib/ ---

lint_format() {
	local files=() f out n
	command -v clang-format > /dev/null ||
		{ problem "clang-format: not installed: apt-get install clang-format (make deps-lint)"; return; }
	ksrc_extract || return
	if ! cmp -s "$KSRC/.clang-format" tools/.clang-format; then
		problem "tools/.clang-format:1: differs from the kernel's (linux-source-6.1/.clang-format): cp $KSRC/.clang-format tools/"
	fi
	for f in tools/*.[ch] tools/lib/*.[ch]; do
		[[ -f $f ]] && files+=("$f")
	done
	((${#files[@]})) || { echo "no files in tools/"; return; }
	for f in "${files[@]}"; do
		out=$(clang-format --dry-run --Werror \
			--style="file:$KSRC/.clang-format" "$f" 2>&1) && continue
		n=$(grep -c ': error: ' <<< "$out")
		problem "$(grep -m 1 ': error: ' <<< "$out") ($n places; fix with: clang-format -i --style=file:tools/.clang-format $f)"
		grep -A 2 ': error: ' <<< "$out" | head -n 30 | sed 's/^/    /'
	done
	echo "checked ${#files[@]} files"
}

# --- size: files small enough to read ------------------------------------------
# Every tracked text file outside tests/ stays at 700 lines or fewer: past
# that a file holds more than one concern. Recorded run data
# (bench/results/, docs/results/) is output, not text to read whole; the
# kernel series in upstream/ are git format-patch output (a selftest
# patch is a test, as tests/ is).

SIZE_MAX=700

lint_size() {
	local f n checked=0
	# git grep -I -c '': each tracked text file and its line count.
	while IFS=: read -r f n; do
		checked=$((checked + 1))
		((n <= SIZE_MAX)) ||
			problem "$f:$n: $n lines, more than $SIZE_MAX: split it by concern"
	done < <(git grep -I -c '' -- . ':!tests' ':!bench/results' ':!docs/results' \
		':!upstream/*.patch')
	echo "checked $checked files"
}

# --- driver -------------------------------------------------------------------

steps=("$@")
((${#steps[@]})) || steps=(version checkpatch sparse format size)
start=$SECONDS
for step in "${steps[@]}"; do
	case $step in
	version | checkpatch | sparse | format | size) ;;
	*) die "unknown lint step '$step' (version checkpatch sparse format size)" ;;
	esac
	n_problems=0
	t0=$EPOCHREALTIME
	echo "== lint: $step"
	"lint_$step"
	t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	if ((n_problems)); then
		echo "lint: $step: FAILED, $n_problems problems (${t}s)"
		failed+=("$step")
	else
		echo "lint: $step: clean (${t}s)"
	fi
done
if ((${#failed[@]})); then
	echo "lint: FAILED: ${failed[*]} ($((SECONDS - start))s)"
	exit 1
fi
echo "lint: all clean ($((SECONDS - start))s)"
