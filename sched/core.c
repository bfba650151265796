// SPDX-License-Identifier: MIT
/*
 * Engine core: runqueues, the pick across classes (in sched_classes[] order),
 * wakeup/block/yield, the tick, and the per-pCPU "current" queries.
 *
 * Every entry point brings the runqueues it touches up to `now`
 * (update_rq_clock: runtime accounting and PELT), changes state through
 * the class ops, and reschedules the pCPUs whose choice may have changed,
 * so the answer of sched_cpu_curr() is always valid when a call returns.
 */
#include "sched/internal.h"

#include <stdarg.h>	/* va_list for sched_errf(): a freestanding header */
#include <stdlib.h>

const struct sched_class *const sched_classes[SCHED_NR_CLASSES] = {
	&dl_sched_class,
	&fair_sched_class,
};

int sched_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -code;
}

const char *sched_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0: return "success";
	case SCHED_E_INVAL: return "invalid argument";
	case SCHED_E_NOENT: return "no such entity, pCPU or cluster";
	case SCHED_E_NOMEM: return "out of memory";
	case SCHED_E_AFFINITY: return "affinity selects no pCPU";
	case SCHED_E_CAPACITY_FIT: return "reservation fits no pCPU of its affinity";
	case SCHED_E_BANDWIDTH: return "reservation exceeds the admissible bandwidth";
	case SCHED_E_CLASS: return "not valid for the entity's class";
	case SCHED_E_BUSY: return "group still has members";
	case SCHED_E_EXIST: return "a group of that name exists";
	default: return "unknown error";
	}
}

struct sched_entity *sched_ent(const struct sched *s, int id)
{
	if (id < 0 || (unsigned int)id >= s->nr_ent_slots)
		return NULL;
	return s->ent[id];
}

void sched_emit(struct sched *s, const struct sched_event *ev)
{
	if (s->cfg.event)
		s->cfg.event(s->cfg.event_opaque, ev);
}

/* ---------------------------------------------------------------- create */

static void rq_init(struct sched *s, struct sched_rq *rq, unsigned int cpu, unsigned int cluster)
{
	memset(rq, 0, sizeof(*rq));
	rq->cpu = cpu;
	rq->cluster = cluster;
	rq->capacity = s->cluster[cluster].desc.capacity;
	rq->idle = true;
	rq->avg_idle = 2 * 500 * NSEC_PER_USEC;	/* 2 x sysctl_sched_migration_cost */
	slist_init(&rq->queued);
	slist_init(&rq->capped);
	slist_init(&rq->dl_assigned);
	slist_init(&rq->cap_throttled);
	uclamp_rq_init(rq);
}

static void config_defaults(struct sched_config *c)
{
	if (!c->slice_ns)
		c->slice_ns = 3 * NSEC_PER_MSEC;
	if (!c->tick_ns)
		c->tick_ns = NSEC_PER_MSEC;
	if (!c->dl_limit_permille)
		c->dl_limit_permille = 950;
	if (!c->balance_interval_ns)
		c->balance_interval_ns = 4 * NSEC_PER_MSEC;
	if (!c->busy_factor)
		c->busy_factor = 4;
	if (!c->perf_interval_ns)
		c->perf_interval_ns = c->tick_ns;
	if (!c->newidle_model_ns_per_cpu)
		c->newidle_model_ns_per_cpu = 50;
}

struct sched *sched_create(const struct sched_topology *topo, const struct sched_config *cfg,
			   char *err, size_t errlen)
{
	struct sched *s;
	unsigned int cpu = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!topo) {
		sched_errf(err, errlen, SCHED_E_INVAL, "topology: missing");
		return NULL;
	}
	if (cfg && cfg->dl_limit_permille > 1000) {
		sched_errf(err, errlen, SCHED_E_INVAL,
			   "dl_limit_permille: %u out of range 1..1000", cfg->dl_limit_permille);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		sched_errf(err, errlen, SCHED_E_NOMEM, "out of memory");
		return NULL;
	}
	if (cfg)
		s->cfg = *cfg;
	config_defaults(&s->cfg);
	if (topology_build(s, topo, err, errlen) < 0) {
		free(s);
		return NULL;
	}
	s->rq = sched_zalloc_aligned(s->nr_cpus * sizeof(*s->rq));
	if (!s->rq) {
		free(s);
		sched_errf(err, errlen, SCHED_E_NOMEM, "out of memory");
		return NULL;
	}
	for (unsigned int c = 0; c < s->nr_clusters; c++)
		for (unsigned int i = 0; i < s->cluster[c].desc.nr_cpus; i++, cpu++)
			rq_init(s, &s->rq[cpu], cpu, c);
	sched_domains_init(s);
	s->idle_mask = s->all_cpus;
	return s;
}

