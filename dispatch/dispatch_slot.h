/* SPDX-License-Identifier: MIT */
/*
 * Slots of a dispatcher: a VM gets one engine group (and its --group
 * groups below it) and one slot per vCPU, and gives them back when it
 * leaves. A slot is a vCPU index of every other dispatch_*() call. Every
 * function takes the dispatcher's lock itself. capvisor host admits each
 * VM that joins into a dispatcher made with free_slots; dispatch_create()
 * admits a stand-alone VM into its own through the same
 * dispatch_vm_admit(), so both have the same groups, admission and
 * refusal texts.
 *
 * Order of a VM's life: dispatch_vm_admit() (a refused vCPU refuses the
 * VM, and nothing of it stays), the gate as usual; on leave
 * dispatch_slot_retire() (the gate says DISPATCH_STOP from then on), the
 * gate's caller gone, then dispatch_slot_remove() and
 * dispatch_vm_group_remove().
 */
#ifndef CAPVISOR_DISPATCH_SLOT_H
#define CAPVISOR_DISPATCH_SLOT_H

#include "dispatch/dispatch.h"

/*
 * One VM: its group below the root (vq->vm: name, weight, cap; its engine
 * id in gids[0]), its --group groups below that (gids[1..nr_groups]), and
 * a free slot per vCPU in the group its qos names (slots[i]; the BSP
 * runnable, the others blocked until their thread runs). 0, or the
 * engine's refusal with err naming the VM ("VM 'NAME': ...",
 * "VM 'NAME' group 'G': ...", "VM 'NAME' vCPU I: ...") and nothing of
 * the VM left in the dispatcher.
 */
int dispatch_vm_admit(struct dispatch *d, const struct vm_qos *vq, const struct vcpu_qos *qos,
		      unsigned int nr_vcpus, unsigned int *slots, int *gids, char *err,
		      size_t errlen);
/* Removes an empty group (every slot in it removed first). */
int dispatch_vm_group_remove(struct dispatch *d, int gid);
int dispatch_vm_group_set_weight(struct dispatch *d, int gid, uint32_t weight, char *err,
				 size_t errlen);
/* quota_ns 0 removes the cap. */
int dispatch_vm_group_set_cap(struct dispatch *d, int gid, uint64_t quota_ns, uint64_t period_ns,
			      char *err, size_t errlen);

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
unsigned int dispatch_nr_free_slots(struct dispatch *d);

#endif
