// SPDX-License-Identifier: MIT
/*
 * The simulation loop: virtual time advances from one event to the next
 * (tick, workload event, and with exact_cbs the engine's own next event
 * per pCPU), running vCPUs make progress at their pCPU's level, and every
 * engine call is followed by a refresh of the pCPUs whose generation
 * changed, exactly what the real dispatcher does.
 */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

#define UTIL_SAMPLE_NS	(10 * 1000000ull)	/* avg_util sampling period */

static void mark_dirty(struct sim *sim, unsigned int cpu)
{
	if (sim->is_dirty[cpu])
		return;
	sim->is_dirty[cpu] = true;
	sim->dirty[sim->nr_dirty++] = cpu;
}

/* Every change of a pCPU's choice or level comes with an event. */
static void sim_event(void *opaque, const struct sched_event *ev)
{
	struct sim *sim = opaque;

	if (ev->type == SCHED_EV_SWITCH) {
		sim->next[ev->cpu] = ev->next;
		mark_dirty(sim, (unsigned int)ev->cpu);
	} else if (ev->type == SCHED_EV_PERF) {
		const struct sched_cluster_desc *d =
			sched_cluster_desc(sim->s, (unsigned int)ev->cluster);

		for (unsigned int i = 0; i < d->nr_cpus; i++) {
			sim->level[ev->cpu + (int)i] = ev->level;
			mark_dirty(sim, (unsigned int)ev->cpu + i);
		}
	}

	if (sim->trace)
		trace_event(sim, ev);
}

static int find_group(struct sim *sim, const struct sim_vcpu_spec *sp)
{
	for (unsigned int g = 0; g < sim->nr_groups; g++)
		if (!strcmp(sim->groups[g].name, sp->group)) {
			sim->groups[g].yield_to |= sp->yield_to;
			return (int)g;
		}
	snprintf(sim->groups[sim->nr_groups].name, SCHED_NAME_MAX, "%s", sp->group);
	sim->groups[sim->nr_groups].holder = -1;
	sim->groups[sim->nr_groups].yield_to = sp->yield_to;
	return (int)sim->nr_groups++;
}

static void fill_params(struct sim *sim, const struct sim_vcpu_spec *sp, const char *name,
			struct sched_entity_params *p)
{
	sched_entity_params_init(p, name);
	p->weight = sp->weight;
	p->nice = sp->nice;
	if (sp->has_uclamp) {
		p->uclamp_min = sp->uclamp_min;
		p->uclamp_max = sp->uclamp_max;
	}
	if (sp->cluster[0])
		sched_cluster_mask(sim->s, (unsigned int)sched_cluster_find(sim->s, sp->cluster),
				   &p->affinity);
	p->dl = sp->dl;
	p->runnable = !sp->start_ns && sp->type != WORK_IDLE;
	if (sp->sched_group[0])
		p->group = sched_group_find(sim->s, sp->sched_group);
}

static int add_vcpu(struct sim *sim, unsigned int si, const struct sim_vcpu_spec *sp,
		    unsigned int k, char *err, size_t errlen)
{
	struct sim_vcpu *v = &sim->vcpu[sim->nr_vcpus];
	struct sched_entity_params p;
	char msg[512];
	int id;

	if (sp->count > 1)
		snprintf(v->name, sizeof(v->name), "%s%u", sp->name, k);
	else
		snprintf(v->name, sizeof(v->name), "%s", sp->name);
	v->spec = sp;
	v->group = -1;
	fill_params(sim, sp, v->name, &p);
	id = sched_entity_add(sim->s, &p, 0, msg, sizeof(msg));
	if (id == -SCHED_E_CAPACITY_FIT || id == -SCHED_E_BANDWIDTH) {
		struct sim_rejection *r = &sim->rejected[sim->nr_rejected++];

		snprintf(r->vcpu, sizeof(r->vcpu), "%s", v->name);
		r->code = -id;
		snprintf(r->message, sizeof(r->message), "%s", msg);
		v->rejected = true;
		memset(&p.dl, 0, sizeof(p.dl));	/* runs without the reservation */
		id = sched_entity_add(sim->s, &p, 0, msg, sizeof(msg));
	}
	if (id < 0) {
		snprintf(err, errlen, "vcpus[%u]: %s", si, msg);
		return -1;
	}
	v->id = id;
	if (sp->cap_quota_ns &&
	    sched_set_cap(sim->s, id, sp->cap_quota_ns, sp->cap_period_ns, 0, msg, sizeof(msg))) {
		snprintf(err, errlen, "vcpus[%u].cap: %s", si, msg);
		return -1;
	}
	if (sp->perf_request)
		sched_set_perf_request(sim->s, id, sp->perf_request, 0);
	if (sp->type == WORK_LOCK)
		v->group = find_group(sim, sp);
	sim->nr_vcpus++;
	return 0;
}

