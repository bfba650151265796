// SPDX-License-Identifier: MIT
/*
 * Capacity-aware placement and balancing (kernel/sched/fair.c:
 * select_idle_capacity, util_fits_cpu, update_misfit_status,
 * sched_balance_rq, sched_balance_newidle).
 *
 * - Wakeup placement prefers an idle pCPU the entity fits (rule 19), then
 *   the least loaded fitting pCPU (like EAS, which only considers fitting
 *   CPUs), then, when nothing fits, the biggest idle pCPU.
 * - A running entity that does not fit its pCPU while a bigger one exists
 *   is "misfit" and is moved to a bigger idle pCPU at the next balance,
 *   unless its fluid share is that whole pCPU (misfit_ideal_fits()).
 * - Periodic balance moves waiting entities from the busiest to the
 *   idlest pCPU by weight normalized by the capacity left to the fair
 *   class, when the imbalance exceeds 17% (imbalance_pct 117).
 * - Newidle balance (seed 003, rules 25-26) pulls one waiting entity when a
 *   pCPU goes idle, with max_newidle_lb_cost per domain, its 253/256 decay
 *   after 1 s without update, and the avg_idle early abort.
 */
#include "sched/internal.h"

#define IMBALANCE_PCT		117
#define MIGRATION_COST_NS	(500 * NSEC_PER_USEC)
#define LB_STREAK		2

/* util_fits_cpu() (rule 19). */
bool util_fits_cpu(unsigned long util, unsigned int uclamp_min, unsigned int uclamp_max,
		   unsigned int capacity)
{
	bool fits = util * 1280 < (unsigned long)capacity * 1024;

	/* uclamp_max <= capacity: the entity asked to be kept this small. */
	fits = fits || uclamp_max <= capacity;
	return fits && uclamp_min <= capacity;
}

static void entity_clamps(const struct sched *s, const struct sched_entity *se,
			  unsigned int *lo, unsigned int *hi)
{
	if (uclamp_is_used(s)) {
		*lo = se->uc_eff[UCLAMP_MIN];
		*hi = se->uc_eff[UCLAMP_MAX];
	} else {
		*lo = 0;
		*hi = SCHED_CAPACITY_SCALE;
	}
}

bool entity_fits_cpu(const struct sched *s, const struct sched_entity *se, unsigned int cpu)
{
	unsigned int lo, hi;

	entity_clamps(s, se, &lo, &hi);
	return util_fits_cpu(se->pelt.util_avg, lo, hi, s->rq[cpu].capacity);
}

/* Fair weight per capacity, with `extra` weight added. */
static uint64_t rq_load(const struct sched_rq *rq, uint64_t extra)
{
	return ((rq->fair_weight + extra) << 10) / fair_capacity(rq);
}

static bool rq_idle(const struct sched_rq *rq)
{
	return !rq->curr && !rq->nr_running;
}

struct placement {
	int idle_fit, idle_big, least_fit, least_any;
	uint64_t load_fit, load_any;
};

static void consider(struct sched *s, struct sched_entity *se, unsigned int cpu,
		     struct placement *p)
{
	struct sched_rq *rq = &s->rq[cpu];
	bool fits = entity_fits_cpu(s, se, cpu);
	uint64_t load = rq_load(rq, se->on_rq && se->cpu == (int)cpu ? 0 : se->weight);

	if (rq_idle(rq)) {
		if (fits && p->idle_fit < 0)
			p->idle_fit = (int)cpu;
		if (p->idle_big < 0 || rq->capacity > s->rq[p->idle_big].capacity)
			p->idle_big = (int)cpu;
	}
	if (fits && (p->least_fit < 0 || load < p->load_fit)) {
		p->least_fit = (int)cpu;
		p->load_fit = load;
	}
	if (p->least_any < 0 || load < p->load_any) {
		p->least_any = (int)cpu;
		p->load_any = load;
	}
}

/*
 * First idle pCPU (in order from `start`) that se fits, and the biggest
 * idle one, looking only at idle pCPUs (a bitmap walk, not a full scan).
 */
static void scan_idle(struct sched *s, struct sched_entity *se, unsigned int start,
		      struct placement *p)
{
	unsigned int best_dist = UINT32_MAX;

