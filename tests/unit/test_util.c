// SPDX-License-Identifier: MIT
/*
 * util/util.h: ARRAY_SIZE on arrays of several shapes, clamp_u32 against a
 * median-of-three oracle, and nanoseconds <-> timespec round trips, on
 * random inputs from a printed seed.
 */
#include "tests/unit/harness.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>

#define UTIL_CASES	1000

static uint64_t rng;

static uint64_t next_rand(void)
{
	/* xorshift64*: independent of the code under test. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The middle of (lo, v, hi) once sorted: v clamped into [lo, hi] when lo <= hi. */
static uint32_t median3(uint32_t lo, uint32_t v, uint32_t hi)
{
	uint32_t t[3] = { lo, v, hi };

	qsort(t, 3, sizeof(t[0]), cmp_u32);
	return t[1];
}

static void test_array_size(void)
{
	int ints[7];
	char grid[3][5];
	struct { int a, b; } pairs[11];
	static const char *const names[] = { "a", "b", "c" };

	CU_ASSERT_EQUAL(ARRAY_SIZE(ints), 7);
	CU_ASSERT_EQUAL(ARRAY_SIZE(grid), 3);
	CU_ASSERT_EQUAL(ARRAY_SIZE(grid[0]), 5);
	CU_ASSERT_EQUAL(ARRAY_SIZE(pairs), 11);
	CU_ASSERT_EQUAL(ARRAY_SIZE(names), 3);
	(void)ints;
	(void)grid;
	(void)pairs;
}

static void test_clamp_random(void)
{
	const uint64_t seed = 0x5eedc1a9ull;

	printf("\n    clamp_u32: seed 0x%llx, %d cases\n", (unsigned long long)seed, UTIL_CASES);
	rng = seed;
	for (int i = 0; i < UTIL_CASES; i++) {
		/* Small values half the time, so v often lands on a bound. */
		uint32_t mask = (i & 1) ? 0xffffffffu : 0xfu;
		uint32_t a = (uint32_t)next_rand() & mask, b = (uint32_t)next_rand() & mask;
		uint32_t v = (uint32_t)next_rand() & mask;
		uint32_t lo = a < b ? a : b, hi = a < b ? b : a;

		CU_ASSERT_EQUAL(clamp_u32(v, lo, hi), median3(lo, v, hi));
	}
	CU_ASSERT_EQUAL(clamp_u32(0, 0, 0), 0);
	CU_ASSERT_EQUAL(clamp_u32(UINT32_MAX, 0, UINT32_MAX), UINT32_MAX);
}

static void test_timespec_random(void)
{
	const uint64_t seed = 0x5eed7153ull;

	printf("\n    timespec: seed 0x%llx, %d cases\n", (unsigned long long)seed, UTIL_CASES);
	rng = seed;
	for (int i = 0; i < UTIL_CASES; i++) {
		/* Up to about 290 years: any CLOCK_MONOTONIC or CLOCK_REALTIME value. */
		uint64_t ns = next_rand() >> (i % 3 ? 1 : 34);
		struct timespec ts = timespec_from_ns(ns);

		CU_ASSERT(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000l);
		CU_ASSERT_EQUAL((unsigned __int128)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
				(unsigned __int128)ns);
		CU_ASSERT_EQUAL(ns_from_timespec(&ts), ns);
	}
	struct timespec edge = timespec_from_ns(1999999999ull);

	CU_ASSERT_EQUAL(edge.tv_sec, 1);
	CU_ASSERT_EQUAL(edge.tv_nsec, 999999999l);
}

UNIT_SUITE(util, NULL, NULL, UNIT_TEST(test_array_size), UNIT_TEST(test_clamp_random),
	   UNIT_TEST(test_timespec_random))
