/* SPDX-License-Identifier: MIT */
/*
 * The interface between the test guest's ring-0 core and its ring-3
 * workloads: syscall numbers, the boot information ring 3 may read, and the
 * memory map of the guest image. Freestanding: no includes but
 * capvisor/layout.h.
 */
#ifndef GUEST_ABI_H
#define GUEST_ABI_H

#include "capvisor/layout.h"

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long u64;
typedef signed char s8;
typedef int s32;
typedef long s64;
typedef unsigned long size_t;
typedef unsigned long uintptr_t;

#define GUEST_MAX_CPUS		255	/* every xAPIC id but the broadcast one */

/*
 * Guest memory map (identity mapped, 2 MiB pages):
 *   0x000000-0x1fffff  kernel: boot data from the VMM, AP trampoline at 0x8000,
 *                      kernel image from 1 MiB (supervisor only)
 *   0x200000-0x3fffff  user image: ring-3 code, data, pvclock pages (user)
 *   0x400000-0x7fffff  ring-3 stacks, 16 KiB per CPU (user)
 *   0x800000-0xbfffff  ring-0 stacks, 16 KiB per CPU (supervisor)
 *   12 MiB-1 GiB       the rest of RAM, unused (supervisor)
 * The MMIO hole 3-4 GiB is mapped uncached, supervisor only except the 2 MiB
 * pages holding the per-vCPU CPPC and hint pages, which ring 3 may touch.
 */
#define GUEST_TRAMPOLINE	0x8000ULL
#define GUEST_USER_BASE		0x200000ULL
#define GUEST_USER_END		0x800000ULL
#define GUEST_USTACKS		0x400000ULL
#define GUEST_KSTACKS		0x800000ULL
#define GUEST_STACK_SIZE	0x4000ULL
/* Inside a CPU's 16 KiB ring-0 stack area: syscalls, interrupts, exceptions. */
#define KSTACK_SYSCALL_TOP	0x2000ULL
#define KSTACK_IST1_TOP		0x3000ULL
#define KSTACK_IST2_TOP		0x4000ULL
#define GUEST_MIN_RAM		0xc00000ULL	/* RAM must cover 1 MiB up to here */

/* Syscalls (UD2 from ring 3): number in rax, arguments in rdi, rsi, rdx, r10;
 * result in rax; other registers preserved. */
enum guest_syscall {
	SYS_REPORT = 0,		/* (buf, len): write one line to the console */
	SYS_SLEEP_TSC,		/* (tsc): halt until the TSC reaches tsc (or any
				 * interrupt arrives); callers loop on their clock */
	SYS_YIELD,		/* (): HINT_REG_YIELD if SYS_ACPI_SCAN found the
				 * hint device, else GERR_NODEV */
	SYS_TIME,		/* (): clock in ns, read in ring 0 */
	SYS_CPPC_READ,		/* (struct guest_cppc_regs *) */
	SYS_MSR_READ,		/* (msr, u64 *): 0xe7, 0xe8, 0xc0010062 only */
	SYS_CPPC_WRITE,		/* (offset, value): desired/min/max/enable */
	SYS_POWEROFF,		/* (): ACPI S5, never returns */
	SYS_MSR_WRITE,		/* (msr, value): 0xe7, 0xe8, 0xc0010062 only */
	SYS_PARK,		/* (): halt forever, no timer */
	SYS_OUT_LOOP,		/* (port, n): n outb from ring 0, returns ns */
	SYS_ACPI_SCAN,		/* (): scan the DSDT once for each CPU's _CPC and
				 * the hint device, into bootinfo */
	SYS_APERFMPERF,		/* (u64 out[2]): APERF then MPERF, one entry */
	SYS_MSR_LOOP,		/* (msr, n): n RDMSR of 0xe7/0xe8 in ring 0; ns */
	SYS_MMIO_LOOP,		/* (offset, n): n 32-bit reads of this vCPU's
				 * CPPC page in ring 0; ns */
	SYS_MAX
};

/* Syscall errors (negative results). */
#define GERR_INVAL	-22	/* bad argument */
#define GERR_FAULT	-14	/* pointer outside the user region */
#define GERR_NODEV	-19	/* feature absent (no APERFMPERF, no CPPC page) */
#define GERR_GP		-5	/* the access raised #GP, which was caught */

struct guest_cppc_regs {
	u32 desired, min, max, enable, perf_limited, auto_sel;
	u64 reference, delivered;
	u32 guaranteed;
};

enum guest_clock { CLOCK_KVMCLOCK = 1, CLOCK_CPUID_TSC, CLOCK_PIT_TSC, CLOCK_TSC_GUESS };

/* KVM pvclock record, one per vCPU, in user-readable memory. */
struct pvclock {
	u32 version;
	u32 pad0;
	u64 tsc_timestamp;
	u64 system_time;
	u32 tsc_to_system_mul;
	s8 tsc_shift;
	u8 flags;
	u8 pad[2];
} __attribute__((aligned(32)));

/*
 * KVM steal-time record, one per vCPU, user-readable: `preempted` is set
 * while the host holds the vCPU out (vcpu_is_preempted() in Linux).
 */
struct steal_time {
	u64 steal;
	u32 version;
	u32 flags;
	u8 preempted;
	u8 pad8[3];
	u32 pad[11];
} __attribute__((aligned(64)));

/* A processor's `_CPC` capabilities (CPPC performance scale). */
struct cpc_caps {
	u32 highest, nominal, lowest_nonlinear, lowest;
};

/* What the kernel found at boot; read-only for ring 3 by convention. */
struct bootinfo {
	u32 ncpus;
	u32 clock;		/* enum guest_clock */
	u64 tsc_khz;		/* TSC rate (from kvmclock's scale with kvmclock) */
	u64 tsc_mult;		/* ns = (tsc - tsc0) * tsc_mult >> 32 */
	u64 ns_to_tsc_q32;	/* tsc ticks = ns * ns_to_tsc_q32 >> 32 */
	u64 tsc_to_lapic_q32;	/* LAPIC timer counts = ticks * this >> 32 */
	u64 tsc0;
	u64 lapic_khz;		/* LAPIC timer input clock */
	u32 uid[GUEST_MAX_CPUS];	/* ACPI processor UID = VMM vCPU index */
	u32 apic_id[GUEST_MAX_CPUS];
	u32 madt_cpus;		/* enabled CPUs in the MADT (may exceed the max) */
	u32 aperfmperf;		/* CPUID 6 ECX bit 0 */
	/* Filled by SYS_ACPI_SCAN (on demand): */
	u32 dsdt_scanned;
	u32 cppc_dsdt;		/* the DSDT has _CPC objects */
	u32 hint_device;	/* the DSDT has capvisor's hint device */
	struct cpc_caps cpc[GUEST_MAX_CPUS];	/* by CPU index; 0 if absent */
	u32 sleep_space;	/* FADT sleep control register: 0 mem, 1 io */
	u64 sleep_addr;
	u32 ram_mb;
	u32 hypervisor_kvm;	/* CPUID 0x40000000 says KVMKVMKVM */
	u32 steal_time;		/* KVM_FEATURE_STEAL_TIME: steal[] is live */
	u64 boot_tsc;		/* TSC at the PVH entry */
	char cmdline[512];
};

extern struct bootinfo bootinfo;
extern struct pvclock pvclock[GUEST_MAX_CPUS];
extern struct steal_time steal[GUEST_MAX_CPUS];

/* The user image's entry point (guest/user/main.c), entered by the ring-0 core. */
void user_main(unsigned int cpu) __attribute__((noreturn));

#endif
