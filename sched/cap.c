// SPDX-License-Identifier: MIT
/*
 * Caps: a quota of run time per period on a fair entity (cgroup cpu.max,
 * libvirt's <period>/<quota>; docs/sched/caps.md "Caps").
 *
 * The quota is time, not work: cgroup and libvirt count the time a task is
 * on a CPU, whatever that CPU's speed. Periods are counted from time 0, so
 * the schedule is deterministic and needs no per-entity timer. Run time is
 * charged to the period it falls in by every accounting update (an overrun
 * past the quota is paid in the next period); when the quota is used up the
 * pCPU reschedules, schedule_rq() throttles the entity (off its runqueue,
 * on rq->cap_throttled) and the first tick or event at or after the
 * period's end puts it back on that runqueue. sched_next_event() reports
 * both times, so a caller that wakes for them enforces the cap exactly.
 * A throttled entity's hole is filled from elsewhere (cap_hole_fill(),
 * at the end of this file), by the rules that say who may take it.
 */
#include "sched/internal.h"
#include "sched/fairlag.h"

#define HOLE_GROUP_AHEAD_SLICES	1	/* a group's hole: no taker a move's worth and this far ahead */
#define PUSH_ROOM_SHIFT		7	/* an entity owed all but 1/128 of its pCPU lends nothing */
#define HOLE_AHEAD_SLICES	2	/* a hole's runnable entities all this far ahead share it */
#define HOLE_ALL_AHEAD_SLICES	1	/* ... with groups: all of them this far ahead */
#define ALL_BUT_HELD_DIV	8	/* least laxity for a tight cap with under slice/8 to spare */

/* Run time charged to period `index` by se's own cap. */
static uint64_t cap_used_in(const struct sched_entity *se, uint64_t index)
{
	return cap_charged_in(index, se->cap_index, se->cap_used, se->cap_quota);
}

/* Charge delta ns of run time ending at now to se's current period. */
void cap_charge(struct sched_rq *rq, struct sched_entity *se, uint64_t delta, uint64_t now)
{
	uint64_t index = now / se->cap_period;

	if (index != se->cap_index) {
		uint64_t into = now - index * se->cap_period;

		se->cap_used = cap_used_in(se, index) + (delta < into ? delta : into);
		se->cap_index = index;
	} else {
		se->cap_used += delta;
	}
	if (se->cap_used >= se->cap_quota)
		resched_rq(rq);
}

static bool own_exhausted(const struct sched_entity *se, uint64_t now)
{
	return se->cap_period && se->cap_index == now / se->cap_period &&
	       se->cap_used >= se->cap_quota;
}

/*
 * Has se used up the quota of the period that contains now, its own or a
 * group's above it (group.c)? Only one that has run somewhere can be: a
 * group's quota goes to those that ran.
 */
bool cap_exhausted(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	return own_exhausted(se, now) ||
	       (se->grp_capped && se->cpu >= 0 && group_exhausted_until(s, se, now));
}

/*
 * Is rq's hole a group's alone: every entity throttled there held by a
 * group's quota or its share of one, none by a cap of its own?
 */
static bool group_hole(const struct sched_rq *rq, uint64_t now)
{
	for (const struct slist *p = rq->cap_throttled.next; p != &rq->cap_throttled; p = p->next)
		if (own_exhausted(slist_entry(p, struct sched_entity, cap_link), now))
			return false;
	return true;
}

/*
 * May se fill rq's hole by its lead (cap_hole_fill(), below)? Not
 * where the hole is a group's and se is more than a move's worth
 * (FAIR_LAG_MOVE_NS, newidle's own limit outside holes) and
 * HOLE_GROUP_AHEAD_SLICES slices ahead of its ideal.
 * A group's hole comes back in every period of the group's cap (its
 * quota, or its members' shares, used up before the period ends); the
 * waiting entity furthest behind was taken ahead or not, and a light one
 * far ahead (no one behind waiting) collected those holes period after
 * period and kept its lead: seed 7 #48 of the groups corpus, v2 (ideal
 * 0.039 of a pCPU) pulled 122 times into the holes g3's quota and shares
 * left on three pCPUs whose rates add up exactly, ahead at each, 303 ms
 * of work for an ideal of 205 (1.96 x the bound); seed 5 #147, v14
 * (ideal 116 ms) in the holes of g1's shares, 168 ms (1.03 x). The hole
 * of an entity's own cap still takes the one furthest behind, ahead or
 * not (refusing ahead ones there too lost others: docs/sched/groups-rules.md).
 * O(entities throttled on rq), only for a taker that far ahead.
 */
