#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcvfix-timeout: 4800
# The upgrade an operator runs (docs/operations.md, "Upgrading"), in one
# boot: the last release's packages installed with apt (dkms builds its
# module for this kernel), the fix enabled at load by /etc/modprobe.d, TCP
# and MPTCP streams flowing; apt installs this tree's packages over them,
# dkms builds the new module, the loaded one is replaced (modprobe -r,
# modprobe) while the connections stay up, every byte arrives (checked
# against its sender's pattern), the switch comes back from modprobe.d;
# then apt purge leaves nothing. The loaded module must be the new build
# (srcversion and version), which an unraised version cannot give: apt keeps
# a package of the same version, dkms its build.
#
# The guest's root is the host's, read-only: apt, dpkg and dkms run in a
# chroot on an overlay of it (lower /, upper on a tmpfs) with /proc, /sys,
# /dev, /run and /tmp bound in; the kernel is the guest's. Run by
# make check-upgrade (packaging/check-upgrade.sh), which builds both
# releases' packages and names them in RCVFIX_UPGRADE; skipped elsewhere.
source "$RCVFIX_REPO/tests/guest/lib.sh"

[[ -n ${RCVFIX_UPGRADE:-} && -r $RCVFIX_UPGRADE ]] ||
	skip "no packages to upgrade: make check-upgrade builds them and runs this"
# OLD_VERSION, NEW_VERSION and the arrays OLD_DEBS, NEW_DEBS (.deb paths)
# shellcheck disable=SC1090
source "$RCVFIX_UPGRADE"
need "$RCVFIX_BIN/lowat" "$RCVFIX_BIN/sockopt" "${OLD_DEBS[@]}" "${NEW_DEBS[@]}"
rcvfix_unload

# --- a writable root -----------------------------------------------------------

top=/run/rcvfix-upgrade-$$
root=$top/root
cleanup_root() {
	[[ -d $top ]] || return 0
	umount -R "$root" 2> /dev/null || umount -R -l "$root"
	umount "$top" 2> /dev/null || umount -l "$top"
	rmdir "$top"
}
on_exit cleanup_root
modprobe overlay || skip "no overlayfs in this kernel"
mkdir -p "$top"
if ! mount -t tmpfs -o size=900m,mode=755 rcvfix-upgrade "$top" ||
	! mkdir "$top/upper" "$top/work" "$root" ||
	! mount -t overlay overlay \
		-o "lowerdir=/,upperdir=$top/upper,workdir=$top/work" "$root"; then
	skip "cannot mount an overlay on /"
fi
# /run and /tmp without what is mounted under them (the overlay itself
# lives under /run)
for d in proc sys dev run tmp; do
	bind=--rbind
	[[ $d != run && $d != tmp ]] || bind=--bind
	mount "$bind" "/$d" "$root/$d" || skip "cannot bind /$d into the overlay"
done
# in_root CMD...: CMD in the writable root, as a root shell runs it.
in_root() {
	chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C.UTF-8 TERM=dumb "$@"
}
# pp_root CMD...: in_root, the command and its output shown as comments,
# status kept.
pp_root() {
	local out st=0
	out=$(in_root "$@" < /dev/null 2>&1) || st=$?
	echo "# + $* (status $st)"
	tail -n 15 <<< "$out" | sed 's/^/#   /'
	return "$st"
}
deb_version() {
	in_root dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2> /dev/null
}
loaded_srcversion() { cat /sys/module/rcvfix/srcversion 2> /dev/null; }
[[ -z $(deb_version rcvfix-dkms) ]] ||
	skip "rcvfix-dkms is installed on the host: the upgrade needs a clean root"
ok "a writable root: overlay of / on tmpfs, /proc /sys /dev /run /tmp bound"

# --- the last release, installed and enabled at boot ---------------------------

t0=$SECONDS
check "apt install $OLD_VERSION's packages" pp_root apt install -y "${OLD_DEBS[@]}"
echo "# apt install of $OLD_VERSION (dkms build): $((SECONDS - t0)) s"
check_eq "dpkg: rcvfix-dkms $OLD_VERSION installed" "installed $OLD_VERSION" \
	"$(deb_version rcvfix-dkms)"
check_eq "dkms built $OLD_VERSION for $KVER" "$OLD_VERSION" \
	"$(in_root modinfo -k "$KVER" -F version rcvfix 2>&1)"