	for (unsigned int w = 0; w < SCHED_MAX_CPUS / 64; w++) {
		uint64_t bits = s->idle_mask.bits[w] & se->allowed.bits[w];

		while (bits) {
			unsigned int cpu = w * 64 + (unsigned int)__builtin_ctzll(bits);
			unsigned int dist = (cpu + s->nr_cpus - start) % s->nr_cpus;

			bits &= bits - 1;
			if (!rq_idle(&s->rq[cpu]))
				continue;
			if (dist < best_dist && entity_fits_cpu(s, se, cpu)) {
				p->idle_fit = (int)cpu;
				best_dist = dist;
			}
			if (p->idle_big < 0 || s->rq[cpu].capacity > s->rq[p->idle_big].capacity)
				p->idle_big = (int)cpu;
		}
	}
}

/*
 * select_task_rq_fair() for a waking or new entity: an idle pCPU it fits,
 * else stay on prev when it fits there (or a sleeper's demand does:
 * fair_wake_prev_ok()) (the periodic balance evens loads
 * out, like wake_affine keeping a task near its cache; a sleeper the
 * fluid balance wants away from prev may go to a pCPU it fits, or to the
 * biggest idle one: fair_wake.c), else the least loaded fitting pCPU,
 * else the biggest idle one, else the least loaded.
 */
unsigned int select_cpu_fair(struct sched *s, struct sched_entity *se)
{
	struct placement p = { -1, -1, -1, -1, 0, 0 };
	int prev = se->cpu >= 0 && sched_cpumask_test(&se->allowed, (unsigned int)se->cpu) ?
		   se->cpu : -1;
	unsigned int start = prev >= 0 ? (unsigned int)prev : 0;
	bool prev_fits = prev >= 0 && (entity_fits_cpu(s, se, (unsigned int)prev) ||
				       fair_wake_prev_ok(s, se, (unsigned int)prev));

	if (prev_fits && rq_idle(&s->rq[prev]))
		return (unsigned int)prev;
	scan_idle(s, se, start, &p);
	if (p.idle_fit >= 0)
		return (unsigned int)p.idle_fit;
	if (p.idle_big >= 0 && fair_wake_idle_ok(s, se, (unsigned int)p.idle_big))
		return (unsigned int)p.idle_big;
	if (prev_fits) {
		int t = fair_wake_target(s, se, (unsigned int)prev);

		if (t < 0 && p.idle_big >= 0 && fair_wake_full_to_idle(s, se, (unsigned int)prev))
			t = p.idle_big;
		return t >= 0 ? (unsigned int)t : (unsigned int)prev;
	}
	for (unsigned int i = 0; i < s->nr_cpus; i++) {
		unsigned int cpu = (start + i) % s->nr_cpus;

		if (sched_cpumask_test(&se->allowed, cpu))
			consider(s, se, cpu, &p);
	}
	if (p.least_fit >= 0)
		return (unsigned int)p.least_fit;
	if (p.idle_big >= 0)
		return (unsigned int)p.idle_big;
	if (prev >= 0 && rq_load(&s->rq[prev], se->weight) * 100 <= p.load_any * IMBALANCE_PCT)
		return (unsigned int)prev;
	return (unsigned int)p.least_any;
}

/*
 * update_misfit_status(), past the inline tests of update_misfit(), for
 * the running entity at utilization `util` (its util_avg, or a projection
 * of it when the tick's PELT update was deferred).
 */
void update_misfit_util(struct sched *s, struct sched_rq *rq, unsigned long util)
{
	struct sched_entity *curr = rq->curr;
	unsigned int lo, hi;

	entity_clamps(s, curr, &lo, &hi);
	if (util_fits_cpu(util, lo, hi, rq->capacity))
		return;
	if (sched_cpumask_intersects(&s->cluster[rq->cluster].bigger, &curr->allowed))
		rq->misfit = true;
}

void update_misfit_slow(struct sched *s, struct sched_rq *rq)
{
	update_misfit_util(s, rq, rq->curr->pelt.util_avg);
}

/* ---------------------------------------------------------------- idle */

void update_idle_enter(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	sched_cpumask_set(&s->idle_mask, rq->cpu);
	rq->idle = true;
	rq->idle_start = now;
}

