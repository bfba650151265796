/* SPDX-License-Identifier: MIT */
/*
 * `capvisor run --api-socket PATH`: serve the control socket for a VM on its
 * event loop, with the real backend (vmm/qmp/qmp_vm.c). One call to attach after
 * the VM is built, one to detach after its event loop has returned.
 */
#ifndef CAPVISOR_QMP_ATTACH_H
#define CAPVISOR_QMP_ATTACH_H

#include <stddef.h>

struct vm;
struct vm_sched;
struct qmp_attachment;
struct vcpu_qos;
struct vm_qos;

/*
 * Listens on PATH for VM, scheduled by vs: its dispatcher (NULL with --sched
 * host: queries then work, QoS changes and stop/cont are refused), its
 * emulated host and placement. `quit` emits SHUTDOWN and ends the VM like a
 * guest poweroff (exit status 0). Returns NULL with the reason in err (e.g.
 * PATH in use by a live instance).
 */
struct qmp_attachment *qmp_attach_vm(struct vm *vm, struct vm_sched *vs, const char *path,
				     char *err, size_t errlen);
/* query-domain-xml: fn writes the VM's domain XML from the live per-vCPU QoS. */
void qmp_attach_set_domain(struct qmp_attachment *a,
			   int (*fn)(void *opaque, const struct vcpu_qos *live,
				     const struct vm_qos *live_vm, char **xml, char *err,
				     size_t errlen),
			   void *opaque);
/* An event from elsewhere in the VM (a struct qmp_attachment *; data a json_object *, consumed). */
void qmp_attach_emit(void *attachment, const char *name, void *data);
/*
 * After the event loop returned: sends SHUTDOWN (if quit did not already),
 * flushes what clients will take without blocking, removes the socket.
 */
void qmp_detach_vm(struct qmp_attachment *a);

#endif
