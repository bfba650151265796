// SPDX-License-Identifier: MIT
/*
 * Capped entities at their cap's rate (docs/sched.md, "Caps at their
 * rate").
 *
 * The fluid balance (fairlag.c) gives an entity whose cap binds its cap
 * as its ideal rate, and the entities beside it the rest of the pCPU.
 * Run at its own weight, a heavy capped entity runs alone until its
 * quota is gone and leaves the rest of the period to the others in one
 * block; a light one waits behind the others and may not get its quota
 * before the period ends. Either way what each gets over an interval is
 * not what its weight says: the lag moves, which predict every entity's
 * progress as its weight's share of the pCPU, saw a light entity beside
 * throttled ones as starved while it collected their holes (seed 1 #125
 * of the caps corpus: 0.45 of a pCPU for an ideal of 0.26).
 *
 * So at every balance a tracked entity whose cap binds runs with the
 * weight its ideal rate asks for beside the entities that share the
 * water level: rate / level, the level being the largest ideal rate per
 * weight of the entities no cap holds on the pCPUs it may use (those
 * whose share is a whole pCPU are below it). On a pCPU whose ideal rates
 * add up it then runs through the period rather than in one burst, and
 * the others get about what the lag moves predict, whoever they are. With a
 * margin (CAP_MARGIN_NUM / CAP_MARGIN_DEN): at exactly its rate it would
 * use its quota just as the period ends, and any slice of another entity
 * at the wrong time, or a neighbour whose payback raised its weight,
 * costs it quota for good. 5/4 (the group caps' margin) still left
 * seed 997320 #4's v7 (13.8 ms every 36 ms) short in 33 of 138 periods,
 * 5/2 in 7; 2 and 3 did about as well as 5/2 on the corpus (with the
 * predictor and the hole filling of docs/sched/caps.md, "Caps at their rate").
 * No margin where an entity beside it would hit its own cap in the time
 * the margin leaves it alone (loose_caps()).
 *
 * Entities outside groups (group_ideal.c sets the weights of the others
 * from their ideal rates). O(n + c x m) per balance for n entities, c of
 * them capped, on m pCPUs. On the per-decision paths only the pick's
 * least laxity first (fair_cap_urgent()): O(capped entities queued on
 * the pCPU) per pick there, nothing where none are.
 */
#include "sched/internal.h"

#define WATER_SHIFT	20	/* rate per weight, fixed point */
#define CAP_MARGIN_NUM	5	/* a capped entity's weight: 5/2 of its rate's */
#define CAP_MARGIN_DEN	2
#define TIGHT_LEAD_DIV	4	/* a tight capped entity placed a quarter slice ahead */
#define LOSS_FLOOR_DIV	4	/* quota lost weighed against at least 1/4 of the period */

/*
 * Does se's period leave no more than a slice beside its quota? Then any
 * slice another entity runs on its pCPU inside the period, including one
 * it finds running when its period begins (RUN_TO_PARITY), costs it quota
 * for good, at any weight short of all.
 */
bool fair_cap_tight(const struct sched *s, const struct sched_entity *se)
{
	return se->cap_quota + s->cfg.slice_ns >= se->cap_period;
}

/*
 * The lag (virtual time) an entity whose cap binds and whose period is
 * tight is placed with, beside `others` (the weight of the other fair
 * entities on its runqueue): at least a quarter slice of its own virtual
 * time. At the largest weight it still lost its eligibility after any
 * slice it ran beside an entity at V (one moved there, or one back from
 * its own throttling with its debt forgiven), and that one then ran a
 * whole slice inside its period, quota lost for good (seed 1 #39 of the
 * caps corpus: v3, 10.3 ms every 12, short in 88 of 416 periods). Ahead
 * of V it stays eligible through its quota: at its weight, running moves
 * it on from V by next to nothing. Any lead does that; a whole slice
 * took more from the entities beside it (docs/sched.md, "Tight ones
 * placed ahead").
 *
 * Running alone for its quota moves it on from V by quota x others /
 * (others + its weight) of its own time, so the lead is at least that:
 * beside weights near its own (group scenarios scale run weights so that
 * the largest below its bound is near 2^18, a quarter of the limit) the
 * quarter slice was gone after a few ms, and an entity the balance had
 * put beside it took a slice inside its period (seed 4 #185 of the groups
 * corpus: v13, 20.5 ms every 21, short in 124 of 476 periods, 37 with
 * this).
 */
