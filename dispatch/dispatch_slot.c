// SPDX-License-Identifier: MIT
/*
 * A VM's place in a dispatcher: its groups and its vCPUs' slots, admitted
 * in one go (dispatch_vm_admit(): a VM joining capvisor host, or a
 * stand-alone VM in its own dispatcher), and given back when a VM leaves
 * a host, so the others get its share at the next pick.
 */
#include "dispatch/dispatch_slot.h"
#include "dispatch/dispatch_internal.h"

#include <stdio.h>
#include <string.h>

/* A group below parent with g's weight and cap: its engine id, or < 0 with err. */
static int vm_group_add(struct dispatch *d, const struct group_qos *g, int parent, char *err,
			size_t errlen)
{
	uint64_t now = dispatch_now_ns();
	int gid;

	pthread_mutex_lock(&d->lock);
	gid = sched_group_add(d->sched, g->name, parent, g->weight, now, err, errlen);
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

/*
 * A free slot for a vCPU with QoS q in group gid (runnable: the VM's BSP):
 * the slot index in *slot, or -SCHED_E_NOMEM (no free slot) or the
 * engine's refusal (admission) with err filled; nothing changes then.
 */
static int slot_add(struct dispatch *d, const struct vcpu_qos *q, int gid, bool runnable,
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

/* The engine group of the group a vCPU names: "" the VM's own, else one of its --group. */
static int group_of(const struct vm_qos *vq, const int *gids, const char *name)
{
	if (!name[0])
		return gids[0];
	for (unsigned int g = 0; g < vq->nr_groups; g++)
		if (!strcmp(vq->groups[g].name, name))
			return gids[1 + g];
	return -SCHED_E_NOENT;
}

/* Gives back the groups [0, nr_groups) of a VM, its --group ones first. */
static void groups_remove(struct dispatch *d, const int *gids, unsigned int nr_groups)
{
	while (nr_groups--)
		dispatch_vm_group_remove(d, gids[nr_groups]);
}

static int add_groups(struct dispatch *d, const struct vm_qos *vq, int *gids, char *err,
		      size_t errlen)
{
	char msg[512];
	unsigned int g;

	gids[0] = vm_group_add(d, &vq->vm, SCHED_NONE, msg, sizeof(msg));
	if (gids[0] < 0) {
		snprintf(err, errlen, "VM '%s': %.320s", vq->vm.name, msg);
		return gids[0];
	}
	for (g = 0; g < vq->nr_groups; g++) {
		gids[1 + g] = vm_group_add(d, &vq->groups[g], gids[0], msg, sizeof(msg));
		if (gids[1 + g] < 0) {
			snprintf(err, errlen, "VM '%s' group '%s': %.300s", vq->vm.name,
				 vq->groups[g].name, msg);
			groups_remove(d, gids, 1 + g);
			return gids[1 + g];
		}
	}
	return 0;
}

static int add_vcpu(struct dispatch *d, const struct vm_qos *vq, const struct vcpu_qos *q,
		    unsigned int i, const int *gids, unsigned int *slot, char *err, size_t errlen)
{
	int gid = group_of(vq, gids, q->group);
	char msg[512];
	int rc;

	if (gid < 0) {
		snprintf(err, errlen, "VM '%s' vCPU %u: group '%s' does not exist", vq->vm.name, i,
			 q->group);
		return gid;
	}
	/* The BSP starts running; APs wait for INIT/SIPI, halted in KVM_RUN. */
	rc = slot_add(d, q, gid, i == 0, slot, msg, sizeof(msg));
	if (rc)
		snprintf(err, errlen, "VM '%s' vCPU %u: %.320s", vq->vm.name, i, msg);
	return rc;
}

int dispatch_vm_admit(struct dispatch *d, const struct vm_qos *vq, const struct vcpu_qos *qos,
		      unsigned int nr_vcpus, unsigned int *slots, int *gids, char *err,
		      size_t errlen)
{
	unsigned int i;
	int rc = add_groups(d, vq, gids, err, errlen);

	if (rc)
		return rc;
	for (i = 0; i < nr_vcpus; i++) {
		rc = add_vcpu(d, vq, &qos[i], i, gids, &slots[i], err, errlen);
		if (rc)
			break;
	}
	if (!rc)
		return 0;
	/* Refused at vCPU i: the slots before it never had a gate caller. */
	while (i--)
		dispatch_slot_remove(d, slots[i]);
	groups_remove(d, gids, 1 + vq->nr_groups);
	return rc;
}

void dispatch_slot_retire(struct dispatch *d, unsigned int slot)
{
	pthread_mutex_lock(&d->lock);
	d->v[slot].retiring = true;
	dispatch_gate_wake(d, slot);
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
		dispatch_gate_wake(d, slot);
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

unsigned int dispatch_nr_free_slots(struct dispatch *d)
{
	unsigned int n = 0;

	pthread_mutex_lock(&d->lock);
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		n += d->v[i].id < 0 && !d->v[i].retiring;
	pthread_mutex_unlock(&d->lock);
	return n;
}
