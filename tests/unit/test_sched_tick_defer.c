// SPDX-License-Identifier: MIT
/*
 * Deferred busy ticks (tick_defer() in sched/core.c): a busy pCPU whose
 * running entity's slice goes on skips the tick's accounting and PELT
 * until its next event, and nothing anyone reads changes: every test
 * runs the same schedule twice, with deferral and with
 * sched_config.no_tick_defer, and compares what the API shows.
 */
#include "tests/unit/test_sched_util.h"

struct twin {
	struct sched *s[2];	/* [0] defers, [1] ticks in full */
};

static void twin_make(struct twin *t, unsigned int nbig, unsigned int nlittle)
{
	struct sched_config cfg = { 0 };

	t->s[0] = mk_sched(nbig, 1024, nlittle, 512, NULL);
	cfg.no_tick_defer = true;
	t->s[1] = mk_sched(nbig, 1024, nlittle, 512, &cfg);
}

static void twin_destroy(struct twin *t)
{
	sched_destroy(t->s[0]);
	sched_destroy(t->s[1]);
}

static void twin_tick(struct twin *t, uint64_t now)
{
	sched_tick(t->s[0], now);
	sched_tick(t->s[1], now);
}

/* Within one PELT period's contribution: 1024 x 1024 / LOAD_AVG_MAX, rounded up. */
static bool near(unsigned int a, unsigned int b)
{
	unsigned int period = (1024 * 1024 + LOAD_AVG_MAX - 1) / LOAD_AVG_MAX;

	return a + period >= b && b + period >= a;
}

/* Statistics of entity id and of its pCPU agree between the twins. */
static void twin_expect_same(struct twin *t, int id)
{
	struct sched_entity_stats a, b;
	struct sched_cpu_stats ca, cb;
	unsigned int cpu = (unsigned int)sched_ent(t->s[0], id)->cpu;

	CU_ASSERT_EQUAL(sched_ent(t->s[1], id)->cpu, (int)cpu);
	sched_entity_stats(t->s[0], id, &a);
	sched_entity_stats(t->s[1], id, &b);
	CU_ASSERT_EQUAL(a.cpu_time_ns, b.cpu_time_ns);
	CU_ASSERT_EQUAL(a.work_ns, b.work_ns);
	CU_ASSERT_EQUAL(a.wait_ns, b.wait_ns);
	CU_ASSERT_EQUAL(a.nr_switches, b.nr_switches);
	/*
	 * util_avg moves only when an update crosses a period boundary (as
	 * in the kernel), so an update that spans the deferred ticks may set
	 * it up to one period later than the tick did: one period's worth.
	 */
	CU_ASSERT(near(a.util_avg, b.util_avg));
	sched_cpu_stats(t->s[0], cpu, &ca);
	sched_cpu_stats(t->s[1], cpu, &cb);
	CU_ASSERT_EQUAL(ca.busy_ns, cb.busy_ns);
	CU_ASSERT_EQUAL(ca.nr_switches, cb.nr_switches);
	CU_ASSERT_EQUAL(ca.misfit, cb.misfit);
	CU_ASSERT(near(ca.util_avg, cb.util_avg));
	CU_ASSERT_EQUAL(cb.nr_ticks_deferred, 0);
}

/*
 * Two busy entities share a pCPU: two ticks of each 3 ms slice are
 * deferred, the third ends the slice, and the switches, CPU times and
 * signals read after every tick are the full tick's.
 */
static void test_tick_defer_same_schedule(void)
{
	struct twin t;
	struct sched_cpu_stats cs;
	uint64_t now = 0;
	int a = -1, b = -1;

	twin_make(&t, 1, 0);
	for (int k = 0; k < 2; k++) {
		a = add_ent(t.s[k], "a", 1024, true, 0);
		b = add_ent(t.s[k], "b", 2048, true, 0);
	}
	for (now = MS; now <= 300 * MS; now += MS) {
		twin_tick(&t, now);
		CU_ASSERT_EQUAL(curr_of(t.s[0], 0), curr_of(t.s[1], 0));
		twin_expect_same(&t, a);
		twin_expect_same(&t, b);
	}
	sched_cpu_stats(t.s[0], 0, &cs);
	/* About 2 of every 3 ticks (slices of 3 ms; a's is 6 ms in its time). */
	CU_ASSERT(cs.nr_ticks_deferred > 150 && cs.nr_ticks_deferred < 250);
	twin_destroy(&t);
}

/*
 * The same with weights that do not divide the time: the vruntime of a
 * run must not depend on how its time was split into updates.
 */
static void test_tick_defer_any_weight(void)
{
	struct twin t;
	uint64_t now = 0;
	int a = -1, b = -1;

	twin_make(&t, 1, 0);
	for (int k = 0; k < 2; k++) {
		a = add_ent(t.s[k], "a", 1000, true, 0);
		b = add_ent(t.s[k], "b", 3001, true, 0);
	}
	for (now = MS; now <= 300 * MS; now += MS) {
		twin_tick(&t, now);
		CU_ASSERT_EQUAL(curr_of(t.s[0], 0), curr_of(t.s[1], 0));
		twin_expect_same(&t, a);
		twin_expect_same(&t, b);
	}
	twin_destroy(&t);
}

