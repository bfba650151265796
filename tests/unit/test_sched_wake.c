// SPDX-License-Identifier: MIT
/*
 * Where the fluid-ideal balance sends a waking sleeper (sched/fair_wake.c),
 * called directly on runqueues set up as a balance leaves them.
 */
#include "tests/unit/test_sched_util.h"

/* A busy entity pinned to pCPU cpu, tracked by the balance at rate `rate`, into s->lag_ents[k]. */
static void tracked_on(struct sched *s, unsigned int k, unsigned int cpu, uint64_t rate)
{
	struct sched_cpumask one;
	int id = add_ent(s, "busy", 1024, true, 0);
	struct sched_entity *se = s->ent[id];

	sched_cpumask_clear(&one);
	sched_cpumask_set(&one, cpu);
	CU_ASSERT_FATAL(sched_set_affinity(s, id, &one, 0, NULL, 0) == 0);
	CU_ASSERT_FATAL(se->cpu == (int)cpu);
	se->lag_tracked = true;
	se->lag_rate = rate;
	s->rq[cpu].lag_weight += se->weight;
	s->lag_ents[k].se = se;
}

/*
 * A sleeper pinned to pCPUs 4 and 5 wakes on pCPU 4, which an entity
 * whose share is all of it has: it goes to pCPU 5, the one of its pCPUs
 * that is not full, although the four idle-loaded pCPUs of the list come
 * first. The list is host-wide, and a wakeup looked at its next four
 * entries, whatever pCPUs the sleeper may use: a pinned sleeper found
 * none and stayed beside the whole entity (seed 1002 #19 of the fair
 * corpus: eight entities owed a whole pCPU each 1.5% short, 13.6x the
 * bound on the light one that should have had the sleepers).
 */
static void test_wake_pinned_sleeper_finds_its_free_pcpu(void)
{
	struct sched *s = mk_sched(6, 1024, 0, 0, NULL);
	struct sched_cpumask two;
	int sl;

	for (unsigned int cpu = 0; cpu < 6; cpu++)
		s->rq[cpu].lag_cap = (uint64_t)s->rq[cpu].capacity << 10;
	tracked_on(s, 0, 4, s->rq[4].lag_cap);		/* whole: pCPU 4 full */
	tracked_on(s, 1, 5, s->rq[5].lag_cap / 2);	/* loaded, not full */
	sched_cpumask_clear(&two);
	sched_cpumask_set(&two, 4);
	sched_cpumask_set(&two, 5);
	sl = add_ent(s, "sleeper", 1024, false, 0);
	CU_ASSERT_FATAL(sched_set_affinity(s, sl, &two, 0, NULL, 0) == 0);
	fair_wake_targets_update(s, 2);
	CU_ASSERT_FATAL(s->rq[4].lag_full && !s->rq[5].lag_full);
	CU_ASSERT_FATAL(s->wake_free.nr == 5 && s->wake_free.cpu[4] == 5);
	CU_ASSERT_EQUAL(fair_wake_target(s, sched_ent(s, sl), 4), 5);
	sched_destroy(s);
}

/* On each of the n pCPUs, a tracked entity of weight[cpu] whose share is all of it. */
static void whole_owners(struct sched *s, unsigned int n, const uint32_t *weight)
{
	for (unsigned int cpu = 0; cpu < n; cpu++) {
		s->rq[cpu].lag_cap = (uint64_t)s->rq[cpu].capacity << 10;
		tracked_on(s, cpu, cpu, s->rq[cpu].lag_cap);
		CU_ASSERT_FATAL(sched_set_weight(s, s->lag_ents[cpu].se->id, weight[cpu], 0) == 0);
		s->rq[cpu].lag_weight = weight[cpu];
	}
}