old_src=$(in_root modinfo -k "$KVER" -F srcversion rcvfix 2> /dev/null)
check "the $OLD_VERSION build has a srcversion" test -n "$old_src"

# What an operator does to enable the fix at boot (packaging/README.md).
check "uncomment the shipped /etc/modprobe.d/rcvfix.conf" in_root \
	sed -i 's/^#\(options rcvfix .*\)/\1/' /etc/modprobe.d/rcvfix.conf
check_eq "modprobe.d says default_enable=1" "options rcvfix default_enable=1" \
	"$(grep -v '^[[:space:]]*\(#\|$\)' "$root/etc/modprobe.d/rcvfix.conf")"
check "modprobe rcvfix ($OLD_VERSION)" pp_root modprobe rcvfix
check_eq "$OLD_VERSION loaded: its srcversion" "$old_src" "$(loaded_srcversion)"
check_eq "$OLD_VERSION: /proc/net/rcvfix version" "$OLD_VERSION" \
	"$(rcvfix_status version)"
check_eq "$OLD_VERSION: net.rcvfix.enable 1 from modprobe.d" 1 \
	"$(cat /proc/sys/net/rcvfix/enable 2>&1)"

# --- traffic: a TCP and an MPTCP stream, each byte checked ---------------------

client_server up 77
mptcp_client_server "4096 131072 6291456"
check_eq "the fix is on in the traffic's namespaces (default_enable)" "1 1" \
	"$(rcvfix_enabled "$cns") $(rcvfix_enabled "$sns")"
stop=/tmp/rcvfix-upgrade-stop-$$
rm -f "$stop"
declare -A recv_pid send_pid
# stream NAME PORT [-m]: a paced sender in $cns (16 KiB every 20 ms: each
# stream's share of the emulated CPU slows the dkms build less) until
# $stop exists, its receiver in $sns, which checks every byte.
stream() {
	local log=/tmp/rcvfix-upgrade-$1-$$ name=$1 port=$2
	shift 2
	in_ns "$sns" "$RCVFIX_BIN/lowat" recv -a 10.99.77.2 -p "$port" "$@" \
		-l 65536 -T "$(scaled 4800)" > "$log.recv" 2>&1 &
	recv_pid[$name]=$!
	wait_for "$log.recv" listening 20 ||
		{ fail "$name receiver listens" "$(cat "$log.recv")"; return 1; }
	in_ns "$cns" "$RCVFIX_BIN/lowat" send -a 10.99.77.2 -p "$port" "$@" \
		-S "$stop" -c 16384 -g 20000 -T "$(scaled 4800)" > "$log.send" 2>&1 &
	send_pid[$name]=$!
	ok "$name stream started"
}
streams_alive() {	# streams_alive: every sender and receiver still runs
	local n
	for n in tcp mptcp; do
		kill -0 "${recv_pid[$n]}" 2> /dev/null &&
			kill -0 "${send_pid[$n]}" 2> /dev/null || return 1
	done
}
on_exit "touch $stop; kill ${recv_pid[*]:-} ${send_pid[*]:-} 2> /dev/null"
stream tcp 7701
stream mptcp 7702 -m
check "both streams established" wait_eq 2 bash -c \
	"ip netns exec '$sns' ss -Htn state established '( sport = :7701 or sport = :7702 )' | wc -l"

# --- the upgrade, as docs/operations.md "Upgrading" says ------------------------

t0=$SECONDS
check "apt install $NEW_VERSION's packages" pp_root apt install -y "${NEW_DEBS[@]}"
echo "# apt install of $NEW_VERSION (dkms build): $((SECONDS - t0)) s"
check_eq "dpkg: rcvfix-dkms $NEW_VERSION installed" "installed $NEW_VERSION" \
	"$(deb_version rcvfix-dkms)"
check_eq "dpkg: rcvfix-tools $NEW_VERSION installed" "installed $NEW_VERSION" \
	"$(deb_version rcvfix-tools)"
check_eq "dpkg's log: both packages upgraded from $OLD_VERSION" 2 \
	"$(grep -cE " upgrade rcvfix-(dkms|tools):[a-z0-9]+ $OLD_VERSION $NEW_VERSION\$" \
		"$root/var/log/dpkg.log")"
