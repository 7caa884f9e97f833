#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Sends one command to the QEMU monitor of a running guest (vm.sh gives
# each guest one) and prints the reply: to look inside a guest that went
# silent, e.g. every task's kernel stack on its console:
#   vm/monitor.sh 6.1.0-57-amd64 'sendkey alt-sysrq-t'
# Usage: monitor.sh KVER COMMAND [SLOT]   SLOT: test (default), cmd, shell,
#        or test-secureboot; RCVFIX_BUILD as for vm.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ $# -ge 2 && $# -le 3 ]] || die "usage: monitor.sh KVER COMMAND [SLOT]"
sock=$RCVFIX_BUILD/$1/run/${3:-test}-monitor.sock
[[ -S $sock ]] || die "$sock: no guest of $1 is running in slot ${3:-test}"
python3 - "$sock" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(2)
s.sendall(sys.argv[2].encode() + b"\n")
time.sleep(1)
out = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except socket.timeout:
    pass
sys.stdout.write(out.decode(errors="replace"))
PY
