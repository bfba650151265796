// SPDX-License-Identifier: MIT
/*
 * The lag moves of the fluid-ideal balance (fairlag.c, step 3): each
 * pCPU's tracked entities are summed so that the lag every entity would
 * have LAG_HORIZON_NS ahead can be predicted at the rate a placement
 * gives it, and the entities furthest from their ideal (beyond
 * LAG_MOVE_NS) may each move once: alone, or in exchange for the entity
 * furthest ahead or behind on another pCPU, whichever lowers most the
 * sum of squared predicted lags on the two pCPUs.
 *
 * Cost: O(n) to sum and to pick the worst lags, then O(LAG_ATTEMPTS x m x
 * SWAP_TRIES) predictions per balance for m pCPUs; nothing on the
 * per-decision paths.
 */
#include "sched/internal.h"

#define LAG_MOVE_NS	FAIR_LAG_MOVE_NS	/* lag (work) worth a move */
#define LAG_GAIN_MIN_NS	(1 * NSEC_PER_MSEC)	/* smallest improvement worth a move */
#define LAG_HORIZON_NS	(200 * NSEC_PER_MSEC)	/* how far ahead lags are predicted */
#define LAG_ATTEMPTS	16			/* entities tried per balance: bounds its cost */
#define SWAP_TRIES	8			/* exchange partners tried per pCPU */
#define LOCAL_CAP_PASSES 4			/* passes marking caps that bind locally */

/*
 * An entity whose own cap binds in the ideal progresses at its cap
 * wherever it has room (its run weight asks for that rate, fair_capped.c,
 * and its quota stops it there); the others share what those leave by
 * weight. Predicted by weight alone, an entity beside throttled ones
 * looked starved while it collected their holes (seed 1 #72 of the caps
 * corpus: a light one beside an entity capped at 0.865 of a pCPU got 13%
 * of it for an ideal of 0.6%, and no move was predicted to help).
 *
 * So does a member held at its share of a binding group cap (its tokens
 * stop it there, its run weight asks for at least that): predicted by
 * weight, the light members of light groups beside throttled members
 * collected the holes those left, with no move predicted to help (seed 4
 * #149 of the groups corpus: v8, weight 23 in a group of 16, 117 ms for
 * an ideal of 39 ms, most of it right after entities beside it were
 * throttled; 55 ms with this).
 *
 * So does an entity whose own cap does not bind in the ideal but binds
 * where it is (binds_beside(): marked lag_local_cap at each balance, or
 * tried where a move would take it), outside groups. Its cap holds it
 * there, in every period, and the entities beside it share the rest.
 */
static bool binds_beside(const struct sched *s, const struct sched_rq *rq,
			 const struct sched_entity *se, const struct sched_entity *skip);

/* Is se held on rq, with `skip` (one of rq's, or NULL) gone from there? */
static bool held_beside(const struct sched *s, const struct sched_rq *rq,
			const struct sched_entity *se, const struct sched_entity *skip)
{
	if (fair_cap_holds(s, se) || group_share_holds(s, se))
		return true;
	if (!se->cap_period || !se->lag_tracked || s->nr_groups)
		return false;
	return se->cpu == (int)rq->cpu ? se->lag_local_cap : binds_beside(s, rq, se, skip);
}

static bool is_held(const struct sched *s, const struct sched_rq *rq,
		    const struct sched_entity *se)
{
	return held_beside(s, rq, se, NULL);
}

/* The rate a held entity progresses at on a pCPU of `capacity`. */
static uint64_t held_at(const struct sched *s, const struct sched_entity *se, unsigned int capacity)
{
	if (group_share_holds(s, se) && !fair_cap_holds(s, se))
		return quota_rate_at(se->grp_share.quota, se->grp_share.period, capacity);
	return cap_rate_at(se, capacity);
}

static uint64_t held_rate(const struct sched *s, const struct sched_rq *rq,
			  const struct sched_entity *se)
{
	return se && is_held(s, rq, se) ? held_at(s, se, rq->capacity) : 0;
}

/* The weight se adds to the entities of rq that share by weight. */
static int64_t free_weight(const struct sched *s, const struct sched_rq *rq,
			   const struct sched_entity *se)
{
	return se && !is_held(s, rq, se) ? (int64_t)se->weight : 0;
}