/* The scenario's groups, parents first (the parser checked the order). */
static int add_groups(struct sim *sim, char *err, size_t errlen)
{
	const struct sim_scenario *sc = sim->sc;
	char msg[SIM_ERR_LEN - 32];

	for (unsigned int i = 0; i < sc->nr_groups; i++) {
		const struct sim_group_spec *g = &sc->groups[i];
		int parent = g->parent[0] ? sched_group_find(sim->s, g->parent) : SCHED_NONE;
		int gid = sched_group_add(sim->s, g->name, parent, g->weight, 0, msg, sizeof(msg));

		if (gid < 0 || (g->cap_quota_ns &&
				sched_group_set_cap(sim->s, gid, g->cap_quota_ns, g->cap_period_ns, 0,
						    msg, sizeof(msg)))) {
			snprintf(err, errlen, "groups[%u]: %s", i, msg);
			return -1;
		}
		if (g->cap_quota_ns)
			sim->exact = sc->exact_cbs;
	}
	return 0;
}

int sim_setup(struct sim *sim, const struct sim_scenario *sc, FILE *trace, char *err,
	      size_t errlen)
{
	char msg[SIM_ERR_LEN - 8];

	struct sched_config cfg = { 0 };
	unsigned int total = 0, ncpu;

	memset(sim, 0, sizeof(*sim));
	sim->sc = sc;
	sim->rng = sc->seed;
	cfg.slice_ns = sc->slice_ns;
	cfg.tick_ns = sc->tick_ns;
	cfg.dl_supply_window_ns = sc->window_ns;
	cfg.dl_supply_latency_ns = sc->latency_ns;
	cfg.event = sim_event;
	cfg.event_opaque = sim;
	supply_init(sim, &cfg);
	sim->s = sched_create(&sc->topo, &cfg, msg, sizeof(msg));
	if (!sim->s) {
		snprintf(err, errlen, "host.%s", msg);	/* the engine names clusters[i] */
		return -1;
	}
	for (unsigned int i = 0; i < sc->nr_specs; i++)
		total += sc->specs[i].count;
	ncpu = sched_nr_cpus(sim->s);
	sim->vcpu = aligned_alloc(64, (total ? total : 1) * sizeof(*sim->vcpu));
	if (sim->vcpu)
		memset(sim->vcpu, 0, (total ? total : 1) * sizeof(*sim->vcpu));
	sim->groups = calloc(total, sizeof(*sim->groups));
	sim->rejected = calloc(total, sizeof(*sim->rejected));
	sim->next = calloc(ncpu, sizeof(*sim->next));
	sim->level = calloc(ncpu, sizeof(*sim->level));
	sim->curr = calloc(ncpu, sizeof(*sim->curr));
	sim->dirty = calloc(ncpu, sizeof(*sim->dirty));
	sim->is_dirty = calloc(ncpu, sizeof(*sim->is_dirty));
	sim->slot_offset = calloc(ncpu, sizeof(*sim->slot_offset));
	if (!sim->vcpu || !sim->groups || !sim->rejected || !sim->next || !sim->level ||
	    !sim->curr || !sim->dirty || !sim->is_dirty || !sim->slot_offset) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(sim->slot_offset, cfg.dl_supply_offset_ns, ncpu * sizeof(*sim->slot_offset));
	for (unsigned int c = 0; c < ncpu; c++) {
		struct sched_cpu_state st;

		sched_cpu_curr(sim->s, c, &st);	/* events keep these current from here */
		sim->next[c] = st.curr;
		sim->level[c] = st.level;
		sim->curr[c] = -1;
		mark_dirty(sim, c);
	}
	/* Before the first entity, so that its first switch is traced. */
	if (trace) {
		sim->trace = trace_open(trace, sim, total, err, errlen);
		if (!sim->trace)
			return -1;
	}
	if (add_groups(sim, err, errlen))
		return -1;
	for (unsigned int i = 0; i < sc->nr_specs; i++)
		for (unsigned int k = 0; k < sc->specs[i].count; k++)
			if (add_vcpu(sim, i, &sc->specs[i], k, err, errlen))
				return -1;
	if (evq_init(sim, sim->nr_vcpus)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned int i = 0; i < sim->nr_vcpus; i++) {
		workload_init(sim, &sim->vcpu[i]);
		if ((sim->vcpu[i].spec->dl.runtime_ns && !sim->vcpu[i].rejected) ||
		    sim->vcpu[i].spec->cap_quota_ns)
			sim->exact = sc->exact_cbs;
	}
	sim_refresh(sim);
	return 0;
}

