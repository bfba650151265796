// SPDX-License-Identifier: MIT
/*
 * Synthetic vCPU workloads. Work is measured in full-capacity time: a vCPU
 * running on a pCPU at level P gets P/1024 ns of work done per ns, exactly
 * the engine's model. `rem` counts remaining work in ns x 1024 so progress
 * is exact integer arithmetic: rem -= delta x P.
 *
 *   busy      always runnable
 *   periodic  run_us of work every period_us (a late job starts at once)
 *   random    exponential bursts of work and sleeps
 *   lock      take a group's lock, run cs_us inside, ncs_us outside; a
 *             waiter spins (runs without progress); with yield_to it calls
 *             sched_yield_to(holder) every ple_us of spinning (pause-loop
 *             exit, kvm_vcpu_on_spin)
 *   idle      never runs
 */
#include "sim/sim.h"

#define FOREVER	UINT64_MAX

static void set_work(struct sim_vcpu *v, enum sim_phase phase, uint64_t work_ns)
{
	v->phase = phase;
	v->rem = work_ns * 1024;
}

static uint64_t job_work(struct sim *sim, const struct sim_vcpu_spec *sp)
{
	return sp->type == WORK_PERIODIC ? sp->run_ns : sim_exp(sim, sp->run_mean_ns);
}

/* The first phase, entered at the vCPU's start time. */
static void start_work(struct sim *sim, struct sim_vcpu *v)
{
	const struct sim_vcpu_spec *sp = v->spec;

	switch (sp->type) {
	case WORK_BUSY:
		v->phase = PH_RUN;
		v->rem = FOREVER;
		break;
	case WORK_PERIODIC:
		set_work(v, PH_RUN, sp->run_ns);
		v->next_arrival = sim->now + sp->period_ns;
		break;
	case WORK_RANDOM:
		set_work(v, PH_RUN, job_work(sim, sp));
		break;
	case WORK_LOCK:
		v->phase = PH_SPIN;
		v->spun = 0;
		break;
	case WORK_IDLE:
		v->phase = PH_OFF;
		break;
	}
}

void workload_init(struct sim *sim, struct sim_vcpu *v)
{
	v->cpu = -1;
	if (v->spec->type == WORK_IDLE) {
		v->phase = PH_OFF;
	} else if (v->spec->start_ns) {
		v->phase = PH_SLEEP;
		v->wake_at = v->spec->start_ns;
	} else {
		start_work(sim, v);
		v->started = true;
	}
	workload_next_event(sim, v);
}

/* What the supply delivered to v since it was last synced; no workload progress. */
void workload_account(struct sim *sim, struct sim_vcpu *v)
{
	if (v->cpu >= 0 && sim->now > v->synced_at)
		v->delivered += supply_work(sim, v->cpu, v->level, v->synced_at, sim->now);
	v->synced_at = sim->now;
}

/* Account the progress of v since it was last synced (lazy, exact). */
void workload_sync(struct sim *sim, struct sim_vcpu *v)
{
	uint64_t delta = sim->now - v->synced_at, d;

	workload_account(sim, v);
	if (v->cpu < 0 || !delta)
		return;
	if (v->phase == PH_SPIN) {
		v->spun += delta;
		return;
	}
	if ((v->phase != PH_RUN && v->phase != PH_CS && v->phase != PH_NCS) || v->rem == FOREVER)
		return;
	d = supply_work(sim, v->cpu, v->level, sim->now - delta, sim->now);
	v->rem = d >= v->rem ? 0 : v->rem - d;
}

void workload_next_event(struct sim *sim, struct sim_vcpu *v)
{
	uint64_t t = FOREVER;

	workload_sync(sim, v);
	switch (v->phase) {
	case PH_RUN:
	case PH_CS:
	case PH_NCS:
		if (v->cpu >= 0 && v->rem != FOREVER && v->level)
			t = supply_done_at(sim, v->cpu, v->level, sim->now, v->rem);
		break;
	case PH_SLEEP:
		t = v->wake_at;
		break;
	case PH_SPIN:
		if (v->cpu >= 0 && v->spec->yield_to && v->group >= 0 &&
		    sim->groups[v->group].holder >= 0)
			t = sim->now + (v->spun < v->spec->ple_ns ? v->spec->ple_ns - v->spun : 0);
		break;
	case PH_OFF:
		break;
	}
	if (t == v->next_event)
		return;
	v->next_event = t;
	evq_update(sim, (unsigned int)(v - sim->vcpu));
}