/* What rq's capped entities leave to the others, with `held` more held there. */
static uint64_t free_cap(const struct sched_rq *rq, int64_t held)
{
	int64_t h = (int64_t)rq->lag_held + held;

	return h >= (int64_t)rq->lag_cap ? 0 : h <= 0 ? rq->lag_cap : rq->lag_cap - (uint64_t)h;
}

/*
 * Would se's own cap, which does not bind in the ideal, bind on rq: is
 * its weight's share of what the held entities leave there more than its
 * cap? Then it runs at its cap there, throttled in every period, and the
 * entities beside it collect the rest: a light entity alone beside an
 * entity capped at 0.95 of a pCPU gets 0.05, whatever its weight (seed 3
 * #24 of the caps corpus: v16, weight 57, beside v5 of 20892 capped at
 * 6.65 ms every 7, 0.0076 of a pCPU for an ideal of 0.0024, its 0.35 ms
 * holes; predicted by weight, it looked starved and stayed). Outside
 * groups, whose run weights are set from the ideal (group_ideal.c): a
 * first version with them gained no scenario of the groups corpus.
 */
static bool binds_beside(const struct sched *s, const struct sched_rq *rq,
			 const struct sched_entity *se, const struct sched_entity *skip)
{
	uint64_t w = rq->lag_free_weight + (se->cpu == (int)rq->cpu ? 0 : se->weight);

	w -= (uint64_t)free_weight(s, rq, skip);
	/* free_cap() < 2^21 and weights < 2^21: no overflow */
	return w && free_cap(rq, -(int64_t)held_rate(s, rq, skip)) * se->weight / w >
		    cap_rate_at(se, rq->capacity);
}

/*
 * The candidate of rq among those not held: the capped entity whose cap
 * would bind there first as others go or come (the largest weight /
 * cap: a share of the capacity C left to W by weight is above the cap
 * where weight / cap > W / C). A move changes which caps bind on the two
 * pCPUs, and the options are predicted with the candidate held where its
 * cap then binds (rq_cost()): an exchange that left a light entity alone
 * beside an entity capped at 0.95, whose cap did not bind beside the
 * heavy one that left, looked harmless.
 */
static bool local_candidate(const struct sched *s, const struct sched_rq *rq,
			    const struct sched_entity *se)
{
	return se->cap_period && se->lag_tracked && !s->nr_groups && !is_held(s, rq, se);
}

/* Is a's weight / cap above b's (caps at one capacity)? */
static bool tighter(const struct sched_entity *a, const struct sched_entity *b)
{
	/* weights < 2^21, quotas and periods < 2^30 ns: within 128 bits */
	return (unsigned __int128)a->weight * a->cap_period * b->cap_quota >
	       (unsigned __int128)b->weight * b->cap_period * a->cap_quota;
}

/* rq's candidate among the entities queued or throttled there. O(those). */
static void local_scan(struct sched *s, struct sched_rq *rq)
{
	struct sched_entity *best = NULL;

	for (struct slist *p = rq->queued.next; p != &rq->queued; p = p->next) {
		struct sched_entity *se = slist_entry(p, struct sched_entity, rq_link);

		if (local_candidate(s, rq, se) && (!best || tighter(se, best)))
			best = se;
	}
	for (struct slist *p = rq->cap_throttled.next; p != &rq->cap_throttled; p = p->next) {
		struct sched_entity *se = slist_entry(p, struct sched_entity, cap_link);

		if (local_candidate(s, rq, se) && (!best || tighter(se, best)))
			best = se;
	}
	s->lag_local[rq->cpu] = best;
}

/*
 * Rate (RATE_SHIFT) at which se progresses on rq with `extra` weight added
 * there: its cap's where one holds it (a share of the capacity where the
 * caps there add up to more), else its weight's share of the capacity
 * the sleepers and those held left over the last interval.
 */
static uint64_t rate_on(const struct sched *s, const struct sched_rq *rq,
			const struct sched_entity *se, int64_t extra)
{
	uint64_t w = (uint64_t)((int64_t)rq->lag_free_weight + extra), prod, cap;

	if (is_held(s, rq, se)) {
		uint64_t r = held_at(s, se, rq->capacity);
		uint64_t total = rq->lag_held + (se->cpu == (int)rq->cpu ? 0 : r);

		return total > rq->lag_cap ? (uint64_t)((unsigned __int128)r * rq->lag_cap / total) : r;
	}
	if (!w)
		return 0;
	cap = free_cap(rq, 0);
	/* lag_cap < 2^21 and weights < 2^17: a 64-bit division, not __udivti3 */
	if (!__builtin_mul_overflow(cap, (uint64_t)se->weight, &prod))
		return prod / w;
	return (uint64_t)((unsigned __int128)cap * se->weight / w);
}

