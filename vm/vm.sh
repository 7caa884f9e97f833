#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boots one Debian kernel under QEMU (host / shared read-only over 9p, or over
# virtiofs for a kernel without 9p, such as Debian's cloud flavour) and runs
# tests/guest/run.sh in it: the test suite, an interactive shell or one
# command. Enforces the guest timeout and fails the run on bad kernel-log
# lines (kernel-log.sh) on the console, naming the test that was running.
#
# Usage: vm.sh test  KVER           suite; TAP + console in build/KVER/logs/
#        vm.sh shell KVER           interactive shell on this terminal
#        vm.sh cmd   KVER COMMAND   run COMMAND in the guest, print its output
# Environment:
#   RCVFIX_TESTS          subset of tests/guest/*.t, names or prefixes
#   RCVFIX_TEST_TIMEOUT   seconds per test script in the guest (300)
#   RCVFIX_GUEST_TIMEOUT  seconds for the whole guest run (3600: the 5.10
#                         suite took 1800 s on a loaded 2-core machine)
#   RCVFIX_BOOT_TIMEOUT   seconds from boot to the test runner's first line
#                         (300; a kernel stuck in boot fails then, not at
#                         the whole run's limit)
#   All are for a guest of the amd64 guests' speed: kernel.env's
#   RCVFIX_TIMEOUT_SCALE multiplies them, and the scripts' own limits.
#   RCVFIX_KVM=1          use -accel kvm instead of TCG
#   RCVFIX_VERBOSE=1      print every TAP comment, not only after failures
#   RCVFIX_APPEND         extra kernel command line
#   RCVFIX_QEMU_OPTS      extra QEMU options (word-split)
#   RCVFIX_ROOT_FS        9p or virtiofs (default: 9p if the kernel has it)
#   RCVFIX_UPGRADE        settings of test 77-upgrade (the packages of the
#                         last release and of this tree: check-upgrade.sh)
# A kernel of another architecture (vm/arm64.sh) sets in build/KVER/kernel.env:
#   RCVFIX_QEMU_BIN       the QEMU system emulator (qemu-system-x86_64)
#   RCVFIX_QEMU_MACHINE   machine options (word-split; none)
#   RCVFIX_CONSOLE        the guest's console device (ttyS0)
#   RCVFIX_RESULTS_DEV    the results channel: serial (the second UART) or
#                         virtconsole (hvc0, for boards with one UART)
#   RCVFIX_GUEST_ROOT     the folder shared as the guest's / (the host's /)
#   RCVFIX_GUEST_BIN      test programs built for the guest ($RCVFIX_BUILD/bin)
#   RCVFIX_TIMEOUT_SCALE  how many times slower than an amd64 guest this one
#                         runs the tests, a whole number (1)
# and a kernel built with the bug detectors (vm/debug-kernel.sh):
#   RCVFIX_GUEST_MEM      the guest's memory in MiB (1024)
#   RCVFIX_KERNEL_APPEND  its own command line, after the harness's
#   RCVFIX_DEBUG_KERNEL   1: print the detectors' report count of each run
# and for a guest booted the way a UEFI Secure Boot host boots:
#   RCVFIX_SECURE_BOOT=1  OVMF with Secure Boot on and the variables that
#                         vm/secureboot.sh made for KVER (its kernel's signer
#                         and our test MOK in db): the kernel is verified,
#                         locks itself down and enforces module signatures.
#                         Logs go to build/KVER/logs-secureboot.
# Exit status: 0 all passed (cmd: the command's status), 1 failures, 2 usage
# or setup error, 124 guest timed out (cmd mode).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR source=detector-reports.sh
source "$(dirname "${BASH_SOURCE[0]}")/detector-reports.sh"
export LC_ALL=C

