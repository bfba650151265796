// SPDX-License-Identifier: MIT
/*
 * The test guest's ring-0 boot: read hvm_start_info (command line, memory
 * map, RSDP), set up the BSP, the clock and ACPI, bring up the APs, then
 * drop every CPU into ring 3 (guest/user/), where the workloads run.
 */
#include "guest/kernel.h"

#define HVM_START_MAGIC	0x336ec578
#define E820_RAM	1
#define STATIC_PDES	8	/* 2 MiB pages entry.S maps */
#define PDE_RW_2M	0x83	/* present, writable, 2 MiB */

struct hvm_start_info {
	u32 magic, version, flags, nr_modules;
	u64 modlist_paddr, cmdline_paddr, rsdp_paddr;
	u64 memmap_paddr;	/* version >= 1 */
	u32 memmap_entries, reserved;
};

struct hvm_memmap_entry {
	u64 addr, size;
	u32 type, reserved;
};

struct percpu percpu[GUEST_MAX_CPUS];


void start_user(struct percpu *cpu)
{
	u64 stack_top = GUEST_USTACKS + (cpu->index + 1) * GUEST_STACK_SIZE;

	/* rsp + 8 aligned to 16, as after a call. */
	enter_user((u64)user_main, stack_top - 8, cpu->index);
}

static void copy_cmdline(const struct hvm_start_info *si)
{
	const char *s = (const char *)si->cmdline_paddr;
	size_t i = 0;

	if (!si->cmdline_paddr || si->cmdline_paddr >= 0x40000000ULL)
		return;
	for (; i < sizeof(bootinfo.cmdline) - 1 && s[i]; i++)
		bootinfo.cmdline[i] = s[i];
	bootinfo.cmdline[i] = 0;
}

/*
 * Sum the RAM, check that the fixed regions the guest uses are RAM, and map
 * (2 MiB pages, supervisor) the RAM of the first GiB beyond the 16 MiB that
 * entry.S mapped. Few entries: every ring-0 instruction is emulated here.
 */
static int check_memmap(const struct hvm_start_info *si)
{
	const struct hvm_memmap_entry *m = (const void *)si->memmap_paddr;
	u64 total = 0, top = 0, low_ok = 0;

	if (si->version < 1 || !si->memmap_paddr || si->memmap_entries > 128)
		return 0;	/* no map: trust GUEST_MIN_RAM */
	for (u32 i = 0; i < si->memmap_entries; i++) {
		if (m[i].type != E820_RAM)
			continue;
		total += m[i].size;
		if (m[i].addr + m[i].size > top && m[i].addr < 0x40000000ULL)
			top = m[i].addr + m[i].size;
		if (m[i].addr <= LAYOUT_HIGH_RAM && m[i].addr + m[i].size >= GUEST_MIN_RAM)
			low_ok = 1;
	}
	bootinfo.ram_mb = (u32)(total >> 20);
	if (top > 0x40000000ULL)
		top = 0x40000000ULL;
	for (u64 i = STATIC_PDES; i < (top + (1 << 21) - 1) >> 21; i++)
		pd_low[i] = (i << 21) | PDE_RW_2M;
	return low_ok ? 0 : -1;
}

void kmain(void)
{
	const struct hvm_start_info *si = (const void *)boot_start_info;
	struct percpu *cpu = &percpu[0];
	u32 r[4];

	serial_init();
	cpu->index = 0;
	trap_init_cpu(cpu);
	if (si->magic != HVM_START_MAGIC) {
		kprint("{\"test\":\"error\",\"vcpu\":0,\"error\":\"hvm_start_info magic 0x%x, "
		       "expected 0x%x\"}", si->magic, HVM_START_MAGIC);
		acpi_poweroff();
	}
	copy_cmdline(si);
	if (check_memmap(si)) {
		kprint("{\"test\":\"error\",\"vcpu\":0,\"error\":\"the memory map lacks RAM "
		       "from 1 MiB to %u MiB\"}", (unsigned int)(GUEST_MIN_RAM >> 20));
		acpi_poweroff();
	}
	clock_init();
	clock_init_cpu(cpu);
	lapic_init_cpu();
	lapic_calibrate();
	clock_init_rates();
	if (acpi_init(si->rsdp_paddr))
		kprint("{\"test\":\"error\",\"vcpu\":0,\"error\":\"no ACPI RSDP: one CPU, "
		       "poweroff through port 0x%x\"}", PORT_ACPI_SLEEP_CTL);
	cpuid(0, 0, r);
	if (r[0] >= 6) {
		cpuid(6, 0, r);
		bootinfo.aperfmperf = r[2] & 1;
	}
	smp_boot();
	bootinfo.boot_tsc = boot_tsc;
	smp_release();
	start_user(cpu);
}
