// SPDX-License-Identifier: MIT
/*
 * The re-pack's trigger of the fluid-ideal balance (sched/fair_repack.c):
 * beside sleepers a placement is re-packed only for an error of about
 * their noise, but one entity alone over a pCPU they do not use is
 * re-packed at once. Split out of test_sched_fairlag.c, which keeps the
 * shares, the payback and the rotation.
 */
#include "tests/unit/test_sched_util.h"

/*
 * Three busy entities placed on pCPUs cpu[0..3) (pinned there, then free
 * again), tracked by the balance at the ideal rates rate[0..3), as a
 * round of the balance leaves them in s->lag_ents; their ids into id[].
 */
static void three_tracked_at(struct sched *s, const int *cpu, const uint64_t *rate, int *id,
			     uint64_t *now)
{
	struct sched_cpumask one;

	for (int i = 0; i < 3; i++) {
		sched_cpumask_clear(&one);
		sched_cpumask_set(&one, (unsigned int)cpu[i]);
		id[i] = add_ent(s, "busy", 1024, true, 0);
		CU_ASSERT_FATAL(sched_set_affinity(s, id[i], &one, 0, NULL, 0) == 0);
	}
	run_until(s, now, 20 * MS, MS);
	for (int i = 0; i < 3; i++) {
		struct sched_entity *se = sched_ent(s, id[i]);

		CU_ASSERT_FATAL(sched_set_affinity(s, id[i], &s->all_cpus, *now, NULL, 0) == 0);
		CU_ASSERT_FATAL(se->cpu == cpu[i]);
		se->lag_tracked = true;
		s->lag_ents[i] = (struct lag_ent){ .se = se, .w = 1024, .rate = rate[i],
						   .limit = UINT64_MAX };
	}
}

/*
 * Beside sleepers a placement is re-packed only when a pCPU's ideal
 * rates are over the capacity the sleepers leave it by an eighth, not a
 * sixty-fourth: that capacity is their average use, which their wakeups
 * scatter. Two pCPUs; sleepers leave 0.9 of pCPU 0, where entities of
 * 0.5 and 0.45 are (5.6% over), and C of 0.55 is on pCPU 1. Packed to
 * the sixty-fourth, the one of 0.45 would move beside C.
 */
static void test_fairlag_repack_calm_beside_sleepers(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	const uint64_t full = 1ull << 20;
	const uint64_t rate[3] = { full * 55 / 100, full / 2, full * 45 / 100 };
	const int cpu[3] = { 1, 0, 0 };
	uint64_t now = 0;
	int id[3];

	three_tracked_at(s, cpu, rate, id, &now);
	s->rq[0].lag_cap = full * 9 / 10;
	s->rq[1].lag_cap = full;
	fair_repack(s, 3, now);
	CU_ASSERT_EQUAL(sched_ent(s, id[2])->cpu, 0);
	s->rq[0].lag_cap = full * 8 / 10;	/* 19% over: re-packed */
	fair_repack(s, 3, now);
	CU_ASSERT_EQUAL(sched_ent(s, id[2])->cpu, 1);
	sched_destroy(s);
}

/*
 * Where the sleepers ran is no part of the ideal: two pCPUs where
 * sleepers use 0.1 of each, A (a whole pCPU's share) and B (0.4) on
 * pCPU 0, C (0.4) on pCPU 1. A fits no pCPU the sleepers leave 0.9 of,
 * so the packing by where they ran finds nothing; on the whole
 * capacities A keeps pCPU 0, B joins C, and the 0.2 left on pCPU 1
 * holds the sleepers' 0.2, who are then sent away from A's full pCPU.
 */
static void test_fairlag_repack_sleepers_elsewhere(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	const uint64_t full = 1ull << 20;
	const uint64_t rate[3] = { full, full * 4 / 10, full * 4 / 10 };
	const int cpu[3] = { 0, 0, 1 };
	uint64_t now = 0;
	int id[3];

	three_tracked_at(s, cpu, rate, id, &now);
	s->rq[0].lag_cap = s->rq[1].lag_cap = full * 9 / 10;
	fair_repack(s, 3, now);
	CU_ASSERT_EQUAL(sched_ent(s, id[0])->cpu, 0);
	CU_ASSERT_EQUAL(sched_ent(s, id[1])->cpu, 1);
	CU_ASSERT_EQUAL(sched_ent(s, id[2])->cpu, 1);
	sched_destroy(s);
}

/*
 * The wider trigger beside sleepers is for the pCPUs they use: one of
 * 1024 and two of 1001; A, owed all of the 1024 pCPU, alone on a 1001
 * one (2.3% over it, which no sleeper's noise explains), B owed a whole
 * 1001 pCPU on the other, C (0.5) on the 1024 pCPU, of which sleepers
 * use 0.3. Re-packed, A takes the 1024 pCPU and C (and the sleepers,
 * whose pCPU is then full) its 1001 one; with the eighth for every pCPU
 * of the component, A stayed (seed 16 #332 of the fair corpus).
 */
static void test_fairlag_repack_exact_where_no_sleeper(void)
{
	struct sched *s = mk_sched(1, 1024, 2, 1001, NULL);
	const uint64_t full = 1ull << 20, little = 1001ull << 10;
	const uint64_t rate[3] = { full, little, full / 2 };
	const int cpu[3] = { 1, 2, 0 };
	uint64_t now = 0;
	int id[3];

	three_tracked_at(s, cpu, rate, id, &now);
	s->rq[0].lag_cap = full * 7 / 10;
	s->rq[1].lag_cap = s->rq[2].lag_cap = little;
	fair_repack(s, 3, now);
	CU_ASSERT_EQUAL(sched_ent(s, id[0])->cpu, 0);
	CU_ASSERT_EQUAL(sched_ent(s, id[1])->cpu, 2);
	CU_ASSERT_EQUAL(sched_ent(s, id[2])->cpu, 1);
	sched_destroy(s);
}

/*
 * ... but only for one entity alone over the pCPU: two pCPUs, A (0.52)
 * and B (0.5) on pCPU 0, which no sleeper uses (2% over, more than the
 * sixty-fourth), C (0.3) on pCPU 1, of which sleepers use 0.1. Nothing
 * is re-packed (the lag moves take a small excess of several); with the
 * sixty-fourth for any sum there, B was moved beside C.
 */
static void test_fairlag_repack_calm_for_several_beside_sleepers(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	const uint64_t full = 1ull << 20;
	const uint64_t rate[3] = { full * 52 / 100, full / 2, full * 3 / 10 };
	const int cpu[3] = { 0, 0, 1 };
	uint64_t now = 0;
	int id[3];

	three_tracked_at(s, cpu, rate, id, &now);
	s->rq[0].lag_cap = full;
	s->rq[1].lag_cap = full * 9 / 10;
	fair_repack(s, 3, now);
	CU_ASSERT_EQUAL(sched_ent(s, id[1])->cpu, 0);
	CU_ASSERT_EQUAL(sched_ent(s, id[2])->cpu, 1);
	sched_destroy(s);
}

UNIT_SUITE(sched_repack, NULL, NULL,
	   UNIT_TEST(test_fairlag_repack_calm_beside_sleepers),
	   UNIT_TEST(test_fairlag_repack_sleepers_elsewhere),
	   UNIT_TEST(test_fairlag_repack_exact_where_no_sleeper),
	   UNIT_TEST(test_fairlag_repack_calm_for_several_beside_sleepers))