usage() { die "usage: vm.sh test|shell KVER | vm.sh cmd KVER COMMAND"; }
[[ $# -ge 2 ]] || usage
mode=$1 kver=$2
case $mode in
test|shell) [[ $# -eq 2 ]] || usage ;;
cmd) [[ $# -eq 3 ]] || usage; cmd=$3 ;;
*) usage ;;
esac

kbuild=$RCVFIX_BUILD/$kver
case ${RCVFIX_SECURE_BOOT:-0} in
0) variant= ;;
1) variant=-secureboot ;;
*) die "RCVFIX_SECURE_BOOT=$RCVFIX_SECURE_BOOT: 0 or 1" ;;
esac
# a Secure Boot guest has logs, settings and an initramfs of its own
slot=$mode$variant
logs=$kbuild/logs$variant
# A kernel unpacked from packages (newest-kernel.sh) sets RCVFIX_VMLINUZ and
# RCVFIX_MODDIR (its modules folder) in build/KVER/kernel.env; default: the
# kernel installed in /boot and /lib/modules.
[[ ! -r $kbuild/kernel.env ]] || source "$kbuild/kernel.env"
export RCVFIX_MODDIR
vmlinuz=${RCVFIX_VMLINUZ:-/boot/vmlinuz-$kver}
qemu_bin=${RCVFIX_QEMU_BIN:-qemu-system-x86_64}
console_dev=${RCVFIX_CONSOLE:-ttyS0}
results_dev=${RCVFIX_RESULTS_DEV:-serial}
guest_root=${RCVFIX_GUEST_ROOT:-/}
timeout_scale=${RCVFIX_TIMEOUT_SCALE:-1}
guest_mem=${RCVFIX_GUEST_MEM:-1024}
[[ $guest_mem =~ ^[1-9][0-9]{2,4}$ ]] ||
	die "RCVFIX_GUEST_MEM=$guest_mem in $kbuild/kernel.env: MiB, 100 to 99999"
[[ $timeout_scale =~ ^[1-9][0-9]?$ ]] ||
	die "RCVFIX_TIMEOUT_SCALE=$timeout_scale in $kbuild/kernel.env: a whole number from 1 to 99"
for secs in "${RCVFIX_GUEST_TIMEOUT:-3600}" "${RCVFIX_TEST_TIMEOUT:-300}" \
	"${RCVFIX_BOOT_TIMEOUT:-300}"; do
	[[ $secs =~ ^[1-9][0-9]{0,5}$ ]] ||
		die "RCVFIX_GUEST_TIMEOUT, RCVFIX_TEST_TIMEOUT and RCVFIX_BOOT_TIMEOUT are seconds (1-999999), not '$secs'"
done
guest_timeout=$((${RCVFIX_GUEST_TIMEOUT:-3600} * timeout_scale))
boot_timeout=$((${RCVFIX_BOOT_TIMEOUT:-300} * timeout_scale))
test_timeout=$((${RCVFIX_TEST_TIMEOUT:-300} * timeout_scale))

[[ -r $vmlinuz ]] ||
	die "$vmlinuz not readable: install linux-image-$kver (make deps) and run as root"
command -v "$qemu_bin" > /dev/null ||
	die "$qemu_bin missing: install its QEMU package (make deps)"
[[ $RCVFIX_REPO =~ ^[A-Za-z0-9_./+-]+$ ]] ||
	die "the repository path '$RCVFIX_REPO' must not contain spaces or shell characters (it goes on the kernel command line)"

mkdir -p "$logs" "$kbuild/run"
if [[ $mode == test ]]; then
	console=$logs/console.log results=$logs/results.tap
else
	console=$logs/vm-console.log results=$logs/vm-output.log
fi
summary=$logs/summary

# One run per kernel and mode writes these logs; a test or cmd guest also
# holds build/KVER/.lock shared so that kbuild.sh does not rebuild under it.
exec 8> "$logs/.$mode.lock"
if ! flock -n 8; then
	msg "waiting for another '$mode' run of $kver to end"
	flock 8
fi
if [[ $mode != shell ]]; then
	exec 9> "$kbuild/.lock"
	if ! flock -s -n 9; then
		msg "waiting for the build of $kver to end"
		flock -s 9
	fi
fi
rm -f "$console" "$results"
[[ $mode != test ]] || rm -f "$summary"
: > "$console"
: > "$results"

root_fs=$(guest_root_fs "${RCVFIX_MODDIR:-/lib/modules/$kver}")
# The guest binds an unpacked kernel's modules under the host's /lib/modules
# (init.sh), which a host without any kernel package of its own lacks.
[[ -z ${RCVFIX_MODDIR:-} || -d /lib/modules ]] || mkdir -p /lib/modules
export RCVFIX_ROOT_FS=$root_fs
initramfs=$kbuild/initramfs$variant.cpio
mods=$("$HARNESS/mkinitramfs.sh" "$kver" "$initramfs")
[[ -z ${RCVFIX_VERBOSE:-} ]] || msg "initramfs modules for $kver: ${mods:-none}"

