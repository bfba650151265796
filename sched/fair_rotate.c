// SPDX-License-Identifier: MIT
/*
 * Planned rotation of the fluid-ideal balance (docs/sched.md, "The
 * fluid-ideal balance").
 *
 * The re-pack (fair_repack.c) places whole entities so that every pCPU's
 * ideal rates fit it. On mixed capacities that is often impossible: the
 * ideal may need an entity to spend part of its time on a fast pCPU and
 * part on a slow one (five entities of 0.37-0.99 of a 1024 pCPU sharing
 * three 1024 pCPUs and two of 242: each must run on the slow ones for a
 * while, as in any preemptive schedule on uniform machines). The lag
 * moves then rotated by predicted lags, one entity at a time, which
 * churned and left light entities 5-15% off.
 *
 * So when no static placement fits, the balance plans the rotation of
 * the whole component for the next interval: the placement is packed as
 * by the re-pack, but by what each entity should get over the next
 * interval, its ideal rate plus its lag paid back over ROTATE_NS, most
 * first (the level algorithm of Horvath, Lam and Sethi: the work furthest
 * behind its level gets the fastest processors). An entity still stays
 * where it is while its pCPU has room and no slower pCPU has room for its
 * rate (slower_fits()); one that fits nowhere goes where
 * the most room is left, and falls behind there until its need outranks
 * an entity's that does fit, which then takes its turn on the slow pCPU.
 * One ahead of its ideal is placed by its rate, not by its need
 * (fit_size()).
 * Over a few intervals each entity spends on each pCPU the share of time
 * its ideal needs, switched at balance boundaries; the payback weights
 * share each pCPU within an interval.
 *
 * Within one level of the ideal (fair_levels.c, which gives the pCPUs)
 * the m entities that need the most are placed first, one per pCPU, and
 * only the others share: placed by need alone, the entity that needed
 * the least came last and fitted a slow pCPU by itself, which it then had
 * whole, ahead of its ideal, interval after interval (seed 2 #168: 0.099
 * of a 1024 pCPU alone on one of 0.152), while the ones behind shared a
 * fast pCPU. The others, those ahead last, then share as before (where
 * they are if it has room left, else by best fit), and the payback
 * weights hold back the ones ahead beside the ones behind.
 *
 * Cost: O(n log n + n x m) per balance for a component of n entities on
 * m pCPUs whose static packing failed; nothing on the per-decision paths.
 */
#include "sched/internal.h"

/*
 * A lag is paid back over this in the rotation's order: shorter swaps
 * more often (more migrations), longer lets the lags swing further.
 */
#define ROTATE_NS	(64 * NSEC_PER_MSEC)

/* What e should get over the next interval: its rate plus its lag over ROTATE_NS, >= 0. */
static uint64_t need(const struct lag_ent *e)
{
	int64_t pay = (int64_t)((__int128)e->se->lag * ((__int128)1 << RATE_SHIFT) / (int64_t)ROTATE_NS);

	if (pay < 0 && (uint64_t)-pay > e->rate)
		return 0;
	return (uint64_t)((int64_t)e->rate + pay);
}

/* The largest capacity se may have on one pCPU of `may`: at most what it can get. */
static uint64_t largest_room(const struct sched *s, const struct sched_cpumask *may)
{
	uint64_t cap = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(may, cpu) && s->rq[cpu].lag_cap > cap)
			cap = s->rq[cpu].lag_cap;
	return cap;
}

/* Need (pred, set by fair_rotate()) descending, then id: a deterministic order. */
static int cmp_need_desc(const void *a, const void *b)
{
	const struct lag_ent *x = a, *y = b;

	if (x->pred != y->pred)
		return x->pred < y->pred ? 1 : -1;
	return x->se->id - y->se->id;
}

/*
 * The pCPU of `may` with the least room that fits `want`, else the one
 * with the most room (`cur`, where the entity is, on a tie).
 */
static int place(const struct sched *s, const struct sched_cpumask *may, const int64_t *room,
		 uint64_t want, int cur)
{
	int fit = -1, most = sched_cpumask_test(may, (unsigned int)cur) ? cur : -1;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (!sched_cpumask_test(may, cpu))
			continue;
		if (room[cpu] >= (int64_t)want && (fit < 0 || room[cpu] < room[fit]))
			fit = (int)cpu;
		if (most < 0 || room[cpu] > room[most])
			most = (int)cpu;
	}
	return fit >= 0 ? fit : most;
}

