#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's own kernel source built with the kernel's bug detectors (KASAN,
# lockdep with PROVE_LOCKING and PROVE_RCU, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS,
# KFENCE, DEBUG_LIST), for `make check-debug`. The base is Debian's amd64
# configuration of the same release (linux-config-LINE), trimmed to the
# modules the test suite loads (vm/debug-modules-LINE.txt, localmodconfig) so
# that two cores build it in well under an hour. Cached: rebuilt only when the
# source package, the base configuration, the module list or this script's
# configuration changes. Everything lives in build/debug-LINE/:
#   src/      the unpacked source          out/   the objects (O=)
#   root/     modules_install              stamp  what the cache was built from
# and build/KVER/kernel.env tells vm.sh and kbuild.sh where the image, the
# modules and the build tree are, how much slower the guest runs, and the
# extra command line (panic_on_warn=0: every report is counted, none ends the
# run; an oops still does).
#
# Usage: debug-kernel.sh prepare [LINE]   build (or reuse) it; prints the KVER
#        debug-kernel.sh kver [LINE]      the KVER it builds (no build)
#        debug-kernel.sh deps [LINE]      the Debian packages the build needs
# LINE: 6.1 (the default) or 6.12 (linux-source-6.12, bookworm's 6.12);
# with RCVFIX_KERNEL_PATCHES also 7.3 (linux-source-7.3 and linux-config-7.3
# of the newest line's Debian 13 chroot, vm/chroot-kernel.sh).
# Environment: RCVFIX_DEBUG_JOBS (make -j; default: the host's CPUs).
#   RCVFIX_KERNEL_PATCHES=DIR: the same build of Debian's source with
#   DIR/*.patch applied (patch -p1, in order) and without the detectors, in
#   build/upstream-LINE/, release suffix -rcvfix-upstream: a kernel with a
#   fix we send upstream (mk/upstream.mk, upstream/NAME/LINE/). A series
#   sent on top of another names it in DIR/BASE (NAME/LINE, under the same
#   upstream/): that one is applied first, and its own BASE before it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

usage() { die "usage: debug-kernel.sh prepare|kver|deps [6.1|6.12]"; }
[[ $# -ge 1 && $# -le 2 ]] || usage
cmd=$1 line=${2:-6.1}
patches=${RCVFIX_KERNEL_PATCHES:-}
case $line in
6.1 | 6.12) ;;
7.3) [[ -n $patches ]] ||
	die "7.3 is built only with RCVFIX_KERNEL_PATCHES (the debug lines are 6.1 and 6.12)" ;;
*) die "no debug kernel line '$line': 6.1 and 6.12 are the ones built and tested" ;;
esac
case $cmd in
prepare | kver | deps) ;;
*) usage ;;
esac

# The kernel release it builds: the source's version and our own suffix.
localversion=-rcvfix-debug
srcroot=
src_tar=/usr/src/linux-source-$line.tar.xz
base_config=/usr/src/linux-config-$line/config.amd64_none_amd64.xz
modlist=$HARNESS/debug-modules-$line.txt
top=$RCVFIX_BUILD/debug-$line
pkgs=(linux-source-"$line" linux-config-"$line" bc bison flex libelf-dev
	libssl-dev dwarves kmod cpio xz-utils gcc make rsync)
if [[ $line == 7.3 ]]; then
	# Debian 13's source and configuration, from the newest line's
	# chroot (installed there by prepare); 6.12's module list.
	srcroot=$RCVFIX_BUILD/newest/chroot
	src_tar=$srcroot/usr/src/linux-source-$line.tar.xz
	base_config=$srcroot/usr/src/linux-config-$line/config.amd64_none_amd64.xz
	modlist=$HARNESS/debug-modules-6.12.txt
	pkgs=("${pkgs[@]:2}")
fi

