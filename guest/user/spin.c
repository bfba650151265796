// SPDX-License-Identifier: MIT
/*
 * `spin`: every vCPU counts loop iterations in ring 3 for secs seconds,
 * reporting the running total every interval_ms and the total at the end.
 * `idle`: every vCPU halts; CPU 0 wakes once after secs and powers off.
 */
#include "guest/user/user.h"

#define CHUNK 4096

/* Count CHUNK iterations; the barrier keeps the compiler from folding them. */
static inline u64 spin_chunk(u64 iters)
{
	for (int i = 0; i < CHUNK; i++)
		asm volatile("" : "+r"(iters));
	return iters + CHUNK;
}

void test_spin(unsigned int cpu)
{
	u64 start = now_ns(cpu), end = start + cfg.secs * 1000000000UL;
	u64 interval = cfg.interval_ms * 1000000UL, next = start + interval;
	u64 iters = 0, t;
	char secs[24];

	for (;;) {
		iters = spin_chunk(iters);
		t = now_ns(cpu);
		if (t >= end)
			break;
		if (t >= next) {
			report("{\"test\":\"spin\",\"vcpu\":%u,\"t_ms\":%lu,\"iterations\":%lu}",
			       cpu, (unsigned long)((t - start) / 1000000),
			       (unsigned long)iters);
			next += interval;
			if (next <= t)	/* fell behind (held out): no burst of lines */
				next = t + interval;
		}
	}
	report("{\"test\":\"spin\",\"vcpu\":%u,\"iterations\":%lu,\"seconds\":%s}", cpu,
	       (unsigned long)iters, fmt_secs(secs, t - start));
}

void test_idle(unsigned int cpu)
{
	u64 start = now_ns(cpu);
	char secs[24];

	if (cpu != 0)
		return;		/* finish() parks it: HLT, no timer */
	sleep_until_ns(cpu, start + cfg.secs * 1000000000UL);
	report("{\"test\":\"idle\",\"vcpu\":0,\"cpus\":%u,\"seconds\":%s}", bootinfo.ncpus,
	       fmt_secs(secs, now_ns(cpu) - start));
}
