// SPDX-License-Identifier: MIT
/*
 * The fluid-ideal balance of the fair class: busy entities get their
 * weighted max-min fair share of work on any host (docs/sched.md, "What
 * fair means").
 *
 * Per-pCPU EEVDF shares a pCPU exactly by weight, but no placement of
 * whole entities on pCPUs gives every entity its share in general (three
 * equal entities on two pCPUs; heavy ones on slow pCPUs while light ones
 * have fast ones to themselves). So at every periodic balance:
 *
 * 1. the ideal rate of every entity runnable since the last balance
 *    and not woken for a few balances is solved by water-filling over
 *    the pCPUs it may use, beside the others, the sleepers, capped at
 *    their demand (fair_sleepers.c; with groups, what the sleepers used
 *    is taken off the capacity instead);
 * 2. each such entity's lag (ideal work - work done) is accumulated;
 * 3. the entities with the largest lags (ahead or behind, beyond
 *    LAG_MOVE_NS) may each move once: alone, or in exchange for the entity
 *    furthest ahead or behind on another pCPU, whichever lowers most the
 *    sum of squared lags predicted LAG_HORIZON_NS ahead on the two pCPUs
 *    (at the rates the new placement gives). Entities whose placement is
 *    exact never drift, so nothing moves; smaller lags are left alone
 *    (they bound the error, and a move costs a cache).
 *
 * Cost: O(n log n) per balance for n runnable entities (the sort of the
 * solver), nothing on the per-decision paths.
 */
#include "sched/internal.h"

#define LAG_MOVE_NS	FAIR_LAG_MOVE_NS	/* lag (work) worth a move */
#define LAG_GAIN_MIN_NS	(1 * NSEC_PER_MSEC)	/* smallest improvement worth a move */
#define LAG_HORIZON_NS	(200 * NSEC_PER_MSEC)	/* how far ahead lags are predicted */
#define LAG_ATTEMPTS	16			/* entities tried per balance: bounds its cost */
#define SWAP_TRIES	8			/* exchange partners tried per pCPU */
#define MAX_COMPONENTS	16			/* distinct affinities solved apart */
#define CAP_ROUNDS	4			/* cap_fill() passes: bounds its cost */

size_t fair_lag_scratch_size(void)
{
	return sizeof(struct lag_ent);
}

static uint64_t entity_work(const struct sched_entity *se)
{
	return se->st.work_ns + se->run_work_ns;
}

static int cmp_weight_desc(const void *a, const void *b)
{
	const struct lag_ent *x = a, *y = b;

	if (x->comp != y->comp)
		return x->comp - y->comp;
	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->se->id - y->se->id;
}

static int cmp_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Water-filling on uniform pCPUs: entities e[0..n) by weight, descending;
 * caps[0..m) descending, RATE_SHIFT fixed point. The tightest prefix (the
 * k heaviest on the k fastest pCPUs, smallest capacity per weight) is
 * frozen at its common level, and the rest is solved on the rest.
 */
static void water_fill(struct lag_ent *e, unsigned int n, const uint64_t *caps, unsigned int m)
{
	unsigned int i = 0, j = 0;
	uint64_t cap_rest = 0, w_rest = 0;

	for (unsigned int k = 0; k < m; k++)
		cap_rest += caps[k];
	for (unsigned int k = 0; k < n; k++)
		w_rest += e[k].w;
	while (i < n) {
		unsigned int best = 0;
		uint64_t bc = 0, bw = 1, c = 0, w = 0;

		/* Prefixes of the k heaviest on the k fastest, then all on all that is left. */
		for (unsigned int k = 0; k < n - i && j + k < m; k++) {
			c += caps[j + k];
			w += e[i + k].w;
			/* c / w <= bc / bw, without division; ties to the longer prefix */
			if (!best || (unsigned __int128)c * bw <= (unsigned __int128)bc * w) {
				best = k + 1;
				bc = c;
				bw = w;
			}
		}
		if (n - i > m - j && (unsigned __int128)cap_rest * bw <= (unsigned __int128)bc * w_rest) {
			best = n - i;
			bc = cap_rest;
			bw = w_rest;
		}
		if (!best) {	/* no pCPU left: nothing for the rest */
			for (; i < n; i++)
				e[i].rate = 0;
			break;
		}
		for (unsigned int k = 0; k < best; k++)
			e[i + k].rate = (uint64_t)((unsigned __int128)bc * e[i + k].w / bw);
		i += best;
		j += best;
		cap_rest -= bc > cap_rest ? cap_rest : bc;
		w_rest -= bw;
	}
}