static bool cap_hole_lead_ok(const struct sched *s, const struct sched_rq *rq,
			     const struct sched_entity *se, uint64_t now)
{
	int64_t limit = FAIR_LAG_MOVE_NS + HOLE_GROUP_AHEAD_SLICES * (int64_t)s->cfg.slice_ns;

	return !s->nr_groups || lag_now(s, se, now) >= -limit || !group_hole(rq, now);
}

/* Woken with the quota used up: throttled where it last ran, not queued. */
void cap_hold(struct sched *s, struct sched_entity *se, uint64_t now)
{
	uint64_t until = own_exhausted(se, now) ? (se->cap_index + 1) * se->cap_period : 0;
	uint64_t group_until = group_exhausted_until(s, se, now);

	se->cap_keep_lag = false;
	if (group_until) {
		group_note_throttle(s, se, now);
		if (group_until > until)
			until = group_until;
		se->cap_keep_lag = !own_exhausted(se, now) && !group_throttle_binds(s, se, now);
	}
	se->state = SCHED_THROTTLED;
	se->cap_throttled = true;
	se->cap_until = until;
	se->throttle_start = now;
	se->st.nr_throttles++;
	slist_add_tail(&se->cap_link, &s->rq[se->cpu].cap_throttled);
	sched_emit_entity(s, SCHED_EV_THROTTLE, se, now);
}

/*
 * se, tight and held by its own cap, has just been throttled on rq: the
 * entities queued there that are behind their ideals go to lag 0 if they
 * are past V. While se ran at the largest weight V stood still, so one
 * that ran past V in the hole before stays past it through se's quota,
 * and a light one ahead of its ideal, below V, took the first tick of
 * every hole (seed 13 #102 of the caps corpus: v3, weight 32 beside v1
 * capped at 8.044 ms every 10, 98 ms for an ideal of 59; the light ones
 * began 273 of v1's 488 holes). O(entities queued on rq), once per
 * throttle of a tight entity. Not with groups (their corpus lost 1 #148
 * and 11 #14 to it, docs/sched/caps-open.md).
 */
static void hole_behind_eligible(struct sched *s, struct sched_rq *rq,
				 const struct sched_entity *se, uint64_t now)
{
	if (s->nr_groups || !fair_cap_holds(s, se) || !fair_cap_tight(s, se))
		return;
	for (const struct slist *pos = rq->queued.next; pos != &rq->queued; pos = pos->next) {
		struct sched_entity *o = slist_entry(pos, struct sched_entity, rq_link);

		if (o != rq->curr && o->class == &fair_sched_class && o->lag_tracked &&
		    !entity_eligible(rq, o) && lag_now(s, o, now) > 0)
			fair_place_at_v(rq, o);
	}
}

/* Out of quota: off the runqueue until the period ends (schedule_rq()). */
void cap_throttle(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint64_t now)
{
	dequeue_entity(s, rq, se, DEQ_THROTTLE, now);
	cap_hold(s, se, now);
	hole_behind_eligible(s, rq, se, now);
	/*
	 * Pushed for what it had left of one period (cap_push_loser()), it
	 * goes back: left beside the entity that lent it the time, it took
	 * from that one in every period (seed 662607 #9: 0.79 x the bound
	 * without the return, 0.69 with). Not where its affinity no longer
	 * allows: it may have changed while it was away.
	 */
	if (se->cap_home) {
		unsigned int home = (unsigned int)se->cap_home - 1;

		se->cap_home = 0;
		if (se->cpu != (int)home && sched_cpumask_test(&se->allowed, home))
			migrate_entity(s, se, home, SCHED_MIGRATE_BALANCE, now);
	}
}

/*
 * Does se, back from its throttling, keep its debt? Where its own cap
 * does not bind in the ideal, its quota fits in one request (so it runs
 * the whole of it at once whenever it is eligible) and the balance has
 * it more than a slice ahead of its ideal. Forgiven, it was eligible at
 * every return as soon as the entity beside it had run past V, and took
 * its whole quota every period whatever its share (seed 16 #179 of the
 * caps corpus: weight 268 beside 33192 on one pCPU, 2.39 ms every 8 ms
 * for a share of 0.008, 56 x the bound; seed 10 #110, 8.9 x). Heavier
 * quotas and entities behind their ideal keep the forgiveness: kept
 * there, their debts moved the others around (docs/sched.md, "Debts
 * kept").
 */