int64_t fair_cap_tight_lag(const struct sched *s, const struct sched_entity *se, int64_t vlag,
			   uint64_t others)
{
	uint64_t run = s->cfg.slice_ns / TIGHT_LEAD_DIV, through;
	int64_t credit;

	if (!se->cap_period || !fair_cap_holds(s, se) || !fair_cap_tight(s, se))
		return vlag;
	through = (uint64_t)((unsigned __int128)se->cap_quota * others / (others + se->weight));
	if (through > run)
		run = through;
	credit = (int64_t)calc_delta_fair(run, se->weight);
	return vlag > credit ? vlag : credit;
}

/*
 * Is se's own cap one whose laxity least laxity first counts: it binds in
 * the ideal, or it is tight and all but binds (cap_all_but_holds()).
 */
static bool laxity_counts(const struct sched *s, const struct sched_entity *se)
{
	return se->cap_period && (fair_cap_holds(s, se) || cap_all_but_holds(s, se));
}

/*
 * The laxity of se where its cap binds (or all but binds, laxity_counts()),
 * or its share of a binding group cap does, whichever is less; INT64_MAX
 * where neither can be lost.
 */
static int64_t held_laxity(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	int64_t lax, own;

	if (se->cap_throttled || dl_entity(se))
		return INT64_MAX;
	lax = group_share_laxity(s, se, now);
	if (laxity_counts(s, se) && (own = cap_laxity(se, now)) < lax)
		lax = own;
	return lax;
}

/* Is lax (held_laxity() of se) the laxity of se's own binding cap? */
static bool own_laxity(const struct sched *s, const struct sched_entity *se, int64_t lax, uint64_t now)
{
	return lax != INT64_MAX && laxity_counts(s, se) && cap_laxity(se, now) == lax;
}

/*
 * Count se (queued on rq, with a cap or a share of a group cap) in
 * rq->nr_capped and put it on rq->capped where rq->queued has it: after
 * the last counted entity queued before it. fair_cap_urgent() breaks ties
 * by that order, as its scan of all queued entities did. At its enqueue
 * se is last in rq->queued, so it goes last; counted later (a cap set, a
 * share given at a balance while it is queued) the walk back is
 * O(entities queued before it), once per enqueue at most.
 */
void fair_capped_link(struct sched_rq *rq, struct sched_entity *se)
{
	struct slist *at = &rq->capped, *pos;

	se->cap_counted = true;
	rq->nr_capped++;
	if (se->rq_link.next != &rq->queued) {
		for (pos = se->rq_link.prev; pos != &rq->queued; pos = pos->prev) {
			struct sched_entity *c = slist_entry(pos, struct sched_entity, rq_link);

			if (c->cap_counted) {
				at = c->capped_link.next;
				break;
			}
		}
		if (pos == &rq->queued)
			at = rq->capped.next;
	}
	slist_add_tail(&se->capped_link, at);
}

/*
 * The quota se loses for good (beyond what its laxity `lax` loses anyway)
 * if another runs `wait` ns before it, as a cost: that time over the
 * fraction of the period its quota is, the fraction at least 1/4
 * (LOSS_FLOOR_DIV) so that a tiny quota does not make every loss of it
 * outweigh any other (the bound on each entity's error is 2% of its
 * ideal or 0.5% of a pCPU, whichever is larger: their ratio is 1/4).
 * Returns the loss x period and the fraction's denominator, to compare
 * two without division.
 */
static void wait_loss(const struct sched_entity *se, int64_t lax, uint64_t left, uint64_t wait,
		      unsigned __int128 *num, uint64_t *den)
{
	uint64_t lost = 0, anyway = lax < 0 ? (uint64_t)-lax : 0;

	if ((int64_t)wait > lax)
		lost = (uint64_t)((int64_t)wait - lax);
	if (lost > left)
		lost = left;
	lost = lost > anyway ? lost - anyway : 0;
	*num = (unsigned __int128)lost * se->cap_period;
	*den = se->cap_quota > se->cap_period / LOSS_FLOOR_DIV ? se->cap_quota :
								 se->cap_period / LOSS_FLOOR_DIV;
}

/* How long se runs once picked, with `left` of its quota: up to its slice. */
static uint64_t first_run(const struct sched_entity *se, uint64_t left)
{
	return se->slice && se->slice < left ? se->slice : left;
}