static uint64_t max_idle_balance_cost(const struct sched_rq *rq)
{
	uint64_t m = MIGRATION_COST_NS;

	for (int d = 0; d < SCHED_DOMAINS; d++)
		if (rq->sd[d].valid && rq->sd[d].max_newidle_lb_cost > m)
			m = rq->sd[d].max_newidle_lb_cost;
	return m;
}

/* avg_idle: 1/8 EWMA of idle durations, capped at 2x the balance cost. */
void update_idle_exit(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	int64_t dur, diff;
	uint64_t max;

	if (!rq->idle)
		return;
	rq->last_idle = now;
	s->idle_mask.bits[rq->cpu / 64] &= ~(1ull << (rq->cpu % 64));
	rq->idle = false;
	dur = (int64_t)(now - rq->idle_start);
	diff = dur - (int64_t)rq->avg_idle;
	rq->avg_idle = (uint64_t)((int64_t)rq->avg_idle + diff / 8);
	max = 2 * max_idle_balance_cost(rq);
	if (rq->avg_idle > max)
		rq->avg_idle = max;
}

/* ---------------------------------------------------------------- moving */

/*
 * se's lag (fairlag.c) brought up to now: its ideal work since the last
 * balance less the work it did since. Between balances the lags stand
 * still, and the entity furthest behind at the last one would take every
 * hole until the next.
 */
int64_t lag_now(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	if (!se->lag_tracked)
		return se->lag;
	return se->lag + (int64_t)((se->lag_rate * (now - s->lag_last)) >> RATE_SHIFT) -
	       (int64_t)(se->st.work_ns + se->run_work_ns - se->lag_work);
}

/*
 * May newidle not pull se into dst's cap hole? With groups, when se is
 * ahead of its ideal now. A hole's time is lost for good, and the entity
 * pulled in runs alone there until the throttled one's period ends: a
 * light member already ahead took whole holes, 3.7 ms at a time, and went
 * further ahead while the entities behind waited (seed 5 #121 of the
 * groups corpus: the four members of g5, weight 17, 52 ms of work over,
 * most of it from 24 pulls into the holes of two capped vCPUs). Elsewhere
 * only a lag ahead of a move's worth keeps an entity out (pick_movable());
 * in a hole, one behind its ideal is the one its time belongs to. Only
 * with groups: the caps corpus's hole rules were tuned with entities
 * ahead taking holes (docs/sched/caps.md, "Holes filled"). O(1).
 */
static bool hole_pull_ahead(const struct sched *s, const struct sched_rq *dst,
			    const struct sched_entity *se, uint64_t now)
{
	return s->nr_groups && se->lag_tracked && !slist_empty(&dst->cap_throttled) &&
	       lag_now(s, se, now) < 0;
}

/*
 * A waiting fair entity of src that may run on dst, or NULL: with best_max,
 * the one whose move lowers the larger of the two loads most; without, the
 * one furthest behind its fair share (fairlag.c).
 */
static struct sched_entity *pick_movable(const struct sched *s, struct sched_rq *src,
					 struct sched_rq *dst, uint64_t *best_max, uint64_t now)
{
	struct sched_entity *best = NULL;
	uint64_t old_max = rq_load(src, 0);
	struct slist *pos;

	for (pos = src->queued.next; pos != &src->queued; pos = pos->next) {
		struct sched_entity *se = slist_entry(pos, struct sched_entity, rq_link);
		uint64_t nb, nd, m;

		if (se == src->curr || dl_entity(se) || !sched_cpumask_test(&se->allowed, dst->cpu))
			continue;
		if (!best_max) {
			/*
			 * newidle: the one furthest behind its fair share (first
			 * on ties), among those whose share dst can give. Not
			 * one already ahead by a move's worth: the idle time
			 * would put it further ahead, and the fluid balance
			 * that put it beside others would undo it at the next
			 * balance (a light entity next to sleepers otherwise
			 * collects their idle gaps, pulled from pCPU to pCPU).
			 * Nor one whose share dst cannot give, even if nothing
			 * else waits: it waited a moment beside a sleeper on
			 * its fast pCPU, and pulled to a slow one it ran there
			 * until the misfit balance took it back, while its
			 * fast pCPU idled or pulled another (seed 10 #289 of
			 * the fair corpus: 797 migrations, 19.5% short).
			 */
			if (se->lag_tracked && se->lag < -(int64_t)FAIR_LAG_MOVE_NS)
				continue;
			/* nor a member that may run less than a short request there */
			if (group_pull_short(s, se, now))
				continue;
			/* nor, into a cap hole, one already ahead (with groups) */
			if (hole_pull_ahead(s, dst, se, now))
				continue;
			if (se->lag_rate <= ((uint64_t)dst->capacity << 10) &&
			    (!best || se->lag > best->lag))
				best = se;
			continue;
		}
		/* a feasible placement of the fluid balance is kept (fair_repack.c) */
		if (se->lag_packed)
			continue;
		nb = ((src->fair_weight - se->weight) << 10) / fair_capacity(src);
		nd = rq_load(dst, se->weight);
		m = nb > nd ? nb : nd;
		if (m < old_max && (!best || m < *best_max)) {
			best = se;
			*best_max = m;
		}
	}
	return best;
}