/*
 * A starved sleeper (fair_sleepers.c: below its busy rate while runnable)
 * waking on a pCPU whose queued weight leaves it less than that rate goes
 * where it gets it, full or not: three pCPUs, each with an entity whose
 * share is all of it, of weights 8192, 256 and 8192; a sleeper of 1024
 * owed half a pCPU gets 1/9 of pCPU 0 and 4/5 of pCPU 1, and goes there.
 * Not starved, it stays (no pCPU is free); starved on pCPU 1, it stays
 * too. Seed 6 #371 of the fair corpus: five sleepers on one pCPU beside
 * six whole entities, one of them at 0.59 of its floor, for the run.
 */
static void test_wake_starved_sleeper_goes_where_it_gets_its_rate(void)
{
	struct sched *s = mk_sched(3, 1024, 0, 0, NULL);
	static const uint32_t weight[3] = { 8192, 256, 8192 };
	struct sched_entity *sl;

	whole_owners(s, 3, weight);
	sl = sched_ent(s, add_ent(s, "sleeper", 1024, false, 0));
	sl->sl_busy_rate = 1ull << 19;
	fair_wake_targets_update(s, 3);
	CU_ASSERT_FATAL(s->rq[0].lag_full && s->rq[1].lag_full && s->rq[2].lag_full);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), -1);
	sl->sl_starved = true;
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), 1);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 2), 1);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 1), -1);
	sched_destroy(s);
}

/*
 * A starved sleeper that only full pCPUs give its busy rate passes by
 * those whose owner is already behind by a move's worth: four pCPUs, each
 * with an entity whose share is all of it, of weights 8192, 256, 256 and
 * 8192; a sleeper of 1024 owed half a pCPU gets 4/5 of pCPU 1 or 2, the
 * first of the least loaded. With pCPU 1's owner 16 ms behind it goes to
 * pCPU 2; with both owners behind, to one of them still (a starved
 * sleeper is owed its floor). Seed 18 #303 of the fair corpus: twelve
 * entities owed a whole pCPU each, two light starved sleepers sent at
 * every wakeup to the lightest owner's pCPU, the first of the list that
 * gave their rate, which ended 225 ms short (1.17x the bound) while the
 * others lost 0-16 ms.
 */
static void test_wake_starved_sleeper_spares_an_owner_behind(void)
{
	struct sched *s = mk_sched(4, 1024, 0, 0, NULL);
	static const uint32_t weight[4] = { 8192, 256, 256, 8192 };
	struct sched_entity *sl;
	int t;

	whole_owners(s, 4, weight);
	sl = sched_ent(s, add_ent(s, "sleeper", 1024, false, 0));
	sl->sl_busy_rate = 1ull << 19;
	sl->sl_starved = true;
	fair_wake_targets_update(s, 4);
	CU_ASSERT_FATAL(s->wake_free.nr == 0 && s->wake_any.cpu[0] == 1);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), 1);
	s->lag_ents[1].se->lag = 2 * (int64_t)FAIR_LAG_MOVE_NS;
	fair_wake_targets_update(s, 4);
	CU_ASSERT_FATAL(s->rq[1].lag_behind && !s->rq[2].lag_behind);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), 2);
	s->lag_ents[2].se->lag = 2 * (int64_t)FAIR_LAG_MOVE_NS;
	fair_wake_targets_update(s, 4);
	t = fair_wake_target(s, sl, 0);
	CU_ASSERT(t == 1 || t == 2);
	sched_destroy(s);
}

/*
 * A starved sleeper that only a full pCPU would give its busy rate goes
 * there only if that pCPU is no faster than prev: two pCPUs of 1024 and
 * two of 512, each with an entity whose share is all of it (weights 256,
 * 256, 8192 and 128). A sleeper of 1024 owed 0.4 of a 1024 pCPU, starved
 * on pCPU 2 (512, 1/9 of it), would get 0.8 of either 1024 pCPU and 0.44
 * of pCPU 3: it goes to pCPU 3, though the 1024 ones come first in the
 * list. With pCPU 3 crowded too (8192), it stays rather than take a fast
 * pCPU's time from the entity owed all of it. Seed 4 #133 of the fair
 * corpus: a periodic sleeper whose busy rate, 0.79, is more than its 548
 * pCPU gives, sent 129 times onto the 1024 pCPUs of busy entities owed
 * them whole, while the 548 pCPU idled 0.91 s (1.96x the bound).
 */
