// SPDX-License-Identifier: MIT
/* Deadline class: CBS, EDF, revised wakeup rule, admission (rules 9-15). */
#include "tests/unit/test_sched_util.h"

/* Parameters are checked (rule 9). */
static void test_params(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	char err[256];
	struct sched_entity_params p;

	sched_entity_params_init(&p, "x");
	p.dl = (struct sched_dl_params){ 500, 1000 * US, 1000 * US };	/* runtime < 1 us */
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "runtime"));
	p.dl = (struct sched_dl_params){ 2 * MS, 1 * MS, 10 * MS };	/* deadline < runtime */
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "deadline"));
	p.dl = (struct sched_dl_params){ 1 * MS, 10 * MS, 5 * MS };	/* period < deadline */
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "period"));
	sched_destroy(s);
}

/* Capacity fit and per-pCPU bandwidth give distinct errors and change nothing. */
static void test_admission(void)
{
	struct sched *s = mk_sched(1, 1024, 2, 512, NULL);
	struct sched_dl_params dl = { 7 * MS, 10 * MS, 10 * MS };
	struct sched_entity_info before, after;
	/* Whole host: 1024 + 2 x 512 = 2 CPUs, limit 1.9. */
	struct sched_cpumask little;
	uint64_t used0, used1, limit;
	char err[256];
	int a, b;

	a = add_ent(s, "a", 1024, true, 0);
	sched_cluster_mask(s, 1, &little);
	CU_ASSERT_EQUAL(sched_set_affinity(s, a, &little, 0, err, sizeof(err)), 0);
	sched_dl_bandwidth(s, &used0, &limit);
	CU_ASSERT_EQUAL(limit, (uint64_t)(2.0 * 0.95 * (1 << 20)));	/* (1024+2x512) x 0.95 */
	sched_entity_info(s, a, &before);
	/* 7/10 needs capacity 0.7 x 1024 / 0.95 = 755 but the little pCPUs have 512. */
	CU_ASSERT_EQUAL(sched_set_reservation(s, a, &dl, 0, err, sizeof(err)),
			-SCHED_E_CAPACITY_FIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "755"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "512"));
	sched_entity_info(s, a, &after);
	CU_ASSERT_FALSE(after.deadline);
	CU_ASSERT_EQUAL(memcmp(&before, &after, sizeof(before)), 0);
	sched_dl_bandwidth(s, &used1, NULL);
	CU_ASSERT_EQUAL(used0, used1);

	/*
	 * Per pCPU (room 0.95 on the big one, 0.475 on each little one):
	 * 0.9 fits only the big pCPU, 0.45 and 0.2 take the little ones, and
	 * 0.4 fits nowhere however they are packed.
	 */
	CU_ASSERT(add_dl(s, "d1", 9 * MS, 10 * MS, 10 * MS, false, 0) >= 0);
	b = add_dl(s, "d2", 4500 * US, 10 * MS, 10 * MS, false, 0);
	CU_ASSERT(b >= 0);
	CU_ASSERT(add_dl(s, "d3", 2 * MS, 10 * MS, 10 * MS, false, 0) >= 0);
	sched_dl_bandwidth(s, &used0, NULL);
	CU_ASSERT_EQUAL(sched_set_reservation(s, a, &(struct sched_dl_params){ 4 * MS, 10 * MS,
			10 * MS }, 0, err, sizeof(err)), -SCHED_E_BANDWIDTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bandwidth"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "little pCPUs 1-2 cap 512: 0.275 free of 0.475"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no solution"));
	sched_dl_bandwidth(s, &used1, NULL);
	CU_ASSERT_EQUAL(used0, used1);
	sched_entity_info(s, a, &after);
	CU_ASSERT_FALSE(after.deadline);
	/* Releasing a reservation makes room again. */
	CU_ASSERT_EQUAL(sched_entity_remove(s, b, 0), 0);
	CU_ASSERT_EQUAL(sched_set_reservation(s, a, &(struct sched_dl_params){ 4 * MS, 10 * MS,
			10 * MS }, 0, err, sizeof(err)), 0);
	sched_entity_info(s, a, &after);
	CU_ASSERT_TRUE(after.deadline);
	/* Narrowing the affinity to where the sum no longer fits is refused. */
	CU_ASSERT_EQUAL(sched_set_reservation(s, a, NULL, 0, err, sizeof(err)), 0);
	sched_destroy(s);
}

