/* SPDX-License-Identifier: MIT */
/*
 * Scheduling for one VM: the emulated host (--host), per-vCPU QoS (--vcpu),
 * the dispatcher that runs the vCPU threads under the engine (or the host
 * scheduler with --sched host), and what the guest sees of it: the CPPC
 * register pages, APERF/MPERF, the scheduler hint pages.
 *
 * Order of use: vm_sched_prepare() (before the VM exists: every QoS error is
 * reported before anything is built), vm_sched_acpi_desc() for the tables,
 * vm_sched_attach() once the VM and its buses exist, vm_sched_start() just
 * before the vCPUs start, vm_sched_stop() and vm_sched_free() at the end.
 */
#ifndef CAPVISOR_VM_SCHED_H
#define CAPVISOR_VM_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "acpi/acpi.h"
#include "devices/cppc.h"
#include "devices/fbavg.h"
#include "devices/fbctr.h"
#include "devices/ged.h"
#include "devices/hint.h"
#include "dispatch/dispatch.h"
#include "dispatch/hostspec.h"
#include "dispatch/qosspec.h"

struct vm;
struct vm_join;

enum vm_sched_mode { VM_SCHED_CAPVISOR, VM_SCHED_HOST };

struct vm_sched_config {
	enum vm_sched_mode mode;
	struct host_spec host;		/* filled with the default when !host_set */
	bool host_set;
	uint64_t tick_ns;		/* [1 ms] */
	uint64_t window_ns;		/* duty-cycle window, 0: DUTY_DEFAULT_WINDOW_NS */
	uint64_t slice_ns;		/* fair-class base slice, 0: DISPATCH_DEFAULT_SLICE_NS */
	bool no_cppc;			/* no _CPC, CPPC pages or APERF/MPERF */
	bool joined;			/* --join: a capvisor host schedules (VM_SCHED_HOST here) */
};

/*
 * What the guest reads as delivered (APERF, CPPC delivered) is the vCPU's run
 * time averaged over this many duty windows of its non-halted time, and over
 * at least VM_COUNTER_SPAN_MIN_NS (four ticks of a 250 Hz guest): long
 * enough that a tick reads its pCPU's level and not the phase of the duty
 * cycle, short enough that a new level shows within a few ticks.
 */
#define VM_COUNTER_SPAN_WINDOWS	4
#define VM_COUNTER_SPAN_MIN_NS	16000000ull

struct vm_sched {
	struct vm *vm;
	struct vm_sched_config cfg;
	unsigned int nr_vcpus, nr_pcpus, nr_host_cpus;
	unsigned int host_cpu[HOST_MAX_PCPUS];
	struct vcpu_qos *qos;
	struct vm_qos vm_qos;			/* the VM's group and its groups at start */
	struct dispatch *d;			/* NULL with --sched host */
	struct vm_join *join;			/* --join: the host's engine (vm_sched_join()) */
	struct acpi_vcpu_desc *acpi_vcpus;
	int *caps_cluster;			/* cluster whose levels the guest sees */
	struct cppc_dev *cppc;			/* per vCPU, NULL when disabled */
	struct ged_dev *ged;			/* with cppc: tells the guest of new caps */
	struct hint_dev *hint;			/* per vCPU, NULL with --sched host */
	uint64_t *acct_active, *acct_run;	/* CPPC counters fed up to here */
	struct fbctr_pair *msr_ctr;		/* APERF/MPERF as last served to the guest */
	/* run time averaged for APERF and for CPPC delivered (devices/fbavg.h) */
	struct fbavg *msr_avg, *cppc_avg;
	bool *host_applied;
	uint64_t start_ns;
};

int vm_sched_prepare(struct vm_sched *vs, const struct vm_sched_config *cfg,
		     const struct vcpu_qos *qos, const struct vm_qos *vm_qos, unsigned int nr_vcpus,
		     char *err, size_t errlen);
/*
 * --join, once admitted: the guest is told the levels of the host's
 * clusters, its CPPC requests go to the host's engine and its APERF/MPERF
 * and CPPC feedback come from the host's accounts (docs/host.md, "CPPC").
 */
int vm_sched_join(struct vm_sched *vs, struct vm_join *j, char *err, size_t errlen);
/* The ACPI description: processors, and _OSC/_CPC/hint pages as configured. */
void vm_sched_acpi_desc(const struct vm_sched *vs, struct acpi_vm_desc *desc);
int vm_sched_attach(struct vm_sched *vs, struct vm *vm, char *err, size_t errlen);
int vm_sched_start(struct vm_sched *vs);
void vm_sched_stop(struct vm_sched *vs);
void vm_sched_free(struct vm_sched *vs);

/*
 * After a live change of vCPU vcpu's cluster affinity (NULL or "": any, told
 * the biggest cluster's levels): its CPPC capabilities become the cluster's
 * and, when its highest_perf changed, the guest gets Notify 0x85 on the
 * vCPU's processor through the Generic Event Device.
 */
void vm_sched_cluster_changed(struct vm_sched *vs, unsigned int vcpu, const char *cluster);
/* After a live QoS change: re-derive the CPPC host limits and guaranteed_perf. */
void vm_sched_qos_changed(struct vm_sched *vs, unsigned int vcpu);

/* APERF/MPERF as the guest would read them now (reference ticks at TSC rate). */
void vm_sched_aperfmperf(struct vm_sched *vs, unsigned int vcpu, uint64_t *aperf,
			 uint64_t *mperf);

/* The dispatcher's tick hook (opaque: the vm_sched): CPPC feedback counters. */
void vm_sched_feed_cppc(void *opaque);
/* The same for one vCPU, on its own thread: a joined VM's, at each run. */
void vm_sched_feed_vcpu(void *opaque, unsigned int vcpu);
/* Register the MSRs the dispatcher serves: APERF, MPERF, AMD P-state control (vm_sched_guest.c). */
int vm_sched_register_msrs(struct vm_sched *vs, char *err, size_t errlen);
/* Per-vCPU summary at exit (text), and the same as JSON to an open file (0 or -EIO). */
void vm_sched_print_summary(struct vm_sched *vs, FILE *f);
int vm_sched_write_stats_json(struct vm_sched *vs, int fd);

#endif
