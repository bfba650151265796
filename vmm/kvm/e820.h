/* SPDX-License-Identifier: MIT */
/*
 * The guest's physical memory map (e820 types), built from the RAM size and
 * include/capvisor/layout.h, and the guest-memory view the boot code writes through.
 */
#ifndef CAPVISOR_E820_H
#define CAPVISOR_E820_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define E820_RAM	1
#define E820_RESERVED	2
#define E820_ACPI	3

/* Linux's boot_params holds at most 128; PVH has no limit but we never need more. */
#define E820_MAX_ENTRIES 16

struct e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
};

struct e820_table {
	unsigned int nr;
	struct e820_entry entries[E820_MAX_ENTRIES];
};

/*
 * Guest RAM as the host sees it: one host buffer, the first low_size bytes at
 * guest-physical 0, the rest (high_size) at LAYOUT_RAM_ABOVE_4G.
 */
struct guest_mem {
	uint8_t *host;
	uint64_t low_size;
	uint64_t high_size;
};

/* Split a RAM size around the MMIO hole. */
void guest_mem_split(uint64_t ram_size, uint64_t *low, uint64_t *high);
/* Host pointer for [gpa, gpa + len) if it lies entirely in RAM, else NULL. */
void *guest_mem_ptr(const struct guest_mem *mem, uint64_t gpa, uint64_t len);

/*
 * Build the map: low RAM up to the EBDA, the BIOS area reserved, the ACPI
 * tables' area, RAM from 1 MiB, the MMIO hole reserved, RAM above 4 GiB.
 */
void e820_build(struct e820_table *t, const struct guest_mem *mem);

#endif