void sched_destroy(struct sched *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; i < s->nr_ent_slots; i++)
		free(s->ent[i]);
	free(s->ent);
	free(s->lag_ents);
	free(s->lag_order);
	group_destroy(s);
	free(s->rq);
	free(s);
}

/* ---------------------------------------------------------------- accounting */

/* Bring an entity's PELT signals up to `now` in its current state. */
static __attribute__((noinline)) void se_pelt_sync_slow(struct sched *s, struct sched_entity *se,
							uint64_t now)
{
	struct sched_rq *rq = se->cpu >= 0 ? &s->rq[se->cpu] : NULL;
	unsigned int level = rq ? rq_level(s, rq) : SCHED_CAPACITY_SCALE;

	/*
	 * One pelt_update() per state, each with constant inputs: the tests
	 * on them vanish, and which state comes is a coin toss per call.
	 */
	if (rq && rq->curr == se)
		pelt_update(&se->pelt, now, se->weight, 1, true, level);
	else if (se->on_rq)
		pelt_update(&se->pelt, now, se->weight, 1, false, level);
	else
		pelt_update(&se->pelt, now, 0, 0, false, level);
}

/*
 * Most calls come less than 1024 ns after the last update (the entity was
 * synced by the tick or by the same event): pelt_update() has nothing to
 * do then, and the test is done here, without a call.
 */
static inline void se_pelt_sync(struct sched *s, struct sched_entity *se, uint64_t now)
{
	if (now - se->pelt.last_update >= 1024)
		se_pelt_sync_slow(s, se, now);
}

/* The running entity's PELT, at every tick (the kernel's entity_tick()). */
void update_curr_pelt(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct sched_entity *curr = rq->curr;

	if (!curr)
		return;
	if (curr->cpu == (int)rq->cpu)	/* what se_pelt_sync() finds, known here */
		pelt_update(&curr->pelt, now, curr->weight, 1, true, rq_level(s, rq));
	else
		se_pelt_sync(s, curr, now);
}

/*
 * The run-time part of update_rq_clock(), once it has checked that time
 * moved: the current entity's class charges its runtime (vruntime, CBS
 * budget). update_rq_clock_slow() then advances the rq's PELT; entities'
 * PELT catches up lazily at their next state change (their state was
 * constant meanwhile), at a level change, and for the running one at
 * every full tick (update_curr_pelt).
 */
static inline void rq_account(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct sched_entity *curr = rq->curr;
	unsigned int level = rq_level(s, rq);
	uint64_t delta = now - rq->clock;

	if (curr) {
		curr->run_ns += delta;	/* into st at switch-out, on this rq's cluster */
		curr->run_work_ns += (delta * level) >> 10;
		if (curr->group != SCHED_NONE)
			group_charge(s, rq, curr, delta, level);
		if (curr->on_rq) {
			if (curr->cap_period)
				cap_charge(rq, curr, delta, now);
			if (curr->class == &fair_sched_class)
				fair_update_curr(s, rq, delta);	/* the class op, inline */
			else
				curr->class->update_curr(s, rq, delta, now);
		}
		rq->busy_ns += delta;
	} else {
		rq->idle_ns += delta;
		rq->idle_in_window += delta;
		rq->last_idle = now;
	}
	rq->clock = now;
}

void update_rq_clock_slow(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	rq_account(s, rq, now);
	pelt_update(&rq->pelt, now, rq->fair_weight, rq->nr_running, rq->curr != NULL,
		    rq_level(s, rq));
}

static void rq_nr_inc(struct sched *s, struct sched_rq *rq)
{
	if (++rq->nr_running == 2)
		s->nr_overloaded++;
}

static void rq_nr_dec(struct sched *s, struct sched_rq *rq)
{
	if (rq->nr_running-- == 2)
		s->nr_overloaded--;
}

