/* SPDX-License-Identifier: MIT */
/*
 * The host kernel's scheduler, set for the calling thread ("kernel", not
 * "host": "host" names the emulated host of dispatch/hostspec.h).
 *
 * `--sched host`: leave vCPU threads to the host kernel's scheduler, with the
 * closest host settings to the requested QoS, for side-by-side comparison:
 * weight -> nice, reservation -> SCHED_DEADLINE, uclamp -> sched_setattr
 * util clamps where the host supports them, cluster -> pinning. The host
 * cannot emulate capacity or frequency, so big and little look the same.
 */
#ifndef CAPVISOR_KERNELSCHED_H
#define CAPVISOR_KERNELSCHED_H

#include <stddef.h>

#include "dispatch/qosspec.h"

/* The nice value whose weight is closest to `weight` (sched_prio_to_weight). */
int kernelsched_weight_to_nice(unsigned int weight);

/*
 * Apply q to the calling thread, pinned to host_cpu (-1: no pinning).
 * Returns 0, or a negative errno with err naming the setting that failed;
 * settings the host cannot honour (uclamp without CONFIG_UCLAMP_TASK) are
 * logged once as warnings, not errors.
 */
int kernelsched_apply_self(const struct vcpu_qos *q, int host_cpu, char *err, size_t errlen);

/*
 * SCHED_BATCH at nice 0 for the calling thread: its wakeups do not
 * preempt the running task, whose turn it then waits for. For a thread
 * woken by a thread that is about to sleep (a proxy woken by its VM's
 * vCPU thread at a run's end), that saves two context switches. 0 or
 * -errno.
 */
int kernelsched_batch_self(void);
/*
 * For capvisor's own scheduler: ask the host to run the calling (vCPU)
 * thread at full performance (util clamp 1024-1024, policy and nice kept).
 * Emulated capacity gives a vCPU a share of a host CPU's *time*; a host
 * governor that sees a half-busy CPU would also lower its frequency, and a
 * little vCPU would do less than its share of work. Returns 0, or -errno
 * when the host has no util clamps (nothing changed then).
 */
int kernelsched_request_full_speed(void);

#endif