# Settings for run.sh, read in the guest through the read-only 9p share.
envfile=$kbuild/run/$slot.env
{
	printf '%s=%q\n' RCVFIX_MODE "$mode" KVER "$kver" \
		RCVFIX_KO "$kbuild/module/rcvfix.ko" \
		RCVFIX_BIN "${RCVFIX_GUEST_BIN:-$RCVFIX_BUILD/bin}" \
		RCVFIX_KMOD "$kbuild/kmod" \
		RCVFIX_TESTS "${RCVFIX_TESTS:-}" \
		RCVFIX_PEER "${RCVFIX_PEER:-}" \
		RCVFIX_UPGRADE "${RCVFIX_UPGRADE:-}" \
		RCVFIX_LOAD_PARAMS "${RCVFIX_LOAD_PARAMS:-}" \
		RCVFIX_TEST_TIMEOUT "$test_timeout" \
		RCVFIX_TIMEOUT_SCALE "$timeout_scale" \
		RCVFIX_CMD "${cmd:-}" \
		RCVFIX_DEBUG_KERNEL "${RCVFIX_DEBUG_KERNEL:-}" \
		RCVFIX_SECURE_BOOT "${variant:+1}" \
		RCVFIX_SB_KEYS "${variant:+$(realpath -m "$RCVFIX_BUILD/secureboot/keys")}"
	if [[ $mode == shell ]]; then
		printf '%s=%q\n' RCVFIX_TERM "${TERM:-vt100}" \
			RCVFIX_TTY_SIZE "$(stty size 2> /dev/null || echo '24 80')"
	fi
} > "$envfile"

append="console=$console_dev,115200 loglevel=5 printk.devkmsg=on log_buf_len=1M"
append+=" panic=-1 oops=panic panic_on_warn=1"
# every SysRq function (Debian's kernel.sysrq leaves out the task dumps
# vm/monitor.sh asks for)
append+=" sysrq_always_enabled"
append+=" rcvfix_repo=$RCVFIX_REPO rcvfix_env=$envfile rcvfix_root_fs=$root_fs"
append+="${RCVFIX_MODDIR:+ rcvfix_moddir=$RCVFIX_MODDIR}"
# run.sh speaks to ttyS0 (shell) and ttyS1 (results): init.sh links them to
# the devices of a board without a second UART.
if [[ $results_dev == virtconsole ]]; then
	append+=" rcvfix_tty_alias=ttyS0=$console_dev,ttyS1=hvc0"
fi
append+=" ${RCVFIX_KERNEL_APPEND:-} ${RCVFIX_APPEND:-}"

if [[ ${RCVFIX_KVM:-0} == 1 ]]; then
	accel=(-accel kvm -cpu host)
else
	# One host thread for all vCPUs: with multi-threaded TCG, patching a
	# function's entry (ftrace, kprobes, our own hooks) while another vCPU
	# runs it left vCPUs looping on stale translated code, and crashed a
	# stock guest with no rcvfix loaded. The guest still has 2 CPUs.
	accel=(-accel tcg,thread=single -cpu max)
fi
qpid=
stop_qemu() {
	[[ -n $qpid ]] || return 0
	kill "$qpid" 2> /dev/null || return 0
	sleep 2
	kill -KILL "$qpid" 2> /dev/null || true
}
# virtiofsd ends when QEMU disconnects; this covers a QEMU that never came.
virtiofsd_pids=()
stop_virtiofsd() {
	local p
	for p in "${virtiofsd_pids[@]}"; do
		kill "$p" 2> /dev/null || true
	done
	virtiofsd_pids=()
}
trap 'stop_qemu; stop_virtiofsd; exit 130' INT TERM HUP
trap 'stop_qemu; stop_virtiofsd' EXIT

# shellcheck disable=SC2206
qemu=("$qemu_bin" ${RCVFIX_QEMU_MACHINE:-} "${accel[@]}" -m "$guest_mem" -smp 2
	-nodefaults -no-reboot -display none
	-kernel "$vmlinuz" -initrd "$initramfs" -append "$append")