/*
 * Events between deferred ticks (a wakeup, a block) account the deferred
 * time first; a level change accounts at the old level.
 */
static void test_tick_defer_events_between(void)
{
	struct twin t;
	uint64_t now = 0;
	int a = -1, b = -1, c = -1;

	twin_make(&t, 1, 0);
	for (int k = 0; k < 2; k++) {
		a = add_ent(t.s[k], "a", 1024, true, 0);
		b = add_ent(t.s[k], "b", 1024, true, 0);
		c = add_ent(t.s[k], "c", 1024, false, 0);
	}
	for (now = MS; now <= 200 * MS; now += MS) {
		twin_tick(&t, now);
		if (now % (7 * MS) == 0)
			for (int k = 0; k < 2; k++)
				sched_wakeup(t.s[k], c, now + 300 * US);
		if (now % (7 * MS) == 2 * MS)
			for (int k = 0; k < 2; k++)
				sched_block(t.s[k], c, now + 500 * US);
		if (now == 100 * MS)	/* clamps lower the level at once (perf_kick) */
			for (int k = 0; k < 2; k++) {
				sched_set_uclamp(t.s[k], a, 0, 512, now + 100 * US, NULL, 0);
				sched_set_uclamp(t.s[k], b, 0, 512, now + 100 * US, NULL, 0);
				CU_ASSERT_EQUAL(t.s[k]->cluster[0].level, 512);
			}
		twin_expect_same(&t, a);
		twin_expect_same(&t, b);
	}
	twin_destroy(&t);
}

/*
 * On a little pCPU the misfit flag stays current while the ticks are
 * deferred (from the running entity's projected util): a busy entity
 * alone on the little pCPU turns misfit at the same tick as with full
 * ticks (give or take the period boundary its util_avg moves at), and
 * moves at the same tick once the big pCPU is idle.
 */
static void test_tick_defer_misfit(void)
{
	struct twin t;
	struct sched_cpumask big;
	struct sched_cpu_stats cs[2];
	uint64_t now, misfit_at[2] = { 0, 0 }, moved[2] = { 0, 0 };
	int a = -1, blocker = -1;

	twin_make(&t, 1, 1);
	for (int k = 0; k < 2; k++) {
		sched_cluster_mask(t.s[k], 0, &big);
		/*
		 * Heavy enough that its fair share is the whole big pCPU: with
		 * equal weights the fair shares would have `a` spend a quarter
		 * of its time on the big pCPU, and the fluid-ideal balance
		 * would move it there before it turns misfit.
		 */
		blocker = add_ent(t.s[k], "blocker", 88761, true, 0);
		sched_set_affinity(t.s[k], blocker, &big, 0, NULL, 0);
		a = add_ent(t.s[k], "a", 1024, true, 0);	/* the idle little pCPU */
		CU_ASSERT_EQUAL(sched_ent(t.s[k], a)->cpu, 1);
	}
	for (now = MS; now <= 300 * MS; now += MS) {
		twin_tick(&t, now);
		for (int k = 0; k < 2; k++) {
			unsigned int util;

			/* The flag is the fit test of a's util as of this tick. */
			sched_cpu_stats(t.s[k], 1, &cs[k]);
			sched_entity_util(t.s[k], a, &util, NULL);
			CU_ASSERT_EQUAL(cs[k].misfit, !util_fits_cpu(util, 0, 1024, 512));
			if (cs[k].misfit && !misfit_at[k])
				misfit_at[k] = now;
		}
	}
	/* util_avg moves at period boundaries: the twins may cross one tick apart. */
	CU_ASSERT(misfit_at[0] > 0 && misfit_at[1] > 0);
	CU_ASSERT(misfit_at[0] <= misfit_at[1] + MS && misfit_at[1] <= misfit_at[0] + MS);
	CU_ASSERT(cs[0].nr_ticks_deferred > 100);
	for (int k = 0; k < 2; k++)
		sched_block(t.s[k], blocker, now);	/* the big pCPU goes idle */
	for (; now <= 400 * MS; now += MS) {
		twin_tick(&t, now);
		for (int k = 0; k < 2; k++)
			if (!moved[k] && sched_ent(t.s[k], a)->cpu == 0)
				moved[k] = now;
	}
	CU_ASSERT(moved[0] != 0);
	CU_ASSERT_EQUAL(moved[0], moved[1]);
	twin_destroy(&t);
}

UNIT_SUITE(sched_tick_defer, NULL, NULL,
	   UNIT_TEST(test_tick_defer_same_schedule),
	   UNIT_TEST(test_tick_defer_any_weight),
	   UNIT_TEST(test_tick_defer_events_between),
	   UNIT_TEST(test_tick_defer_misfit))
