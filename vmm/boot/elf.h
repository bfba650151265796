/* SPDX-License-Identifier: MIT */
/*
 * ELF64 kernels with a Xen PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY): Linux's
 * vmlinux with CONFIG_PVH and capvisor's test guest. The file is untrusted:
 * every offset and size is checked before use.
 */
#ifndef CAPVISOR_ELF_H
#define CAPVISOR_ELF_H

#include "vmm/kvm/e820.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XEN_ELFNOTE_PHYS32_ENTRY 18

/* True when buf starts with an ELF magic (then it must be a valid ELF64 x86-64). */
bool elf_is_elf(const void *buf, size_t len);
/* Check the header and the program header table; -ENOEXEC with a message. */
int elf_check(const void *buf, size_t len);
/* The 32-bit PVH entry point from the PT_NOTE segments; -ENOENT when absent. */
int elf_pvh_entry(const void *buf, size_t len, uint32_t *entry);
/*
 * Copy every PT_LOAD segment to p_paddr (zero-filling up to p_memsz); -EINVAL
 * when one does not fit guest RAM or starts below min_paddr. *end gets the
 * highest address loaded.
 */
int elf_load(const void *buf, size_t len, const struct guest_mem *mem, uint64_t min_paddr,
	     uint64_t *end);

#endif
