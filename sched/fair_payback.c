// SPDX-License-Identifier: MIT
/*
 * Lag payback of the fluid-ideal balance (docs/sched.md, "How the engine
 * meets it"): run weights that pay small lags back where they are.
 *
 * The balance (fairlag.c) moves an entity only for a lag worth a move
 * (LAG_MOVE_NS). Below that, per-pCPU EEVDF shares each pCPU by weight,
 * and many light entities a few ms ahead each add up to what the heavy
 * ones beside them miss. So at every balance each tracked entity runs
 * with its own weight scaled by a factor that asks for its ideal rate
 * plus its lag paid back over PAYBACK_NS: behind, a bit more; ahead, a
 * bit less; bounded to [1/FAIR_PAYBACK_CLAMP, FAIR_PAYBACK_CLAMP] so that no
 * estimate error can starve or flood a pCPU. On a pCPU whose ideal
 * rates add up to its capacity this is a proportional controller on the
 * lags there: they go to zero without a move. Where they do not add up,
 * every lag there drifts the same way, the factors cannot help, and the
 * moves do the rest.
 *
 * Entities outside groups here; with groups, group_ideal.c sets the run
 * weights from the hierarchical ideal and applies the same factor to
 * them (fair_payback_weight()), root entities' included, but not to
 * members a group cap binds.
 * The solver keeps sharing by the weights as set (own_weight, or the
 * groups' shares), so the factors never feed back into the ideal. O(n) per balance plus one reweight per entity whose factor
 * changed; nothing on the per-decision paths.
 */
#include "sched/internal.h"

#define PAYBACK_NS	(256 * NSEC_PER_MSEC)	/* a lag is paid back over this */
#define FACTOR_SHIFT	16			/* factors in 16.16 fixed point */

/*
 * The factor (16.16) that asks for rate + lag / PAYBACK_NS: 1 + lag /
 * (rate x PAYBACK_NS), rate in RATE_SHIFT fixed point, clamped. Lags
 * within `band` (a slice: what EEVDF's own granularity leaves on any
 * pCPU) are not errors to correct: there the factor is 1 and the weight
 * exactly as set; beyond, only the excess counts.
 */
static uint64_t payback_factor(int64_t lag, uint64_t rate, int64_t band)
{
	const int64_t one = 1ll << FACTOR_SHIFT;
	__int128 den = (__int128)rate * PAYBACK_NS, f;

	if (!rate || (lag <= band && lag >= -band))
		return (uint64_t)one;
	lag += lag > 0 ? -band : band;
	f = one + (__int128)lag * ((__int128)1 << (FACTOR_SHIFT + RATE_SHIFT)) / den;
	if (f > one * FAIR_PAYBACK_CLAMP)
		f = one * FAIR_PAYBACK_CLAMP;
	if (f < one / FAIR_PAYBACK_CLAMP)
		f = one / FAIR_PAYBACK_CLAMP;
	return (uint64_t)f;
}

/* Run se with weight w from now (its vruntime charged up to now first). */
void fair_set_run_weight(struct sched *s, struct sched_entity *se, uint32_t w, uint64_t now)
{
	struct sched_rq *rq = se->on_rq ? &s->rq[se->cpu] : NULL;

	if (w == se->weight)
		return;
	if (rq)
		update_rq_clock(s, rq, now);
	reweight_fair(s, rq, se, w);
}

/*
 * Run weight w of se, whose ideal rate is `rate`, with its payback
 * factor; within the weight limits.
 */
uint32_t fair_payback_weight(const struct sched *s, const struct sched_entity *se, uint64_t w,
			     uint64_t rate)
{
	w = (w * payback_factor(se->lag, rate, (int64_t)s->cfg.slice_ns)) >> FACTOR_SHIFT;
	return w < SCHED_WEIGHT_MIN ? SCHED_WEIGHT_MIN : w > SCHED_WEIGHT_MAX ? SCHED_WEIGHT_MAX :
	       (uint32_t)w;
}

/*
 * Every fair entity's run weight: tracked ones (lag_tracked, lag and
 * lag_rate of this balance) with their payback factor, the others with
 * their own weight; those whose cap binds the weight of their rate
 * (fair_capped.c). Called by fair_lag_balance() after the solve, before
 * the moves are predicted (they predict with these weights).
 */
void fair_payback_reweight(struct sched *s, uint64_t now)
{
	bool held = false;

	if (s->nr_groups)
		return;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];
		uint64_t w;

		if (!se || dl_entity(se))
			continue;
		if (fair_cap_holds(s, se)) {
			held = true;	/* fair_capped_reweight() */
			continue;
		}
		w = se->own_weight;
		if (se->lag_tracked)
			w = fair_payback_weight(s, se, w, se->lag_rate);
		else
			w = fair_sleeper_weight(se, w);
		fair_set_run_weight(s, se, (uint32_t)w, now);
	}
	if (held)
		fair_capped_reweight(s, now);
}

/* The weight the solver shares by: as set, not as the payback scales it. */
uint64_t fair_solver_weight(const struct sched *s, const struct sched_entity *se)
{
	return s->nr_groups ? se->weight : se->own_weight;
}