/*
 * A capped entity's cap as a rate: its quota is time, so the work it
 * allows is the fraction of time x the capacity of the pCPU it is on.
 */
uint64_t fair_cap_rate(const struct sched *s, const struct sched_entity *se)
{
	return cap_rate_at(se, se->cpu >= 0 ? s->rq[se->cpu].capacity : SCHED_CAPACITY_SCALE);
}

/* Held ones last, the others by weight as water_fill() wants them. */
static int cmp_capped_weight_desc(const void *a, const void *b)
{
	const struct lag_ent *x = a, *y = b;

	if (x->capped != y->capped)
		return x->capped - y->capped;
	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->se->id - y->se->id;
}

/*
 * Water-filling with caps: an entity whose share is above its cap is held
 * at the cap, what it uses is taken off the slowest pCPUs (where it costs
 * the others least: none of them may use more than one pCPU), and the
 * rest is filled again among the others. Exact when the held rates fit
 * the slowest pCPUs (one pCPU; caps below the others' shares); a few
 * passes at most, each O(n log n).
 */
static void cap_fill(const struct sched *s, struct lag_ent *e, unsigned int n, uint64_t *caps, unsigned int m)
{
	unsigned int free = n;

	for (unsigned int k = 0; k < n; k++)
		e[k].capped = false;
	water_fill(e, n, caps, m);
	for (unsigned int round = 0; round < CAP_ROUNDS; round++) {
		bool held = false;

		for (unsigned int k = 0; k < free; k++) {
			uint64_t c;

			c = e[k].se->cap_period ? fair_cap_rate(s, e[k].se) : UINT64_MAX;
			if (e[k].limit < c)
				c = e[k].limit;	/* a group cap's share (group_solve()) */
			if (c == UINT64_MAX || e[k].rate <= c)
				continue;
			e[k].rate = c;
			e[k].capped = true;
			held = true;
			for (unsigned int q = m; q-- > 0 && c;) {
				uint64_t take = caps[q] < c ? caps[q] : c;

				caps[q] -= take;
				c -= take;
			}
		}
		if (!held)
			return;
		qsort(e, free, sizeof(*e), cmp_capped_weight_desc);
		while (free && e[free - 1].capped)
			free--;
		qsort(caps, m, sizeof(*caps), cmp_u64_desc);
		water_fill(e, free, caps, m);
	}
}

/* Which component (a set of pCPUs) an affinity belongs to; -1 when too many. */
static int component_of(struct sched_cpumask *comp, unsigned int *nr,
			const struct sched_cpumask *allowed)
{
	int hit = -1;

	for (unsigned int c = 0; c < *nr; c++) {
		bool overlap = false;

		for (unsigned int w = 0; w < SCHED_MAX_CPUS / 64; w++)
			overlap |= (comp[c].bits[w] & allowed->bits[w]) != 0;
		if (!overlap)
			continue;
		/* Partly overlapping affinities are solved together (an approximation). */
		sched_cpumask_or(&comp[c], allowed);
		if (hit < 0)
			hit = (int)c;
	}
	if (hit >= 0)
		return hit;
	if (*nr == MAX_COMPONENTS)
		return -1;
	comp[*nr] = *allowed;
	return (int)(*nr)++;
}

/*
 * The entities runnable since the last balance (others, including those
 * that blocked or woke since, are the sleepers: their work since then is
 * taken off the capacity of the pCPU they are on). Returns how many.
 */
static int cmp_id_weight_desc(const void *a, const void *b, void *arg)
{
	const struct sched *s = arg;
	const struct sched_entity *x = s->ent[*(const int *)a], *y = s->ent[*(const int *)b];
	uint64_t wx = fair_solver_weight(s, x), wy = fair_solver_weight(s, y);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	return x->id - y->id;
}

/*
 * Every entity's id by weight, descending (the solver's order), sorted
 * again only after an entity came, went or changed weight.
 */
static void update_order(struct sched *s)
{
	unsigned int n = 0;

	if (!s->lag_order_dirty)
		return;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++)
		if (s->ent[id])
			s->lag_order[n++] = (int)id;
	if (n > 1)
		qsort_r(s->lag_order, n, sizeof(*s->lag_order), cmp_id_weight_desc, s);
	s->nr_lag_order = n;
	s->lag_order_dirty = false;
}

