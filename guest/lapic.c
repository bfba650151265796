// SPDX-License-Identifier: MIT
/*
 * Local APIC (xAPIC MMIO) and time. The guest is tickless: the LAPIC timer
 * is armed one-shot only while a vCPU sleeps until a deadline, because every
 * timer wake of a halted vCPU costs tens of microseconds of emulated ring 0.
 *
 * Clock: kvmclock (pvclock) when CPUID 0x40000001 has KVM_FEATURE_CLOCKSOURCE2,
 * else the TSC at the frequency CPUID 0x40000010 gives, else the TSC
 * calibrated once against the PIT.
 */
#include "guest/kernel.h"

#define LAPIC_ID	0x20
#define LAPIC_EOI	0xb0
#define LAPIC_SVR	0xf0
#define LAPIC_ICR_LO	0x300
#define LAPIC_ICR_HI	0x310
#define LAPIC_LVT_TIMER	0x320
#define LAPIC_TMICT	0x380
#define LAPIC_TMCCT	0x390
#define LAPIC_TDCR	0x3e0
#define LVT_MASKED	(1u << 16)
#define TDCR_DIV1	0xb
#define MSR_KVM_SYSTEM_TIME_NEW	0x4b564d01
#define MSR_KVM_STEAL_TIME	0x4b564d03
#define KVM_FEATURE_CLOCKSOURCE2	(1u << 3)
#define KVM_FEATURE_STEAL_TIME	(1u << 5)
#define CALIBRATE_NS	1000000ULL

static u32 lapic_rd(u32 reg)
{
	return mmio_read32(LAYOUT_LAPIC + reg);
}

static void lapic_wr(u32 reg, u32 v)
{
	mmio_write32(LAYOUT_LAPIC + reg, v);
}

u32 lapic_id(void)
{
	return lapic_rd(LAPIC_ID) >> 24;
}

void lapic_eoi(void)
{
	lapic_wr(LAPIC_EOI, 0);
}

/*
 * Software-enable the LAPIC (reset state is disabled). The timer stays in
 * one-shot mode, unmasked, and idle (initial count 0) until a sleep writes
 * the count: one MMIO write per sleep.
 */
void lapic_init_cpu(void)
{
	lapic_wr(LAPIC_SVR, 0x100 | SPURIOUS_VECTOR);
	lapic_wr(LAPIC_TDCR, TDCR_DIV1);
	lapic_wr(LAPIC_TMICT, 0);
	lapic_wr(LAPIC_LVT_TIMER, LAPIC_TIMER_VECTOR);
}

void lapic_send_ipi(u32 apic_id, u32 icr_low)
{
	lapic_wr(LAPIC_ICR_HI, apic_id << 24);
	lapic_wr(LAPIC_ICR_LO, icr_low);
	for (int i = 0; i < 1000 && (lapic_rd(LAPIC_ICR_LO) & (1u << 12)); i++)
		cpu_relax();
}

u64 clock_ns(void)
{
	return clock_read(this_cpu()->index);
}

/*
 * One measurement of the LAPIC timer rate in kHz. Read the count, then the
 * clock, the same way at both ends, so the (emulated, slow) reads shift both
 * samples alike and cancel.
 */
static u64 lapic_measure_khz(void)
{
	u64 t0, t1;
	u32 c0, c1;

	lapic_wr(LAPIC_TMICT, 0xffffffff);
	c0 = lapic_rd(LAPIC_TMCCT);
	t0 = clock_ns();
	do
		t1 = clock_ns();
	while (t1 - t0 < CALIBRATE_NS);
	c1 = lapic_rd(LAPIC_TMCCT);
	t1 = clock_ns();
	lapic_wr(LAPIC_TMICT, 0);
	return (u64)(c0 - c1) * 1000000ULL / (t1 - t0);
}

/*
 * The LAPIC timer rate: CPUID 0x40000010 EBX (kHz) if offered, else the
 * median of three measurements (a host preemption spoils one, not three).
 */
void lapic_calibrate(void)
{
	u64 m[3], t;
	u32 r[4];

	cpuid(0x40000000, 0, r);
	if (r[0] >= 0x40000010) {
		cpuid(0x40000010, 0, r);
		if (r[1]) {
			bootinfo.lapic_khz = r[1];
			return;
		}
	}
	lapic_wr(LAPIC_LVT_TIMER, LVT_MASKED | LAPIC_TIMER_VECTOR);
	for (int i = 0; i < 3; i++)
		m[i] = lapic_measure_khz();
	lapic_wr(LAPIC_LVT_TIMER, LAPIC_TIMER_VECTOR);
	if (m[0] > m[1]) {
		t = m[0]; m[0] = m[1]; m[1] = t;
	}
	if (m[1] > m[2])
		m[1] = m[2];
	bootinfo.lapic_khz = m[0] > m[1] ? m[0] : m[1];
}

/* The TSC rate, in kHz, that kvmclock's scale for this CPU implies. */
static u64 pvclock_tsc_khz(const struct pvclock *p)
{
	u64 khz = (1000000ULL << 32) / p->tsc_to_system_mul;

	return p->tsc_shift < 0 ? khz << -p->tsc_shift : khz >> p->tsc_shift;
}

