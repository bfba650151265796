// SPDX-License-Identifier: MIT
/*
 * The simulator's event queue (sim/evq.c): after any sequence of updates
 * its first event is the earliest (next_event, index) over the vCPUs, as a
 * linear scan finds it; vCPUs without an event (SIM_NO_EVENT) never come
 * first. The simulator's event order, and so its results, rest on this.
 */
#include "tests/unit/harness.h"

#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static int scan_first(const struct sim *sim)
{
	int best = -1;

	for (unsigned int i = 0; i < sim->nr_vcpus; i++) {
		uint64_t k = sim->vcpu[i].next_event;

		if (k != SIM_NO_EVENT && (best < 0 || k < sim->vcpu[best].next_event))
			best = (int)i;
	}
	return best;
}

static void check_random_updates(unsigned int n, unsigned int steps, uint64_t key_range)
{
	struct sim sim;
	unsigned int bad = 0;

	memset(&sim, 0, sizeof(sim));
	sim.nr_vcpus = n;
	sim.vcpu = aligned_alloc(64, (n ? n : 1) * sizeof(*sim.vcpu));	/* as sim_setup() */
	CU_ASSERT_FATAL(sim.vcpu != NULL);
	memset(sim.vcpu, 0, (n ? n : 1) * sizeof(*sim.vcpu));
	CU_ASSERT_FATAL(evq_init(&sim, n) == 0);
	CU_ASSERT_EQUAL(evq_first(&sim), -1);
	CU_ASSERT_EQUAL(evq_first_key(&sim), SIM_NO_EVENT);
	for (unsigned int s = 0; n && s < steps; s++) {
		unsigned int i = (unsigned int)rnd(n);
		int want;

		/* Small key ranges make ties, which the index must break. */
		sim.vcpu[i].next_event = rnd(4) ? rnd(key_range) : SIM_NO_EVENT;
		evq_update(&sim, i);
		want = scan_first(&sim);
		if (evq_first(&sim) != want ||
		    evq_first_key(&sim) != (want < 0 ? SIM_NO_EVENT : sim.vcpu[want].next_event))
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* Times beyond 2^48 ns (past any scenario) are capped, still ordered first by index. */
	if (n >= 2) {
		for (unsigned int i = 0; i < n; i++) {
			sim.vcpu[i].next_event = SIM_NO_EVENT;
			evq_update(&sim, i);
		}
		sim.vcpu[1].next_event = 1ull << 50;
		evq_update(&sim, 1);
		sim.vcpu[0].next_event = (1ull << 50) + 5;
		evq_update(&sim, 0);
		CU_ASSERT_EQUAL(evq_first(&sim), 0);
		CU_ASSERT_EQUAL(evq_first_key(&sim), (1ull << 48) - 1);
		sim.vcpu[1].next_event = (1ull << 48) - 2;
		evq_update(&sim, 1);
		CU_ASSERT_EQUAL(evq_first(&sim), 1);
		CU_ASSERT_EQUAL(evq_first_key(&sim), (1ull << 48) - 2);
	}
	/* Everything gone again: empty. */
	for (unsigned int i = 0; i < n; i++) {
		sim.vcpu[i].next_event = SIM_NO_EVENT;
		evq_update(&sim, i);
	}
	CU_ASSERT_EQUAL(evq_first(&sim), -1);
	evq_free(&sim);
	free(sim.vcpu);
}

static void test_evq_order(void)
{
	check_random_updates(0, 0, 1);
	check_random_updates(1, 100, 10);
	check_random_updates(3, 2000, 4);	/* not a power of two, many ties */
	check_random_updates(256, 20000, 1000000);
	check_random_updates(300, 20000, 50);
}

UNIT_SUITE(sched_sim_evq, NULL, NULL,
	   UNIT_TEST(test_evq_order))
