// SPDX-License-Identifier: MIT
/*
 * Where the fluid-ideal balance (fairlag.c) wants a sleeper to wake when
 * no pCPU is idle and its previous pCPU is one of:
 *
 * - full: it runs an entity whose fair share is the whole pCPU. Time a
 *   sleeper takes there is lost to that entity for good, while entities
 *   that share pCPUs get it back through their lags; so the wakeup goes
 *   to the least loaded pCPU that is not full;
 * - tight: it runs an entity of a tight level of the ideal (lag_tight,
 *   fairlag.c: the heaviest entities whose rates add up to all of the
 *   fastest pCPUs, none of whose capacity the sleepers' use is taken
 *   from). The level needs all of its pCPUs, as a whole entity needs its
 *   own, so the wakeup goes where it does from a full pCPU, to one that
 *   is neither (seed 8 #426 of the fair corpus: three heavy entities of
 *   0.33, 0.30 and 0.23 of a 1024 pCPU, a tight level on two pCPUs of
 *   333 and one of 205, where sleepers woke on the 333 ones, which no
 *   entity had whole, for 3-4% of their time);
 * - behind: its tracked entities are behind their ideal in sum by a
 *   move's worth (FAIR_LAG_MOVE_NS). Time a sleeper takes there adds to
 *   what they are owed, while beside tracked entities that are ahead in
 *   sum by as much it is time the balance would take from them anyway
 *   (a light busy entity that runs whenever the sleepers beside it
 *   sleep); so the wakeup goes to the pCPU furthest ahead.
 *
 * And when some pCPU is idle that the capacity rule (entity_fits_cpu():
 * util_avg with the kernel's margin) finds too small, it goes to the
 * biggest idle one if that one's capacity covers its demand
 * (fair_sleepers.c) with IDLE_SPARE_SHIFT to spare:
 * time taken there is no one's, while on a busy pCPU it is some busy
 * entity's, and the ideal owes a sleeper its demand or its share, not a
 * fast pCPU (seed 10 #289 of the fair corpus: fourteen busy entities on
 * fourteen 1024 pCPUs, sleepers that the capacity rule kept off the
 * seventeen idle 167 pCPUs; a quarter to spare instead of 1/64 helped
 * that scenario less).
 *
 * Both lists are made at each balance and handed out round robin, so a
 * burst of wakeups between two balances spreads out; a wakeup looks at up
 * to TARGET_TRIES entries of the pCPUs it may use, skipping the others
 * (counted among the tries, a sleeper pinned to one cluster found none
 * of its pCPUs where other clusters' came first). O(m^2) at worst per
 * balance for m pCPUs (insertion into short lists), O(m) at worst per
 * wakeup, O(1) for one that may use every pCPU.
 */
#include "sched/internal.h"

#define TARGET_TRIES	4	/* entries of its pCPUs a wakeup looks at */
#define IDLE_SPARE_SHIFT 6	/* a demand fits an idle pCPU with 1/64 to spare */

/* Insert cpu into t, ascending by key[] (ties keep pCPU order). */
static void targets_insert(struct fair_wake_targets *t, unsigned int cpu, const int64_t *key)
{
	unsigned int k = t->nr++;

	while (k && key[t->cpu[k - 1]] > key[cpu]) {
		t->cpu[k] = t->cpu[k - 1];
		k--;
	}
	t->cpu[k] = (uint16_t)cpu;
}

/* The next pCPU of t that se may use and fits, or -1. */
static int targets_next(const struct sched *s, struct fair_wake_targets *t,
			const struct sched_entity *se)
{
	unsigned int tries = 0;

	for (unsigned int seen = 0; seen < t->nr && tries < TARGET_TRIES; seen++) {
		unsigned int cpu = t->cpu[t->next++ % t->nr];

		if (!sched_cpumask_test(&se->allowed, cpu))
			continue;
		tries++;
		if (entity_fits_cpu(s, se, cpu))
			return (int)cpu;
	}
	return -1;
}

/* Mark the full pCPUs and sum the lags of the n solved entities per pCPU. */
static void scan_tracked(struct sched *s, unsigned int n, int64_t *lag_sum)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		s->rq[cpu].lag_full = false;
		s->rq[cpu].lag_tight = false;
		lag_sum[cpu] = 0;
	}
	for (unsigned int k = 0; k < n; k++) {
		struct sched_entity *se = s->lag_ents[k].se;
		struct sched_rq *rq = &s->rq[se->cpu];

		if (!se->lag_tracked)
			continue;
		if (se->lag_rate >= rq->lag_cap - rq->lag_cap / 32)
			rq->lag_full = true;
		rq->lag_tight |= se->lag_tight;
		lag_sum[se->cpu] += se->lag;
	}
}

/* Both lists, from the n entities the balance solved (s->lag_ents). */
void fair_wake_targets_update(struct sched *s, unsigned int n)
{
	int64_t load[SCHED_MAX_CPUS], lag_sum[SCHED_MAX_CPUS];
	const int64_t move = (int64_t)FAIR_LAG_MOVE_NS;

	scan_tracked(s, n, lag_sum);
	s->wake_free.nr = s->wake_free.next = 0;
	s->wake_ahead.nr = s->wake_ahead.next = 0;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];

		rq->lag_behind = lag_sum[cpu] > move;
		if (rq->lag_full || rq->lag_tight)
			continue;
		load[cpu] = (int64_t)((rq->lag_weight << 20) / (rq->capacity ? rq->capacity : 1));
		targets_insert(&s->wake_free, cpu, load);
		if (lag_sum[cpu] < -move)
			targets_insert(&s->wake_ahead, cpu, lag_sum);
	}
}

/*
 * A pCPU for se waking while no pCPU is idle, whose previous pCPU is
 * prev: another when prev is full or behind (see above), else -1.
 */
int fair_wake_target(struct sched *s, const struct sched_entity *se, unsigned int prev)
{
	const struct sched_rq *rq = &s->rq[prev];

	if (rq->lag_full || rq->lag_tight)
		return targets_next(s, &s->wake_free, se);
	if (rq->lag_behind)
		return targets_next(s, &s->wake_ahead, se);
	return -1;
}

/*
 * May se, waking while no pCPU it fits is idle, go to the idle pCPU cpu
 * that the capacity rule finds too small (see above)? A sleeper whose
 * demand is known and fits cpu's capacity with IDLE_SPARE_SHIFT to
 * spare, and whose uclamp minimum does not ask for more.
 */
bool fair_wake_idle_ok(const struct sched *s, const struct sched_entity *se, unsigned int cpu)
{
	uint64_t room = (uint64_t)s->rq[cpu].capacity << (RATE_SHIFT - 10);

	if (!se->sl_init)
		return false;
	if (uclamp_is_used(s) && se->uc_eff[UCLAMP_MIN] > s->rq[cpu].capacity)
		return false;
	return se->sl_demand + (se->sl_demand >> IDLE_SPARE_SHIFT) <= room;
}
