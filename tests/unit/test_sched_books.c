// SPDX-License-Identifier: MIT
/*
 * The bookkeeping that bounds two scans, checked against the scans they
 * replace after every call of random sequences with caps and groups:
 * each runqueue's list of counted capped entities (fair_cap_urgent()
 * visits it instead of every queued entity) holds exactly the counted
 * ones, in the queued list's order, and every queued entity that could
 * have a laxity; each group's running mask (group_unaccounted() visits it
 * instead of every pCPU) holds exactly the pCPUs whose curr is below the
 * group, and group_unaccounted() equals the sum over all pCPUs.
 */
#include "tests/unit/test_sched_util.h"

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? rng_state % n : 0;
}

/* rq->capped against a walk of rq->queued: 0 if they agree. */
static int check_capped(const struct sched_rq *rq)
{
	const struct slist *q, *c = rq->capped.next;
	unsigned int n = 0;

	for (q = rq->queued.next; q != &rq->queued; q = q->next) {
		const struct sched_entity *se = slist_entry(q, struct sched_entity, rq_link);

		if (!dl_entity(se) && (se->cap_period || se->grp_share.period) && !se->cap_counted)
			return 1;	/* a laxity fair_cap_urgent() would not see */
		if (!se->cap_counted)
			continue;
		if (dl_entity(se))
			return 2;
		if (c == &rq->capped || slist_entry(c, struct sched_entity, capped_link) != se)
			return 3;	/* missing, or out of the queued order */
		c = c->next;
		n++;
	}
	if (c != &rq->capped)
		return 4;		/* an entity on the list that is not queued here */
	return n == rq->nr_capped ? 0 : 5;
}

/* Groups' running masks and group_unaccounted() against the sums over all pCPUs. */
static int check_running(const struct sched *s, uint64_t now)
{
	for (int gid = 0; s->grp && gid < SCHED_MAX_GROUPS; gid++) {
		if (!s->grp[gid].used)
			continue;
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
			const struct sched_entity *c = s->rq[cpu].curr;

			if (sched_cpumask_test(&s->grp[gid].running, cpu) !=
			    (c && group_contains(s, c, gid)))
				return 10;
		}
		for (int k = -1; k < (int)s->nr_cpus; k++) {
			const struct sched_rq *skip = k < 0 ? NULL : &s->rq[k];
			uint64_t sum = 0;

			for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
				const struct sched_rq *rq = &s->rq[cpu];

				if (rq != skip && rq->curr && rq->curr->on_rq && now > rq->clock &&
				    group_contains(s, rq->curr, gid))
					sum += now - rq->clock;
			}
			if (group_unaccounted(s, gid, now, skip) != sum)
				return 11;
		}
	}
	return 0;
}

static int check_books(const struct sched *s, uint64_t now)
{
	int r;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if ((r = check_capped(&s->rq[cpu])))
			return r;
	return check_running(s, now);
}

/*
 * A cap set on a queued entity with a counted one queued after it puts it
 * before that one on the list (ties in fair_cap_urgent() go to the first
 * in queued order): a list kept by appending had it after.
 */
