/* SPDX-License-Identifier: MIT */
/*
 * Per-vCPU scheduling QoS as given by the user:
 *
 *   --vcpu 0-1,^1:weight=2048,uclamp=0-512,reservation=3ms/10ms/10ms,cluster=big
 *   --vcpu 2:cap=2ms/10ms
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

#endif