static unsigned int collect(struct sched *s, uint64_t dt, uint64_t *used)
{
	unsigned int n = 0;
	bool caps = fair_any_capped(s);

	memset(used, 0, s->nr_cpus * sizeof(*used));
	update_order(s);
	for (unsigned int k = 0; k < s->nr_lag_order; k++) {
		struct sched_entity *se = s->ent[s->lag_order[k]];
		uint64_t work;
		bool tracked, fresh, recent;

		if (!se || dl_entity(se))
			continue;
		work = entity_work(se);
		tracked = fair_runnable_throughout(se, caps);	/* before fair_sleeper_recent() */
		recent = fair_sleeper_recent(s, se);
		tracked = tracked && !recent;
		fresh = fair_sleeper_use(se, work - se->lag_work, dt);
		if (tracked) {
			s->lag_ents[n].se = se;
			s->lag_ents[n].w = fair_solver_weight(s, se);
			s->lag_ents[n].limit = UINT64_MAX;
			s->lag_ents[n].sleeper = false;
			s->lag_ents[n++].rate = 0;
		} else {
			se->lag = 0;
			/*
			 * A new entity's first interval is not a sleeper's
			 * use (it is in the solve at that use): counted in
			 * lag_cap too, the pCPUs it started on looked full
			 * to the re-pack while its EWMA decayed.
			 */
			if (se->cpu >= 0 && dt && !fresh)
				used[se->cpu] += work - se->lag_work;
			if (fair_sleeper_collect(s, se, &s->lag_ents[n]))
				n++;	/* in the solve, capped at its demand */
		}
		se->lag_prev_work = work;
	}
	return n;
}

/*
 * The capacity the sleepers left on rq, averaged over the last balances
 * (1/8 EWMA): what they use in one interval is noisy, and moving entities
 * by the noise gives more to those moved to pCPUs whose sleepers happened
 * to be busy, as the next interval regresses to the mean.
 */
static uint64_t left_capacity(struct sched_rq *rq, uint64_t now_left)
{
	rq->lag_cap = rq->lag_cap_init ? (7 * rq->lag_cap + now_left) / 8 : now_left;
	rq->lag_cap_init = true;
	return rq->lag_cap;
}

/*
 * The capacity the tracked entities of one component have on each of its
 * pCPUs (RATE_SHIFT), in left[cpu]. Each pCPU's left capacity (lag_cap,
 * what rate_on() predicts with) counts what the sleepers used on it; but
 * where they ran is an accident of their wakeups, not part of the ideal:
 * the ideal treats them as entities capped at their demand, which then take
 * nothing from the entities whose share is a whole pCPU, only from the pool
 * the others share. So their use summed over the component is taken off
 * the slowest pCPUs, which leaves the prefix sums min(P_k, P_m - used):
 * what the oracle's constraints are with sleepers whose rates are below
 * the busy ones'. That is the approximation kept with groups; without,
 * the sleepers are in the solve themselves (fair_sleepers.c), which is
 * also right for a sleeper that uses more than its share, and left[] is
 * the whole capacity.
 */
static void component_left(struct sched *s, const struct sched_cpumask *comp, uint64_t dt,
			   const uint64_t *used, uint64_t *left)
{
	uint64_t sleep = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		uint64_t cap, busy, full;

		if (!sched_cpumask_test(comp, cpu))
			continue;
		cap = fair_capacity(&s->rq[cpu]);
		busy = dt ? used[cpu] * SCHED_CAPACITY_SCALE / dt : 0;
		full = cap << (RATE_SHIFT - 10);
		sleep += full - left_capacity(&s->rq[cpu], (busy < cap ? cap - busy : 0)
						   << (RATE_SHIFT - 10));
		left[cpu] = full;
	}
	if (!s->nr_groups)
		return;		/* the sleepers are in the solve (fair_sleepers.c) */
	while (sleep) {		/* off the slowest pCPU that still has some */
		int slowest = -1;
		uint64_t take;

		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			if (sched_cpumask_test(comp, cpu) && left[cpu] &&
			    (slowest < 0 || left[cpu] <= left[slowest]))
				slowest = (int)cpu;
		if (slowest < 0)
			break;
		take = left[slowest] < sleep ? left[slowest] : sleep;
		left[slowest] -= take;
		sleep -= take;
	}
}

/*
 * With groups, the hierarchical shares first (group_solve()): they become
 * the weights the water-filling below shares each component by, and a
 * binding group cap a limit. Returns whether it did.
 */
static bool solve_groups(struct sched *s, unsigned int n, const uint64_t *left)
{
	if (!s->nr_groups)
		return false;
	if (group_solve(s, s->lag_ents, n, left))
		return true;
	group_update_weights(s, s->now);	/* no scratch: flattened weights at least */
	return false;
}

