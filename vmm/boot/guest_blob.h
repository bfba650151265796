/* SPDX-License-Identifier: MIT */
/*
 * The embedded test guest (vmm/boot/guest_blob.S .incbin's the ELF built by
 * guest/guest.mk), the kernel `capvisor run` boots when --kernel is not
 * given.
 */
#ifndef CAPVISOR_GUEST_BLOB_H
#define CAPVISOR_GUEST_BLOB_H

#include <stdint.h>

extern const uint8_t capvisor_guest_elf[];
extern const uint8_t capvisor_guest_elf_end[];

#endif
