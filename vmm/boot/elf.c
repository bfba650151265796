// SPDX-License-Identifier: MIT
/*
 * ELF64 parsing for PVH kernels (vmm/boot/elf.h): header and program
 * header checks, the PVH entry note, loading PT_LOAD segments; every offset
 * from the untrusted file is bounds-checked first.
 */
#include "vmm/boot/elf.h"
#include "util/log.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

bool elf_is_elf(const void *buf, size_t len)
{
	return len >= SELFMAG && !memcmp(buf, ELFMAG, SELFMAG);
}

int elf_check(const void *buf, size_t len)
{
	const Elf64_Ehdr *eh = buf;

	if (len < sizeof(*eh) || !elf_is_elf(buf, len)) {
		pr_err("kernel: ELF header truncated (%zu bytes)", len);
		return -ENOEXEC;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64) {
		pr_err("kernel: ELF is not 64-bit little-endian x86-64 (class %u, data %u, machine %u)",
		       eh->e_ident[EI_CLASS], eh->e_ident[EI_DATA], eh->e_machine);
		return -ENOEXEC;
	}
	if (eh->e_type != ET_EXEC) {
		pr_err("kernel: ELF e_type is %u, expected an executable (ET_EXEC)", eh->e_type);
		return -ENOEXEC;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum) {
		pr_err("kernel: ELF e_phentsize %u / e_phnum %u: expected %zu-byte program headers",
		       eh->e_phentsize, eh->e_phnum, sizeof(Elf64_Phdr));
		return -ENOEXEC;
	}
	if (eh->e_phoff > len || (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len - eh->e_phoff) {
		pr_err("kernel: ELF program headers (e_phoff %#llx, %u entries) extend past the file end (%zu bytes)",
		       (unsigned long long)eh->e_phoff, eh->e_phnum, len);
		return -ENOEXEC;
	}
	return 0;
}

/* Copied out: a hostile e_phoff need not be aligned. */
static Elf64_Phdr phdr(const void *buf, unsigned int i)
{
	const Elf64_Ehdr *eh = buf;
	Elf64_Phdr ph;

	memcpy(&ph, (const uint8_t *)buf + eh->e_phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
	return ph;
}

/* Does the segment's file range lie within the file? */
static bool in_file(const Elf64_Phdr *ph, size_t len)
{
	return ph->p_offset <= len && ph->p_filesz <= len - ph->p_offset;
}

static uint64_t align4(uint64_t v)
{
	return (v + 3) & ~3ULL;
}

/* Scan one PT_NOTE segment; 0 with *entry set, -ENOENT if not there, -ENOEXEC if malformed. */
static int scan_notes(const uint8_t *p, uint64_t size, uint32_t *entry)
{
	uint64_t off = 0;

	while (size - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr n;
		const Elf64_Nhdr *nh = &n;
		uint64_t name_off, desc_off, next;

		memcpy(&n, p + off, sizeof(n));
		name_off = off + sizeof(n);
		desc_off = name_off + align4(n.n_namesz);
		next = desc_off + align4(n.n_descsz);

		if (desc_off > size || next > size) {
			pr_err("kernel: ELF note at segment offset %#llx (namesz %u, descsz %u) overruns its PT_NOTE segment",
			       (unsigned long long)off, nh->n_namesz, nh->n_descsz);
			return -ENOEXEC;
		}
		if (nh->n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh->n_namesz == 4 &&
		    !memcmp(p + name_off, "Xen", 4)) {
			uint64_t v;

			if (nh->n_descsz == 4) {
				uint32_t v32;

				memcpy(&v32, p + desc_off, 4);
				v = v32;
			} else if (nh->n_descsz == 8) {
				memcpy(&v, p + desc_off, 8);
			} else {
				pr_err("kernel: PVH entry note has %u bytes of value, expected 4 or 8",
				       nh->n_descsz);
				return -ENOEXEC;
			}
			if (v > UINT32_MAX) {
				pr_err("kernel: PVH entry %#llx is above 4 GiB (it is a 32-bit entry)",
				       (unsigned long long)v);
				return -ENOEXEC;
			}
			*entry = (uint32_t)v;
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}

int elf_pvh_entry(const void *buf, size_t len, uint32_t *entry)
{
	const Elf64_Ehdr *eh = buf;
	int ret = elf_check(buf, len);

	if (ret)
		return ret;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr p = phdr(buf, i);
		const Elf64_Phdr *ph = &p;

		if (ph->p_type != PT_NOTE)
			continue;
		if (!in_file(ph, len)) {
			pr_err("kernel: ELF PT_NOTE segment %u (offset %#llx, size %#llx) extends past the file end",
			       i, (unsigned long long)ph->p_offset, (unsigned long long)ph->p_filesz);
			return -ENOEXEC;
		}
		ret = scan_notes((const uint8_t *)buf + ph->p_offset, ph->p_filesz, entry);
		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

int elf_load(const void *buf, size_t len, const struct guest_mem *mem, uint64_t min_paddr,
	     uint64_t *end)
{
	const Elf64_Ehdr *eh = buf;
	uint64_t top = 0;
	unsigned int loaded = 0;
	int ret = elf_check(buf, len);

	if (ret)
		return ret;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr p = phdr(buf, i);
		const Elf64_Phdr *ph = &p;
		uint8_t *dst;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!in_file(ph, len) || ph->p_filesz > ph->p_memsz) {
			pr_err("kernel: ELF PT_LOAD segment %u (offset %#llx, filesz %#llx, memsz %#llx) is outside the file or larger on disk than in memory",
			       i, (unsigned long long)ph->p_offset, (unsigned long long)ph->p_filesz,
			       (unsigned long long)ph->p_memsz);
			return -ENOEXEC;
		}
		if (ph->p_paddr < min_paddr) {
			pr_err("kernel: ELF PT_LOAD segment %u at %#llx is below %#llx, where capvisor keeps boot data",
			       i, (unsigned long long)ph->p_paddr, (unsigned long long)min_paddr);
			return -EINVAL;
		}
		dst = guest_mem_ptr(mem, ph->p_paddr, ph->p_memsz);
		if (!dst) {
			pr_err("kernel: ELF PT_LOAD segment %u at %#llx (%#llx bytes) does not fit in guest RAM; use a larger --mem",
			       i, (unsigned long long)ph->p_paddr, (unsigned long long)ph->p_memsz);
			return -EINVAL;
		}
		memcpy(dst, (const uint8_t *)buf + ph->p_offset, ph->p_filesz);
		memset(dst + ph->p_filesz, 0, ph->p_memsz - ph->p_filesz);
		if (ph->p_paddr + ph->p_memsz > top)
			top = ph->p_paddr + ph->p_memsz;
		loaded++;
	}
	if (!loaded) {
		pr_err("kernel: ELF has no PT_LOAD segment");
		return -ENOEXEC;
	}
	*end = top;
	return 0;
}
