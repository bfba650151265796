/* SPDX-License-Identifier: MIT */
/*
 * What the control socket needs from a VM: one ops table, implemented by the
 * real VM (struct vm + the scheduling engine) and by the in-memory fake of
 * tests/progs/qmp_mock_vm.c. The protocol layer (vmm/qmp/qmp.c) and the command
 * table (vmm/qmp/qmp_commands.c) only ever see this table, so neither knows about
 * KVM, threads or the engine.
 *
 * Rules every backend follows:
 *  - ops run on the event-loop (main) thread; the backend does its own
 *    locking against vCPU threads;
 *  - arguments have already been checked against the command schema (types,
 *    ranges, vcpu < nr_vcpus(), cluster names exist, min <= max,
 *    runtime <= deadline <= period), but a backend must still refuse what it
 *    cannot do (admission, a VM that has shut down);
 *  - a failing op returns non-zero, fills *err (qmp_error_set()) and leaves
 *    every piece of state as it was: no partial updates;
 *  - changes take effect within one scheduler tick.
 */
#ifndef CAPVISOR_QMP_BACKEND_H
#define CAPVISOR_QMP_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/qosspec.h"
#include "sched/sched.h"

/* Limits the schema enforces before a backend sees a value: those of --vcpu and --host. */
#define QMP_WEIGHT_MIN		QOS_WEIGHT_MIN
#define QMP_WEIGHT_MAX		QOS_WEIGHT_MAX	/* nice -20 is 88761 */
#define QMP_UCLAMP_MAX		SCHED_CAPACITY_SCALE
#define QMP_RES_RUNTIME_MIN_US	(QOS_RUNTIME_MIN_NS / 1000)
#define QMP_RES_PERIOD_MAX_US	(QOS_PERIOD_MAX_NS / 1000)
/* Caps: the engine's limits (SCHED_CAP_*), in us. */
#define QMP_CAP_PERIOD_MIN_US	(SCHED_CAP_PERIOD_MIN_NS / 1000)
#define QMP_CAP_PERIOD_MAX_US	(SCHED_CAP_PERIOD_MAX_NS / 1000)
#define QMP_CAP_QUOTA_MIN_US	(SCHED_CAP_QUOTA_MIN_NS / 1000)
#define QMP_MAX_VCPUS		1024	/* what a client accepts in a reply; VMs have fewer */
#define QMP_MAX_CLUSTERS	HOST_MAX_CLUSTERS
#define QMP_MAX_PCPUS		HOST_MAX_PCPUS
#define QMP_VCPU_MISS_COUNTS	3	/* DISPATCH_MISS_COUNTS (checked where both are seen) */
#define QMP_NAME_LEN		(HOST_NAME_MAX_LEN + 1)
#define QMP_MAX_GROUPS		64	/* a VM's groups, its own included */

/* The QMP error classes we send (QEMU's names, see docs/qmp.md). */
enum qmp_error_class {
	QMP_ERR_GENERIC,		/* "GenericError" */
	QMP_ERR_COMMAND_NOT_FOUND,	/* "CommandNotFound" */
};

struct qmp_error {
	enum qmp_error_class cls;
	char desc[512];
};