void enqueue_entity(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags,
		    uint64_t now)
{
	se_pelt_sync(s, se, now);
	se->cpu = rq->cpu;
	se->on_rq = true;
	se->state = SCHED_RUNNABLE;
	slist_add_tail(&se->rq_link, &rq->queued);
	rq_nr_inc(s, rq);
	if (uclamp_is_used(s))
		uclamp_rq_inc(s, rq, se);
	se->class->enqueue(s, rq, se, flags);
	se->wait_start = now;
}

void dequeue_entity(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags,
		    uint64_t now)
{
	se_pelt_sync(s, se, now);
	if (rq->curr != se)
		se->st.wait_ns += now - se->wait_start;
	se->class->dequeue(s, rq, se, flags);
	if (se->uc_active)
		uclamp_rq_dec(s, rq, se);
	slist_del(&se->rq_link);
	rq_nr_dec(s, rq);
	se->on_rq = false;
	if (rq->next_buddy == se)
		rq->next_buddy = NULL;
}

void wakeup_preempt(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	struct sched_entity *curr = rq->curr;

	if (!curr || !curr->on_rq)
		resched_rq(rq);
	else if (se->class != curr->class)
		rq->need_resched |= sched_class_above(se->class, curr->class);
	else if (se->class->wakeup_preempt(s, rq, se))
		resched_rq(rq);
}

static struct sched_entity *pick_next(struct sched *s, struct sched_rq *rq)
{
	const struct sched_class *class;
	struct sched_entity *next;

	for_each_class(class) {
		next = class->pick(s, rq);
		if (next)
			return next;
	}
	return NULL;
}

/* __schedule(): choose what rq runs now and switch to it. */
void schedule_rq(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct sched_entity *prev = rq->curr, *next;
	struct sched_event ev;

	update_rq_clock(s, rq, now);
	rq->need_resched = false;
	if (prev && dl_entity(prev) && prev->on_rq && prev->dl_runtime <= 0)
		dl_throttle(s, rq, prev, now);
	else if (prev && prev->on_rq && cap_exhausted(s, prev, now))
		cap_throttle(s, rq, prev, now);
	s->cap_loser = NULL;
	next = pick_next(s, rq);
	/* Queued members of a group whose quota ran out go off before they run. */
	while (next && next != prev && next->grp_capped && cap_exhausted(s, next, now)) {
		cap_throttle(s, rq, next, now);
		next = pick_next(s, rq);
	}
	if (!next && !s->cfg.no_newidle && !s->lag_in_move && !cap_hole_short(s, rq, now) &&
	    sched_balance_newidle(s, rq, now))
		next = pick_next(s, rq);
	if (next == prev)
		goto push;
	if (prev) {
		se_pelt_sync(s, prev, now);
		stats_switch_out(s, rq, prev, now);
		if (prev->on_rq) {
			prev->class->put_prev(s, rq, prev);
			prev->state = SCHED_RUNNABLE;
			prev->wait_start = now;
			prev->st.nr_preemptions++;
		}
	}
	if (next)
		se_pelt_sync(s, next, now);	/* waited until now */
	if (s->nr_groups)	/* the groups' running masks */
		group_switch_curr(s, rq, next);
	rq->curr = next;
	if (next) {
		next->class->set_next(s, rq, next);
		next->state = SCHED_RUNNING;
		stats_switch_in(s, rq, next, now);
		if (!prev)
			update_idle_exit(s, rq, now);
	} else {
		update_idle_enter(s, rq, now);
	}
	rq->gen++;
	rq->nr_switches++;
	update_misfit(s, rq);
	if (s->cfg.event) {
		memset(&ev, 0, sizeof(ev));
		ev.type = SCHED_EV_SWITCH;
		ev.now = now;
		ev.cpu = (int)rq->cpu;
		ev.prev = prev ? prev->id : SCHED_NONE;
		ev.next = next ? next->id : SCHED_NONE;
		ev.entity = ev.next;
		sched_emit(s, &ev);
	}
push:
	if (s->cap_loser)	/* a held entity losing quota at this pick (cap.c) */
		cap_push_loser(s, rq, now);
}

