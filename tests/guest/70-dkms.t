#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcvfix as operators install it: built by dkms on the host (package
# rcvfix-dkms or make dkms-install; `make check-package` does it), loaded by
# modprobe from /lib/modules/KVER/updates/dkms, and enabled at boot in the
# initial and in new namespaces by default_enable from modprobe.d, loaded
# through modules-load.d by systemd-modules-load as at boot.
source "$RCVFIX_REPO/tests/guest/lib.sh"

dkms_dir=/lib/modules/$KVER/updates/dkms
ko=$(modinfo -n rcvfix 2> /dev/null) || ko=
[[ $ko == "$dkms_dir"/rcvfix.ko* ]] ||
	skip "rcvfix is not installed with dkms for $KVER (modinfo -n: '${ko:-none}'); make check-package installs it"

version=$(sed -n 's/^#define RCVFIX_VERSION "\(.*\)"/\1/p' \
	"$RCVFIX_REPO/module/version.h")
ctl=
for c in /usr/sbin/rcvfixctl /usr/local/sbin/rcvfixctl; do
	[[ -x $c ]] && { ctl=$c; break; }
done

# Boot-time files are written under /run (tmpfs; / is read-only here),
# which modprobe and systemd-modules-load read like /etc.
run_files=(/run/modprobe.d/rcvfix-test.conf /run/modules-load.d/rcvfix-test.conf)
cleanup() {
	local ns
	rm -f "${run_files[@]}"
	# netns_new runs in $(...) here, so lib.sh's list misses our namespaces.
	for ns in $(ip netns list | awk -v s="-$$" '$1 ~ s "$" { print $1 }'); do
		ip netns del "$ns"
	done
	rcvfix_cleanup
}
trap cleanup EXIT

enable_of() {	# enable_of [NS]: net.rcvfix.enable there
	if [[ $# -gt 0 ]]; then
		in_ns "$1" cat /proc/sys/net/rcvfix/enable 2>&1
	else
		cat /proc/sys/net/rcvfix/enable 2>&1
	fi
}

# --- the module dkms built ----------------------------------------------------

ok "modinfo finds the dkms-built module: $ko"
check_eq "its version is module/version.h's" "$version" \
	"$(modinfo -F version rcvfix)"
check_eq "its vermagic names this kernel" "$KVER" \
	"$(modinfo -F vermagic rcvfix | awk '{ print $1 }')"
# Debian's dkms signs what it builds with its own key (made on its first
# build): the route a Secure Boot host takes (docs/operations.md).
if [[ -r /var/lib/dkms/mok.pub ]]; then
	check_eq "dkms signed it with its key (/var/lib/dkms/mok.pub)" \
		"$(openssl x509 -inform DER -in /var/lib/dkms/mok.pub -noout -subject |
			sed 's/^subject= *CN *= *//')" \
		"$(modinfo -F signer rcvfix)"
else
	echo "# no /var/lib/dkms/mok.pub: this dkms did not sign (an older dkms, or a kernel without CONFIG_MODULE_SIG)"
fi
check "the shipped modprobe.d example sets nothing" \
	bash -c '[[ -f /etc/modprobe.d/rcvfix.conf ]] &&
		! grep -qv "^[[:space:]]*\(#\|$\)" /etc/modprobe.d/rcvfix.conf'
check "the shipped modules-load.d example loads nothing" \
	bash -c '[[ -f /etc/modules-load.d/rcvfix.conf ]] &&
		! grep -qv "^[[:space:]]*\(#\|$\)" /etc/modules-load.d/rcvfix.conf'

dmesg_mark "modprobe"
check "modprobe rcvfix" modprobe rcvfix
check_eq "/proc/modules lists rcvfix" 1 "$(grep -c '^rcvfix ' /proc/modules)"
check "it announced itself in the kernel log" bash -c \
	"dmesg | awk -v m='rcvfix-test: $RCVFIX_TEST: modprobe' 'f; index(\$0, m) { f = 1 }' |
		grep -q 'rcvfix: $version loaded: strategy '"
check "/proc/net/rcvfix exists" test -r /proc/net/rcvfix
check_eq "/proc/net/rcvfix: version" "$version" "$(rcvfix_status version)"
srcversion=$(modinfo -F srcversion rcvfix)
check "modinfo -F srcversion rcvfix is not empty" test -n "$srcversion"
check_eq "/proc/net/rcvfix: srcversion is the dkms build's" \
	"$srcversion" "$(rcvfix_status srcversion)"
check_eq "/proc/net/rcvfix: signature unverified (no key of this guest's kernel signed it)" \
	unverified "$(rcvfix_status signature)"
check_eq "off by default: net.rcvfix.enable" 0 "$(enable_of)"
if [[ -n $ctl ]]; then
	check "$ctl status" "$ctl" status
	check "$ctl status names the module and its version" bash -c \
		"'$ctl' status | grep -q 'rcvfix $version'"
	check "$ctl status names the build's srcversion" bash -c \
		"'$ctl' status | grep -qx 'srcversion: *$srcversion'"
else
	fail "an installed rcvfixctl" "neither /usr/sbin nor /usr/local/sbin has one"
fi
check "modprobe -r rcvfix" modprobe -r rcvfix
check_eq "rcvfix is gone" 0 "$(grep -c '^rcvfix ' /proc/modules)"

# --- enabled at boot: the shipped examples, uncommented ----------------------

mkdir -p /run/modprobe.d /run/modules-load.d
sed -n 's/^#\(options rcvfix .*\)/\1/p' /etc/modprobe.d/rcvfix.conf \
	> /run/modprobe.d/rcvfix-test.conf
sed -n 's/^#\(rcvfix\)[[:space:]]*$/\1/p' /etc/modules-load.d/rcvfix.conf \
	> /run/modules-load.d/rcvfix-test.conf
check_eq "the modprobe.d example's option line" \
	"options rcvfix default_enable=1" "$(cat /run/modprobe.d/rcvfix-test.conf)"
check_eq "the modules-load.d example's module line" \
	rcvfix "$(cat /run/modules-load.d/rcvfix-test.conf)"

before=$(netns_new before)
pp /lib/systemd/systemd-modules-load
check "systemd-modules-load loaded rcvfix" grep -q '^rcvfix ' /proc/modules
check_eq "default_enable=1 from modprobe.d" 1 \
	"$(cat /sys/module/rcvfix/parameters/default_enable 2>&1)"
check_eq "enabled in the initial namespace" 1 "$(enable_of)"
check_eq "enabled in a namespace that existed before the load" 1 \
	"$(enable_of "$before")"
after=$(netns_new after)
check_eq "enabled in a namespace created after the load" 1 \
	"$(enable_of "$after")"
check_eq "/proc/net/rcvfix of the new namespace: enable" 1 \
	"$(rcvfix_status enable "$after")"
if [[ -n $ctl ]]; then
	check "$ctl -n NAME status shows it enabled" bash -c \
		"'$ctl' -n '$after' status | grep -q 'enable: *1'"
fi
check "modprobe -r rcvfix" modprobe -r rcvfix

# Without the option the same load leaves every namespace off.
rm -f /run/modprobe.d/rcvfix-test.conf
pp /lib/systemd/systemd-modules-load
check_eq "without the option: initial namespace off" 0 "$(enable_of)"
plain=$(netns_new plain)
check_eq "without the option: new namespace off" 0 "$(enable_of "$plain")"
check "modprobe -r rcvfix" modprobe -r rcvfix

done_testing
