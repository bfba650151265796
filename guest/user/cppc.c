// SPDX-License-Identifier: MIT
/*
 * `cppc`: a ring-3 spin while, every interval_ms, ring 0 reads this vCPU's
 * APERF/MPERF and CPPC reference/delivered counters (as Linux does); each
 * interval reports both ratios next to the measured spin speed. With
 * desired=LIST it sets cppc_enable, then writes desired_perf, cycling through
 * LIST every switch_ms, so a test can see speed follow the request.
 */
#include "guest/user/user.h"
#include "guest/user/perf.h"

int perf_sample(struct perf_sample *s, int with_cppc)
{
	struct guest_cppc_regs r;
	u64 am[2];

	memset(s, 0, sizeof(*s));
	memset(&r, 0, sizeof(r));
	s->aperf_ok = !sys1(SYS_APERFMPERF, (long)am);
	if (s->aperf_ok) {
		s->aperf = am[0];
		s->mperf = am[1];
	}
	if (!with_cppc)
		return s->aperf_ok;
	/* An absent page reads 0 (QEMU) or all ones (an unclaimed MMIO read). */
	s->cppc_ok = !sys1(SYS_CPPC_READ, (long)&r) && r.reference && r.reference != ~0UL;
	s->reference = r.reference;
	s->delivered = r.delivered;
	s->desired = r.desired;
	s->min = r.min;
	s->max = r.max;
	s->enable = r.enable;
	s->guaranteed = r.guaranteed;
	return s->aperf_ok || s->cppc_ok;
}

static u64 spin_for(unsigned int cpu, u64 until, u64 *iters)
{
	u64 t, n = *iters;

	do {
		n = spin_count(n);
		t = now_ns(cpu);
	} while (t < until);
	*iters = n;
	return t;
}

static void report_interval(unsigned int cpu, u64 t_ms, const struct perf_sample *a,
			    const struct perf_sample *b, u64 iters, u64 dt)
{
	char r1[32], r2[32];

	report("{\"test\":\"cppc\",\"vcpu\":%u,\"t_ms\":%lu,\"daperf\":%lu,\"dmperf\":%lu,"
	       "\"aperf_mperf\":%s,\"ddelivered\":%lu,\"dref\":%lu,\"delivered_ref\":%s,"
	       "\"iters_per_s\":%lu}", cpu, t_ms, b->aperf - a->aperf, b->mperf - a->mperf,
	       fmt_ratio(r1, b->aperf - a->aperf, b->mperf - a->mperf),
	       b->delivered - a->delivered, b->reference - a->reference,
	       fmt_ratio(r2, b->delivered - a->delivered, b->reference - a->reference),
	       dt >= 1000 ? iters * 1000000UL / (dt / 1000) : 0);
}

static void set_desired(unsigned int cpu, u64 start, unsigned int k)
{
	u64 v = cfg.desired[k % cfg.n_desired];
	long rc = sys2(SYS_CPPC_WRITE, CPPC_REG_DESIRED_PERF, (long)v);

	report("{\"test\":\"cppc\",\"vcpu\":%u,\"event\":\"desired\",\"t_ms\":%lu,\"desired\":%lu,"
	       "\"rc\":%ld}", cpu, (now_ns(cpu) - start) / 1000000, v, rc);
}

void test_cppc(unsigned int cpu)
{
	u64 start = now_ns(cpu), end = start + cfg.secs * 1000000000UL;
	u64 interval = cfg.interval_ms * 1000000UL, sw = (cfg.switch_ms ? cfg.switch_ms : 500) *
							   1000000UL;
	u64 next = start + interval, next_sw = start + sw, iters = 0, last_iters = 0, t, last_t;
	struct perf_sample first, prev, cur;
	unsigned int k = 0;
	char r1[32], r2[32], secs[24];

	if (!perf_sample(&first, 1)) {
		report("{\"test\":\"cppc\",\"vcpu\":%u,\"cppc\":false,\"aperfmperf\":false,"
		       "\"error\":\"no CPPC register page answers and CPUID 6 has no APERFMPERF "
		       "(not capvisor, or CPPC disabled)\"}", cpu);
		return;
	}
	report("{\"test\":\"cppc\",\"vcpu\":%u,\"event\":\"start\",\"cppc\":%s,\"aperfmperf\":%s,"
	       "\"desired\":%u,\"min\":%u,\"max\":%u,\"enable\":%u,\"guaranteed\":%u,\"highest_perf\":%u,"
	       "\"nominal_perf\":%u,\"lowest_nonlinear_perf\":%u,\"lowest_perf\":%u}", cpu,
	       first.cppc_ok ? "true" : "false", first.aperf_ok ? "true" : "false",
	       first.desired, first.min, first.max, first.enable, first.guaranteed,
	       bootinfo.cpc[cpu].highest,
	       bootinfo.cpc[cpu].nominal, bootinfo.cpc[cpu].lowest_nonlinear,
	       bootinfo.cpc[cpu].lowest);
	/* As an OS does (ACPI 8.4.6.1.2.5): enable CPPC before making requests. */
	if (cfg.n_desired) {
		sys2(SYS_CPPC_WRITE, CPPC_REG_ENABLE, 1);
		set_desired(cpu, start, k++);
	}
	perf_sample(&prev, 1);
	last_t = now_ns(cpu);
	while ((t = spin_for(cpu, next < end ? next : end, &iters)) < end) {
		if (cfg.n_desired && t >= next_sw) {
			set_desired(cpu, start, k++);
			next_sw += sw;
		}
		if (t < next)
			continue;
		perf_sample(&cur, 1);
		report_interval(cpu, (t - start) / 1000000, &prev, &cur, iters - last_iters,
				t - last_t);
		prev = cur;
		last_iters = iters;
		last_t = now_ns(cpu);
		next += interval;
	}
	perf_sample(&cur, 1);
	report("{\"test\":\"cppc\",\"vcpu\":%u,\"iterations\":%lu,\"seconds\":%s,"
	       "\"aperf_mperf\":%s,\"delivered_ref\":%s}", cpu, iters,
	       fmt_secs(secs, t - start), fmt_ratio(r1, cur.aperf - first.aperf,
						    cur.mperf - first.mperf),
	       fmt_ratio(r2, cur.delivered - first.delivered, cur.reference - first.reference));
}
