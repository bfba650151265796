/* SPDX-License-Identifier: MIT */
/*
 * The one pseudo-random generator of the tests and benchmarks: Marsaglia's
 * xorshift64 (13, 7, 17). Deterministic from a printed seed, so that a
 * failing random test can be replayed; not for anything that needs real
 * randomness. The caller owns the state (never 0: the generator would stay
 * at 0).
 */
#ifndef CAPVISOR_TESTS_XORSHIFT_H
#define CAPVISOR_TESTS_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Uniform in [lo, hi), from the top 53 bits (a double's mantissa). */
static inline double xorshift_uniform(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * (double)(xorshift64(state) >> 11) / (double)(1ull << 53);
}

#endif