/* Fills err and returns -1, so a backend can `return qmp_error_set(...)`. */
int qmp_error_set(struct qmp_error *err, enum qmp_error_class cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *qmp_error_class_name(enum qmp_error_class cls);

/* set_reservation returns this (with err filled) when admission control says no. */
#define QMP_ADMISSION_REJECTED	(-2)

struct qmp_status {
	bool running;
	char status[QMP_NAME_LEN];	/* "running", "paused", "shutdown" */
};

struct qmp_cluster_info {
	char name[QMP_NAME_LEN];
	uint32_t capacity;		/* of its pCPUs at the top level, 1..1024 */
	uint32_t nr_pcpus;
	uint32_t nr_levels;		/* performance levels the cluster offers */
	uint32_t perf_min, perf_max;	/* lowest and highest level */
};

struct qmp_pcpu_info {
	uint32_t cluster;		/* index into clusters[] */
	uint32_t capacity;		/* 1..1024 */
	uint32_t perf_level;		/* current performance level */
	uint32_t util;			/* PELT utilization, 0..1024 */
	int32_t host_cpu;		/* real CPU backing it, -1 if unknown */
};

struct qmp_host_info {
	uint32_t nr_clusters, nr_pcpus;
	struct qmp_cluster_info clusters[QMP_MAX_CLUSTERS];
	struct qmp_pcpu_info pcpus[QMP_MAX_PCPUS];
};

struct qmp_reservation {
	uint64_t runtime_us, deadline_us, period_us;
};

struct qmp_cap {
	uint64_t quota_us, period_us;
};

struct qmp_vcpu_info {
	int32_t thread_id;		/* host TID of the vCPU thread, 0 if none */
	char state[QMP_NAME_LEN];	/* "running", "runnable", "idle", "throttled", "stopped" */
	int32_t pcpu;			/* current pCPU, -1 when not placed */
	int32_t cluster;		/* cluster of that pCPU, -1 */
	char cluster_affinity[QMP_NAME_LEN];	/* "" = any cluster */
	uint32_t weight;
	uint32_t uclamp_min, uclamp_max;
	bool has_reservation;
	struct qmp_reservation reservation;
	bool has_cap;
	struct qmp_cap cap;
	uint32_t util_avg, runnable_avg;	/* PELT, 0..1024 */
	uint32_t perf_request;		/* level the guest asked for (CPPC desired) */
	uint32_t perf_delivered;	/* level it ran at, after clamps */
	uint64_t cpu_time_ns, wait_time_ns;
	uint64_t active_ns;		/* current on a pCPU and not halted: what the engine gave */
	uint64_t deadline_misses;
	/*
	 * The misses judged (the host kernel withheld the slack, or not), by
	 * the names and in the order the dispatcher gives them
	 * (dispatch_miss_counts()): this layer does not list them again.
	 */
	struct qmp_count {
		const char *name;
		uint64_t value;
	} miss_counts[QMP_VCPU_MISS_COUNTS];
	uint64_t throttled_ns, throttles;	/* out of runtime (reservation) or quota (cap) */
	uint64_t switches;		/* times the engine switched it in: its runs */
};

/* A group of the VM (docs/qmp.md, query-groups): the VM's own is index 0. */
struct qmp_group_info {
	char name[QMP_NAME_LEN];
	int32_t parent;			/* index of its parent group, -1 for the VM's own */
	uint32_t weight;
	bool has_cap;
	struct qmp_cap cap;		/* quota_us may exceed period_us (cgroup cpu.max) */
	uint64_t cpu_time_ns;		/* its vCPUs' cpu_time_ns (query-vcpus), summed */
	uint64_t throttled_ns, throttles;	/* out of its own quota */
	uint32_t nr_vcpus;		/* its vCPUs, ascending, directly or in its groups */
	uint32_t vcpus[QMP_MAX_VCPUS];
};

struct qmp_backend_ops {
	/* Number of vCPUs; vCPU indexes are 0..nr_vcpus()-1 and never change. */
	unsigned int (*nr_vcpus)(void *opaque);
	int (*query_status)(void *opaque, struct qmp_status *st, struct qmp_error *err);
	int (*query_host)(void *opaque, struct qmp_host_info *host, struct qmp_error *err);
	/* Fills out[0..n-1], n == nr_vcpus(). */
	int (*query_vcpus)(void *opaque, struct qmp_vcpu_info *out, unsigned int n,
			   struct qmp_error *err);
	int (*set_weight)(void *opaque, unsigned int vcpu, uint32_t weight, struct qmp_error *err);
	int (*set_uclamp)(void *opaque, unsigned int vcpu, uint32_t min, uint32_t max,
			  struct qmp_error *err);
	/* QMP_ADMISSION_REJECTED when admission control refuses it. */
	int (*set_reservation)(void *opaque, unsigned int vcpu, const struct qmp_reservation *res,
			       struct qmp_error *err);
	int (*clear_reservation)(void *opaque, unsigned int vcpu, struct qmp_error *err);
	/* cap NULL removes the cap. */
	int (*set_cap)(void *opaque, unsigned int vcpu, const struct qmp_cap *cap,
		       struct qmp_error *err);
	/*
	 * Groups: how many (0: none, e.g. --sched host), and out[0..n-1] with
	 * n == nr_groups(). May be NULL when the backend has no groups.
	 */
	unsigned int (*nr_groups)(void *opaque);
	int (*query_groups)(void *opaque, struct qmp_group_info *out, unsigned int n,
			    struct qmp_error *err);
	int (*set_group_weight)(void *opaque, unsigned int group, uint32_t weight,
				struct qmp_error *err);
	/* cap NULL removes the cap; the command has checked it against the group's vCPUs. */
	int (*set_group_cap)(void *opaque, unsigned int group, const struct qmp_cap *cap,
			     struct qmp_error *err);
	/* The vCPU's cluster affinity: an existing cluster name, or NULL for "any cluster". */
	int (*set_cluster_affinity)(void *opaque, unsigned int vcpu, const char *cluster,
				    struct qmp_error *err);
	/*
	 * The VM as libvirt domain XML with its live QoS (docs/libvirt.md);
	 * *xml is malloc'ed, the caller frees it. NULL: the backend has none.
	 */
	int (*query_domain_xml)(void *opaque, char **xml, struct qmp_error *err);
	/* stop/cont emit STOP/RESUME, quit emits SHUTDOWN, via qmp_server_emit_event(). */
	int (*stop)(void *opaque, struct qmp_error *err);
	int (*cont)(void *opaque, struct qmp_error *err);
	int (*quit)(void *opaque, struct qmp_error *err);
};

#endif