/* Move a waiting entity (no rescheduling: the caller does it). */
void move_queued(struct sched *s, struct sched_entity *se, struct sched_rq *dst, int reason,
		 uint64_t now)
{
	struct sched_rq *src = &s->rq[se->cpu];
	struct sched_event ev;

	update_rq_clock(s, src, now);
	update_rq_clock(s, dst, now);
	dequeue_entity(s, src, se, DEQ_MIGRATE, now);
	enqueue_entity(s, dst, se, ENQ_MIGRATED, now);
	se->st.nr_migrations++;
	if (s->cfg.event) {
		memset(&ev, 0, sizeof(ev));
		ev.type = SCHED_EV_MIGRATE;
		ev.now = now;
		ev.cpu = (int)dst->cpu;
		ev.entity = se->id;
		ev.from_cpu = (int)src->cpu;
		ev.to_cpu = (int)dst->cpu;
		ev.reason = reason;
		sched_emit(s, &ev);
	}
}

/*
 * Is se's fluid share (fairlag.c) all of rq, within 1/32 as lag_full?
 * Then it is not misfit there, however busy: a bigger pCPU idle for a
 * moment (its sleepers' gaps) gave it more than its share, and the lag
 * balance moved it back at the next interval (seed 855086 #127 of the
 * fair corpus: a light entity whose share is a whole pCPU of 221 was
 * moved to idle pCPUs of 912 73 times in 10 s, 230 migrations in all,
 * and got 0.48 s of work over its ideal, 9.6 x the bound; now 66 and
 * 0.04 s). Entities with less than the whole pCPU keep the kernel's rule
 * (skipping them too lost two scenarios of the corpus). Not where the
 * bigger idle pCPU's own entity has slept (fair_full_owner_slept()).
 */
static bool misfit_ideal_fits(const struct sched_rq *rq, const struct sched_entity *se)
{
	uint64_t cap = capacity_rate(rq->capacity);

	return se->lag_tracked && se->lag_rate <= cap && se->lag_rate >= cap - cap / 32;
}

/* Is some pCPU idle while an entity is owed all of it (fair_full_owner_slept()'s)? O(m). */
static bool idle_full(const struct sched *s)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (s->rq[cpu].lag_full && rq_idle(&s->rq[cpu]))
			return true;
	return false;
}

static void balance_misfit(struct sched *s, uint64_t now)
{
	int full_idles = -1;	/* idle_full(), once it is asked */

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];
		struct sched_entity *se = rq->curr;
		bool spared;
		int best = -1;

		if (!rq->misfit || !se)
			continue;
		spared = misfit_ideal_fits(rq, se);
		if (spared && full_idles < 0)
			full_idles = idle_full(s);
		if (spared && !full_idles)
			continue;
		for (unsigned int d = 0; d < s->nr_cpus; d++) {
			struct sched_rq *drq = &s->rq[d];

			if (drq->capacity <= rq->capacity || !rq_idle(drq) ||
			    !sched_cpumask_test(&se->allowed, d))
				continue;
			if (best < 0 || drq->capacity > s->rq[best].capacity)
				best = (int)d;
		}
		if (best < 0 || (spared && !fair_full_owner_slept(s, (unsigned int)best)))
			continue;
		rq->nr_misfit_migrations++;
		migrate_entity(s, se, (unsigned int)best, SCHED_MIGRATE_MISFIT, now);
	}
}