/* Entity ids are dense from 0 in creation order, so id == vCPU index. */
static int vcpu_of(const struct sim *sim, int id)
{
	return id >= 0 && (unsigned int)id < sim->nr_vcpus ? id : -1;
}

/*
 * Apply what the engine's events announced for the pCPUs that switched or
 * changed level (sim_event() noted them), the dispatcher's job: the
 * previous vCPU stops, the new one starts, at the pCPU's level. No engine
 * call happens in here.
 */
void sim_refresh(struct sim *sim)
{
	unsigned int n = sim->nr_dirty;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int c = sim->dirty[i];
		int old = sim->curr[c];
		struct sim_vcpu *v = old >= 0 ? &sim->vcpu[old] : NULL;

		if (!v || v->cpu != (int)c)
			continue;
		if (workload_always_busy(v)) {	/* no events, no progress: a stamp */
			workload_account(sim, v);
			v->cpu = -1;
			continue;
		}
		workload_sync(sim, v);	/* at the old level */
		v->cpu = -1;
		workload_next_event(sim, v);
	}
	for (unsigned int i = 0; i < n; i++) {
		unsigned int c = sim->dirty[i];
		int idx;

		sim->is_dirty[c] = false;
		idx = vcpu_of(sim, sim->next[c]);
		sim->curr[c] = idx;
		if (idx < 0)
			continue;
		workload_sync(sim, &sim->vcpu[idx]);
		sim->vcpu[idx].cpu = (int)c;
		sim->vcpu[idx].level = sim->level[c];
	}
	sim->nr_dirty = 0;
	for (unsigned int i = 0; i < n; i++) {
		int idx = sim->curr[sim->dirty[i]];

		if (idx >= 0 && !workload_always_busy(&sim->vcpu[idx]))
			workload_on_cpu(sim, (unsigned int)idx);
	}
}

static uint64_t next_time(struct sim *sim, uint64_t next_tick, uint64_t end)
{
	uint64_t t = next_tick < end ? next_tick : end;

	if (evq_first_key(sim) < t)
		t = evq_first_key(sim);
	if (sim->exact) {
		for (unsigned int c = 0; c < sched_nr_cpus(sim->s); c++) {
			uint64_t e = sched_next_event(sim->s, c);

			if (e > sim->now && e < t)
				t = e;
		}
	}
	return t < sim->now ? sim->now : t;
}

/* Run the workload events due at `now` (each handler moves its vCPU on). */
static void run_due_events(struct sim *sim)
{
	unsigned int budget = 8 * sim->nr_vcpus + 16;
	int first;

	while ((first = evq_first(sim)) >= 0 && evq_first_key(sim) <= sim->now && budget--)
		workload_event(sim, (unsigned int)first);
}

static void sample_util(struct sim *sim)
{
	for (unsigned int i = 0; i < sim->nr_vcpus; i++) {
		unsigned int u = 0;

		sched_entity_util(sim->s, sim->vcpu[i].id, &u, NULL);
		sim->vcpu[i].util_sum += u;
		sim->vcpu[i].util_samples++;
	}
}

void sim_run(struct sim *sim)
{
	uint64_t end = sim->sc->duration_ns, tick = sim->sc->tick_ns, next_tick = tick;
	uint64_t ticks = 0, sample_ticks = UTIL_SAMPLE_NS / tick ? UTIL_SAMPLE_NS / tick : 1;

	while (sim->now < end) {
		uint64_t t = next_time(sim, next_tick, end);

		sim->now = t;
		sim->steps++;
		if (t >= end)
			break;
		run_due_events(sim);
		if (sim->exact) {
			for (unsigned int c = 0; c < sched_nr_cpus(sim->s); c++) {
				if (sched_next_event(sim->s, c) <= t) {
					sched_tick_cpu(sim->s, c, t);
					sim_refresh(sim);
				}
			}
		}
		if (t == next_tick) {
			sched_tick(sim->s, t);
			sim_refresh(sim);
			next_tick += tick;
			if (++ticks % sample_ticks == 0)
				sample_util(sim);
		}
	}
	/* Bring every statistic up to the end of the run. */
	for (unsigned int c = 0; c < sched_nr_cpus(sim->s); c++)
		sched_tick_cpu(sim->s, c, end);
	sim->now = end;
	for (unsigned int i = 0; i < sim->nr_vcpus; i++)
		workload_account(sim, &sim->vcpu[i]);
}

void sim_teardown(struct sim *sim)
{
	sched_destroy(sim->s);
	free(sim->vcpu);
	free(sim->groups);
	free(sim->rejected);
	free(sim->next);
	free(sim->level);
	free(sim->curr);
	free(sim->dirty);
	free(sim->is_dirty);
	free(sim->slot_offset);
	evq_free(sim);
	memset(sim, 0, sizeof(*sim));
}