static void test_wake_starved_sleeper_not_onto_a_faster_full_pcpu(void)
{
	struct sched *s = mk_sched(2, 1024, 2, 512, NULL);
	static const uint32_t weight[4] = { 256, 256, 8192, 128 };
	struct sched_entity *sl;

	whole_owners(s, 4, weight);
	sl = sched_ent(s, add_ent(s, "sleeper", 1024, false, 0));
	sl->sl_busy_rate = (1ull << RATE_SHIFT) * 4 / 10;
	sl->sl_starved = true;
	fair_wake_targets_update(s, 4);
	CU_ASSERT_FATAL(s->rq[0].lag_full && s->rq[1].lag_full && s->rq[2].lag_full &&
			s->rq[3].lag_full);
	CU_ASSERT_FATAL(s->wake_any.nr == 4 && s->wake_any.cpu[0] == 0);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 2), 3);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 2), 3);
	CU_ASSERT_FATAL(sched_set_weight(s, s->lag_ents[3].se->id, 8192, 0) == 0);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 2), -1);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 3), -1);
	sched_destroy(s);
}

/*
 * A sleeper wakes away from a pCPU of a tight level of the ideal (its
 * entities' rates add up to all of their pCPUs, lag_tight), though no
 * entity there has the whole pCPU: what it took there was lost to the
 * level, as on a full pCPU. Three entities of 0.75 of a pCPU, two of
 * them on pCPUs 0 and 1 in a tight level, one on pCPU 2 that is not;
 * waking on pCPU 0, the sleeper goes to pCPU 2, and only there.
 */
static void test_wake_leaves_a_tight_level(void)
{
	struct sched *s = mk_sched(3, 1024, 0, 0, NULL);
	int sl;

	for (unsigned int cpu = 0; cpu < 3; cpu++) {
		s->rq[cpu].lag_cap = (uint64_t)s->rq[cpu].capacity << 10;
		tracked_on(s, cpu, cpu, s->rq[cpu].lag_cap * 3 / 4);
	}
	s->lag_ents[0].se->lag_tight = s->lag_ents[1].se->lag_tight = true;
	sl = add_ent(s, "sleeper", 1024, false, 0);
	fair_wake_targets_update(s, 3);
	CU_ASSERT_FATAL(!s->rq[0].lag_full && !s->rq[1].lag_full && !s->rq[2].lag_full);
	CU_ASSERT_FATAL(s->rq[0].lag_tight && s->rq[1].lag_tight && !s->rq[2].lag_tight);
	CU_ASSERT_EQUAL(fair_wake_target(s, sched_ent(s, sl), 0), 2);
	CU_ASSERT_EQUAL(fair_wake_target(s, sched_ent(s, sl), 1), 2);
	CU_ASSERT_EQUAL(fair_wake_target(s, sched_ent(s, sl), 2), -1);
	sched_destroy(s);
}

/*
 * A starved sleeper owed nearly all of a pCPU while runnable, deeply
 * starved, on a pCPU where a heavier entity is queued, goes where it gets
 * half its busy rate, though no pCPU gives all of it. Three pCPUs: pCPU 0
 * with an untracked entity of 8192 queued (the crowd of heavier sleepers),
 * pCPU 1 with a tracked one of 768 owed half of it, pCPU 2 with one whose
 * share is all of it. A sleeper of 1024 owed a whole pCPU gets 1/9 of pCPU
 * 0, 4/7 of pCPU 1 and 1/2 of pCPU 2: with half its rate's work it stays
 * on pCPU 0; with a tenth of it, it goes to pCPU 1. Owed 0.7 or 1.1 of the
 * pCPU (not nearly all of it), it stays. Seed 17 #496 of the fair corpus:
 * a random sleeper of 303 owed 0.977 of a 140 pCPU, beside sleepers of
 * 1612-7708 that no rule made leave, at 0.63 of its floor.
 */
