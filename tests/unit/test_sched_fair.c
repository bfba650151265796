// SPDX-License-Identifier: MIT
/* Fair class (EEVDF): rules 1-8. */
#include "tests/unit/test_sched_util.h"

static void test_weights(void)
{
	CU_ASSERT_EQUAL(sched_nice_to_weight(-20), 88761);
	CU_ASSERT_EQUAL(sched_nice_to_weight(0), 1024);
	CU_ASSERT_EQUAL(sched_nice_to_weight(19), 15);
	CU_ASSERT_EQUAL(sched_nice_to_weight(20), 0);
	CU_ASSERT_EQUAL(sched_nice_to_weight(-21), 0);
	/* Each step is about x1.25. */
	for (int n = -20; n < 19; n++) {
		double r = (double)sched_nice_to_weight(n) / sched_nice_to_weight(n + 1);

		CU_ASSERT(r > 1.15 && r < 1.35);
	}
	CU_ASSERT_EQUAL(calc_delta_fair(MS, 1024), MS);
	CU_ASSERT_EQUAL(calc_delta_fair(MS, 2048), MS / 2);
	CU_ASSERT_EQUAL(calc_delta_fair(MS, 1), 1024 * MS);
}

/* Brute-force EEVDF pick over the rq's entities, to check pick_eevdf(). */
static struct sched_entity *brute_pick(struct sched *s, struct sched_rq *rq)
{
	struct sched_entity *best = NULL, *curr = rq->curr;
	__int128 sum = 0, load = 0;
	uint64_t base = rq->zero_vruntime;
	struct slist *pos;

	for (pos = rq->queued.next; pos != &rq->queued; pos = pos->next) {
		struct sched_entity *se = slist_entry(pos, struct sched_entity, rq_link);

		sum += (__int128)(int64_t)(se->vruntime - base) * se->weight;
		load += se->weight;
	}
	if (curr && curr->on_rq && curr->protect && curr->deadline == curr->prot_deadline &&
	    sum >= (__int128)(int64_t)(curr->vruntime - base) * load)
		return curr;
	for (pos = rq->queued.next; pos != &rq->queued; pos = pos->next) {
		struct sched_entity *se = slist_entry(pos, struct sched_entity, rq_link);

		if (sum < (__int128)(int64_t)(se->vruntime - base) * load)
			continue;	/* not eligible: negative lag */
		if (!best || time_before64(se->deadline, best->deadline) ||
		    (se->deadline == best->deadline && se != curr && best == curr))
			best = se;
	}
	(void)s;
	return best;
}

/* pick_eevdf() agrees with a brute-force pick through random operations. */
static void test_pick_matches_brute_force(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0, rng = 12345;
	int ids[24];

	for (int i = 0; i < 24; i++)
		ids[i] = add_ent(s, "e", (uint32_t)(100 + 300 * (i % 7)), i % 3 != 0, 0);
	for (int step = 0; step < 3000; step++) {
		int id = ids[(rng >> 33) % 24];

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		now += 100 * US + (rng >> 40) % (900 * US);
		switch ((rng >> 20) % 4) {
		case 0:
			sched_wakeup(s, id, now);
			break;
		case 1:
			sched_block(s, id, now);
			break;
		default:
			sched_tick(s, now);
			break;
		}
		if (s->rq[0].nr_fair) {
			struct sched_entity *p = pick_eevdf(&s->rq[0]), *b = brute_pick(s, &s->rq[0]);

			CU_ASSERT_PTR_NOT_NULL(p);
			if (p != b)
				CU_ASSERT(p->deadline == b->deadline);	/* ties */
			CU_ASSERT(entity_eligible(&s->rq[0], p));
		}
	}
	sched_destroy(s);
}

/* Shares follow weights on one pCPU (rule 2, 6). */
static void test_weighted_shares(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint32_t w[3] = { 1024, 2048, 335 };
	uint64_t now = 0, total;
	int id[3];

	for (int i = 0; i < 3; i++)
		id[i] = add_ent(s, "w", w[i], true, 0);
	run_until(s, &now, 3000 * MS, MS);
	total = cpu_time(s, id[0]) + cpu_time(s, id[1]) + cpu_time(s, id[2]);
	CU_ASSERT(total > 2990 * MS);
	for (int i = 0; i < 3; i++) {
		double want = (double)w[i] / (w[0] + w[1] + w[2]);
		double got = (double)cpu_time(s, id[i]) / (double)total;

		CU_ASSERT_DOUBLE_EQUAL(got, want, 0.01 * want);
	}
	sched_destroy(s);
}

/* A new entity is placed at V with half a slice (rule 5). */
static void test_new_entity_half_slice(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int a, b;
	struct sched_entity *se;

	a = add_ent(s, "a", 1024, true, 0);
	run_until(s, &now, 10 * MS, MS);
	b = add_ent(s, "b", 2048, true, now);
	se = sched_ent(s, b);
	CU_ASSERT_EQUAL(se->deadline - se->vruntime, calc_delta_fair(s->cfg.slice_ns, 2048) / 2);
	CU_ASSERT(se->vruntime == avg_vruntime(&s->rq[0]) ||
		  se->vruntime + 1 >= avg_vruntime(&s->rq[0]));
	(void)a;
	sched_destroy(s);
}