/* May give entities away: something waiting, and above the mean for a while. */
static bool lb_candidate(const struct sched_rq *rq)
{
	return rq->nr_fair >= 2 && rq->lb_streak >= LB_STREAK;
}

/*
 * One move from the busiest candidate pCPU to the idlest, if it lowers the
 * maximum load. load[] and cand[] are kept current by the caller (only the
 * two pCPUs of a move change), so that the scan reads two small arrays and
 * not every runqueue, up to nr_cpus times per balance.
 */
static bool balance_once(struct sched *s, uint64_t *load, bool *cand, uint64_t mean,
			 uint64_t now)
{
	struct sched_rq *busiest, *idlest;
	struct sched_entity *se;
	uint64_t lb = 0, li = UINT64_MAX, m = 0;
	int b = -1, i = -1;

	/*
	 * The first busiest candidate and the first idlest pCPU, with
	 * conditional moves (which pCPU wins is a coin toss). A candidate has
	 * two fair entities, so its load is at least 1 and beats lb = 0. A
	 * pCPU whose entity's fair share is all of it takes nothing: what
	 * another entity ran there would be lost to that one for good, and
	 * the fluid-ideal balance would only move it back. Nor does a pCPU of
	 * a tight level (lag_tight, fairlag.c), which needs all of its pCPUs
	 * as a whole entity needs its own, for the reason the wakeups leave
	 * both (fair_wake.c): the lightly loaded pCPU of such a level drew
	 * the sleepers from the slow pCPUs by weight (seed 1 #110 of the fair
	 * corpus: 419 such moves, the sleepers 0.84 s on the fast pCPUs the
	 * ideal leaves them none of, the level 0.53 s short).
	 */
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		bool busier = cand[cpu] & (load[cpu] > lb);
		bool idler = !s->rq[cpu].lag_full & !s->rq[cpu].lag_tight & (load[cpu] < li);

		b = busier ? (int)cpu : b;
		lb = busier ? load[cpu] : lb;
		i = idler ? (int)cpu : i;
		li = idler ? load[cpu] : li;
	}
	/* Both ends clearly off the mean: no shuffling between average pCPUs. */
	if (b < 0 || i < 0 || b == i || lb * 100 <= li * IMBALANCE_PCT || li * IMBALANCE_PCT >= mean * 100)
		return false;
	busiest = &s->rq[b];
	idlest = &s->rq[i];
	se = pick_movable(s, busiest, idlest, &m, now);
	if (!se)
		return false;
	busiest->nr_lb_migrations++;
	move_queued(s, se, idlest, SCHED_MIGRATE_BALANCE, now);
	wakeup_preempt(s, idlest, se);
	if (idlest->need_resched)
		schedule_rq(s, idlest, now);
	load[b] = rq_load(busiest, 0);
	load[i] = rq_load(idlest, 0);
	cand[b] = lb_candidate(busiest);
	cand[i] = lb_candidate(idlest);
	return true;
}

/*
 * The periodic decay of every domain's max_newidle_lb_cost (rule 25). A
 * cost decays once its last decay is more than 1 s old, and last decays
 * only move forward, so nothing can be due before the oldest of them plus
 * 1 s: until then the walk over every pCPU's domains is skipped.
 */
static void decay_newidle_costs(struct sched *s, uint64_t now)
{
	uint64_t oldest = UINT64_MAX;

	if (now <= s->newidle_decay_due)
		return;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		for (int d = 0; d < SCHED_DOMAINS; d++) {
			struct sched_domain_cost *sd = &s->rq[cpu].sd[d];

			if (!sd->valid)
				continue;
			update_newidle_cost(sd, 0, now);
			if (sd->last_decay_max_lb_cost < oldest)
				oldest = sd->last_decay_max_lb_cost;
		}
	}
	s->newidle_decay_due = oldest == UINT64_MAX ? UINT64_MAX : oldest + NSEC_PER_SEC;
}

