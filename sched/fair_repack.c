// SPDX-License-Identifier: MIT
/*
 * Feasibility re-pack of the fluid-ideal balance (docs/sched.md, "How the
 * engine meets it").
 *
 * The lag moves of fairlag.c correct one entity at a time by predicted
 * lags. Where the ideal needs several entities to change places at once
 * (the heavy ones onto the fast pCPUs, the light ones together onto the
 * slow one), no single move or exchange lowers the predicted lags, and
 * the heavy ones swap back and forth instead. But the ideal rates say
 * directly what a placement must satisfy: a placement is exact when, on
 * every pCPU, the ideal rates of the entities there add up to no more
 * than the capacity the sleepers leave there (the payback then clears
 * what is left of the lags where they are).
 *
 * So at every balance, for each component (a set of pCPUs the affinities
 * share), after the ideal is solved and before the lag moves:
 *
 * - if no pCPU's sum of ideal rates is over its capacity by more than
 *   TRIGGER_SHIFT (SLEEPY_SHIFT where sleepers use the pCPUs, but for
 *   one entity alone over a pCPU they do not use), nothing is
 *   re-packed (hysteresis: a feasible placement stays put, and the lag
 *   moves and the payback take care of the rest);
 * - otherwise a new placement is packed, heaviest first (the solver's
 *   order): an entity stays where it is while its pCPU has room for it,
 *   else it goes to the allowed pCPU with the least room that still fits
 *   it (best fit keeps the big holes for the big entities), each pCPU
 *   filled to at most FIT_SHIFT over its capacity. When every entity
 *   fits, the entities whose pCPU changed move, all in this balance, and
 *   the lag moves leave the component alone until the next one (they
 *   would undo it for a lag that the payback pays back where it is);
 *   when one does not, no static placement was found (three equal
 *   entities on two pCPUs need a rotation) and the lag moves do the
 *   rotation as before.
 *
 * The entities a re-pack placed are marked (lag_packed) until their
 * component is over again: the periodic load balance, which balances
 * weights per capacity and not ideal rates, leaves them alone (it moved
 * them back at every balance otherwise).
 *
 * Cost: O(n x m) per balance for n tracked entities on m pCPUs, nothing
 * on the per-decision paths.
 */
#include "sched/internal.h"

#define FIT_SHIFT	8	/* over by capacity / 256: still feasible */
#define TRIGGER_SHIFT	6	/* over by capacity / 64: re-pack */
#define SLEEPY_SHIFT	3	/* ... by capacity / 8 beside sleepers */
#define SPREAD_SHIFT	(FIT_SHIFT - 1)	/* under by capacity / 128: even it out */
#define SPREAD_GAIN_SHIFT 10		/* a spreading move gains capacity / 1024 at least */
#define SPREAD_MOVES	16		/* spreading moves per plan: bounds their cost */
#define SWAP_ON_UNDER	32		/* an exchange looks at this many of the lightest under */

/* The capacity the tracked entities have on rq (RATE_SHIFT), as fairlag.c predicts. */
static uint64_t cpu_room(const struct sched_rq *rq)
{
	return rq->lag_cap;
}

/* Per-pCPU sums of the ideal rates of e[0..n) where they are, into sum[]. */
void fair_rate_sums(const struct sched *s, const struct lag_ent *e, unsigned int n, uint64_t *sum)
{
	memset(sum, 0, s->nr_cpus * sizeof(*sum));
	for (unsigned int k = 0; k < n; k++)
		sum[e[k].se->cpu] += e[k].rate;
}

/* The largest ideal rate of e[0..n) on each pCPU, into top[]. */
static void rate_tops(const struct sched *s, const struct lag_ent *e, unsigned int n, uint64_t *top)
{
	memset(top, 0, s->nr_cpus * sizeof(*top));
	for (unsigned int k = 0; k < n; k++)
		if (e[k].rate > top[e[k].se->cpu])
			top[e[k].se->cpu] = e[k].rate;
}

