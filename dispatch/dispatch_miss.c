// SPDX-License-Identifier: MIT
/*
 * Each reserved vCPU's deadline misses judged against the dispatcher
 * thread's run_delay (dl_miss.h): the engine's events begin periods and
 * report misses on whatever thread drives the engine, with no system call
 * under the engine; the dispatcher thread reads its run_delay once per
 * pass, after its tick, and hands the stretch to every vCPU's watch.
 */
#include "dispatch/dispatch_internal.h"

#include <unistd.h>

/* The vCPU of an entity, also while dispatch_add_entity() is adding it. */
static struct dvcpu *vcpu_of(struct dispatch *d, int entity)
{
	int i = entity >= 0 && (unsigned int)entity < d->nr_vcpus ? d->vcpu_of_entity[entity] : -1;

	if (i >= 0 && d->v[i].id == entity)
		return &d->v[i];
	return d->adding_vcpu >= 0 ? &d->v[d->adding_vcpu] : NULL;
}

/* The engine's event callback, under the dispatcher's lock. */
void dispatch_engine_event(void *opaque, const struct sched_event *ev)
{
	struct dispatch *d = opaque;
	struct sched_entity_info info;
	struct dvcpu *v;

	if (ev->type != SCHED_EV_REPLENISH && ev->type != SCHED_EV_DL_MISS)
		return;
	v = vcpu_of(d, ev->entity);
	if (!v || sched_entity_info(d->sched, ev->entity, &info))
		return;
	if (ev->type == SCHED_EV_REPLENISH) {
		d->any_reservation = true;
		dl_miss_period(&v->miss, ev->deadline, info.dl.deadline_ns);
	} else
		dl_miss_missed(&v->miss, ev->deadline, info.dl.deadline_ns > info.dl.runtime_ns ?
				info.dl.deadline_ns - info.dl.runtime_ns : 0);
}

static uint64_t own_run_delay(struct dispatch *d)
{
	char buf[128];
	ssize_t n = d->schedstat_fd >= 0 ? pread(d->schedstat_fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n <= 0)
		return DL_MISS_DELAY_UNKNOWN;
	buf[n] = '\0';
	return dl_miss_schedstat_delay(buf);
}

/* On the dispatcher thread, after the engine's tick. */
void dispatch_judge_misses(struct dispatch *d, uint64_t now)
{
	uint64_t from;

	if (!d->any_reservation)
		return;
	dl_miss_stretch_of(&d->delay_last, d->delay_last_ns, own_run_delay(d), now, &from);
	d->delay_last_ns = now;
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		if (d->v[i].id >= 0)
			dl_miss_stretch(&d->v[i].miss, from, now);
}
