// SPDX-License-Identifier: MIT
/*
 * vruntime arithmetic of the fair class (EEVDF rule 2): wall time to
 * virtual time at a weight. Apart from internal.h so that it can be read,
 * and tested, on its own.
 */
#ifndef CAPVISOR_SCHED_VRUNTIME_H
#define CAPVISOR_SCHED_VRUNTIME_H

#include <stdint.h>

#include "sched/sched.h"

/* delta x 1024 / weight (calc_delta_fair(), rule 2). */
static inline uint64_t calc_delta_fair(uint64_t delta, uint32_t weight)
{
	if (weight == SCHED_NICE_0_WEIGHT)
		return delta;
	if (delta < (1ull << 53))	/* the common case needs no 128-bit division */
		return (delta << 10) / weight;
	return (uint64_t)(((unsigned __int128)delta << 10) / weight);
}

/*
 * What charging `delta` ns at `weight` adds to a vruntime, with the
 * remainder *rem the last charge left (1/weight ns), which it updates.
 * Carried, so that the vruntime of a run does not depend on how its time
 * was split into updates (deferred ticks, rounding at any weight).
 */
static inline uint64_t vruntime_delta(uint32_t weight, uint64_t delta, uint32_t *rem)
{
	unsigned __int128 x;

	if (weight == SCHED_NICE_0_WEIGHT) {
		*rem = 0;
		return delta;
	}
	if (delta < (1ull << 53)) {	/* the common case needs no 128-bit division */
		uint64_t y = (delta << 10) + *rem;

		*rem = (uint32_t)(y % weight);
		return y / weight;
	}
	x = ((unsigned __int128)delta << 10) + *rem;
	*rem = (uint32_t)(x % weight);
	return (uint64_t)(x / weight);
}

#endif
