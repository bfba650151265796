/* SPDX-License-Identifier: MIT */
/* Helpers shared by the tests/unit/test_sched_*.c suites (white-box: internals). */
#ifndef CAPVISOR_TEST_SCHED_UTIL_H
#define CAPVISOR_TEST_SCHED_UTIL_H

#include "sched/internal.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define MS	1000000ull
#define US	1000ull

/* Host of up to two clusters ("big", "little"); nlittle may be 0. */
static inline struct sched *mk_sched(unsigned int nbig, unsigned int cap_big,
				     unsigned int nlittle, unsigned int cap_little,
				     const struct sched_config *cfg)
{
	struct sched_topology t;
	char err[256];
	struct sched *s;

	memset(&t, 0, sizeof(t));
	t.nr_clusters = nlittle ? 2 : 1;
	snprintf(t.clusters[0].name, SCHED_NAME_MAX, "big");
	t.clusters[0].nr_cpus = nbig;
	t.clusters[0].capacity = cap_big;
	if (nlittle) {
		snprintf(t.clusters[1].name, SCHED_NAME_MAX, "little");
		t.clusters[1].nr_cpus = nlittle;
		t.clusters[1].capacity = cap_little;
	}
	s = sched_create(&t, cfg, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	return s;
}

/* A runnable fair entity of weight 1024 in group gid (SCHED_NONE: the root), allowed on pCPU cpu only. */
static inline int add_pinned_in_group(struct sched *s, const char *name, int gid, unsigned int cpu)
{
	struct sched_entity_params p;
	int id;

	sched_entity_params_init(&p, name);
	p.runnable = true;
	p.group = gid;
	sched_cpumask_set(&p.affinity, cpu);
	id = sched_entity_add(s, &p, 0, NULL, 0);
	CU_ASSERT_FATAL(id >= 0);
	return id;
}

/* A fair entity of `weight` in group gid (SCHED_NONE: the root). */
static inline int add_in_group(struct sched *s, const char *name, uint32_t weight, bool runnable,
			       int gid, uint64_t now)
{
	struct sched_entity_params p;
	int id;

	sched_entity_params_init(&p, name);
	p.weight = weight;
	p.runnable = runnable;
	p.group = gid;
	id = sched_entity_add(s, &p, now, NULL, 0);
	CU_ASSERT_FATAL(id >= 0);
	return id;
}

/* A runnable fair entity of `weight` in group gid. */
static inline int add_member(struct sched *s, const char *name, uint32_t weight, int gid,
			     uint64_t now)
{
	return add_in_group(s, name, weight, true, gid, now);
}

static inline int add_ent(struct sched *s, const char *name, uint32_t weight, bool runnable,
			  uint64_t now)
{
	return add_in_group(s, name, weight, runnable, SCHED_NONE, now);
}

/* One entity's cap: entity index, quota and period (ns). */
struct cap_of {
	int i;
	uint64_t quota, period;
};

/* Busy entities of weights w[0..n) into id[], then the caps on them. */
static inline void add_capped(struct sched *s, int *id, const uint32_t *w, int n,
			      const struct cap_of *caps, int ncaps)
{
	for (int i = 0; i < n; i++)
		id[i] = add_ent(s, "v", w[i], true, 0);
	for (int c = 0; c < ncaps; c++)
		CU_ASSERT_EQUAL(sched_set_cap(s, id[caps[c].i], caps[c].quota, caps[c].period, 0,
					      NULL, 0), 0);
}

static inline int add_dl(struct sched *s, const char *name, uint64_t runtime, uint64_t deadline,
			 uint64_t period, bool runnable, uint64_t now)
{
	struct sched_entity_params p;

	sched_entity_params_init(&p, name);
	p.dl.runtime_ns = runtime;
	p.dl.deadline_ns = deadline;
	p.dl.period_ns = period;
	p.runnable = runnable;
	return sched_entity_add(s, &p, now, NULL, 0);
}

/* Tick every `tick` ns from *now (exclusive) to `until` (inclusive). */
static inline void run_until(struct sched *s, uint64_t *now, uint64_t until, uint64_t tick)
{
	while (*now + tick <= until) {
		*now += tick;
		sched_tick(s, *now);
	}
}

/*
 * Drive every pCPU the way the simulator does: to the next tick or the
 * earliest engine event, whichever comes first; an event alone runs only
 * the pCPUs it is due on.
 */
static inline void run_events_all(struct sched *s, uint64_t *now, uint64_t until)
{
	while (*now < until) {
		uint64_t tick = (*now / MS + 1) * MS, next = tick;

		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
			uint64_t ev = sched_next_event(s, cpu);

			if (ev > *now && ev < next)
				next = ev;
		}
		*now = next < until ? next : until;
		if (*now == tick) {
			sched_tick(s, *now);
			continue;
		}
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			if (sched_next_event(s, cpu) <= *now)
				sched_tick_cpu(s, cpu, *now);
	}
}

