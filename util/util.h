/* SPDX-License-Identifier: MIT */
/*
 * Small helpers every part of capvisor may use (not sched/, which stays
 * self-contained): array length, clamping, and nanoseconds to and from
 * struct timespec. Header only, no state.
 */
#ifndef CAPVISOR_UTIL_H
#define CAPVISOR_UTIL_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC	1000000000ull

/* A macro's value as a string literal, for help texts built from the constants. */
#define STRINGIFY(x)	STRINGIFY_(x)
#define STRINGIFY_(x)	#x

/* Elements of an array; a pointer instead of an array does not compile. */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]) + UTIL_MUST_BE_ARRAY(a))
#define UTIL_MUST_BE_ARRAY(a) \
	(sizeof(struct { int : (-!!__builtin_types_compatible_p(__typeof__(a), \
							      __typeof__(&(a)[0]))); }))

/* v within [lo, hi]; lo <= hi. */
static inline uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* A timespec of a clock (non-negative) in nanoseconds. */
static inline uint64_t ns_from_timespec(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static inline struct timespec timespec_from_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	return ts;
}

#endif