static bool debt_kept(const struct sched *s, const struct sched_entity *se)
{
	return se->cap_period && se->lag_tracked && !fair_cap_holds(s, se) &&
	       se->cap_quota <= s->cfg.slice_ns && se->lag < -(int64_t)s->cfg.slice_ns;
}

/* Does se's own cap leave it less than `spare` of quota a period beyond its ideal rate? */
static bool spare_below(const struct sched *s, const struct sched_entity *se, uint64_t spare)
{
	if (!se->cap_period || !se->lag_tracked || se->cpu < 0 || se->cap_quota <= spare)
		return false;
	return se->lag_rate >= quota_rate_at(se->cap_quota - spare, se->cap_period,
					     s->rq[se->cpu].capacity);
}

/*
 * Does se's own cap leave it less than a slice of quota a period beyond
 * its ideal rate where it is, though it does not bind in the ideal? Then
 * a slice another entity runs inside its period costs it quota for good
 * too: it cannot catch up past its quota. Beside lighter entities its
 * share on its pCPU is above its cap and it runs out of quota in most
 * periods (seed 161803 #16 of the caps corpus: v2, 4.423 ms every 5 ms,
 * ideal 0.855 of its pCPU; the entity that took each 0.58 ms hole ran on
 * to the tick, 0.42 ms into the next period, and v2 was short in 317 of
 * 1000 periods, 1.50 x the bound). Its ideal rate is the balance's, O(1).
 */
static bool cap_nearly_holds(const struct sched *s, const struct sched_entity *se)
{
	return spare_below(s, se, s->cfg.slice_ns);
}

/*
 * Is se's own cap tight and all but binding: its ideal rate where it is
 * leaves it less than an eighth of a slice (ALL_BUT_HELD_DIV) of quota a
 * period to spare? Outside groups. Then least laxity first counts its
 * laxity as a held entity's (fair_cap_urgent()): what it loses inside its
 * period is lost for good as for a binding cap, and held entities beside
 * it, at run weights far above its own, took slices inside its laxity
 * (seed 173205 #148 of the caps corpus: v4, weight 137, 7.733 ms every
 * 10, ideal 0.753 of its pCPU's time, 0.2 ms to spare a period: short in
 * 167 of 500 periods, 2.77 x the bound; 133 and 0.82 x with this, the
 * time it keeps taken from a held one, as the pCPUs have no slack). With any
 * spare below a slice (cap_nearly_holds()), light entities far under
 * their caps took their whole quotas ahead of everyone (seed 3 #198 of
 * the caps corpus 0.13 -> 92 x the bound): their ideal is far below the
 * quota they would then get. O(1).
 */
bool cap_all_but_holds(const struct sched *s, const struct sched_entity *se)
{
	return !s->nr_groups && fair_cap_tight(s, se) &&
	       spare_below(s, se, s->cfg.slice_ns / ALL_BUT_HELD_DIV);
}

/*
 * End se's throttling now (period over, cap changed or removed). One that
 * still wants to run goes back on the runqueue it was throttled on, as a
 * replenished reservation does: where it runs is the balance's question,
 * and moving it at every period would cost a cache each time. The caller
 * reschedules rq when need_resched is set.
 */
void cap_unthrottle(struct sched *s, struct sched_entity *se, uint64_t now)
{
	struct sched_rq *rq = &s->rq[se->cpu];

	slist_del(&se->cap_link);
	se->cap_throttled = false;
	se->st.throttled_ns += now - se->throttle_start;
	if (se->state != SCHED_THROTTLED)
		return;		/* blocked meanwhile: its wakeup enqueues it */
	/*
	 * A debt it left with (it ran ahead of its share while it had
	 * quota) is paid: it got nothing while throttled. Kept, the debt
	 * makes it wait at the start of the period for the others' slices
	 * and it may not get its quota before the period ends. Not where a
	 * group cap that does not bind in the ideal throttled it, nor one
	 * of its own (debt_kept()): it ran ahead of its share, and its debt
	 * keeps it from doing so again.
	 */
	if (se->vlag < 0 && !se->cap_keep_lag && !debt_kept(s, se))
		se->vlag = 0;
	update_rq_clock(s, rq, now);
	enqueue_entity(s, rq, se, ENQ_REPLENISH, now);
	/*
	 * One whose cap binds in the ideal, or nearly (cap_nearly_holds()),
	 * and leaves no more than a slice of its period to spare does not
	 * wait for the running entity's slice to end: that would cost it
	 * quota for good (fair_capped.c).
	 */
	if (rq->curr && rq->curr != se && rq->curr->class == &fair_sched_class &&
	    (fair_cap_holds(s, se) || cap_nearly_holds(s, se)) && fair_cap_tight(s, se))
		rq->curr->protect = false;
	wakeup_preempt(s, rq, se);
}

