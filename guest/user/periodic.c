// SPDX-License-Identifier: MIT
/*
 * `periodic run_us=X period_us=Y`: each vCPU sleeps until the start of its
 * next period, records how late it woke (wakeup latency), runs X us in ring
 * 3, and repeats for secs seconds; then it reports p50/p99/max latency and
 * how many spin iterations it did in its run phases: a guest-paced duty cycle
 * whose work per running second can be set against a continuous spin's.
 */
#include "guest/user/user.h"

/* Latency histogram: 1 us buckets to 512 us, then 64 us buckets to ~33 ms. */
#define FINE_BUCKETS	512
#define COARSE_SHIFT	6
#define BUCKETS		1024

static u32 hist[GUEST_MAX_CPUS][BUCKETS];

static unsigned int bucket_of(u64 us)
{
	u64 b;

	if (us < FINE_BUCKETS)
		return (unsigned int)us;
	b = FINE_BUCKETS + ((us - FINE_BUCKETS) >> COARSE_SHIFT);
	return b >= BUCKETS ? BUCKETS - 1 : (unsigned int)b;
}

static u64 bucket_us(unsigned int b)
{
	if (b < FINE_BUCKETS)
		return b;
	return FINE_BUCKETS + ((u64)(b - FINE_BUCKETS) << COARSE_SHIFT);
}

/* The smallest latency (bucket floor) at or below which pct% of samples lie. */
static u64 percentile(const u32 *h, u64 samples, unsigned int pct)
{
	u64 want = (samples * pct + 99) / 100, seen = 0;

	for (unsigned int b = 0; b < BUCKETS; b++) {
		seen += h[b];
		if (seen >= want && want)
			return bucket_us(b);
	}
	return 0;
}

void test_periodic(unsigned int cpu)
{
	u64 period = (cfg.period_us ? cfg.period_us : 1000) * 1000UL;
	u64 run = (cfg.run_us ? cfg.run_us : 100) * 1000UL;
	u64 start = now_ns(cpu), end = start + cfg.secs * 1000000000UL;
	u64 next = start + period, samples = 0, missed = 0, max_ns = 0, sum_ns = 0;
	u64 iters = 0, run_ns = 0;
	u32 *h = hist[cpu];

	if (run >= period) {
		if (cpu == 0)
			report("{\"test\":\"error\",\"vcpu\":0,\"error\":\"run_us=%lu must be below "
			       "period_us=%lu\"}", run / 1000, period / 1000);
		return;
	}
	while (next + run <= end) {
		u64 woke, late;

		sleep_until_ns(cpu, next);
		woke = now_ns(cpu);
		late = woke - next;
		h[bucket_of(late / 1000)]++;
		samples++;
		sum_ns += late;
		if (late > max_ns)
			max_ns = late;
		for (u64 t = woke; t < woke + run; t = now_ns(cpu))
			iters = spin_count(iters);
		run_ns += now_ns(cpu) - woke;
		next += period;
		for (u64 t = now_ns(cpu); next <= t; next += period)
			missed++;
	}
	report("{\"test\":\"periodic\",\"vcpu\":%u,\"run_us\":%lu,\"period_us\":%lu,"
	       "\"samples\":%lu,\"missed\":%lu,\"p50_us\":%lu,\"p99_us\":%lu,\"max_us\":%lu,"
	       "\"mean_us\":%lu,\"iterations\":%lu,\"ran_us\":%lu}", cpu, run / 1000,
	       period / 1000, samples, missed, percentile(h, samples, 50),
	       percentile(h, samples, 99), max_ns / 1000, samples ? sum_ns / samples / 1000 : 0,
	       iters, run_ns / 1000);
}
