// SPDX-License-Identifier: MIT
/*
 * The ideal's levels, planned apart (docs/sched/fair-levels.md, "Rotation by levels").
 *
 * The water-filling (fairlag.c) freezes the tightest prefix, the k
 * heaviest entities on the k fastest pCPUs, at its own level, then
 * solves the rest on the rest. Each frozen prefix is a level: its
 * entities' ideal rates add up to all of its pCPUs, and the other
 * entities' rates add up to all of the other pCPUs. In the ideal, then,
 * no entity of one level ever runs on a pCPU of another: each level is a
 * problem of its own, with its own rotation or its own static placement.
 *
 * When a component's static packing failed, fair_rotate() planned the
 * whole component at once, by need (rate plus lag), which mixed the
 * levels: light entities ahead of their ideal (need 0) stayed on a slow
 * pCPU of the heavy level's rotation, while a slow pCPU of theirs was
 * left with less than its capacity of ideal rates, and the entity that
 * had it ran ahead for seconds (seed 6 #401 of the fair corpus: five
 * heavy entities and two of 0.14-0.18 of a 1024 pCPU rotate on seven
 * pCPUs of 1024, 846 and 136, twelve light ones fit two 136 pCPUs
 * exactly; one of those got 0.82 of its 136 pCPU for 5 s, ideal 0.77).
 *
 * So the component is cut into its levels: its entities by rate, its
 * pCPUs by capacity, a cut after the k-th of both wherever the k largest
 * rates add up to the k largest capacities (within the packing's
 * tolerance). Each level gets pCPUs of the capacities its positions
 * have; among equal ones, those where its entities' rates are. Each level
 * is then packed statically if it can be, else rotated on its own pCPUs;
 * a level of k entities on k pCPUs (all but the last) gives each entity
 * a pCPU to itself. Components whose entities' affinities differ are
 * planned whole, as before.
 *
 * Cost: O(n log n + m^2) per balance for a component of n entities on m
 * pCPUs whose static packing failed, besides the packing and rotation
 * themselves; nothing on the per-decision paths.
 */
#include "sched/internal.h"

/* Tolerance of a level's cut: the solver's rounding, far below a gap that matters. */
#define LEVEL_SHIFT	12
/* Below capacity >> LIGHT_SHIFT an entity is light: it stays beside a rotation around bound ones. */
#define LIGHT_SHIFT	3
/* A rotation around bound ones only for an entity this far off its ideal: two moves' worth. */
#define ROTATE_OFF_NS	(2 * FAIR_LAG_MOVE_NS)

/* Rate descending, then id: a deterministic order (qsort). */
int fair_cmp_rate_desc(const void *a, const void *b)
{
	const struct lag_ent *x = a, *y = b;

	if (x->rate != y->rate)
		return x->rate < y->rate ? 1 : -1;
	return x->se->id - y->se->id;
}

/* Do all of e[0..n) have the same affinity? */
static bool same_affinity(const struct lag_ent *e, unsigned int n)
{
	for (unsigned int k = 1; k < n; k++)
		if (memcmp(&e[k].se->allowed, &e[0].se->allowed, sizeof(e[0].se->allowed)))
			return false;
	return true;
}

/*
 * The pCPUs of `may` into cpu[], by capacity descending (then by the
 * capacity left to the tracked entities, then id); how many.
 */
static unsigned int cpus_by_capacity(const struct sched *s, const struct sched_cpumask *may,
				     unsigned int *cpu)
{
	unsigned int m = 0;

	for (unsigned int c = 0; c < s->nr_cpus; c++) {
		unsigned int k;

		if (!sched_cpumask_test(may, c))
			continue;
		/* insertion: m <= SCHED_MAX_CPUS, once per planned component */
		for (k = m; k > 0; k--) {
			const struct sched_rq *a = &s->rq[cpu[k - 1]], *b = &s->rq[c];

			if (fair_capacity(a) > fair_capacity(b) ||
			    (fair_capacity(a) == fair_capacity(b) && a->lag_cap >= b->lag_cap))
				break;
			cpu[k] = cpu[k - 1];
		}
		cpu[k] = c;
		m++;
	}
	return m;
}

/*
 * The pCPUs for the level whose entities are e[0..n) and whose positions
 * are pos[0..np) (of cpu[], by capacity): for each position, the pCPU of
 * its capacity not taken yet (taken[]) with the most of the level's rates
 * on it, into *mask.
 */
