// SPDX-License-Identifier: MIT
/*
 * Performance selection per cluster (schedutil, rules 23-24).
 *
 * For each pCPU: util = max(util_avg, runnable_avg) (seed 004), invariant,
 * so next = 1.25 x util with no feedback on the current level (seed 000).
 * Under over-utilization (no idle time since the last evaluation while the
 * signal saturates the current level) the invariant signal says nothing
 * about the demand, so ask for the maximum (seed 002). The result is
 * clamped by the pCPU's uclamp aggregate (which carries guest performance
 * requests too), the level reservations need is added on top, and the
 * cluster takes the maximum over its pCPUs rounded up to a level (down if
 * rounding up would cross the clamp: uclamp_max is a promise to the host).
 */
#include "sched/internal.h"

#define OVERUTIL_NS	(16 * NSEC_PER_MSEC)

unsigned int perf_round_level(const struct sched_cluster_desc *d, unsigned int want,
			      unsigned int cap)
{
	unsigned int lvl;

	if (want < 1)
		want = 1;
	if (cap > d->capacity)
		cap = d->capacity;
	if (!d->nr_levels)
		return want < cap ? want : (cap ? cap : 1);
	lvl = d->levels[d->nr_levels - 1];
	for (unsigned int i = 0; i < d->nr_levels; i++) {
		if (d->levels[i] >= want) {
			lvl = d->levels[i];
			break;
		}
	}
	if (lvl > cap) {
		lvl = d->levels[0];
		for (unsigned int i = 0; i < d->nr_levels; i++)
			if (d->levels[i] <= cap)
				lvl = d->levels[i];
	}
	return lvl;
}

void perf_account(struct sched *s, struct sched_cluster *c, uint64_t now)
{
	(void)s;
	if (now > c->last_level_update) {
		c->level_ns_sum += (now - c->last_level_update) * c->level;
		c->time_ns += now - c->last_level_update;
	}
	c->last_level_update = now;
}

struct perf_req {
	unsigned long want;	/* requested level */
	unsigned long cap;	/* highest level the clamps allow */
	bool over;
};

/*
 * max(util_avg, runnable_avg) of the pCPU (seed 004), capped at its
 * capacity, brought up to `now` first (its tick may have been deferred).
 */
static unsigned long perf_cpu_util(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	unsigned long util, runnable;

	update_rq_clock(s, rq, now);
	util = rq->pelt.util_avg;
	runnable = pelt_runnable_avg(&rq->pelt);

	if (runnable > util)
		util = runnable;
	return util < rq->capacity ? util : rq->capacity;
}

static void perf_cpu(struct sched *s, struct sched_rq *rq, struct perf_req *r, bool periodic,
		     uint64_t now)
{
	unsigned long util = 0, req, dl_util, cap = rq->capacity;
	bool over, have_util = false;

	/*
	 * Over-utilized: busy without a break for OVERUTIL_NS, or no idle time
	 * in this window while the signal saturates the current level (95%).
	 * The invariant util is then capped by the level and says nothing
	 * about the demand (seed 002). Plain 80% busy at a level is
	 * schedutil's steady state with its 1.25 headroom: not over-utilized.
	 * The signal is read only when it matters (an over-utilized pCPU asks
	 * for its capacity whatever it says), and that is the common case on
	 * a loaded host.
	 */
	if (periodic) {
		bool over_now = false;

		if (rq->curr) {
			over_now = now - rq->last_idle >= OVERUTIL_NS;
			if (!over_now && rq->idle_in_window == 0) {
				util = perf_cpu_util(s, rq, now);
				have_util = true;
				over_now = util * 20 >= (unsigned long)rq_level(s, rq) * 19;
			}
		}
		rq->overutil = over_now;
		rq->idle_in_window = 0;
	}
	over = rq->overutil;
	if (over) {
		req = rq->capacity;
	} else {
		if (!have_util)
			util = perf_cpu_util(s, rq, now);
		req = util + (util >> 2);
	}
	if (uclamp_is_used(s) && rq->bucket_tasks) {
		req = uclamp_rq_util_with(s, rq, req, NULL);
		cap = rq->uc_value[UCLAMP_MAX] > rq->uc_value[UCLAMP_MIN] ?
		      rq->uc_value[UCLAMP_MAX] : rq->uc_value[UCLAMP_MIN];
	}
	/*
	 * Reservations must be served whatever the clamps (and the guest
	 * performance requests they carry) say, at a level whose supply keeps
	 * what admission promised (dl_supply.c): the lowest level at which
	 * the EDF test holds, which admission keeps at or below the capacity.
	 * Any higher level passes it too, so rounding up keeps it.
	 */
	dl_util = rq->dl_level;
	if (dl_util) {
		req += dl_util;
		cap = rq->capacity;
	}
	if (req > r->want)
		r->want = req;
	if (cap > r->cap)
		r->cap = cap;
	r->over |= over;
}

static void perf_set_level(struct sched *s, struct sched_cluster *c, unsigned int level,
			   uint64_t now)
{
	struct sched_event ev;

	if (level == c->level)
		return;
	perf_account(s, c, now);
	for (unsigned int i = 0; i < c->desc.nr_cpus; i++) {
		struct sched_rq *rq = &s->rq[c->first_cpu + i];

		update_rq_clock(s, rq, now);	/* account at the old level */
		update_curr_pelt(s, rq, now);
		rq->gen++;
	}
	c->level = level;
	c->nr_perf_changes++;
	if (s->cfg.event) {
		memset(&ev, 0, sizeof(ev));
		ev.type = SCHED_EV_PERF;
		ev.now = now;
		ev.cpu = (int)c->first_cpu;
		ev.cluster = (int)(c - s->cluster);
		ev.level = level;
		ev.entity = SCHED_NONE;
		sched_emit(s, &ev);
	}
}

static void perf_cluster(struct sched *s, struct sched_cluster *c, uint64_t now, bool periodic)
{
	struct perf_req r = { 0, 0, false };

	for (unsigned int i = 0; i < c->desc.nr_cpus; i++)
		perf_cpu(s, &s->rq[c->first_cpu + i], &r, periodic, now);
	if (r.want > c->desc.capacity)
		r.want = c->desc.capacity;
	c->requested = (unsigned int)r.want;
	c->overutilized = r.over;
	perf_set_level(s, c, perf_round_level(&c->desc, (unsigned int)r.want, (unsigned int)r.cap),
		       now);
}

/*
 * Re-select every cluster's level. `periodic` evaluations (from the tick)
 * also close the over-utilization window.
 */
void perf_update(struct sched *s, uint64_t now, bool periodic)
{
	s->perf_dirty = 0;
	for (unsigned int ci = 0; ci < s->nr_clusters; ci++)
		perf_cluster(s, &s->cluster[ci], now, periodic);
}

/* A clamp aggregate changed: apply it at once, to the clusters concerned. */
void perf_kick(struct sched *s, uint64_t now)
{
	while (s->perf_dirty) {
		unsigned int ci = (unsigned int)__builtin_ctz(s->perf_dirty);

		s->perf_dirty &= s->perf_dirty - 1;
		perf_cluster(s, &s->cluster[ci], now, false);
	}
}
