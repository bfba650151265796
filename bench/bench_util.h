/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the benchmark programs in bench/: a monotonic clock in
 * nanoseconds and a comparator for sorting samples into percentiles.
 */
#ifndef CAPVISOR_BENCH_UTIL_H
#define CAPVISOR_BENCH_UTIL_H

#include "util/util.h"

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ns_from_timespec(&ts);
}

/* qsort() comparator for uint64_t samples, ascending. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