static void test_wake_deeply_starved_sleeper_takes_half_its_rate(void)
{
	struct sched *s = mk_sched(3, 1024, 0, 0, NULL);
	const uint64_t whole = 1ull << RATE_SHIFT;
	struct sched_cpumask one;
	struct sched_entity *sl;
	int crowd;

	for (unsigned int cpu = 0; cpu < 3; cpu++)
		s->rq[cpu].lag_cap = (uint64_t)s->rq[cpu].capacity << 10;
	tracked_on(s, 0, 1, s->rq[1].lag_cap / 2);
	CU_ASSERT_FATAL(sched_set_weight(s, s->lag_ents[0].se->id, 768, 0) == 0);
	s->rq[1].lag_weight = 768;
	tracked_on(s, 1, 2, s->rq[2].lag_cap);
	crowd = add_ent(s, "crowd", 8192, true, 0);
	sched_cpumask_clear(&one);
	sched_cpumask_set(&one, 0);
	CU_ASSERT_FATAL(sched_set_affinity(s, crowd, &one, 0, NULL, 0) == 0);
	CU_ASSERT_FATAL(s->rq[0].fair_weight == 8192 && s->rq[1].fair_weight == 768);
	sl = sched_ent(s, add_ent(s, "sleeper", 1024, false, 0));
	sl->sl_starved = true;
	sl->sl_busy_rate = whole;
	sl->sl_owed = 1000;
	sl->sl_got = 500;
	fair_wake_targets_update(s, 2);
	CU_ASSERT_FATAL(!s->rq[1].lag_full && s->rq[2].lag_full);
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), -1);
	sl->sl_got = 100;
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), 1);
	sl->sl_busy_rate = whole * 7 / 10;
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), -1);
	sl->sl_busy_rate = whole * 11 / 10;
	CU_ASSERT_EQUAL(fair_wake_target(s, sl, 0), -1);
	sched_destroy(s);
}

/*
 * A sleeper whose demand is more than the idle pCPUs give, waking on a
 * pCPU full with an entity owed all of it, goes to the biggest idle pCPU
 * rather than stay: one pCPU of 600 (an entity tracked at all of it) and
 * five of 139, idle; the sleeper's demand is 0.174 of a 1024 pCPU, its
 * util too big for a 139 one. It goes to pCPU 1 (the first idle pCPU of
 * the biggest capacity); it stays when pCPU 0 is not full, and when it
 * is tracked itself (an entity the balance owes all of prev). Seed
 * 758796 #204 of the fair property test: the sleeper stayed beside the
 * busy one at every burst, 12.0x the bound.
 */
static void test_wake_from_full_to_idle_too_small(void)
{
	struct sched *s = mk_sched(1, 600, 5, 139, NULL);
	struct sched_entity *sl;
	uint64_t whole0;

	for (unsigned int cpu = 0; cpu < 6; cpu++)
		s->rq[cpu].lag_cap = (uint64_t)s->rq[cpu].capacity << 10;
	whole0 = s->rq[0].lag_cap;
	tracked_on(s, 0, 0, whole0);
	sl = sched_ent(s, add_ent(s, "sleeper", 46092, false, 0));
	sl->cpu = 0;
	sl->sl_init = true;
	sl->sl_demand = sl->sl_long = (174ull << RATE_SHIFT) / 1000;
	sl->pelt.util_avg = 176;
	CU_ASSERT_FATAL(entity_fits_cpu(s, sl, 0) && !entity_fits_cpu(s, sl, 1));
	CU_ASSERT_FATAL(!fair_wake_idle_ok(s, sl, 1));
	fair_wake_targets_update(s, 1);
	CU_ASSERT_FATAL(s->rq[0].lag_full && s->rq[0].nr_running == 1);
	CU_ASSERT_EQUAL(select_cpu_fair(s, sl), 1);
	sl->lag_tracked = true;
	CU_ASSERT_EQUAL(select_cpu_fair(s, sl), 0);
	sl->lag_tracked = false;
	s->lag_ents[0].se->lag_rate = whole0 * 9 / 10;
	fair_wake_targets_update(s, 1);
	CU_ASSERT_FATAL(!s->rq[0].lag_full);
	CU_ASSERT_EQUAL(select_cpu_fair(s, sl), 0);
	sched_destroy(s);
}

