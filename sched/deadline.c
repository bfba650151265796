// SPDX-License-Identifier: MIT
/*
 * Deadline class: EDF with a constant bandwidth server per entity
 * (kernel/sched/deadline.c), capacity-aware admission (seed 000).
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

/* dl_task_fits_capacity(): capacity/1024 >= runtime/deadline. */
bool dl_fits_capacity(const struct sched_dl_params *dl, unsigned int capacity)
{
	return (unsigned __int128)capacity * dl->deadline_ns >=
	       (unsigned __int128)SCHED_CAPACITY_SCALE * dl->runtime_ns;
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

/* Fixed-point (BW_SHIFT) value as "x.yyy". */
static void fmt_bw(char *buf, size_t len, uint64_t bw)
{
	uint64_t milli = (bw * 1000 + BW_UNIT / 2) >> BW_SHIFT;

	snprintf(buf, len, "%llu.%03llu", (unsigned long long)(milli / 1000),
		 (unsigned long long)(milli % 1000));
}

static bool mask_subset(const struct sched_cpumask *a, const struct sched_cpumask *b)
{
	for (unsigned int i = 0; i < SCHED_MAX_CPUS / 64; i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

static uint64_t limit_bw(const struct sched *s, uint64_t capacity_sum)
{
	return (uint64_t)(((unsigned __int128)capacity_sum * BW_UNIT * s->cfg.dl_limit_permille) /
			  (SCHED_CAPACITY_SCALE * 1000ull));
}

static int dl_admit_fit(const struct sched *s, const struct sched_dl_params *dl,
			const struct sched_cpumask *allowed, char *err, size_t errlen)
{
	unsigned int best = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (!sched_cpumask_test(allowed, cpu))
			continue;
		if (dl_fits_capacity(dl, s->rq[cpu].capacity))
			return 0;
		if (s->rq[cpu].capacity > best)
			best = s->rq[cpu].capacity;
	}
	return sched_errf(err, errlen, SCHED_E_CAPACITY_FIT,
			  "reservation: runtime/deadline %llu/%llu us needs a pCPU of capacity >= %llu, "
			  "the largest in its affinity has %u",
			  (unsigned long long)(dl->runtime_ns / NSEC_PER_USEC),
			  (unsigned long long)(dl->deadline_ns / NSEC_PER_USEC),
			  (unsigned long long)((dl->runtime_ns * SCHED_CAPACITY_SCALE +
						dl->deadline_ns - 1) / dl->deadline_ns),
			  best);
}

/*
 * Admission (rule 14): fit some pCPU of the affinity, and keep the admitted
 * bandwidth within limit x capacity, for the whole host and for the pCPUs
 * of the affinity (counting the reservations confined to them). `se` may
 * already hold a reservation, which is replaced.
 */
int dl_admit(const struct sched *s, const struct sched_entity *se,
	     const struct sched_dl_params *dl, const struct sched_cpumask *allowed,
	     char *err, size_t errlen)
{
	uint64_t bw = to_ratio(dl->period_ns, dl->runtime_ns);
	uint64_t old = se && dl_entity(se) ? se->dl_bw : 0;
	uint64_t total = s->dl_total_bw - old + bw, limit, cap = 0, local = bw;
	char need[24], avail[24], lim[24];
	int ret;

	ret = dl_admit_fit(s, dl, allowed, err, errlen);
	if (ret)
		return ret;
	limit = limit_bw(s, s->total_capacity);
	if (total > limit) {
		fmt_bw(need, sizeof(need), bw);
		fmt_bw(avail, sizeof(avail), limit > s->dl_total_bw - old ?
						    limit - (s->dl_total_bw - old) : 0);
		fmt_bw(lim, sizeof(lim), limit);
		return sched_errf(err, errlen, SCHED_E_BANDWIDTH,
				  "reservation: bandwidth %s (runtime/period) exceeds the %s still "
				  "available (limit %u/1000 x total capacity %llu/1024 = %s CPUs)",
				  need, avail, s->cfg.dl_limit_permille,
				  (unsigned long long)s->total_capacity, lim);
	}
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(allowed, cpu))
			cap += s->rq[cpu].capacity;
	for (unsigned int i = 0; i < s->nr_ent_slots; i++) {
		const struct sched_entity *e = s->ent[i];

		if (e && e != se && dl_entity(e) && mask_subset(&e->allowed, allowed))
			local += e->dl_bw;
	}
	limit = limit_bw(s, cap);
	if (local > limit) {
		fmt_bw(need, sizeof(need), local);
		fmt_bw(lim, sizeof(lim), limit);
		return sched_errf(err, errlen, SCHED_E_BANDWIDTH,
				  "reservation: bandwidth %s confined to its affinity (this one plus "
				  "those pinned inside it) exceeds limit %u/1000 x capacity %llu/1024 "
				  "= %s CPUs", need, s->cfg.dl_limit_permille,
				  (unsigned long long)cap, lim);
	}
	return 0;
}

void dl_assign_rq(struct sched *s, struct sched_entity *se, int cpu)
{
	if (se->dl_link.next != &se->dl_link) {
		slist_del(&se->dl_link);
		s->rq[se->cpu].dl_bw -= se->dl_bw;
	}
	if (cpu < 0)
		return;
	slist_add_tail(&se->dl_link, &s->rq[cpu].dl_assigned);
	s->rq[cpu].dl_bw += se->dl_bw;
}

/* Set or change a reservation; the entity is off its runqueue. */
void dl_set_params(struct sched *s, struct sched_entity *se, const struct sched_dl_params *dl)
{
	int cpu = se->cpu;

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
	if (cpu >= 0)
		dl_assign_rq(s, se, cpu);
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
	if (flags & (ENQ_WAKEUP | ENQ_INITIAL))
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
	uint64_t scaled = (delta * rq_level(s, rq)) >> 10;

	(void)now;
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

/* Placement (rule 15): a fitting pCPU with the least reserved bandwidth. */
static unsigned int select_cpu_dl(struct sched *s, struct sched_entity *se)
{
	unsigned int best = UINT32_MAX, biggest = UINT32_MAX;
	unsigned __int128 best_load = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct sched_rq *rq = &s->rq[cpu];
		uint64_t bw;
		unsigned __int128 load;

		if (!sched_cpumask_test(&se->allowed, cpu))
			continue;
		if (biggest == UINT32_MAX || rq->capacity > s->rq[biggest].capacity)
			biggest = cpu;
		if (!dl_fits_capacity(&se->dl, rq->capacity))
			continue;
		bw = rq->dl_bw - (se->cpu == (int)cpu && se->dl_link.next != &se->dl_link ?
				  se->dl_bw : 0) + se->dl_bw;
		load = ((unsigned __int128)bw << 10) / rq->capacity;
		if (best == UINT32_MAX || load < best_load ||
		    (load == best_load && (int)cpu == se->cpu)) {
			best = cpu;
			best_load = load;
		}
	}
	return best != UINT32_MAX ? best : biggest;
}

static uint64_t next_event_dl(const struct sched *s, const struct sched_rq *rq)
{
	const struct sched_entity *curr = dl_curr(rq);
	uint64_t next = UINT64_MAX, lvl = rq_level(s, rq);
	const struct slist *pos;

	if (curr) {
		uint64_t left = curr->dl_runtime > 0 ? (uint64_t)curr->dl_runtime : 0;

		next = rq->clock + (left * 1024 + lvl - 1) / lvl;
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
