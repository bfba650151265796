// SPDX-License-Identifier: MIT
/*
 * Linux x86 boot protocol (Documentation/arch/x86/boot.rst), 64-bit entry:
 * the protected-mode kernel goes to 1 MiB, struct boot_params ("zero page")
 * gets the file's setup header plus what the loader fills in (e820 table,
 * command line, initrd, RSDP), and the boot vCPU starts in 64-bit mode at
 * code32_start + 0x200 with identity-mapped page tables and RSI = zero page.
 * Fields are accessed by their documented offsets in boot_params.
 */
#include "vmm/boot/boot.h"
#include "capvisor/layout.h"
#include "util/log.h"

#include <errno.h>
#include <string.h>

/* boot_params offsets (arch/x86/include/uapi/asm/bootparam.h). */
#define BP_ACPI_RSDP_ADDR	0x070
#define BP_EXT_RAMDISK_IMAGE	0x0c0
#define BP_EXT_RAMDISK_SIZE	0x0c4
#define BP_EXT_CMD_LINE_PTR	0x0c8
#define BP_E820_ENTRIES		0x1e8
#define BP_SENTINEL		0x1ef
#define BP_HDR			0x1f1
#define BP_E820_TABLE		0x2d0
#define BP_E820_MAX		128
#define BP_SIZE			0x1000

/* setup_header fields, at their offsets in boot_params (and in the file). */
#define HDR_SETUP_SECTS		0x1f1
#define HDR_BOOT_FLAG		0x1fe
#define HDR_JUMP		0x200
#define HDR_MAGIC		0x202
#define HDR_VERSION		0x206
#define HDR_TYPE_OF_LOADER	0x210
#define HDR_LOADFLAGS		0x211
#define HDR_CODE32_START	0x214
#define HDR_RAMDISK_IMAGE	0x218
#define HDR_RAMDISK_SIZE	0x21c
#define HDR_CMD_LINE_PTR	0x228
#define HDR_INITRD_ADDR_MAX	0x22c
#define HDR_XLOADFLAGS		0x236
#define HDR_CMDLINE_SIZE	0x238
#define HDR_PREF_ADDRESS	0x258
#define HDR_INIT_SIZE		0x260

#define BOOT_FLAG_MAGIC		0xaa55
#define HDRS_MAGIC		0x53726448	/* "HdrS" */
#define MIN_VERSION		0x020c		/* 2.12: xloadflags */
#define LOADED_HIGH		0x01
#define XLF_KERNEL_64		0x01
#define LOADER_UNDEFINED	0xff
#define ENTRY_64_OFFSET		0x200
#define KERNEL_LOAD_ADDR	LAYOUT_HIGH_RAM

/* Page tables: PML4, one PDPT, four PDs of 2 MiB pages identity-mapping 4 GiB. */
#define PGT_PML4		(LAYOUT_BOOT_PGTABLE)
#define PGT_PDPT		(LAYOUT_BOOT_PGTABLE + 0x1000)
#define PGT_PD			(LAYOUT_BOOT_PGTABLE + 0x2000)
#define PGT_NR_PD		4
#define PTE_PRESENT		0x1ULL
#define PTE_RW			0x2ULL
#define PTE_PS			0x80ULL
_Static_assert(PGT_PD + PGT_NR_PD * 0x1000 <= LAYOUT_CMDLINE, "page tables overlap the cmdline");
_Static_assert(LAYOUT_ZERO_PAGE + BP_SIZE <= LAYOUT_BOOT_PGTABLE, "zero page overlaps page tables");

static uint32_t get(const uint8_t *p, size_t off, size_t size)
{
	uint32_t v = 0;

	memcpy(&v, p + off, size);	/* x86 is little endian */
	return v;
}

static void put(uint8_t *p, size_t off, uint64_t v, size_t size)
{
	memcpy(p + off, &v, size);
}

bool bzimage_detect(const uint8_t *kernel, size_t len)
{
	return len >= HDR_MAGIC + 4 && get(kernel, HDR_MAGIC, 4) == HDRS_MAGIC;
}

struct bz_info {
	size_t setup_size;	/* real-mode part, in the file */
	size_t hdr_end;		/* end of the setup header */
	uint32_t initrd_max;
	uint32_t cmdline_max;
	uint32_t init_size;
	uint64_t pref_address;
};