/* Unthrottle the entities on rq whose period has ended. */
void cap_unthrottle_due(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct slist *pos, *n;

	for (pos = rq->cap_throttled.next; pos != &rq->cap_throttled; pos = n) {
		struct sched_entity *se = slist_entry(pos, struct sched_entity, cap_link);

		n = pos->next;
		if ((int64_t)(se->cap_until - now) <= 0)
			cap_unthrottle(s, se, now);
	}
}

/*
 * Does a member of a capped group throttled on rq run again within a
 * tick? Then rq's hole is not worth a newidle pull: the entity pulled
 * stays beside it when it comes back (seed 1 #136 of the groups corpus:
 * members whose share is a whole pCPU, throttled up to a fraction of a
 * millisecond before their period ended as their group's quota ran out
 * with it, lost a slice to the light member newidle pulled in).
 */
bool cap_hole_short(const struct sched *s, const struct sched_rq *rq, uint64_t now)
{
	const struct slist *pos;

	for (pos = rq->cap_throttled.next; pos != &rq->cap_throttled; pos = pos->next) {
		const struct sched_entity *se = slist_entry(pos, struct sched_entity, cap_link);

		if (se->grp_capped && se->cap_until < now + s->cfg.tick_ns)
			return true;
	}
	return false;
}

/*
 * se's laxity at now: the time left in its period beyond the quota it
 * has left there (INT64_MAX with none left: nothing to wait for).
 */
int64_t cap_laxity(const struct sched_entity *se, uint64_t now)
{
	uint64_t index = now / se->cap_period, used = cap_used_in(se, index);

	if (used >= se->cap_quota)
		return INT64_MAX;
	return (int64_t)((index + 1) * se->cap_period - now) - (int64_t)(se->cap_quota - used);
}

/* The quota se has left in its period at now. */
uint64_t cap_quota_left(const struct sched_entity *se, uint64_t now)
{
	uint64_t used = cap_used_in(se, now / se->cap_period);

	return used < se->cap_quota ? se->cap_quota - used : 0;
}

/* The running entity's quota ends (its own, its groups') and the throttled ones' period ends on rq. */
uint64_t cap_next_event(const struct sched *s, const struct sched_rq *rq)
{
	const struct sched_entity *curr = rq->curr;
	uint64_t next = s->grp ? group_cap_next(s, rq) : UINT64_MAX;
	const struct slist *pos;

	if (curr && curr->on_rq && curr->cap_period) {
		uint64_t used = cap_used_in(curr, rq->clock / curr->cap_period);

		used = rq->clock + (used < curr->cap_quota ? curr->cap_quota - used : 0);
		if (used < next)
			next = used;
	}
	for (pos = rq->cap_throttled.next; pos != &rq->cap_throttled; pos = pos->next) {
		const struct sched_entity *se = slist_entry(pos, struct sched_entity, cap_link);

		if (se->cap_until < next)
			next = se->cap_until;
	}
	return next;
}

/*
 * The range of every cap, an entity's or a group's (quota 0: no cap): a
 * period the tick can police, and a quota from SCHED_CAP_QUOTA_MIN_NS up to
 * one period per pCPU it may run on at once (an entity one, a group's
 * members every pCPU). The errors say whose cap it is, in their own words.
 */
int cap_check_range(const struct sched *s, bool group, uint64_t quota, uint64_t period,
		    char *err, size_t errlen)
{
	if (!quota)
		return 0;
	if (period < SCHED_CAP_PERIOD_MIN_NS || period > SCHED_CAP_PERIOD_MAX_NS)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "%s period: %llu ns out of range %llu..%llu ns",
				  group ? "group cap" : "cap", (unsigned long long)period,
				  (unsigned long long)SCHED_CAP_PERIOD_MIN_NS,
				  (unsigned long long)SCHED_CAP_PERIOD_MAX_NS);
	if (quota >= SCHED_CAP_QUOTA_MIN_NS && quota <= period * (group ? s->nr_cpus : 1))
		return 0;
	if (group)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "group cap quota: %llu ns out of range %llu ns..%u x the period "
				  "(%llu ns, one per pCPU)", (unsigned long long)quota,
				  (unsigned long long)SCHED_CAP_QUOTA_MIN_NS, s->nr_cpus,
				  (unsigned long long)period);
	return sched_errf(err, errlen, SCHED_E_INVAL,
			  "cap quota: %llu ns out of range %llu ns..the period (%llu ns)",
			  (unsigned long long)quota, (unsigned long long)SCHED_CAP_QUOTA_MIN_NS,
			  (unsigned long long)period);
}

