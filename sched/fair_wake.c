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
 * Before these, a starved sleeper (fair_sleepers.c: one that progressed
 * below its busy rate, the share it would get were every entity busy,
 * while it was runnable beyond a slice per wakeup) wakes, when prev does
 * not give it that rate, on a pCPU that does: one where its weight's
 * part of the fair weight queued there, times the capacity, is at least
 * that rate; first among the pCPUs ahead, then the ones not full, then
 * any, least loaded first; else it stays. That is the floor the ideal
 * owes a sleeper (docs/sched.md, "What fair means"): EEVDF gives it its
 * weight's part of the pCPU it waits on, and a pCPU crowded by heavier
 * entities (sleepers whose pCPU no rule makes them leave, beside busy
 * entities whose pCPUs are full and take no one) holds it below that for
 * good (seed 6 #371 of the fair corpus: five sleepers on one pCPU of 561
 * for the run, one at 0.59 of its floor). A full or tight pCPU (the last
 * of the three lists) only when it is no faster than prev: the floor a
 * sleeper is owed is at most the slowest pCPU it may use, and a sleeper
 * starved on a slow pCPU because its busy rate is more than that pCPU
 * gives took a fast pCPU's time from the entity owed all of it, while
 * the slow one idled in its absence (seed 4 #133: a periodic sleeper of
 * busy rate 0.79 sent 129 times from its 548 pCPU onto the 1024 ones of
 * busy entities owed them whole; the 548 pCPU idled 0.91 s, and the
 * busy v0 ended 0.37 s short, 1.96x the bound). Among those, it passes
 * by first the ones whose tracked entities are behind by a move's worth:
 * what it takes there is lost for good to entities already short, and
 * its rate, which only the pCPUs of light owners give, picked the same
 * lightest owner at every wakeup, so the loss fell on one entity
 * instead of being spread over the owners that give the rate (seed 18
 * #303: two light starved sleepers beside the twelve whole entities of
 * thirteen pCPUs, sent at each wakeup to the pCPU of v17, weight 25,
 * which ended 225 ms short, 1.17x the bound, while the others lost 0-16
 * ms). Where every such pCPU is behind, it goes to one of them still:
 * the sleeper's floor is owed too.
 *
 * A starved sleeper owed nearly all of a pCPU while runnable (its busy
 * rate 3/4 to 33/32 of prev's capacity) finds no pCPU that gives it that
 * rate wherever anyone else is queued; where it is also deeply starved
 * (it got less than half the work that rate owes it) and prev does not
 * give it half of it, it goes where it gets half: first among the pCPUs
 * ahead, then the ones not full. On the slow pCPUs heavier sleepers
 * gather on a pCPU no tracked entity is on (nothing makes them leave),
 * and its own floor needs it beside light entities only (seed 17 #496:
 * a random sleeper of weight 303 owed 0.977 of a 140 pCPU, beside
 * sleepers of 1612-7708, at 0.63 of its floor). The limits keep it to
 * that case: starved at its rate, or owed more than its pCPU (it waits
 * on a slow pCPU), a sleeper moved this way only perturbed the light
 * busy entities beside it (docs/sched/fair-sleepers.md).
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
 * And when pCPUs are idle but it fits none of them (nor a pCPU of the
 * lists), a sleeper whose previous pCPU is full or tight goes to the
 * biggest idle pCPU, though its demand is more than that pCPU gives:
 * there it takes no one's time and runs at
 * least at that pCPU's capacity (fairgen's floor: a sleeper progresses
 * at least at its share, at most the slowest pCPU's, while runnable),
 * while on prev every burst waits out the entity owed all of it, or the
 * other way round (fair_wake_full_to_idle()). Seed 758796 #204 of the
 * fair property test: one pCPU of 600 and five of 139, a busy entity of
 * weight 9408 owed 0.547 of a 1024 pCPU and a periodic sleeper of 46092
 * whose demand, 0.174, is more than a 139 pCPU gives. The sleeper woke
 * on the fast pCPU at every burst and, heavier, ran there while the busy
 * one waited 2.75 s, its five slow pCPUs idle: 4.16 s of work for 5.47
 * (12.0x the bound). Sent to a slow pCPU it is backlogged there; after
 * the sleeper memory it is solved as busy and takes the fast pCPU in
 * exchange until it has caught up, the share of it the ideal gives it.
 *
 * And a sleeper whose util is too big for its previous pCPU, though its
 * demand fits there as for an idle pCPU above, counts prev as fitting
 * (fair_wake_prev_ok()): the rules above then apply to it, and it stays
 * on prev if none does, rather than go to the least loaded pCPU its util
 * fits, a faster one where a busy entity runs. Its bursts there took the
 * busy entity's time while prev, which gives it its demand (more than
 * the floor the ideal owes it, at most the slowest pCPU's capacity),
 * idled in its absence (seed 18 #260 of the fair corpus: periodic
 * sleepers of demand 0.19 and 0.19 of a 1024 pCPU, util too big for
 * their 235 pCPUs, sent about 200 times onto the 1024 pCPUs; the two 235
 * pCPUs idled 1.06 s, 0.24 s of work, what the busy entities ended short
 * in sum). Only where it may use a bigger pCPU: pinned to slow pCPUs, it
 * keeps the kernel's least loaded choice among them.
 *
 * The lists are made at each balance and handed out round robin, so a
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
#define NEAR_WHOLE_SHIFT 2	/* nearly whole: busy rate from 3/4 of the pCPU ... */
#define NEAR_WHOLE_OVER	5	/* ... to 33/32 of it */
#define DEEP_SHIFT	1	/* deeply starved: got below 1/2 of what its rate owes */
#define ANY_RATE	(-1)	/* targets_next()'s rate_shift: no rate asked, */
#define FULL_RATE	0	/* ... its busy rate, */
#define HALF_RATE	1	/* ... half of it */
#define ANY_CAP		UINT32_MAX	/* targets_next_upto(): no capacity limit */

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

/*
 * Would se, waking on cpu, run there at its busy rate (sl_busy_rate) >>
 * shift while runnable: is its part of the fair weight queued there, times
 * the capacity, at least that?
 */
static bool gives_rate(const struct sched *s, const struct sched_entity *se, unsigned int cpu,
		       unsigned int shift)
{
	const struct sched_rq *rq = &s->rq[cpu];
	unsigned __int128 local = (unsigned __int128)se->weight * rq->capacity << (RATE_SHIFT - 10);

	return local >= (unsigned __int128)(se->sl_busy_rate >> shift) * (rq->fair_weight + se->weight);
}

static bool gives_busy_rate(const struct sched *s, const struct sched_entity *se, unsigned int cpu)
{
	return gives_rate(s, se, cpu, FULL_RATE);
}

/*
 * Is cpu full or tight and its tracked entities behind by a move's worth?
 * A starved sleeper's last resort passes it by first (see above).
 */
static bool owner_behind(const struct sched *s, unsigned int cpu)
{
	const struct sched_rq *rq = &s->rq[cpu];

	return rq->lag_behind && (rq->lag_full || rq->lag_tight);
}

/*
 * The next pCPU of t that se may use and fits, other than skip, of at most
 * max_cap capacity, and where it gets its busy rate >> rate_shift unless
 * that is ANY_RATE; or -1. With spare_behind, not one that owner_behind()
 * finds.
 */
static int targets_next_upto(const struct sched *s, struct fair_wake_targets *t,
			     const struct sched_entity *se, int skip, int rate_shift,
			     unsigned int max_cap, bool spare_behind)
{
	unsigned int tries = 0;

	for (unsigned int seen = 0; seen < t->nr && tries < TARGET_TRIES; seen++) {
		unsigned int cpu = t->cpu[t->next++ % t->nr];

		if (!sched_cpumask_test(&se->allowed, cpu) || (int)cpu == skip ||
		    s->rq[cpu].capacity > max_cap)
			continue;
		tries++;
		if (spare_behind && owner_behind(s, cpu))
			continue;
		if (entity_fits_cpu(s, se, cpu) &&
		    (rate_shift == ANY_RATE || gives_rate(s, se, cpu, (unsigned int)rate_shift)))
			return (int)cpu;
	}
	return -1;
}

/* targets_next_upto() of any capacity, owners behind or not. */
static int targets_next(const struct sched *s, struct fair_wake_targets *t,
			const struct sched_entity *se, int skip, int rate_shift)
{
	return targets_next_upto(s, t, se, skip, rate_shift, ANY_CAP, false);
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

/* The lists, from the n entities the balance solved (s->lag_ents). */
void fair_wake_targets_update(struct sched *s, unsigned int n)
{
	int64_t load[SCHED_MAX_CPUS], lag_sum[SCHED_MAX_CPUS];
	const int64_t move = (int64_t)FAIR_LAG_MOVE_NS;

	scan_tracked(s, n, lag_sum);
	s->wake_free.nr = s->wake_free.next = 0;
	s->wake_ahead.nr = s->wake_ahead.next = 0;
	s->wake_any.nr = s->wake_any.next = 0;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];

		rq->lag_behind = lag_sum[cpu] > move;
		load[cpu] = (int64_t)((rq->lag_weight << 20) / (rq->capacity ? rq->capacity : 1));
		targets_insert(&s->wake_any, cpu, load);
		if (rq->lag_full || rq->lag_tight)
			continue;
		targets_insert(&s->wake_free, cpu, load);
		if (lag_sum[cpu] < -move)
			targets_insert(&s->wake_ahead, cpu, lag_sum);
	}
}