static void emit_migrate(struct sched *s, struct sched_entity *se, int from, int to, int reason,
			 uint64_t now)
{
	struct sched_event ev;

	se->st.nr_migrations++;
	if (!s->cfg.event)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = SCHED_EV_MIGRATE;
	ev.now = now;
	ev.cpu = to;
	ev.entity = se->id;
	ev.from_cpu = from;
	ev.to_cpu = to;
	ev.reason = reason;
	sched_emit(s, &ev);
}

/*
 * Move se to pCPU `to`. A queued entity (running or waiting) is dequeued
 * and enqueued (its fair lag is kept, as on a kernel migration); a blocked
 * or throttled one is only reassigned.
 */
void migrate_entity(struct sched *s, struct sched_entity *se, unsigned int to, int reason,
		    uint64_t now)
{
	struct sched_rq *src, *dst = &s->rq[to];
	int from = se->cpu;
	bool was_curr;

	if (from == (int)to)
		return;
	if (!se->on_rq) {
		if (dl_entity(se))
			dl_assign_rq(s, se, (int)to);
		if (se->cap_throttled) {	/* its period end is watched there now */
			slist_del(&se->cap_link);
			slist_add_tail(&se->cap_link, &dst->cap_throttled);
		}
		se->cpu = (int)to;
		emit_migrate(s, se, from, (int)to, reason, now);
		return;
	}
	src = &s->rq[from];
	update_rq_clock(s, src, now);
	update_rq_clock(s, dst, now);
	was_curr = src->curr == se;
	dequeue_entity(s, src, se, DEQ_MIGRATE, now);
	/* Switch src away from se before se joins dst. */
	if (was_curr)
		schedule_rq(s, src, now);
	if (dl_entity(se))
		dl_assign_rq(s, se, (int)to);
	enqueue_entity(s, dst, se, ENQ_MIGRATED, now);
	emit_migrate(s, se, from, (int)to, reason, now);
	wakeup_preempt(s, dst, se);
	if (dst->need_resched)
		schedule_rq(s, dst, now);
}

/* ---------------------------------------------------------------- events */

/* An event about one entity on its pCPU (wakeup, block, throttle, ...). */
void sched_emit_entity(struct sched *s, int type, struct sched_entity *se, uint64_t now)
{
	struct sched_event ev;

	if (!s->cfg.event)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.now = now;
	ev.cpu = se->cpu;
	ev.entity = se->id;
	ev.deadline = se->dl_deadline;
	sched_emit(s, &ev);
}

/* try_to_wake_up(): select a pCPU, enqueue, maybe preempt. */
int sched_activate(struct sched *s, struct sched_entity *se, int flags, uint64_t now)
{
	struct sched_rq *rq;
	unsigned int cpu;
	int prev_cpu = se->cpu;

	se_pelt_sync(s, se, now);
	if ((dl_entity(se) && se->dl_throttled) || se->cap_throttled) {
		se->state = SCHED_THROTTLED;
		return 0;
	}
	if (cap_exhausted(s, se, now)) {	/* woken with its quota used up */
		cap_hold(s, se, now);
		return 0;
	}
	cpu = se->class->select_cpu(s, se);
	rq = &s->rq[cpu];
	update_rq_clock(s, rq, now);
	if (dl_entity(se))
		dl_assign_rq(s, se, (int)cpu);
	if (prev_cpu >= 0 && prev_cpu != (int)cpu)
		emit_migrate(s, se, prev_cpu, (int)cpu, SCHED_MIGRATE_WAKEUP, now);
	enqueue_entity(s, rq, se, flags, now);
	sched_emit_entity(s, SCHED_EV_WAKEUP, se, now);
	wakeup_preempt(s, rq, se);
	if (rq->need_resched)
		schedule_rq(s, rq, now);
	return 0;
}

int sched_wakeup(struct sched *s, int id, uint64_t now)
{
	struct sched_entity *se = sched_ent(s, id);

	if (!se)
		return -SCHED_E_NOENT;
	if (se->state != SCHED_BLOCKED)
		return 0;
	now = engine_now(s, now);
	se->st.nr_wakeups++;
	se->wake_time = now;
	se->wake_pending = true;
	sched_activate(s, se, ENQ_WAKEUP, now);
	perf_kick(s, now);
	return 0;
}

