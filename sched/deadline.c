// SPDX-License-Identifier: MIT
/*
 * Deadline class: EDF with a constant bandwidth server per entity
 * (kernel/sched/deadline.c), partitioned: each reservation runs on the
 * pCPU admission assigned it to (dl_admit.c).
 *
 * Runtime is full-capacity time: a pCPU at performance level P consumes
 * delta * P / 1024 of it per ns (cap_scale(cap_scale(delta, cap), freq),
 * rule 10). Entities are ordered by absolute deadline in a per-pCPU tree
 * and always run ahead of fair entities (rule 13).
 */
#include "sched/internal.h"

static inline struct sched_entity *dl_node_se(struct tnode *n)
{
	return n ? slist_entry(n, struct sched_entity, dl_node) : NULL;
}

static inline struct sched_entity *dl_curr(const struct sched_rq *rq)
{
	struct sched_entity *c = rq->curr;

	return c && c->on_rq && dl_entity(c) && c->cpu == (int)rq->cpu ? c : NULL;
}

static uint64_t to_ratio(uint64_t period, uint64_t runtime)
{
	return period ? (uint64_t)(((unsigned __int128)runtime << BW_SHIFT) / period) : 0;
}

int dl_check_params(const struct sched_dl_params *dl, char *err, size_t errlen)
{
	if (dl->runtime_ns < NSEC_PER_USEC)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "reservation.runtime: %llu ns, expected at least 1 us",
				  (unsigned long long)dl->runtime_ns);
	if (dl->deadline_ns < dl->runtime_ns)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "reservation.deadline: %llu ns is below the runtime %llu ns",
				  (unsigned long long)dl->deadline_ns,
				  (unsigned long long)dl->runtime_ns);
	if (dl->period_ns < dl->deadline_ns)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "reservation.period: %llu ns is below the deadline %llu ns",
				  (unsigned long long)dl->period_ns,
				  (unsigned long long)dl->deadline_ns);
	if (dl->period_ns > 10 * NSEC_PER_SEC)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "reservation.period: %llu ns exceeds 10 s",
				  (unsigned long long)dl->period_ns);
	return 0;
}

/*
 * The pCPU a reservation is admitted on (-1: none). Its bandwidth and
 * density count there from admission on, whether it runs or sleeps, so the
 * performance selection keeps the level it needs (perf.c).
 */
void dl_assign_rq(struct sched *s, struct sched_entity *se, int cpu)
{
	if (se->dl_cpu == cpu)
		return;
	if (se->dl_cpu >= 0) {
		struct sched_rq *rq = &s->rq[se->dl_cpu];

		slist_del(&se->dl_link);
		slist_init(&se->dl_link);
		rq->dl_bw -= se->dl_bw;
		rq->dl_level = dl_needed_level(s, rq);
		rq->dl_supply_load = dl_rq_supply_load(s, rq, NULL, rq->capacity);
		s->perf_dirty |= 1u << rq->cluster;
	}
	se->dl_cpu = cpu;
	if (cpu < 0)
		return;
	slist_add_tail(&se->dl_link, &s->rq[cpu].dl_assigned);
	s->rq[cpu].dl_bw += se->dl_bw;
	s->rq[cpu].dl_level = dl_needed_level(s, &s->rq[cpu]);
	s->rq[cpu].dl_supply_load = dl_rq_supply_load(s, &s->rq[cpu], NULL, s->rq[cpu].capacity);
	s->perf_dirty |= 1u << s->rq[cpu].cluster;
}

/*
 * A re-pack moves an admitted reservation to `cpu`. A queued one arrives
 * with the CBS wakeup rule (enqueue_dl() on ENQ_MIGRATED), which bounds
 * its demand on the new pCPU by its density, as for any waking server.
 */
void dl_move(struct sched *s, struct sched_entity *se, unsigned int cpu, uint64_t now)
{
	if (se->cpu < 0)
		dl_assign_rq(s, se, (int)cpu);
	else
		migrate_entity(s, se, cpu, SCHED_MIGRATE_ADMISSION, now);
}

/* Set or change a reservation admitted on `cpu`; the entity is off its runqueue. */
void dl_set_params(struct sched *s, struct sched_entity *se, const struct sched_dl_params *dl,
		   unsigned int cpu)
{
	if (dl_entity(se)) {
		dl_assign_rq(s, se, -1);
		s->dl_total_bw -= se->dl_bw;
	}
	se->dl = *dl;
	se->dl_bw = to_ratio(dl->period_ns, dl->runtime_ns);
	se->dl_density = to_ratio(dl->deadline_ns, dl->runtime_ns);
	se->dl_throttled = false;
	/* setup_new_dl_entity() at the next activation: deadline in the past. */
	se->dl_deadline = 0;
	se->dl_runtime = 0;
	se->dl_missed = 0;
	se->class = &dl_sched_class;
	s->dl_total_bw += se->dl_bw;
	dl_assign_rq(s, se, (int)cpu);
	if (se->cpu >= 0 && se->cpu != (int)cpu)
		se->cpu = (int)cpu;	/* off its runqueue: only the assignment moves */
}

