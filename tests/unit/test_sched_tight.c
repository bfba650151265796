// SPDX-License-Identifier: MIT
/*
 * Tight levels of the fluid ideal (sched/fairlag.c, water_fill()), run on
 * a small host.
 */
#include "tests/unit/test_sched_util.h"

/*
 * pCPUs of 1024, 1024, 256 and 256; three heavy busy entities (50000),
 * a light busy one (100) and a light sleeper (100) runnable 1 ms of every
 * 10. The three heavy ones on the three fastest pCPUs are the tightest
 * prefix of the water-filling (2304 / 150000 per weight, against 2560 /
 * 150200 for everyone), 0.75 of a pCPU each, and the sleeper's use comes
 * off the last 256 pCPU, which the light busy one shares with it: the
 * three are a tight level, the light one is not.
 */
static void test_tight_level_marked(void)
{
	struct sched *s = mk_sched(2, 1024, 2, 256, NULL);
	uint64_t now = 0;
	int heavy[3], light, sl;

	for (int i = 0; i < 3; i++)
		heavy[i] = add_ent(s, "heavy", 50000, true, 0);
	light = add_ent(s, "light", 100, true, 0);
	sl = add_ent(s, "sleeper", 100, false, 0);
	while (now < 500 * MS) {
		now += MS;
		tick_with_bursts(s, now, sl, 10, 1);
	}
	for (int i = 0; i < 3; i++) {
		struct sched_entity *h = sched_ent(s, heavy[i]);

		CU_ASSERT(h->lag_tracked && h->lag_tight);
		CU_ASSERT(h->lag_rate > (3ull << 18) - (1ull << 12) &&
			  h->lag_rate < (3ull << 18) + (1ull << 12));	/* 0.75 */
	}
	CU_ASSERT(sched_ent(s, light)->lag_tracked && !sched_ent(s, light)->lag_tight);
	CU_ASSERT(!sched_ent(s, sl)->lag_tight);
	sched_destroy(s);
}

UNIT_SUITE(sched_tight, NULL, NULL,
	   UNIT_TEST(test_tight_level_marked))
