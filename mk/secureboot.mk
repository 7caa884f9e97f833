# SPDX-License-Identifier: GPL-2.0
#
# rcvfix on UEFI Secure Boot hosts: a guest booted from OVMF with Secure
# Boot on, its db holding the kernel's signer and our test MOK
# (vm/secureboot.sh), runs tests/guest/76-secure-boot.t
# (vm/check-secureboot.sh). Part of check-all. The firmware variables are
# written with python3-virt-firmware, which Debian 12 lacks: it runs in the
# Debian 13 chroot of the newest line (made if missing).

# The kernels: Debian 12's 6.1 and 6.12 (signed images from the archive).
KVERS_SECUREBOOT ?= $(KVER_61) $(KVER_612)
DEB_SECUREBOOT := ovmf openssl debootstrap

deps-secureboot:
	@$(HARNESS)/deps.sh $(DEB_SECUREBOOT)

check-secureboot: deps deps-secureboot tools progs \
		$(addprefix kbuild-,$(KVERS_SECUREBOOT))
	@$(HARNESS)/check-secureboot.sh $(KVERS_SECUREBOOT)

check-all: check-secureboot

help-secureboot:
	@echo "make check-secureboot   76-secure-boot.t in a guest booted with UEFI Secure Boot"
	@echo "                        (OVMF; unsigned rcvfix refused, a MOK-signed one loads):"
	@echo "                        $(KVERS_SECUREBOOT)"

.PHONY: deps-secureboot check-secureboot help-secureboot
