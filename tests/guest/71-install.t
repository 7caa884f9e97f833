#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcvfix installed without dkms by `make install KVER=...` on the host
# (`make check-package` does it): modprobe loads it from
# /lib/modules/KVER/updates with the options of modprobe.d, and the tools
# installed under /usr/local work against it.
source "$RCVFIX_REPO/tests/guest/lib.sh"

expected_ko=/lib/modules/$KVER/updates/rcvfix.ko
ko=$(modinfo -n rcvfix 2> /dev/null) || ko=
[[ $ko == "$expected_ko" ]] ||
	skip "rcvfix is not installed by make install for $KVER (modinfo -n: '${ko:-none}'); make check-package installs it"

version=$(sed -n 's/^#define RCVFIX_VERSION "\(.*\)"/\1/p' \
	"$RCVFIX_REPO/module/version.h")
ctl=/usr/local/sbin/rcvfixctl

ok "modinfo finds the installed module: $ko"
check_eq "its version is module/version.h's" "$version" \
	"$(modinfo -F version rcvfix)"
check "modprobe rcvfix default_enable=1" modprobe rcvfix default_enable=1
check_eq "/proc/net/rcvfix: version" "$version" "$(rcvfix_status version)"
srcversion=$(modinfo -F srcversion rcvfix)
check "modinfo -F srcversion rcvfix is not empty" test -n "$srcversion"
check_eq "/proc/net/rcvfix: srcversion is the installed build's" \
	"$srcversion" "$(rcvfix_status srcversion)"
check_eq "/proc/net/rcvfix: enable" 1 "$(rcvfix_status enable)"
check "$ctl status" "$ctl" status
check "$ctl disable" "$ctl" disable
check_eq "disabled" 0 "$(cat /proc/sys/net/rcvfix/enable)"
check "/usr/local/bin/rcvfix-bench --version" /usr/local/bin/rcvfix-bench --version
check "man page rcvfixctl(8) installed" \
	test -f /usr/local/share/man/man8/rcvfixctl.8
check "modprobe -r rcvfix" modprobe -r rcvfix

done_testing
