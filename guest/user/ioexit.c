// SPDX-License-Identifier: MIT
/*
 * `ioexit n=N port=P`: what a guest pays for the VMM's exits, for its
 * benchmarks: N `out` to an unused port from ring 3 (TSS I/O bitmap) and
 * from ring 0, a null syscall (the SYS_TIME round trip), and, when capvisor
 * serves them, an emulated RDMSR (APERF, ring 0) and a CPPC register read
 * (ring 3 and ring 0). Absent features read as GERR_NODEV (-19).
 */
#include "guest/user/user.h"

#define IOEXIT_DEFAULT_PORT	0x80
#define IOEXIT_DEFAULT_N	10000
#define SYSCALL_SAMPLES		200
#define COUNTER_SAMPLES_MAX	2000

static long per_op(long total_ns, u64 n)
{
	return total_ns < 0 ? total_ns : total_ns / (long)n;
}

/* ns per read of this vCPU's CPPC reference counter (low half) from ring 3. */
static long cppc_ring3_ns(unsigned int cpu, u64 n)
{
	u64 reg = LAYOUT_CPPC_BASE + bootinfo.uid[cpu] * LAYOUT_PER_VCPU_STRIDE +
		  CPPC_REG_REF_COUNTER, t0 = now_ns(cpu);

	for (u64 i = 0; i < n; i++)
		(void)*(volatile u32 *)reg;
	return (long)((now_ns(cpu) - t0) / n);
}

void test_ioexit(unsigned int cpu)
{
	u64 n = cfg.n ? cfg.n : IOEXIT_DEFAULT_N, port = cfg.port ? cfg.port : IOEXIT_DEFAULT_PORT;
	u64 m = n < COUNTER_SAMPLES_MAX ? n : COUNTER_SAMPLES_MAX, t0, ring3_ns, syscall_ns;
	struct guest_cppc_regs r = { 0 };
	long ring0_ns, msr_ns, cppc3 = GERR_NODEV, cppc0 = GERR_NODEV;

	if (cpu != 0)
		return;
	t0 = now_ns(cpu);
	for (u64 i = 0; i < n; i++)
		asm volatile("outb %0, %1" : : "a"((u8)0), "Nd"((u16)port));
	ring3_ns = now_ns(cpu) - t0;
	ring0_ns = sys2(SYS_OUT_LOOP, (long)port, (long)n);
	t0 = now_ns(cpu);
	for (int i = 0; i < SYSCALL_SAMPLES; i++)
		sys0(SYS_TIME);
	syscall_ns = (now_ns(cpu) - t0) / SYSCALL_SAMPLES;
	msr_ns = per_op(sys2(SYS_MSR_LOOP, MSR_IA32_APERF, (long)m), m);
	/* An absent page reads 0 (QEMU) or all ones (an unclaimed MMIO read). */
	if (!sys1(SYS_CPPC_READ, (long)&r) && r.reference && r.reference != ~0UL) {
		cppc3 = cppc_ring3_ns(cpu, m);
		cppc0 = per_op(sys2(SYS_MMIO_LOOP, CPPC_REG_REF_COUNTER, (long)m), m);
	}
	report("{\"test\":\"ioexit\",\"vcpu\":0,\"n\":%lu,\"port\":%lu,\"ring3_ns_per_exit\":%lu,"
	       "\"ring0_ns_per_exit\":%ld,\"syscall_ns\":%lu,\"msr_ring0_ns\":%ld,"
	       "\"cppc_ring3_ns\":%ld,\"cppc_ring0_ns\":%ld}", n, port, ring3_ns / n,
	       per_op(ring0_ns, n), syscall_ns, msr_ns, cppc3, cppc0);
}
