#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcvfix on a UEFI Secure Boot host. make check-secureboot boots this guest
# from OVMF with Secure Boot on (vm.sh RCVFIX_SECURE_BOOT=1): the firmware
# verifies Debian's signed kernel, which then locks itself down
# (integrity) and loads only modules signed by a key it trusts; db holds
# our test MOK (vm/secureboot.sh), which Debian's kernel trusts for modules
# as it trusts an enrolled MOK. Elsewhere this test skips.
#  1. the boot is what an operator's Secure Boot host is;
#  2. an unsigned rcvfix.ko, and one signed by a key the kernel does not
#     trust, are refused with "Key was rejected by service" and change
#     nothing; rcvfixctl says what to do;
#  3. rcvfix signed as Debian's dkms signs it (sign-file with mok.key and
#     mok.pub) loads, says its signature is verified, and fixes SO_RCVBUF
#     under lockdown=integrity: ftrace hooks, sysctls, the tracepoint;
#  4. lockdown=confidentiality (last: it cannot be undone): rcvfix still
#     loads and fixes; tracefs is closed, so the tracepoint is out of reach.
source "$RCVFIX_REPO/tests/guest/lib.sh"
[[ -n ${RCVFIX_SECURE_BOOT:-} ]] ||
	skip "not a Secure Boot guest (make check-secureboot boots one)"
keys=${RCVFIX_SB_KEYS:-}
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt" "$RCVFIX_BIN/rcvfixctl" \
	"$keys/mok.key" "$keys/mok.pub" "$keys/other.key" "$keys/other.der"
ctl=$RCVFIX_BIN/rcvfixctl
sf=/usr/src/linux-headers-$KVER/scripts/sign-file
[[ -x $sf ]] || sf=$(compgen -G '/usr/lib/linux-kbuild-*/scripts/sign-file' | head -n 1)
need "$sf"
hash=$(sed -n 's/^CONFIG_MODULE_SIG_HASH="\(.*\)"/\1/p' "/boot/config-$KVER" 2> /dev/null)
hash=${hash:-sha256}

sec=/sys/kernel/security
mountpoint -q "$sec" || mount -t securityfs securityfs "$sec"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
lockdown() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$sec/lockdown"; }
rcvfix_unload

# --- 1. the boot -------------------------------------------------------------

sb_var=/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
mountpoint -q /sys/firmware/efi/efivars ||
	mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2> /dev/null
check_eq "the firmware booted the kernel with Secure Boot on (SecureBoot=1)" 1 \
	"$(od -An -tu1 -j4 -N1 "$sb_var" 2> /dev/null | tr -d ' ')"
check "the kernel locked itself down for it" \
	grep -q 'Kernel is locked down from EFI Secure Boot' <(dmesg)
check_eq "lockdown: integrity" integrity "$(lockdown)"
check_eq "module.sig_enforce: Y" Y "$(cat /sys/module/module/parameters/sig_enforce)"
check "the kernel loaded our test MOK from the firmware's db" \
	grep -q "Loaded X.509 cert 'rcvfix test MOK" <(dmesg)

# --- 2. refused: unsigned, and signed by an unknown key ----------------------

V=$(($(awk '{ print $2 }' /proc/sys/net/ipv4/tcp_rmem) / 2))
stock_lock=$("$RCVFIX_BIN/sockopt" rcvbuf=$V | sed -n 's/.*op=rcvbuf.* lock=\([0-9]*\).*/\1/p')
# SO_BUF_LOCK: 2 is SOCK_RCVBUF_LOCK
check_eq "stock: SO_RCVBUF $V locks the buffer (SO_BUF_LOCK 2)" 2 "$stock_lock"
ftrace_ops() { wc -l < /sys/kernel/tracing/enabled_functions; }
ops_before=$(ftrace_ops)

# nothing_changed WHAT: no trace of rcvfix anywhere
nothing_changed() {
	check "$1: not in /proc/modules" bash -c '! grep -q "^rcvfix " /proc/modules'
	check "$1: no net.rcvfix sysctl, no /proc/net/rcvfix" \
		bash -c '! test -e /proc/sys/net/rcvfix && ! test -e /proc/net/rcvfix'
	check_eq "$1: no function traced more than before" "$ops_before" "$(ftrace_ops)"
	check_eq "$1: SO_RCVBUF still locks (stock)" 2 \
		"$("$RCVFIX_BIN/sockopt" rcvbuf=$V | sed -n 's/.*op=rcvbuf.* lock=\([0-9]*\).*/\1/p')"
}

tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
cp "$RCVFIX_KO" "$tmp/rcvfix.ko"
check "the harness's rcvfix.ko is unsigned" \
	bash -c "[[ -z \$(modinfo -F signer '$tmp/rcvfix.ko') ]]"

dmesg_mark "unsigned"
err=$(insmod "$tmp/rcvfix.ko" 2>&1)
check "unsigned: insmod fails with 'Key was rejected by service'" \
	grep -q 'Key was rejected by service' <<< "$err"
echo "# $err"
check "unsigned: the kernel says why" \
	grep -q 'Loading of unsigned module is rejected' <(dmesg_since_mark unsigned)
nothing_changed "unsigned"

