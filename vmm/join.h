/* SPDX-License-Identifier: MIT */
/*
 * A VM whose vCPUs `capvisor host` schedules (`capvisor run --join PATH`,
 * docs/host.md): the hello at start, the host's page of per-vCPU slots,
 * and the gate each vCPU thread passes before KVM_RUN, which waits on its
 * slot instead of a dispatcher of its own.
 *
 * Order of use: vm_join_connect() while scheduling is prepared (a refusal
 * is reported before anything is built), vm_join_attach() once the VM
 * exists (it replaces the gate), vm_join_set_events() when it has a
 * control socket, vm_join_stop() before the vCPUs are
 * stopped, vm_join_free() at the end.
 */
#ifndef CAPVISOR_VMM_JOIN_H
#define CAPVISOR_VMM_JOIN_H

#include <stddef.h>

#include "dispatch/join_proto.h"
#include "dispatch/qosspec.h"

struct vm;
struct vm_join;

/*
 * Says hello to the host on path; NULL with err filled when it cannot be
 * reached, or (*refused set) when it did not admit the VM: err is its reason.
 */
struct vm_join *vm_join_connect(const char *path, const char *name, unsigned int nr_vcpus,
				const struct vcpu_qos *qos, const struct group_qos *vm_group,
				bool *refused, char *err, size_t errlen);
/*
 * HOST_LOST, HOST_REJOINED, HOST_REFUSED for the VM's control socket; data
 * (a json_object *) is consumed.
 */
typedef void (*vm_join_event_fn)(void *opaque, const char *name, void *data);
void vm_join_set_events(struct vm_join *j, vm_join_event_fn fn, void *opaque);
/* The host's emulated pCPUs, as its welcome said (the guest's _CPC). */
const struct host_spec *vm_join_host_spec(const struct vm_join *j);
/*
 * The guest's CPPC request of vCPU vcpu, a capacity level (0: none), for
 * the host's engine; kept and told again to a host it rejoins.
 */
void vm_join_set_request(struct vm_join *j, unsigned int vcpu, unsigned int level);
/*
 * The host's accounts of vCPU vcpu (docs/host.md, "CPPC"): wall time
 * current and not halted, and CPU time meanwhile, continued across hosts.
 * On the vCPU's own thread only.
 */
void vm_join_vcpu_times(struct vm_join *j, unsigned int vcpu, uint64_t *active_ns,
			uint64_t *run_ns);
/* Called on the vCPU's thread each time it takes a run (CPPC feedback). */
typedef void (*vm_join_run_fn)(void *opaque, unsigned int vcpu);
void vm_join_set_run_hook(struct vm_join *j, vm_join_run_fn fn, void *opaque);
/* On the vCPU's thread, at its next run: the host keeps it on cluster (a name of the spec). */
/* The guest's YIELD (target -1) or YIELD_TO target, on the vCPU's thread. */
void vm_join_hint(struct vm_join *j, unsigned int vcpu, int target);
typedef void (*vm_join_cluster_fn)(void *opaque, unsigned int vcpu, const char *cluster);
void vm_join_set_cluster_hook(struct vm_join *j, vm_join_cluster_fn fn, void *opaque);
/* Installs the gate and watches the connection on the VM's event loop. */
int vm_join_attach(struct vm_join *j, struct vm *vm);
/*
 * Releases every gate for good and stops trying to rejoin (the VM is
 * stopping); on the main thread, before the VM is destroyed.
 */
void vm_join_stop(struct vm_join *j);
void vm_join_free(struct vm_join *j);

#endif