static void test_books_capped_order(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_rq *rq = &s->rq[0];
	int a = add_ent(s, "a", 1024, true, 0);
	int b = add_ent(s, "b", 1024, true, 0);
	int c = add_ent(s, "c", 1024, false, 0);

	CU_ASSERT_EQUAL(sched_set_cap(s, c, 5 * MS, 10 * MS, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_wakeup(s, c, 0), 0);	/* counted at its enqueue, last */
	CU_ASSERT_EQUAL(sched_set_cap(s, b, 5 * MS, 10 * MS, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, a, 5 * MS, 10 * MS, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(rq->nr_capped, 3);
	CU_ASSERT_EQUAL(check_capped(rq), 0);
	CU_ASSERT_PTR_EQUAL(slist_entry(rq->capped.next, struct sched_entity, capped_link),
			    sched_ent(s, a));
	CU_ASSERT_PTR_EQUAL(slist_entry(rq->capped.prev, struct sched_entity, capped_link),
			    sched_ent(s, c));
	CU_ASSERT_EQUAL(sched_block(s, b, 0), 0);
	CU_ASSERT_EQUAL(rq->nr_capped, 2);
	CU_ASSERT_EQUAL(check_capped(rq), 0);
	sched_destroy(s);
}

enum { NENT = 16, NGRP = 4 };

struct books_run {
	struct sched *s;
	uint64_t now;
	int ids[NENT];
	int gids[NGRP];
};

static int random_group(const struct books_run *r)
{
	return rnd(5) ? r->gids[rnd(NGRP)] : SCHED_NONE;
}

static void random_cpus(const struct sched *s, struct sched_cpumask *m)
{
	sched_cpumask_clear(m);
	for (unsigned int c = 0; c < s->nr_cpus; c++)
		if (rnd(2))
			sched_cpumask_set(m, c);
}

static void random_op(struct books_run *r)
{
	struct sched *s = r->s;
	int id = r->ids[rnd(NENT)];
	uint64_t period = (2 + rnd(40)) * MS;
	struct sched_cpumask m;

	switch (rnd(12)) {
	case 0: case 1:
		sched_wakeup(s, id, r->now);
		break;
	case 2:
		sched_block(s, id, r->now);
		break;
	case 3:		/* a cap, changed or taken away, also while queued or running */
		sched_set_cap(s, id, rnd(3) ? SCHED_CAP_QUOTA_MIN_NS + rnd(period) : 0, period,
			      r->now, NULL, 0);
		break;
	case 4:		/* moved between groups, also while running */
		sched_set_group(s, id, random_group(r), r->now, NULL, 0);
		break;
	case 5:
		sched_group_set_cap(s, r->gids[rnd(NGRP)],
				    rnd(4) ? SCHED_CAP_QUOTA_MIN_NS + rnd(2 * period) : 0, period,
				    r->now, NULL, 0);
		break;
	case 6:		/* migrations */
		random_cpus(s, &m);
		sched_set_affinity(s, id, &m, r->now, NULL, 0);
		break;
	case 7:
		sched_entity_yield(s, id, r->now);
		break;
	case 8:		/* replaced, in any state */
		CU_ASSERT_EQUAL(sched_entity_remove(s, id, r->now), 0);
		for (unsigned int k = 0; k < NENT; k++)
			if (r->ids[k] == id)
				r->ids[k] = add_in_group(s, "n", (uint32_t)(100 + rnd(3000)),
							 rnd(2), random_group(r), r->now);
		break;
	default:	/* time: ticks, events, balances, throttles, shares */
		run_events_all(s, &r->now, r->now + rnd(30 * MS));
		break;
	}
}

static void run_books(uint64_t seed, unsigned int steps)
{
	struct books_run r = { .now = 0 };
	int bad = 0;

	rng_state = seed;
	r.s = mk_sched(3, 1024, 2, 512, NULL);
	r.gids[0] = sched_group_add(r.s, "g0", SCHED_NONE, 1024, 0, NULL, 0);
	r.gids[1] = sched_group_add(r.s, "g1", r.gids[0], 512, 0, NULL, 0);
	r.gids[2] = sched_group_add(r.s, "g2", r.gids[1], 2048, 0, NULL, 0);
	r.gids[3] = sched_group_add(r.s, "g3", SCHED_NONE, 300, 0, NULL, 0);
	CU_ASSERT_EQUAL(sched_group_set_cap(r.s, r.gids[0], 12 * MS, 10 * MS, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_group_set_cap(r.s, r.gids[2], 4 * MS, 20 * MS, 0, NULL, 0), 0);
	for (unsigned int k = 0; k < NENT; k++)
		r.ids[k] = add_in_group(r.s, "e", (uint32_t)(100 + rnd(3000)), rnd(4) != 0,
					random_group(&r), 0);
	for (unsigned int step = 0; step < steps && !bad; step++) {
		random_op(&r);
		r.now += rnd(300 * US);
		bad = check_books(r.s, r.now);
		if (bad)
			fprintf(stderr, "seed %llu step %u: bookkeeping %d broken\n",
				(unsigned long long)seed, step, bad);
	}
	CU_ASSERT_EQUAL(bad, 0);
	sched_destroy(r.s);
}

static void test_books_random(void)
{
	for (uint64_t seed = 1; seed <= 40; seed++)
		run_books(seed * 0x9e3779b97f4a7c15ull, 1500);
}

UNIT_SUITE(sched_books, NULL, NULL,
	   UNIT_TEST(test_books_capped_order),
	   UNIT_TEST(test_books_random));
