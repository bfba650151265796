// SPDX-License-Identifier: MIT
/*
 * The dispatcher's accounting: what each vCPU got (active, run, stolen and
 * held time), charged under the state that held, apart from the thread
 * that ticks the engine (dispatch.c).
 */
#include "dispatch/dispatch_internal.h"

#include <time.h>

#include "util/util.h"

/* pCPU the vCPU is current on, or -1; fills info. */
int dispatch_vcpu_pcpu(struct dispatch *d, unsigned int vcpu, struct sched_entity_info *info)
{
	if (d->v[vcpu].id < 0) {
		info->state = SCHED_BLOCKED;
		return -1;
	}
	sched_entity_info(d->sched, d->v[vcpu].id, info);
	if (info->state != SCHED_RUNNING || info->cpu < 0)
		return -1;
	return d->p[info->cpu].curr == (int)vcpu ? info->cpu : -1;
}

/*
 * Charge the time since the last accounting point: active (MPERF base) while
 * current and not halted, stolen while runnable but held out. Run time is
 * settled separately (dispatch_settle_run) because reading a thread's CPU
 * clock is a system call.
 */
void dispatch_account(struct dispatch *d, unsigned int vcpu, uint64_t now)
{
	struct dvcpu *v = &d->v[vcpu];
	struct sched_entity_info info;
	uint64_t dt = now > v->acct_ns ? now - v->acct_ns : 0;

	v->acct_ns = now;
	if (v->id < 0)
		return;
	sched_entity_info(d->sched, v->id, &info);
	if (info.state == SCHED_RUNNABLE || info.state == SCHED_THROTTLED) {
		v->stolen_ns += dt;
		v->held_ns += dt;
		if (v->held_ns > v->held_max_ns)
			v->held_max_ns = v->held_ns;
		return;
	}
	v->held_ns = 0;
	if (info.state == SCHED_RUNNING && !v->halted)
		v->active_ns += dt;
}

/*
 * Run time is the vCPU thread's own CPU time inside KVM_RUN as the engine's
 * choice: wall time would also count time the host gave to other processes,
 * or spent reaching a kicked thread. Settled on leave, when the vCPU halts,
 * and whenever someone reads it, so the counters never stall.
 */
void dispatch_settle_run(struct dispatch *d, unsigned int vcpu)
{
	struct dvcpu *v = &d->v[vcpu];

	if (!v->in_run || !v->sanctioned || v->halted)
		return;
	dispatch_charge_cpu(d, vcpu);
}

/* Add the vCPU thread's CPU time since the last charge to its run time; returns it. */
uint64_t dispatch_charge_cpu(struct dispatch *d, unsigned int vcpu)
{
	struct dvcpu *v = &d->v[vcpu];
	uint64_t cpu = dispatch_vcpu_cpu_ns(d, vcpu);
	uint64_t ran = cpu > v->cpu_acct ? cpu - v->cpu_acct : 0;

	v->run_ns += ran;
	v->cpu_acct = cpu;
	return ran;
}

/* The vCPU thread's CPU time: its own clock, or the vCPU layer's (cpu_ns). */
uint64_t dispatch_vcpu_cpu_ns(struct dispatch *d, unsigned int vcpu)
{
	if (d->ops->cpu_ns)
		return d->ops->cpu_ns(d->opaque, vcpu);
	return dispatch_thread_cpu(d->v[vcpu].cpu_clock);
}

uint64_t dispatch_thread_cpu(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return ns_from_timespec(&ts);
}

/*
 * Charge every vCPU up to now under the states that held so far. Called
 * before anything that may change a state (engine tick, wakeup, block, QoS),
 * so an interval is never charged under the state that follows it.
 */
void dispatch_account_all(struct dispatch *d, uint64_t now)
{
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		dispatch_account(d, i, now);
}