static void lock_acquire(struct sim *sim, struct sim_vcpu *v, unsigned int idx)
{
	sim->groups[v->group].holder = (int)idx;
	set_work(v, PH_CS, v->spec->cs_ns);
	v->spun = 0;
}

/* Lock released: a waiter that is on a pCPU right now sees it free first. */
static void lock_handoff(struct sim *sim, int group)
{
	for (unsigned int i = 0; i < sim->nr_vcpus; i++) {
		struct sim_vcpu *w = &sim->vcpu[i];

		if (w->group == group && w->phase == PH_SPIN && w->cpu >= 0) {
			workload_sync(sim, w);
			lock_acquire(sim, w, i);
			workload_next_event(sim, w);
			break;
		}
	}
	/* Spinners' PLE events depend on whether the lock is held. */
	for (unsigned int i = 0; i < sim->nr_vcpus; i++)
		if (sim->vcpu[i].group == group && sim->vcpu[i].phase == PH_SPIN)
			workload_next_event(sim, &sim->vcpu[i]);
}

/* A vCPU just got a pCPU (or a new level). */
void workload_on_cpu(struct sim *sim, unsigned int idx)
{
	struct sim_vcpu *v = &sim->vcpu[idx];

	if (v->phase == PH_SPIN && v->cpu >= 0 && sim->groups[v->group].holder < 0) {
		workload_sync(sim, v);
		lock_acquire(sim, v, idx);
		lock_handoff(sim, v->group);	/* refresh the others' PLE events */
	}
	workload_next_event(sim, v);
}

static void go_to_sleep(struct sim *sim, struct sim_vcpu *v, uint64_t until)
{
	v->phase = PH_SLEEP;
	v->wake_at = until;
	workload_next_event(sim, v);
	sched_block(sim->s, v->id, sim->now);
	sim_refresh(sim);
}

static void job_done(struct sim *sim, struct sim_vcpu *v)
{
	const struct sim_vcpu_spec *sp = v->spec;

	v->jobs++;
	/* The job was released a period before next_arrival; its deadline follows. */
	if (sp->type == WORK_PERIODIC &&
	    sim->now > v->next_arrival - sp->period_ns +
		       (sp->dl.runtime_ns && !v->rejected ? sp->dl.deadline_ns : sp->period_ns))
		v->late_jobs++;
	if (sp->type == WORK_RANDOM) {
		go_to_sleep(sim, v, sim->now + sim_exp(sim, sp->sleep_mean_ns));
		return;
	}
	if (v->next_arrival <= sim->now) {	/* late: the next job is already due */
		set_work(v, PH_RUN, sp->run_ns);
		v->next_arrival += sp->period_ns;
		workload_next_event(sim, v);
		return;
	}
	go_to_sleep(sim, v, v->next_arrival);
	v->next_arrival += sp->period_ns;
}

static void wake(struct sim *sim, struct sim_vcpu *v)
{
	const struct sim_vcpu_spec *sp = v->spec;

	if (!v->started)
		start_work(sim, v);
	else
		set_work(v, PH_RUN, job_work(sim, sp));
	v->started = true;
	workload_next_event(sim, v);
	sched_wakeup(sim->s, v->id, sim->now);
	sim_refresh(sim);
}

static void spin_exit(struct sim *sim, struct sim_vcpu *v)
{
	struct sim_lock_group *g = &sim->groups[v->group];
	int ret;

	v->spun = 0;
	workload_next_event(sim, v);
	if (g->holder < 0)
		return;
	g->yield_to_calls++;
	ret = sched_yield_to(sim->s, v->id, sim->vcpu[g->holder].id, sim->now);
	if (ret > 0)
		g->yield_to_boosted++;
	sim_refresh(sim);
}

void workload_event(struct sim *sim, unsigned int idx)
{
	struct sim_vcpu *v = &sim->vcpu[idx];

	workload_sync(sim, v);
	switch (v->phase) {
	case PH_RUN:
		job_done(sim, v);
		break;
	case PH_SLEEP:
		wake(sim, v);
		break;
	case PH_CS:
		sim->groups[v->group].holder = -1;
		sim->groups[v->group].completed++;
		set_work(v, PH_NCS, v->spec->ncs_ns);
		workload_next_event(sim, v);
		lock_handoff(sim, v->group);
		break;
	case PH_NCS:
		v->phase = PH_SPIN;
		v->spun = 0;
		if (sim->groups[v->group].holder < 0)
			lock_acquire(sim, v, idx);
		workload_next_event(sim, v);
		break;
	case PH_SPIN:
		spin_exit(sim, v);
		break;
	case PH_OFF:
		workload_next_event(sim, v);
		break;
	}
}
