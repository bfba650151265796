// SPDX-License-Identifier: MIT
/*
 * Randomized engine test: long random sequences of every API call, valid
 * and invalid, with the engine's invariants checked after each one.
 */
#include "tests/unit/test_sched_util.h"

static uint64_t rng_state;
static unsigned int last_op;	/* reported when an invariant breaks */

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? rng_state % n : 0;
}

static unsigned int tree_count(const struct tnode *n)
{
	return n ? 1 + tree_count(n->l) + tree_count(n->r) : 0;
}

/* Augmentation and order of every subtree (returns the subtree min aux). */
static uint64_t tree_check(const struct tnode *n, bool *ok)
{
	uint64_t m;

	if (!n)
		return UINT64_MAX;
	m = n->aux;
	if (n->l) {
		uint64_t lm = tree_check(n->l, ok);

		*ok &= !time_before64(n->key, n->l->key);
		if (time_before64(lm, m))
			m = lm;
	}
	if (n->r) {
		uint64_t rm = tree_check(n->r, ok);

		*ok &= !time_before64(n->r->key, n->key);
		if (time_before64(rm, m))
			m = rm;
	}
	*ok &= n->min_aux == m;
	return m;
}

static int check_rq(struct sched *s, struct sched_rq *rq)
{
	unsigned int queued = 0, fair = 0, dl = 0, bucketed = 0;
	uint64_t weight = 0, dlbw = 0;
	struct slist *pos;
	bool ok = true;
	struct sched_entity *c = rq->curr;

	for (pos = rq->queued.next; pos != &rq->queued; pos = pos->next) {
		struct sched_entity *se = slist_entry(pos, struct sched_entity, rq_link);

		queued++;
		if (se->cpu != (int)rq->cpu || !se->on_rq ||
		    !sched_cpumask_test(&se->allowed, rq->cpu))
			return 1;
		if (dl_entity(se)) {
			dl++;
		} else {
			fair++;
			weight += se->weight;
		}
		bucketed += se->uc_active;
		if ((se->state == SCHED_RUNNING) != (se == c)) {
			fprintf(stderr, "  entity %d state %d, curr %d\n", se->id, se->state,
				c ? c->id : -1);
			return 2;
		}
	}
	for (pos = rq->dl_assigned.next; pos != &rq->dl_assigned; pos = pos->next)
		dlbw += slist_entry(pos, struct sched_entity, dl_link)->dl_bw;
	if (queued != rq->nr_running || fair != rq->nr_fair || dl != rq->nr_dl)
		return 3;
	if (weight != rq->fair_weight || dlbw != rq->dl_bw || bucketed != rq->bucket_tasks)
		return 4;
	if ((rq->cfs.big ? tree_count(rq->cfs.tree.root) != rq->cfs.nr :
			   rq->cfs.tree.root != NULL || rq->cfs.nr > FQ_SMALL) ||
	    rq->cfs.nr != fair - (c && c->on_rq && !dl_entity(c)))
		return 5;
	for (unsigned int i = 1; !rq->cfs.big && i < rq->cfs.nr; i++)
		if (!time_before64(fq_at(&rq->cfs, i - 1)->key, fq_at(&rq->cfs, i)->key) &&
		    (fq_at(&rq->cfs, i - 1)->key != fq_at(&rq->cfs, i)->key ||
		     fq_at(&rq->cfs, i - 1)->id > fq_at(&rq->cfs, i)->id))
			return 5;
	if (tree_count(rq->dl.root) != rq->dl.nr || rq->dl.nr != dl - (c && c->on_rq && dl_entity(c)))
		return 6;
	tree_check(rq->cfs.tree.root, &ok);
	tree_check(rq->dl.root, &ok);
	if (!ok)
		return 7;
	if (rq->nr_running && !c)
		return 8;	/* work queued but the pCPU idles */
	if (c && !c->on_rq)
		return 9;
	if (sched_cpumask_test(&s->idle_mask, rq->cpu) != !c)
		return 10;
	return 0;
}

