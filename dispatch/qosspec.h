/* SPDX-License-Identifier: MIT */
/*
 * Per-vCPU scheduling QoS as given by the user:
 *
 *   --vcpu 0-1,^1:weight=2048,uclamp=0-512,reservation=3ms/10ms/10ms,cluster=big
 *   --vcpu 2:cap=2ms/10ms
 *
 * and the VM-level QoS: the VM is one group of the engine (cgroup cpu.weight
 * and cpu.max of a VM's cgroup), and the VM may hold groups of its own:
 *
 *   --vm-weight 2048 --vm-cap 150ms/100ms
 *   --group web:weight=2048,cap=50ms/100ms --vcpu 0-1:group=web
 *
 * vCPU sets use libvirt's cpuset syntax ("0-3,^2"). Everything here is only
 * parsed and range-checked; admission against the host is the engine's job.
 */
#ifndef CAPVISOR_QOSSPEC_H
#define CAPVISOR_QOSSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/hostspec.h"
#include "sched/sched.h"

/* The engine's weight range; the reservation limits are Linux's (sched_deadline). */
#define QOS_WEIGHT_MIN	SCHED_WEIGHT_MIN
#define QOS_WEIGHT_MAX	SCHED_WEIGHT_MAX
#define QOS_PERIOD_MAX_NS	(4ull * 1000 * 1000 * 1000)	/* 4 s */
#define QOS_RUNTIME_MIN_NS	1000ull				/* 1 us */
/*
 * A VM's or a group's weight by default: what cgroup v2 gives a cgroup
 * (cpu.weight 100, which the kernel turns into the weight 1024 of a nice-0
 * task), so a VM weighs as much as one default vCPU does.
 */
#define QOS_GROUP_WEIGHT_DEFAULT	1024
#define QOS_GROUP_NAME_MAX	31	/* letters, digits, '_' and '-'; a letter first */
#define QOS_MAX_GROUPS		16	/* --group options of one VM */
#define QOS_VM_GROUP_NAME	"vm"	/* the VM's own group, parent of the others */

struct vcpu_qos {
	uint32_t weight;		/* default 1024 */
	uint16_t uclamp_min;		/* default 0 */
	uint16_t uclamp_max;		/* default 1024 */
	bool uclamp_set;
	bool has_reservation;
	uint64_t runtime_ns, deadline_ns, period_ns;
	bool has_cap;			/* quota of run time per period (sched_set_cap) */
	uint64_t cap_quota_ns, cap_period_ns;
	char cluster[HOST_NAME_MAX_LEN + 1];	/* "" = any */
	char group[QOS_GROUP_NAME_MAX + 1];	/* "" = directly in the VM's group */
};

/* The keys of --vcpu SET:KEY=VAL, of a definition file's vcpu[] entries and of capvisor:vcpu. */
struct qos_key {
	const char *name;
	bool integer;			/* weight=2048: a number, not a string */
};

/* A group: the VM's own (QOS_VM_GROUP_NAME) or one of --group. */
struct group_qos {
	char name[QOS_GROUP_NAME_MAX + 1];
	uint32_t weight;		/* [QOS_GROUP_WEIGHT_DEFAULT] */
	bool has_cap;			/* cgroup cpu.max: quota may exceed the period */
	uint64_t cap_quota_ns, cap_period_ns;
};

struct vm_qos {
	struct group_qos vm;		/* --vm-weight, --vm-cap */
	unsigned int nr_groups;
	struct group_qos groups[QOS_MAX_GROUPS];	/* --group, children of vm */
};

void vcpu_qos_default(struct vcpu_qos *q);
/*
 * The list syntax of libvirt cpusets ("0-3,^2"), for vCPUs and host CPUs
 * alike: mask[0..nr) is cleared, then each N or N-M sets and each ^N or
 * ^N-M clears, left to right. 0; -ERANGE for a number >= nr; -EINVAL for a
 * malformed term; -EILSEQ when a term is not followed by ',' (*where then
 * points at that character). Callers word their own errors.
 */
int cpu_list_parse(const char *list, unsigned int nr, bool *mask, const char **where);
/*
 * Parse a libvirt-style cpuset ("0-3,^2") of vCPUs below nr_vcpus into
 * mask (one bool per vCPU). A set that selects no vCPU ("^0" alone) is an
 * error. Returns 0 or -EINVAL with err filled.
 */
int vcpu_set_parse(const char *set, unsigned int nr_vcpus, bool *mask, char *err, size_t errlen);
/* Parse "100us", "3ms", "1s" or "500ns" into ns; the unit is required. */
int qos_parse_duration(const char *s, uint64_t *ns);
/*
 * Apply one --vcpu SET:KEY=VAL,... argument to qos[0..nr_vcpus). All or
 * nothing: on error nothing in qos changes and err names the key.
 */
int vcpu_spec_apply(const char *arg, unsigned int nr_vcpus, struct vcpu_qos *qos,
		    char *err, size_t errlen);
/* Apply one KEY=VAL to a single vCPU's QoS (also used by the VM definition file). */
int vcpu_qos_set_key(struct vcpu_qos *q, const char *key, const char *val, char *err,
		     size_t errlen);
/*
 * Checks that need the whole picture: runtime <= deadline <= period, min <=
 * max, a cap within the engine's limits and not beside a reservation.
 */
int vcpu_qos_check(const struct vcpu_qos *q, unsigned int vcpu, char *err, size_t errlen);

/* The i-th key of --vcpu (NULL past the last), and all of them for messages: "weight, ..., group". */
const struct qos_key *vcpu_qos_key(unsigned int i);
const char *vcpu_qos_key_list(void);
/* The same for --group NAME:KEY=VAL. */
const struct qos_key *group_qos_key(unsigned int i);
const char *group_qos_key_list(void);

void vm_qos_default(struct vm_qos *vq);
/* --vm-weight W and --vm-cap QUOTA/PERIOD (syntax and the fixed limits). */
int vm_qos_set_weight(struct vm_qos *vq, const char *arg, char *err, size_t errlen);
int vm_qos_set_cap(struct vm_qos *vq, const char *arg, char *err, size_t errlen);
/* One --group NAME:weight=W[,cap=QUOTA/PERIOD]; all or nothing. */
int group_spec_apply(struct vm_qos *vq, const char *arg, char *err, size_t errlen);
/* The group of that name (QOS_VM_GROUP_NAME: the VM's), or NULL. */
const struct group_qos *vm_qos_find(const struct vm_qos *vq, const char *name);
/*
 * Checks that need the vCPUs and the host: each vCPU's group= exists, each
 * --group has a vCPU, each cap within the limits for its vCPUs on nr_pcpus
 * pCPUs (group_cap_check()).
 */
int vm_qos_check(const struct vm_qos *vq, const struct vcpu_qos *qos, unsigned int nr_vcpus,
		 unsigned int nr_pcpus, char *err, size_t errlen);
/*
 * A cap on a group whose vCPUs can run on at most nr_cpus pCPUs at once
 * (its vCPUs, or the host's pCPUs if fewer), as cgroup cpu.max: the
 * engine's period range, quota at least its minimum and at most nr_cpus
 * periods (more could never bind), both whole microseconds (cpu.max,
 * libvirt and QMP count in them). what names the group in the error.
 */
int group_cap_check(const char *what, uint64_t quota_ns, uint64_t period_ns,
		    unsigned int nr_vcpus, char *err, size_t errlen);

#endif
