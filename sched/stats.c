// SPDX-License-Identifier: MIT
/*
 * Statistics: per entity, per pCPU and per cluster, and the wakeup latency
 * histogram (log-linear: exact below 8 ns, then 8 buckets per power of two,
 * so percentiles are within 12.5%).
 */
#include "sched/internal.h"

unsigned int lat_bucket(uint64_t ns)
{
	unsigned int e, idx;

	if (ns < 8)
		return (unsigned int)ns;
	e = 63 - (unsigned int)__builtin_clzll(ns);
	idx = 8 + (e - 3) * 8 + (unsigned int)((ns >> (e - 3)) - 8);
	return idx < SCHED_LAT_BUCKETS ? idx : SCHED_LAT_BUCKETS - 1;
}

uint64_t lat_bucket_upper(unsigned int idx)
{
	unsigned int e, sub;

	if (idx < 8)
		return idx;
	e = (idx - 8) / 8 + 3;
	sub = (idx - 8) % 8;
	return ((uint64_t)(8 + sub + 1) << (e - 3)) - 1;
}

void stats_lat_record(struct sched_entity_stats *st, uint64_t ns)
{
	st->lat_hist[lat_bucket(ns)]++;
	st->lat_count++;
	st->lat_sum_ns += ns;
	if (ns > st->lat_max_ns)
		st->lat_max_ns = ns;
}

uint64_t sched_lat_percentile(const struct sched_entity_stats *st, unsigned int pct)
{
	uint64_t want, seen = 0, v;

	if (!st->lat_count)
		return 0;
	if (pct > 100)
		pct = 100;
	want = (st->lat_count * pct + 99) / 100;
	if (!want)
		want = 1;
	for (unsigned int i = 0; i < SCHED_LAT_BUCKETS; i++) {
		seen += st->lat_hist[i];
		if (seen >= want) {
			v = lat_bucket_upper(i);
			return v < st->lat_max_ns ? v : st->lat_max_ns;
		}
	}
	return st->lat_max_ns;
}

void stats_switch_in(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint64_t now)
{
	(void)s;
	(void)rq;
	se->st.wait_ns += now - se->wait_start;
	se->st.nr_switches++;
	if (se->wake_pending) {
		stats_lat_record(&se->st, now - se->wake_time);
		se->wake_pending = false;
	}
}

/* Add the run time charged while current to the statistics. */
void stats_flush_run(struct sched_entity *se, unsigned int cluster)
{
	se->st.cpu_time_ns += se->run_ns;
	se->st.work_ns += se->run_work_ns;
	se->st.cpu_time_by_cluster_ns[cluster] += se->run_ns;
	se->run_ns = 0;
	se->run_work_ns = 0;
}

void stats_switch_out(struct sched *s, struct sched_rq *rq, struct sched_entity *se,
		      uint64_t now)
{
	(void)s;
	(void)now;
	stats_flush_run(se, rq->cluster);
}

/* Time rq has not accounted yet (a deferred tick, or since its last event). */
static uint64_t rq_unaccounted_ns(const struct sched *s, const struct sched_rq *rq)
{
	return s->now > rq->clock ? s->now - rq->clock : 0;
}

/* An entity's PELT signals decayed to the latest time seen (a copy). */
static void se_pelt_now(const struct sched *s, const struct sched_entity *se,
			struct sched_pelt *p)
{
	const struct sched_rq *rq = se->cpu >= 0 ? &s->rq[se->cpu] : NULL;
	bool running = rq && rq->curr == se;

	*p = se->pelt;
	pelt_update(p, s->now, se->on_rq ? se->weight : 0, se->on_rq, running,
		    rq ? rq_level(s, rq) : SCHED_CAPACITY_SCALE);
}

int sched_entity_util(const struct sched *s, int id, unsigned int *util_avg,
		      unsigned int *runnable_avg)
{
	const struct sched_entity *se = sched_ent(s, id);
	struct sched_pelt p;

	if (!se)
		return -SCHED_E_NOENT;
	if (!runnable_avg) {	/* util only (the simulator's sampling): the cheap path */
		const struct sched_rq *rq = se->cpu >= 0 ? &s->rq[se->cpu] : NULL;

		if (util_avg)
			*util_avg = (unsigned int)pelt_util_at(&se->pelt, s->now,
							       rq && rq->curr == se,
							       rq ? rq_level(s, rq) :
							       SCHED_CAPACITY_SCALE);
		return 0;
	}
	se_pelt_now(s, se, &p);
	if (util_avg)
		*util_avg = (unsigned int)p.util_avg;
	if (runnable_avg)
		*runnable_avg = (unsigned int)pelt_runnable_avg(&p);
	return 0;
}