static int check_cap(const struct sched *s, const struct sched_entity *se, uint64_t quota,
		     uint64_t period, char *err, size_t errlen)
{
	if (dl_entity(se))
		return sched_errf(err, errlen, SCHED_E_CLASS,
				  "cap: entity %d has a reservation, which its runtime bounds already; "
				  "remove the reservation first", se->id);
	return cap_check_range(s, false, quota, period, err, errlen);
}

int sched_set_cap(struct sched *s, int id, uint64_t quota_ns, uint64_t period_ns, uint64_t now,
		  char *err, size_t errlen)
{
	struct sched_entity *se = sched_ent(s, id);
	int ret;

	if (!se)
		return sched_errf(err, errlen, SCHED_E_NOENT, "cap: no entity %d", id);
	ret = check_cap(s, se, quota_ns, period_ns, err, errlen);
	if (ret)
		return ret;
	now = engine_now(s, now);
	/* Charge the run time so far under the old cap (or none). */
	if (se->on_rq && s->rq[se->cpu].curr == se)
		update_rq_clock(s, &s->rq[se->cpu], now);
	se->cap_quota = quota_ns;
	se->cap_period = quota_ns ? period_ns : 0;
	se->cap_used = 0;	/* the new quota counts from now */
	se->cap_index = se->cap_period ? now / se->cap_period : 0;
	if (se->on_rq)
		fair_count_capped(&s->rq[se->cpu], se);
	if (se->cap_throttled) {
		cap_unthrottle(s, se, now);
		if (s->rq[se->cpu].need_resched)
			schedule_rq(s, &s->rq[se->cpu], now);
	}
	return 0;
}

/*
 * Cap holes filled from elsewhere: the balance's part of caps, here beside
 * the rules that say who may take a hole (moved from balance.c).
 */

/* The waiting fair entity furthest behind, on any pCPU of `span` but dst, that may run on dst. */
static struct sched_entity *furthest_behind(struct sched *s, struct sched_rq *dst,
					    const struct sched_cpumask *span, uint64_t now)
{
	struct sched_entity *best = NULL;
	int64_t bl = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];

		if (rq == dst || rq->nr_running < 2 || !sched_cpumask_test(span, cpu))
			continue;
		for (struct slist *pos = rq->queued.next; pos != &rq->queued; pos = pos->next) {
			struct sched_entity *se = slist_entry(pos, struct sched_entity, rq_link);
			int64_t l;

			/* a member of a group out of quota would only go off again */
			if (se == rq->curr || dl_entity(se) ||
			    !sched_cpumask_test(&se->allowed, dst->cpu) ||
			    (se->grp_capped && cap_exhausted(s, se, now)))
				continue;
			l = lag_now(s, se, now);
			if (!best || l > bl) {
				best = se;
				bl = l;
			}
		}
	}
	return best;
}

/* Is se a fair entity more than `ahead` ns of work ahead of its ideal? */
static bool fair_ahead(const struct sched *s, const struct sched_entity *se, int64_t ahead,
		       uint64_t now)
{
	return se->class == &fair_sched_class && se->lag_tracked && lag_now(s, se, now) < -ahead;
}

/*
 * Is every entity runnable on rq (curr and the queued ones) more than
 * `slices` slices of work ahead of its ideal? Then they take the hole of
 * a throttled entity there while others wait behind theirs (with groups,
 * seed 6 #89 of the groups corpus: 41 light members beside a root entity
 * capped at 0.64 of a pCPU, with the light root ones together 0.37 s over
 * their ideals while three heavy root entities were 0.11-0.14 s under).
 * O(entities queued on rq), at a tick of a pCPU in a cap hole, as the
 * filling's own scan.
 */
static bool all_ahead(const struct sched *s, const struct sched_rq *rq, uint64_t now,
		      unsigned int slices)
{
	int64_t ahead = (int64_t)(slices * s->cfg.slice_ns);

	if (!fair_ahead(s, rq->curr, ahead, now))
		return false;
	for (const struct slist *pos = rq->queued.next; pos != &rq->queued; pos = pos->next)
		if (!fair_ahead(s, slist_entry(pos, struct sched_entity, rq_link), ahead, now))
			return false;
	return true;
}