static int bz_check_header(const uint8_t *k, size_t len, struct bz_info *bi)
{
	unsigned int sects, version;

	if (len < BP_SIZE / 2 || !bzimage_detect(k, len)) {
		pr_err("kernel: bzImage truncated (%zu bytes) or without the HdrS magic", len);
		return -ENOEXEC;
	}
	if (get(k, HDR_BOOT_FLAG, 2) != BOOT_FLAG_MAGIC) {
		pr_err("kernel: bzImage boot_flag is %#x, expected 0xaa55", get(k, HDR_BOOT_FLAG, 2));
		return -ENOEXEC;
	}
	version = get(k, HDR_VERSION, 2);
	if (version < MIN_VERSION) {
		pr_err("kernel: boot protocol %u.%02u, need >= 2.12 for the 64-bit entry",
		       version >> 8, version & 0xff);
		return -ENOEXEC;
	}
	if (!(get(k, HDR_XLOADFLAGS, 2) & XLF_KERNEL_64) || !(k[HDR_LOADFLAGS] & LOADED_HIGH)) {
		pr_err("kernel: bzImage has no 64-bit entry (xloadflags %#x, loadflags %#x)",
		       get(k, HDR_XLOADFLAGS, 2), k[HDR_LOADFLAGS]);
		return -ENOEXEC;
	}
	sects = k[HDR_SETUP_SECTS] ? k[HDR_SETUP_SECTS] : 4;
	bi->setup_size = (size_t)(sects + 1) * 512;
	bi->hdr_end = HDR_MAGIC + k[HDR_JUMP + 1];	/* the jump's target ends the header */
	if (bi->setup_size >= len || bi->hdr_end > bi->setup_size || bi->hdr_end > BP_E820_TABLE) {
		pr_err("kernel: bzImage setup_sects %u / header end %#zx do not fit the file (%zu bytes)",
		       sects, bi->hdr_end, len);
		return -ENOEXEC;
	}
	bi->initrd_max = get(k, HDR_INITRD_ADDR_MAX, 4);
	bi->cmdline_max = get(k, HDR_CMDLINE_SIZE, 4);
	bi->init_size = get(k, HDR_INIT_SIZE, 4);
	memcpy(&bi->pref_address, k + HDR_PREF_ADDRESS, 8);
	if (bi->pref_address > LAYOUT_MMIO_HOLE_START) {
		pr_err("kernel: bzImage pref_address %#llx is above the 3 GiB of low RAM capvisor offers",
		       (unsigned long long)bi->pref_address);
		return -ENOEXEC;
	}
	return 0;
}

static void bz_build_pagetables(const struct guest_mem *mem)
{
	uint64_t *pml4 = guest_mem_ptr(mem, PGT_PML4, 0x1000);
	uint64_t *pdpt = guest_mem_ptr(mem, PGT_PDPT, 0x1000);
	uint64_t *pd = guest_mem_ptr(mem, PGT_PD, PGT_NR_PD * 0x1000);

	memset(pml4, 0, 0x1000);
	memset(pdpt, 0, 0x1000);
	pml4[0] = PGT_PDPT | PTE_PRESENT | PTE_RW;
	/* 2 MiB pages: 1 GiB pages triple-fault under PVM (kvm-host-facts). */
	for (unsigned int i = 0; i < PGT_NR_PD; i++)
		pdpt[i] = (PGT_PD + i * 0x1000ULL) | PTE_PRESENT | PTE_RW;
	for (unsigned int i = 0; i < PGT_NR_PD * 512; i++)
		pd[i] = ((uint64_t)i << 21) | PTE_PRESENT | PTE_RW | PTE_PS;
}

static void bz_build_gdt(const struct guest_mem *mem)
{
	uint64_t *gdt = guest_mem_ptr(mem, LAYOUT_BOOT_GDT, 4 * sizeof(uint64_t));

	gdt[0] = 0;
	gdt[1] = 0;
	gdt[2] = 0x00af9b000000ffffULL;	/* 0x10: 64-bit code, DPL 0 */
	gdt[3] = 0x00cf93000000ffffULL;	/* 0x18: flat data */
}

