#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In-guest runner, PID 1 of the harness guest (started by the initramfs, see
# vm/init.sh): mounts the kernel filesystems, then runs the test
# scripts (tests/guest/*.t), a shell or one command, and powers the guest off.
#
# Settings come from the file named by rcvfix_env= on the kernel command line,
# written by vm/vm.sh:
#   RCVFIX_MODE          test | shell | cmd
#   KVER                 the kernel the host meant to boot
#   RCVFIX_KO, RCVFIX_BIN, RCVFIX_KMOD   see lib.sh
#   RCVFIX_TESTS         optional subset: names or prefixes ("00 10-rule")
#   RCVFIX_TEST_TIMEOUT  seconds per test script; a script that needs more
#                        says so in its first lines: "# rcvfix-timeout: 900"
#   RCVFIX_TIMEOUT_SCALE how many times slower than an amd64 guest this one
#                        is (vm.sh already scaled RCVFIX_TEST_TIMEOUT; a
#                        script's own limit is scaled here)
#   RCVFIX_CMD           the command of cmd mode
#   RCVFIX_DEBUG_KERNEL  1 on a kernel built with the bug detectors
#                        (vm/debug-kernel.sh): panic_on_warn is off there
# Test mode writes TAP to /dev/ttyS1: "# running NAME" before each script,
# its result lines, other output as "# " comments, "1..N" and
# "# rcvfix-run: done" at the end.  The console (ttyS0) gets only kernel
# messages plus a "rcvfix-run: begin NAME" mark per script.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8 HOME=/tmp TMPDIR=/tmp
shopt -s nullglob

RCVFIX_REPO=${rcvfix_repo:?rcvfix_repo= missing on the kernel command line}
export RCVFIX_REPO

say() { echo "rcvfix-run: $*" > /dev/console; }

poweroff_now() {
	exec 3>&- 2> /dev/null	# closing the serial port drains it
	sync
	busybox poweroff -f 2> /dev/null
	echo o > /proc/sysrq-trigger
	sleep 60
}

mount_fs() {	# mount_fs TYPE DIR [OPTS]: mount unless already mounted
	mountpoint -q "$2" && return 0
	mount -t "$1" -o "${3:-defaults}" "$1" "$2" ||
		say "warning: cannot mount $1 on $2"
}

