// SPDX-License-Identifier: MIT
/* e820 map, guest memory bounds, PVH ELF parsing/loading, bzImage boot_params. */
#include "tests/unit/harness.h"
#include "vmm/boot/boot.h"
#include "vmm/boot/boot_pvh.h"
#include "vmm/boot/elf.h"
#include "capvisor/layout.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MEM_SIZE (32ULL << 20)

static struct guest_mem mem;
static struct e820_table e820;

static int boot_init(void)
{
	mem.host = calloc(1, MEM_SIZE);
	guest_mem_split(MEM_SIZE, &mem.low_size, &mem.high_size);
	e820_build(&e820, &mem);
	return mem.host ? 0 : -1;
}

static int boot_cleanup(void)
{
	free(mem.host);
	return 0;
}

static void test_e820_small_vm(void)
{
	CU_ASSERT_EQUAL(e820.nr, 5);
	CU_ASSERT_EQUAL(e820.entries[0].addr, 0);
	CU_ASSERT_EQUAL(e820.entries[0].size, LAYOUT_EBDA_START);
	CU_ASSERT_EQUAL(e820.entries[0].type, E820_RAM);
	CU_ASSERT_EQUAL(e820.entries[1].type, E820_RESERVED);
	CU_ASSERT_EQUAL(e820.entries[2].addr, LAYOUT_ACPI_BASE);
	CU_ASSERT_EQUAL(e820.entries[2].type, E820_ACPI);
	CU_ASSERT_EQUAL(e820.entries[3].addr, LAYOUT_HIGH_RAM);
	CU_ASSERT_EQUAL(e820.entries[3].addr + e820.entries[3].size, MEM_SIZE);
	CU_ASSERT_EQUAL(e820.entries[4].addr, LAYOUT_MMIO_HOLE_START);
	CU_ASSERT_EQUAL(e820.entries[4].type, E820_RESERVED);
	/* Sorted and non-overlapping. */
	for (unsigned int i = 1; i < e820.nr; i++)
		CU_ASSERT(e820.entries[i - 1].addr + e820.entries[i - 1].size <= e820.entries[i].addr);
}

static void test_e820_large_vm_splits_around_hole(void)
{
	struct guest_mem big = { 0 };
	struct e820_table t;
	uint64_t size = 5ULL << 30;

	guest_mem_split(size, &big.low_size, &big.high_size);
	CU_ASSERT_EQUAL(big.low_size, LAYOUT_MMIO_HOLE_START);
	CU_ASSERT_EQUAL(big.high_size, size - LAYOUT_MMIO_HOLE_START);
	e820_build(&t, &big);
	CU_ASSERT_EQUAL(t.nr, 6);
	CU_ASSERT_EQUAL(t.entries[3].addr + t.entries[3].size, LAYOUT_MMIO_HOLE_START);
	CU_ASSERT_EQUAL(t.entries[5].addr, LAYOUT_RAM_ABOVE_4G);
	CU_ASSERT_EQUAL(t.entries[5].size, size - LAYOUT_MMIO_HOLE_START);
	CU_ASSERT_EQUAL(t.entries[5].type, E820_RAM);
}

static void test_guest_mem_ptr_bounds(void)
{
	struct guest_mem m = { .host = (uint8_t *)0x10000, .low_size = 0x1000, .high_size = 0x2000 };

	CU_ASSERT_PTR_EQUAL(guest_mem_ptr(&m, 0, 0x1000), (void *)0x10000);
	CU_ASSERT_PTR_NULL(guest_mem_ptr(&m, 0, 0x1001));
	CU_ASSERT_PTR_NULL(guest_mem_ptr(&m, 0xfff, 2));
	CU_ASSERT_PTR_NULL(guest_mem_ptr(&m, 0x2000, 1));	/* between RAM blocks */
	CU_ASSERT_PTR_EQUAL(guest_mem_ptr(&m, LAYOUT_RAM_ABOVE_4G + 0x10, 0x10), (void *)0x11010);
	CU_ASSERT_PTR_NULL(guest_mem_ptr(&m, LAYOUT_RAM_ABOVE_4G + 0x1ff0, 0x11));
	/* No wrap-around whatever the numbers. */
	CU_ASSERT_PTR_NULL(guest_mem_ptr(&m, UINT64_MAX, 2));
	CU_ASSERT_PTR_NULL(guest_mem_ptr(&m, 0x10, UINT64_MAX));
	CU_ASSERT_PTR_NULL(guest_mem_ptr(&m, LAYOUT_RAM_ABOVE_4G + 1, UINT64_MAX));
}

