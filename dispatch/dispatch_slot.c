// SPDX-License-Identifier: MIT
/*
 * Slots for VMs that join a running dispatcher (capvisor host): their
 * groups, their vCPUs' entities, and giving both back when a VM leaves,
 * so the others get its share at the next pick.
 */
#include "dispatch/dispatch_slot.h"
#include "dispatch/dispatch_internal.h"

#include <stdio.h>
#include <string.h>

int dispatch_vm_group_add(struct dispatch *d, const struct group_qos *g, char *err, size_t errlen)
{
	uint64_t now = dispatch_now_ns();
	int gid;

	pthread_mutex_lock(&d->lock);
	gid = sched_group_add(d->sched, g->name, SCHED_NONE, g->weight, now, err, errlen);
	if (gid >= 0 && g->has_cap &&
	    sched_group_set_cap(d->sched, gid, g->cap_quota_ns, g->cap_period_ns, now, err,
				errlen) < 0) {
		sched_group_remove(d->sched, gid, now);
		gid = -SCHED_E_BANDWIDTH;
	}
	pthread_mutex_unlock(&d->lock);
	return gid;
}

int dispatch_vm_group_remove(struct dispatch *d, int gid)
{
	int rc;

	pthread_mutex_lock(&d->lock);
	rc = sched_group_remove(d->sched, gid, dispatch_now_ns());
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int dispatch_vm_group_set_weight(struct dispatch *d, int gid, uint32_t weight, char *err,
				 size_t errlen)
{
	uint64_t now = dispatch_now_ns();
	int rc;

	pthread_mutex_lock(&d->lock);
	dispatch_account_all(d, now);
	rc = sched_group_set_weight(d->sched, gid, weight, now, err, errlen);
	if (!rc)
		dispatch_apply(d, now);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int dispatch_vm_group_set_cap(struct dispatch *d, int gid, uint64_t quota_ns, uint64_t period_ns,
			      char *err, size_t errlen)
{
	uint64_t now = dispatch_now_ns();
	int rc;

	pthread_mutex_lock(&d->lock);
	dispatch_account_all(d, now);
	rc = sched_group_set_cap(d->sched, gid, quota_ns, period_ns, now, err, errlen);
	if (!rc)
		dispatch_apply(d, now);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

static int find_free_slot(struct dispatch *d)
{
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		if (d->v[i].id < 0 && !d->v[i].retiring)
			return (int)i;
	return -1;
}

int dispatch_slot_add(struct dispatch *d, const struct vcpu_qos *q, int gid, bool runnable,
		      unsigned int *slot, char *err, size_t errlen)
{
	uint64_t now = dispatch_now_ns();
	char msg[512], *colon;
	int i, rc;

	pthread_mutex_lock(&d->lock);
	i = find_free_slot(d);
	if (i < 0) {
		snprintf(err, errlen, "no free vCPU slot: the host schedules at most %u vCPUs",
			 d->nr_vcpus);
		pthread_mutex_unlock(&d->lock);
		return -SCHED_E_NOMEM;
	}
	dispatch_account_all(d, now);
	rc = dispatch_add_entity(d, (unsigned int)i, q, gid, runnable, msg, sizeof(msg));
	/* Its message names the slot ("vCPU 7: ..."), which means nothing to the VM. */
	colon = strstr(msg, ": ");
	snprintf(err, errlen, "%s", colon ? colon + 2 : msg);
	if (rc && d->v[i].id >= 0) {
		/* Added, then its cap refused: take it out again. */
		sched_entity_remove(d->sched, d->v[i].id, now);
		d->vcpu_of_entity[d->v[i].id] = -1;
	}
	if (rc) {
		dispatch_vcpu_slot_init(&d->v[i]);
	} else {
		d->v[i].acct_ns = now;
		*slot = (unsigned int)i;
		dispatch_apply(d, now);
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void dispatch_slot_retire(struct dispatch *d, unsigned int slot)
{
	pthread_mutex_lock(&d->lock);
	d->v[slot].retiring = true;
	pthread_cond_broadcast(&d->v[slot].cond);
	pthread_mutex_unlock(&d->lock);
}

void dispatch_slot_hold(struct dispatch *d, unsigned int slot, bool hold)
{
	struct dvcpu *v = &d->v[slot];
	uint64_t now = dispatch_now_ns();

	pthread_mutex_lock(&d->lock);
	if (v->id < 0 || v->held == hold) {
		pthread_mutex_unlock(&d->lock);
		return;
	}
	dispatch_account_all(d, now);
	v->held = hold;
	if (hold) {
		sched_block(d->sched, v->id, now);
		if (v->in_run && !v->kicked) {
			v->kicked = true;
			d->ops->kick(d->opaque, slot);
		}
	} else {
		sched_wakeup(d->sched, v->id, now);
		pthread_cond_signal(&v->cond);
	}
	dispatch_apply(d, now);
	pthread_cond_signal(&d->tick_cond);
	pthread_mutex_unlock(&d->lock);
}

void dispatch_slot_remove(struct dispatch *d, unsigned int slot)
{
	struct dvcpu *v = &d->v[slot];
	uint64_t now = dispatch_now_ns();

	pthread_mutex_lock(&d->lock);
	dispatch_account_all(d, now);
	if (v->id >= 0) {
		sched_entity_remove(d->sched, v->id, now);
		d->vcpu_of_entity[v->id] = -1;
	}
	for (unsigned int p = 0; p < d->nr_pcpus; p++)
		if (d->p[p].curr == (int)slot)
			d->p[p].curr = -1;
	dispatch_vcpu_slot_init(v);
	/* Its pCPU's next vCPU may wait for it to be out of its host CPU. */
	dispatch_apply(d, now);
	for (unsigned int p = 0; p < d->nr_pcpus; p++)
		dispatch_wake_host(d, (int)d->p[p].host_cpu);
	pthread_mutex_unlock(&d->lock);
}

int dispatch_slot_host_cpu(struct dispatch *d, unsigned int slot)
{
	int host;

	pthread_mutex_lock(&d->lock);
	host = d->v[slot].pinned_host;
	pthread_mutex_unlock(&d->lock);
	return host;
}

unsigned int dispatch_nr_free_slots(struct dispatch *d)
{
	unsigned int n = 0;

	pthread_mutex_lock(&d->lock);
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		n += d->v[i].id < 0 && !d->v[i].retiring;
	pthread_mutex_unlock(&d->lock);
	return n;
}