/* Do sleepers use rq: is the capacity they leave it below the whole? */
static bool sleepers_use(const struct sched_rq *rq)
{
	uint64_t full = capacity_rate(fair_capacity(rq));

	return rq->lag_cap < full - (full >> FIT_SHIFT);
}

/* Is cpu's sum of rates over its capacity by more than capacity >> TRIGGER_SHIFT? */
bool fair_over_at(const struct sched *s, const uint64_t *sum, unsigned int cpu)
{
	uint64_t cap = cpu_room(&s->rq[cpu]);

	return sum[cpu] > cap + (cap >> TRIGGER_SHIFT);
}

/*
 * Is any pCPU's sum over its capacity by more than capacity >>
 * TRIGGER_SHIFT, or SLEEPY_SHIFT `beside` sleepers? Or, beside them, is
 * one entity alone over a pCPU no sleeper uses by capacity >>
 * TRIGGER_SHIFT (top[], the largest rate on each pCPU)? The eighth is for
 * the noise of the sleepers' use; such a pCPU's capacity is exact, and
 * an entity owed more than all of it is misplaced whatever the sleepers
 * do elsewhere (seed 16 #332 of the fair corpus: v10, owed the one 1024
 * pCPU, sat alone for the run on a 1001 one, 2.3% over it, while the
 * sleepers and light entities had the 1024 one, 1.15x the bound). Only
 * for one entity alone: with 1/64 for any sum on such a pCPU, the
 * re-packs it added left light entities alone on slow pCPUs for whole
 * intervals (docs/sched/fair-open-done.md).
 */
static bool over(const struct sched *s, const uint64_t *sum, const uint64_t *top, bool beside)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		const struct sched_rq *rq = &s->rq[cpu];
		uint64_t cap = cpu_room(rq);

		if (sum[cpu] > cap + (cap >> (beside ? SLEEPY_SHIFT : TRIGGER_SHIFT)))
			return true;
		if (beside && !sleepers_use(rq) && top[cpu] > cap + (cap >> TRIGGER_SHIFT))
			return true;
	}
	return false;
}

/*
 * Is rate (about) all of rq's capacity? Then the entity gets rq to
 * itself, as everywhere in the fluid balance (lag_full): what another
 * entity ran there would be lost to it for good.
 */
bool fair_whole_pcpu(const struct sched_rq *rq, uint64_t rate)
{
	uint64_t cap = cpu_room(rq);

	return rate >= cap - cap / 32;
}

/* The pCPU of `only` with the least room that still fits rate, or -1. */
static int best_fit(const struct sched *s, const struct sched_cpumask *only, const int64_t *room,
		    uint64_t rate)
{
	int best = -1;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (!sched_cpumask_test(only, cpu) || room[cpu] < (int64_t)rate)
			continue;
		if (best < 0 || room[cpu] < room[best])
			best = (int)cpu;
	}
	return best;
}

/* Each pCPU's capacity for the tracked entities, with the packing's tolerance. */
void fair_fresh_room(const struct sched *s, int64_t *room)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		uint64_t cap = cpu_room(&s->rq[cpu]);

		room[cpu] = (int64_t)(cap + (cap >> FIT_SHIFT));
	}
}

/*
 * A placement of e[0..n) (ideal rates, about heaviest first) on the pCPUs
 * of `only` (NULL: each one's affinity) where every pCPU's sum fits
 * room[], preferring where each entity is, into e[k].to. Returns false
 * when one does not fit anywhere. A pCPU whose entity's rate is its
 * whole capacity (fair_whole_pcpu()) takes no one more; within a level
 * (`only`, fair_levels.c) only once its room is below twice the
 * tolerance: that rule's 1/32 is more than the 2% an entity may be off,
 * and a level packs where the whole component did not (seed 5 #422 of
 * the fair corpus: an entity of 0.978 of its pCPU alone on it, 2.2% over).
 */
