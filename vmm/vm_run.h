/* SPDX-License-Identifier: MIT */
/*
 * Build one VM from its configuration and run it until the guest powers
 * off or reboots, fails, or a signal ends it (vmm/vm_run.c). The seam
 * between `capvisor run`'s command line (cli/cmd_run.c, which parses the
 * options into struct vm_config) and the VM: vmm/ needs nothing of cli/
 * but a way to write the VM as libvirt domain XML, passed in here.
 */
#ifndef CAPVISOR_VM_RUN_H
#define CAPVISOR_VM_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "vmm/vm_config.h"

/* Exit statuses of `capvisor run` (docs/vmm.md). */
#define RUN_EXIT_GUEST_OK	0
#define RUN_EXIT_GUEST_FAILED	1
#define RUN_EXIT_USAGE		2
#define RUN_EXIT_HOST		3
#define RUN_EXIT_SIGNAL_BASE	128

/* The VM as libvirt domain XML (cli/domain.h): 0, or non-zero with err filled. */
struct vm_run_domain_ops {
	/* --dump-domain: to f, with the QoS the options gave the VM. */
	int (*write)(FILE *f, const struct vm_config *cfg, const struct vcpu_qos *qos,
		     const struct vm_qos *vm_qos, char *err, size_t errlen);
	/* query-domain-xml: a malloc'ed string, with the live QoS. */
	int (*write_string)(char **xml, const struct vm_config *cfg, const struct vcpu_qos *qos,
			    const struct vm_qos *vm_qos, char *err, size_t errlen);
};

/*
 * Runs the VM cfg describes (cfg stays the caller's); dom may be NULL (no
 * --dump-domain, no query-domain-xml). Returns a RUN_EXIT_* status, or
 * RUN_EXIT_SIGNAL_BASE + the signal that ended it.
 */
int vm_run(struct vm_config *cfg, const struct vm_run_domain_ops *dom);

#endif
