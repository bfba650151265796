/* SPDX-License-Identifier: MIT */
/*
 * The PVH boot ABI (Xen's public start_info.h, a stable binary interface):
 * the structures capvisor writes for the guest. Declared here from the
 * documented layout so the build needs no Xen headers.
 */
#ifndef CAPVISOR_BOOT_PVH_H
#define CAPVISOR_BOOT_PVH_H

#include <stdint.h>

#define HVM_START_MAGIC 0x336ec578

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;		/* 1: has memmap_* */
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;		/* struct hvm_modlist_entry[] */
	uint64_t cmdline_paddr;		/* NUL-terminated */
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;		/* struct hvm_memmap_table_entry[] */
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;			/* e820 types */
	uint32_t reserved;
};

#endif
