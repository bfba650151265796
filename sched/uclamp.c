// SPDX-License-Identifier: MIT
/*
 * Utilization clamping (kernel/sched/core.c uclamp_*, rules 16-20).
 *
 * Each entity requests [min, max] in 0..1024; each runqueue max-aggregates
 * the effective values of its runnable entities through 5 buckets of width
 * 205: enqueue counts the entity in its bucket and raises the bucket's
 * value, dequeue recomputes only when a bucket empties.
 *
 * Fast path (seed 001): s->uclamp_enabled is the engine's static key. It
 * stays false until the first clamp is set; until then enqueue/dequeue do
 * no clamp work at all (core.c tests it before calling in here). Entities
 * enqueued before the key flipped are simply not in the buckets
 * (se->uc_active is false), so their later dequeue is balanced.
 * With -DSCHED_NO_UCLAMP the key is constant false and the compiler drops
 * the calls.
 */
#include "sched/internal.h"

unsigned int uclamp_bucket_id(unsigned int value)
{
	unsigned int id = value / UCLAMP_BUCKET_DELTA;

	return id < UCLAMP_BUCKETS ? id : UCLAMP_BUCKETS - 1;
}

/* Aggregate of an empty runqueue: no boost, no cap. */
static unsigned int uclamp_none(enum uclamp_id id)
{
	return id == UCLAMP_MIN ? 0 : SCHED_CAPACITY_SCALE;
}

void uclamp_rq_init(struct sched_rq *rq)
{
	for (int id = 0; id < UCLAMP_CNT; id++) {
		for (unsigned int b = 0; b < UCLAMP_BUCKETS; b++) {
			rq->bucket[id][b].tasks = 0;
			rq->bucket[id][b].value = b * UCLAMP_BUCKET_DELTA;
		}
		rq->uc_value[id] = uclamp_none(id);
	}
}

/*
 * Effective clamps: the request, or while a guest performance request r is
 * set, [r, r] bounded by the request (the guest gets the level it asks for
 * within the host's clamps).
 */
void uclamp_update_eff(struct sched_entity *se)
{
	unsigned int lo = se->uc_req[UCLAMP_MIN], hi = se->uc_req[UCLAMP_MAX];

	if (se->perf_request) {
		unsigned int r = se->perf_request;

		r = r < lo ? lo : r > hi ? hi : r;
		lo = hi = r;
	}
	se->uc_eff[UCLAMP_MIN] = lo;
	se->uc_eff[UCLAMP_MAX] = hi;
}

static unsigned int rq_max_value(const struct sched_rq *rq, enum uclamp_id id)
{
	for (int b = UCLAMP_BUCKETS - 1; b >= 0; b--)
		if (rq->bucket[id][b].tasks)
			return rq->bucket[id][b].value;
	return uclamp_none(id);
}

/* A new aggregate asks for a performance re-evaluation (schedutil update). */
static void uclamp_rq_set(struct sched *s, struct sched_rq *rq, int id, unsigned int v)
{
	if (rq->uc_value[id] != v)
		s->perf_dirty |= 1u << rq->cluster;
	rq->uc_value[id] = v;
}

void uclamp_rq_inc(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	for (int id = 0; id < UCLAMP_CNT; id++) {
		unsigned int v = se->uc_eff[id], b = uclamp_bucket_id(v);
		struct uclamp_bucket *bk = &rq->bucket[id][b];

		se->uc_bucket[id] = b;
		if (!bk->tasks++ || v > bk->value)
			bk->value = v;
		uclamp_rq_set(s, rq, id, rq_max_value(rq, id));
	}
	rq->bucket_tasks++;
	se->uc_active = true;
}

void uclamp_rq_dec(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	for (int id = 0; id < UCLAMP_CNT; id++) {
		struct uclamp_bucket *bk = &rq->bucket[id][se->uc_bucket[id]];

		if (!bk->tasks)	/* the key flipped while se was queued */
			continue;
		if (--bk->tasks == 0) {
			bk->value = se->uc_bucket[id] * UCLAMP_BUCKET_DELTA;
			uclamp_rq_set(s, rq, id, rq_max_value(rq, id));
		}
	}
	rq->bucket_tasks--;
	se->uc_active = false;
}

/*
 * uclamp_rq_util_with() (rule 18): clamp util by the runqueue aggregate,
 * and by se's own clamps when se is about to join it.
 */
unsigned long uclamp_rq_util_with(const struct sched *s, const struct sched_rq *rq,
				  unsigned long util, const struct sched_entity *se)
{
	unsigned long lo, hi;

	if (!uclamp_is_used(s))
		return util;
	lo = rq->uc_value[UCLAMP_MIN];
	hi = rq->uc_value[UCLAMP_MAX];
	if (se) {
		/* Joining an rq with no clamped entity: se's clamps alone. */
		if (!rq->bucket_tasks)
			lo = 0, hi = 0;
		if (se->uc_eff[UCLAMP_MIN] > lo)
			lo = se->uc_eff[UCLAMP_MIN];
		if (se->uc_eff[UCLAMP_MAX] > hi)
			hi = se->uc_eff[UCLAMP_MAX];
	}
	if (lo >= hi)
		return lo;
	return util < lo ? lo : util > hi ? hi : util;
}

/* The static key: on for good once any clamp is set. */
void uclamp_enable(struct sched *s)
{
#ifndef SCHED_NO_UCLAMP
	s->uclamp_enabled = true;
#else
	(void)s;
#endif
}
