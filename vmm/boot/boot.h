/* SPDX-License-Identifier: MIT */
/*
 * Loading a kernel into guest memory. Two formats, detected from the file:
 * an ELF with a Xen PVH entry note (boot_pvh.c) and a Linux bzImage entered
 * through its 64-bit entry point (boot_bzimage.c). Both produce the initial
 * state of the boot vCPU; the other vCPUs wait for INIT/SIPI.
 */
#ifndef CAPVISOR_BOOT_H
#define CAPVISOR_BOOT_H

#include "vmm/kvm/e820.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum boot_mode {
	BOOT_REAL16,	/* real mode, CS = rip >> 4 (tests and tiny guests) */
	BOOT_PROT32,	/* flat 32-bit protected mode, paging off (PVH) */
	BOOT_LONG64,	/* 64-bit mode, identity-mapped (bzImage 64-bit entry) */
};

struct boot_entry {
	enum boot_mode mode;
	uint64_t rip;
	uint64_t rbx;	/* PVH: hvm_start_info */
	uint64_t rsi;	/* bzImage: boot_params */
	uint64_t cr3;	/* LONG64 */
	uint64_t gdt;	/* LONG64: GDT base (flat code 0x10, data 0x18) */
};

struct boot_input {
	const uint8_t *kernel;
	size_t kernel_len;
	const uint8_t *initrd;	/* NULL: none */
	size_t initrd_len;
	const char *cmdline;	/* NULL: empty */
	uint64_t rsdp_gpa;	/* 0: no ACPI */
	const struct e820_table *e820;
	const struct guest_mem *mem;
};

/* Which format the file is in; "unknown" files are rejected with a message. */
enum kernel_format { KERNEL_UNKNOWN, KERNEL_PVH_ELF, KERNEL_BZIMAGE };
enum kernel_format boot_detect(const uint8_t *kernel, size_t len);

/* Detect and load; 0 or -errno with a message naming the field. */
int boot_load(const struct boot_input *in, struct boot_entry *out);
int boot_pvh(const struct boot_input *in, struct boot_entry *out);
int boot_bzimage(const struct boot_input *in, struct boot_entry *out);

/* Shared helpers (boot_common.c). */
int boot_put_cmdline(const struct boot_input *in, uint64_t max_len, uint64_t *gpa, uint64_t *len);
/* Page-aligned, as high as possible below min(low RAM, limit), above kernel_end. */
int boot_put_initrd(const struct boot_input *in, uint64_t kernel_end, uint64_t limit,
		    uint64_t *gpa);
bool bzimage_detect(const uint8_t *kernel, size_t len);

#endif