if [[ -n $variant ]]; then
	# OVMF's Secure Boot build needs SMM (q35) and a secure flash; its
	# variables are a fresh copy for each boot.
	ovmf_code=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
	sb_vars=$RCVFIX_BUILD/secureboot/$kver/vars.fd
	[[ -r $ovmf_code ]] || die "$ovmf_code missing: install ovmf (make deps-secureboot)"
	[[ -r $sb_vars ]] || die "$sb_vars missing: run vm/secureboot.sh prepare $kver (make check-secureboot does)"
	cp "$sb_vars" "$kbuild/run/$slot-vars.fd"
	qemu+=(-machine q35,smm=on
		-global driver=cfi.pflash01,property=secure,value=on
		-drive "if=pflash,format=raw,unit=0,readonly=on,file=$ovmf_code"
		-drive "if=pflash,format=raw,unit=1,file=$kbuild/run/$slot-vars.fd")
fi
# The two read-only shares: the guest's / and the repository.
shares=("hostroot:$guest_root" "repo:$RCVFIX_REPO")
if [[ $root_fs == 9p ]]; then
	virtfs=security_model=none,readonly=on,multidevs=remap
	for s in "${shares[@]}"; do
		qemu+=(-virtfs "local,path=${s#*:},mount_tag=${s%%:*},$virtfs")
	done
else
	# virtiofs: one QEMU virtiofsd per share, in a mount namespace of its
	# own where the shared folder is a read-only bind (virtiofsd has no
	# read-only mode); guest memory must be shared with them.
	virtiofsd=/usr/lib/qemu/virtiofsd
	[[ -x $virtiofsd ]] ||
		die "$virtiofsd missing: install qemu-system-common (make deps)"
	qemu+=(-object memory-backend-memfd,id=mem,size="$guest_mem"M,share=on
		-numa node,memdev=mem)
	for s in "${shares[@]}"; do
		tag=${s%%:*}
		sock=$kbuild/run/$slot-$tag.sock
		ro=$kbuild/run/$slot-$tag.ro
		rm -f "$sock"
		mkdir -p "$ro"
		unshare -m --propagation private sh -c \
			'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" &&
			exec "$3" --socket-path="$4" -o source="$2" -o cache=always \
				-o sandbox=chroot -o log_level=err' \
			virtiofsd "${s#*:}" "$ro" "$virtiofsd" "$sock" \
			< /dev/null >> "$logs/virtiofsd.log" 2>&1 &
		virtiofsd_pids+=($!)
		qemu+=(-chardev "socket,id=vfs-$tag,path=$sock"
			-device "vhost-user-fs-pci,chardev=vfs-$tag,tag=$tag")
	done
	for s in "${shares[@]}"; do
		sock=$kbuild/run/$slot-${s%%:*}.sock
		for _ in $(seq 50); do
			[[ -S $sock ]] && break
			sleep 0.1
		done
		[[ -S $sock ]] || die "virtiofsd did not start (see $logs/virtiofsd.log)"
	done
fi
# A monitor for whoever must see inside a guest that went silent: its
# 'sendkey alt-sysrq-t' dumps every task's stack to the guest's console
# (alt-sysrq-w: the blocked ones); vm/monitor.sh KVER COMMAND sends one.
rm -f "$kbuild/run/$slot-monitor.sock"
qemu+=(-monitor "unix:$kbuild/run/$slot-monitor.sock,server=on,wait=off")
# shellcheck disable=SC2206
qemu+=(${RCVFIX_QEMU_OPTS:-})
# The results channel: QEMU options that write it to $results.
# shellcheck disable=SC2054
case $results_dev in
serial) results_opts=(-serial "file:$results") ;;
virtconsole) results_opts=(-device virtio-serial-pci
	-chardev "file,id=results,path=$results"
	-device virtconsole,chardev=results) ;;
*) die "RCVFIX_RESULTS_DEV=$results_dev: serial or virtconsole" ;;
esac

# --- console analysis ------------------------------------------------------

