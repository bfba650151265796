// SPDX-License-Identifier: MIT
/*
 * Sleepers in the fluid-ideal balance (sched/fair_sleepers.c): the demand
 * the solve caps a sleeper at.
 */
#include "tests/unit/test_sched_util.h"

/*
 * The solve takes a sleeper at its demand over seconds, not over the last
 * few intervals: the ideal is defined with each sleeper at its demand over
 * the run, and the ideal rates are not linear in the demands, so an ideal
 * that follows each interval's figure averages below the ideal at the
 * average demand (seed 1 #32 of the fair corpus, see fair_sleeper_use()).
 * One pCPU; a busy entity beside a sleeper runnable 32 ms of every 256
 * (about 1/16 of the pCPU in all, in bursts of half of it). The busy
 * one's ideal stays within 1/32 of the pCPU from 3 s on; with the 1/8
 * EWMA it swung by about a tenth between bursts.
 */
static void test_sleeper_solved_at_long_demand(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0, lo = UINT64_MAX, hi = 0, one = 1ull << 20;
	int busy = add_ent(s, "busy", 1024, true, 0);
	int sl = add_ent(s, "sleeper", 1024, false, 0);
	struct sched_entity *b = sched_ent(s, busy);

	while (now < 6000 * MS) {
		now += MS;
		if (now / MS % 256 == 0)
			sched_wakeup(s, sl, now);
		else if (now / MS % 256 == 32)
			sched_block(s, sl, now);
		sched_tick(s, now);
		if (now < 3000 * MS || !b->lag_tracked)
			continue;	/* the long mean settles */
		lo = b->lag_rate < lo ? b->lag_rate : lo;
		hi = b->lag_rate > hi ? b->lag_rate : hi;
	}
	CU_ASSERT(hi >= lo && hi - lo < one / 32);
	CU_ASSERT(lo > one - one / 8 && hi < one);	/* about 15/16 of it */
	sched_destroy(s);
}

/*
 * A sleeper stays one through a long burst: runnable 200 ms of every 600
 * beside an equal busy entity on one pCPU (12 balances runnable at a
 * time, beyond the 8 it was remembered for before), it is never solved as
 * busy, and the busy one's ideal never drops to the half a busy sleeper
 * would leave it (it uses about 1/6 of the pCPU).
 */
static void test_sleeper_through_long_burst(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0, lowest = UINT64_MAX, one = 1ull << 20;
	int busy = add_ent(s, "busy", 1024, true, 0);
	int sl = add_ent(s, "sleeper", 1024, false, 0);
	struct sched_entity *b = sched_ent(s, busy), *z = sched_ent(s, sl);
	bool tracked = false;

	while (now < 4000 * MS) {
		now += MS;
		if (now / MS % 600 == 0)
			sched_wakeup(s, sl, now);
		else if (now / MS % 600 == 200)
			sched_block(s, sl, now);
		sched_tick(s, now);
		if (now < 1200 * MS)
			continue;	/* the sleeper's demand settles */
		tracked |= z->lag_tracked;
		if (b->lag_tracked && b->lag_rate < lowest)
			lowest = b->lag_rate;
	}
	CU_ASSERT(!tracked);
	CU_ASSERT(lowest > one - one / 4);
	sched_destroy(s);
}

UNIT_SUITE(sched_sleepers, NULL, NULL,
	   UNIT_TEST(test_sleeper_solved_at_long_demand),
	   UNIT_TEST(test_sleeper_through_long_burst))
