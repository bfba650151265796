// SPDX-License-Identifier: MIT
/*
 * Tight levels of the fluid ideal (sched/fairlag.c, water_fill()) and the
 * lag moves of entities ahead (sched/fair_moves.c), run on small hosts.
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

/*
 * A busy entity of weight 1024 on cpu (pinned there, or free to go
 * anywhere), tracked at `rate` and `lag`, as s->lag_ents[k].
 */
static struct sched_entity *tracked(struct sched *s, unsigned int k, unsigned int cpu, bool pinned,
				    uint64_t rate, int64_t lag)
{
	struct sched_cpumask one;
	int id = add_ent(s, "busy", 1024, true, 0);
	struct sched_entity *se = sched_ent(s, id);

	sched_cpumask_clear(&one);
	sched_cpumask_set(&one, cpu);
	CU_ASSERT_FATAL(sched_set_affinity(s, id, &one, 0, NULL, 0) == 0);
	CU_ASSERT_FATAL(se->cpu == (int)cpu);
	if (!pinned)	/* before the share: an affinity change drops it */
		CU_ASSERT_FATAL(sched_set_affinity(s, id, &s->all_cpus, 0, NULL, 0) == 0);
	CU_ASSERT_FATAL(se->cpu == (int)cpu);
	se->lag_tracked = true;
	se->lag_rate = rate;
	se->lag = lag;
	s->lag_ents[k] = (struct lag_ent){ .se = se, .w = 1024, .rate = rate, .limit = UINT64_MAX };
	return se;
}

/*
 * An entity ahead of its ideal by more than a move's worth, alone on its
 * pCPU, moves to a pCPU where more than one entity is runnable, though
 * its own is left idle: there it is held back beside the others, and the
 * idle pCPU takes the next wakeup or newidle pull, where alone it ran
 * further ahead for good (seed 5 #46 of the fair corpus: a light busy
 * entity, weight 20, alone on a pCPU of 202 at 1.8 times its ideal, while
 * the sleepers crowded on the other 202 one). X (0.1 of a pCPU, 20 ms
 * ahead, its run weight at the payback's floor) alone on pCPU 0; Y and Z
 * (0.45 each, pinned) share pCPU 1. At a quarter of its weight, the
 * entity ahead is not held in vain: it stays.
 */
static void test_ahead_alone_joins_a_crowd(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	const uint64_t full = 1ull << 20;
	struct sched_entity *x;

	for (unsigned int cpu = 0; cpu < 2; cpu++)
		s->rq[cpu].lag_cap = full;
	tracked(s, 0, 1, true, full * 45 / 100, 0);
	tracked(s, 1, 1, true, full * 45 / 100, 0);
	x = tracked(s, 2, 0, false, full / 10, -20 * (int64_t)MS);
	fair_set_run_weight(s, x, 1024 / 2, 0);
	s->lag_round++;
	fair_lag_sums(s, 3);
	fair_lag_moves(s, 3, 0);
	CU_ASSERT_EQUAL(x->cpu, 0);
	fair_set_run_weight(s, x, 1024 / FAIR_PAYBACK_CLAMP, 0);
	s->lag_round++;
	fair_lag_sums(s, 3);
	fair_lag_moves(s, 3, 0);
	CU_ASSERT_EQUAL(x->cpu, 1);
	sched_destroy(s);
}

/*
 * Beside sleepers, a tight level whose entities are each owed more than
 * one of its pCPUs gives is placed as a level (sched/fair_repack.c,
 * place_tight_levels()): seed 11 #232 of the fair corpus, pCPUs of 526,
 * 526, 341 and 674. A (0.594 of a 1024 pCPU) and B (0.578) are a tight
 * level on the 674 and a 526 pCPU; C (0.505) is owed about all of the
 * other 526 one, where the sleepers ran (they leave it 0.257), so C sat
 * on the 341 pCPU; no packing of single entities exists (B fits no 526
 * pCPU), and nothing moved, C 10% short for 10 s. With the level on its
 * two pCPUs, C gets the 526 pCPU whole, and the light D and the sleepers
 * (0.257 in all) fit the 341 one.
 */