/* CBS: a busy reservation gets runtime per period, then is throttled (rule 10-11). */
static void test_cbs_throttle_replenish(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity_stats st;
	struct sched_entity_info info;
	uint64_t now = 0;
	int d, f;

	f = add_ent(s, "fair", 1024, true, 0);
	d = add_dl(s, "dl", 2 * MS, 10 * MS, 10 * MS, true, 0);
	CU_ASSERT_FATAL(d >= 0);
	s->cluster[0].level = 1024;	/* full speed; no perf evaluation below */
	CU_ASSERT_EQUAL(curr_of(s, 0), d);	/* EDF ahead of fair */
	for (; now < 2 * MS; now += MS)
		sched_tick_cpu(s, 0, now + MS);
	CU_ASSERT_EQUAL(curr_of(s, 0), f);
	sched_entity_info(s, d, &info);
	CU_ASSERT_EQUAL(info.state, SCHED_THROTTLED);
	for (; now < 10 * MS; now += MS)
		sched_tick_cpu(s, 0, now + MS);
	CU_ASSERT_EQUAL(curr_of(s, 0), d);	/* replenished at the next period */
	for (; now < 1000 * MS; now += MS)
		sched_tick_cpu(s, 0, now + MS);
	sched_entity_stats(s, d, &st);
	CU_ASSERT(st.cpu_time_ns >= 199 * MS && st.cpu_time_ns <= 201 * MS);
	CU_ASSERT(st.nr_periods >= 100 && st.nr_periods <= 101);
	CU_ASSERT_EQUAL(st.nr_deadline_misses, 0);
	CU_ASSERT(st.throttled_ns >= 790 * MS);
	sched_destroy(s);
}

/* Runtime is charged scaled by performance level (rule 10). */
static void test_runtime_scaled(void)
{
	struct sched *s = mk_sched(1, 512, 0, 0, NULL);
	struct sched_entity_stats st;
	uint64_t now = 0;
	int d;

	add_ent(s, "fair", 1024, true, 0);
	d = add_dl(s, "dl", 2 * MS, 10 * MS, 10 * MS, true, 0);
	s->cluster[0].level = 512;
	/* Keep the level at 512 (no perf evaluation): 2 ms of work take 4 ms. */
	for (now = 0; now < 100 * MS;) {
		now += MS;
		sched_tick_cpu(s, 0, now);
	}
	sched_entity_stats(s, d, &st);
	CU_ASSERT_EQUAL(st.work_ns, 20 * MS);
	CU_ASSERT_EQUAL(st.cpu_time_ns, 40 * MS);
	sched_destroy(s);
}

/* replenish_dl_entity(): deadline += period while runtime <= 0 (rule 11). */
static void test_replenish_overrun(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity *se;
	uint64_t d0;
	int d;

	d = add_dl(s, "dl", 2 * MS, 10 * MS, 10 * MS, true, 0);
	s->cluster[0].level = 1024;
	se = sched_ent(s, d);
	d0 = se->dl_deadline;
	CU_ASSERT_EQUAL(d0, 10 * MS);
	/* One long update: 5 ms of runtime consumed against 2 ms. */
	sched_tick_cpu(s, 0, 5 * MS);
	CU_ASSERT_EQUAL(se->state, SCHED_THROTTLED);
	CU_ASSERT_EQUAL(se->dl_runtime, -3 * (int64_t)MS);
	sched_tick_cpu(s, 0, 10 * MS);
	/* -3 + 2 + 2 = 1 ms: two periods were needed. */
	CU_ASSERT_EQUAL(se->dl_runtime, 1 * (int64_t)MS);
	CU_ASSERT_EQUAL(se->dl_deadline, d0 + 20 * MS);
	sched_destroy(s);
}