/*
 * Where pick (EEVDF's, held by its own cap) has no more laxity than
 * urgent (held by its own cap, its laxity below pick's slice), does
 * letting urgent run first for what it has left (at most its slice) cost
 * pick less than pick's slice costs urgent (wait_loss())? Least laxity
 * first kept pick whatever each lost: a tight entity with laxity to spare
 * beyond the little quota a short one had left kept every pick, and the
 * short one lost the rest of its quota period after period (seed 2 #136
 * of the caps corpus: v3, 2.621 ms every 42, short in 79 of 119 periods
 * beside v2, 16.868 every 18, whose laxity of 1.13 ms covered the 0.35 ms
 * v3 needed).
 */
static bool urgent_costs_less(const struct sched_entity *pick, int64_t pick_lax,
			      const struct sched_entity *urgent, int64_t urgent_lax, uint64_t now)
{
	uint64_t left = cap_quota_left(urgent, now), dp, du;
	unsigned __int128 lp, lu;

	wait_loss(pick, pick_lax, cap_quota_left(pick, now), first_run(urgent, left), &lp, &dp);
	wait_loss(urgent, urgent_lax, left, pick->slice, &lu, &du);
	return lp * du < lu * dp;
}

/* The end of se's current cap period at now. */
static uint64_t cap_period_end(const struct sched_entity *se, uint64_t now)
{
	return (now / se->cap_period + 1) * se->cap_period;
}

/*
 * Where urgent (held by its own cap, less laxity than pick, below pick's
 * slice) would go first by least laxity, should pick (held by its own
 * cap too) keep the pCPU? Where its period ends first (EDF's order), it
 * can still get all it has left (its laxity is not below 0), and running
 * it for what it has left (at most its slice) costs urgent less than
 * urgent's slice costs it (urgent_costs_less() the other way round).
 * Least laxity first gave the pCPU to urgent whatever pick lost: an
 * entity held by a long period whose laxity was below a short-period
 * one's slice took it, its laxity stays where it is while it runs, and
 * it kept the pCPU for its whole quota while the short one lost whole
 * periods (seed 7 #160 of the caps corpus: v11, 1 ms every 5, beside v0,
 * 26.301 every 33 with 0.70 ms of laxity, short in 43 of 1000 periods).
 */
static bool earlier_end_costs_less(const struct sched_entity *pick, int64_t pick_lax,
				   const struct sched_entity *urgent, int64_t urgent_lax, uint64_t now)
{
	return pick_lax >= 0 && cap_period_end(pick, now) < cap_period_end(urgent, now) &&
	       urgent_costs_less(urgent, urgent_lax, pick, pick_lax, now);
}

/*
 * Of two entities held by their own caps, win runs first: does loser,
 * whose laxity is lax, lose quota by it (win's run, what it has left up
 * to its slice, is more than lax)? Then it is the pick's loser, for
 * cap_push_loser() once the pCPU has switched.
 */
static void note_loser(struct sched *s, const struct sched_rq *rq, const struct sched_entity *win,
		       struct sched_entity *loser, int64_t lax)
{
	if (lax < (int64_t)first_run(win, cap_quota_left(win, rq->clock)))
		s->cap_loser = loser;
}

/* What se, held at lax, has left to run in its period: its own quota's or its share's. */
static uint64_t held_left(const struct sched *s, const struct sched_entity *se, int64_t lax,
			  uint64_t now)
{
	return own_laxity(s, se, lax, now) ? cap_quota_left(se, now) : group_share_left(se, now);
}

/*
 * With groups: win, held too, runs first, and loser is held by its
 * share of a binding group cap (its laxity lax is that share's): does it
 * lose share by it? Then it is the pick's loser (cap_push_loser()).
 */
static void note_share_loser(struct sched *s, const struct sched_rq *rq,
			     const struct sched_entity *win, int64_t win_lax,
			     struct sched_entity *loser, int64_t lax)
{
	if (!s->nr_groups || lax == INT64_MAX || win_lax == INT64_MAX ||
	    own_laxity(s, loser, lax, rq->clock))
		return;
	if (lax < (int64_t)first_run(win, held_left(s, win, win_lax, rq->clock)))
		s->cap_loser = loser;
}

/*
 * May c go first against pick by its laxity? Where its own cap binds (or
 * a group share does); where its cap only all but binds
 * (cap_all_but_holds()), only against a pick held by its own cap: beside
 * an uncapped or loosely capped pick it would take its whole quota, above
 * its ideal, from one owed that time (seed 13 #32 of the caps corpus: v3,
 * weight 47, 11.103 ms every 14 for an ideal of 0.770 of its pCPU, got
 * its cap's 0.793 and v9 beside it ended 2.38 x the bound short).
 */