void dl_clear_params(struct sched *s, struct sched_entity *se)
{
	if (!dl_entity(se))
		return;
	dl_assign_rq(s, se, -1);
	s->dl_total_bw -= se->dl_bw;
	memset(&se->dl, 0, sizeof(se->dl));
	se->dl_bw = se->dl_density = 0;
	se->dl_throttled = false;
	se->class = &fair_sched_class;
}

static void new_period(struct sched *s, struct sched_entity *se, uint64_t now)
{
	se->dl_deadline = now + se->dl.deadline_ns;
	se->dl_runtime = (int64_t)se->dl.runtime_ns;
	se->st.nr_periods++;
	sched_emit_entity(s, SCHED_EV_REPLENISH, se, now);
}

/* dl_entity_overflow(): runtime / (deadline - now) > dl_runtime / dl_deadline. */
static bool dl_overflow(const struct sched_entity *se, uint64_t now)
{
	unsigned __int128 left = (unsigned __int128)se->dl.deadline_ns * (uint64_t)se->dl_runtime;
	unsigned __int128 right = (unsigned __int128)(se->dl_deadline - now) * se->dl.runtime_ns;

	return se->dl_runtime > 0 && right < left;
}

/* update_dl_entity(): the CBS wakeup rule, revised for constrained deadlines. */
static void update_dl_entity(struct sched *s, struct sched_entity *se, uint64_t now)
{
	bool past = (int64_t)(se->dl_deadline - now) <= 0;

	if (!past && !dl_overflow(se, now) && se->dl_runtime > 0)
		return;
	if (!past && se->dl.deadline_ns != se->dl.period_ns && se->dl_runtime > 0) {
		/* Revised wakeup: keep the deadline, scale runtime to the laxity. */
		se->dl_runtime = (int64_t)(((unsigned __int128)se->dl_density *
					    (se->dl_deadline - now)) >> BW_SHIFT);
		return;
	}
	new_period(s, se, now);
}

/* replenish_dl_entity() (rule 11). */
static void replenish_dl_entity(struct sched *s, struct sched_entity *se, uint64_t now)
{
	if (se->dl_runtime <= 0) {
		/* The kernel's while loop, in one step: n periods make it positive. */
		uint64_t n = (uint64_t)(-se->dl_runtime) / se->dl.runtime_ns + 1;

		se->dl_deadline += n * se->dl.period_ns;
		se->dl_runtime += (int64_t)(n * se->dl.runtime_ns);
		se->st.nr_periods += n;
	}
	if ((int64_t)(se->dl_deadline - now) <= 0) {
		se->dl_deadline = now + se->dl.deadline_ns;
		se->dl_runtime = (int64_t)se->dl.runtime_ns;
	}
	sched_emit_entity(s, SCHED_EV_REPLENISH, se, now);
}

static void enqueue_dl(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags)
{
	if (flags & (ENQ_WAKEUP | ENQ_INITIAL | ENQ_MIGRATED))
		update_dl_entity(s, se, rq->clock);
	se->dl_node.key = se->dl_deadline;
	treap_insert(&rq->dl, &se->dl_node);
	rq->nr_dl++;
}

static void dequeue_dl(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags)
{
	(void)s;
	(void)flags;
	if (rq->curr != se)
		treap_erase(&rq->dl, &se->dl_node);
	rq->nr_dl--;
}

static struct sched_entity *pick_dl(struct sched *s, struct sched_rq *rq)
{
	struct sched_entity *curr = dl_curr(rq), *first;

	(void)s;
	if (!rq->nr_dl)
		return NULL;
	first = dl_node_se(treap_first(&rq->dl));
	if (!first || (curr && !time_before64(first->dl_deadline, curr->dl_deadline)))
		return curr;
	return first;
}

static void set_next_dl(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	(void)s;
	treap_erase(&rq->dl, &se->dl_node);
}

static void put_prev_dl(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	(void)s;
	se->dl_node.key = se->dl_deadline;
	treap_insert(&rq->dl, &se->dl_node);
}

static void update_curr_dl(struct sched *s, struct sched_rq *rq, uint64_t delta, uint64_t now)
{
	struct sched_entity *curr = rq->curr;
	uint64_t scaled = dl_supply_delivered(s, rq, rq_level(s, rq), now - delta, now);

	curr->dl_runtime -= (int64_t)scaled;
	if (curr->dl_runtime <= 0)
		resched_rq(rq);	/* schedule_rq() throttles it */
}

