// SPDX-License-Identifier: MIT
/*
 * The guest's memory map (vmm/kvm/e820.h): the split of RAM around the
 * MMIO hole, the e820 table, and bounds-checked guest-memory pointers.
 */
#include "vmm/kvm/e820.h"
#include "capvisor/layout.h"

void guest_mem_split(uint64_t ram_size, uint64_t *low, uint64_t *high)
{
	*low = ram_size < LAYOUT_MMIO_HOLE_START ? ram_size : LAYOUT_MMIO_HOLE_START;
	*high = ram_size - *low;
}

void *guest_mem_ptr(const struct guest_mem *mem, uint64_t gpa, uint64_t len)
{
	/* Written so that no sum can overflow whatever gpa and len are. */
	if (gpa <= mem->low_size && len <= mem->low_size - gpa)
		return mem->host + gpa;
	if (gpa >= LAYOUT_RAM_ABOVE_4G && gpa - LAYOUT_RAM_ABOVE_4G <= mem->high_size &&
	    len <= mem->high_size - (gpa - LAYOUT_RAM_ABOVE_4G))
		return mem->host + mem->low_size + (gpa - LAYOUT_RAM_ABOVE_4G);
	return NULL;
}

static void add(struct e820_table *t, uint64_t start, uint64_t end, uint32_t type)
{
	if (end <= start || t->nr == E820_MAX_ENTRIES)
		return;
	t->entries[t->nr++] = (struct e820_entry){ .addr = start, .size = end - start, .type = type };
}

void e820_build(struct e820_table *t, const struct guest_mem *mem)
{
	t->nr = 0;
	add(t, 0, LAYOUT_EBDA_START, E820_RAM);
	add(t, LAYOUT_EBDA_START, LAYOUT_ACPI_BASE, E820_RESERVED);
	add(t, LAYOUT_ACPI_BASE, LAYOUT_ACPI_BASE + LAYOUT_ACPI_SIZE, E820_ACPI);
	add(t, LAYOUT_HIGH_RAM, mem->low_size, E820_RAM);
	add(t, LAYOUT_MMIO_HOLE_START, LAYOUT_MMIO_HOLE_END, E820_RESERVED);
	if (mem->high_size)
		add(t, LAYOUT_RAM_ABOVE_4G, LAYOUT_RAM_ABOVE_4G + mem->high_size, E820_RAM);
}