mount_all() {
	mount_fs proc /proc
	mount_fs sysfs /sys
	mount_fs devtmpfs /dev
	[[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
	[[ -e /dev/stdin ]] || ln -s /proc/self/fd/0 /dev/stdin
	[[ -e /dev/stdout ]] || ln -s /proc/self/fd/1 /dev/stdout
	[[ -e /dev/stderr ]] || ln -s /proc/self/fd/2 /dev/stderr
	mkdir -p /dev/pts /dev/shm
	mount_fs devpts /dev/pts gid=5,mode=620,ptmxmode=666
	mount_fs tmpfs /dev/shm mode=1777,nosuid,nodev
	mount_fs tmpfs /tmp mode=1777,nosuid,nodev
	mount_fs tmpfs /run mode=755,nosuid,nodev
	mount_fs debugfs /sys/kernel/debug
	mount_fs tracefs /sys/kernel/tracing
	mount_fs cgroup2 /sys/fs/cgroup nsdelegate
	mount_fs bpf /sys/fs/bpf mode=700
}

load_settings() {
	if [[ -z ${rcvfix_env:-} || ! -r $rcvfix_env ]]; then
		say "FAILED: settings file '${rcvfix_env:-}' not readable"
		poweroff_now
	fi
	# shellcheck disable=SC1090
	source "$rcvfix_env"
	export KVER RCVFIX_KO RCVFIX_BIN RCVFIX_KMOD RCVFIX_DEBUG_KERNEL RCVFIX_SECURE_BOOT RCVFIX_SB_KEYS
	export RCVFIX_PEER RCVFIX_LOAD_PARAMS RCVFIX_UPGRADE
	PATH=$RCVFIX_BIN:$PATH
	RCVFIX_MODE=${RCVFIX_MODE:-test}
	RCVFIX_TEST_TIMEOUT=${RCVFIX_TEST_TIMEOUT:-300}
	RCVFIX_TIMEOUT_SCALE=${RCVFIX_TIMEOUT_SCALE:-1}
	export RCVFIX_TIMEOUT_SCALE
}

# --- fresh state between test scripts ------------------------------------

declare -A sysctl_saved=()

sysctl_files() {
	local f
	for f in /proc/sys/net/core/* /proc/sys/net/ipv4/*; do
		[[ -f $f && -w $f && -r $f ]] && echo "$f"
	done
}

sysctl_save() {
	local f v
	while IFS= read -r f; do
		IFS= read -r v < "$f" 2> /dev/null && sysctl_saved[$f]=$v
	done < <(sysctl_files)
}

sysctl_restore() {
	local f v
	for f in "${!sysctl_saved[@]}"; do
		IFS= read -r v < "$f" 2> /dev/null || continue
		[[ $v == "${sysctl_saved[$f]}" ]] ||
			echo "${sysctl_saved[$f]}" > "$f" 2> /dev/null
	done
}

kill_strays() {	# every process but us and kernel threads
	local p pid cmd self=$BASHPID again=0
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		[[ $pid == 1 || $pid == "$self" ]] && continue
		# kernel threads have an empty command line
		cmd=
		IFS= read -r -d '' cmd < "$p/cmdline" 2> /dev/null
		[[ -n $cmd ]] || continue
		kill -KILL "$pid" 2> /dev/null && again=1
	done
	((again)) && sleep 0.2
	return 0
}

kmod_names() {	# modules built from tests/kmod for this kernel
	local k n
	for k in "$RCVFIX_KMOD"/*.ko; do
		n=${k##*/}
		n=${n%.ko}
		echo "${n//-/_}"
	done
}

# reset_state: no stray process, netns, rcvfix or test module; sysctls back.
# Prints the modules it had to unload (nothing after a well-behaved script).
reset_state() {
	local m
	kill_strays
	# Namespaces and strays are cleaned silently: lib.sh cannot always
	# track them. A module left loaded breaks the lib.sh contract.
	ip -all netns delete 2> /dev/null
	for m in rcvfix $(kmod_names); do
		if grep -q "^$m " /proc/modules; then
			echo "left module $m loaded"
			rmmod "$m" 2>&1 || echo "cannot unload $m"
		fi
	done
	sysctl_restore
}

# --- running one test script -------------------------------------------

seq_no=0

kernel_log_since() {	# kernel_log_since MARK: dmesg lines after MARK
	dmesg | awk -v m="$1" 'f; index($0, m) { f = 1 }'
}

n_results=0
tap() {	# tap LINE: one line on the results channel
	case $1 in
	ok|"ok "*|"not ok"|"not ok "*) n_results=$((n_results + 1)) ;;
	esac
	echo "$1" >&3
}

run_one() {	# run_one SCRIPT
	local t=$1 name out pid st line n_res=0 n_fail=0 mark bad left
	local start=$SECONDS limit=$RCVFIX_TEST_TIMEOUT own
	name=$(basename "$t" .t)
	own=$(head -n 20 "$t" |
		sed -n 's/^# rcvfix-timeout: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
	[[ -z $own ]] || own=$((own * RCVFIX_TIMEOUT_SCALE))
	[[ -z $own ]] || ((own <= limit)) || limit=$own
	seq_no=$((seq_no + 1))
	mark="rcvfix-run: begin $name #$seq_no"
	tap "# running $name"
	echo "<4>$mark" > /dev/kmsg

	out=/tmp/rcvfix-run.$seq_no.out
	(cd "$RCVFIX_REPO" && exec timeout -k 10 "$limit" \
		bash "$t" < /dev/null > "$out" 2>&1) &
	pid=$!
	# Follow the output until the script (not its strays) ends.
	while IFS= read -r line; do
		case $line in
		"not ok"|"not ok "*)
			n_res=$((n_res + 1)); n_fail=$((n_fail + 1)); tap "$line" ;;
		ok|"ok "*)
			n_res=$((n_res + 1)); tap "$line" ;;
		"#"*)	tap "$line" ;;
		*)	tap "# $line" ;;
		esac
	done < <(tail -s 0.2 -n +1 -F --pid="$pid" "$out" 2> /dev/null)
	wait "$pid"
	st=$?

	case $st in
	0)	((n_res > 0)) || tap "not ok - $name: printed no result" ;;
	77)	((n_res > 0)) || tap "ok - $name # SKIP (exit 77)" ;;
	124|137)
		tap "not ok - $name: timed out after ${limit}s" ;;
	*)	((n_fail > 0)) || tap "not ok - $name: exited with status $st" ;;
	esac
	rm -f "$out"

	left=$(reset_state)
	if [[ -n $left ]]; then
		tap "not ok - $name: left a module loaded"
		while IFS= read -r line; do tap "#   $line"; done <<< "$left"
	fi

	bad=$(kernel_log_since "$mark" | grep -E "$RCVFIX_BAD_LOG_RE" |
		grep -vE "$RCVFIX_BENIGN_LOG_RE")
	if [[ -n $bad ]]; then
		tap "not ok - $name: kernel log: $(head -n 1 <<< "$bad")"
		kernel_log_since "$mark" | grep -m 1 -E -B 5 -A 30 \
			"$RCVFIX_BAD_LOG_RE" | while IFS= read -r line; do
			echo "#   $line" >&3
		done
	fi
	tap "# time $name $((SECONDS - start))s"
}