static void test_tight_level_packed_beside_sleepers(void)
{
	static const unsigned int nr[3] = { 2, 1, 1 }, cap[3] = { 526, 341, 674 };
	const uint64_t full = 1ull << 20;
	struct sched_entity *a, *b, *c, *d;
	struct sched_topology t;
	char err[256];
	struct sched *s;

	memset(&t, 0, sizeof(t));
	t.nr_clusters = 3;
	for (int k = 0; k < 3; k++) {
		snprintf(t.clusters[k].name, SCHED_NAME_MAX, "c%d", k);
		t.clusters[k].nr_cpus = nr[k];
		t.clusters[k].capacity = cap[k];
	}
	s = sched_create(&t, NULL, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	for (unsigned int cpu = 0; cpu < 4; cpu++)
		s->rq[cpu].lag_cap = ((uint64_t)cap[cpu < 2 ? 0 : cpu - 1] << 10);
	s->rq[0].lag_cap = full * 257 / 1000;
	a = tracked(s, 0, 3, false, full * 594 / 1000, 0);
	b = tracked(s, 1, 1, false, full * 578 / 1000, 0);
	c = tracked(s, 2, 2, false, full * 505 / 1000, 0);
	d = tracked(s, 3, 0, false, full * 30 / 1000, 0);
	s->lag_ents[0].tight = s->lag_ents[1].tight = true;
	fair_repack(s, 4, 0);
	CU_ASSERT_EQUAL(a->cpu, 3);
	CU_ASSERT_EQUAL(b->cpu, 1);
	CU_ASSERT_EQUAL(c->cpu, 0);
	CU_ASSERT_EQUAL(d->cpu, 2);
	sched_destroy(s);
}

/*
 * pCPUs of 1024, 256 and 256, the sleepers leaving 0.15 of a 1024 pCPU
 * on the last; A (0.70 of a 1024 pCPU, `ahead` of its ideal) on the fast
 * pCPU, B (0.40, `behind`) on the first slow one, the light C (0.05)
 * beside the sleepers. B fits no pCPU beside A: no placement of single
 * entities exists. Returns s; A, B and C into abc[].
 */
static struct sched *straddler_host(int64_t ahead, int64_t behind, struct sched_entity **abc)
{
	struct sched *s = mk_sched(1, 1024, 2, 256, NULL);
	const uint64_t full = 1ull << 20;

	for (unsigned int cpu = 0; cpu < 3; cpu++)
		s->rq[cpu].lag_cap = (uint64_t)s->rq[cpu].capacity << 10;
	s->rq[2].lag_cap = full * 15 / 100;
	abc[0] = tracked(s, 0, 0, false, full * 70 / 100, -ahead);
	abc[1] = tracked(s, 1, 1, false, full * 40 / 100, behind);
	abc[2] = tracked(s, 2, 2, false, full * 5 / 100, 0);
	s->lag_round = 7;
	return s;
}

/*
 * Beside sleepers, a straddler left behind on a slow pCPU gets its turn
 * on the fast one (sched/fair_repack.c, plan_straddlers()): its level is
 * planned as without sleepers, and it rotates. B, 20 ms behind, takes the
 * fast pCPU and A the free slow one; C, beside the sleepers, stays and is
 * not marked as moved. Nothing moved before (seed 20 #406 of the fair
 * corpus: v60, 0.33 of a 1024 pCPU, on a 279 pCPU, 2.3 bounds short).
 * Only 4 ms behind (less than a move's worth), B stays where it is, though
 * A, 30 ms ahead, would give it the fast pCPU in a rotation.
 */
static void test_straddler_behind_rotates_beside_sleepers(void)
{
	struct sched_entity *abc[3];
	struct sched *s = straddler_host(10 * (int64_t)MS, 20 * (int64_t)MS, abc);

	fair_repack(s, 3, 0);
	CU_ASSERT_EQUAL(abc[1]->cpu, 0);
	CU_ASSERT_EQUAL(abc[0]->cpu, 1);
	CU_ASSERT_EQUAL(abc[2]->cpu, 2);
	CU_ASSERT_EQUAL(abc[1]->lag_moved, 7);
	CU_ASSERT_NOT_EQUAL(abc[2]->lag_moved, 7);
	CU_ASSERT(!abc[0]->lag_packed && !abc[1]->lag_packed);
	sched_destroy(s);

	s = straddler_host(30 * (int64_t)MS, 4 * (int64_t)MS, abc);
	fair_repack(s, 3, 0);
	CU_ASSERT_EQUAL(abc[0]->cpu, 0);
	CU_ASSERT_EQUAL(abc[1]->cpu, 1);
	sched_destroy(s);
}

UNIT_SUITE(sched_tight, NULL, NULL,
	   UNIT_TEST(test_tight_level_marked),
	   UNIT_TEST(test_ahead_alone_joins_a_crowd),
	   UNIT_TEST(test_tight_level_packed_beside_sleepers),
	   UNIT_TEST(test_straddler_behind_rotates_beside_sleepers))
