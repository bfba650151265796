/* SPDX-License-Identifier: MIT */
/*
 * The fluid-ideal balance of the fair class (fairlag.c, fair_moves.c,
 * fair_rotate.c, fair_repack.c, fair_payback.c, fair_sleepers.c,
 * fair_capped.c, fair_wake.c, fair_levels.c): its view of an entity,
 * rates, and the functions these files share. Included by internal.h
 * only, after the types it uses.
 */
#ifndef CAPVISOR_SCHED_FAIRLAG_H
#define CAPVISOR_SCHED_FAIRLAG_H

#ifndef CAPVISOR_SCHED_INTERNAL_H
#error "include sched/internal.h, not sched/fairlag.h"
#endif

/* The fluid balance's view of one entity (fairlag.c, group.c). */
struct lag_ent {
	struct sched_entity *se;
	uint64_t rate;				/* ideal, RATE_SHIFT fixed point */
	uint64_t pred;				/* |lag| */
	uint64_t w;				/* weight the water-filling shares by */
	uint64_t limit;				/* rate it cannot exceed (its caps), or UINT64_MAX */
	uint64_t busy_rate;			/* its rate were every entity busy (cap_fill) */
	int comp;
	int next;				/* group.c: next tracked member of its group */
	int to;					/* fair_repack.c: the pCPU of its new placement */
	bool capped;				/* rate held at its limit (cap_fill) */
	bool sleeper;				/* in the solve only (fair_sleepers.c) */
	bool tight;				/* in a level no sleeper's use reaches (water_fill()) */
};

#define RATE_SHIFT	20			/* rate 1 << 20 = one 1024-capacity pCPU */

/*
 * The payback factor's bounds, [1/4, 4] (fair_payback.c); an entity
 * ahead is held back to a quarter of its weight at most, so the rotation
 * counts that much of its rate as taken (fair_rotate.c).
 */
#define FAIR_PAYBACK_CLAMP	4

/* The rate (RATE_SHIFT) of a whole pCPU of `capacity`: all the work it does. */
static inline uint64_t capacity_rate(uint64_t capacity)
{
	return capacity << (RATE_SHIFT - 10);
}

/* The rate (RATE_SHIFT) of quota per period on a pCPU of `capacity`. */
static inline uint64_t quota_rate_at(uint64_t quota, uint64_t period, unsigned int capacity)
{
	return ((quota << RATE_SHIFT) / period) * capacity >> 10;
}

/* A cap as a rate: its quota is time, so the work it allows on a pCPU of `capacity`. */
static inline uint64_t cap_rate_at(const struct sched_entity *se, unsigned int capacity)
{
	return quota_rate_at(se->cap_quota, se->cap_period, capacity);
}

/*
 * Is se's own cap what the fluid balance holds it to (its ideal rate is
 * its cap where it is)? Inline: the lag moves ask it for every option.
 */
static inline bool fair_cap_holds(const struct sched *s, const struct sched_entity *se)
{
	return se->cap_period && se->lag_tracked && se->cpu >= 0 &&
	       se->lag_rate >= cap_rate_at(se, s->rq[se->cpu].capacity);
}

/*
 * Does a binding group cap hold se at its share of it, given at this
 * balance (group_ideal.c)? Its ideal rate is then that share's.
 */
static inline bool group_share_holds(const struct sched *s, const struct sched_entity *se)
{
	return se->grp_share.period && se->share_round == s->lag_round &&
	       s->grp[se->share_gid].binding;
}

/*
 * Count se, queued on rq, in rq->nr_capped and on rq->capped if it has a
 * cap or a share of a group cap (fair_cap_urgent() looks at those only);
 * its dequeue uncounts it.
 */
void fair_capped_link(struct sched_rq *rq, struct sched_entity *se);

static inline void fair_count_capped(struct sched_rq *rq, struct sched_entity *se)
{
	if (!se->cap_counted && (se->cap_period || se->grp_share.period))
		fair_capped_link(rq, se);
}

/* Runnable, or out of its cap's quota only: busy as far as its share goes. */
static inline bool wants_cpu(const struct sched_entity *se)
{
	return se->on_rq || (se->cap_throttled && se->state == SCHED_THROTTLED);
}

/* ---------------------------------------------------------------- the fair_*.c files */

