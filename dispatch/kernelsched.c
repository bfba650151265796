// SPDX-License-Identifier: MIT
/*
 * `--sched host` (dispatch/kernelsched.h): maps a vCPU's QoS onto the host
 * kernel's settings for its own thread: nice, SCHED_DEADLINE, util clamps,
 * affinity.
 */
#include "dispatch/kernelsched.h"

#include <errno.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched/sched.h"
#include "util/log.h"

/* struct sched_attr of sched_setattr(2); not in glibc's headers. */
struct kernel_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
	uint32_t sched_util_min;
	uint32_t sched_util_max;
};

#ifndef SCHED_FLAG_UTIL_CLAMP_MIN
#define SCHED_FLAG_UTIL_CLAMP_MIN	0x20
#define SCHED_FLAG_UTIL_CLAMP_MAX	0x40
#endif
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK	0x01
#endif
#ifndef SCHED_FLAG_KEEP_ALL
#define SCHED_FLAG_KEEP_ALL		0x18
#endif

int kernelsched_weight_to_nice(unsigned int weight)
{
	int best = 0;
	unsigned long best_diff = ~0ul;

	for (int nice = -20; nice <= 19; nice++) {
		unsigned long w = sched_nice_to_weight(nice);
		unsigned long diff = w > weight ? w - weight : weight - w;

		if (diff < best_diff) {
			best_diff = diff;
			best = nice;
		}
	}
	return best;
}

static int set_attr(struct kernel_sched_attr *attr)
{
	attr->size = sizeof(*attr);
	return syscall(SYS_sched_setattr, 0, attr, 0) ? -errno : 0;
}

static int apply_deadline(const struct vcpu_qos *q, char *err, size_t errlen)
{
	/*
	 * Reset-on-fork: KVM starts its per-VM worker threads (NX huge page
	 * recovery) as clones of the thread doing the VM's first KVM_RUN, and a
	 * SCHED_DEADLINE thread may not fork otherwise: KVM_RUN then fails with
	 * EAGAIN every time and a 1-vCPU VM never starts.
	 */
	struct kernel_sched_attr attr = {
		.sched_policy = SCHED_DEADLINE,
		.sched_flags = SCHED_FLAG_RESET_ON_FORK,
		.sched_runtime = q->runtime_ns,
		.sched_deadline = q->deadline_ns,
		.sched_period = q->period_ns,
	};
	int rc = set_attr(&attr);

	if (rc)
		snprintf(err, errlen, "host SCHED_DEADLINE %llu/%llu/%llu ns: %s (needs CAP_SYS_NICE "
			 "and host admission)", (unsigned long long)q->runtime_ns,
			 (unsigned long long)q->deadline_ns, (unsigned long long)q->period_ns,
			 strerror(-rc));
	return rc;
}

/* Util clamps on the calling thread, its policy, priority and nice kept. */
static int set_util_clamps(unsigned int min, unsigned int max)
{
	struct kernel_sched_attr attr = {
		.sched_policy = SCHED_OTHER,
		.sched_flags = SCHED_FLAG_KEEP_ALL | SCHED_FLAG_UTIL_CLAMP_MIN |
			       SCHED_FLAG_UTIL_CLAMP_MAX,
		.sched_util_min = min,
		.sched_util_max = max,
	};

	return set_attr(&attr);
}

static void apply_uclamp(const struct vcpu_qos *q)
{
	int rc = set_util_clamps(q->uclamp_min, q->uclamp_max);

	if (rc)
		pr_warn("--sched host: the host kernel does not take util clamps (%s); "
			"uclamp %u-%u is not enforced", strerror(-rc), q->uclamp_min, q->uclamp_max);
}

int kernelsched_batch_self(void)
{
	struct kernel_sched_attr attr = { .sched_policy = SCHED_BATCH };

	return set_attr(&attr);
}

int kernelsched_request_full_speed(void)
{
	return set_util_clamps(SCHED_CAPACITY_SCALE, SCHED_CAPACITY_SCALE);
}

int kernelsched_apply_self(const struct vcpu_qos *q, int host_cpu, char *err, size_t errlen)
{
	if (host_cpu >= 0) {
		cpu_set_t set;
		int rc;

		CPU_ZERO(&set);
		CPU_SET(host_cpu, &set);
		rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (rc) {
			snprintf(err, errlen, "pinning to host CPU %d: %s", host_cpu, strerror(rc));
			return -rc;
		}
	}
	if (q->has_reservation)
		return apply_deadline(q, err, errlen);
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), kernelsched_weight_to_nice(q->weight))) {
		snprintf(err, errlen, "nice %d for weight %u: %s", kernelsched_weight_to_nice(q->weight),
			 q->weight, strerror(errno));
		return -errno;
	}
	if (q->uclamp_set)
		apply_uclamp(q);
	return 0;
}
