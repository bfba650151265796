// SPDX-License-Identifier: MIT
/*
 * `governor`: Linux's own frequency loop, in the guest, against capvisor's
 * CPPC and APERF/MPERF. Every tick_ms:
 *   freq_scale = dAPERF * 1024 * 1024 / (dMPERF * max_ratio), capped at 1024
 *     (arch_scale_freq_tick), with the AMD max-ratio rule, one value for all
 *     CPUs: max_ratio = (highest * 1024 / nominal_perf of CPU 0 + 1024) / 2
 *     where "highest" is the kernel's model constant (255 by default,
 *     `highest=`), not the _CPC value (amd_set_max_freq_ratio);
 *   util = PELT-like average of running * freq_scale (halves every 32 ms);
 *   desired = 1.25 * max_perf * util / capacity (schedutil), written to
 *     desired_perf, clamped to [lowest_perf, highest_perf] from _CPC.
 * capacity is 1024 * this vCPU's highest_perf / the largest highest_perf
 * (what a kernel that derives CPU capacities from CPPC uses, e.g. Linux
 * 6.10+ topology_init_cpu_capacity_cppc); asym=0 makes it 1024 for every
 * vCPU, as 6.1 on AMD has it. capvisor's APERF/MPERF share one reference
 * rate, so a little vCPU at its top reads dAPERF/dMPERF = its capacity: with
 * asym=0 its util cannot exceed that share and its request sinks to the
 * bottom (the seed-002 feedback again, from heterogeneity).
 * max_perf is _CPC highest_perf (what schedutil uses once boost is counted,
 * the seed-002 fix). naive=1 uses nominal_perf instead (the v5.11 bug): with
 * a workload busy duty% of the time that is below 1.25 / (max_ratio / 1024)
 * the requested performance feeds back on itself and collapses.
 *
 * model=1 replaces the hardware and the clock by a model CPU (highest 255,
 * lowest 64, nominal from nominal= or 204) that delivers exactly what was
 * asked, busy exactly duty% of each simulated tick, with APERF/MPERF computed
 * from that: the same loop then runs anywhere (QEMU too) in microseconds and
 * deterministically, so a test can check convergence and the seed-002
 * collapse without depending on how busy the host is.
 */
#include "guest/user/user.h"
#include "guest/user/perf.h"

#define SCALE 1024UL
#define MODEL_HIGHEST 255
#define PLANT_HIGHEST 255
#define PLANT_LOWEST 64
#define PLANT_NOMINAL 204

/* 2^(-n/32) in Q32 for n = 0..31: the PELT decay per millisecond, y^32 = 1/2. */
static const u64 decay_q32[32] = {
	4294967296, 4202935003, 4112874773, 4024744348, 3938502376, 3854108391, 3771522796,
	3690706840, 3611622603, 3534232978, 3458501653, 3384393094, 3311872529, 3240905930,
	3171459999, 3103502151, 3037000500, 2971923842, 2908241642, 2845924021, 2784941738,
	2725266179, 2666869345, 2609723834, 2553802834, 2499080105, 2445529972, 2393127307,
	2341847524, 2291666561, 2242560872, 2194507417,
};

struct governor {
	u64 max_ratio;		/* Q10 */
	u64 capacity;		/* 0..1024 */
	u64 max_perf, lowest, highest, nominal;
	u64 util;		/* 0..1024 */
	u64 desired, min_seen, max_seen;
	u64 freq_scale;
};

static u64 decay(u64 v, u64 ms)
{
	if (ms >= 32 * 20)
		return 0;
	v >>= ms / 32;
	return (v * decay_q32[ms % 32]) >> 32;
}

/* One tick: running_pm is the busy share of the tick in 1/1024. */
static void governor_tick(struct governor *g, const struct perf_sample *a,
			  const struct perf_sample *b, u64 ms, u64 running)
{
	u64 da = b->aperf - a->aperf, dm = b->mperf - a->mperf, kept, next;

	g->freq_scale = SCALE;
	if (dm && da < (1UL << 43))
		g->freq_scale = (da << 20) / (dm * g->max_ratio);
	if (g->freq_scale > SCALE)
		g->freq_scale = SCALE;
	kept = decay(SCALE, ms);
	g->util = (g->util * kept + running * g->freq_scale / SCALE * (SCALE - kept)) / SCALE;
	next = 5 * g->max_perf * g->util / (4 * g->capacity);
	if (next < g->lowest)
		next = g->lowest;
	if (next > g->highest)
		next = g->highest;
	if (next != g->desired && !cfg.model)	/* schedutil skips unchanged requests too */
		sys2(SYS_CPPC_WRITE, CPPC_REG_DESIRED_PERF, (long)next);
	g->desired = next;
	if (next < g->min_seen)
		g->min_seen = next;
	if (next > g->max_seen)
		g->max_seen = next;
}

/* The model CPU: MPERF counts busy ns, APERF the same scaled by desired/nominal. */
static void plant_sample(struct perf_sample *s, const struct governor *g, u64 busy_ns)
{
	s->mperf += busy_ns;
	s->aperf += busy_ns * g->desired / g->nominal;
}

/* The largest _CPC highest_perf of all vCPUs: capacity 1024. */
static u64 biggest_highest(void)
{
	u64 m = 0;

	for (unsigned int i = 0; i < bootinfo.ncpus; i++)
		if (bootinfo.cpc[i].highest > m)
			m = bootinfo.cpc[i].highest;
	return m;
}