bool fair_pack(const struct sched *s, struct lag_ent *e, unsigned int n, int64_t *room,
	       const struct sched_cpumask *only)
{
	for (unsigned int k = 0; k < n; k++) {
		const struct sched_cpumask *may = only ? only : &e[k].se->allowed;
		int to = e[k].se->cpu;

		if ((only && !sched_cpumask_test(only, (unsigned int)to)) ||
		    room[to] < (int64_t)e[k].rate)
			to = best_fit(s, may, room, e[k].rate);
		if (to < 0)
			return false;
		room[to] -= (int64_t)e[k].rate;
		if (only ? room[to] < (int64_t)(cpu_room(&s->rq[to]) >> (FIT_SHIFT - 1)) :
		    fair_whole_pcpu(&s->rq[to], e[k].rate))
			room[to] = -1;
		e[k].to = to;
	}
	return true;
}

/* A pCPU's sum of rates against its capacity: (sum - capacity) / capacity. */
struct fill {
	int64_t num, den;
};

static struct fill fill_of(const struct sched *s, int64_t sum, unsigned int cpu)
{
	int64_t cap = (int64_t)cpu_room(&s->rq[cpu]);

	return (struct fill){ sum - cap, cap ? cap : 1 };
}

/* Is a further under its capacity than b, relative to each? (< 2^22 each: no overflow) */
static bool fill_below(struct fill a, struct fill b)
{
	return a.num * b.den < b.num * a.den;
}

/* The pCPU of `only` furthest under its capacity, relative to it; -1 if none. */
static int most_under(const struct sched *s, const struct sched_cpumask *only, const int64_t *sum)
{
	int u = -1;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(only, cpu) &&
		    (u < 0 || fill_below(fill_of(s, sum[cpu], cpu), fill_of(s, sum[u], (unsigned int)u))))
			u = (int)cpu;
	return u;
}

/*
 * The entity of e[0..n) whose move to u leaves the worse of u and its
 * own pCPU least under (relative to capacity), if that beats u now by
 * 1/2^SPREAD_GAIN_SHIFT of u's capacity and u stays within the packing's
 * tolerance; or -1.
 */
static int spread_pick(const struct sched *s, const struct lag_ent *e, unsigned int n,
		       const int64_t *sum, unsigned int u)
{
	int64_t cap = (int64_t)cpu_room(&s->rq[u]);
	struct fill best = fill_of(s, sum[u] + (cap >> SPREAD_GAIN_SHIFT), u);
	int pick = -1;

	for (unsigned int k = 0; k < n; k++) {
		unsigned int o = (unsigned int)e[k].to;
		int64_t r = (int64_t)e[k].rate;
		struct fill fu = fill_of(s, sum[u] + r, u), fo = fill_of(s, sum[o] - r, o);

		if (o == u || sum[u] + r > cap + (cap >> FIT_SHIFT))
			continue;
		if (fill_below(fo, fu))
			fu = fo;
		if (fill_below(best, fu)) {
			best = fu;
			pick = (int)k;
		}
	}
	return pick;
}

/* The lightest entities (up to SWAP_ON_UNDER) of e[0..n) placed on u, rate ascending, into ku[]. */
static unsigned int lightest_on(const struct lag_ent *e, unsigned int n, unsigned int u,
				unsigned int *ku)
{
	unsigned int nu = 0;

	for (unsigned int k = n; k-- > 0 && nu < SWAP_ON_UNDER;)	/* e[] is rate descending */
		if (e[k].to == (int)u)
			ku[nu++] = k;
	return nu;
}

/*
 * The exchange of e[kx] (on o) with one of u's lightest, e[ku[0..nu)]
 * (rate ascending), that leaves the worse of u and o least under; its
 * index in ku[], or -1 if none is better than *best, which it updates.
 * The best is the difference that evens the two out, so only the two
 * entities of u whose rates are nearest the one that leaves it (a binary
 * search) are looked at; u stays within the packing's tolerance.
 */