/* Make se's lag `lag` work ns now, at the rate of a whole pCPU from now on. */
static inline void set_lag(struct sched *s, struct sched_entity *se, int64_t lag, uint64_t now)
{
	se->lag_tracked = true;
	se->lag = lag;
	se->lag_rate = 1ull << RATE_SHIFT;
	se->lag_work = se->st.work_ns + se->run_work_ns;
	s->lag_last = now;
}

static inline int curr_of(struct sched *s, unsigned int cpu)
{
	struct sched_cpu_state st;

	CU_ASSERT_FATAL(sched_cpu_curr(s, cpu, &st) == 0);
	return st.curr;
}

static inline uint64_t cpu_time(struct sched *s, int id)
{
	struct sched_entity_stats st;

	CU_ASSERT_FATAL(sched_entity_stats(s, id, &st) == 0);
	return st.cpu_time_ns;
}

/* Work done so far: time x capacity / 1024 (the oracles' unit). */
static inline uint64_t work_of(struct sched *s, int id)
{
	struct sched_entity_stats st;

	CU_ASSERT_FATAL(sched_entity_stats(s, id, &st) == 0);
	return st.work_ns;
}

/* A tick at `now` (ms); sleeper `id` wakes at each multiple of period_ms and blocks burst_ms later. */
static inline void tick_with_bursts(struct sched *s, uint64_t now, int id, uint64_t period_ms,
				    uint64_t burst_ms)
{
	if (now / MS % period_ms == 0)
		sched_wakeup(s, id, now);
	else if (now / MS % period_ms == burst_ms)
		sched_block(s, id, now);
	sched_tick(s, now);
}

/*
 * A busy entity and a sleeper of weight 1024 on one pCPU, the sleeper
 * runnable burst_ms of every period_ms, ticked every ms to end_ms: the
 * lowest ideal rate of the busy one after settle_ms, and in *tracked
 * whether the sleeper was ever solved as busy (lag_tracked) then.
 */
static inline uint64_t burst_sleeper_lowest(uint64_t period_ms, uint64_t burst_ms,
					    uint64_t end_ms, uint64_t settle_ms, bool *tracked)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0, lowest = UINT64_MAX;
	int busy = add_ent(s, "busy", 1024, true, 0);
	int sl = add_ent(s, "sleeper", 1024, false, 0);
	struct sched_entity *b = sched_ent(s, busy), *z = sched_ent(s, sl);

	*tracked = false;
	while (now < end_ms * MS) {
		now += MS;
		tick_with_bursts(s, now, sl, period_ms, burst_ms);
		if (now < settle_ms * MS)
			continue;	/* the sleeper's demand settles */
		*tracked |= z->lag_tracked;
		if (b->lag_tracked && b->lag_rate < lowest)
			lowest = b->lag_rate;
	}
	sched_destroy(s);
	return lowest;
}

#endif