/* Lag (work ns) of se predicted `h` ns ahead at progress rate `r`. */
static int64_t predict(const struct sched_entity *se, uint64_t r, uint64_t h)
{
	return se->lag + (int64_t)((se->lag_rate * h) >> RATE_SHIFT) -
	       (int64_t)((r * h) >> RATE_SHIFT);
}

/*
 * The potential the moves lower: the sum of squared lags predicted
 * LAG_HORIZON_NS ahead. On a pCPU whose entities that share by weight
 * weigh W and have capacity C left, such an entity e's is a_e - C b_e / W
 * (a: its lag plus its ideal work to come, b: its weight over the
 * horizon), so each runqueue keeps the sums of a^2, a b and b^2 and any
 * change of W or C costs O(1) to evaluate; a held entity's is a_e - its
 * cap's work over the horizon, whatever W.
 */
static double term_a(const struct sched_entity *se)
{
	return (double)se->lag + (double)((se->lag_rate * LAG_HORIZON_NS) >> RATE_SHIFT);
}

static double term_b(const struct sched_entity *se)
{
	return (double)se->weight * (LAG_HORIZON_NS / (double)(1 << RATE_SHIFT));
}

/* A held entity's cap over the horizon on rq (its r). */
static double held_b(const struct sched *s, const struct sched_rq *rq,
		     const struct sched_entity *se)
{
	return (double)held_at(s, se, rq->capacity) * (LAG_HORIZON_NS / (double)(1 << RATE_SHIFT));
}

/* The potential's sums: a^2 of all, a b and b^2 of those by weight, a r and r^2 of the held. */
enum { POT_AA, POT_AB, POT_BB, POT_AR, POT_RR, POT_N };

/* Add se's terms on rq (held there or not: h), times sign, to the sums v[POT_N]. */
static void pot_add(const struct sched *s, const struct sched_rq *rq,
		    const struct sched_entity *se, bool h, double sign, double *v)
{
	double a = term_a(se), b = h ? held_b(s, rq, se) : term_b(se);

	v[POT_AA] += sign * a * a;
	v[h ? POT_AR : POT_AB] += sign * a * b;
	v[h ? POT_RR : POT_BB] += sign * b * b;
}

/* se's terms and weights on rq, held there or not (h), times sign (+1 or -1). */
static void sums_update(const struct sched *s, struct sched_rq *rq, const struct sched_entity *se,
			bool h, int sign)
{
	pot_add(s, rq, se, h, sign, rq->lag_pot);
	rq->lag_weight += (uint64_t)(sign * (int64_t)se->weight);
	if (h)
		rq->lag_held += (uint32_t)(sign * (int64_t)held_at(s, se, rq->capacity));
	else
		rq->lag_free_weight += (uint64_t)(sign * (int64_t)se->weight);
}

/*
 * The potential of rq without `skip`, with `add`. The held entities get
 * their caps while those fit the capacity, each the same fraction k of
 * its cap beyond, the others what is left (c). In double precision: it
 * only ranks moves, the sums are rebuilt at every balance, and IEEE
 * arithmetic (no libm) gives the same ranks everywhere.
 */