static int bz_fill_zero_page(const struct boot_input *in, const struct bz_info *bi,
			     uint64_t kernel_end, uint8_t *bp)
{
	uint64_t cmdline, cmdline_len, initrd = 0;
	unsigned int nr = in->e820->nr < BP_E820_MAX ? in->e820->nr : BP_E820_MAX;
	int ret;

	memset(bp, 0, BP_SIZE);
	memcpy(bp + BP_HDR, in->kernel + BP_HDR, bi->hdr_end - BP_HDR);
	bp[HDR_TYPE_OF_LOADER] = LOADER_UNDEFINED;
	ret = boot_put_cmdline(in, bi->cmdline_max ? bi->cmdline_max : 255, &cmdline, &cmdline_len);
	if (ret)
		return ret;
	put(bp, HDR_CMD_LINE_PTR, cmdline, 4);
	put(bp, BP_EXT_CMD_LINE_PTR, cmdline >> 32, 4);
	if (in->initrd) {
		ret = boot_put_initrd(in, kernel_end, (uint64_t)bi->initrd_max + 1, &initrd);
		if (ret)
			return ret;
		put(bp, HDR_RAMDISK_IMAGE, initrd, 4);
		put(bp, HDR_RAMDISK_SIZE, in->initrd_len, 4);
		put(bp, BP_EXT_RAMDISK_IMAGE, initrd >> 32, 4);
		put(bp, BP_EXT_RAMDISK_SIZE, (uint64_t)in->initrd_len >> 32, 4);
	}
	put(bp, BP_ACPI_RSDP_ADDR, in->rsdp_gpa, 8);
	bp[BP_E820_ENTRIES] = (uint8_t)nr;
	for (unsigned int i = 0; i < nr; i++) {
		uint8_t *e = bp + BP_E820_TABLE + i * 20;

		put(e, 0, in->e820->entries[i].addr, 8);
		put(e, 8, in->e820->entries[i].size, 8);
		put(e, 16, in->e820->entries[i].type, 4);
	}
	return 0;
}

int boot_bzimage(const struct boot_input *in, struct boot_entry *out)
{
	struct bz_info bi;
	uint64_t kernel_len, need;
	uint8_t *bp, *dst;
	int ret;

	ret = bz_check_header(in->kernel, in->kernel_len, &bi);
	if (ret)
		return ret;
	kernel_len = in->kernel_len - bi.setup_size;
	/*
	 * A relocatable kernel loaded at 1 MiB moves itself up to pref_address
	 * (LOAD_PHYSICAL_ADDR) and decompresses there: it needs RAM up to
	 * pref_address + init_size, not only room for the file.
	 */
	need = KERNEL_LOAD_ADDR + kernel_len;
	if (bi.pref_address < KERNEL_LOAD_ADDR || bi.pref_address + bi.init_size > need)
		need = (bi.pref_address > KERNEL_LOAD_ADDR ? bi.pref_address : KERNEL_LOAD_ADDR) +
		       bi.init_size;
	dst = guest_mem_ptr(in->mem, KERNEL_LOAD_ADDR, need - KERNEL_LOAD_ADDR);
	if (!dst || need < KERNEL_LOAD_ADDR + kernel_len) {
		pr_err("kernel: bzImage needs RAM up to %llu MiB (pref_address %#llx, init_size %#x); use a larger --mem",
		       (unsigned long long)(need >> 20) + 1, (unsigned long long)bi.pref_address,
		       bi.init_size);
		return -EINVAL;
	}
	memcpy(dst, in->kernel + bi.setup_size, kernel_len);
	bp = guest_mem_ptr(in->mem, LAYOUT_ZERO_PAGE, BP_SIZE);
	if (!bp)
		return -EINVAL;
	ret = bz_fill_zero_page(in, &bi, need, bp);
	if (ret)
		return ret;
	put(bp, HDR_CODE32_START, KERNEL_LOAD_ADDR, 4);
	bz_build_pagetables(in->mem);
	bz_build_gdt(in->mem);
	*out = (struct boot_entry){
		.mode = BOOT_LONG64,
		.rip = KERNEL_LOAD_ADDR + ENTRY_64_OFFSET,
		.rsi = LAYOUT_ZERO_PAGE,
		.cr3 = PGT_PML4,
		.gdt = LAYOUT_BOOT_GDT,
	};
	pr_debug("bzImage: protocol %#x, %llu bytes at %#llx, init_size %#x", get(in->kernel, HDR_VERSION, 2),
		 (unsigned long long)kernel_len, (unsigned long long)KERNEL_LOAD_ADDR, bi.init_size);
	return 0;
}