static int governor_init(unsigned int cpu, struct governor *g)
{
	u64 model = cfg.highest ? cfg.highest : MODEL_HIGHEST, ref_nominal;

	g->capacity = SCALE;
	if (cfg.model) {
		g->nominal = ref_nominal = cfg.nominal ? cfg.nominal : PLANT_NOMINAL;
		g->highest = PLANT_HIGHEST;
		g->lowest = PLANT_LOWEST;
	} else {
		const struct cpc_caps *caps = &bootinfo.cpc[cpu];

		g->nominal = cfg.nominal ? cfg.nominal : caps->nominal;
		ref_nominal = cfg.nominal ? cfg.nominal : bootinfo.cpc[0].nominal;
		g->highest = caps->highest ? caps->highest : model;
		g->lowest = caps->lowest ? caps->lowest : 1;
		if (cfg.asym && caps->highest && biggest_highest())
			g->capacity = SCALE * caps->highest / biggest_highest();
	}
	if (!g->nominal || !ref_nominal || !g->capacity || (!bootinfo.aperfmperf && !cfg.model)) {
		report("{\"test\":\"governor\",\"vcpu\":%u,\"error\":\"needs %s\"}", cpu,
		       !bootinfo.aperfmperf ? "APERF/MPERF (CPUID 6 ECX bit 0)" :
		       "nominal_perf: no _CPC in the DSDT and no nominal= key");
		return -1;
	}
	g->max_ratio = (model * SCALE / ref_nominal + SCALE) / 2;
	g->max_perf = cfg.naive ? g->nominal : g->highest;
	/* Start where the firmware leaves it (nominal), or at start=. */
	g->desired = cfg.start ? cfg.start : g->nominal;
	if (g->desired < g->lowest)
		g->desired = g->lowest;
	if (g->desired > g->highest)
		g->desired = g->highest;
	g->min_seen = g->max_seen = g->desired;
	g->util = g->capacity * g->desired / g->highest;
	if (!cfg.model) {
		sys2(SYS_CPPC_WRITE, CPPC_REG_ENABLE, 1);
		sys2(SYS_CPPC_WRITE, CPPC_REG_DESIRED_PERF, (long)g->desired);
	}
	return 0;
}

/* Busy for duty% of the tick (wall time), halted for the rest. */
static u64 run_tick(unsigned int cpu, u64 t0, u64 tick, u64 duty)
{
	u64 busy_end = t0 + tick * duty / 100, t;

	while ((t = now_ns(cpu)) < busy_end)
		cpu_pause();
	if (duty < 100)
		sleep_until_ns(cpu, t0 + tick);
	return t - t0;
}

static void report_final(unsigned int cpu, const struct governor *g, u64 duty, u64 ns)
{
	char secs[24];

	report("{\"test\":\"governor\",\"vcpu\":%u,\"model\":%lu,\"naive\":%lu,\"duty\":%lu,"
	       "\"max_ratio\":%lu,\"capacity\":%lu,\"nominal_perf\":%lu,\"highest_perf\":%lu,"
	       "\"lowest_perf\":%lu,\"final_desired\":%lu,\"min_desired\":%lu,"
	       "\"max_desired\":%lu,\"seconds\":%s}",
	       cpu, cfg.model, cfg.naive, duty, g->max_ratio, g->capacity, g->nominal, g->highest,
	       g->lowest, g->desired, g->min_seen, g->max_seen, fmt_secs(secs, ns));
}

static void report_progress(unsigned int cpu, u64 t_ms, const struct governor *g, u64 running,
			    u64 tick_us)
{
	report("{\"test\":\"governor\",\"vcpu\":%u,\"t_ms\":%lu,\"desired\":%lu,\"util\":%lu,"
	       "\"freq_scale\":%lu,\"running\":%lu,\"tick_us\":%lu}", cpu, t_ms, g->desired,
	       g->util, g->freq_scale, running, tick_us);
}

/* model=1: simulated ticks on the model CPU; returns the simulated ns. */
static u64 run_model(unsigned int cpu, struct governor *g, u64 tick, u64 duty)
{
	u64 ticks = cfg.secs * 1000000000UL / tick, every = cfg.interval_ms * 1000000UL / tick;
	u64 running = duty * SCALE / 100;
	struct perf_sample prev, cur;

	memset(&prev, 0, sizeof(prev));
	for (u64 i = 1; i <= ticks; i++) {
		cur = prev;
		plant_sample(&cur, g, tick * duty / 100);
		governor_tick(g, &prev, &cur, tick / 1000000, running);
		prev = cur;
		if (every && i % every == 0)
			report_progress(cpu, i * tick / 1000000, g, running, tick / 1000);
	}
	return ticks * tick;
}

void test_governor(unsigned int cpu)
{
	u64 tick = (cfg.tick_ms ? cfg.tick_ms : 4) * 1000000UL;
	u64 duty = cfg.duty ? cfg.duty : 100;
	u64 start = now_ns(cpu), end = start + cfg.secs * 1000000000UL;
	u64 interval = cfg.interval_ms * 1000000UL, next_report = start + interval, t0;
	struct perf_sample prev, cur;
	struct governor g;

	if (governor_init(cpu, &g))
		return;
	if (cfg.model) {
		report_final(cpu, &g, duty, run_model(cpu, &g, tick, duty));
		return;
	}
	perf_sample(&prev, 0);
	for (t0 = now_ns(cpu); t0 < end;) {
		u64 busy = run_tick(cpu, t0, tick, duty), t1 = now_ns(cpu), running;

		perf_sample(&cur, 0);
		running = t1 > t0 ? busy * SCALE / (t1 - t0) : SCALE;
		governor_tick(&g, &prev, &cur, (t1 - t0) / 1000000, running);
		prev = cur;
		if (t1 >= next_report) {
			report_progress(cpu, (t1 - start) / 1000000, &g, running, (t1 - t0) / 1000);
			next_report += interval;
		}
		t0 = t1;
	}
	report_final(cpu, &g, duty, now_ns(cpu) - start);
}