/* Solve the ideal rate of every collected entity, component by component. */
static void solve(struct sched *s, unsigned int n, uint64_t dt, const uint64_t *used)
{
	struct sched_cpumask comp[MAX_COMPONENTS];
	uint64_t caps[SCHED_MAX_CPUS], left[SCHED_MAX_CPUS];
	unsigned int nr = 0, i = 0;
	bool grouped;

	for (unsigned int k = 0; k < n; k++)
		s->lag_ents[k].comp = component_of(comp, &nr, &s->lag_ents[k].se->allowed);
	for (unsigned int k = 0; k < n; k++)	/* merged components: the first that holds it */
		s->lag_ents[k].comp = component_of(comp, &nr, &s->lag_ents[k].se->allowed);
	memset(left, 0, sizeof(left[0]) * s->nr_cpus);
	for (unsigned int c = 0; c < nr; c++)
		component_left(s, &comp[c], dt, used, left);
	grouped = solve_groups(s, n, left);
	/* collected by weight already: group the components (and sort by the new weights) */
	if ((nr > 1 || grouped) && n > 1)
		qsort(s->lag_ents, n, sizeof(*s->lag_ents), cmp_weight_desc);
	while (i < n && s->lag_ents[i].comp < 0)
		i++;	/* beyond MAX_COMPONENTS affinities: not balanced here */
	while (i < n) {
		int c = s->lag_ents[i].comp;
		unsigned int j = i, m = 0;

		while (j < n && s->lag_ents[j].comp == c)
			j++;
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			if (sched_cpumask_test(&comp[c], cpu))
				caps[m++] = left[cpu];
		qsort(caps, m, sizeof(*caps), cmp_u64_desc);
		cap_fill(s, &s->lag_ents[i], j - i, caps, m);
		i = j;
	}
}

/*
 * An entity whose own cap binds in the ideal progresses at its cap
 * wherever it has room (its run weight asks for that rate, fair_capped.c,
 * and its quota stops it there); the others share what those leave by
 * weight. Predicted by weight alone, an entity beside throttled ones
 * looked starved while it collected their holes (seed 1 #72 of the caps
 * corpus: a light one beside an entity capped at 0.865 of a pCPU got 13%
 * of it for an ideal of 0.6%, and no move was predicted to help).
 */
static uint64_t held_rate(const struct sched *s, const struct sched_rq *rq,
			  const struct sched_entity *se)
{
	return se && fair_cap_holds(s, se) ? cap_rate_at(se, rq->capacity) : 0;
}

/* The weight se adds to the entities of rq that share by weight. */
static int64_t free_weight(const struct sched *s, const struct sched_entity *se)
{
	return se && !fair_cap_holds(s, se) ? (int64_t)se->weight : 0;
}