selected() {	# selected NAME: is NAME in RCVFIX_TESTS (or is that empty)?
	local want
	[[ -z ${RCVFIX_TESTS:-} ]] && return 0
	for want in $RCVFIX_TESTS; do
		want=${want%.t}
		[[ $1 == "$want" || $1 == "$want"-* ]] && return 0
	done
	return 1
}

run_tests() {
	local t name scripts=() n
	stty -F /dev/ttyS1 raw -echo 2> /dev/null
	exec 3> /dev/ttyS1
	for t in "$RCVFIX_REPO"/tests/guest/*.t; do
		name=$(basename "$t" .t)
		selected "$name" && scripts+=("$t")
	done
	tap "# rcvfix guest runner on $(uname -r): ${#scripts[@]} scripts"
	if ((${#scripts[@]} == 0)); then
		tap "not ok - no test script matches RCVFIX_TESTS='${RCVFIX_TESTS:-}'"
	fi
	ip link set lo up
	sysctl_save
	reset_state > /dev/null
	for t in "${scripts[@]}"; do
		run_one "$t"
	done
	# What the suite made the kernel load: the list a trimmed kernel
	# configuration keeps (vm/debug-kernel.sh, vm/debug-modules-6.1.txt).
	tap "# rcvfix-run: modules $(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')"
	tap "1..$n_results"
	tap "# rcvfix-run: done"
	say "done"
}

run_cmd() {
	local st
	stty -F /dev/ttyS1 raw -echo 2> /dev/null
	exec 3> /dev/ttyS1
	ip link set lo up
	(cd "$RCVFIX_REPO" && exec bash -c "$RCVFIX_CMD") < /dev/null >&3 2>&1
	st=$?
	say "command exit status $st"
}

run_shell() {
	local tty=/dev/ttyS0
	ip link set lo up
	stty -F $tty sane
	[[ ${RCVFIX_TTY_SIZE:-0 0} == "0 0" ]] ||
		stty -F $tty rows "${RCVFIX_TTY_SIZE% *}" cols "${RCVFIX_TTY_SIZE#* }"
	export TERM=${RCVFIX_TERM:-vt100}
	export PS1="rcvfix-guest($KVER):\w# "
	cat > $tty <<-EOF

	rcvfix guest: kernel $(uname -r), host / read-only, /tmp and /run tmpfs.
	  insmod \$RCVFIX_KO   loads $RCVFIX_KO
	  built programs are on PATH ($RCVFIX_BIN); dmesg -n 7 shows all kernel messages
	  exit (or Ctrl-D) powers the guest off; Ctrl-A x kills QEMU.
	EOF
	cd "$RCVFIX_REPO" && setsid -c bash --norc -i < $tty > $tty 2>&1
}

main() {
	mount_all
	load_settings
	# shellcheck source=../../vm/kernel-log.sh
	source "$RCVFIX_REPO/vm/kernel-log.sh"
	say "mode $RCVFIX_MODE, kernel $(uname -r)"
	case $RCVFIX_MODE in
	test)	run_tests ;;
	cmd)	run_cmd ;;
	shell)	run_shell ;;
	*)	say "FAILED: unknown RCVFIX_MODE '$RCVFIX_MODE'" ;;
	esac
	poweroff_now
}

main "$@"