static int swap_pick_one(const struct sched *s, const struct lag_ent *e, const int64_t *sum,
			 unsigned int u, const unsigned int *ku, unsigned int nu, unsigned int kx,
			 struct fill *best)
{
	unsigned int o = (unsigned int)e[kx].to, lo = 0, hi = nu;
	int64_t cu = (int64_t)cpu_room(&s->rq[u]), co = (int64_t)cpu_room(&s->rq[o]);
	int64_t x = (int64_t)e[kx].rate, most = cu + (cu >> FIT_SHIFT) - sum[u];
	int64_t even = (cu * (sum[o] - co) - co * (sum[u] - cu)) / (cu + co);
	int pick = -1;

	if (even > most)
		even = most;
	while (lo < hi) {	/* the first of u's entities at x - even or above */
		unsigned int mid = (lo + hi) / 2;

		if ((int64_t)e[ku[mid]].rate < x - even)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (unsigned int i = lo ? lo - 1 : 0; i <= lo && i < nu; i++) {
		int64_t d = x - (int64_t)e[ku[i]].rate;
		struct fill fu = fill_of(s, sum[u] + d, u), fo = fill_of(s, sum[o] - d, o);

		if (d <= 0 || d > most)
			continue;
		if (fill_below(fo, fu))
			fu = fo;
		if (fill_below(*best, fu)) {
			*best = fu;
			pick = (int)i;
		}
	}
	return pick;
}

/*
 * Where no single move helps (spread_pick()): the exchange of an entity
 * on another pCPU with a lighter one on u that leaves the worse of the
 * two pCPUs least under, if that beats u now by 1/2^SPREAD_GAIN_SHIFT
 * of u's capacity and u stays within the packing's tolerance. Whether
 * it found one, into *kx (the entity that goes to u) and *ky (the one
 * that leaves it). e[0..n) rate descending (fair_plan_levels() sorts it).
 */
static bool swap_pick(const struct sched *s, const struct lag_ent *e, unsigned int n,
		      const int64_t *sum, unsigned int u, unsigned int *kx, unsigned int *ky)
{
	int64_t cap = (int64_t)cpu_room(&s->rq[u]);
	struct fill best = fill_of(s, sum[u] + (cap >> SPREAD_GAIN_SHIFT), u);
	unsigned int ku[SWAP_ON_UNDER], nu = lightest_on(e, n, u, ku);
	bool found = false;

	for (unsigned int k = 0; k < n && nu; k++) {
		int i;

		if (e[k].to == (int)u)
			continue;
		i = swap_pick_one(s, e, sum, u, ku, nu, k, &best);
		if (i >= 0) {
			*kx = k;
			*ky = ku[i];
			found = true;
		}
	}
	return found;
}

/* Move e[k] to pCPU `to` in the plan, keeping the sums. */
static void replan(struct lag_ent *e, unsigned int k, int to, int64_t *sum)
{
	sum[e[k].to] -= (int64_t)e[k].rate;
	sum[to] += (int64_t)e[k].rate;
	e[k].to = to;
}

/*
 * Even out what the packing's tolerance left on a level's pCPUs (`only`;
 * fair_pack() placed its entities e[0..n) into e[k].to). Each pCPU may
 * be filled to 1/2^FIT_SHIFT over its capacity, and the entities stay
 * where they are while that holds, so where the ideal rates add up to the
 * capacities, as in a level, every pCPU's overshoot is missing on the one
 * filled last, and its entities run ahead of their ideal by all of it
 * (seed 12 #228 of the busy corpus: 35 pCPUs each 0.1-0.4% over left a
 * 460 pCPU holding 65 light entities 9.4% under, and the heaviest of
 * them, weight 7006, ended 112 ms over its ideal of 1874 ms, 2.24x the
 * bound; the lag moves never see it, as the entities behind on the pCPUs
 * over are a few ms behind each). So while the pCPU furthest under is
 * under by more than 1/2^SPREAD_SHIFT of its capacity, the entity whose
 * move there leaves the worse of the two pCPUs least under moves there,
 * or, where no move helps, the exchange that does (swap_pick(): on seed
 * 11 #297 every entity on the pCPUs over was too big for the room of the
 * one under), at most SPREAD_MOVES per plan in all. Not after the re-pack
 * of a whole component: there it churned (docs/sched.md).
 * O(SPREAD_MOVES x (n log SWAP_ON_UNDER + m)).
 */
void fair_spread(const struct sched *s, struct lag_ent *e, unsigned int n,
		 const struct sched_cpumask *only)
{
	int64_t sum[SCHED_MAX_CPUS];

	memset(sum, 0, s->nr_cpus * sizeof(*sum));
	for (unsigned int k = 0; k < n; k++)
		sum[e[k].to] += (int64_t)e[k].rate;
	for (unsigned int moves = 0; moves < SPREAD_MOVES; moves++) {
		int u = most_under(s, only, sum), k;
		unsigned int kx, ky;
		int64_t cap;

		if (u < 0)
			return;
		cap = (int64_t)cpu_room(&s->rq[u]);
		if (cap - sum[u] <= cap >> SPREAD_SHIFT)
			return;
		k = spread_pick(s, e, n, sum, (unsigned int)u);
		if (k >= 0) {
			replan(e, (unsigned int)k, u, sum);
			continue;
		}
		if (!swap_pick(s, e, n, sum, (unsigned int)u, &kx, &ky))
			return;
		replan(e, ky, e[kx].to, sum);
		replan(e, kx, u, sum);
	}
}

static void apply(struct sched *s, struct lag_ent *e, unsigned int n, uint64_t now)
{
	s->lag_in_move = true;	/* no newidle pull between two moves */
	for (unsigned int k = 0; k < n; k++) {
		struct sched_entity *se = e[k].se;

		if (e[k].to == se->cpu)
			continue;
		s->rq[se->cpu].nr_lb_migrations++;
		se->lag_moving = true;
		migrate_entity(s, se, (unsigned int)e[k].to, SCHED_MIGRATE_BALANCE, now);
		se->lag_moving = false;
	}
	s->lag_in_move = false;
}

/*
 * Do sleepers use any of the pCPUs of e[0..n)? Then the capacity a
 * placement was packed for is an average, and the periodic load balance,
 * which sees their wakeups at once, may still move the others.
 */
static bool sleepers_beside(const struct sched *s, const struct lag_ent *e, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++)
		if (sleepers_use(&s->rq[e[k].se->cpu]))
			return true;
	return false;
}