static void level_cpus(const struct sched *s, const struct lag_ent *e, unsigned int n,
		       const unsigned int *cpu, unsigned int m, unsigned int first, unsigned int np,
		       bool *taken, struct sched_cpumask *mask)
{
	uint64_t here[SCHED_MAX_CPUS];

	memset(here, 0, s->nr_cpus * sizeof(*here));
	for (unsigned int k = 0; k < n; k++)
		here[e[k].se->cpu] += e[k].rate + 1;	/* + 1: an entity of rate 0 counts */
	sched_cpumask_clear(mask);
	for (unsigned int p = first; p < first + np; p++) {
		uint64_t cap = fair_capacity(&s->rq[cpu[p]]);
		int best = -1;

		for (unsigned int q = 0; q < m; q++) {
			unsigned int c = cpu[q];

			if (taken[q] || fair_capacity(&s->rq[c]) != cap)
				continue;
			if (best < 0 || here[c] > here[cpu[best]])
				best = (int)q;
		}
		taken[best] = true;	/* position p itself is a candidate, so one is found */
		sched_cpumask_set(mask, cpu[best]);
	}
}

/*
 * Is one of e[0..n) a straddler left behind: owed more than the whole
 * pCPU it is on (by 1/2^FAIR_STRADDLE_SHIFT of it) and behind its ideal by
 * a move's worth? Beside sleepers nothing else moves it: the packing
 * finds no pCPU of its speed for it, and the lag moves no single move or
 * exchange that helps (seed 20 #406 of the fair corpus).
 */
bool fair_straddler_behind(const struct sched *s, const struct lag_ent *e, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		uint64_t full = capacity_rate(fair_capacity(&s->rq[e[k].se->cpu]));

		if (e[k].se->lag >= (int64_t)FAIR_LAG_MOVE_NS &&
		    e[k].rate > full + (full >> FAIR_STRADDLE_SHIFT))
			return true;
	}
	return false;
}

/*
 * Plan one level: static if it packs, else a rotation on its pCPUs.
 * `beside` sleepers, only a level with a straddler left behind is planned;
 * the others' entities stay where they are (e[k].to), as the lag moves
 * and the sleepers' wakeups left them: re-placed, the light busy entities
 * beside the sleepers ran ahead in the sleepers' gaps (docs/sched/fair-open.md).
 */
static void plan_level(const struct sched *s, struct lag_ent *e, unsigned int n,
		       const struct sched_cpumask *mask, bool single, bool beside)
{
	int64_t room[SCHED_MAX_CPUS];

	if (beside && !fair_straddler_behind(s, e, n)) {
		for (unsigned int k = 0; k < n; k++)
			e[k].to = e[k].se->cpu;
		return;
	}
	fair_fresh_room(s, room);
	if (fair_pack(s, e, n, room, mask)) {
		fair_spread(s, e, n, mask);
		return;
	}
	fair_fresh_room(s, room);
	fair_rotate(s, e, n, room, mask, single);
}

/*
 * The placement of one component's entities e[0..n), whose static
 * packing failed, for the next interval, into e[k].to, level by level;
 * reorders e[]. `beside` sleepers: only the levels with a straddler left
 * behind (plan_level()).
 */
void fair_plan_levels(const struct sched *s, struct lag_ent *e, unsigned int n, bool beside)
{
	unsigned int cpu[SCHED_MAX_CPUS], m, first = 0, k;
	bool taken[SCHED_MAX_CPUS] = { false };
	struct sched_cpumask mask;
	uint64_t rates = 0, caps = 0;
	int64_t room[SCHED_MAX_CPUS];

	if (!n)
		return;
	if (!same_affinity(e, n)) {
		fair_fresh_room(s, room);
		fair_rotate(s, e, n, room, NULL, false);
		return;
	}
	m = cpus_by_capacity(s, &e[0].se->allowed, cpu);
	qsort(e, n, sizeof(*e), fair_cmp_rate_desc);
	for (k = 0; k < n && k < m; k++) {
		rates += e[k].rate;
		caps += s->rq[cpu[k]].lag_cap;
		/* a cut: the level's rates fill its pCPUs; not before the last pCPU */
		if (k + 1 < m && rates + (caps >> LEVEL_SHIFT) >= caps) {
			level_cpus(s, &e[first], k + 1 - first, cpu, m, first, k + 1 - first, taken,
				   &mask);
			plan_level(s, &e[first], k + 1 - first, &mask, true, beside);
			first = k + 1;
			rates = caps = 0;
		}
	}
	/* the last level: the rest of the entities on the rest of the pCPUs */
	level_cpus(s, &e[first], n - first, cpu, m, first, m - first, taken, &mask);
	plan_level(s, &e[first], n - first, &mask, n - first == m - first, beside);
}