int sched_block(struct sched *s, int id, uint64_t now)
{
	struct sched_entity *se = sched_ent(s, id);
	struct sched_rq *rq;

	if (!se)
		return -SCHED_E_NOENT;
	now = engine_now(s, now);
	se->wake_pending = false;
	if (se->state == SCHED_BLOCKED)
		return 0;
	if (se->state == SCHED_THROTTLED) {
		se->state = SCHED_BLOCKED;	/* the CBS timer still replenishes */
		sched_emit_entity(s, SCHED_EV_BLOCK, se, now);
		return 0;
	}
	rq = &s->rq[se->cpu];
	update_rq_clock(s, rq, now);
	dequeue_entity(s, rq, se, DEQ_SLEEP, now);
	se->state = SCHED_BLOCKED;
	sched_emit_entity(s, SCHED_EV_BLOCK, se, now);
	if (rq->curr == se || rq->need_resched)
		schedule_rq(s, rq, now);
	perf_kick(s, now);
	return 0;
}

int sched_entity_yield(struct sched *s, int id, uint64_t now)
{
	struct sched_entity *se = sched_ent(s, id);
	struct sched_rq *rq;

	if (!se)
		return -SCHED_E_NOENT;
	if (!se->on_rq)
		return 0;
	now = engine_now(s, now);
	rq = &s->rq[se->cpu];
	update_rq_clock(s, rq, now);
	se->st.nr_yields++;
	se->class->yield(s, rq, se);
	resched_rq(rq);
	schedule_rq(s, rq, now);
	return 0;
}

int sched_yield_to(struct sched *s, int id, int target, uint64_t now)
{
	struct sched_entity *se = sched_ent(s, id), *t = sched_ent(s, target);

	if (!se || !t)
		return -SCHED_E_NOENT;
	now = engine_now(s, now);
	se->st.nr_yield_to++;
	if (se == t || !se->on_rq || !t->on_rq || dl_entity(se) || dl_entity(t))
		return 0;
	if (s->rq[t->cpu].curr == t)
		return 0;
	if (!yield_to_fair(s, se, t, now))
		return 0;
	se->st.nr_yield_to_boosted++;
	return 1;
}

/* ---------------------------------------------------------------- tick */

/*
 * The tick of a busy pCPU whose running fair entity's slice goes on past
 * `now` changes nothing that anyone reads before the next event on it:
 * run-time accounting is linear in time and PELT is the same series
 * whether it is brought up to date every millisecond or once for the
 * span (up to rounding), and every reader brings it up to date first
 * (update_rq_clock() at each event, a level change and the performance
 * selection; statistics add the part not yet accounted). Such a tick is
 * deferred to the next event or the tick that ends the slice (the
 * kernel's nohz_full defers it the same way for a CPU with one task).
 * The misfit flag is kept current from the running entity's projected
 * util. Returns whether the tick was deferred.
 */
static inline bool tick_defer(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct sched_entity *curr = rq->curr;
	uint64_t delta = now - rq->clock;
	uint32_t rem;

	if (!curr || curr->class != &fair_sched_class || !curr->on_rq ||
	    curr->cpu != (int)rq->cpu || rq->need_resched || rq->nr_dl ||
	    !slist_empty(&rq->dl_assigned) || (int64_t)delta <= 0)
		return false;
	/* A quota running out or a period ending is a change the tick must see. */
	if (curr->cap_period || curr->grp_capped || !slist_empty(&rq->cap_throttled))
		return false;
	/* fair_update_curr() would end the slice (and maybe resched): a real tick. */
	rem = curr->vrem;	/* a copy: the charge itself is deferred */
	if (!time_before64(curr->vruntime + vruntime_delta(curr->weight, delta, &rem), curr->deadline))
		return false;
	rq->misfit = false;
	if (rq->capacity < s->max_capacity)
		update_misfit_util(s, rq, pelt_util_at(&curr->pelt, now, true, rq_level(s, rq)));
	rq->nr_ticks_deferred++;
	return true;
}

/*
 * scheduler_tick() on one runqueue; `now` has been through engine_now().
 * Inlined into both callers: the host tick runs it for every pCPU.
 */