/*
 * Is the starved sleeper se owed nearly all of prev while runnable, and
 * deeply starved (see above)?
 */
static bool starved_near_whole(const struct sched *s, const struct sched_entity *se,
			       unsigned int prev)
{
	uint64_t room = capacity_rate(s->rq[prev].capacity);

	return (se->sl_got << DEEP_SHIFT) < se->sl_owed &&
	       se->sl_busy_rate >= room - (room >> NEAR_WHOLE_SHIFT) &&
	       se->sl_busy_rate <= room + (room >> NEAR_WHOLE_OVER);
}

/*
 * A pCPU for the starved sleeper se (fair_sleepers.c) when prev does not
 * give it its busy rate: one that does, where the tracked entities are
 * ahead, else not full, else any no faster than prev (first passing by
 * the pCPUs of owners behind, then not); failing those, for one owed
 * nearly all of prev and deeply starved that prev does not give half its rate, one
 * that does, ahead else not full; -1 (stay) if none.
 */
static int starved_target(struct sched *s, const struct sched_entity *se, unsigned int prev)
{
	int t = -1;

	if (gives_busy_rate(s, se, prev))
		return -1;
	t = targets_next(s, &s->wake_ahead, se, (int)prev, FULL_RATE);
	if (t < 0)
		t = targets_next(s, &s->wake_free, se, (int)prev, FULL_RATE);
	if (t < 0)	/* full or tight: not faster than prev, owners behind last (see above) */
		t = targets_next_upto(s, &s->wake_any, se, (int)prev, FULL_RATE,
				      s->rq[prev].capacity, true);
	if (t < 0)
		t = targets_next_upto(s, &s->wake_any, se, (int)prev, FULL_RATE,
				      s->rq[prev].capacity, false);
	if (t < 0 && starved_near_whole(s, se, prev) && !gives_rate(s, se, prev, HALF_RATE)) {
		t = targets_next(s, &s->wake_ahead, se, (int)prev, HALF_RATE);
		if (t < 0)
			t = targets_next(s, &s->wake_free, se, (int)prev, HALF_RATE);
	}
	return t;
}

