/* SPDX-License-Identifier: MIT */
/*
 * The control socket's backend for a real VM: QoS changes go to the
 * dispatcher (and so to the engine), queries read the engine and the
 * dispatcher's measurements, stop/cont hold or release every vCPU, quit asks
 * the VM to shut down.
 */
#ifndef CAPVISOR_QMP_VM_H
#define CAPVISOR_QMP_VM_H

#include <stdbool.h>

#include "dispatch/dispatch.h"
#include "dispatch/hostspec.h"
#include "vmm/qmp/qmp_backend.h"
#include "dispatch/qosspec.h"

struct qmp_server;

struct qmp_vm {
	struct dispatch *d;		/* NULL with --sched host: QoS is then read-only */
	const struct host_spec *host;
	const unsigned int *host_cpu;	/* pCPU -> host CPU */
	unsigned int nr_vcpus;
	char (*affinity)[HOST_NAME_MAX_LEN + 1];	/* per vCPU, "" = any */
	bool paused, shutdown;
	struct qmp_server *server;	/* for STOP/RESUME/SHUTDOWN events */
	void (*request_quit)(void *opaque);
	void *quit_opaque;
	/* After a successful QoS change (CPPC limits follow the clamps). */
	void (*qos_changed)(void *opaque, unsigned int vcpu);
	/* After set-vcpu-cluster (CPPC capabilities follow the cluster); qos_opaque. */
	void (*cluster_changed)(void *opaque, unsigned int vcpu, const char *cluster);
	void *qos_opaque;
	/* query-domain-xml: the QoS at start, and who writes the XML from the live QoS. */
	const struct vcpu_qos *qos_start;
	const struct vm_qos *vm_qos_start;	/* the VM's group and its groups */
	int (*domain_xml)(void *opaque, const struct vcpu_qos *live, const struct vm_qos *live_vm,
			  char **xml, char *err, size_t errlen);
	void *domain_opaque;
};

extern const struct qmp_backend_ops qmp_vm_ops;

#endif
