// SPDX-License-Identifier: MIT
/* Cap holes in the fluid-ideal balance (sched/cap.c; docs/sched/caps.md "Holes filled" and after): who takes a throttled entity's pCPU, and when. */
#include "tests/unit/test_sched_util.h"

/* A runnable entity of weight 1024 allowed only on pCPU cpu. */
static int add_pinned(struct sched *s, const char *name, unsigned int cpu)
{
	struct sched_entity_params p;
	int id;

	sched_entity_params_init(&p, name);
	p.runnable = true;
	sched_cpumask_set(&p.affinity, cpu);
	id = sched_entity_add(s, &p, 0, NULL, 0);
	CU_ASSERT_FATAL(id >= 0);
	return id;
}

/* An entity capped at 2 ms per 100 ms, the first on pCPU 0 (throttled from 2 ms). */
static int add_capped_on0(struct sched *s)
{
	int capped = add_ent(s, "capped", 1024, true, 0);

	CU_ASSERT_EQUAL(sched_set_cap(s, capped, 2 * MS, 100 * MS, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(sched_ent(s, capped)->cpu, 0);
	return capped;
}

/*
 * Two pCPUs: a capped entity alone on one, throttled from 2 ms; B and C,
 * allowed only on the other, share it. When C may go anywhere, the pCPU
 * in the hole takes it at its next tick: the hole's time is lost for
 * good, and newidle ran when the pCPU went idle, with nothing it could
 * pull then (the periodic balance is out of the way here: every second).
 */
static void test_capbal_hole_filled(void)
{
	struct sched_config cfg = { .balance_interval_ns = 1000 * MS };
	struct sched *s = mk_sched(2, 1024, 0, 0, &cfg);
	uint64_t now = 0;
	int capped, c;

	capped = add_capped_on0(s);
	add_pinned(s, "b", 1);
	c = add_pinned(s, "c", 1);
	run_until(s, &now, 5 * MS, MS);
	CU_ASSERT_EQUAL_FATAL(sched_ent(s, capped)->state, SCHED_THROTTLED);
	CU_ASSERT_EQUAL(curr_of(s, 0), SCHED_NONE);
	CU_ASSERT_EQUAL(sched_set_affinity(s, c, &s->all_cpus, now, NULL, 0), 0);
	run_until(s, &now, 6 * MS, MS);
	CU_ASSERT_EQUAL(sched_ent(s, c)->cpu, 0);
	CU_ASSERT_EQUAL(curr_of(s, 0), c);
	sched_destroy(s);
}

/*
 * The set-up of the hole tests: pCPU 0 holds a capped entity and L (and
 * M, if m is not NULL), pCPU 1 B and C; at 10 ms the capped one is
 * throttled, L (or L and M) run in the hole, and C (pinned to pCPU 1
 * until then) may go anywhere.
 */
static void hole_beside_two(struct sched *s, uint64_t *now, int *l, int *m, int *c)
{
	int capped = add_capped_on0(s);

	*l = add_pinned(s, "l", 0);
	if (m)
		*m = add_pinned(s, "m", 0);
	add_pinned(s, "b", 1);
	*c = add_pinned(s, "c", 1);
	run_until(s, now, 10 * MS, MS);
	CU_ASSERT_EQUAL_FATAL(sched_ent(s, capped)->state, SCHED_THROTTLED);
	CU_ASSERT_FATAL(curr_of(s, 0) == *l || (m && curr_of(s, 0) == *m));
	CU_ASSERT_EQUAL(sched_set_affinity(s, *c, &s->all_cpus, *now, NULL, 0), 0);
}

static void hole_beside(struct sched *s, uint64_t *now, int *l, int *c)
{
	hole_beside_two(s, now, l, NULL, c);
}

/*
 * Two pCPUs: a capped entity, throttled from 2 ms, and L on one; B and C,
 * allowed only on the other, share it; then C may go anywhere. With L
 * three slices of work ahead of its ideal and C behind its own, the pCPU
 * in the hole takes C at its next tick, as an idle one would: L alone
 * would collect the hole. With L one slice ahead it does not (the
 * periodic balance is out of the way: every second).
 */
static void test_capbal_hole_shared_when_ahead(void)
{
	for (int ahead = 1; ahead <= 3; ahead += 2) {
		struct sched_config cfg = { .balance_interval_ns = 1000 * MS };
		struct sched *s = mk_sched(2, 1024, 0, 0, &cfg);
		uint64_t now = 0;
		int l, c;

		hole_beside(s, &now, &l, &c);
		set_lag(s, sched_ent(s, l), -ahead * (int64_t)s->cfg.slice_ns, now);
		set_lag(s, sched_ent(s, c), 10 * MS, now);
		run_until(s, &now, 20 * MS, MS);
		CU_ASSERT_EQUAL(sched_ent(s, c)->cpu, ahead == 3 ? 0 : 1);
		sched_destroy(s);
	}
}

/*
 * The set-up above with L eight slices of work ahead of its ideal and no
 * entity behind its own: C three slices ahead, its ideal rate L's, is
 * pulled into the hole (L would collect it while C is much nearer its
 * ideal); C as far ahead as L is not (it would only take L's place), nor
 * C three slices ahead with half L's rate (a lighter one would collect
 * the hole as L does).
 */
static void test_capbal_hole_taken_by_less_ahead(void)
{
	static const struct { int ahead, rate_div; bool taken; } cases[] = {
		{ 3, 1, true }, { 8, 1, false }, { 3, 2, false },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sched_config cfg = { .balance_interval_ns = 1000 * MS };
		struct sched *s = mk_sched(2, 1024, 0, 0, &cfg);
		int64_t slice = (int64_t)s->cfg.slice_ns;
		uint64_t now = 0;
		int l, c;

		hole_beside(s, &now, &l, &c);
		set_lag(s, sched_ent(s, l), -8 * slice, now);
		set_lag(s, sched_ent(s, c), -cases[i].ahead * slice, now);
		sched_ent(s, c)->lag_rate /= cases[i].rate_div;
		run_until(s, &now, 13 * MS, MS);
		CU_ASSERT_EQUAL(sched_ent(s, c)->cpu, cases[i].taken ? 0 : 1);
		sched_destroy(s);
	}
}

/*
 * The set-up above with L and M both in the hole and C behind its ideal:
 * with L and M both three slices of work ahead of theirs, the pCPU in the
 * hole takes C at its next tick (the two would collect the hole, as L
 * alone would); with M only one slice ahead it does not.
 */
static void test_capbal_hole_shared_by_all_ahead(void)
{
	for (int m_ahead = 1; m_ahead <= 3; m_ahead += 2) {
		struct sched_config cfg = { .balance_interval_ns = 1000 * MS };
		struct sched *s = mk_sched(2, 1024, 0, 0, &cfg);
		int64_t slice = (int64_t)s->cfg.slice_ns;
		uint64_t now = 0;
		int l, m, c;

		hole_beside_two(s, &now, &l, &m, &c);
		set_lag(s, sched_ent(s, l), -3 * slice, now);
		set_lag(s, sched_ent(s, m), -m_ahead * slice, now);
		set_lag(s, sched_ent(s, c), 10 * MS, now);
		run_until(s, &now, 20 * MS, MS);
		CU_ASSERT_EQUAL(sched_ent(s, c)->cpu, m_ahead == 3 ? 0 : 1);
		sched_destroy(s);
	}
}

/*
 * The set-up of test_capbal_hole_shared_by_all_ahead() with L and M three
 * slices ahead and C behind its ideal but past V on its pCPU (as after
 * running to a tick there): C, pulled into the hole, runs at once, not
 * after L's and M's turns, with the lag its old pCPU gave it (seed 13
 * #102 of the caps corpus: v4, 0.523 virtual ms past V, waited 1.1 ms of
 * a 1.956 ms hole behind two light ones).
 */
static void test_capbal_hole_taker_runs(void)
{
	struct sched_config cfg = { .balance_interval_ns = 1000 * MS };
	struct sched *s = mk_sched(2, 1024, 0, 0, &cfg);
	int64_t slice = (int64_t)s->cfg.slice_ns;
	uint64_t now = 0;
	int l = 0, m = 0, c = 0, pulled_at = -1, ran_first = 0;

	hole_beside_two(s, &now, &l, &m, &c);
	CU_ASSERT_EQUAL(sched_block(s, c, now), 0);
	sched_ent(s, c)->vlag = -4 * (int64_t)MS;	/* past V, as after a tick */
	set_lag(s, sched_ent(s, l), -3 * slice, now);
	set_lag(s, sched_ent(s, m), -3 * slice, now);
	set_lag(s, sched_ent(s, c), 10 * MS, now);
	CU_ASSERT_EQUAL(sched_wakeup(s, c, now), 0);
	for (int k = 11; k <= 20 && pulled_at < 0; k++) {
		run_until(s, &now, k * MS, MS);
		if (sched_ent(s, c)->cpu == 0) {
			pulled_at = k;
			ran_first = curr_of(s, 0) == c;
		}
	}
	CU_ASSERT(pulled_at > 0);
	CU_ASSERT(ran_first);
	sched_destroy(s);
}

/*
 * One pCPU: T (16963) capped at 8.044 ms every 10 (tight: it runs its
 * quota at the largest weight), H (2000) and three light ones (18, 32,
 * 81). Each period, while T runs, H comes back behind its ideal but past
 * V (as after running to a tick in the hole before: V stands still while
 * T runs). At T's throttle it goes to lag 0 and starts the hole, not a
 * light one below V (seed 13 #102 of the caps corpus: the light ones
 * began 273 of the tight v1's 488 holes).
 */
static void test_capbal_hole_behind_first(void)
{
	static const uint32_t lw[] = { 18, 32, 81 };
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int t = add_ent(s, "t", 16963, true, 0), h = add_ent(s, "h", 2000, true, 0);
	int h_first = 0;

	for (int i = 0; i < 3; i++)
		add_ent(s, "l", lw[i], true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, t, 8044 * US, 10 * MS, 0, NULL, 0), 0);
	run_events_all(s, &now, 200 * MS);
	for (int k = 20; k < 30; k++) {
		run_events_all(s, &now, k * 10 * MS + 8 * MS);
		CU_ASSERT_EQUAL(curr_of(s, 0), t);
		CU_ASSERT_EQUAL(sched_block(s, h, now), 0);
		sched_ent(s, h)->vlag = -(int64_t)(256 * US);	/* 0.5 ms at 2000 */
		set_lag(s, sched_ent(s, h), 20 * MS, now);
		CU_ASSERT_EQUAL(sched_wakeup(s, h, now), 0);
		CU_ASSERT_FALSE(entity_eligible(&s->rq[0], sched_ent(s, h)));
		run_events_all(s, &now, k * 10 * MS + 8044 * US + US);
		h_first += curr_of(s, 0) == h;
	}
	CU_ASSERT_EQUAL(h_first, 10);
	sched_destroy(s);
}

UNIT_SUITE(sched_capholes, NULL, NULL,
	   UNIT_TEST(test_capbal_hole_filled),
	   UNIT_TEST(test_capbal_hole_shared_when_ahead),
	   UNIT_TEST(test_capbal_hole_taken_by_less_ahead),
	   UNIT_TEST(test_capbal_hole_shared_by_all_ahead),
	   UNIT_TEST(test_capbal_hole_behind_first),
	   UNIT_TEST(test_capbal_hole_taker_runs))
