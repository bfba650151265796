/* SPDX-License-Identifier: MIT */
/* The test guest's ring-0 core: per-CPU data, hardware access, prototypes. */
#ifndef GUEST_KERNEL_H
#define GUEST_KERNEL_H

#include "guest/abi.h"
#include "guest/lib.h"

/* 64-bit TSS (packed: rsp0 is at offset 4). */
struct tss64 {
	u32 reserved0;
	u64 rsp[3];
	u64 reserved1;
	u64 ist[7];
	u64 reserved2;
	u16 reserved3;
	u16 iomap_base;
} __attribute__((packed));

/* Per-CPU data, reached through the GS base; this_cpu() reads self at 8. */
struct percpu {
	u64 kstack_top;
	struct percpu *self;
	u32 index;
	u32 apic_id;
	volatile u32 timer_fired;
	volatile u32 never;		/* stays 0: idle_wait() on it parks */
	u32 uid;			/* ACPI UID = the VMM's vCPU index */
} __attribute__((aligned(64)));

extern struct percpu percpu[GUEST_MAX_CPUS];

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;

	asm volatile("mov %%gs:8, %0" : "=r"(p));
	return p;
}

static inline void outb(u16 port, u8 v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline u8 inb(u16 port)
{
	u8 v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline u64 rdmsr(u32 msr)
{
	u32 lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return lo | ((u64)hi << 32);
}

static inline void wrmsr(u32 msr, u64 v)
{
	asm volatile("wrmsr" : : "c"(msr), "a"((u32)v), "d"((u32)(v >> 32)) : "memory");
}

static inline void cpuid(u32 leaf, u32 sub, u32 r[4])
{
	asm volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
		     : "a"(leaf), "c"(sub));
}

static inline u32 mmio_read32(u64 addr)
{
	return *(volatile u32 *)addr;
}

static inline void mmio_write32(u64 addr, u32 v)
{
	*(volatile u32 *)addr = v;
}

static inline u64 mmio_read64(u64 addr)
{
	return *(volatile u64 *)addr;
}

static inline void cpu_relax(void)
{
	asm volatile("pause" ::: "memory");
}

/* entry.S */
void enter_user(u64 rip, u64 rsp, u64 arg) __attribute__((noreturn));
void idle_wait(const volatile u32 *flag);
void isr_spurious(void);
/* trap.c, called by entry.S's stubs */
struct trap_frame;
void isr_dispatch(struct trap_frame *f);
void kmain(void);
void ap_main(unsigned int idx);
extern const u64 isr_table[34];
extern const char tramp_start[], tramp_end[];
extern const char idle_window_start[], idle_window_end[];
extern u64 boot_start_info, boot_tsc;
extern u8 apic_to_cpu[256];
extern u64 gdt[];
extern u64 pd_low[512];

/* serial.c */
void serial_init(void);
void serial_write_line(const char *s, size_t len);
void kprint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* acpi.c */
int acpi_init(u64 rsdp);
void acpi_scan_dsdt(void);
void acpi_poweroff(void) __attribute__((noreturn));

/* trap.c */
void trap_init_cpu(struct percpu *cpu);
void cpu_init_common(struct percpu *cpu);
long msr_read_safe(u32 msr, u64 *val);
long msr_write_safe(u32 msr, u64 val);

/* lapic.c and clock */
void lapic_init_cpu(void);
void lapic_calibrate(void);
void lapic_eoi(void);
u32 lapic_id(void);
void lapic_send_ipi(u32 apic_id, u32 icr_low);
void clock_init(void);
void clock_init_cpu(struct percpu *cpu);
u64 clock_ns(void);
void sleep_tsc(u64 deadline);
void clock_init_rates(void);
void park(void) __attribute__((noreturn));

/* smp.c */
void smp_boot(void);
void smp_release(void);
void smp_wait_release(void);
void start_user(struct percpu *cpu) __attribute__((noreturn));

/* syscall.c */
long syscall_dispatch(long a0, long a1, long a2, long a3, long nr);

#define LAPIC_TIMER_VECTOR	0x20
#define WAKE_VECTOR		0x21	/* IPI that only ends a HLT */
#define SPURIOUS_VECTOR		0xff

#endif