static bool urgent_against(const struct sched *s, const struct sched_entity *c,
			   const struct sched_entity *pick)
{
	if (!c->cap_period || (pick->cap_period && fair_cap_holds(s, pick)))
		return true;
	return fair_cap_holds(s, c) || !cap_all_but_holds(s, c);
}

/*
 * The pick on rq, `pick` being EEVDF's: an entity queued there whose cap
 * binds (or all but binds, against a held pick: urgent_against()) and
 * whose laxity (the time left in its period beyond the quota it has
 * left) is less than pick's slice goes first, the least laxity
 * first, unless pick is one of those with no more laxity, and where both
 * are held by their own caps, that laxity does not save pick if urgent
 * costs it less by going first (urgent_costs_less()); where pick has
 * more laxity, it keeps the pCPU if its period ends first and that costs
 * urgent less (earlier_end_costs_less()). Its cap is its ideal, so any
 * of its quota left at the period's end is lost for good,
 * and a slice started inside its laxity takes exactly that: a light
 * entity's slice near the end of the period of a capped one whose share
 * of the pCPU falls short of its cap while a third one runs (a group
 * member whose weight is bounded beside scaled ones, two capped ones on
 * one pCPU), and the light one collected the quota the capped one lost
 * (seed 4 #146 of the groups corpus: v1, 24 ms every 28, short in 65 of
 * 357 periods, and v0 beside it 1.1 x the bound over). A member's share
 * of a binding group cap of a slice or more per period is held the same
 * way (group_share_laxity()). Per pick, only on a pCPU with capped
 * entities queued: O(capped entities queued there), and the cost test
 * once for the one of least laxity. Only those can have a
 * laxity (held_laxity() of any other is INT64_MAX), so the scan visits
 * rq->capped, which keeps rq->queued's order (fair_capped_link()): the
 * first of equal laxities is the same one as in a scan of all queued.
 */
struct sched_entity *fair_cap_urgent(struct sched *s, struct sched_rq *rq,
				     struct sched_entity *pick)
{
	struct sched_entity *best = NULL, *win;
	int64_t best_lax = INT64_MAX, pick_lax;
	struct slist *pos;

	if (!pick)
		return NULL;
	for (pos = rq->capped.next; pos != &rq->capped; pos = pos->next) {
		struct sched_entity *c = slist_entry(pos, struct sched_entity, capped_link);
		int64_t lax;

		if (c == pick || !urgent_against(s, c, pick))
			continue;
		lax = held_laxity(s, c, rq->clock);
		if (lax < (int64_t)pick->slice && lax < best_lax) {
			best = c;
			best_lax = lax;
		}
	}
	if (!best)
		return pick;
	pick_lax = held_laxity(s, pick, rq->clock);
	if (!own_laxity(s, pick, pick_lax, rq->clock) || !own_laxity(s, best, best_lax, rq->clock)) {
		win = pick_lax > best_lax ? best : pick;
		if (win == pick)
			note_share_loser(s, rq, pick, pick_lax, best, best_lax);
		else
			note_share_loser(s, rq, best, best_lax, pick, pick_lax);
		return win;
	}
	if (pick_lax > best_lax)
		win = earlier_end_costs_less(pick, pick_lax, best, best_lax, rq->clock) ? pick : best;
	else
		win = urgent_costs_less(pick, pick_lax, best, best_lax, rq->clock) ? best : pick;
	if (win == pick)
		note_loser(s, rq, pick, best, best_lax);
	else
		note_loser(s, rq, best, pick, pick_lax);
	return win;
}

/*
 * The run weight for ideal rate `rate` at water level `level` (rate per
 * weight, WATER_SHIFT), with the margin if `margin`; within the weight
 * limits.
 */
uint32_t fair_capped_weight(uint64_t rate, uint64_t level, bool margin)
{
	uint64_t w = (uint64_t)(((unsigned __int128)rate << WATER_SHIFT) / level);

	if (margin)
		w = w * CAP_MARGIN_NUM / CAP_MARGIN_DEN;
	return w < SCHED_WEIGHT_MIN ? SCHED_WEIGHT_MIN : w > SCHED_WEIGHT_MAX ? SCHED_WEIGHT_MAX :
	       (uint32_t)w;
}

