// SPDX-License-Identifier: MIT
/*
 * The simulator's random numbers (sim/rand.c): its own logarithm agrees
 * with the C library's within 1e-13 over the whole input range (ln k is
 * at most 36.8 there: a few units in the last place; times a mean of a
 * second that is under a nanosecond), and exponential variates have the
 * asked-for mean.
 */
#include "tests/unit/harness.h"

#include "sim/sim.h"

#include <math.h>
#include <string.h>

static bool ln_close(uint64_t k)
{
	double want = log((double)k), got = sim_ln_u53(k);

	if (fabs(got - want) <= 1e-13)
		return true;
	fprintf(stderr, "sim_ln_u53(%llu) = %.17g, log() = %.17g\n", (unsigned long long)k, got,
		want);
	return false;
}

static void test_ln_edges(void)
{
	const uint64_t top = 1ull << 53;

	CU_ASSERT_EQUAL(sim_ln_u53(1), 0.0);
	CU_ASSERT(ln_close(2));
	CU_ASSERT(ln_close(3));
	CU_ASSERT(ln_close(top));
	CU_ASSERT(ln_close(top - 1));
	/* Each power of two and its neighbours (table index 0 and 127). */
	for (unsigned int e = 1; e < 53; e++) {
		CU_ASSERT(ln_close(1ull << e));
		CU_ASSERT(ln_close((1ull << e) - 1));
		CU_ASSERT(ln_close((1ull << e) + 1));
	}
}

static void test_ln_random(void)
{
	struct sim sim;
	unsigned int bad = 0;

	memset(&sim, 0, sizeof(sim));
	sim.rng = 42;
	for (int i = 0; i < 200000; i++) {
		uint64_t k = (sim_rand(&sim) >> 11) + 1;

		/* Also small k, where the table's low entries and e matter. */
		bad += !ln_close(k);
		bad += !ln_close((k >> (k % 50)) | 1);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* Mean of a million variates within 0.3% (the standard error is 0.1%). */
static void test_exp_mean(void)
{
	struct sim sim;
	double sum = 0;
	const int n = 1000000;

	memset(&sim, 0, sizeof(sim));
	sim.rng = 7;
	for (int i = 0; i < n; i++)
		sum += (double)sim_exp(&sim, 2000000);
	CU_ASSERT(fabs(sum / n / 2000000.0 - 1.0) < 0.003);
}

UNIT_SUITE(sim_rand, NULL, NULL,
	   UNIT_TEST(test_ln_edges),
	   UNIT_TEST(test_ln_random),
	   UNIT_TEST(test_exp_mean))