check_eq "dkms status: $NEW_VERSION installed for $KVER, nothing else" \
	"rcvfix/$NEW_VERSION, $KVER, $(uname -m): installed" \
	"$(in_root dkms status rcvfix 2> /dev/null)"
check_eq "the $OLD_VERSION build and sources are gone" "" \
	"$(cd "$root" && ls -d "var/lib/dkms/rcvfix/$OLD_VERSION" "usr/src/rcvfix-$OLD_VERSION" 2> /dev/null)"
check_eq "modinfo: $NEW_VERSION on disk for $KVER" "$NEW_VERSION" \
	"$(in_root modinfo -k "$KVER" -F version rcvfix 2>&1)"
new_src=$(in_root modinfo -k "$KVER" -F srcversion rcvfix 2> /dev/null)
check "the $NEW_VERSION build has a srcversion" test -n "$new_src"
check_not "the new build's srcversion differs from the old's ($old_src)" \
	test "$new_src" = "$old_src"
check_eq "still loaded: the $OLD_VERSION module" "$old_src" "$(loaded_srcversion)"
check "the streams still run" streams_alive

t0=$SECONDS
check "modprobe -r rcvfix" pp_root modprobe -r rcvfix
check "modprobe rcvfix" pp_root modprobe rcvfix
echo "# module replaced in $((SECONDS - t0)) s"
check_eq "loaded: the $NEW_VERSION build (srcversion)" "$new_src" \
	"$(loaded_srcversion)"
check_eq "/proc/net/rcvfix: version $NEW_VERSION" "$NEW_VERSION" \
	"$(rcvfix_status version)"
check_eq "/proc/net/rcvfix: srcversion of the new build" "$new_src" \
	"$(rcvfix_status srcversion)"
check_eq "net.rcvfix.enable 1 again, from modprobe.d" 1 \
	"$(cat /proc/sys/net/rcvfix/enable 2>&1)"
check_eq "... and in the traffic's namespaces" "1 1" \
	"$(rcvfix_enabled "$cns") $(rcvfix_enabled "$sns")"
check_eq "rcvfixctl --version" "rcvfixctl $NEW_VERSION" \
	"$(in_root rcvfixctl --version 2>&1)"
check_eq "rcvfixctl --json status: version and srcversion" \
	"$NEW_VERSION $new_src" \
	"$(in_root rcvfixctl --json status | jq -r '"\(.module.version) \(.module.srcversion)"')"
check "the streams still run after the reload" streams_alive

# Stop the senders; each receiver must have read every byte sent, intact.
touch "$stop"
for n in tcp mptcp; do
	st=0
	wait "${send_pid[$n]}" || st=$?
	check_eq "$n sender: ended well" 0 "$st"
	st=0
	wait "${recv_pid[$n]}" || st=$?
	check_eq "$n receiver: every byte intact (exit status)" 0 "$st"
	log=/tmp/rcvfix-upgrade-$n-$$
	sent=$(sed -n 's/^sent=\([0-9]*\) .*/\1/p' "$log.send")
	received=$(kv bytes "$(grep '^lowat=' "$log.recv")")
	echo "# $n: sent ${sent:-?} bytes, received ${received:-?}"
	check "$n: bytes flowed" test "${sent:-0}" -gt 0
	check_eq "$n: every byte sent was received" "${sent:-none}" "${received:-none}"
done

# --- removal -------------------------------------------------------------------

check "modprobe -r rcvfix" pp_root modprobe -r rcvfix
check "apt purge rcvfix-dkms rcvfix-tools" pp_root apt purge -y rcvfix-dkms rcvfix-tools
check_eq "dpkg: nothing of rcvfix left" "" \
	"$(in_root dpkg-query -W -f='${db:Status-Status}\n' 'rcvfix*' 2> /dev/null | grep -v '^not-installed$')"
check_eq "purged: no /usr/src/rcvfix-*, /var/lib/dkms/rcvfix, modprobe.d file, rcvfixctl" "" \
	"$(cd "$root" && ls -d usr/src/rcvfix-* var/lib/dkms/rcvfix etc/modprobe.d/rcvfix.conf \
		etc/modules-load.d/rcvfix.conf usr/sbin/rcvfixctl usr/bin/rcvfix-bench 2> /dev/null)"
check_eq "purged: no rcvfix.ko under /lib/modules" "" \
	"$(find "$root/lib/modules" -name 'rcvfix.ko*' 2> /dev/null)"

done_testing
