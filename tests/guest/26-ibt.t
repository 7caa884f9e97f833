#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every part of the fix on the CPUs fleets run (issue 58). x86 kernels
# built with IBT (Debian's 6.12 and 7.x) seal at boot the entry (ENDBR64)
# of every function whose address they never take; an indirect call there
# traps on a CPU that enforces IBT, and QEMU's TCG enforces nothing. So:
#  1. Every kernel function rcvfix calls through a pointer, as it reports
#     them (indirect_calls), starts with ENDBR64: read from /proc/kcore,
#     not from rcvfix. mptcp_data_ready and mptcp_update_rcv_data_fin
#     (sealed there) are not among them; no load line says "sealed"; every
#     part is in force.
#  2. Every refusal path, through the test switch refuse_hooks= (rcvfix
#     acts as on a host that refuses the hook): the part that needs the
#     hook says off and why, the targets drop what depends on it, and no
#     other part acts in a way that needs it: with the DATA_FIN placement
#     off where the kernel needs it (6.12), MPTCP sockets keep stock's lock
#     while TCP keeps the rule, and a fallen-back MPTCP client that
#     reconnects gets every byte (test 25's cell that lost one on 6.12).
#  3. A required hook refused: the load fails and says which.
# make check-refused runs tests 25 and 43 whole with each MPTCP hook refused.
source "$RCVFIX_REPO/tests/guest/lib.sh"
need "$RCVFIX_KO" "$RCVFIX_BIN/sockopt" "$RCVFIX_BIN/reconnect"

rcvfix_unload
"$RCVFIX_BIN/sockopt" -p mptcp get > /dev/null 2>&1 ||
	skip "no MPTCP sockets on this kernel"
# The kernel has IBT where its IBT selftest exists (CONFIG_X86_KERNEL_IBT).
ibt=0
grep -qE ' [tT] ibt_selftest$' /proc/kallsyms && ibt=1
echo "# $(uname -r): kernel IBT $ibt"

# first4 NAME: the first 4 bytes of the kernel function NAME, in hex, from
# /proc/kcore at its /proc/kallsyms address ("" if it has not one address).
first4() {
	python3 - "$1" << 'EOF'
import struct, sys
addrs = [int(l.split()[0], 16) for l in open('/proc/kallsyms')
         if l.split()[1] in 'tT' and l.split()[2] == sys.argv[1]]
if len(addrs) != 1:
    sys.exit(0)
with open('/proc/kcore', 'rb') as f:
    eh = f.read(64)
    phoff, = struct.unpack_from('<Q', eh, 32)
    phentsize, phnum = struct.unpack_from('<HH', eh, 54)
    f.seek(phoff)
    ph = f.read(phentsize * phnum)
    for i in range(phnum):
        typ, _, off, vaddr, _, _, memsz, _ = struct.unpack_from('<IIQQQQQQ', ph, i * phentsize)
        if typ == 1 and vaddr <= addrs[0] < vaddr + memsz:
            f.seek(off + addrs[0] - vaddr)
            print(f.read(4).hex())
            break
EOF
}

ns=$(netns_new ibt) || skip "cannot create a namespace"
ns_write /proc/sys/net/ipv4/tcp_rmem "4096 131072 6291456" "$ns"
ns_write /proc/sys/net/mptcp/enabled 1 "$ns"

# 1. The default load.
dmesg_mark default
rcvfix_load || { fail "load rcvfix"; done_testing; }
log=$(dmesg_since_mark default)
calls=$(rcvfix_status indirect_calls)
targets=$(rcvfix_status targets)
echo "# targets $targets"
echo "# indirect_calls $calls"
echo "# $(grep -o 'parts: .*' <<< "$log")"
check_not "no load line names a sealed entry" grep -q sealed <<< "$log"
for part in rcvbuf_mptcp mptcp_data_fin rcvlowat_mptcp; do
	check_eq "$part in force" in-force "$(rcvfix_status $part)"
done
check "rcvfix calls some kernel function through a pointer" \
	test "$calls" != none
for f in subflow_data_ready subflow_state_change mptcp_poll mptcp_release_cb; do
	check "$f: hooked" grep -q ",$f," <<< ",$targets,"
	check "$f: among the functions called through a pointer" \
		grep -q ",$f:" <<< ",$calls"
done
for f in mptcp_data_ready mptcp_update_rcv_data_fin; do
	check_not "$f: never called through a pointer" \
		grep -qE "(^|,)$f:" <<< "$calls"