/*
 * Is rq's cap hole open to an entity from elsewhere? When rq is idle; or
 * when its runnable entities are all more than HOLE_AHEAD_SLICES slices
 * of work ahead of their ideals (all_ahead()): they collect the hole
 * while others wait behind theirs. One alone: seed 3 #24 of the caps
 * corpus, v25 (weight 31) beside an entity capped at 0.95 every 7 ms got
 * 12 times its ideal 0.0013 of a pCPU. Several: seed 9 #116, where no
 * placement of whole entities fits, v3 and v8 (0.072 and 0.045 of a
 * pCPU) sat beside v2 (capped at 0.837) and took all of its holes, 0.158
 * of the pCPU, while v1 and v5 shared another pCPU 0.047 short of their
 * ideals; the hole taken in turn is how an entity is time-shared between
 * the two pCPUs (docs/sched/caps-rules.md, "Holes shared by all ahead").
 * Within that lead, a lag is EEVDF's granularity and the payback's band,
 * not an error worth a move. With groups, when all of them are a slice
 * ahead; the one-entity rule there did worse (seed 1 #150 1.3 -> 10.2 x
 * the bound when it was tried).
 */
static bool hole_open(const struct sched *s, const struct sched_rq *rq, uint64_t now)
{
	if (!rq->curr)
		return true;
	return all_ahead(s, rq, now, s->nr_groups ? HOLE_ALL_AHEAD_SLICES : HOLE_AHEAD_SLICES);
}

/*
 * May se, from elsewhere, take the hole of rq, whose curr runs in it
 * (hole_open())? If it is behind its ideal. Without groups (curr, like
 * any entity runnable there, more than HOLE_AHEAD_SLICES ahead) also if
 * it is ahead too but by that much less than curr, and its ideal rate is at
 * least curr's: a light entity far ahead otherwise kept the holes
 * whenever no waiting entity was behind its ideal, where the ideal gives
 * their time to the entities at the water level by weight (seed 10 #198
 * of the caps corpus: v4, weight 42, beside v8 capped at 0.27 every 27
 * ms, got 3 ms of each of its throttled phases, 46 ms over the run for
 * an ideal of 16). A lighter one ahead would collect them as curr does
 * (taken too: seed 8 #156's light v2, v3 and v6 went from 0.2-0.4 to
 * 0.6-0.8 x the bound over and the capped v4 off). With groups, behind
 * only (all_ahead()).
 */
static bool hole_taker_ok(const struct sched *s, const struct sched_rq *rq,
			  const struct sched_entity *se, uint64_t now)
{
	int64_t lag = lag_now(s, se, now);

	if (lag > 0)
		return true;
	if (s->nr_groups)
		return false;
	return lag > lag_now(s, rq->curr, now) + (int64_t)(HOLE_AHEAD_SLICES * s->cfg.slice_ns) &&
	       se->lag_rate >= rq->curr->lag_rate;
}

/* The widest balance domain of rq's pCPU: where a pull may come from. */
static const struct sched_cpumask *widest_span(const struct sched_rq *rq)
{
	const struct sched_cpumask *span = NULL;

	for (int d = 0; d < SCHED_DOMAINS && rq->sd[d].valid; d++)
		span = &rq->sd[d].span;
	return span;
}

/* se, just queued on rq, runs there next: at V, the next buddy. */
static void put_first(struct sched_rq *rq, struct sched_entity *se)
{
	fair_place_at_v(rq, se);
	rq->next_buddy = se;
	rq->need_resched = true;
}

/*
 * A pCPU idle while capped entities are throttled on it (a cap hole) takes
 * the waiting entity furthest behind, wherever it waits, at every tick
 * and event of the hole, not only when it went idle: the entities that
 * should fill a hole may start waiting later (preempted where a period
 * ended, moved by the balance), and a hole's time is lost for good
 * (docs/sched/caps.md, "Caps at their rate"). Newidle's rules (the busiest
 * pCPU only, none ahead of its ideal) are for sleepers' gaps, which come
 * back; a throttled entity's do not. So does a hole whose one runnable
 * entity is well ahead of its ideal (hole_open()), for one behind its
 * own. O(queued entities) per tick of a pCPU in a hole, nothing on the
 * per-decision paths.
 */
