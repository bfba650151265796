// SPDX-License-Identifier: MIT
/*
 * What both kernel formats share (vmm/boot/boot.h): format detection,
 * the dispatch to the PVH or bzImage loader, and where the command line
 * and the initrd go in guest memory.
 */
#include "vmm/boot/boot.h"
#include "vmm/boot/elf.h"
#include "capvisor/layout.h"
#include "util/log.h"

#include <errno.h>
#include <string.h>

#define PAGE_SIZE 4096ULL

enum kernel_format boot_detect(const uint8_t *kernel, size_t len)
{
	if (elf_is_elf(kernel, len))
		return KERNEL_PVH_ELF;
	if (bzimage_detect(kernel, len))
		return KERNEL_BZIMAGE;
	return KERNEL_UNKNOWN;
}

int boot_load(const struct boot_input *in, struct boot_entry *out)
{
	switch (boot_detect(in->kernel, in->kernel_len)) {
	case KERNEL_PVH_ELF:
		return boot_pvh(in, out);
	case KERNEL_BZIMAGE:
		return boot_bzimage(in, out);
	default:
		pr_err("kernel: not an ELF (no \\x7fELF magic) nor a bzImage (no HdrS header at 0x202)");
		return -ENOEXEC;
	}
}

int boot_put_cmdline(const struct boot_input *in, uint64_t max_len, uint64_t *gpa, uint64_t *len)
{
	const char *cmdline = in->cmdline ? in->cmdline : "";
	size_t n = strlen(cmdline);
	char *dst;

	if (max_len > LAYOUT_CMDLINE_MAX - 1)
		max_len = LAYOUT_CMDLINE_MAX - 1;
	if (n > max_len) {
		pr_err("--cmdline: %zu bytes, the kernel accepts at most %llu", n,
		       (unsigned long long)max_len);
		return -E2BIG;
	}
	dst = guest_mem_ptr(in->mem, LAYOUT_CMDLINE, n + 1);
	if (!dst)
		return -EINVAL;
	memcpy(dst, cmdline, n + 1);
	*gpa = LAYOUT_CMDLINE;
	*len = n;
	return 0;
}

int boot_put_initrd(const struct boot_input *in, uint64_t kernel_end, uint64_t limit,
		    uint64_t *gpa)
{
	uint64_t top = in->mem->low_size < limit ? in->mem->low_size : limit;
	uint64_t start;
	void *dst;

	if (in->initrd_len > top || ((top - in->initrd_len) & ~(PAGE_SIZE - 1)) < kernel_end) {
		pr_err("--initrd: %zu bytes do not fit between the kernel's end (%#llx) and %#llx; use a larger --mem",
		       in->initrd_len, (unsigned long long)kernel_end, (unsigned long long)top);
		return -ENOSPC;
	}
	start = (top - in->initrd_len) & ~(PAGE_SIZE - 1);
	dst = guest_mem_ptr(in->mem, start, in->initrd_len);
	if (!dst)
		return -EINVAL;
	memcpy(dst, in->initrd, in->initrd_len);
	*gpa = start;
	return 0;
}