/* Conversions ring 3 and the sleep path use; after clock_init_cpu(BSP). */
void clock_init_rates(void)
{
	if (bootinfo.clock == CLOCK_KVMCLOCK)
		bootinfo.tsc_khz = pvclock_tsc_khz(&pvclock[0]);
	if (!bootinfo.tsc_khz)
		bootinfo.tsc_khz = 1000000;
	bootinfo.ns_to_tsc_q32 = (bootinfo.tsc_khz << 32) / 1000000ULL;
	bootinfo.tsc_to_lapic_q32 = (bootinfo.lapic_khz << 32) / bootinfo.tsc_khz;
}

/* Arm the one-shot timer for count LAPIC timer counts. */
static void lapic_oneshot(u64 count)
{
	if (count == 0)
		count = 1;
	if (count > 0xffffffffULL)
		count = 0xffffffffULL;
	lapic_wr(LAPIC_TMICT, (u32)count);
}

/*
 * Halt until the TSC reaches deadline (the timer fires) or another
 * interrupt arrives. Ring 3 converted its deadline to TSC ticks, so the
 * ~100 us an emulated syscall entry takes does not delay the wakeup, and
 * ring 0 computes only one subtraction and one multiplication.
 */
void sleep_tsc(u64 deadline)
{
	struct percpu *cpu = this_cpu();
	u64 now = rdtsc();

	if (now >= deadline)
		return;
	cpu->timer_fired = 0;
	lapic_oneshot((u64)(((unsigned __int128)(deadline - now) * bootinfo.tsc_to_lapic_q32) >> 32));
	idle_wait(&cpu->timer_fired);
}

void park(void)
{
	struct percpu *cpu = this_cpu();

	lapic_wr(LAPIC_TMICT, 0);
	for (;;)
		idle_wait(&cpu->never);
}

/*
 * PIT channel 0 (its gate is always on; channel 2's needs port 0x61, which
 * QEMU microvm does not have), one-shot from 0xffff at 1.193182 MHz: latch
 * and read the count until 10 ms passed, and compare with the TSC. IRQ 0 is
 * never unmasked, so the terminal count interrupts nobody.
 */
static u32 pit_read_ch0(void)
{
	u32 lo, hi;

	outb(0x43, 0x00);			/* latch channel 0 */
	lo = inb(0x40);
	hi = inb(0x40);
	return lo | (hi << 8);
}

static u64 pit_calibrate_tsc_khz(void)
{
	const u32 ticks = 11932;		/* 10 ms */
	u32 c0, c = 0;
	u64 t0, t1;

	outb(0x43, 0x30);			/* channel 0, lobyte/hibyte, mode 0 */
	outb(0x40, 0xff);
	outb(0x40, 0xff);
	c0 = pit_read_ch0();
	t0 = rdtsc();
	for (int guard = 0; guard < 100000; guard++) {
		c = pit_read_ch0();
		if (c > c0 || c0 - c >= ticks)
			break;
	}
	t1 = rdtsc();
	if (c >= c0)				/* no PIT, or it wrapped: unusable */
		return 0;
	return (t1 - t0) * 1193182ULL / (c0 - c) / 1000;
}

void clock_init(void)
{
	u32 r[4];
	u32 max_leaf;

	cpuid(0x40000000, 0, r);
	max_leaf = r[0];
	bootinfo.hypervisor_kvm = r[1] == 0x4b4d564b && r[2] == 0x564b4d56 && r[3] == 0x4d;
	if (bootinfo.hypervisor_kvm && max_leaf >= 0x40000001) {
		cpuid(0x40000001, 0, r);
		bootinfo.steal_time = !!(r[0] & KVM_FEATURE_STEAL_TIME);
		if (r[0] & KVM_FEATURE_CLOCKSOURCE2) {
			bootinfo.clock = CLOCK_KVMCLOCK;
			return;
		}
	}
	if (max_leaf >= 0x40000010) {
		cpuid(0x40000010, 0, r);
		bootinfo.tsc_khz = r[0];
	}
	bootinfo.clock = CLOCK_CPUID_TSC;
	if (!bootinfo.tsc_khz) {
		bootinfo.clock = CLOCK_PIT_TSC;
		bootinfo.tsc_khz = pit_calibrate_tsc_khz();
		if (!bootinfo.tsc_khz) {
			bootinfo.clock = CLOCK_TSC_GUESS;
			bootinfo.tsc_khz = 1000000;
			kprint("{\"test\":\"error\",\"vcpu\":0,\"error\":\"no kvmclock, no TSC rate "
			       "in CPUID 0x40000010 and no PIT: times assume a 1 GHz TSC\"}");
		}
	}
	bootinfo.tsc_mult = (1000000ULL << 32) / bootinfo.tsc_khz;
	bootinfo.tsc0 = rdtsc();
}

void clock_init_cpu(struct percpu *cpu)
{
	if (bootinfo.clock == CLOCK_KVMCLOCK)
		wrmsr(MSR_KVM_SYSTEM_TIME_NEW, (u64)&pvclock[cpu->index] | 1);
	if (bootinfo.steal_time)
		wrmsr(MSR_KVM_STEAL_TIME, (u64)&steal[cpu->index] | 1);
}