/* What rq's capped entities leave to the others, with `held` more held there. */
static uint64_t free_cap(const struct sched_rq *rq, int64_t held)
{
	int64_t h = (int64_t)rq->lag_held + held;

	return h >= (int64_t)rq->lag_cap ? 0 : h <= 0 ? rq->lag_cap : rq->lag_cap - (uint64_t)h;
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

	if (fair_cap_holds(s, se)) {
		uint64_t r = cap_rate_at(se, rq->capacity);
		uint64_t held = rq->lag_held + (se->cpu == (int)rq->cpu ? 0 : r);

		return held > rq->lag_cap ? (uint64_t)((unsigned __int128)r * rq->lag_cap / held) : r;
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
static double held_b(const struct sched_rq *rq, const struct sched_entity *se)
{
	return (double)cap_rate_at(se, rq->capacity) * (LAG_HORIZON_NS / (double)(1 << RATE_SHIFT));
}

/* The potential's sums: a^2 of all, a b and b^2 of those by weight, a r and r^2 of the held. */
enum { POT_AA, POT_AB, POT_BB, POT_AR, POT_RR, POT_N };

/* Add se's terms on rq, times sign, to the sums v[POT_N]. */
static void pot_add(const struct sched *s, const struct sched_rq *rq,
		    const struct sched_entity *se, double sign, double *v)
{
	bool held = fair_cap_holds(s, se);
	double a = term_a(se), b = held ? held_b(rq, se) : term_b(se);

	v[POT_AA] += sign * a * a;
	v[held ? POT_AR : POT_AB] += sign * a * b;
	v[held ? POT_RR : POT_BB] += sign * b * b;
}

static void sums_update(const struct sched *s, struct sched_rq *rq, const struct sched_entity *se,
			double sign)
{
	pot_add(s, rq, se, sign, rq->lag_pot);
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
	int64_t w = (int64_t)rq->lag_free_weight - free_weight(s, skip) + free_weight(s, add);
	int64_t held = (int64_t)held_rate(s, rq, add) - (int64_t)held_rate(s, rq, skip);
	double c = (double)free_cap(rq, held), k = 1, v[POT_N], cost;

	held += (int64_t)rq->lag_held;
	if (held > (int64_t)rq->lag_cap)
		k = (double)rq->lag_cap / (double)held;
	memcpy(v, rq->lag_pot, sizeof(v));
	if (skip)
		pot_add(s, rq, skip, -1, v);
	if (add)
		pot_add(s, rq, add, 1, v);
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

	sums_update(s, src, se, -1);
	sums_update(s, dst, se, 1);
	src->lag_weight -= se->weight;
	dst->lag_weight += se->weight;
	src->lag_free_weight -= (uint64_t)free_weight(s, se);
	dst->lag_free_weight += (uint64_t)free_weight(s, se);
	src->lag_held -= held_rate(s, src, se);
	dst->lag_held += held_rate(s, dst, se);
	s->rq[se->cpu].nr_lb_migrations++;
	se->lag_moving = true;
	migrate_entity(s, se, to, SCHED_MIGRATE_BALANCE, now);
	se->lag_moving = false;
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
	return rate_on(s, dst, x, free_weight(s, x)) < now_rate;
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

	/* x alone, only when src keeps work: an idle pCPU helps no lag */
	if (room && src->nr_running > 1 && may_help(s, dst, x, now_rate))
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

/* Accumulate the lags over the last interval and correct the worst ones. */
void fair_lag_balance(struct sched *s, uint64_t now)
{
	uint64_t used[SCHED_MAX_CPUS];
	struct lag_ent top[LAG_ATTEMPTS];
	uint64_t dt = now - s->lag_last;
	unsigned int n, nc;

	/* Lags move by tens of ms: the busy interval is often enough. */
	if (s->lag_last && dt < s->cfg.balance_interval_ns * s->cfg.busy_factor)
		return;

	s->lag_round++;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		update_rq_clock(s, &s->rq[cpu], now);
	n = collect(s, dt, used);
	/*
	 * Lag over the interval, at the last rates. Only for entities that
	 * had one (tracked at the last balance): the first interval of an
	 * entity has no ideal yet, and counting its work against a rate of 0
	 * would start it a whole interval's work ahead.
	 */
	for (unsigned int k = 0; k < n; k++) {
		struct sched_entity *se = s->lag_ents[k].se;

		if (se->lag_tracked && !s->lag_ents[k].sleeper)
			se->lag += (int64_t)((se->lag_rate * dt) >> RATE_SHIFT) -
				   (int64_t)(se->lag_prev_work - se->lag_work);
	}
	solve(s, n, dt, used);
	n = fair_sleepers_done(s->lag_ents, n);
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];

		if (se && !dl_entity(se)) {
			se->lag_tracked = false;
			se->lag_rate = 0;
		}
	}
	for (unsigned int k = 0; k < n; k++) {
		struct sched_entity *se = s->lag_ents[k].se;

		se->lag_tracked = s->lag_ents[k].comp >= 0;
		se->lag_rate = s->lag_ents[k].rate;
	}
	fair_payback_reweight(s, now);
	fair_repack(s, n, now);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		s->rq[cpu].lag_weight = s->rq[cpu].lag_free_weight = s->rq[cpu].lag_held = 0;
		memset(s->rq[cpu].lag_pot, 0, sizeof(s->rq[cpu].lag_pot));
	}
	for (unsigned int k = 0; k < n; k++) {
		struct sched_entity *se = s->lag_ents[k].se;
		struct sched_rq *rq = &s->rq[se->cpu];

		if (se->lag_tracked) {
			rq->lag_weight += se->weight;
			rq->lag_free_weight += (uint64_t)free_weight(s, se);
			rq->lag_held += held_rate(s, rq, se);
			sums_update(s, rq, se, 1);
		}
	}
	fair_wake_targets_update(s, n);
	/* The LAG_ATTEMPTS worst lags first, at most one move per pCPU. */
	nc = worst_lags(s, n, top);
	for (unsigned int k = 0, moves = 0; k < nc && moves < s->nr_cpus; k++) {
		struct sched_entity *se = top[k].se;

		if (se->lag_tracked && se->lag_moved != s->lag_round && improve(s, se, now)) {
			moves++;
			se->lag_moved = s->lag_round;	/* once per balance: no ping-pong */
		}
	}
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];

		if (se && !dl_entity(se)) {
			se->lag_work = se->lag_prev_work;
			se->lag_on_rq = wants_cpu(se);
			se->lag_wakeups = se->st.nr_wakeups;
		}
	}
	s->lag_last = now;
}
