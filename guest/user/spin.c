// SPDX-License-Identifier: MIT
/*
 * `spin`: every vCPU counts loop iterations in ring 3 for secs seconds,
 * reporting the running total every interval_ms and the total at the end;
 * then CPU 0 sums up every vCPU's speed relative to vCPU 0.
 * `idle`: every vCPU halts; CPU 0 wakes once after secs and powers off.
 */
#include "guest/user/user.h"

#define SUMMARY_MAX 6144	/* 255 vCPUs: ~4.6 KB */

struct spin_result {
	u64 iters, ns;
} __attribute__((aligned(64)));

static struct spin_result results[GUEST_MAX_CPUS];
static volatile u32 spins_done;

/*
 * CPU 0, once every vCPU finished: iterations per second of each vCPU and
 * its speed relative to vCPU 0 (what the README's demo prints).
 */
static void report_summary(unsigned int cpu)
{
	char buf[SUMMARY_MAX], ratio[32];
	u64 ips[GUEST_MAX_CPUS];
	int n;

	while (__atomic_load_n(&spins_done, __ATOMIC_ACQUIRE) < bootinfo.ncpus)
		sleep_until_ns(cpu, now_ns(cpu) + 1000000);
	n = fmt(buf, sizeof(buf), "{\"test\":\"spin-summary\",\"vcpu\":0,\"cpus\":%u,"
		"\"iters_per_s\":[", bootinfo.ncpus);
	for (unsigned int i = 0; i < bootinfo.ncpus; i++) {
		u64 us = results[i].ns / 1000;

		ips[i] = us ? results[i].iters * 1000000UL / us : 0;
		n += fmt(buf + n, sizeof(buf) - (size_t)n, "%s%lu", i ? "," : "", ips[i]);
	}
	n += fmt(buf + n, sizeof(buf) - (size_t)n, "],\"relative\":[");
	for (unsigned int i = 0; i < bootinfo.ncpus; i++)
		n += fmt(buf + n, sizeof(buf) - (size_t)n, "%s%s", i ? "," : "",
			 fmt_ratio(ratio, ips[i], ips[0]));
	n += fmt(buf + n, sizeof(buf) - (size_t)n, "]}");
	if (n < (int)sizeof(buf))
		sys2(SYS_REPORT, (long)buf, n);
}

void test_spin(unsigned int cpu)
{
	u64 start = now_ns(cpu), end = start + cfg.secs * 1000000000UL;
	u64 interval = cfg.interval_ms * 1000000UL, next = start + interval;
	u64 iters = 0, t;
	char secs[24];

	for (;;) {
		iters = spin_count(iters);
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
	results[cpu].iters = iters;
	results[cpu].ns = t - start;
	__atomic_add_fetch(&spins_done, 1, __ATOMIC_ACQ_REL);
	if (cpu == 0)
		report_summary(cpu);
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