void cap_hole_fill(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	const struct sched_cpumask *span;
	struct sched_entity *se;

	if (slist_empty(&rq->cap_throttled) || !s->nr_overloaded || s->cfg.no_newidle ||
	    !hole_open(s, rq, now))
		return;
	span = widest_span(rq);
	if (!span || !(se = furthest_behind(s, rq, span, now)))
		return;
	if (rq->curr && !hole_taker_ok(s, rq, se, now))
		return;		/* it would only take the first one's place */
	if (!cap_hole_lead_ok(s, rq, se, now))
		return;
	move_queued(s, se, rq, SCHED_MIGRATE_NEWIDLE, now);
	rq->nr_newidle_pulled++;
	if (rq->curr && !s->nr_groups) {
		/*
		 * It runs now, not after the ones ahead, whatever lag its old
		 * pCPU left it (13 #102: docs/sched/caps-rules.md, "Behind ones
		 * first in a hole"; not with groups).
		 */
		put_first(rq, se);
	}
	schedule_rq(s, rq, now);
}

/*
 * Does rq run an entity with a cap of its own, or queue one whose cap
 * binds? Such an entity well ahead is stopped by its quota, and its
 * throttling opens a hole the filling above shares; pulled beside it
 * early, the entity behind took the time it would have had alone later
 * (seed 604117 #57 of the caps corpus: the uncapped v7, pulled ten times
 * beside v0 or v14 capped at 0.69 and 0.88 of a pCPU while they were a
 * couple of slices ahead, ended 1.98 x the bound short; 0.73 x without the
 * rule).
 */
static bool capped_beside(const struct sched *s, const struct sched_rq *rq)
{
	if (rq->curr->cap_period)
		return true;
	for (const struct slist *pos = rq->queued.next; pos != &rq->queued; pos = pos->next)
		if (fair_cap_holds(s, slist_entry(pos, struct sched_entity, rq_link)))
			return true;
	return false;
}

/*
 * On a host with caps, outside groups: a pCPU with no cap hole whose
 * runnable entities are all more than HOLE_AHEAD_SLICES slices of work
 * ahead of their ideals, its running one uncapped (capped_beside()),
 * takes the waiting entity furthest behind from elsewhere if it is that
 * far behind its own, and runs it now, as a hole of "Holes shared by all
 * ahead" does (docs/sched/caps-rules.md, "A pCPU well ahead shares"). Where no
 * placement of whole entities fits and the caps of the held entities add
 * up to more than a pCPU, the uncapped one sat alone on a pCPU ahead of
 * its ideal while the held ones shared the other and lost: between
 * balances nothing took it, and the balance's exchanges left a held one
 * alone, which ran its quota at once and opened a long hole where the
 * other's holes met it (seed 314159 #122: v2, uncapped with an ideal of
 * 0.81 of a pCPU, alone two thirds of the time; v0, capped at 0.57,
 * 3.59 x the bound short). O(1) at a tick of a pCPU whose running entity is not
 * that far ahead; else O(queued entities) on it, and the filling's scan
 * of every queued entity when all are; nothing per decision.
 */
void cap_ahead_share(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	int64_t far = (int64_t)(HOLE_AHEAD_SLICES * s->cfg.slice_ns);
	const struct sched_cpumask *span;
	struct sched_entity *se;

	if (!rq->curr || !s->nr_overloaded || s->cfg.no_newidle ||
	    !all_ahead(s, rq, now, HOLE_AHEAD_SLICES) || capped_beside(s, rq))
		return;
	span = widest_span(rq);
	if (!span || !(se = furthest_behind(s, rq, span, now)) || lag_now(s, se, now) <= far)
		return;
	move_queued(s, se, rq, SCHED_MIGRATE_NEWIDLE, now);
	rq->nr_newidle_pulled++;
	put_first(rq, se);
	schedule_rq(s, rq, now);
}

/*
 * Is an entity held queued on rq (the pushed one would take from it)?
 * Without groups any capped one; with groups one held by its own cap or
 * by a share of a binding group cap, or curr held by such a share: a
 * share of a cap's room only keeps its members from bursting ahead.
 */
static bool held_queued(const struct sched *s, const struct sched_rq *rq)
{
	if (!s->nr_groups)
		return !slist_empty(&rq->capped);
	if (group_share_holds(s, rq->curr))
		return true;
	for (const struct slist *pos = rq->capped.next; pos != &rq->capped; pos = pos->next) {
		const struct sched_entity *c = slist_entry(pos, struct sched_entity, capped_link);

		if (fair_cap_holds(s, c) || group_share_holds(s, c))
			return true;
	}
	return false;
}

