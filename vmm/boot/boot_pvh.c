// SPDX-License-Identifier: MIT
/*
 * Xen PVH boot: load the ELF's PT_LOAD segments at their physical addresses,
 * describe the VM in struct hvm_start_info (version 1, with the memory map),
 * and enter at the PHYS32_ENTRY note in flat 32-bit protected mode, paging
 * off, EBX = &start_info (xen/include/public/arch-x86/hvm/start_info.h).
 */
#include "vmm/boot/boot.h"
#include "vmm/boot/boot_pvh.h"
#include "vmm/boot/elf.h"
#include "capvisor/layout.h"
#include "util/log.h"

#include <errno.h>
#include <string.h>

_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info is 56 bytes");
_Static_assert(sizeof(struct hvm_modlist_entry) == 32, "hvm_modlist_entry is 32 bytes");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "memmap entry is 24 bytes");
_Static_assert(LAYOUT_PVH_START_INFO + sizeof(struct hvm_start_info) <= LAYOUT_PVH_MODLIST,
	       "start_info overlaps the module list");
_Static_assert(LAYOUT_PVH_MODLIST + sizeof(struct hvm_modlist_entry) <= LAYOUT_PVH_MEMMAP,
	       "module list overlaps the memory map");
_Static_assert(LAYOUT_PVH_MEMMAP + E820_MAX_ENTRIES * sizeof(struct hvm_memmap_table_entry) <=
	       LAYOUT_ZERO_PAGE, "memory map overlaps the zero page");

static int pvh_fill_start_info(const struct boot_input *in, uint64_t kernel_end)
{
	struct hvm_start_info *si = guest_mem_ptr(in->mem, LAYOUT_PVH_START_INFO, sizeof(*si));
	struct hvm_memmap_table_entry *mm;
	uint64_t cmdline, cmdline_len;
	int ret;

	mm = guest_mem_ptr(in->mem, LAYOUT_PVH_MEMMAP, in->e820->nr * sizeof(*mm));
	if (!si || !mm)
		return -EINVAL;
	ret = boot_put_cmdline(in, LAYOUT_CMDLINE_MAX - 1, &cmdline, &cmdline_len);
	if (ret)
		return ret;
	memset(si, 0, sizeof(*si));
	si->magic = HVM_START_MAGIC;
	si->version = 1;
	si->cmdline_paddr = cmdline;
	si->rsdp_paddr = in->rsdp_gpa;
	si->memmap_paddr = LAYOUT_PVH_MEMMAP;
	si->memmap_entries = in->e820->nr;
	for (unsigned int i = 0; i < in->e820->nr; i++)
		mm[i] = (struct hvm_memmap_table_entry){
			.addr = in->e820->entries[i].addr,
			.size = in->e820->entries[i].size,
			.type = in->e820->entries[i].type,
		};
	if (in->initrd) {
		struct hvm_modlist_entry *mod =
			guest_mem_ptr(in->mem, LAYOUT_PVH_MODLIST, sizeof(*mod));
		uint64_t gpa;

		/* PVH entry runs with paging off: the module must be below 4 GiB. */
		ret = boot_put_initrd(in, kernel_end, LAYOUT_MMIO_HOLE_START, &gpa);
		if (ret)
			return ret;
		memset(mod, 0, sizeof(*mod));
		mod->paddr = gpa;
		mod->size = in->initrd_len;
		si->nr_modules = 1;
		si->modlist_paddr = LAYOUT_PVH_MODLIST;
	}
	return 0;
}

int boot_pvh(const struct boot_input *in, struct boot_entry *out)
{
	uint64_t kernel_end;
	uint32_t entry;
	int ret;

	ret = elf_pvh_entry(in->kernel, in->kernel_len, &entry);
	if (ret == -ENOENT) {
		pr_err("kernel: ELF has no Xen PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY); build Linux with CONFIG_PVH");
		return -ENOEXEC;
	}
	if (ret)
		return ret;
	ret = elf_load(in->kernel, in->kernel_len, in->mem, LAYOUT_HIGH_RAM, &kernel_end);
	if (ret)
		return ret;
	if (!guest_mem_ptr(in->mem, entry, 1)) {
		pr_err("kernel: PVH entry %#x is not in guest RAM", entry);
		return -ENOEXEC;
	}
	ret = pvh_fill_start_info(in, kernel_end);
	if (ret)
		return ret;
	*out = (struct boot_entry){
		.mode = BOOT_PROT32,
		.rip = entry,
		.rbx = LAYOUT_PVH_START_INFO,
	};
	pr_debug("PVH kernel: entry %#x, loaded up to %#llx", entry, (unsigned long long)kernel_end);
	return 0;
}