static double rq_cost(const struct sched *s, struct sched_rq *rq, const struct sched_entity *skip,
		      const struct sched_entity *add)
{
	bool hs = skip && is_held(s, rq, skip), ha = add && held_beside(s, rq, add, skip);
	int64_t w = (int64_t)rq->lag_free_weight - (skip && !hs ? (int64_t)skip->weight : 0) +
		    (add && !ha ? (int64_t)add->weight : 0);
	int64_t held = (ha ? (int64_t)held_at(s, add, rq->capacity) : 0) -
		       (hs ? (int64_t)held_at(s, skip, rq->capacity) : 0);
	const struct sched_entity *cand = s->lag_local[rq->cpu];
	double c = (double)free_cap(rq, held), k = 1, v[POT_N], cost;
	uint64_t cr;

	memcpy(v, rq->lag_pot, sizeof(v));
	if (skip)
		pot_add(s, rq, skip, hs, -1, v);
	if (add)
		pot_add(s, rq, add, ha, 1, v);
	/* the candidate held where its cap binds once skip and add moved (< 2^63) */
	if (cand && cand != skip && cand != add && w > 0 &&
	    free_cap(rq, held) * cand->weight >
	    (cr = cap_rate_at(cand, rq->capacity)) * (uint64_t)w) {
		w -= cand->weight;
		held += (int64_t)cr;
		c = (double)free_cap(rq, held);
		pot_add(s, rq, cand, false, -1, v);
		pot_add(s, rq, cand, true, 1, v);
	}
	held += (int64_t)rq->lag_held;
	if (held > (int64_t)rq->lag_cap)
		k = (double)rq->lag_cap / (double)held;
	cost = v[POT_AA] - 2 * k * v[POT_AR] + k * k * v[POT_RR];
	if (w > 0)
		cost += -2 * c * v[POT_AB] / (double)w + c * c * v[POT_BB] / ((double)w * (double)w);
	return cost;
}

/* The tracked entity of rq but `skip` with the lowest (ahead) or highest predicted lag. */
static struct sched_entity *extreme(const struct sched *s, struct sched_rq *rq, bool ahead,
				    const struct sched_entity *skip)
{
	struct sched_entity *best = NULL;
	int64_t bl = 0;

	for (struct slist *p = rq->queued.next; p != &rq->queued; p = p->next) {
		struct sched_entity *se = slist_entry(p, struct sched_entity, rq_link);
		int64_t l;

		if (se == skip || dl_entity(se) || !se->lag_tracked)
			continue;
		l = predict(se, rate_on(s, rq, se, 0), LAG_HORIZON_NS);
		if (!best || (ahead ? l < bl : l > bl)) {
			best = se;
			bl = l;
		}
	}
	return best;
}

static void lag_move(struct sched *s, struct sched_entity *se, unsigned int to, uint64_t now)
{
	struct sched_rq *src = &s->rq[se->cpu], *dst = &s->rq[to];
	bool on_src = is_held(s, src, se), on_dst = is_held(s, dst, se);

	sums_update(s, src, se, on_src, -1);
	sums_update(s, dst, se, on_dst, 1);
	se->lag_local_cap = on_dst && !fair_cap_holds(s, se) && !group_share_holds(s, se);
	s->rq[se->cpu].nr_lb_migrations++;
	se->lag_moving = true;
	migrate_entity(s, se, to, SCHED_MIGRATE_BALANCE, now);
	se->lag_moving = false;
	if (s->lag_local[src->cpu] == se)
		local_scan(s, src);
	if (local_candidate(s, dst, se) && (!s->lag_local[to] || tighter(se, s->lag_local[to])))
		s->lag_local[to] = se;
}

/* One candidate correction: a moves to a_to, and b (if any) to b_to. */
struct lag_plan {
	struct sched_entity *a, *b;
	unsigned int a_to, b_to;
	double gain;
};

static void consider_plan(struct lag_plan *best, double gain, struct sched_entity *a,
			  unsigned int a_to, struct sched_entity *b, unsigned int b_to)
{
	if (gain <= best->gain)
		return;
	best->gain = gain;
	best->a = a;
	best->a_to = a_to;
	best->b = b;
	best->b_to = b_to;
}

/*
 * Can x on dst progress faster (when behind) or slower (when ahead) than
 * now_rate, its rate where it is? The bounds: all of dst's capacity, or
 * its share with x added to everything there. Saves evaluating moves that
 * cannot help x.
 */
static bool may_help(const struct sched *s, const struct sched_rq *dst,
		     const struct sched_entity *x, uint64_t now_rate)
{
	if (x->lag > 0)
		return dst->lag_cap > now_rate;
	return rate_on(s, dst, x, free_weight(s, dst, x)) < now_rate;
}

/*
 * Is x, alone on its pCPU, ahead of its ideal by a move's worth although
 * the payback holds it back all it can (its run weight at the
 * FAIR_PAYBACK_CLAMP-th of its own), while more than one entity is
 * runnable on dst? Alone, nothing it is held back for is there, and it
 * runs further ahead for good; moved beside those on dst it is held back
 * there, and its pCPU, idle, takes the next wakeup or newidle pull (seed
 * 5 #46 of the fair corpus: a light busy entity of weight 20 alone on a
 * pCPU of 202 at 1.8 times its ideal, while three sleepers crowded on the
 * other 202 pCPU and a heavier busy one was 15% short).
 */