/*
 * Runtime exhausted: off the runqueue until the next period (rule 10).
 * If that period has already begun (start_dl_timer() would fail), the
 * entity is replenished in place and stays queued, as in the kernel.
 */
void dl_throttle(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint64_t now)
{
	/* dl_next_period(): start of the next period. */
	uint64_t timer = se->dl_deadline - se->dl.deadline_ns + se->dl.period_ns;

	if ((int64_t)(timer - now) <= 0) {
		replenish_dl_entity(s, se, now);
		if (rq->curr != se) {	/* queued: its key changed */
			treap_erase(&rq->dl, &se->dl_node);
			se->dl_node.key = se->dl_deadline;
			treap_insert(&rq->dl, &se->dl_node);
		}
		return;
	}
	dequeue_entity(s, rq, se, DEQ_THROTTLE, now);
	se->state = SCHED_THROTTLED;
	se->dl_throttled = true;
	se->throttle_start = now;
	se->st.nr_throttles++;
	se->dl_timer = timer;
	sched_emit_entity(s, SCHED_EV_THROTTLE, se, now);
}

/* dl_task_timer(): replenish throttled entities whose period has begun. */
void dl_replenish_due(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct slist *pos, *n;

	for (pos = rq->dl_assigned.next; pos != &rq->dl_assigned; pos = n) {
		struct sched_entity *se = slist_entry(pos, struct sched_entity, dl_link);

		n = pos->next;
		if (!se->dl_throttled || (int64_t)(se->dl_timer - now) > 0)
			continue;
		se->dl_throttled = false;
		se->st.throttled_ns += now - se->throttle_start;
		replenish_dl_entity(s, se, now);
		if (se->state == SCHED_THROTTLED) {
			enqueue_entity(s, rq, se, ENQ_REPLENISH, now);
			wakeup_preempt(s, rq, se);
		}
	}
}

/* A deadline passed while the entity was runnable with budget left. */
void dl_check_misses(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct slist *pos;

	for (pos = rq->dl_assigned.next; pos != &rq->dl_assigned; pos = pos->next) {
		struct sched_entity *se = slist_entry(pos, struct sched_entity, dl_link);

		if (!se->on_rq || se->dl_runtime <= 0 || se->dl_missed == se->dl_deadline ||
		    (int64_t)(se->dl_deadline - now) >= 0)
			continue;
		se->dl_missed = se->dl_deadline;
		se->st.nr_deadline_misses++;
		sched_emit_entity(s, SCHED_EV_DL_MISS, se, now);
	}
}

static void tick_dl(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	(void)s;
	(void)rq;
	(void)now;
}

/*
 * yield_task_dl(): give up the rest of this period's runtime; the caller
 * reschedules and schedule_rq() throttles the entity until its next period.
 */
static void yield_dl(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	(void)s;
	if (rq->curr == se)
		se->dl_runtime = 0;
}

static bool wakeup_preempt_dl(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	(void)s;
	return time_before64(se->dl_deadline, rq->curr->dl_deadline);
}

/* Placement: the pCPU admission assigned (dl_admit.c); nothing else keeps the guarantee. */
static unsigned int select_cpu_dl(struct sched *s, struct sched_entity *se)
{
	(void)s;
	return (unsigned int)se->dl_cpu;
}

static uint64_t next_event_dl(const struct sched *s, const struct sched_rq *rq)
{
	const struct sched_entity *curr = dl_curr(rq);
	uint64_t next = UINT64_MAX, lvl = rq_level(s, rq);
	const struct slist *pos;

	if (curr) {
		uint64_t left = curr->dl_runtime > 0 ? (uint64_t)curr->dl_runtime : 0;

		next = dl_supply_until(s, rq, (unsigned int)lvl, rq->clock, left);
	}
	for (pos = rq->dl_assigned.next; pos != &rq->dl_assigned; pos = pos->next) {
		const struct sched_entity *se = slist_entry(pos, struct sched_entity, dl_link);

		if (se->dl_throttled && se->dl_timer < next)
			next = se->dl_timer;
	}
	return next;
}

const struct sched_class dl_sched_class = {
	.name = "deadline",
	.enqueue = enqueue_dl,
	.dequeue = dequeue_dl,
	.pick = pick_dl,
	.put_prev = put_prev_dl,
	.set_next = set_next_dl,
	.update_curr = update_curr_dl,
	.tick = tick_dl,
	.yield = yield_dl,
	.wakeup_preempt = wakeup_preempt_dl,
	.select_cpu = select_cpu_dl,
	.next_event = next_event_dl,
};
