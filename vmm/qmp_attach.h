/* SPDX-License-Identifier: MIT */
/*
 * `capvisor run --api-socket PATH`: serve the control socket for a VM on its
 * event loop, with the real backend (vmm/qmp_vm.c). One call to attach after
 * the VM is built, one to detach after its event loop has returned.
 */
#ifndef CAPVISOR_QMP_ATTACH_H
#define CAPVISOR_QMP_ATTACH_H

#include <stddef.h>

struct vm;
struct dispatch;
struct host_spec;
struct qmp_attachment;

/*
 * Listens on PATH for VM. d is the VM's dispatcher, or NULL with --sched host
 * (queries then work, QoS changes and stop/cont are refused). host and
 * host_cpu describe the emulated host (host_spec_place()). `quit` emits
 * SHUTDOWN and ends the VM like a guest poweroff (exit status 0).
 * Returns NULL with the reason in err (e.g. PATH in use by a live instance).
 */
struct qmp_attachment *qmp_attach_vm(struct vm *vm, struct dispatch *d,
				     const struct host_spec *host, const unsigned int *host_cpu,
				     const char *path, char *err, size_t errlen);
/*
 * After the event loop returned: sends SHUTDOWN (if quit did not already),
 * flushes what clients will take without blocking, removes the socket.
 */
void qmp_detach_vm(struct qmp_attachment *a);

#endif