/*
 * Is some entity of e[0..n) off its ideal by a move's worth? Only then
 * does a component without a static placement rotate: a rotation is
 * moves, and below that the payback and EEVDF's own sharing are finer.
 */
static bool lag_worth_a_move(const struct lag_ent *e, unsigned int n)
{
	return fair_off_by(e, n, FAIR_LAG_MOVE_NS);
}

/* Is one of e[0..n) off its ideal by `by` or more, ahead or behind? */
bool fair_off_by(const struct lag_ent *e, unsigned int n, int64_t by)
{
	for (unsigned int k = 0; k < n; k++)
		if (e[k].se->lag >= by || e[k].se->lag <= -by)
			return true;
	return false;
}

/*
 * Are all of e[0..n) outside groups and caps? Only those rotate: a
 * capped entity's rate is its quota, which it uses in bursts the
 * rotation's interval does not follow (seed 1 #97 of the groups corpus
 * lost 2% of its total when they rotated), so those keep the lag moves.
 */
static bool uncapped_ungrouped(const struct lag_ent *e, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++)
		if (e[k].capped || e[k].se->cap_period || e[k].se->group != SCHED_NONE)
			return false;
	return true;
}

/* Moves e[k] to e[to] (to <= k), keeping the order of e[to..k). */
static void move_forward(struct lag_ent *e, unsigned int k, unsigned int to)
{
	struct lag_ent x = e[k];

	memmove(&e[to + 1], &e[to], (k - to) * sizeof(*e));
	e[to] = x;
}