int sched_entity_stats(const struct sched *s, int id, struct sched_entity_stats *out)
{
	const struct sched_entity *se = sched_ent(s, id);
	struct sched_pelt p;

	if (!se || !out)
		return -SCHED_E_NOENT;
	*out = se->st;
	/*
	 * Run time of the current stint (only a current entity has any),
	 * with what its pCPU has not accounted yet (a deferred tick).
	 */
	if (se->cpu >= 0 && s->rq[se->cpu].curr == se) {
		const struct sched_rq *rq = &s->rq[se->cpu];
		uint64_t pending = rq_unaccounted_ns(s, rq);

		out->cpu_time_ns += se->run_ns + pending;
		out->work_ns += se->run_work_ns + ((pending * rq_level(s, rq)) >> 10);
		out->cpu_time_by_cluster_ns[rq->cluster] += se->run_ns + pending;
	}
	/* Waiting and throttled time so far. */
	if (se->on_rq && !(se->cpu >= 0 && s->rq[se->cpu].curr == se))
		out->wait_ns += s->now - se->wait_start;
	if (se->state == SCHED_THROTTLED || se->dl_throttled || se->cap_throttled)
		out->throttled_ns += s->now - se->throttle_start;
	se_pelt_now(s, se, &p);
	out->util_avg = (unsigned int)p.util_avg;
	out->runnable_avg = (unsigned int)pelt_runnable_avg(&p);
	out->load_avg = pelt_load_avg(&p);
	return 0;
}

int sched_cpu_stats(const struct sched *s, unsigned int cpu, struct sched_cpu_stats *out)
{
	const struct sched_rq *rq;
	struct sched_pelt p;
	uint64_t pending;

	if (cpu >= s->nr_cpus || !out)
		return -SCHED_E_NOENT;
	rq = &s->rq[cpu];
	memset(out, 0, sizeof(*out));
	out->cluster = rq->cluster;
	out->capacity = rq->capacity;
	out->level = rq_level(s, rq);
	out->nr_running = rq->nr_running;
	out->busy_ns = rq->busy_ns;
	out->idle_ns = rq->idle_ns;
	pending = rq_unaccounted_ns(s, rq);
	if (rq->curr)
		out->busy_ns += pending;
	else
		out->idle_ns += pending;
	out->nr_switches = rq->nr_switches;
	out->nr_ticks_deferred = rq->nr_ticks_deferred;
	p = rq->pelt;
	pelt_update(&p, s->now, rq->fair_weight, rq->nr_running, rq->curr != NULL,
		    rq_level(s, rq));
	out->util_avg = (unsigned int)p.util_avg;
	out->runnable_avg = (unsigned int)pelt_runnable_avg(&p);
	out->load_avg = pelt_load_avg(&p);
	out->uclamp_min = rq->uc_value[UCLAMP_MIN];
	out->uclamp_max = rq->uc_value[UCLAMP_MAX];
	out->avg_idle_ns = rq->avg_idle;
	out->nr_newidle = rq->nr_newidle;
	out->nr_newidle_skipped = rq->nr_newidle_skipped;
	out->nr_newidle_aborted = rq->nr_newidle_aborted;
	out->nr_newidle_pulled = rq->nr_newidle_pulled;
	out->nr_lb_migrations = rq->nr_lb_migrations;
	out->nr_misfit_migrations = rq->nr_misfit_migrations;
	out->misfit = rq->misfit;
	return 0;
}

int sched_cluster_stats(const struct sched *s, unsigned int cluster,
			struct sched_cluster_stats *out)
{
	const struct sched_cluster *c;
	uint64_t extra;

	if (cluster >= s->nr_clusters || !out)
		return -SCHED_E_NOENT;
	c = &s->cluster[cluster];
	memset(out, 0, sizeof(*out));
	out->level = c->level;
	out->requested = c->requested;
	extra = s->now > c->last_level_update ? s->now - c->last_level_update : 0;
	out->level_ns_sum = c->level_ns_sum + extra * c->level;
	out->time_ns = c->time_ns + extra;
	out->nr_perf_changes = c->nr_perf_changes;
	out->overutilized = c->overutilized;
	for (unsigned int i = 0; i < c->desc.nr_cpus; i++) {
		const struct sched_domain_cost *sd = &s->rq[c->first_cpu + i].sd[0];

		if (sd->valid && sd->max_newidle_lb_cost > out->max_newidle_lb_cost_ns)
			out->max_newidle_lb_cost_ns = sd->max_newidle_lb_cost;
	}
	return 0;
}

void sched_dl_bandwidth(const struct sched *s, uint64_t *used, uint64_t *limit)
{
	if (used)
		*used = s->dl_total_bw;
	if (limit)
		*limit = (uint64_t)(((unsigned __int128)s->total_capacity * BW_UNIT *
				     s->cfg.dl_limit_permille) / (SCHED_CAPACITY_SCALE * 1000ull));
}