static bool held_in_vain(const struct sched *s, const struct sched_rq *dst,
			 const struct sched_entity *x)
{
	return x->lag < -(int64_t)LAG_MOVE_NS && dst->nr_running > 1 &&
	       (uint64_t)x->weight * FAIR_PAYBACK_CLAMP <= fair_solver_weight(s, x);
}

/* The options on one destination pCPU for x (on src), into *best. */
static void plans_on(const struct sched *s, struct sched_rq *src, struct sched_rq *dst,
		     struct sched_entity *x, uint64_t now_rate, struct sched_entity *push,
		     double base, struct lag_plan *best)
{
	double before = base + rq_cost(s, dst, NULL, NULL);
	unsigned int tries = 0;

	/*
	 * A pCPU whose entity's share is all of it takes no one more: what
	 * another ran there would be lost to that one for good (newidle
	 * would then pull the newcomer onto the next idle pCPU, and the two
	 * chase each other). Exchanges with it are fine.
	 */
	bool room = !dst->lag_full;

	/* x alone, only when src keeps work (an idle pCPU helps no lag) or x is held back in vain */
	if (room && (src->nr_running > 1 || held_in_vain(s, dst, x)) && may_help(s, dst, x, now_rate))
		consider_plan(best, before - rq_cost(s, src, x, NULL) - rq_cost(s, dst, NULL, x),
			      x, dst->cpu, NULL, 0);
	/* the one furthest ahead on src makes room for x */
	if (room && push && sched_cpumask_test(&push->allowed, dst->cpu))
		consider_plan(best, before - rq_cost(s, src, push, NULL) -
			      rq_cost(s, dst, NULL, push), push, dst->cpu, NULL, 0);
	if (!may_help(s, dst, x, now_rate))
		return;
	/* x in exchange for one of the first SWAP_TRIES entities there */
	for (struct slist *p = dst->queued.next; p != &dst->queued && tries < SWAP_TRIES;
	     p = p->next) {
		struct sched_entity *y = slist_entry(p, struct sched_entity, rq_link);

		if (dl_entity(y) || !y->lag_tracked || !sched_cpumask_test(&y->allowed, src->cpu))
			continue;
		tries++;
		consider_plan(best, before - rq_cost(s, src, x, y) - rq_cost(s, dst, y, x),
			      y, src->cpu, x, dst->cpu);
	}
}

/*
 * Correct x's lag: move it, move the entity furthest ahead beside it, or
 * exchange it with the entity furthest ahead or behind on another pCPU,
 * whichever lowers the potential of the two pCPUs most, if by enough to be
 * worth a move (a sixteenth of it, and at least LAG_GAIN_MIN_NS squared).
 */
static bool improve(struct sched *s, struct sched_entity *x, uint64_t now)
{
	struct sched_rq *src = &s->rq[x->cpu];
	struct sched_entity *push = extreme(s, src, true, x);
	double base = rq_cost(s, src, NULL, NULL);
	uint64_t now_rate = rate_on(s, src, x, 0);
	struct lag_plan best = { NULL, NULL, 0, 0, 0 };

	best.gain = (double)LAG_GAIN_MIN_NS * LAG_GAIN_MIN_NS;
	if (base / 16 > best.gain)
		best.gain = base / 16;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (cpu != src->cpu && sched_cpumask_test(&x->allowed, cpu))
			plans_on(s, src, &s->rq[cpu], x, now_rate, push, base, &best);
	if (!best.a)
		return false;
	/*
	 * Neither pCPU ends up idle, but one may be for a moment in between:
	 * a newidle pull then would take a third entity along.
	 */
	s->lag_in_move = true;
	lag_move(s, best.a, best.a_to, now);
	if (best.b)
		lag_move(s, best.b, best.b_to, now);
	s->lag_in_move = false;
	return true;
}

/* x before y among the candidates: larger |lag| first, then lower id. */
static bool lag_worse(const struct lag_ent *x, const struct lag_ent *y)
{
	return x->pred != y->pred ? x->pred > y->pred : x->se->id < y->se->id;
}

