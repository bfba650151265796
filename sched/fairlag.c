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
 * 3. the entities with the largest lags (ahead or behind, beyond a
 *    move's worth) may each move once: alone, or in exchange for the
 *    entity furthest ahead or behind on another pCPU, whichever lowers
 *    most the sum of squared lags predicted ahead on the two pCPUs (at
 *    the rates the new placement gives; fair_moves.c). Entities whose
 *    placement is exact never drift, so nothing moves; smaller lags are
 *    left alone (they bound the error, and a move costs a cache).
 *
 * Cost: O(n log n) per balance for n runnable entities (the sort of the
 * solver), nothing on the per-decision paths.
 */
#include "sched/internal.h"

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
 *
 * full[0..m), if not NULL, are the capacities before the held entities'
 * use was taken off the slowest (cap_fill()), descending: a level whose
 * pCPUs all kept their whole capacity, and not the last one (the slowest
 * pCPU's, where the ideal puts the sleepers), is tight (e[].tight). Its
 * entities' rates add up to all of those pCPUs, so in the ideal no other
 * entity runs there, sleepers included: what one takes there is lost to
 * the level (fair_wake.c sends their wakeups elsewhere).
 */
static void water_fill(struct lag_ent *e, unsigned int n, const uint64_t *caps, unsigned int m,
		       const uint64_t *full)
{
	unsigned int i = 0, j = 0;
	uint64_t cap_rest = 0, w_rest = 0, sum_caps = 0, sum_full = 0;

	for (unsigned int k = 0; k < m; k++)
		cap_rest += caps[k];
	for (unsigned int k = 0; k < n; k++)
		w_rest += e[k].w;
	while (i < n) {
		unsigned int best = 0;
		uint64_t bc = 0, bw = 1, c = 0, w = 0;
		bool tight, rest = false;

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
			rest = true;
		}
		if (!best) {	/* no pCPU left: nothing for the rest */
			for (; i < n; i++) {
				e[i].rate = 0;
				e[i].tight = false;
			}
			break;
		}
		/* its pCPUs: j .. j + best, or all that are left */
		for (unsigned int k = j; k < m && (k < j + best || rest); k++) {
			sum_caps += caps[k];
			sum_full += full ? full[k] : caps[k];
		}
		tight = full && !rest && j + best < m && sum_caps == sum_full;
		for (unsigned int k = 0; k < best; k++) {
			e[i + k].rate = (uint64_t)((unsigned __int128)bc * e[i + k].w / bw);
			e[i + k].tight = tight;
		}
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
	uint64_t full[SCHED_MAX_CPUS];
	unsigned int free = n;

	memcpy(full, caps, m * sizeof(*caps));
	for (unsigned int k = 0; k < n; k++)
		e[k].capped = false;
	water_fill(e, n, caps, m, s->nr_groups ? NULL : full);
	for (unsigned int k = 0; k < n; k++)
		e[k].busy_rate = e[k].rate;	/* a sleeper's floor (fair_sleepers_done()) */
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
		water_fill(e, free, caps, m, s->nr_groups ? NULL : full);
	}
}

/* Which component (a set of pCPUs) an affinity belongs to; -1 when too many. */
static int component_of(struct sched_cpumask *comp, unsigned int *nr,
			const struct sched_cpumask *allowed)
{
	int hit = -1;

	for (unsigned int c = 0; c < *nr; c++) {
		if (!sched_cpumask_intersects(&comp[c], allowed))
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

	s->lag_capped = caps;	/* for cap_ahead_share() at every tick */
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
		fair_sleeper_waits(s, se, work - se->lag_work, dt);
		if (tracked) {
			s->lag_ents[n].se = se;
			s->lag_ents[n].w = fair_solver_weight(s, se);
			s->lag_ents[n].limit = fair_backlog_limit(s, se);
			s->lag_ents[n].sleeper = false;
			s->lag_ents[n++].rate = 0;
		} else {
			se->lag = 0;
			se->sl_backlog_rounds = 0;	/* fair_backlog_limit() */
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
		full = capacity_rate(cap);
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

/* Has every cluster one performance level (its pCPUs run at one speed)? */
static bool fixed_speed(const struct sched *s)
{
	for (unsigned int c = 0; c < s->nr_clusters; c++)
		if (s->cluster[c].desc.nr_levels != 1)
			return false;
	return true;
}

/*
 * With groups, the second fluid balance comes at the tick after the first
 * too where no entity has a cap: there the first solved no one (entities
 * are solved from their second balance on, collect()), and until the
 * second the placement the start left stays, light members alone on a
 * pCPU among them (seed 10 #110 of the groups corpus: two for 65 ms, 41
 * ms of run time there for an ideal of 3.7; core.c fluid_due() has the
 * first). Only where the pCPUs run at one speed: lags are work against
 * the ideal at full capacity, and solved from the second tick every
 * entity kept the governor's ramp from the start (a fraction of the
 * capacity for the first tens of ms) as a lag that no run weight pays
 * back (two equal members on one pCPU 5.2 and 6.2 ms behind at 200 ms,
 * their run weights apart).
 */
static void second_fluid_soon(struct sched *s)
{
	if (s->lag_round == 1 && s->nr_groups && !fair_any_capped(s) && fixed_speed(s))
		group_share_soon(s);
}

/* Accumulate the lags over the last interval and correct the worst ones. */
void fair_lag_balance(struct sched *s, uint64_t now)
{
	uint64_t used[SCHED_MAX_CPUS];
	uint64_t dt = now - s->lag_last;
	unsigned int n;

	/* Lags move by tens of ms: the busy interval is often enough. */
	if (s->lag_last && dt < s->cfg.balance_interval_ns * s->cfg.busy_factor && !s->fluid_soon)
		return;
	s->fluid_soon = false;

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
			se->lag_tight = false;
			se->lag_rate = 0;
		}
	}
	for (unsigned int k = 0; k < n; k++) {
		struct sched_entity *se = s->lag_ents[k].se;

		se->lag_tracked = s->lag_ents[k].comp >= 0;
		se->lag_rate = s->lag_ents[k].rate;
		se->lag_tight = se->lag_tracked && s->lag_ents[k].tight && !s->lag_ents[k].capped;
	}
	fair_payback_reweight(s, now);
	fair_repack(s, n, now);
	fair_lag_sums(s, n);
	fair_wake_targets_update(s, n);
	fair_lag_moves(s, n, now);
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];

		if (se && !dl_entity(se)) {
			se->lag_work = se->lag_prev_work;
			se->lag_on_rq = wants_cpu(se);
			se->lag_wakeups = se->st.nr_wakeups;
		}
	}
	s->lag_last = now;
	second_fluid_soon(s);
}