static inline __attribute__((always_inline)) void tick_rq(struct sched *s, struct sched_rq *rq,
							  uint64_t now, bool may_defer)
{
	struct sched_entity *curr = rq->curr;

	if (may_defer && tick_defer(s, rq, now))
		return;
	/*
	 * update_rq_clock() and update_curr_pelt(); with one period
	 * computation for both series when they are in step (the class's
	 * update_curr() changes none of the PELT inputs).
	 */
	if (curr && curr->cpu == (int)rq->cpu && (int64_t)(now - rq->clock) > 0 &&
	    curr->pelt.last_update == rq->pelt.last_update &&
	    curr->pelt.period_contrib == rq->pelt.period_contrib) {
		rq_account(s, rq, now);
		pelt_update_running_pair(&rq->pelt, rq->fair_weight, rq->nr_running, &curr->pelt,
					 curr->weight, now, rq_level(s, rq));
	} else {
		update_rq_clock(s, rq, now);
		update_curr_pelt(s, rq, now);
	}
	if (!slist_empty(&rq->dl_assigned)) {
		dl_replenish_due(s, rq, now);
		dl_check_misses(s, rq, now);
	}
	if (!slist_empty(&rq->cap_throttled)) {
		cap_unthrottle_due(s, rq, now);
		cap_hole_fill(s, rq, now);
	} else if (s->lag_capped && !s->nr_groups) {
		cap_ahead_share(s, rq, now);	/* a pCPU well ahead shares */
	}
	if (rq->curr && rq->curr->on_rq)
		rq->curr->class->tick(s, rq, now);
	update_misfit(s, rq);
	if (rq->need_resched)
		schedule_rq(s, rq, now);
}

/* One pCPU's tick, never deferred: it also brings every signal of rq up to `now`. */
void sched_tick_cpu(struct sched *s, unsigned int cpu, uint64_t now)
{
	if (cpu >= s->nr_cpus)
		return;
	tick_rq(s, &s->rq[cpu], engine_now(s, now), false);
}

/* The periodic balance's interval: longer while every pCPU is busy. */
static uint64_t balance_interval(const struct sched *s)
{
	return sched_cpumask_empty(&s->idle_mask) ?
	       s->cfg.balance_interval_ns * s->cfg.busy_factor : s->cfg.balance_interval_ns;
}

/*
 * With groups, the first fluid balance comes at the first tick: until it
 * runs no member has a share of its group's cap, and the lags start only
 * there, so what the members of a capped group took before it (alone at
 * full speed until the quota was gone) is never made up. Likewise at the
 * tick after a cap changes or a capped group gains a member
 * (group_share_soon()): a VM's group comes later than the first tick.
 */
static bool fluid_due(const struct sched *s)
{
	return s->nr_groups && (!s->lag_round || s->fluid_soon);
}

void sched_tick(struct sched *s, uint64_t now)
{
	bool may_defer = !s->cfg.no_tick_defer;

	now = engine_now(s, now);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		tick_rq(s, &s->rq[cpu], now, may_defer);
	if (now - s->last_balance >= balance_interval(s) || fluid_due(s)) {
		s->last_balance = now;
		sched_balance(s, now);
	}
	if (now - s->last_perf >= s->cfg.perf_interval_ns) {
		s->last_perf = now;
		perf_update(s, now, true);
	}
}

uint64_t sched_next_event(const struct sched *s, unsigned int cpu)
{
	const struct sched_class *class;
	const struct sched_rq *rq;
	uint64_t next, t;

	if (cpu >= s->nr_cpus)
		return UINT64_MAX;
	rq = &s->rq[cpu];
	next = cap_next_event(s, rq);
	for_each_class(class) {
		t = class->next_event(s, rq);
		if (t < next)
			next = t;
	}
	return next;
}

/* ---------------------------------------------------------------- queries */

int sched_cpu_curr(const struct sched *s, unsigned int cpu, struct sched_cpu_state *out)
{
	const struct sched_rq *rq;

	if (cpu >= s->nr_cpus || !out)
		return -SCHED_E_NOENT;
	rq = &s->rq[cpu];
	out->curr = rq->curr ? rq->curr->id : SCHED_NONE;
	out->level = rq_level(s, rq);
	out->capacity = rq->capacity;
	out->gen = rq->gen;
	return 0;
}

uint64_t sched_cpu_gen(const struct sched *s, unsigned int cpu)
{
	return cpu < s->nr_cpus ? s->rq[cpu].gen : 0;
}

bool sched_uclamp_enabled(const struct sched *s)
{
	return uclamp_is_used(s);
}