/*
 * A pCPU for se waking while no pCPU is idle, whose previous pCPU is
 * prev: another when prev is full or behind (see above), else -1.
 */
int fair_wake_target(struct sched *s, const struct sched_entity *se, unsigned int prev)
{
	const struct sched_rq *rq = &s->rq[prev];

	if (se->sl_starved)
		return starved_target(s, se, prev);
	if (rq->lag_full || rq->lag_tight)
		return targets_next(s, &s->wake_free, se, -1, ANY_RATE);
	if (rq->lag_behind)
		return targets_next(s, &s->wake_ahead, se, -1, ANY_RATE);
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
	uint64_t room = capacity_rate(s->rq[cpu].capacity);

	if (!se->sl_init)
		return false;
	if (uclamp_is_used(s) && se->uc_eff[UCLAMP_MIN] > s->rq[cpu].capacity)
		return false;
	return se->sl_demand + (se->sl_demand >> IDLE_SPARE_SHIFT) <= room;
}

/*
 * May the sleeper se, waking on prev while some pCPU is idle, none it
 * fits, go to the biggest idle one although its demand is more (see
 * above)? When fair_wake_target() found no pCPU for it and prev is full
 * or tight: a sleeper with a known demand, not one the balance tracks (an
 * entity owed all of prev wakes where it is owed it).
 */
bool fair_wake_full_to_idle(const struct sched *s, const struct sched_entity *se,
			    unsigned int prev)
{
	const struct sched_rq *rq = &s->rq[prev];

	return !s->nr_groups && se->sl_init && !se->lag_tracked && (rq->lag_full || rq->lag_tight);
}

/*
 * May the sleeper se, waking on prev, which the capacity rule finds too
 * small for it, count prev as fitting (see above)? A sleeper the balance
 * does not track whose demand fits prev as fair_wake_idle_ok() has it,
 * and which may use a bigger pCPU (where the capacity rule would send it).
 */
bool fair_wake_prev_ok(const struct sched *s, const struct sched_entity *se, unsigned int prev)
{
	return !se->lag_tracked && fair_wake_idle_ok(s, se, prev) &&
	       sched_cpumask_intersects(&s->cluster[s->rq[prev].cluster].bigger, &se->allowed);
}