static int check_engine(struct sched *s)
{
	uint64_t bw = 0;
	unsigned int over = 0;
	int r;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		r = check_rq(s, &s->rq[cpu]);
		if (r)
			return (int)cpu * 100 + r;
		over += s->rq[cpu].nr_running >= 2;
	}
	for (unsigned int i = 0; i < s->nr_ent_slots; i++) {
		struct sched_entity *se = s->ent[i];

		if (!se)
			continue;
		if (dl_entity(se))
			bw += se->dl_bw;
		if (se->on_rq != (se->state == SCHED_RUNNABLE || se->state == SCHED_RUNNING))
			return 10000 + (int)i;
		if (se->state == SCHED_THROTTLED && !se->dl_throttled)
			return 20000 + (int)i;
	}
	if (bw != s->dl_total_bw)
		return 30000;
	if (over != s->nr_overloaded)
		return 40000;
	return 0;
}

static void random_mask(struct sched *s, struct sched_cpumask *m)
{
	sched_cpumask_clear(m);
	switch (rnd(4)) {
	case 0:
		break;	/* all */
	case 1:
		sched_cluster_mask(s, (unsigned int)rnd(2), m);
		break;
	case 2:
		sched_cpumask_set(m, (unsigned int)rnd(s->nr_cpus + 2));	/* may be invalid */
		break;
	default:
		for (unsigned int c = 0; c < s->nr_cpus; c++)
			if (rnd(2))
				sched_cpumask_set(m, c);
	}
}

static void random_op(struct sched *s, int *ids, unsigned int n, uint64_t *now)
{
	int id = ids[rnd(n)], other = ids[rnd(n)];
	struct sched_dl_params dl;
	struct sched_cpumask m;
	char err[256];

	*now += rnd(700 * US);
	last_op = (unsigned int)rnd(14);
	switch (last_op) {
	case 0: case 1: case 2:
		sched_wakeup(s, id, *now);
		break;
	case 3: case 4:
		sched_block(s, id, *now);
		break;
	case 5:
		sched_entity_yield(s, id, *now);
		break;
	case 6:
		sched_yield_to(s, id, other, *now);
		break;
	case 7:
		sched_tick(s, *now);
		break;
	case 8:
		sched_set_weight(s, id, (uint32_t)rnd(5000), *now);
		break;
	case 9:
		sched_set_uclamp(s, id, (unsigned int)rnd(1100), (unsigned int)rnd(1100), *now, err,
				 sizeof(err));
		break;
	case 10:
		dl.period_ns = (1 + rnd(20)) * MS;
		dl.deadline_ns = dl.period_ns - rnd(dl.period_ns / 2);
		dl.runtime_ns = rnd(2) ? rnd(dl.deadline_ns) : 0;
		sched_set_reservation(s, id, &dl, *now, err, sizeof(err));
		break;
	case 11:
		random_mask(s, &m);
		sched_set_affinity(s, id, &m, *now, err, sizeof(err));
		break;
	case 12:
		sched_set_perf_request(s, id, (unsigned int)rnd(1100), *now);
		break;
	default:
		sched_tick_cpu(s, (unsigned int)rnd(s->nr_cpus), *now);
		break;
	}
}