/*
 * A sleeper whose util is too big for its previous pCPU, though its demand
 * fits there, stays there when no pCPU is idle, rather than go to the
 * faster pCPU a busy entity runs on: one pCPU of 1024 and one of 235, a
 * busy entity on each owed half of it; the sleeper's demand is 0.19 of a
 * 1024 pCPU (0.229 fits it), its util 250. It stays on pCPU 1; with a
 * demand of 0.25 it goes to pCPU 0 (the least loaded it fits), and so it
 * does when it is tracked (an entity the balance owes a rate). Pinned to
 * pCPU 1 and another of 235 (no bigger pCPU to go to), it keeps the
 * kernel's choice, the least loaded of them. Seed 18 #260 of the fair
 * corpus: periodic sleepers of demand 0.19 on 235 pCPUs sent about 200
 * times onto the 1024 pCPUs of busy entities, while the 235 ones idled.
 */
static void test_wake_sleeper_stays_where_its_demand_fits(void)
{
	struct sched *s = mk_sched(1, 1024, 2, 235, NULL);
	struct sched_cpumask slow;
	struct sched_entity *sl;

	for (unsigned int cpu = 0; cpu < 3; cpu++)
		s->rq[cpu].lag_cap = (uint64_t)s->rq[cpu].capacity << 10;
	tracked_on(s, 0, 0, s->rq[0].lag_cap / 2);
	tracked_on(s, 1, 1, s->rq[1].lag_cap / 2);
	tracked_on(s, 2, 2, s->rq[2].lag_cap / 2);
	sl = sched_ent(s, add_ent(s, "sleeper", 1024, false, 0));
	sl->cpu = 1;
	sl->sl_init = true;
	sl->sl_demand = sl->sl_long = (190ull << RATE_SHIFT) / 1000;
	sl->pelt.util_avg = 250;
	fair_wake_targets_update(s, 3);
	CU_ASSERT_FATAL(!entity_fits_cpu(s, sl, 1) && entity_fits_cpu(s, sl, 0));
	CU_ASSERT_FATAL(!s->rq[1].lag_full && !s->rq[1].lag_behind && s->rq[1].nr_running == 1);
	CU_ASSERT_EQUAL(select_cpu_fair(s, sl), 1);
	sl->sl_demand = (250ull << RATE_SHIFT) / 1000;
	CU_ASSERT_EQUAL(select_cpu_fair(s, sl), 0);
	sl->sl_demand = (190ull << RATE_SHIFT) / 1000;
	sl->lag_tracked = true;
	CU_ASSERT_EQUAL(select_cpu_fair(s, sl), 0);
	sl->lag_tracked = false;
	sched_cpumask_clear(&slow);
	sched_cpumask_set(&slow, 1);
	sched_cpumask_set(&slow, 2);
	sl->allowed = slow;
	CU_ASSERT_FATAL(sched_set_weight(s, s->lag_ents[1].se->id, 4096, 0) == 0);
	CU_ASSERT_EQUAL(select_cpu_fair(s, sl), 2);
	sched_destroy(s);
}

UNIT_SUITE(sched_wake, NULL, NULL,
	   UNIT_TEST(test_wake_pinned_sleeper_finds_its_free_pcpu),
	   UNIT_TEST(test_wake_starved_sleeper_goes_where_it_gets_its_rate),
	   UNIT_TEST(test_wake_starved_sleeper_spares_an_owner_behind),
	   UNIT_TEST(test_wake_starved_sleeper_not_onto_a_faster_full_pcpu),
	   UNIT_TEST(test_wake_leaves_a_tight_level),
	   UNIT_TEST(test_wake_deeply_starved_sleeper_takes_half_its_rate),
	   UNIT_TEST(test_wake_from_full_to_idle_too_small),
	   UNIT_TEST(test_wake_sleeper_stays_where_its_demand_fits))