/*
 * Does e's rate (or its need, if more) fit the room of a pCPU of `may`
 * slower than the one it is on? Then it does not stay where it is: a fast
 * pCPU's room is for the work that fits nowhere (the level algorithm
 * gives the fastest pCPUs to the most work). Kept on the fast pCPU of a
 * rotating level beside the entity that owned it, two light entities left
 * a slow pCPU of theirs to two lighter ones, who ran 14% over their
 * ideals for the first seconds and never paid it back (seed 3 #285 of the
 * fair corpus, every vCPU busy: 1.79x the bound).
 */
static bool slower_fits(const struct sched *s, const struct sched_cpumask *may, const int64_t *room,
			const struct lag_ent *e)
{
	unsigned int here = s->rq[e->se->cpu].capacity;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(may, cpu) && s->rq[cpu].capacity < here &&
		    room[cpu] >= (int64_t)(e->pred > e->rate ? e->pred : e->rate))
			return true;
	return false;
}

/*
 * The room e is placed by, when it is not one of the m owners: its need,
 * or, for one ahead of its ideal (need below its rate), a fit for its
 * rate that takes a FAIR_PAYBACK_CLAMP-th of it from the room. Placed by
 * its need (0 when it is ahead by its rate over ROTATE_NS), such an
 * entity fitted best the pCPU whose room was
 * exactly used up, the fast one of the entity furthest behind, and took
 * none of it; so every entity ahead piled onto that pCPU, ran there at
 * the quarter of its weight the payback leaves it, and the one behind
 * ended 12% short while the heavy one's room on slow pCPUs went to a
 * light one alone (seed 561342 #252 of the fair corpus, every vCPU
 * busy: 5.8x the bound). Its rate is what it takes where it is not
 * held; held back, a quarter of it.
 */
static uint64_t fit_size(const struct lag_ent *e)
{
	return e->pred < e->rate ? e->rate : e->pred;
}

static uint64_t room_taken(const struct lag_ent *e)
{
	uint64_t held = e->rate / FAIR_PAYBACK_CLAMP;

	return e->pred < e->rate && e->pred < held ? held : e->pred;
}

/*
 * The placement of e[0..n) (one component or one level of it, whose
 * static packing failed) on the pCPUs of `only` (NULL: each one's
 * affinity) for the next interval, into e[k].to; reorders e[] by need.
 * room[] is each pCPU's capacity for the tracked entities, with the
 * packing's tolerance. With `only`, the first as many entities as its
 * pCPUs, by need, get one each. `single`: as many pCPUs as entities, whose
 * rates add up to all of them (a saturated level of the ideal), so each
 * gets a pCPU to itself: a second entity on one would leave another idle.
 */
void fair_rotate(const struct sched *s, struct lag_ent *e, unsigned int n, int64_t *room,
		 const struct sched_cpumask *only, bool single)
{
	struct sched_cpumask freem;
	unsigned int owners = 0;

	/*
	 * Ranked by the need itself: capped first, every entity a pCPU's
	 * worth behind tied at that pCPU, and the lowest id won every tie
	 * (seed 27 #45 of the busy corpus: the entity of id 9, 0.436 of a
	 * 1024 pCPU, lost the one fast pCPU of its level to those of ids 5
	 * and 8 at every balance and ended 280 ms behind, 16.6% short).
	 */
	for (unsigned int k = 0; k < n; k++)
		e[k].pred = need(&e[k]);
	qsort(e, n, sizeof(*e), cmp_need_desc);
	for (unsigned int k = 0; k < n; k++) {
		uint64_t cap = largest_room(s, only ? only : &e[k].se->allowed);

		/* no more than a pCPU can give: one whole pCPU's entity stays on it */
		if (e[k].pred > cap)
			e[k].pred = cap;
	}
	if (only) {
		sched_cpumask_clear(&freem);
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			if (sched_cpumask_test(only, cpu)) {
				sched_cpumask_set(&freem, cpu);
				owners++;
			}
	}
	for (unsigned int k = 0; k < n; k++) {
		bool owner = k < owners;	/* one of the m that need the most: a pCPU of its own */
		const struct sched_cpumask *may = owner ? &freem : only ? only : &e[k].se->allowed;
		uint64_t fit = owner ? e[k].pred : fit_size(&e[k]);
		int to = e[k].se->cpu;

		if ((only && !sched_cpumask_test(may, (unsigned int)to)) ||
		    room[to] < (int64_t)e[k].pred || slower_fits(s, may, room, &e[k]))
			to = place(s, may, room, fit, e[k].se->cpu);
		room[to] -= (int64_t)(owner ? e[k].pred : room_taken(&e[k]));
		if (single || fair_whole_pcpu(&s->rq[to], e[k].rate))
			room[to] = -1;
		if (owner)
			freem.bits[to / 64] &= ~(1ull << (to % 64));
		e[k].to = to;
	}
}