/*
 * The free pCPU of comp (level[] false) with the most capacity, and
 * among equal ones one where an entity of e[0..t) is: the next pCPU of
 * the tight levels' positions (water_fill() freezes them on the fastest).
 */
static int fastest_free(const struct sched *s, const struct sched_cpumask *comp,
			const bool *level, const bool *holds)
{
	int best = -1;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (!sched_cpumask_test(comp, cpu) || level[cpu])
			continue;
		if (best < 0 || fair_capacity(&s->rq[cpu]) > fair_capacity(&s->rq[best]) ||
		    (fair_capacity(&s->rq[cpu]) == fair_capacity(&s->rq[best]) &&
		     holds[cpu] && !holds[best]))
			best = (int)cpu;
	}
	return best;
}

/*
 * Place the entities of the tight levels (water_fill(): their rates add
 * up to all of the fastest pCPUs, which no sleeper's use reaches) as
 * levels, moved to e[0..t): one per pCPU of those fastest ones, where it
 * is if it is on one, and close those pCPUs (room -1). An entity of such
 * a level may be owed more than any one pCPU gives (seed 11 #232 of the
 * fair corpus: 0.594 and 0.578 of a 1024 pCPU on pCPUs of 674 and 526),
 * so no static packing of single entities exists; but the level takes
 * its pCPUs whole, and the lag moves exchange its entities there. How
 * many it placed; 0 when there are none to place or they do not fill
 * their pCPUs as a level (affinities, rounding).
 */
static unsigned int place_tight_levels(const struct sched *s, struct lag_ent *e, unsigned int n,
				       const struct sched_cpumask *comp, int64_t *room)
{
	bool level[SCHED_MAX_CPUS] = { false }, holds[SCHED_MAX_CPUS] = { false };
	uint64_t rates = 0, caps = 0;
	unsigned int t = 0;

	for (unsigned int k = 0; k < n; k++)
		if (e[k].tight && !e[k].capped) {
			move_forward(e, k, t++);
			holds[e[t - 1].se->cpu] = true;
		}
	if (t < 2)
		return 0;	/* one entity, a whole pCPU: fair_pack() places it */
	for (unsigned int k = 0; k < t; k++) {
		int cpu = fastest_free(s, comp, level, holds);

		if (cpu < 0)
			return 0;
		level[cpu] = true;
		rates += e[k].rate;
		caps += capacity_rate(fair_capacity(&s->rq[cpu]));
	}
	if (rates > caps + (caps >> FIT_SHIFT) || rates + (caps >> (FIT_SHIFT - 2)) < caps)
		return 0;
	for (unsigned int k = 0; k < t; k++)
		for (unsigned int c = 0; c < s->nr_cpus; c++)
			if (level[c] && !sched_cpumask_test(&e[k].se->allowed, c))
				return 0;
	for (unsigned int k = 0; k < t; k++) {
		int cpu = e[k].se->cpu;

		e[k].to = -1;
		if (level[cpu] && room[cpu] >= 0) {
			e[k].to = cpu;
			room[cpu] = -1;
		}
	}
	for (unsigned int k = 0; k < t; k++)	/* the others on what is left, fastest first */
		if (e[k].to < 0) {
			int best = -1;

			for (unsigned int c = 0; c < s->nr_cpus; c++)
				if (level[c] && room[c] >= 0 &&
				    (best < 0 || fair_capacity(&s->rq[c]) > fair_capacity(&s->rq[best])))
					best = (int)c;
			if (best < 0)
				return 0;	/* cannot happen: one level pCPU per entity */
			e[k].to = best;
			room[best] = -1;
		}
	return t;
}

