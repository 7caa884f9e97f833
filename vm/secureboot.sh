#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# UEFI Secure Boot for a guest (vm.sh with RCVFIX_SECURE_BOOT=1): the keys
# and the firmware variables that make a Debian kernel boot verified, lock
# itself down and trust a module key of ours, as a host whose operator
# enrolled dkms's MOK does.
#   build/secureboot/keys/   mok.key, mok.pub (DER), mok.pem: our test MOK,
#                            made as Debian's dkms makes /var/lib/dkms/mok.*;
#                            other.key, other.der: a key the guest never
#                            trusts
#   build/secureboot/KVER/   the kernel image's signer, extracted from it
#                            (Debian Secure Boot Signer ...), and vars.fd:
#                            OVMF's variables with a test PK and KEK, that
#                            signer and our MOK in db, Secure Boot on
# The kernel loads db into its platform keyring, which Debian's kernels
# accept for module signatures (kernel/module/signing.c falls back to
# VERIFY_USE_PLATFORM_KEYRING). A real host gets the MOK into the kernel
# through shim's MokListRT after `mokutil --import`; the guest boots the
# kernel without shim, so db stands in for it.
# The firmware is the host's ovmf package (Debian 12); its variables are
# written by virt-fw-vars and the image's signer read by pe-listsigs, both
# of python3-virt-firmware, which only Debian 13 has: they run in the
# Debian 13 chroot of the newest line (vm/chroot-kernel.sh tool).
# Usage: secureboot.sh prepare KVER   (cached; prints the vars.fd path)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LC_ALL=C

ovmf_vars=/usr/share/OVMF/OVMF_VARS_4M.fd
ovmf_code=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
top=$(realpath -m "$RCVFIX_BUILD/secureboot")
keys=$top/keys
# owner GUIDs of the db entries (any GUID will do; these name them)
debian_guid=8be4df61-93ca-11d2-aa0d-00e098032b8c
rcvfix_guid=0d3f1a52-6b2e-4c1f-9e1d-72636766697a

# tool CMD...: a python3-virt-firmware command in the newest line's chroot
tool() {
	"$HARNESS/chroot-kernel.sh" tool newest python3-virt-firmware "$@"
}

# make_key NAME CN: a self-signed RSA key pair as dkms makes its MOK
# (openssl req -x509, 2048 bits, the certificate in DER for sign-file).
make_key() {
	local name=$1 cn=$2
	[[ -s $keys/$name.key && -s $keys/$name.der ]] && return 0
	openssl req -new -x509 -nodes -days 36500 -subj "/CN=$cn/" \
		-newkey rsa:2048 -keyout "$keys/$name.key.tmp" \
		-outform DER -out "$keys/$name.der" 2> /dev/null ||
		die "openssl could not make the $name key"
	mv "$keys/$name.key.tmp" "$keys/$name.key"
}

# kernel_image KVER: the image vm.sh boots (build/KVER/kernel.env, else /boot)
kernel_image() {
	local RCVFIX_VMLINUZ=
	# shellcheck disable=SC1090,SC1091
	[[ ! -r $RCVFIX_BUILD/$1/kernel.env ]] || source "$RCVFIX_BUILD/$1/kernel.env"
	echo "${RCVFIX_VMLINUZ:-/boot/vmlinuz-$1}"
}

prepare() {
	local k=$1 d=$top/$1 vmlinuz signer
	[[ -r $ovmf_vars && -r $ovmf_code ]] ||
		die "$ovmf_code or $ovmf_vars missing: install ovmf (make deps-secureboot)"
	command -v openssl > /dev/null || die "openssl missing (make deps-secureboot)"
	vmlinuz=$(kernel_image "$k")
	[[ -r $vmlinuz ]] || die "$vmlinuz not readable: install linux-image-$k (make deps)"
	mkdir -p "$keys" "$d"
	exec 7> "$top/.lock"
	flock 7
	make_key mok "rcvfix test MOK"
	make_key other "rcvfix untrusted key"
	openssl x509 -inform DER -in "$keys/mok.der" -out "$keys/mok.pem"
	# dkms names the certificate mok.pub
	cp "$keys/mok.der" "$keys/mok.pub"
	if [[ -s $d/vars.fd && $d/vars.fd -nt $vmlinuz && $d/vars.fd -nt $keys/mok.der &&
		$d/vars.fd -nt $ovmf_vars ]]; then
		echo "$d/vars.fd"
		return
	fi
	rm -rf "$d/sig"
	mkdir -p "$d/sig"
	cp "$vmlinuz" "$d/sig/vmlinuz"
	tool bash -c 'cd "$1" && pe-listsigs -x vmlinuz' pe-listsigs "$d/sig" \
		> "$d/pe-listsigs.log" 2>&1 ||
		die "pe-listsigs failed on $vmlinuz (see $d/pe-listsigs.log)"
	# the signing certificate (pe-listsigs writes every certificate of the
	# signature, the signer's first)
	signer=$(sed -n 's/^#  *>>> \(.*\.pem\)$/\1/p' "$d/pe-listsigs.log" | head -n 1)
	[[ -n $signer && -s $d/sig/$signer ]] ||
		die "$vmlinuz has no Secure Boot signature (a Debian kernel from linux-image-$k is signed; see $d/pe-listsigs.log)"
	cp "$d/sig/$signer" "$d/signer.pem"
	cp "$ovmf_vars" "$d/sig/vars-in.fd"
	cp "$keys/mok.pem" "$d/sig/mok.pem"
	cp "$d/signer.pem" "$d/sig/signer.pem"
	tool virt-fw-vars -i "$d/sig/vars-in.fd" \
		--enroll-generate "rcvfix test platform" --no-microsoft \
		--add-db "$debian_guid" "$d/sig/signer.pem" \
		--add-db "$rcvfix_guid" "$d/sig/mok.pem" \
		--secure-boot -o "$d/sig/vars.fd" > "$d/virt-fw-vars.log" 2>&1 ||
		die "virt-fw-vars failed (see $d/virt-fw-vars.log)"
	mv "$d/sig/vars.fd" "$d/vars.fd"
	rm -rf "$d/sig"
	msg "Secure Boot variables for $k: db holds '$(openssl x509 -in "$d/signer.pem" -noout -subject | sed 's/.*CN *= *//')' and 'rcvfix test MOK'"
	echo "$d/vars.fd"
}

case ${1:-} in
prepare) [[ $# -eq 2 ]] || die "usage: secureboot.sh prepare KVER"; prepare "$2" ;;
*) die "usage: secureboot.sh prepare KVER" ;;
esac