# series[]: the series in $patches and those it is sent on top of (each
# DIR/BASE names one: vm/upstream.sh walks them), the first to apply first.
series=()
if [[ -n $patches ]]; then
	patches=$(realpath "$patches")
	chain=$("$HARNESS/upstream.sh" chain-of "$patches") ||
		die "$patches: its BASE files do not lead to series of line $line"
	mapfile -t series <<< "$chain"
	for dir in "${series[@]}"; do
		[[ $(basename "$dir") == "$line" ]] ||
			die "$dir is not a series of line $line (upstream/NAME/$line)"
	done
	localversion=-rcvfix-upstream
	top=$RCVFIX_BUILD/upstream-$line
fi

# src_id: what the unpacked source is: the package's version, and the
# patches applied to it.
src_id() {
	local dir
	pkg_version "linux-source-$line"
	for dir in "${series[@]}"; do
		echo "${dir#"$RCVFIX_REPO"/}"
		cat "$dir"/*.patch | sha256sum | cut -d' ' -f1
	done
}

# pkg_version PKG: its installed version, on the host or in the chroot.
pkg_version() {
	dpkg-query ${srcroot:+--admindir="$srcroot/var/lib/dpkg"} -W \
		-f='${Version}' "$1"
}

if [[ $cmd == deps ]]; then
	echo "${pkgs[*]}"
	exit 0
fi

# The detectors (y), and what they must not take away (the hooks' ftrace
# with IPMODIFY, livepatch, kprobes, BPF with BTF, MPTCP: kept as Debian
# has them, checked after olddefconfig).
detectors=(KASAN KASAN_GENERIC KASAN_INLINE PROVE_LOCKING PROVE_RCU
	DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS DEBUG_OBJECTS_WORK DEBUG_OBJECTS_TIMERS
	DEBUG_OBJECTS_RCU_HEAD DEBUG_OBJECTS_FREE KFENCE DEBUG_LIST
	DEBUG_SG DEBUG_NOTIFIERS DEBUG_PREEMPT LOCKDEP DEBUG_SPINLOCK
	DEBUG_MUTEXES)
[[ -z $patches ]] || detectors=()
required=(FTRACE DYNAMIC_FTRACE_WITH_REGS LIVEPATCH KPROBES BPF_SYSCALL
	DEBUG_INFO_BTF MPTCP MODULES)
# KFENCE's pool: Debian's 255 objects were all taken by long-lived
# allocations before the first test (6.1, sampling every 10 ms: 255 in use,
# thousands of samples skipped for capacity after 130 s), which blinds
# KFENCE for the rest of the run. 4095 objects take 32 MiB of the guest's 2.
kfence_objects=4095

# configure OUT: Debian's configuration, the suite's modules only, the
# detectors on, our release suffix, and no Debian signing keys.
configure() {
	local out=$1 o enable=()
	xz -dc "$base_config" > "$out/.config"
	make -s -C "$top/src" O="$out" olddefconfig
	make -s -C "$top/src" O="$out" LSMOD="$modlist" localmodconfig \
		< /dev/null > "$out/localmodconfig.log" 2>&1 ||
		{ cat "$out/localmodconfig.log" >&2; die "localmodconfig failed"; }
	for o in "${detectors[@]}"; do enable+=(--enable "$o"); done
	"$top/src/scripts/config" --file "$out/.config" \
		--set-str LOCALVERSION "$localversion" \
		--disable LOCALVERSION_AUTO \
		--set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS "" \
		--set-str BUILD_SALT "rcvfix${localversion}" \
		--disable DEBUG_INFO_COMPRESSED "${enable[@]}"
	[[ -n $patches ]] ||
		"$top/src/scripts/config" --file "$out/.config" \
			--set-val KFENCE_NUM_OBJECTS "$kfence_objects"
	make -s -C "$top/src" O="$out" olddefconfig
	for o in "${detectors[@]}" "${required[@]}"; do
		grep -q "^CONFIG_$o=y" "$out/.config" ||
			die "CONFIG_$o is not y after olddefconfig in $out/.config"
	done
	[[ -n $patches ]] ||
		grep -q "^CONFIG_KFENCE_NUM_OBJECTS=$kfence_objects\$" "$out/.config" ||
		die "CONFIG_KFENCE_NUM_OBJECTS is not $kfence_objects in $out/.config"
}

# The cache key: the source and base packages, the module list and the
# configuration this script makes.
cache_key() {
	{
		src_id
		echo "linux-config-$line $(pkg_version "linux-config-$line")"
		sha256sum "$modlist" | cut -d' ' -f1
		declare -f configure
		echo "${detectors[*]} ${required[*]} $localversion $kfence_objects"
	} | sha256sum | cut -d' ' -f1
}

kernel_release() {	# linux-source-6.1 6.1.192-3 builds 6.1.192-rcvfix-debug
	local v
	v=$(pkg_version "linux-source-$line" 2> /dev/null) ||
		die "linux-source-$line is not installed (make deps-debug)"
	echo "${v%%-*}$localversion"
}

unpack() {
	[[ -f $src_tar ]] ||
		die "$src_tar missing: install linux-source-$line (make deps-debug)"
	[[ -f $base_config ]] ||
		die "$base_config missing: install linux-config-$line (make deps-debug)"
	[[ -f $modlist ]] || die "$modlist missing"
	rm -rf "$top/src.new"
	mkdir -p "$top/src.new"
	msg "debug kernel $line: unpacking $src_tar"
	tar -xJf "$src_tar" -C "$top/src.new" --strip-components=1
	if [[ -n $patches ]]; then
		local dir p
		for dir in "${series[@]}"; do
			for p in "$dir"/[0-9]*.patch; do
				[[ $(basename "$p") == 0000-* ]] && continue
				msg "kernel $line: applying ${p#"$RCVFIX_REPO"/}"
				patch -d "$top/src.new" -p1 --quiet --forward < "$p" ||
					die "$p does not apply to $src_tar"
			done
		done
	fi
	if [[ -f $top/src/Makefile ]]; then
		# Into the tree built before, copying only the files that
		# differ (new times on those alone): make rebuilds what the
		# new source or patches change, not the whole kernel.
		rsync -rlc --delete "$top/src.new/" "$top/src/"
		rm -rf "$top/src.new"
	else
		rm -rf "$top/src" "$top/out"
		mv "$top/src.new" "$top/src"
	fi
}

# build: make the image and modules, printing progress once a minute.
build() {
	local out=$1 jobs=${RCVFIX_DEBUG_JOBS:-$(nproc)} log=$top/build.log
	local start=$SECONDS pid n
	msg "debug kernel $line: building with -j$jobs (log: $log)"
	make -C "$top/src" O="$out" -j"$jobs" bzImage modules > "$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		sleep 60 &
		wait $! || true
		kill -0 "$pid" 2> /dev/null || break
		n=$(grep -c '^  CC ' "$log" || true)
		msg "debug kernel $line: $(((SECONDS - start) / 60)) min, $n files compiled, now: $(tail -n 1 "$log" | cut -c1-60)"
	done
	if ! wait "$pid"; then
		tail -n 30 "$log" >&2
		die "the debug kernel build failed: $log"
	fi
	msg "debug kernel $line: built in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
}

write_kernel_env() {	# write_kernel_env KVER
	local k=$1 real dir applied=
	for dir in "${series[@]}"; do
		applied+="${applied:+ then }${dir#"$RCVFIX_REPO"/}/*.patch"
	done
	mkdir -p "$RCVFIX_BUILD/$k"
	# The guest mounts the host's / under its own root, where an absolute
	# link (build/debug-LINE on another disk) leads nowhere: real paths.
	real=$(realpath "$top")
	# Measured: the suite ran about 4 times slower than on Debian's 6.1
	# (KASAN's checks and lockdep under TCG).
	# no5lvl: with 5-level paging (QEMU's -cpu max has LA57) a timer
	# interrupt in the window where identify_cpu() has zeroed the boot
	# CPU's feature bits sees pgtable_l5_enabled() false, so KASAN takes
	# every direct-map address for a wild one and reports in a loop
	# that never lets boot go on (seen on a loaded host; docs/kernels.md).
	# With patches, no detectors: Debian's speed and memory, 7.x
	# single-threaded TCG as for its packaged kernel (docs/kernels.md).
	local detected=()
	[[ -n $patches ]] || detected=(RCVFIX_TIMEOUT_SCALE 4
		RCVFIX_GUEST_MEM 2048
		RCVFIX_KERNEL_APPEND "panic_on_warn=0 kasan_multi_shot kfence.sample_interval=10 no5lvl"
		RCVFIX_DEBUG_KERNEL 1)
	printf '%s=%q\n' RCVFIX_VMLINUZ "$real/out/arch/x86/boot/bzImage" \
		RCVFIX_MODDIR "$real/root/lib/modules/$k" \
		RCVFIX_KDIR "$real/out" \
		"${detected[@]}" > "$RCVFIX_BUILD/$k/kernel.env"
	# bpftrace finds the kernel's headers through the modules' source
	# link, which modules_install no longer makes on 6.12 (only build).
	[[ -e $real/root/lib/modules/$k/source ]] ||
		ln -s "$real/src" "$real/root/lib/modules/$k/source"
	echo "built from linux-source-$line $(pkg_version "linux-source-$line")" \
		"${applied:+with $applied applied, }${detectors[*]:+with the bug detectors, }in ${top#"$RCVFIX_BUILD"/}" \
		> "$RCVFIX_BUILD/$k/origin"
}

prepare() {
	local key kver
	mkdir -p "$top"
	exec 7> "$top/.lock"
	if ! flock -n 7; then
		msg "waiting for another build of the $line debug kernel"
		flock 7
	fi
	if [[ -n $srcroot ]]; then
		# Debian 13's source and configuration, in the newest chroot.
		"$HARNESS/chroot-kernel.sh" tool newest "linux-source-$line" true
		"$HARNESS/chroot-kernel.sh" tool newest "linux-config-$line" true
	fi
	key=$(cache_key)
	if [[ -f $top/stamp && $(< "$top/stamp") == "$key" &&
		-f $top/out/arch/x86/boot/bzImage ]]; then
		kver=$(< "$top/kver")
		write_kernel_env "$kver"
		msg "debug kernel $line: $kver, cached in $top"
		echo "$kver"
		return
	fi
	rm -f "$top/stamp"
	# A new source package unpacks again; a new configuration rebuilds
	# only what it changes.
	if [[ ! -f $top/src/Makefile || ! -f $top/src.pkg ||
		$(< "$top/src.pkg") != "$(src_id)" ]]; then
		unpack
		src_id > "$top/src.pkg"
	fi
	mkdir -p "$top/out"
	configure "$top/out"
	kver=$(kernel_release)
	# A guest of this kernel (vm.sh holds this lock shared) reads its
	# modules from root/, which modules_install replaces.
	mkdir -p "$RCVFIX_BUILD/$kver"
	exec 6> "$RCVFIX_BUILD/$kver/.lock"
	if ! flock -n 6; then
		msg "waiting for the guests of $kver to end before rebuilding it"
		flock 6
	fi
	build "$top/out"
	[[ $(cat "$top/out/include/config/kernel.release") == "$kver" ]] ||
		die "built $(cat "$top/out/include/config/kernel.release"), expected $kver"
	rm -rf "$top/root"
	make -s -C "$top/src" O="$top/out" INSTALL_MOD_PATH="$top/root" \
		INSTALL_MOD_STRIP=1 modules_install > "$top/install.log" 2>&1 ||
		{ tail -n 20 "$top/install.log" >&2; die "modules_install failed"; }
	echo "$kver" > "$top/kver"
	echo "$key" > "$top/stamp"
	write_kernel_env "$kver"
	msg "debug kernel $line: $kver ready in $top"
	echo "$kver"
}

case $cmd in
kver) kernel_release ;;
prepare) prepare ;;
esac