/* update_dl_entity(): the wakeup rules (rule 12). */
static void test_wakeup_rules(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity *se;
	int d, c;

	/* Implicit deadline: runtime/(deadline - now) too large -> new period. */
	d = add_dl(s, "imp", 4 * MS, 10 * MS, 10 * MS, true, 0);
	s->cluster[0].level = 1024;
	se = sched_ent(s, d);
	sched_tick_cpu(s, 0, 1 * MS);
	sched_block(s, d, 1 * MS);	/* 3 ms left, deadline 10 */
	sched_wakeup(s, d, 8 * MS);	/* 3 / 2 > 4 / 10: overflow */
	CU_ASSERT_EQUAL(se->dl_deadline, 18 * MS);
	CU_ASSERT_EQUAL(se->dl_runtime, 4 * (int64_t)MS);
	sched_block(s, d, 9 * MS);	/* 3 ms left, deadline 18: 3/9 < 4/10, kept */
	sched_wakeup(s, d, 9 * MS);
	CU_ASSERT_EQUAL(se->dl_deadline, 18 * MS);
	CU_ASSERT_EQUAL(se->dl_runtime, 3 * (int64_t)MS);
	sched_block(s, d, 9 * MS);
	/* Constrained deadline: revised rule scales runtime to the laxity. */
	c = add_dl(s, "con", 2 * MS, 5 * MS, 20 * MS, true, 20 * MS);
	s->cluster[0].level = 1024;
	se = sched_ent(s, c);
	CU_ASSERT_EQUAL(se->dl_deadline, 25 * MS);
	sched_tick_cpu(s, 0, 20 * MS + 500 * US);
	sched_block(s, c, 20 * MS + 500 * US);	/* 1.5 ms left */
	sched_wakeup(s, c, 24 * MS);	/* 1.5/1 > 2/5, deadline not passed */
	CU_ASSERT_EQUAL(se->dl_deadline, 25 * MS);
	CU_ASSERT(se->dl_runtime >= 399 * (int64_t)US && se->dl_runtime <= 401 * (int64_t)US);
	sched_destroy(s);
}

/* EDF order, and a deadline miss is counted (rules 13, stats). */
static void test_edf_and_miss(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity_stats st;
	uint64_t now = 0;
	int late, early;

	/* Densities 0.33 + 0.4: admitted, but the level is forced to half below. */
	late = add_dl(s, "late", 2 * MS, 6 * MS, 20 * MS, true, 0);
	early = add_dl(s, "early", 2 * MS, 5 * MS, 20 * MS, true, 0);
	CU_ASSERT_FATAL(late >= 0 && early >= 0);
	s->cluster[0].level = 512;	/* each needs 4 ms: late ends at 8 ms > 6 ms */
	CU_ASSERT_EQUAL(curr_of(s, 0), early);	/* earlier absolute deadline */
	for (now = 0; now < 20 * MS;) {
		now += 500 * US;
		sched_tick_cpu(s, 0, now);
	}
	sched_entity_stats(s, late, &st);
	CU_ASSERT_EQUAL(st.nr_deadline_misses, 1);
	sched_entity_stats(s, early, &st);
	CU_ASSERT_EQUAL(st.nr_deadline_misses, 0);
	sched_destroy(s);
}

/* Placement: reservations go to pCPUs they fit, least reserved first (rule 15). */
static void test_dl_placement(void)
{
	struct sched *s = mk_sched(2, 1024, 2, 512, NULL);
	int a, b, c;

	a = add_dl(s, "a", 6 * MS, 10 * MS, 10 * MS, true, 0);	/* needs 615: big */
	b = add_dl(s, "b", 6 * MS, 10 * MS, 10 * MS, true, 0);
	c = add_dl(s, "c", 1 * MS, 10 * MS, 10 * MS, true, 0);	/* fits anywhere */
	CU_ASSERT(sched_ent(s, a)->cpu < 2 && sched_ent(s, b)->cpu < 2);
	CU_ASSERT_NOT_EQUAL(sched_ent(s, a)->cpu, sched_ent(s, b)->cpu);
	CU_ASSERT(sched_ent(s, c)->cpu >= 2);
	sched_destroy(s);
}

/* yield of a reservation gives up the rest of the period. */
static void test_dl_yield(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	int d, f;

	f = add_ent(s, "f", 1024, true, 0);
	d = add_dl(s, "d", 3 * MS, 10 * MS, 10 * MS, true, 0);
	s->cluster[0].level = 1024;
	sched_tick_cpu(s, 0, MS);
	CU_ASSERT_EQUAL(sched_entity_yield(s, d, MS), 0);
	CU_ASSERT_EQUAL(sched_ent(s, d)->state, SCHED_THROTTLED);
	CU_ASSERT_EQUAL(curr_of(s, 0), f);
	sched_tick_cpu(s, 0, 10 * MS);
	CU_ASSERT_EQUAL(curr_of(s, 0), d);
	sched_destroy(s);
}

UNIT_SUITE(sched_deadline, NULL, NULL,
	   UNIT_TEST(test_params),
	   UNIT_TEST(test_admission),
	   UNIT_TEST(test_cbs_throttle_replenish),
	   UNIT_TEST(test_runtime_scaled),
	   UNIT_TEST(test_replenish_overrun),
	   UNIT_TEST(test_wakeup_rules),
	   UNIT_TEST(test_edf_and_miss),
	   UNIT_TEST(test_dl_placement),
	   UNIT_TEST(test_dl_yield))
