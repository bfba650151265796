// SPDX-License-Identifier: MIT
/*
 * Serving the control socket for one VM (vmm/qmp_attach.h): builds the
 * real backend from the VM and its vm_sched, listens on the event loop,
 * sends SHUTDOWN and removes the socket at the end.
 */
#include "vmm/qmp_attach.h"
#include "vmm/qmp/qmp.h"
#include "vmm/qmp/qmp_vm.h"
#include "vmm/kvm/vm.h"
#include "vmm/vm_sched.h"

#include <stdio.h>
#include <stdlib.h>

struct qmp_attachment {
	struct vm *vm;
	struct qmp_vm backend;
	struct qmp_server *server;
	bool shutdown_sent;
};

static void send_shutdown(struct qmp_attachment *a, bool guest, const char *reason)
{
	json_object *data = json_object_new_object();

	json_object_object_add(data, "guest", json_object_new_boolean(guest));
	json_object_object_add(data, "reason", json_object_new_string(reason));
	qmp_server_emit_event(a->server, "SHUTDOWN", data);
	a->shutdown_sent = true;
	a->backend.shutdown = true;
}

/* quit: SHUTDOWN first (QEMU's order), then end the VM; the reply follows. */
static void request_quit(void *opaque)
{
	struct qmp_attachment *a = opaque;

	send_shutdown(a, false, "host-qmp-quit");
	vm_request_exit(a->vm, VM_EXIT_POWEROFF, 0, "quit over the control socket");
}

static void qos_changed(void *opaque, unsigned int vcpu)
{
	vm_sched_qos_changed(opaque, vcpu);
}

static void cluster_changed(void *opaque, unsigned int vcpu, const char *cluster)
{
	vm_sched_cluster_changed(opaque, vcpu, cluster);
}

struct qmp_attachment *qmp_attach_vm(struct vm *vm, struct vm_sched *vs, const char *path,
				     char *err, size_t errlen)
{
	struct qmp_attachment *a = calloc(1, sizeof(*a));

	if (!a || !(a->backend.affinity = calloc(vm->nr_vcpus ? vm->nr_vcpus : 1,
						 sizeof(*a->backend.affinity)))) {
		free(a);
		snprintf(err, errlen, "api socket: out of memory");
		return NULL;
	}
	a->vm = vm;
	a->backend.d = vs->d;
	a->backend.host = &vs->cfg.host;
	a->backend.host_cpu = vs->host_cpu;
	a->backend.nr_vcpus = vm->nr_vcpus;
	a->backend.qos_changed = qos_changed;
	a->backend.cluster_changed = cluster_changed;
	a->backend.qos_opaque = vs;
	a->backend.qos_start = vs->qos;
	a->backend.vm_qos_start = &vs->vm_qos;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		snprintf(a->backend.affinity[i], sizeof(a->backend.affinity[i]), "%s",
			 vs->qos[i].cluster);
	a->backend.request_quit = request_quit;
	a->backend.quit_opaque = a;
	a->server = qmp_server_new(vm->loop, path, &qmp_vm_ops, &a->backend, err, errlen);
	if (!a->server) {
		free(a->backend.affinity);
		free(a);
		return NULL;
	}
	a->backend.server = a->server;
	return a;
}

void qmp_attach_set_domain(struct qmp_attachment *a,
			   int (*fn)(void *opaque, const struct vcpu_qos *live,
				     const struct vm_qos *live_vm, char **xml, char *err,
				     size_t errlen),
			   void *opaque)
{
	a->backend.domain_xml = fn;
	a->backend.domain_opaque = opaque;
}

void qmp_attach_emit(void *attachment, const char *name, void *data)
{
	struct qmp_attachment *a = attachment;

	qmp_server_emit_event(a->server, name, data);
}

void qmp_detach_vm(struct qmp_attachment *a)
{
	if (!a)
		return;
	if (!a->shutdown_sent) {
		enum vm_exit_kind kind = vm_exit_kind(a->vm);

		send_shutdown(a, kind == VM_EXIT_POWEROFF || kind == VM_EXIT_REBOOT,
			      kind == VM_EXIT_POWEROFF ? "guest-shutdown" :
			      kind == VM_EXIT_REBOOT ? "guest-reset" :
			      kind == VM_EXIT_SIGNAL ? "host-signal" : "host-error");
	}
	qmp_server_free(a->server);
	free(a->backend.affinity);
	free(a);
}