/* Each pCPU's whole capacity, with the packing's tolerance, into room[]. */
static void whole_room(const struct sched *s, int64_t *room)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		uint64_t full = capacity_rate(fair_capacity(&s->rq[cpu]));

		room[cpu] = (int64_t)(full + (full >> FIT_SHIFT));
	}
}

/*
 * Where the sleepers ran is an accident of their wakeups, not part of the
 * ideal: a sleeper that keeps waking on the pCPU an entity's whole share
 * needs (its lag_cap then short of that share) keeps the entity off it,
 * and nothing static was found (seed 6 #21 of the fair corpus: five
 * entities owed a 1024 pCPU each, a periodic sleeper on the fifth, so
 * one of the five always sat on a 929 pCPU and they took turns there,
 * each 1.6-2.6% short). So beside sleepers, pack again on the whole
 * capacities and ask only that the sleepers' use in sum fits what the
 * pCPUs not given whole to one entity leave: once the entity is there
 * its pCPU is full (lag_full), and the sleeper's next wakeup goes
 * elsewhere (fair_wake.c). Where no such packing of single entities
 * exists, the tight levels are placed as levels first
 * (place_tight_levels()) and the others packed on the pCPUs left.
 * Whether it found such a placement.
 */
static bool pack_sleepers_elsewhere(const struct sched *s, struct lag_ent *e, unsigned int n)
{
	struct sched_cpumask comp;
	int64_t room[SCHED_MAX_CPUS], spare = 0, sleep = 0;

	sched_cpumask_clear(&comp);
	for (unsigned int k = 0; k < n; k++)
		sched_cpumask_or(&comp, &e[k].se->allowed);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(&comp, cpu))
			sleep += (int64_t)(capacity_rate(fair_capacity(&s->rq[cpu])) -
					   cpu_room(&s->rq[cpu]));
	whole_room(s, room);
	if (!fair_pack(s, e, n, room, NULL)) {	/* then the tight levels as levels */
		unsigned int t;

		whole_room(s, room);
		t = place_tight_levels(s, e, n, &comp, room);
		if (!t || !fair_pack(s, e + t, n - t, room, NULL))
			return false;
	}
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(&comp, cpu) && room[cpu] > 0)
			spare += room[cpu];
	if (spare < sleep)
		return false;
	for (unsigned int k = 0; k < n; k++)
		if (e[k].to != e[k].se->cpu)
			return true;
	return false;	/* as they are: the lag moves may still help */
}

/*
 * Order e[0..n) for the packing. The solver leaves them heaviest first,
 * which is by rate for entities that share by weight, but the rate of an
 * entity held at its cap is its quota, whatever its weight: packed by
 * weight, capped entities whose caps fill their pCPUs found no placement
 * where one by rate (first-fit decreasing) does (docs/sched/caps.md, "Caps":
 * "Packed by rate"). So where any is held, by rate, most first.
 */
static void pack_order(struct lag_ent *e, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++)
		if (e[k].capped) {
			qsort(e, n, sizeof(*e), fair_cmp_rate_desc);
			return;
		}
}

/*
 * Beside sleepers, where no static placement was found and a straddler
 * (an entity owed more than the slow pCPU it is on) is left behind: its
 * level is planned as without sleepers (fair_plan_levels(), rotated if it
 * does not pack), on the capacities the sleepers left where they ran, and
 * the other levels stay as they are. Only the entities it moved are
 * marked as moved in this round, so the lag moves still correct the
 * others (marking the whole component, as a re-pack does, switched them
 * off beside the sleepers at nearly every balance: docs/sched/fair-open.md).
 * Nothing is marked packed: the sleepers' wakeups still move the others.
 * Seed 20 #406 of the fair corpus: v60 (0.33 of a 1024 pCPU, in the last
 * level with pCPUs of 1024 and 279) sat on a 279 pCPU 2.3 bounds short.
 */