/*
 * Is e held at its bound now: its rate at its limit (its cap, a group
 * cap's share), or a share of a binding group cap? Or bound within
 * periods of its own at all (a cap of its own)? Such entities use their
 * quotas in bursts that a rotation's interval does not follow (seed 1 #97
 * of the groups corpus lost 2% of its total when they rotated).
 */
static bool held_at_bound(const struct lag_ent *e)
{
	return e->capped || e->se->grp_share.period;
}

static bool bound_in_periods(const struct lag_ent *e)
{
	return held_at_bound(e) || e->se->cap_period;
}

/*
 * Does e rotate around the bound ones (fair_rotate_around_bound())? Only
 * an unbound entity of a real share of a pCPU (light and whole-pCPU ones
 * stay) on a pCPU over its capacity (sum[], the rates where they are).
 */
static bool rotates_around_bound(const struct sched *s, const struct lag_ent *e,
				 const uint64_t *sum)
{
	const struct sched_rq *rq = &s->rq[e->se->cpu];

	return !bound_in_periods(e) && e->rate >= rq->lag_cap >> LIGHT_SHIFT &&
	       !fair_whole_pcpu(rq, e->rate) && fair_over_at(s, sum, e->se->cpu);
}

/*
 * Plans e[h..n) by levels on the capacity that e[0..h), placed at
 * e[k].to, leave: lag_cap is the capacity the tracked entities have on a
 * pCPU, so it is lowered by their rates for the plan and restored after.
 */
static void plan_beside(struct sched *s, struct lag_ent *e, unsigned int h, unsigned int n)
{
	uint64_t saved[SCHED_MAX_CPUS];

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		saved[cpu] = s->rq[cpu].lag_cap;
	for (unsigned int k = 0; k < h; k++) {
		struct sched_rq *rq = &s->rq[e[k].to];

		rq->lag_cap = rq->lag_cap > e[k].rate ? rq->lag_cap - e[k].rate : 0;
	}
	fair_plan_levels(s, e + h, n - h, false);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		s->rq[cpu].lag_cap = saved[cpu];
}

/*
 * A component with caps or groups, in a host with groups, whose static
 * packing failed (those do not rotate whole, fair_repack.c): where the pCPUs over their capacity
 * hold only unbound entities of a real share of a pCPU
 * (rotates_around_bound()), and an entity is held at its bound, those
 * rotate by levels on what the others leave, and the others stay (packed
 * where they fit, else nothing is planned); whether it planned, into
 * e[k].to (reorders e[]). Two such entities whose rates add up to a
 * little more than a pCPU otherwise shared one for good: no single move
 * or exchange lowers the predicted lags, and the light ones beside the
 * held one took the room it left on the other pCPU (seed 19 #149 of the
 * groups corpus: v5 and v12, 0.532 and 0.499 of a pCPU, shared one for
 * 9.3 s of 10 and ended 0.13 s under, g0's light members beside v4, held
 * at g3's cap, 77 ms over). Without one held (only light members, or
 * caps of their own that do not bind) rotating grouped entities put light
 * members ahead (docs/sched/groups-open.md); so did a rotation for lags
 * below two moves' worth (ROTATE_OFF_NS): each move drops the EEVDF
 * credit that holds the light ones beside it back (seed 16 #65: g0's
 * v43, 0.22 of a pCPU, moved 573 times, v7 of g2 65 ms over).
 */
bool fair_rotate_around_bound(struct sched *s, struct lag_ent *e, unsigned int n)
{
	uint64_t sum[SCHED_MAX_CPUS];
	int64_t room[SCHED_MAX_CPUS];
	unsigned int h = 0, held = 0;

	if (!s->nr_groups)	/* caps alone: it moved the caps corpus both ways */
		return false;
	fair_rate_sums(s, e, n, sum);
	for (unsigned int k = 0; k < n; k++)
		if (!rotates_around_bound(s, &e[k], sum)) {
			struct lag_ent t = e[k];

			e[k] = e[h];
			e[h++] = t;
		}
	if (h == n)
		return false;
	for (unsigned int k = 0; k < h; k++) {
		if (fair_over_at(s, sum, e[k].se->cpu))
			return false;
		held += held_at_bound(&e[k]);
	}
	if (!held)
		return false;
	if (!fair_off_by(e + h, n - h, ROTATE_OFF_NS))
		return false;
	fair_fresh_room(s, room);
	qsort(e, h, sizeof(*e), fair_cmp_rate_desc);
	if (!fair_pack(s, e, h, room, NULL))
		return false;
	plan_beside(s, e, h, n);
	return true;
}