/* Lag is kept across sleep and restored on wakeup (rule 5). */
static void test_lag_survives_sleep(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int a, b, c;
	struct sched_entity *se;
	int64_t lag, after;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, true, 0);
	c = add_ent(s, "c", 1024, true, 0);
	run_until(s, &now, 7 * MS, MS);
	/* Block a waiting entity: it has positive lag (it is owed time). */
	se = sched_ent(s, curr_of(s, 0) == a ? b : a);
	now += 100 * US;
	sched_block(s, se->id, now);
	lag = se->vlag;
	CU_ASSERT(lag > 0);
	run_until(s, &now, 50 * MS, MS);
	sched_wakeup(s, se->id, now + 10);
	after = (int64_t)(avg_vruntime(&s->rq[0]) - se->vruntime);
	CU_ASSERT(after >= lag - 2 && after <= lag + 2);
	(void)c;
	sched_destroy(s);
}

/* The stored lag is clamped to slice + tick in virtual time (rule 5). */
static void test_lag_clamped(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0, limit;
	int a, b;
	struct sched_entity *se;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1, true, 0);	/* weight 1: huge virtual lag */
	run_until(s, &now, 20 * MS, MS);
	se = sched_ent(s, b);
	sched_block(s, b, now);
	limit = calc_delta_fair(s->cfg.slice_ns + s->cfg.tick_ns, 1);
	CU_ASSERT(se->vlag <= (int64_t)limit && se->vlag >= -(int64_t)limit);
	(void)a;
	sched_destroy(s);
}

/*
 * RUN_TO_PARITY: an entity woken with zero lag does not preempt the
 * running one before its deadline; one woken with positive lag makes the
 * current one ineligible and preempts at once (rule 4, wakeup preemption).
 */
static void test_wakeup_preemption(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int a, b, c;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, false, 0);
	c = add_ent(s, "c", 1024, true, 0);
	run_until(s, &now, 20 * MS, MS);
	/* b is new: lag 0, placed at V; the current one keeps its slice. */
	{
		int curr = curr_of(s, 0);
		struct sched_entity *ce = sched_ent(s, curr);

		now += 10 * US;
		sched_wakeup(s, b, now);
		if (entity_eligible(&s->rq[0], ce))
			CU_ASSERT_EQUAL(curr_of(s, 0), curr);
	}
	/* Let b build up positive lag, block it, then wake it: it preempts. */
	sched_block(s, b, now);
	sched_ent(s, b)->vlag = (int64_t)calc_delta_fair(2 * MS, 1024);
	run_until(s, &now, 30 * MS, MS);
	now += 300 * US;
	sched_wakeup(s, b, now);
	CU_ASSERT_EQUAL(curr_of(s, 0), b);
	(void)a;
	(void)c;
	sched_destroy(s);
}

/* yield: vruntime moves to the deadline, a new deadline is set (rule 7). */
static void test_yield(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0, old_deadline;
	int a, b, curr;
	struct sched_entity *se;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, true, 0);
	now += 500 * US;
	sched_tick(s, now);
	curr = curr_of(s, 0);
	se = sched_ent(s, curr);
	old_deadline = se->deadline;
	now += 100 * US;
	CU_ASSERT_EQUAL(sched_entity_yield(s, curr, now), 0);
	CU_ASSERT_EQUAL(se->vruntime, old_deadline);
	CU_ASSERT_EQUAL(se->deadline, old_deadline + calc_delta_fair(s->cfg.slice_ns, 1024));
	CU_ASSERT_EQUAL(curr_of(s, 0), curr == a ? b : a);
	sched_destroy(s);
}

/* yield_to boosts a runnable, not running target; 0 otherwise (rule 8). */
static void test_yield_to(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int a, b, c, d, spinner, other;
	struct sched_entity_stats st;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, true, 0);
	c = add_ent(s, "c", 1024, true, 0);
	d = add_ent(s, "d", 1024, false, 0);
	run_until(s, &now, 9 * MS, MS);
	spinner = curr_of(s, 0);
	other = spinner == a ? b : a;
	/*
	 * Target: a new light entity, eligible (placed at V) but with the
	 * latest deadline (a long virtual slice), so plain EEVDF would pick
	 * someone else after the spinner yields: only the buddy makes it run.
	 */
	{
		int late = add_ent(s, "late", 256, true, now);
		struct sched_entity *le = sched_ent(s, late);

		CU_ASSERT_FATAL(entity_eligible(&s->rq[0], le));
		CU_ASSERT(time_before64(sched_ent(s, c == spinner ? b : c)->deadline, le->deadline));
		other = late;
	}
	now += 10 * US;
	CU_ASSERT_EQUAL(sched_yield_to(s, spinner, spinner, now), 0);	/* itself */
	CU_ASSERT_EQUAL(sched_yield_to(s, spinner, d, now), 0);		/* blocked */
	CU_ASSERT_EQUAL(curr_of(s, 0), spinner);	/* nothing changed */
	CU_ASSERT_EQUAL(sched_yield_to(s, other, spinner, now), 0);	/* running */
	CU_ASSERT_EQUAL(sched_yield_to(s, spinner, other, now), 1);
	CU_ASSERT_EQUAL(curr_of(s, 0), other);
	sched_entity_stats(s, spinner, &st);
	CU_ASSERT_EQUAL(st.nr_yield_to_boosted, 1);
	CU_ASSERT_EQUAL(sched_yield_to(s, 99, other, now), -SCHED_E_NOENT);
	(void)c;
	sched_destroy(s);
}