/*
 * May an entity held by its own cap, which loses quota on its pCPU, run
 * now on rq instead? If rq runs a fair entity with no cap of its own,
 * tracked and not a move's worth behind its ideal (FAIR_LAG_MOVE_NS),
 * whose ideal rate leaves it room on its pCPU to make up what it lends
 * (below the capacity by more than PUSH_ROOM_SHIFT), and no capped entity
 * is queued there (which the pushed one would only take from). With
 * groups (the pushed one a member held by its share of a binding group
 * cap), no held one there (held_queued()) and curr less behind its ideal
 * than the pushed one: lending moves time from the one less behind to
 * the one more behind, never the other way (seed 161803 #77: v2, the
 * lender, was 8-9 ms of work behind throughout, as the pushed v0 was).
 * `below` is the lag curr must stay under (lender_limit()). Returns
 * curr's lag, INT64_MAX if not.
 */
static int64_t push_target_lag(const struct sched *s, const struct sched_rq *rq,
			       const struct sched_entity *se, int64_t below, uint64_t now)
{
	const struct sched_entity *o = rq->curr;
	uint64_t cap = capacity_rate(rq->capacity);
	int64_t lag;

	if (!o || o->class != &fair_sched_class || o->cap_period || !o->lag_tracked ||
	    (int)rq->cpu == se->cpu || !sched_cpumask_test(&se->allowed, rq->cpu) ||
	    held_queued(s, rq) || o->lag_rate >= cap - (cap >> PUSH_ROOM_SHIFT))
		return INT64_MAX;
	lag = lag_now(s, o, now);
	return lag < below ? lag : INT64_MAX;
}

/* How far behind a lender of the pushed se may be (push_target_lag()): once per push. */
static int64_t lender_limit(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	return s->nr_groups ? lag_now(s, se, now) : (int64_t)FAIR_LAG_MOVE_NS;
}

/*
 * The pick on rq left an entity held by its own cap to lose quota
 * (s->cap_loser, fair_cap_urgent(): another held one runs first for more
 * than its laxity). Outside groups, it runs now on the pCPU whose entity
 * lends it best (push_target_lag(): the one furthest ahead), placed at
 * V and first there, and goes back when its quota there runs out
 * (cap_throttle()). Quota lost is lost for good, while an uncapped
 * entity's lag is made up by the balance: where the caps on one pCPU add
 * up to more than it and the entity beside the others' pCPU is owed a
 * little less than all of it, no placement of whole entities fits, and
 * the held ones lost the excess period after period (seed 662607 #9 of
 * the caps corpus: two pCPUs, v0 capped at 1 ms every 8, v1 at 0.29 and
 * v3 at 0.60 of a pCPU, 1.014 of it, v2 owed 0.986 of the other: v0 short
 * in 52 of 625 periods, 46 ms, 1.85 x the bound). With groups, the same
 * for a member held by its share of a binding group cap, not by a cap of
 * its own (note_share_loser(), fair_capped.c): two such shares on one
 * pCPU that add up to more than it lost their group's quota for good in
 * the same way (seed 161803 #77 of the groups corpus: two pCPUs, g2's
 * v0 and v1 at 0.553 and 0.495, v2 owed the 0.952 left, g2 1.75 x the
 * bound short; docs/sched/groups-rules.md, "A share's loser pushed").
 * O(pCPUs), with groups O(pCPUs + held entities queued), only at a pick
 * that leaves a held entity to lose quota.
 */
void cap_push_loser(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct sched_entity *se = s->cap_loser;
	struct sched_rq *dst = NULL;
	int64_t best = INT64_MAX, below;

	s->cap_loser = NULL;
	if (!se->on_rq || se->cpu != (int)rq->cpu || rq->curr == se)
		return;
	if (s->nr_groups && (fair_cap_holds(s, se) || !group_share_holds(s, se)))
		return;	/* with groups, members held by a binding share only (below) */
	below = lender_limit(s, se, now);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		int64_t lag = push_target_lag(s, &s->rq[cpu], se, below, now);

		if (lag < best) {
			best = lag;
			dst = &s->rq[cpu];
		}
	}
	if (!dst)
		return;
	if (!se->cap_home)
		se->cap_home = (int16_t)(rq->cpu + 1);
	move_queued(s, se, dst, SCHED_MIGRATE_BALANCE, now);
	put_first(dst, se);
	schedule_rq(s, dst, now);
}