static void run_random(uint64_t seed, unsigned int steps)
{
	struct sched *s = mk_sched(2, 1024, 2, 512, NULL);
	uint64_t now = 0;
	int ids[24], bad = 0;

	rng_state = seed;
	for (unsigned int i = 0; i < 24; i++)
		ids[i] = add_ent(s, "r", (uint32_t)(1 + rnd(3000)), rnd(2), 0);
	for (unsigned int step = 0; step < steps && !bad; step++) {
		random_op(s, ids, 24, &now);
		/* Now and then replace an entity: removal in any state. */
		if (rnd(50) == 0) {
			unsigned int k = (unsigned int)rnd(24);

			CU_ASSERT_EQUAL(sched_entity_remove(s, ids[k], now), 0);
			ids[k] = add_ent(s, "n", 1024, rnd(2), now);
		}
		bad = check_engine(s);
		if (bad)
			fprintf(stderr, "seed %llu step %u: invariant %d broken after op %u\n",
				(unsigned long long)seed, step, bad, last_op);
	}
	CU_ASSERT_EQUAL(bad, 0);
	sched_destroy(s);
}

static void test_random_sequences(void)
{
	for (uint64_t seed = 1; seed <= 60; seed++)
		run_random(seed * 0x9e3779b97f4a7c15ull, 3000);
}

/* In-order walk of the fair queue in either mode. */
static unsigned int fq_walk(struct tnode *n, struct tnode **out, unsigned int i)
{
	if (!n)
		return i;
	i = fq_walk(n->l, out, i);
	out[i++] = n;
	return fq_walk(n->r, out, i);
}

static bool ref_before(const struct tnode *a, const struct tnode *b)
{
	return a->key != b->key ? time_before64(a->key, b->key) : a->id < b->id;
}

/*
 * The fair queue keeps (key, id) order through random inserts and erases
 * that cross its array/treap thresholds both ways, with key ties; its first
 * node is the smallest; the treap's augmentation holds in treap mode.
 */
static void test_fair_queue(void)
{
	enum { N = 40 };
	static struct tnode nodes[N];
	struct tnode *ref[N], *got[N];
	struct fair_queue q;
	bool in[N] = { false };
	unsigned int nr = 0, bad = 0, big_seen = 0, back_small = 0;
	bool was_big = false;

	memset(&q, 0, sizeof(q));
	rng_state = 4242;
	for (unsigned int i = 0; i < N; i++)
		tnode_init(&nodes[i], i);
	for (unsigned int step = 0; step < 20000; step++) {
		unsigned int k = (unsigned int)rnd(N), m = 0;
		/* Grow for a while, then shrink, so both thresholds are crossed. */
		bool grow = (step / 500) % 2 == 0;

		if (!in[k] && (grow || !rnd(4))) {
			nodes[k].key = rnd(6) * 1000 - 2000;	/* ties, and "negative" times */
			nodes[k].aux = rnd(100000);
			fq_insert(&q, &nodes[k]);
			in[k] = true;
			nr++;
		} else if (in[k] && (!grow || !rnd(4))) {
			fq_erase(&q, &nodes[k]);
			in[k] = false;
			nr--;
		}
		for (unsigned int i = 0; i < N; i++) {
			unsigned int j = m++;

			if (!in[i]) {
				m--;
				continue;
			}
			while (j > 0 && ref_before(&nodes[i], ref[j - 1])) {
				ref[j] = ref[j - 1];
				j--;
			}
			ref[j] = &nodes[i];
		}
		if (q.big) {
			bool ok = true;

			if (fq_walk(q.tree.root, got, 0) != nr)
				bad++;
			tree_check(q.tree.root, &ok);
			bad += !ok;
		} else {
			for (unsigned int i = 0; i < q.nr && i < N; i++)
				got[i] = fq_at(&q, i);
			bad += q.nr > FQ_SMALL;
		}
		big_seen += q.big;
		back_small += was_big && !q.big;
		was_big = q.big;
		bad += q.nr != nr || (nr && fq_first(&q) != ref[0]) || (!nr && fq_first(&q));
		for (unsigned int i = 0; i < nr && i < q.nr; i++)
			bad += got[i] != ref[i];
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(big_seen > 0);
	CU_ASSERT(back_small > 0);
}

UNIT_SUITE(sched_random, NULL, NULL,
	   UNIT_TEST(test_random_sequences),
	   UNIT_TEST(test_fair_queue))