/* reweight keeps lag: the entity's V - v scales by old/new (rule 5). */
static void test_reweight_keeps_lag(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int a, b, waiting;
	struct sched_entity *se;
	int64_t before, after;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, true, 0);
	run_until(s, &now, 5 * MS, MS);
	waiting = curr_of(s, 0) == a ? b : a;
	se = sched_ent(s, waiting);
	before = (int64_t)(avg_vruntime(&s->rq[0]) - se->vruntime) * 1024;
	CU_ASSERT_EQUAL(sched_set_weight(s, waiting, 2048, now), 0);
	after = (int64_t)(avg_vruntime(&s->rq[0]) - se->vruntime) * 2048;
	/* lag_i = w_i (V - v_i) is conserved (up to V moving with the weight). */
	CU_ASSERT(after > 0 && before > 0);
	CU_ASSERT_EQUAL(se->weight, 2048);
	CU_ASSERT_EQUAL(sched_set_weight(s, waiting, 0, now), -SCHED_E_INVAL);
	CU_ASSERT_EQUAL(se->weight, 2048);
	sched_destroy(s);
}

/* Move tracked entity id of rate `rate` (1 << 20 = 1024) to `cpu`, by the fluid balance or not. */
static struct sched_entity *move_tracked(struct sched *s, int id, unsigned int cpu, uint64_t rate,
					 bool by_balance)
{
	struct sched_entity *se = sched_ent(s, id);

	se->lag_tracked = true;
	se->lag_rate = rate;
	se->lag_moving = by_balance;
	migrate_entity(s, se, cpu, SCHED_MIGRATE_BALANCE, 0);
	se->lag_moving = false;
	return se;
}

/*
 * An entity the fluid balance moves asks on its new pCPU for a slice times
 * its weight over the heaviest's there, at least a tick; moved otherwise, a
 * whole slice. With a whole slice, each light arrival took 3 ms from the
 * heavy entity there at once (seed 9 #348 of the fair corpus, every vCPU
 * busy); relative to the pCPU, equal weights dispatched 1.8x as often;
 * relative to the mean weight there (CFS's sched_slice(): 1.71 ms for
 * "half" below), the lag moves moved 2.3x as often.
 */
static void test_moved_entity_requests_its_share(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	int equal = add_ent(s, "equal", 1024, true, 0);
	int half = add_ent(s, "half", 512, true, 0);
	int light = add_ent(s, "light", 15, true, 0);
	int other = add_ent(s, "other", 512, true, 0);
	int a = add_ent(s, "a", 1024, true, 0), b = add_ent(s, "b", 1024, true, 0);
	struct sched_entity *se;

	CU_ASSERT_EQUAL_FATAL(s->cfg.slice_ns, 3 * MS);
	CU_ASSERT_EQUAL_FATAL(s->cfg.tick_ns, MS);
	/* pCPU 1 has two of weight 1024, the others wait on pCPU 0 */
	for (int id = equal; id <= b; id++)
		move_tracked(s, id, id == a || id == b, 1u << 18, false);
	CU_ASSERT_EQUAL_FATAL(s->rq[1].fair_weight, 2048);
	se = move_tracked(s, equal, 1, 1u << 18, true);
	CU_ASSERT_EQUAL(se->slice, 3 * MS);		/* as heavy as the heaviest */
	se = move_tracked(s, half, 1, 1u << 17, true);
	CU_ASSERT_EQUAL(se->slice, 3 * MS / 2);		/* 3 ms x 512 / 1024 */
	se = move_tracked(s, light, 1, 1u << 10, true);
	CU_ASSERT_EQUAL(se->slice, MS);			/* 44 us: a tick at least */
	se = move_tracked(s, other, 1, 1u << 17, false);
	CU_ASSERT_EQUAL(se->slice, 3 * MS);
	sched_destroy(s);
}

UNIT_SUITE(sched_fair, NULL, NULL,
	   UNIT_TEST(test_weights),
	   UNIT_TEST(test_pick_matches_brute_force),
	   UNIT_TEST(test_weighted_shares),
	   UNIT_TEST(test_new_entity_half_slice),
	   UNIT_TEST(test_lag_survives_sleep),
	   UNIT_TEST(test_lag_clamped),
	   UNIT_TEST(test_wakeup_preemption),
	   UNIT_TEST(test_yield),
	   UNIT_TEST(test_yield_to),
	   UNIT_TEST(test_reweight_keeps_lag),
	   UNIT_TEST(test_moved_entity_requests_its_share))