# console_hits: the first bad line of each test on the console, as
# "LINENO<TAB>TEST<TAB>TEXT" lines; TEST is the script running at the time.
console_hits() {
	awk -v bad="$RCVFIX_BAD_LOG_RE" -v benign="$RCVFIX_BENIGN_LOG_RE" '
		{ sub(/\r$/, "") }
		/rcvfix-run: begin / {
			s = $0; sub(/.*rcvfix-run: begin /, "", s)
			split(s, w, " "); t = w[1]; next
		}
		/rcvfix-run: done/ { t = "(after the last test)"; next }
		$0 ~ bad && $0 !~ benign {
			n = (t == "" ? "(before the first test)" : t)
			if (!(n in seen)) { seen[n] = 1; print NR "\t" n "\t" $0 }
		}' "$console"
}

console_excerpt() {	# console_excerpt FROM TO
	tr -d '\r' < "$console" | sed -n "$1,$2p" | sed 's/^/    | /'
}

# --- following the results channel while QEMU runs ----------------------

offset=0
# read_new HANDLER: pass each new complete line of $results to HANDLER.
read_new() {
	local data line
	[[ -f $results ]] || return 0
	data=$(tail -c +$((offset + 1)) "$results"; printf x)
	data=${data%x}
	[[ $data == *$'\n'* ]] || return 0
	data=${data%$'\n'*}
	offset=$((offset + ${#data} + 1))
	while IFS= read -r line; do
		"$1" "${line%$'\r'}"
	done <<< "$data"
}


# run_guest HANDLER [BOOT_LIMIT]: boot, follow, enforce the timeout; with
# BOOT_LIMIT, also stop a guest whose results channel is still empty that
# many seconds after boot (a kernel that never reached the runner). Sets
# qemu_rc, timed_out and boot_stalled.
run_guest() {
	local start
	timed_out=0 boot_stalled=0
	start=$SECONDS
	"${qemu[@]}" -serial "file:$console" "${results_opts[@]}" \
		< /dev/null > "$logs/qemu.log" 2>&1 &
	qpid=$!
	while kill -0 "$qpid" 2> /dev/null; do
		read_new "$1"
		if ((SECONDS - start >= guest_timeout)); then
			timed_out=1
			stop_qemu
			break
		fi
		if [[ -n ${2:-} ]] && ((offset == 0 && SECONDS - start >= $2)); then
			timed_out=1 boot_stalled=1
			stop_qemu
			break
		fi
		sleep 1
	done
	qemu_rc=0
	wait "$qpid" || qemu_rc=$?
	qpid=
	read_new "$1"
	if ((qemu_rc != 0 && !timed_out)) && [[ -s $logs/qemu.log ]]; then
		msg "QEMU exit status $qemu_rc: $(head -c 2000 "$logs/qemu.log")"
	fi
	elapsed=$((SECONDS - start))
}

# --- test mode ---------------------------------------------------------------

pass=0 fail=0 skip=0 current="(before the first test)" done_seen=0
show_comments=0 log_failed=" "

on_test_line() {
	local l=$1
	case $l in
	"# running "*)
		current=${l#"# running "}
		show_comments=0
		[[ -z ${RCVFIX_VERBOSE:-} ]] || echo "$l"
		;;
	"# time "*)
		echo "$l"
		;;
	"# rcvfix-run: done")
		done_seen=1
		current="(after the last test)"
		;;
	"not ok"|"not ok "*)
		fail=$((fail + 1))
		show_comments=1
		[[ $l != *": kernel log: "* ]] || log_failed+="$current "
		echo "$l"
		;;
	ok|"ok "*)
		if [[ ${l,,} =~ \#[[:space:]]*skip ]]; then
			skip=$((skip + 1))
		else
			pass=$((pass + 1))
		fi
		show_comments=0
		echo "$l"
		;;
	"#"*)
		((show_comments == 0)) && [[ -z ${RCVFIX_VERBOSE:-} ]] || echo "$l"
		;;
	esac
}

harness_fail() {	# harness_fail DESC: one failure found by the host
	fail=$((fail + 1))
	echo "not ok - $kver: $*"
}