/*
 * The (at most) LAG_ATTEMPTS worst lags among the tracked entities beyond
 * LAG_MOVE_NS, worst first, into top[]; returns how many. Only these are
 * tried, so they are kept by insertion into a short sorted list rather
 * than sorting every candidate: O(n) for n tracked entities, where the
 * sort was a tenth of a balance's cost at 256 entities.
 */
static unsigned int worst_lags(struct sched *s, unsigned int n, struct lag_ent *top)
{
	unsigned int nr = 0;

	for (unsigned int k = 0; k < n; k++) {
		struct lag_ent *e = &s->lag_ents[k];
		int64_t lag = e->se->lag;
		unsigned int j;

		e->pred = (uint64_t)(lag < 0 ? -lag : lag);
		if (e->pred < LAG_MOVE_NS || (nr == LAG_ATTEMPTS && !lag_worse(e, &top[nr - 1])))
			continue;
		j = nr < LAG_ATTEMPTS ? nr++ : nr - 1;
		for (; j && lag_worse(e, &top[j - 1]); j--)
			top[j] = top[j - 1];
		top[j] = *e;
	}
	return nr;
}

/*
 * Mark the tracked entities whose own caps bind on their pCPUs though not
 * in the ideal (binds_beside()), held at their caps there from now on:
 * each one marked leaves more to the others there, so the marking goes
 * on until none is added, at most LOCAL_CAP_PASSES times (as cap_fill()'s
 * passes). O(LOCAL_CAP_PASSES x n).
 */
static void local_caps(struct sched *s, unsigned int n)
{
	if (s->nr_groups)
		return;		/* see held_beside() */
	for (unsigned int pass = 0; pass < LOCAL_CAP_PASSES; pass++) {
		bool more = false;

		for (unsigned int k = 0; k < n; k++) {
			struct sched_entity *se = s->lag_ents[k].se;
			struct sched_rq *rq = &s->rq[se->cpu];

			if (!se->lag_tracked || !se->cap_period || se->lag_local_cap ||
			    is_held(s, rq, se) || !binds_beside(s, rq, se, NULL))
				continue;
			sums_update(s, rq, se, false, -1);
			se->lag_local_cap = true;
			sums_update(s, rq, se, true, 1);
			more = true;
		}
		if (!more)
			break;
	}
}

/*
 * Each pCPU's sums of its tracked entities, for the predictions above.
 * The marking of the caps that bind where they are and each pCPU's
 * candidate (local_caps(), local_scan()) only where tracked entities with
 * caps are: without them the balance walked every entity twice more and
 * every runqueue's lists for nothing (the tick without groups: 556-583 ->
 * 671 ns per pCPU on 4 pCPUs, 1024 entities, none capped).
 */
void fair_lag_sums(struct sched *s, unsigned int n)
{
	struct sched_cpumask capped;	/* pCPUs with a tracked entity with a cap */

	sched_cpumask_clear(&capped);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		s->rq[cpu].lag_weight = s->rq[cpu].lag_free_weight = s->rq[cpu].lag_held = 0;
		memset(s->rq[cpu].lag_pot, 0, sizeof(s->rq[cpu].lag_pot));
		s->lag_local[cpu] = NULL;
	}
	for (unsigned int k = 0; k < n; k++) {
		struct sched_entity *se = s->lag_ents[k].se;
		struct sched_rq *rq = &s->rq[se->cpu];

		se->lag_local_cap = false;	/* is_held() reads only se's own */
		if (!se->lag_tracked)
			continue;
		sums_update(s, rq, se, is_held(s, rq, se), 1);
		if (se->cap_period)
			sched_cpumask_set(&capped, rq->cpu);
	}
	if (sched_cpumask_empty(&capped))
		return;
	local_caps(s, n);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(&capped, cpu))
			local_scan(s, &s->rq[cpu]);
}

/* The LAG_ATTEMPTS worst lags first, at most one move each and one per pCPU. */
void fair_lag_moves(struct sched *s, unsigned int n, uint64_t now)
{
	struct lag_ent top[LAG_ATTEMPTS];
	unsigned int nc = worst_lags(s, n, top);

	for (unsigned int k = 0, moves = 0; k < nc && moves < s->nr_cpus; k++) {
		struct sched_entity *se = top[k].se;

		if (se->lag_tracked && se->lag_moved != s->lag_round && improve(s, se, now)) {
			moves++;
			se->lag_moved = s->lag_round;	/* once per balance: no ping-pong */
		}
	}
}