out=$("$ctl" status 2>&1)
check_eq "rcvfixctl status: exit 2 (not loaded)" 2 "$("$ctl" status > /dev/null 2>&1; echo $?)"
check "rcvfixctl status: says signatures are enforced, by what, and what to do" \
	bash -c "grep -q 'module.sig_enforce=Y, lockdown integrity' <<< \"\$1\" &&
		grep -q 'Key was rejected by service' <<< \"\$1\" &&
		grep -q 'mokutil --import /var/lib/dkms/mok.pub' <<< \"\$1\"" _ "$out"

cp "$RCVFIX_KO" "$tmp/rcvfix-other.ko"
"$sf" "$hash" "$keys/other.key" "$keys/other.der" "$tmp/rcvfix-other.ko"
check_eq "signed by an unknown key: modinfo names the signer" "rcvfix untrusted key" \
	"$(modinfo -F signer "$tmp/rcvfix-other.ko")"
dmesg_mark "other key"
err=$(insmod "$tmp/rcvfix-other.ko" 2>&1)
check "unknown key: insmod fails with 'Key was rejected by service'" \
	grep -q 'Key was rejected by service' <<< "$err"
check "unknown key: the kernel says why" \
	grep -q 'Loading of module with unavailable key is rejected' <(dmesg_since_mark "other key")
nothing_changed "unknown key"

# --- 3. signed as dkms signs it: loads and fixes -----------------------------

cp "$RCVFIX_KO" "$tmp/rcvfix.ko"
check "sign-file $hash mok.key mok.pub rcvfix.ko (dkms's command)" \
	"$sf" "$hash" "$keys/mok.key" "$keys/mok.pub" "$tmp/rcvfix.ko"
check_eq "modinfo: signer" "rcvfix test MOK" "$(modinfo -F signer "$tmp/rcvfix.ko")"
check_eq "modinfo: hash" "$hash" "$(modinfo -F sig_hashalgo "$tmp/rcvfix.ko")"
dmesg_mark "signed"
check "signed by the enrolled key: insmod works" insmod "$tmp/rcvfix.ko"
check_eq "/proc/net/rcvfix: signature" verified "$(rcvfix_status signature)"
check_eq "/proc/net/rcvfix: sig_enforced" yes "$(rcvfix_status sig_enforced)"
check "the load line says the signature is verified" \
	grep -q 'rcvfix: .* loaded: .*, signature verified$' <(dmesg_since_mark signed)
check "the kernel is not tainted E by it (/sys/module/rcvfix/taint)" \
	bash -c '! grep -q E /sys/module/rcvfix/taint'
out=$("$ctl" status)
check "rcvfixctl status: signature verified" grep -q '^signature: *verified' <<< "$out"
check "rcvfixctl status: signatures enforced" grep -q '^signatures: *enforced' <<< "$out"
json=$("$ctl" --json status)
check_eq "rcvfixctl --json: signature, enforcement, lockdown" \
	"verified yes true integrity" \
	"$(jq -r '[.module.signature, .module.sig_enforced, .kernel.sig_enforced, .kernel.lockdown] | map(tostring) | join(" ")' <<< "$json")"

check "net.rcvfix.enable=1 arms the ftrace hooks under lockdown" rcvfix_enable 1
check_eq "armed" yes "$(rcvfix_status armed)"
check_eq "fixed: SO_RCVBUF $V no longer locks" 0 \
	"$("$RCVFIX_BIN/sockopt" rcvbuf=$V | sed -n 's/.*op=rcvbuf.* lock=\([0-9]*\).*/\1/p')"
check_eq "a bad sysctl value is still refused (EINVAL)" "ret=-1 errno=EINVAL" \
	"$("$RCVFIX_BIN/sysctlw" /proc/sys/net/rcvfix/enable 2)"
inst=/sys/kernel/tracing/instances/rcvfix-sb-$$
if mkdir "$inst"; then
	echo 1 > "$inst/events/rcvfix/rcvbuf_set/enable"
	"$RCVFIX_BIN/sockopt" rcvbuf=$V > /dev/null
	echo 0 > "$inst/events/rcvfix/rcvbuf_set/enable"
	check "the tracepoint works under lockdown=integrity (tracefs)" \
		grep -q "rcvbuf_set: .* val=$V .*outcome=lock_avoided" "$inst/trace"
	rmdir "$inst"
else
	fail "mkdir $inst (a tracefs instance)"
fi
rcvfix_enable 0
check "rmmod" rmmod rcvfix

# --- 4. lockdown=confidentiality ---------------------------------------------

echo confidentiality > "$sec/lockdown"
check_eq "lockdown raised to confidentiality" confidentiality "$(lockdown)"
check "tracefs is closed now" bash -c '! cat /sys/kernel/tracing/trace > /dev/null 2>&1'
check "the signed rcvfix still loads" insmod "$tmp/rcvfix.ko"
check "and arms" rcvfix_enable 1
check_eq "and fixes SO_RCVBUF" 0 \
	"$("$RCVFIX_BIN/sockopt" rcvbuf=$V | sed -n 's/.*op=rcvbuf.* lock=\([0-9]*\).*/\1/p')"
check "rcvfixctl status works" "$ctl" status
# 6.1 creates no directory for the event then; 6.12's eventfs shows one
# whose format stays readable, but enabling refuses to open
check "its tracepoint cannot be enabled through tracefs" \
	bash -c '! echo 1 2> /dev/null > /sys/kernel/tracing/events/rcvfix/rcvbuf_set/enable'
rcvfix_enable 0
check "rmmod" rmmod rcvfix
done_testing