/* A minimal ELF: header, 2 program headers (PT_LOAD, PT_NOTE), note, code. */
struct test_elf {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	struct {
		Elf64_Nhdr nh;
		char name[4];
		uint32_t entry;
	} note;
	uint8_t code[64];
};

static void make_elf(struct test_elf *e, uint64_t paddr)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->eh.e_ident, ELFMAG, SELFMAG);
	e->eh.e_ident[EI_CLASS] = ELFCLASS64;
	e->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	e->eh.e_type = ET_EXEC;
	e->eh.e_machine = EM_X86_64;
	e->eh.e_phoff = offsetof(struct test_elf, ph);
	e->eh.e_phentsize = sizeof(Elf64_Phdr);
	e->eh.e_phnum = 2;
	e->ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = offsetof(struct test_elf, code),
				 .p_paddr = paddr, .p_filesz = sizeof(e->code), .p_memsz = 0x1000 };
	e->ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = offsetof(struct test_elf, note),
				 .p_filesz = sizeof(e->note) };
	e->note.nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 4, .n_type = XEN_ELFNOTE_PHYS32_ENTRY };
	memcpy(e->note.name, "Xen", 4);
	e->note.entry = (uint32_t)paddr + 0x10;
	memset(e->code, 0x90, sizeof(e->code));
}

static void test_elf_pvh_note_found(void)
{
	struct test_elf e;
	uint32_t entry = 0;

	make_elf(&e, 0x200000);
	CU_ASSERT(elf_is_elf(&e, sizeof(e)));
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(e), &entry), 0);
	CU_ASSERT_EQUAL(entry, 0x200010);
}

static void test_elf_malformed_inputs_rejected(void)
{
	struct test_elf e;
	uint32_t entry;
	uint64_t end;

	make_elf(&e, 0x200000);
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(Elf64_Ehdr) - 1, &entry), -ENOEXEC);	/* truncated */
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(Elf64_Ehdr) + 10, &entry), -ENOEXEC);	/* phdrs cut */
	e.eh.e_phoff = UINT64_MAX - 8;
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(e), &entry), -ENOEXEC);
	make_elf(&e, 0x200000);
	e.eh.e_machine = EM_386;
	CU_ASSERT_EQUAL(elf_check(&e, sizeof(e)), -ENOEXEC);
	make_elf(&e, 0x200000);
	e.note.nh.n_descsz = 0x7fffffff;	/* note runs past its segment */
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(e), &entry), -ENOEXEC);
	make_elf(&e, 0x200000);
	e.note.nh.n_descsz = 3;			/* neither 4 nor 8 bytes */
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(e), &entry), -ENOEXEC);
	make_elf(&e, 0x200000);
	e.ph[1].p_filesz = UINT64_MAX;		/* PT_NOTE past the file end */
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(e), &entry), -ENOEXEC);
	make_elf(&e, 0x200000);
	e.note.nh.n_type = 1;			/* no PVH note at all */
	CU_ASSERT_EQUAL(elf_pvh_entry(&e, sizeof(e), &entry), -ENOENT);
	make_elf(&e, 0x200000);
	e.ph[0].p_filesz = 0x2000;		/* filesz > memsz and past the end */
	CU_ASSERT_EQUAL(elf_load(&e, sizeof(e), &mem, LAYOUT_HIGH_RAM, &end), -ENOEXEC);
	make_elf(&e, MEM_SIZE - 0x800);		/* memsz runs past RAM */
	CU_ASSERT_EQUAL(elf_load(&e, sizeof(e), &mem, LAYOUT_HIGH_RAM, &end), -EINVAL);
	make_elf(&e, UINT64_MAX - 0x10);	/* wraps around */
	CU_ASSERT_EQUAL(elf_load(&e, sizeof(e), &mem, LAYOUT_HIGH_RAM, &end), -EINVAL);
	make_elf(&e, 0x1000);			/* over capvisor's boot data */
	CU_ASSERT_EQUAL(elf_load(&e, sizeof(e), &mem, LAYOUT_HIGH_RAM, &end), -EINVAL);
}

