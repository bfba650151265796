/* SPDX-License-Identifier: MIT */
/*
 * The guest-physical memory map and the fixed guest ABI of capvisor.
 *
 * This header is shared by the VMM (vmm/, devices/, acpi/) and by the
 * freestanding test guest (guest/), so it holds only macros: no types, no
 * includes. Everything a guest may rely on is also described to it in ACPI;
 * the fixed values are here so our own test guest can start before it has
 * parsed anything.
 */
#ifndef CAPVISOR_LAYOUT_H
#define CAPVISOR_LAYOUT_H

/* ---- Low memory (below 1 MiB) ---- */
#define LAYOUT_BOOT_GDT		0x00000500ULL	/* boot GDT for 64-bit entry */
#define LAYOUT_PVH_START_INFO	0x00006000ULL	/* struct hvm_start_info */
#define LAYOUT_PVH_MODLIST	0x00006080ULL	/* hvm_modlist_entry (the initrd) */
#define LAYOUT_PVH_MEMMAP	0x00006100ULL	/* hvm_memmap_table_entry[] */
#define LAYOUT_ZERO_PAGE	0x00007000ULL	/* bzImage struct boot_params */
#define LAYOUT_BOOT_PGTABLE	0x00009000ULL	/* PML4, PDPT, PDs for bzImage entry */
#define LAYOUT_CMDLINE		0x00020000ULL	/* kernel command line */
#define LAYOUT_CMDLINE_MAX	0x00010000ULL
#define LAYOUT_EBDA_START	0x0009fc00ULL	/* reserved up to 1 MiB */
#define LAYOUT_ACPI_BASE	0x000e0000ULL	/* RSDP and tables: BIOS area scan */
#define LAYOUT_ACPI_SIZE	0x00020000ULL
#define LAYOUT_HIGH_RAM		0x00100000ULL	/* RAM from 1 MiB on */

/* ---- The MMIO hole below 4 GiB (e820 reserved) ---- */
#define LAYOUT_MMIO_HOLE_START	0xc0000000ULL
#define LAYOUT_MMIO_HOLE_END	0x100000000ULL
#define LAYOUT_RAM_ABOVE_4G	0x100000000ULL	/* RAM beyond the hole */

/* One 4 KiB CPPC register page per vCPU (see CPPC_REG_*). */
#define LAYOUT_CPPC_BASE	0xd0000000ULL
/* One 4 KiB scheduler hint page per vCPU (see HINT_REG_*). */
#define LAYOUT_HINT_BASE	0xd0400000ULL
/* The ACPI Generic Event Device (ACPI0013): one page (see GED_REG_*). */
#define LAYOUT_GED_BASE		0xd0800000ULL
#define LAYOUT_GED_SIZE		0x1000ULL
#define LAYOUT_PER_VCPU_STRIDE	0x1000ULL
#define LAYOUT_MAX_VCPUS	1024

#define LAYOUT_IOAPIC		0xfec00000ULL
#define LAYOUT_LAPIC		0xfee00000ULL
/* KVM_SET_IDENTITY_MAP_ADDR (1 page) and KVM_SET_TSS_ADDR (3 pages). */
#define LAYOUT_IDENTITY_MAP	0xfeffc000ULL
#define LAYOUT_TSS		0xfeffd000ULL

/* ---- I/O ports ---- */
#define PORT_COM1		0x3f8
#define IRQ_COM1		4
#define PORT_I8042_DATA		0x60
#define PORT_I8042_CMD		0x64	/* write 0xfe: pulse the reset line */
#define I8042_CMD_RESET		0xfe
/* FADT (HW-reduced) sleep control / status registers, one byte each. */
#define PORT_ACPI_SLEEP_CTL	0x600
#define PORT_ACPI_SLEEP_STS	0x601
#define ACPI_SLP_EN		0x20	/* sleep control: SLP_EN, bit 5 */
#define ACPI_SLP_TYP_SHIFT	2	/* sleep control: SLP_TYPx, bits 2..4 */
#define ACPI_S5_SLP_TYP		5	/* value in \_S5 package */
/* FADT reset register: the i8042 command port, value 0xfe. */

/* ---- CPPC register page, one per vCPU (offsets, all little endian) ---- */
#define CPPC_REG_DESIRED_PERF	0x00	/* 32-bit, rw: guest's request */
#define CPPC_REG_MIN_PERF	0x04	/* 32-bit, rw */
#define CPPC_REG_MAX_PERF	0x08	/* 32-bit, rw */
#define CPPC_REG_ENABLE		0x0c	/* 32-bit, rw: cppc_enable */
#define CPPC_REG_PERF_LIMITED	0x10	/* 32-bit, rw1c */
#define CPPC_REG_AUTO_SEL	0x14	/* 32-bit, rw: autonomous selection enable */
#define CPPC_REG_REF_COUNTER	0x18	/* 64-bit, ro: reference perf counter */
#define CPPC_REG_DEL_COUNTER	0x20	/* 64-bit, ro: delivered perf counter */
#define CPPC_REG_GUARANTEED_PERF 0x28	/* 32-bit, ro: Linux reads guaranteed_perf only
					   from a register, never an Integer */
/*
 * The perf capabilities, 32-bit, ro: registers rather than `_CPC` Integers
 * so that a live change of the vCPU's cluster is visible to a guest that
 * re-reads them (Linux 6.12 re-reads highest_perf on notify 0x85). The MHz
 * stay Integers: 255 vCPUs' DSDT must fit LAYOUT_ACPI_SIZE, and a register
 * costs 21 bytes of AML where an Integer costs 3 (docs/acpi.md).
 */
#define CPPC_REG_HIGHEST_PERF	0x2c
#define CPPC_REG_NOMINAL_PERF	0x30
#define CPPC_REG_LOWEST_NONLINEAR_PERF 0x34
#define CPPC_REG_LOWEST_PERF	0x38
#define CPPC_REG_PAGE_USED	0x3c	/* bytes of the page with registers */

/* ---- Scheduler hint page, one per vCPU ---- */
#define HINT_REG_YIELD		0x00	/* 32-bit write: give up the slice */
#define HINT_REG_YIELD_TO	0x04	/* 32-bit write: target vCPU index */
#define HINT_REG_STATUS		0x08	/* 32-bit read: 1 if the last yield_to boosted */

/*
 * ---- Generic Event Device page ----
 * GED_REG_PENDING + 4 * k: 32-bit, read-to-clear: bit j set when vCPU
 * 32 * k + j's highest_perf changed since the last read (the _EVT method
 * reads each word once and notifies those processors with 0x85).
 */
#define GED_REG_PENDING		0x00
#define GED_PENDING_WORDS	(LAYOUT_MAX_VCPUS / 32)
#define GED_GSI			20	/* IOAPIC pin, edge, active high */

/* ---- MSRs served by capvisor ---- */
#define MSR_IA32_MPERF		0xe7
#define MSR_IA32_APERF		0xe8
#define MSR_AMD_PSTATE_CTL	0xc0010062	/* write-ignored */
/*
 * The energy performance preference of `_CPC` is a Functional Fixed Hardware
 * register: bits 31:24 of this MSR (where AMD's MSR-mode CPPC keeps it).
 * Linux 6.12 writes EPP only to PCC or FFH registers; capvisor serves just
 * that field (the rest reads 0, writes to it are ignored).
 */
#define MSR_AMD_CPPC_REQ	0xc00102b3
#define CPPC_EPP_SHIFT		24
#define CPPC_EPP_BITS		8

#endif