run_test_mode() {
	local line_no test text stopped_explained=0 reports
	echo "== guest $kver: booting (TCG, ${guest_mem} MiB, 2 vCPUs, timeout ${guest_timeout}s," \
		"${test_timeout}s per script$( ((timeout_scale == 1)) ||
			echo ", limits x$timeout_scale"))"
	run_guest on_test_line "$boot_timeout"

	if ((boot_stalled)); then
		harness_fail "the guest did not reach the test runner within ${boot_timeout}s of boot (console: $console)"
	elif ((timed_out)); then
		harness_fail "guest timed out in $current after ${guest_timeout}s"
	fi
	while IFS=$'\t' read -r line_no test text; do
		if [[ $log_failed == *" $test "* ]]; then
			echo "# console: the kernel-log failure of $test is reported above"
		else
			harness_fail "kernel log during $test: $text"
			console_excerpt $((line_no > 5 ? line_no - 5 : 1)) $((line_no + 40))
		fi
		[[ $test != "$current" ]] || stopped_explained=1
	done < <(console_hits)
	if ((!timed_out && !done_seen)); then
		if ((stopped_explained)); then
			echo "# the guest stopped during $current (QEMU exit status $qemu_rc)"
		else
			harness_fail "guest stopped during $current before the suite ended (QEMU exit status $qemu_rc)"
		fi
	elif ((!timed_out && qemu_rc != 0)); then
		harness_fail "QEMU exit status $qemu_rc (see $logs/qemu.log)"
	fi
	if ((!done_seen && !stopped_explained)); then
		echo "# last console lines ($console):"
		console_excerpt "$(($(wc -l < "$console") > 25 ? $(wc -l < "$console") - 25 : 1))" '$'
	fi
	reports=$(detector_summary "$console")
	[[ -z ${RCVFIX_DEBUG_KERNEL:-} ]] ||
		echo "== guest $kver: bug detector reports on the console: $reports"
	write_summary "$summary" "$pass" "$fail" "$skip" "$elapsed" \
		"$qemu_bin $("$qemu_bin" --version |
			sed -n '1s/^QEMU emulator version \([^ ]*\).*/\1/p')" \
		"${reports%% *}"
	echo "== guest $kver: $pass passed, $fail failed$( ((skip == 0)) || echo ", $skip skipped") in ${elapsed}s"
	((fail == 0)) || echo "   TAP: $results"$'\n'"   console: $console"
	((fail == 0))
}

# --- cmd and shell modes -------------------------------------------------------

on_cmd_line() { printf '%s\n' "$1"; }

report_console() {	# report_console: show bad kernel-log lines; 1 if any
	local line_no test text bad=0
	while IFS=$'\t' read -r line_no test text; do
		echo "rcvfix-harness: kernel log: $text" >&2
		console_excerpt $((line_no > 5 ? line_no - 5 : 1)) $((line_no + 40)) >&2
		bad=1
	done < <(console_hits)
	return $bad
}

run_cmd_mode() {
	local st bad=0
	run_guest on_cmd_line
	# a last line without newline
	[[ ! -f $results ]] || tail -c +$((offset + 1)) "$results"
	report_console || bad=1
	[[ -z ${RCVFIX_DEBUG_KERNEL:-} ]] ||
		msg "bug detector reports on the console: $(detector_summary "$console")"
	if ((timed_out)); then
		msg "guest timed out after ${guest_timeout}s (console: $console)"
		return 124
	fi
	st=$(tr -d '\r' < "$console" | sed -n 's/.*rcvfix-run: command exit status \([0-9]*\).*/\1/p' | tail -n 1)
	if [[ -z $st ]]; then
		msg "guest stopped before the command finished (console: $console)"
		((bad)) || console_excerpt "$(($(wc -l < "$console") > 25 ? $(wc -l < "$console") - 25 : 1))" '$' >&2
		return 1
	fi
	((bad == 0)) || { msg "command exit status $st, but the kernel log failed"; return 1; }
	return "$st"
}

run_shell_mode() {
	[[ -t 0 && -t 1 ]] ||
		die "vm-shell needs a terminal; without one pass a command: make vm-shell CMD='...'"
	msg "booting $kver; console log: $console"
	"${qemu[@]}" -chardev "stdio,id=con,mux=on,signal=off,logfile=$console" \
		-serial chardev:con -mon chardev=con,mode=readline \
		"${results_opts[@]}" || return
	report_console
}

case $mode in
test) run_test_mode ;;
cmd) run_cmd_mode ;;
shell) run_shell_mode ;;
esac