done
for c in ${calls//,/ }; do
	f=${c%%:*}
	if ((ibt)); then
		check_eq "$f: rcvfix found ENDBR64 at its entry" endbr64 "${c#*:}"
		check_eq "$f: /proc/kcore has ENDBR64 (f30f1efa) at its entry" \
			f30f1efa "$(first4 "$f")"
	else
		check_eq "$f: no IBT in this kernel (said so)" no-ibt "${c#*:}"
	fi
done
if ((ibt)); then
	# The check above can fail: the kernel sealed these.
	for f in mptcp_data_ready mptcp_update_rcv_data_fin; do
		b=$(first4 "$f")
		check "$f: sealed by the kernel (no ENDBR64 at its entry: $b)" \
			test -n "$b" -a "$b" != f30f1efa
	done
fi

# lock_of PROTO: SO_BUF_LOCK after SO_RCVBUF 262144 (doubled: above
# tcp_rmem[1]), fix enabled: 0 where the rule holds, 2 where stock locks.
lock_of() {
	in_ns "$ns" "$RCVFIX_BIN/sockopt" -p "$1" rcvbuf=262144 |
		awk -F'lock=' '/op=rcvbuf/ { print $2 + 0 }'
}

# 2. Each MPTCP hook refused.
lowat_hooks="subflow_data_ready subflow_state_change mptcp_poll mptcp_release_cb mptcp_set_rcvlowat"
for h in mptcp_update_rcv_data_fin mptcp_sol_socket_sync_intval $lowat_hooks; do
	grep -q "\b$h\b" <<< "$targets" || continue
	rcvfix_unload
	dmesg_mark "refuse $h"
	if ! rcvfix_load refuse_hooks=$h; then
		fail "refuse_hooks=$h: rcvfix loads without it"
		continue
	fi
	log=$(dmesg_since_mark "refuse $h")
	t=$(rcvfix_status targets)
	fin=$(rcvfix_status mptcp_data_fin) rb=$(rcvfix_status rcvbuf_mptcp)
	lw=$(rcvfix_status rcvlowat_mptcp)
	echo "# refuse_hooks=$h: rcvbuf_mptcp $rb, mptcp_data_fin $fin, rcvlowat_mptcp $lw; targets $t"
	check "refuse_hooks=$h: the log says it was refused" \
		grep -q "$h: refused by refuse_hooks=" <<< "$log"
	check_not "refuse_hooks=$h: not among the targets" grep -q "\b$h\b" <<< "$t"
	rcvfix_enable 1 "$ns"
	check_eq "refuse_hooks=$h: TCP keeps the rule (SO_BUF_LOCK 0)" 0 "$(lock_of tcp)"
	case $h in
	mptcp_update_rcv_data_fin)
		if [[ $(uname -r) == 6.12.* ]]; then
			# subflow_state_change() records it with data queued
			check_eq "refuse_hooks=$h: DATA_FIN placement off, and why" \
				off:refused-by-refuse_hooks "$fin"
		fi
		if [[ $fin == not-needed ]]; then
			check_eq "refuse_hooks=$h: not needed here: the MPTCP rule stays" \
				in-force "$rb"
			check_eq "refuse_hooks=$h: MPTCP unlocked (SO_BUF_LOCK 0)" 0 "$(lock_of mptcp)"
		else
			check_eq "refuse_hooks=$h: the MPTCP rule off, for want of it" \
				off:needs-mptcp_data_fin "$rb"
			check_eq "refuse_hooks=$h: MPTCP keeps stock's lock (SO_BUF_LOCK 2)" \
				2 "$(lock_of mptcp)"
			check "refuse_hooks=$h: the log says MPTCP keeps the lock" \
				grep -q "MPTCP sockets keep the kernel's SO_RCVBUF (locked)" <<< "$log"
			check_not "refuse_hooks=$h: no MPTCP buffer hook left" \
				grep -qE '\b(mptcp_sol_socket_sync_intval|subflow_finish_connect|__inet_listen_sk)\b' <<< "$t"
			# test 25's cell that lost a byte on 6.12 without the placement
			out=$(in_ns "$ns" "$RCVFIX_BIN/reconnect" -c mptcp -s tcp \
				-R 65536 -r 2 -n 3 -b 1048576 -p 24590 \
				-T "$(scaled 100)" 2>&1)
			rc=$?
			check "refuse_hooks=$h: MPTCP client of a TCP server, SO_RCVBUF 65536, 2 x 3 connections: every byte intact ($(grep summary <<< "$out"))" \
				test $rc -eq 0
		fi
		check_eq "refuse_hooks=$h: SO_RCVLOWAT part unaffected" in-force "$lw"
		;;
	mptcp_sol_socket_sync_intval)
		check_eq "refuse_hooks=$h: the MPTCP rule off, and why" \
			off:refused-by-refuse_hooks "$rb"
		check_eq "refuse_hooks=$h: MPTCP keeps stock's lock (SO_BUF_LOCK 2)" \
			2 "$(lock_of mptcp)"
		check_not "refuse_hooks=$h: no DATA_FIN hook (it serves the MPTCP rule)" \
			grep -q mptcp_update_rcv_data_fin <<< "$t"
		check_eq "refuse_hooks=$h: ... said so" not-needed "$fin"
		check_eq "refuse_hooks=$h: SO_RCVLOWAT part unaffected" in-force "$lw"
		;;
	*)
		check_eq "refuse_hooks=$h: the SO_RCVLOWAT part off, and why" \
			off:refused-by-refuse_hooks "$lw"
		check_not "refuse_hooks=$h: none of its hooks left (all or none)" \
			grep -qE "\b(${lowat_hooks// /|})\b" <<< "$t"
		check "refuse_hooks=$h: rcvlowat_wakeup says the kernel's rule" \
			grep -qE 'mptcp:(native|kernel)$' <<< "$(rcvfix_status rcvlowat_wakeup)"
		check_eq "refuse_hooks=$h: the MPTCP rule unaffected" in-force "$rb"
		check_eq "refuse_hooks=$h: MPTCP unlocked (SO_BUF_LOCK 0)" 0 "$(lock_of mptcp)"
		;;
	esac
	rcvfix_enable 0 "$ns"
done

# 3. A hook the rule cannot do without, refused: no load, and why.
rcvfix_unload
dmesg_mark "refuse required"
if rcvfix_load refuse_hooks=sock_set_rcvbuf 2> /dev/null; then
	fail "refuse_hooks=sock_set_rcvbuf: the load fails"
	rcvfix_unload
else
	ok "refuse_hooks=sock_set_rcvbuf: the load fails"
fi
check "... and the log says which hook" \
	grep -q "cannot hook sock_set_rcvbuf: refused" <<< "$(dmesg_since_mark "refuse required")"

done_testing