static void plan_straddlers(struct sched *s, struct lag_ent *e, unsigned int n, uint64_t now)
{
	fair_plan_levels(s, e, n, true);
	for (unsigned int k = 0; k < n; k++) {
		if (e[k].to != e[k].se->cpu)
			e[k].se->lag_moved = s->lag_round;
		e[k].se->lag_packed = false;
	}
	apply(s, e, n, now);
}

/*
 * Re-pack one component's entities e[0..n) if it is over; whether it
 * did. Without sleepers beside them, the entities it places are marked
 * (lag_packed) until their component is over again with no packing
 * found, or they stop being tracked: the periodic load balance, which
 * balances weights and not ideal rates, leaves them where they are.
 */
static bool repack_component(struct sched *s, struct lag_ent *e, unsigned int n, uint64_t now)
{
	uint64_t sum[SCHED_MAX_CPUS], top[SCHED_MAX_CPUS];
	int64_t room[SCHED_MAX_CPUS];
	bool moved, keep;

	fair_rate_sums(s, e, n, sum);
	rate_tops(s, e, n, top);
	/*
	 * Beside sleepers the capacity left is their average use, which
	 * their wakeups scatter: packed to 1/64 of it, the placement was
	 * redone at nearly every balance (3941 of the 5755 migrations of
	 * seed 1 #117 of the fair corpus, light entities moved every
	 * 16-32 ms), while only an error of about their noise is worth it.
	 */
	if (!over(s, sum, top, sleepers_beside(s, e, n)))
		return false;
	pack_order(e, n);
	fair_fresh_room(s, room);
	moved = fair_pack(s, e, n, room, NULL);
	if (!moved && sleepers_beside(s, e, n))
		moved = pack_sleepers_elsewhere(s, e, n);
	if (!moved && sleepers_beside(s, e, n) && uncapped_ungrouped(e, n) &&
	    lag_worth_a_move(e, n) && fair_straddler_behind(s, e, n)) {
		plan_straddlers(s, e, n, now);
		return false;
	}
	if (!moved && !sleepers_beside(s, e, n) && uncapped_ungrouped(e, n) &&
	    lag_worth_a_move(e, n)) {	/* no static placement: rotate */
		fair_plan_levels(s, e, n, false);
		moved = true;
	} else if (!moved && !sleepers_beside(s, e, n) && lag_worth_a_move(e, n)) {
		moved = fair_rotate_around_bound(s, e, n);	/* caps or groups */
	}
	if (moved)
		apply(s, e, n, now);
	keep = moved && !sleepers_beside(s, e, n);
	for (unsigned int k = 0; k < n; k++)
		e[k].se->lag_packed = keep;
	return moved;
}

/*
 * Re-pack every component of the n solved entities (s->lag_ents, grouped
 * by component); the entities of a re-packed one are marked as moved in
 * this round, so that the lag moves leave them alone until the next
 * balance. An entity no longer tracked (blocked since) loses its mark.
 */
void fair_repack(struct sched *s, unsigned int n, uint64_t now)
{
	unsigned int i = 0;

	for (unsigned int id = 0; id < s->nr_ent_slots; id++)
		if (s->ent[id] && !s->ent[id]->lag_tracked)
			s->ent[id]->lag_packed = false;

	while (i < n && s->lag_ents[i].comp < 0)
		i++;
	while (i < n) {
		unsigned int j = i;

		while (j < n && s->lag_ents[j].comp == s->lag_ents[i].comp)
			j++;
		if (repack_component(s, &s->lag_ents[i], j - i, now))
			for (unsigned int k = i; k < j; k++)
				s->lag_ents[k].se->lag_moved = s->lag_round;
		i = j;
	}
}