/*
 * The water level of each pCPU: the largest rate per weight of an entity
 * there that no cap holds. One whose cap does not bind shares the water
 * level in the ideal as an uncapped one does; left out, a light one with
 * a cap was not seen, the level came from a heavy entity elsewhere, and
 * the entity whose cap binds beside it ran with 170 times the weight it
 * needs, its quota in one burst, while the light one, alone after it,
 * hit its own cap and left the pCPU idle (seed 16 #106 of the caps
 * corpus: v12, weight 29, capped at 0.42 for an ideal of 0.35 beside v7
 * capped at 0.65, 0.245 of a pCPU, 14.9 x the bound; 0.336, 2.0 x).
 */
static void levels(const struct sched *s, uint64_t *lvl)
{
	memset(lvl, 0, s->nr_cpus * sizeof(*lvl));
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		const struct sched_entity *se = s->ent[id];
		uint64_t l;

		if (!se || dl_entity(se) || se->cpu < 0 || !se->lag_tracked || fair_cap_holds(s, se))
			continue;
		l = (se->lag_rate << WATER_SHIFT) / se->own_weight;
		if (l > lvl[se->cpu])
			lvl[se->cpu] = l;
	}
}

/*
 * Which pCPUs hold a tracked entity whose own cap does not bind in the
 * ideal but binds while the entities whose caps bind there are
 * throttled: its weight's share of the pCPU among the others (the run
 * weights) is above its cap's fraction of the period. O(n) per balance.
 */
static void loose_caps(const struct sched *s, bool *loose)
{
	uint64_t free_w[SCHED_MAX_CPUS];

	memset(free_w, 0, s->nr_cpus * sizeof(*free_w));
	memset(loose, 0, s->nr_cpus * sizeof(*loose));
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		const struct sched_entity *se = s->ent[id];

		if (se && !dl_entity(se) && se->cpu >= 0 && se->lag_tracked && !fair_cap_holds(s, se))
			free_w[se->cpu] += se->weight;
	}
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		const struct sched_entity *se = s->ent[id];

		if (se && !dl_entity(se) && se->cpu >= 0 && se->lag_tracked && se->cap_period &&
		    !fair_cap_holds(s, se) &&
		    (unsigned __int128)se->weight * se->cap_period >
			    (unsigned __int128)free_w[se->cpu] * se->cap_quota)
			loose[se->cpu] = true;
	}
}

/*
 * Every tracked entity outside groups whose cap binds: the weight of its
 * ideal rate at the water level of the pCPUs it may use; where no
 * uncapped entity shares them, its payback weight (fair_payback.c); the
 * largest weight where its period is tight (fair_cap_tight()): it takes
 * its quota as soon as it can, and its cap gives the others the rest.
 * Without the margin on a pCPU that holds an entity whose own cap does
 * not bind in the ideal: with it, the held one ran its quota in part of
 * its period and left that one alone for the rest, where its own cap
 * binds, so that both were throttled at once and the pCPU idle (seed 10
 * #68 of the caps corpus: v2, capped at 0.52 of a 702 pCPU, binding, and
 * v1, weight 18, capped at 0.626 with an ideal of 0.48, throttled in 69
 * periods and 0.46 of the time, 2.1 x the bound short). At its rate's
 * weight the held one runs through its period, and the other gets its
 * share throughout, below its cap (docs/sched/caps-rules.md, "No margin beside
 * a loose cap"). Called by fair_payback_reweight() when there is one.
 */
void fair_capped_reweight(struct sched *s, uint64_t now)
{
	uint64_t lvl[SCHED_MAX_CPUS];
	bool loose[SCHED_MAX_CPUS];

	levels(s, lvl);
	loose_caps(s, loose);
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];
		uint64_t l = 0;
		uint32_t w;

		if (!se || dl_entity(se) || !fair_cap_holds(s, se))
			continue;
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			if (sched_cpumask_test(&se->allowed, cpu) && lvl[cpu] > l)
				l = lvl[cpu];
		if (fair_cap_tight(s, se))
			w = SCHED_WEIGHT_MAX;	/* its cap ends its run */
		else if (l)
			w = fair_capped_weight(se->lag_rate, l, !loose[se->cpu]);
		else
			w = fair_payback_weight(s, se, se->own_weight, se->lag_rate);
		fair_set_run_weight(s, se, w, now);
	}
}