void fair_lag_balance(struct sched *s, uint64_t now);
void fair_lag_sums(struct sched *s, unsigned int n);
void fair_lag_moves(struct sched *s, unsigned int n, uint64_t now);
uint64_t fair_cap_rate(const struct sched *s, const struct sched_entity *se);
size_t fair_lag_scratch_size(void);
void fair_wake_targets_update(struct sched *s, unsigned int n);
int fair_wake_target(struct sched *s, const struct sched_entity *se, unsigned int prev);
bool fair_wake_idle_ok(const struct sched *s, const struct sched_entity *se, unsigned int cpu);
bool fair_wake_prev_ok(const struct sched *s, const struct sched_entity *se, unsigned int prev);
bool fair_wake_full_to_idle(const struct sched *s, const struct sched_entity *se,
			    unsigned int prev);
bool fair_full_owner_slept(const struct sched *s, unsigned int cpu);
void fair_payback_reweight(struct sched *s, uint64_t now);
bool fair_sleeper_use(struct sched_entity *se, uint64_t used_ns, uint64_t dt);
void fair_sleeper_waits(const struct sched *s, struct sched_entity *se, uint64_t used_ns,
			uint64_t dt);
bool fair_sleeper_collect(const struct sched *s, struct sched_entity *se, struct lag_ent *e);
bool fair_sleeper_recent(const struct sched *s, struct sched_entity *se);
uint64_t fair_backlog_limit(const struct sched *s, struct sched_entity *se);
bool fair_runnable_throughout(const struct sched_entity *se, bool starts);
bool fair_any_capped(const struct sched *s);
unsigned int fair_sleepers_done(struct lag_ent *e, unsigned int n);
uint64_t fair_sleeper_weight(const struct sched_entity *se, uint64_t w);
void fair_repack(struct sched *s, unsigned int n, uint64_t now);
bool fair_whole_pcpu(const struct sched_rq *rq, uint64_t rate);
void fair_fresh_room(const struct sched *s, int64_t *room);
bool fair_pack(const struct sched *s, struct lag_ent *e, unsigned int n, int64_t *room,
	       const struct sched_cpumask *only);
void fair_spread(const struct sched *s, struct lag_ent *e, unsigned int n,
		 const struct sched_cpumask *only);
void fair_rotate(const struct sched *s, struct lag_ent *e, unsigned int n, int64_t *room,
		 const struct sched_cpumask *only, bool single);
void fair_plan_levels(const struct sched *s, struct lag_ent *e, unsigned int n, bool beside);
bool fair_rotate_around_bound(struct sched *s, struct lag_ent *e, unsigned int n);
void fair_rate_sums(const struct sched *s, const struct lag_ent *e, unsigned int n, uint64_t *sum);
bool fair_over_at(const struct sched *s, const uint64_t *sum, unsigned int cpu);
bool fair_off_by(const struct lag_ent *e, unsigned int n, int64_t by);
bool fair_straddler_behind(const struct sched *s, const struct lag_ent *e, unsigned int n);
int fair_cmp_rate_desc(const void *a, const void *b);
uint64_t fair_solver_weight(const struct sched *s, const struct sched_entity *se);
uint32_t fair_payback_weight(const struct sched *s, const struct sched_entity *se, uint64_t w,
			     uint64_t rate);
void fair_set_run_weight(struct sched *s, struct sched_entity *se, uint32_t w, uint64_t now);
bool fair_cap_tight(const struct sched *s, const struct sched_entity *se);
int64_t fair_cap_tight_lag(const struct sched *s, const struct sched_entity *se, int64_t vlag,
			   uint64_t others);
struct sched_entity *fair_cap_urgent(struct sched *s, struct sched_rq *rq,
				     struct sched_entity *pick);
uint32_t fair_capped_weight(uint64_t rate, uint64_t level, bool margin);
void fair_capped_reweight(struct sched *s, uint64_t now);
/* Lag (work) from its fluid ideal worth moving an entity for (fairlag.c, newidle). */
#define FAIR_LAG_MOVE_NS	(8 * NSEC_PER_MSEC)
/*
 * An entity owed more than the whole pCPU it is on by 1/2^this of that
 * pCPU straddles slow and fast pCPUs: no pCPU of its speed holds it
 * (fair_levels.c, levels planned beside sleepers).
 */
#define FAIR_STRADDLE_SHIFT	3

#endif /* CAPVISOR_SCHED_FAIRLAG_H */
