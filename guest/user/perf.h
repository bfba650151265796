/* SPDX-License-Identifier: MIT */
/* One reading of this vCPU's frequency counters (ring 0 does the reads). */
#ifndef GUEST_USER_PERF_H
#define GUEST_USER_PERF_H

#include "guest/user/user.h"

struct perf_sample {
	int aperf_ok, cppc_ok;
	u64 aperf, mperf;
	u64 reference, delivered;
	u32 desired, min, max, enable, guaranteed;
};

/*
 * APERF/MPERF (one syscall) and, with_cppc, this vCPU's CPPC registers
 * (another). Returns non-zero when at least one source answered.
 */
int perf_sample(struct perf_sample *s, int with_cppc);

#endif