static void test_pvh_boot_fills_start_info(void)
{
	struct test_elf e;
	static const uint8_t initrd[100] = { 1, 2, 3 };
	struct boot_input in = {
		.kernel = (const uint8_t *)&e, .kernel_len = sizeof(e),
		.initrd = initrd, .initrd_len = sizeof(initrd),
		.cmdline = "console=ttyS0 test=spin", .rsdp_gpa = 0xe0000,
		.e820 = &e820, .mem = &mem,
	};
	struct boot_entry out;
	struct hvm_start_info *si = (void *)(mem.host + LAYOUT_PVH_START_INFO);
	struct hvm_memmap_table_entry *mm;
	struct hvm_modlist_entry *mod;

	make_elf(&e, 0x200000);
	memset(mem.host, 0xcc, MEM_SIZE);
	CU_ASSERT_EQUAL_FATAL(boot_pvh(&in, &out), 0);
	CU_ASSERT_EQUAL(out.mode, BOOT_PROT32);
	CU_ASSERT_EQUAL(out.rip, 0x200010);
	CU_ASSERT_EQUAL(out.rbx, LAYOUT_PVH_START_INFO);
	/* Segment: file bytes, then zeroes up to p_memsz. */
	CU_ASSERT_EQUAL(mem.host[0x200000], 0x90);
	CU_ASSERT_EQUAL(mem.host[0x200000 + 64], 0);
	CU_ASSERT_EQUAL(mem.host[0x200fff], 0);
	CU_ASSERT_EQUAL(si->magic, HVM_START_MAGIC);
	CU_ASSERT_EQUAL(si->version, 1);
	CU_ASSERT_EQUAL(si->rsdp_paddr, 0xe0000);
	CU_ASSERT_STRING_EQUAL((char *)mem.host + si->cmdline_paddr, "console=ttyS0 test=spin");
	CU_ASSERT_EQUAL(si->memmap_entries, e820.nr);
	mm = (void *)(mem.host + si->memmap_paddr);
	for (unsigned int i = 0; i < e820.nr; i++) {
		CU_ASSERT_EQUAL(mm[i].addr, e820.entries[i].addr);
		CU_ASSERT_EQUAL(mm[i].size, e820.entries[i].size);
		CU_ASSERT_EQUAL(mm[i].type, e820.entries[i].type);
	}
	CU_ASSERT_EQUAL(si->nr_modules, 1);
	mod = (void *)(mem.host + si->modlist_paddr);
	CU_ASSERT_EQUAL(mod->size, sizeof(initrd));
	CU_ASSERT_EQUAL(mod->paddr % 4096, 0);
	CU_ASSERT(mod->paddr + mod->size <= MEM_SIZE);
	CU_ASSERT(mod->paddr >= 0x201000);
	CU_ASSERT_EQUAL(memcmp(mem.host + mod->paddr, initrd, sizeof(initrd)), 0);
}

static void test_pvh_rejects_oversized_cmdline_and_initrd(void)
{
	struct test_elf e;
	char *long_cmdline = malloc(LAYOUT_CMDLINE_MAX + 1);
	struct boot_input in = { .kernel = (const uint8_t *)&e, .kernel_len = sizeof(e),
				 .e820 = &e820, .mem = &mem };
	struct boot_entry out;

	make_elf(&e, 0x200000);
	memset(long_cmdline, 'a', LAYOUT_CMDLINE_MAX);
	long_cmdline[LAYOUT_CMDLINE_MAX] = 0;
	in.cmdline = long_cmdline;
	CU_ASSERT_EQUAL(boot_pvh(&in, &out), -E2BIG);
	in.cmdline = NULL;
	in.initrd = mem.host;		/* any bytes: only the size matters */
	in.initrd_len = MEM_SIZE;
	CU_ASSERT_EQUAL(boot_pvh(&in, &out), -ENOSPC);
	free(long_cmdline);
}