/* The periodic part of sched_balance_domains(). */
void sched_balance(struct sched *s, uint64_t now)
{
	uint64_t load[SCHED_MAX_CPUS], sum = 0;
	bool cand[SCHED_MAX_CPUS];

	decay_newidle_costs(s, now);
	balance_misfit(s, now);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		load[cpu] = rq_load(&s->rq[cpu], 0);
		sum += load[cpu];
	}
	/*
	 * Loads are instantaneous weights, so a wakeup burst looks like an
	 * imbalance; only a pCPU above the mean by imbalance_pct at LB_STREAK
	 * balances in a row gives entities away (the kernel gets the same
	 * damping from load_avg).
	 */
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];

		if (load[cpu] * 100 * s->nr_cpus > sum * IMBALANCE_PCT)
			rq->lb_streak++;
		else
			rq->lb_streak = 0;
		cand[cpu] = lb_candidate(rq);
	}
	for (unsigned int i = 0; i < s->nr_cpus; i++)
		if (!balance_once(s, load, cand, sum / s->nr_cpus, now))
			break;
	fair_lag_balance(s, now);
}

/* ---------------------------------------------------------------- newidle */

void sched_domains_init(struct sched *s)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];
		const struct sched_cluster *c = &s->cluster[rq->cluster];
		int d = 0;

		if (c->desc.nr_cpus > 1) {
			sched_cluster_mask(s, rq->cluster, &rq->sd[d].span);
			rq->sd[d].nr_span = c->desc.nr_cpus;
			rq->sd[d++].valid = true;
		}
		if (s->nr_clusters > 1 || (d == 0 && s->nr_cpus > 1)) {
			rq->sd[d].span = s->all_cpus;
			rq->sd[d].nr_span = s->nr_cpus;
			rq->sd[d++].valid = true;
		}
	}
}

/* update_newidle_cost(): raise to a larger cost, else decay after 1 s. */
bool update_newidle_cost(struct sched_domain_cost *sd, uint64_t cost, uint64_t now)
{
	if (cost > sd->max_newidle_lb_cost) {
		sd->max_newidle_lb_cost = cost;
		sd->last_decay_max_lb_cost = now;
	} else if (now > sd->last_decay_max_lb_cost + NSEC_PER_SEC) {
		sd->max_newidle_lb_cost = sd->max_newidle_lb_cost * 253 / 256;
		sd->last_decay_max_lb_cost = now;
		return true;
	}
	return false;
}

/* Pull one waiting entity from the busiest pCPU of the span. */
static bool pull_one(struct sched *s, struct sched_rq *dst, const struct sched_domain_cost *sd,
		     uint64_t now)
{
	struct sched_rq *busiest = NULL;
	struct sched_entity *se;
	uint64_t lb = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];
		uint64_t l;

		if (rq == dst || rq->nr_running < 2 || !sched_cpumask_test(&sd->span, cpu))
			continue;
		l = rq_load(rq, 0);
		if (!busiest || l > lb) {
			busiest = rq;
			lb = l;
		}
	}
	if (!busiest)
		return false;
	se = pick_movable(s, busiest, dst, NULL, now);
	if (!se)
		return false;
	move_queued(s, se, dst, SCHED_MIGRATE_NEWIDLE, now);
	return true;
}

static uint64_t measure(const struct sched *s)
{
	return s->cfg.clock ? s->cfg.clock(s->cfg.clock_opaque) : 0;
}

/* sched_balance_newidle(): called by schedule_rq() when rq has nothing to run. */
bool sched_balance_newidle(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	uint64_t curr_cost = 0;

	if (!rq->sd[0].valid)
		return false;
	rq->nr_newidle++;
	if (!s->nr_overloaded || rq->avg_idle < rq->sd[0].max_newidle_lb_cost) {
		rq->nr_newidle_skipped++;
		return false;
	}
	for (int d = 0; d < SCHED_DOMAINS && rq->sd[d].valid; d++) {
		struct sched_domain_cost *sd = &rq->sd[d];
		uint64_t t0, cost;
		bool pulled;

		if (rq->avg_idle < curr_cost + sd->max_newidle_lb_cost) {
			rq->nr_newidle_aborted++;
			break;
		}
		t0 = measure(s);
		pulled = pull_one(s, rq, sd, now);
		cost = s->cfg.clock ? measure(s) - t0 : s->cfg.newidle_model_ns_per_cpu * sd->nr_span;
		update_newidle_cost(sd, cost, now);
		curr_cost += cost;
		if (pulled) {
			rq->nr_newidle_pulled++;
			return true;
		}
	}
	return false;
}
