/* SPDX-License-Identifier: MIT */
/*
 * Slots of a dispatcher made with free_slots (capvisor host): VMs that
 * join later get one engine group and one slot per vCPU, and give them
 * back when they leave. A slot is a vCPU index of every other dispatch_*()
 * call. Every function takes the dispatcher's lock itself.
 *
 * Order of a VM's life: dispatch_vm_group_add(), dispatch_slot_add() per
 * vCPU (admission: a refused vCPU refuses the VM, the caller removes what
 * it added), the gate as usual; on leave dispatch_slot_retire() (the gate
 * says DISPATCH_STOP from then on), the gate's caller gone, then
 * dispatch_slot_remove() and dispatch_vm_group_remove().
 */
#ifndef CAPVISOR_DISPATCH_SLOT_H
#define CAPVISOR_DISPATCH_SLOT_H

#include "dispatch/dispatch.h"

/* A group below the root with g's weight and cap: its engine id, or < 0 with err. */
int dispatch_vm_group_add(struct dispatch *d, const struct group_qos *g, char *err, size_t errlen);
/* Removes an empty group (every slot in it removed first). */
int dispatch_vm_group_remove(struct dispatch *d, int gid);
int dispatch_vm_group_set_weight(struct dispatch *d, int gid, uint32_t weight, char *err,
				 size_t errlen);
/* quota_ns 0 removes the cap. */
int dispatch_vm_group_set_cap(struct dispatch *d, int gid, uint64_t quota_ns, uint64_t period_ns,
			      char *err, size_t errlen);

/*
 * A free slot for a vCPU with QoS q in group gid (runnable: the VM's BSP):
 * the slot index in *slot, or -SCHED_E_NOMEM (no free slot) or the
 * engine's refusal (admission) with err filled; nothing changes then.
 */
int dispatch_slot_add(struct dispatch *d, const struct vcpu_qos *q, int gid, bool runnable,
		      unsigned int *slot, char *err, size_t errlen);
/* Its VM left: the gate returns DISPATCH_STOP from now on and wakes its waiter. */
void dispatch_slot_retire(struct dispatch *d, unsigned int slot);
/* Frees a retired slot whose gate caller has gone (no enter/leave under way). */
void dispatch_slot_remove(struct dispatch *d, unsigned int slot);
/*
 * vm-stop / vm-cont of one VM: a held slot is blocked in the engine (its
 * share goes to the others at once), kicked out of a run under way and
 * kept at its gate until released; released, it is runnable again.
 */
void dispatch_slot_hold(struct dispatch *d, unsigned int slot, bool hold);
/* Host CPU the slot's vCPU thread should be on now, -1 for anywhere. */
int dispatch_slot_host_cpu(struct dispatch *d, unsigned int slot);
unsigned int dispatch_nr_free_slots(struct dispatch *d);

#endif