/* A fake bzImage: a setup header with the fields the loader reads. */
static uint8_t *make_bzimage(size_t *len)
{
	size_t setup = 5 * 512, payload = 0x3000;
	uint8_t *k = calloc(1, setup + payload);
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	*len = setup + payload;
	k[0x1f1] = 4;				/* setup_sects */
	v16 = 0xaa55;
	memcpy(k + 0x1fe, &v16, 2);
	k[0x200] = 0xeb;
	k[0x201] = 0x6a;			/* header ends at 0x26c */
	memcpy(k + 0x202, "HdrS", 4);
	v16 = 0x020f;
	memcpy(k + 0x206, &v16, 2);
	k[0x211] = 0x01;			/* LOADED_HIGH */
	v32 = 0x7fffffff;
	memcpy(k + 0x22c, &v32, 4);		/* initrd_addr_max */
	v16 = 0x1;
	memcpy(k + 0x236, &v16, 2);		/* XLF_KERNEL_64 */
	v32 = 2048;
	memcpy(k + 0x238, &v32, 4);		/* cmdline_size */
	v64 = 0x1000000;
	memcpy(k + 0x258, &v64, 8);		/* pref_address */
	v32 = 0x400000;
	memcpy(k + 0x260, &v32, 4);		/* init_size */
	memset(k + setup, 0xab, payload);
	return k;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void test_bzimage_boot_params(void)
{
	size_t len;
	uint8_t *k = make_bzimage(&len);
	static const uint8_t initrd[5000] = { 9 };
	struct boot_input in = { .kernel = k, .kernel_len = len, .initrd = initrd,
				 .initrd_len = sizeof(initrd), .cmdline = "console=ttyS0",
				 .rsdp_gpa = 0xe0000, .e820 = &e820, .mem = &mem };
	struct boot_entry out;
	uint8_t *bp = mem.host + LAYOUT_ZERO_PAGE;
	uint64_t rsdp, pde;

	CU_ASSERT_EQUAL(boot_detect(k, len), KERNEL_BZIMAGE);
	memset(mem.host, 0xcc, MEM_SIZE);
	CU_ASSERT_EQUAL_FATAL(boot_bzimage(&in, &out), 0);
	CU_ASSERT_EQUAL(out.mode, BOOT_LONG64);
	CU_ASSERT_EQUAL(out.rip, LAYOUT_HIGH_RAM + 0x200);
	CU_ASSERT_EQUAL(out.rsi, LAYOUT_ZERO_PAGE);
	CU_ASSERT_EQUAL(out.cr3, LAYOUT_BOOT_PGTABLE);
	CU_ASSERT_EQUAL(mem.host[LAYOUT_HIGH_RAM], 0xab);		/* protected-mode code */
	CU_ASSERT_EQUAL(bp[0x210], 0xff);				/* type_of_loader */
	CU_ASSERT_EQUAL(memcmp(bp + 0x202, "HdrS", 4), 0);		/* header copied */
	CU_ASSERT_EQUAL(bp[0x1ef], 0);					/* sentinel */
	CU_ASSERT_STRING_EQUAL((char *)mem.host + rd32(bp + 0x228), "console=ttyS0");
	CU_ASSERT_EQUAL(rd32(bp + 0x21c), sizeof(initrd));
	CU_ASSERT(rd32(bp + 0x218) >= 0x1000000 + 0x400000);	/* above pref_address + init_size */
	CU_ASSERT_EQUAL(mem.host[rd32(bp + 0x218)], 9);
	memcpy(&rsdp, bp + 0x70, 8);
	CU_ASSERT_EQUAL(rsdp, 0xe0000);
	CU_ASSERT_EQUAL(bp[0x1e8], e820.nr);
	for (unsigned int i = 0; i < e820.nr; i++) {
		uint64_t a;

		memcpy(&a, bp + 0x2d0 + 20 * i, 8);
		CU_ASSERT_EQUAL(a, e820.entries[i].addr);
		CU_ASSERT_EQUAL(rd32(bp + 0x2d0 + 20 * i + 16), e820.entries[i].type);
	}
	/* Identity map with 2 MiB pages (PS), never 1 GiB pages in the PDPT. */
	memcpy(&pde, mem.host + LAYOUT_BOOT_PGTABLE + 0x2000 + 8 * 3, 8);
	CU_ASSERT_EQUAL(pde, (3ULL << 21) | 0x83);
	memcpy(&pde, mem.host + LAYOUT_BOOT_PGTABLE + 0x1000, 8);
	CU_ASSERT_EQUAL(pde & 0x80, 0);
	free(k);
}

static void test_bzimage_bad_headers(void)
{
	size_t len;
	uint8_t *k = make_bzimage(&len);
	struct boot_input in = { .kernel = k, .kernel_len = len, .e820 = &e820, .mem = &mem };
	struct boot_entry out;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	in.kernel_len = 0x300;				/* truncated */
	CU_ASSERT_EQUAL(boot_bzimage(&in, &out), -ENOEXEC);
	in.kernel_len = len;
	v16 = 0x020b;					/* protocol 2.11 */
	memcpy(k + 0x206, &v16, 2);
	CU_ASSERT_EQUAL(boot_bzimage(&in, &out), -ENOEXEC);
	v16 = 0x020f;
	memcpy(k + 0x206, &v16, 2);
	k[0x236] = 0;					/* no 64-bit entry */
	CU_ASSERT_EQUAL(boot_bzimage(&in, &out), -ENOEXEC);
	k[0x236] = 1;
	k[0x1f1] = 200;					/* setup larger than the file */
	CU_ASSERT_EQUAL(boot_bzimage(&in, &out), -ENOEXEC);
	k[0x1f1] = 4;
	v32 = 0xfff00000;				/* init_size beyond RAM */
	memcpy(k + 0x260, &v32, 4);
	CU_ASSERT_EQUAL(boot_bzimage(&in, &out), -EINVAL);
	v32 = 0x400000;
	memcpy(k + 0x260, &v32, 4);
	v64 = UINT64_MAX - 0x1000;			/* hostile pref_address */
	memcpy(k + 0x258, &v64, 8);
	CU_ASSERT_EQUAL(boot_bzimage(&in, &out), -ENOEXEC);
	free(k);
}

static void test_boot_detect_unknown(void)
{
	static const uint8_t junk[1024] = { 'M', 'Z' };
	struct boot_input in = { .kernel = junk, .kernel_len = sizeof(junk), .e820 = &e820,
				 .mem = &mem };
	struct boot_entry out;

	CU_ASSERT_EQUAL(boot_detect(junk, sizeof(junk)), KERNEL_UNKNOWN);
	CU_ASSERT_EQUAL(boot_detect(junk, 0), KERNEL_UNKNOWN);
	CU_ASSERT_EQUAL(boot_load(&in, &out), -ENOEXEC);
}

UNIT_SUITE(vmm_boot, boot_init, boot_cleanup,
	   UNIT_TEST(test_e820_small_vm),
	   UNIT_TEST(test_e820_large_vm_splits_around_hole),
	   UNIT_TEST(test_guest_mem_ptr_bounds),
	   UNIT_TEST(test_elf_pvh_note_found),
	   UNIT_TEST(test_elf_malformed_inputs_rejected),
	   UNIT_TEST(test_pvh_boot_fills_start_info),
	   UNIT_TEST(test_pvh_rejects_oversized_cmdline_and_initrd),
	   UNIT_TEST(test_bzimage_boot_params),
	   UNIT_TEST(test_bzimage_bad_headers),
	   UNIT_TEST(test_boot_detect_unknown))
