// SPDX-License-Identifier: MIT
/* Live QoS changes, stop/cont and reports: the control socket's side. */
#include "dispatch/dispatch_internal.h"
#include "dispatch/dispatch_slot.h"

#include <stdio.h>
#include <string.h>

static int check_vcpu(const struct dispatch *d, unsigned int vcpu, char *err, size_t errlen)
{
	if (vcpu < d->nr_vcpus)
		return 0;
	snprintf(err, errlen, "vcpu %u does not exist (the VM has vCPUs 0-%u)", vcpu,
		 d->nr_vcpus - 1);
	return -SCHED_E_NOENT;
}

/* Run fn under the lock and make the vCPU threads follow at once. */
#define DISPATCH_LOCKED(d, expr)                                        \
	({                                                              \
		int __rc;                                               \
		pthread_mutex_lock(&(d)->lock);                         \
		dispatch_account_all((d), dispatch_now_ns());           \
		__rc = (expr);                                          \
		if (__rc >= 0)                                          \
			dispatch_apply((d), dispatch_now_ns());         \
		pthread_mutex_unlock(&(d)->lock);                       \
		__rc;                                                   \
	})

int dispatch_set_weight(struct dispatch *d, unsigned int vcpu, uint32_t weight, char *err,
			size_t errlen)
{
	int rc = check_vcpu(d, vcpu, err, errlen);

	if (rc)
		return rc;
	rc = DISPATCH_LOCKED(d, sched_set_weight(d->sched, d->v[vcpu].id, weight,
						 dispatch_now_ns()));
	if (rc < 0)
		snprintf(err, errlen, "weight %u: %s (expected %u..%u)", weight,
			 sched_strerror(rc), SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
	return rc;
}

int dispatch_set_uclamp(struct dispatch *d, unsigned int vcpu, unsigned int min, unsigned int max,
			char *err, size_t errlen)
{
	int rc = check_vcpu(d, vcpu, err, errlen);

	if (rc)
		return rc;
	return DISPATCH_LOCKED(d, sched_set_uclamp(d->sched, d->v[vcpu].id, min, max,
						   dispatch_now_ns(), err, errlen));
}

int dispatch_set_reservation(struct dispatch *d, unsigned int vcpu, uint64_t runtime_ns,
			     uint64_t deadline_ns, uint64_t period_ns, char *err, size_t errlen)
{
	struct sched_dl_params dl = { runtime_ns, deadline_ns, period_ns };
	int rc = check_vcpu(d, vcpu, err, errlen);

	if (rc)
		return rc;
	return DISPATCH_LOCKED(d, sched_set_reservation(d->sched, d->v[vcpu].id,
							runtime_ns ? &dl : NULL,
							dispatch_now_ns(), err, errlen));
}

int dispatch_set_cap(struct dispatch *d, unsigned int vcpu, uint64_t quota_ns, uint64_t period_ns,
		     char *err, size_t errlen)
{
	int rc = check_vcpu(d, vcpu, err, errlen);

	if (rc)
		return rc;
	return DISPATCH_LOCKED(d, sched_set_cap(d->sched, d->v[vcpu].id, quota_ns, period_ns,
						dispatch_now_ns(), err, errlen));
}

int dispatch_set_cluster(struct dispatch *d, unsigned int vcpu, const char *cluster, char *err,
			 size_t errlen)
{
	struct sched_cpumask mask;
	int rc = check_vcpu(d, vcpu, err, errlen), c;

	if (rc)
		return rc;
	sched_cpumask_clear(&mask);
	pthread_mutex_lock(&d->lock);
	dispatch_account_all(d, dispatch_now_ns());
	if (cluster && *cluster) {
		c = sched_cluster_find(d->sched, cluster);
		if (c < 0) {
			pthread_mutex_unlock(&d->lock);
			snprintf(err, errlen, "cluster '%s' does not exist", cluster);
			return -SCHED_E_NOENT;
		}
		sched_cluster_mask(d->sched, (unsigned int)c, &mask);
	}
	rc = sched_set_affinity(d->sched, d->v[vcpu].id, &mask, dispatch_now_ns(), err, errlen);
	if (rc >= 0)
		dispatch_apply(d, dispatch_now_ns());
	pthread_mutex_unlock(&d->lock);
	return rc;
}

unsigned int dispatch_nr_groups(const struct dispatch *d)
{
	return d->nr_groups;
}

static int check_group(const struct dispatch *d, unsigned int group, char *err, size_t errlen)
{
	if (group < d->nr_groups)
		return 0;
	snprintf(err, errlen, "group %u does not exist (the VM has groups 0-%u)", group,
		 d->nr_groups - 1);
	return -SCHED_E_NOENT;
}

int dispatch_set_group_weight(struct dispatch *d, unsigned int group, uint32_t weight, char *err,
			      size_t errlen)
{
	int rc = check_group(d, group, err, errlen);

	if (rc)
		return rc;
	/* A stand-alone VM's groups change as a joined VM's (dispatch_slot.h). */
	return dispatch_vm_group_set_weight(d, d->gid[group], weight, err, errlen);
}

int dispatch_set_group_cap(struct dispatch *d, unsigned int group, uint64_t quota_ns,
			   uint64_t period_ns, char *err, size_t errlen)
{
	int rc = check_group(d, group, err, errlen);

	if (rc)
		return rc;
	return dispatch_vm_group_set_cap(d, d->gid[group], quota_ns, period_ns, err, errlen);
}

/* Is vCPU i in the engine group gid, directly or below it? */
static bool vcpu_in_group(struct dispatch *d, unsigned int i, int gid)
{
	struct sched_entity_info info;
	struct sched_group_stats gs;
	int g;

	sched_entity_info(d->sched, d->v[i].id, &info);
	for (g = info.group; g != SCHED_NONE && g != gid; g = gs.parent)
		if (sched_group_stats(d->sched, g, &gs))
			return false;
	return g == gid;
}

int dispatch_group_report(struct dispatch *d, unsigned int group, struct dispatch_group_report *r)
{
	if (group >= d->nr_groups)
		return -SCHED_E_NOENT;
	memset(r, 0, sizeof(*r));
	r->parent = group ? 0 : -1;
	pthread_mutex_lock(&d->lock);
	sched_group_stats(d->sched, d->gid[group], &r->stats);
	for (unsigned int i = 0; i < d->nr_vcpus && r->nr_vcpus < DISPATCH_MAX_VCPUS; i++) {
		if (!vcpu_in_group(d, i, d->gid[group]))
			continue;
		dispatch_settle_run(d, i);
		r->cpu_time_ns += d->v[i].run_ns;
		r->vcpus[r->nr_vcpus++] = i;
	}
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int dispatch_set_perf_request(struct dispatch *d, unsigned int vcpu, unsigned int level)
{
	if (vcpu >= d->nr_vcpus)
		return -SCHED_E_NOENT;
	return DISPATCH_LOCKED(d, sched_set_perf_request(d->sched, d->v[vcpu].id, level,
							 dispatch_now_ns()));
}

void dispatch_pause(struct dispatch *d)
{
	pthread_mutex_lock(&d->lock);
	d->paused = true;
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		if (d->v[i].in_run && !d->v[i].kicked) {
			d->v[i].kicked = true;
			d->ops->kick(d->opaque, i);
		}
	pthread_mutex_unlock(&d->lock);
}

void dispatch_resume(struct dispatch *d)
{
	pthread_mutex_lock(&d->lock);
	d->paused = false;
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		dispatch_gate_wake(d, i);
	pthread_cond_signal(&d->tick_cond);
	pthread_mutex_unlock(&d->lock);
}

int dispatch_vcpu_report(struct dispatch *d, unsigned int vcpu, struct dispatch_vcpu_report *r)
{
	struct dvcpu *v;

	if (vcpu >= d->nr_vcpus)
		return -SCHED_E_NOENT;
	v = &d->v[vcpu];
	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&d->lock);
	dispatch_account(d, vcpu, dispatch_now_ns());
	dispatch_settle_run(d, vcpu);
	sched_entity_info(d->sched, v->id, &r->info);
	sched_entity_stats(d->sched, v->id, &r->stats);
	r->tid = v->tid;
	r->in_run = v->in_run;
	r->host_cpu = r->info.cpu >= 0 ? (int)d->p[r->info.cpu].host_cpu : -1;
	r->level = r->info.cpu >= 0 ? d->p[r->info.cpu].level : 0;
	r->run_ns = v->run_ns;
	r->active_ns = v->active_ns;
	r->stolen_ns = v->stolen_ns;
	r->held_max_ns = v->held_max_ns;
	r->onparts = v->onparts;
	r->onpart_late_ns = v->onpart_late_ns;
	r->onpart_late_max_ns = v->onpart_late_max_ns;
	r->onparts_missed = v->onparts_missed;
	r->misses_host = v->miss.host;
	r->misses_engine = v->miss.engine;
	r->miss_withheld_max_ns = v->miss.withheld_max_ns;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

void dispatch_vcpu_times(struct dispatch *d, unsigned int vcpu, uint64_t *active_ns,
			 uint64_t *run_ns)
{
	pthread_mutex_lock(&d->lock);
	dispatch_account(d, vcpu, dispatch_now_ns());
	dispatch_settle_run(d, vcpu);
	*active_ns = d->v[vcpu].active_ns;
	*run_ns = d->v[vcpu].run_ns;
	pthread_mutex_unlock(&d->lock);
}

struct sched *dispatch_engine(struct dispatch *d)
{
	return d->sched;
}

void dispatch_get_counters(struct dispatch *d, struct dispatch_counters *c)
{
	pthread_mutex_lock(&d->lock);
	*c = d->counters;
	c->hand_off = d->hand_off;
	pthread_mutex_unlock(&d->lock);
}

void dispatch_lock(struct dispatch *d)
{
	pthread_mutex_lock(&d->lock);
}

void dispatch_unlock(struct dispatch *d)
{
	pthread_mutex_unlock(&d->lock);
}

/* Scheduler hints from the guest (devices/hint.c), on the vCPU's own thread. */
void dispatch_yield(struct dispatch *d, unsigned int vcpu)
{
	if (vcpu < d->nr_vcpus)
		DISPATCH_LOCKED(d, sched_entity_yield(d->sched, d->v[vcpu].id, dispatch_now_ns()));
}

int dispatch_yield_to(struct dispatch *d, unsigned int vcpu, unsigned int target)
{
	if (vcpu >= d->nr_vcpus || target >= d->nr_vcpus)
		return 0;
	return DISPATCH_LOCKED(d, sched_yield_to(d->sched, d->v[vcpu].id, d->v[target].id,
						 dispatch_now_ns()));
}
