// SPDX-License-Identifier: MIT
/*
 * Served feedback counters against Linux 6.1's own rule: a model of
 * scale_freq_tick() (arch/x86/kernel/cpu/aperfmperf.c) reads APERF and MPERF
 * on every tick, with or without a stray MPERF reader between ticks, of random host accounts (steps, stalls, long busy runs) and
 * must never find a reason to call invariance "wobbly" nor read a tick
 * faster than the reference; the served reference stays at or above the
 * host's account and within one tick per read of it.
 */
#include "tests/unit/harness.h"
#include "devices/fbctr.h"

#include <stdio.h>

static uint64_t rng;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Linux: false where scale_freq_tick() would print "went wobbly". */
static int guest_tick_ok(uint64_t acnt, uint64_t mcnt, uint64_t max_ratio)
{
	unsigned __int128 a = (unsigned __int128)acnt << 20, m;

	if (a >> 64)
		return 0;	/* check_shl_overflow */
	m = (unsigned __int128)mcnt * max_ratio;
	if ((m >> 64) || !m)
		return 0;	/* check_mul_overflow, !mcnt */
	return (uint64_t)a / (uint64_t)m != 0;
}

/* A host account that moves in steps: often not at all between two reads. */
static void host_step(uint64_t *act, uint64_t *ref)
{
	uint64_t r = next_rand();
	uint64_t dref = (r & 3) ? 0 : next_rand() % 40000000;	/* up to ~10 ms of TSC */
	uint64_t level = next_rand() % 1025;

	*ref += dref;
	*act += dref * level / 1024;
	/* Run time settled late: a jump of activity alone, within the total. */
	if (!(next_rand() % 16) && *act < *ref)
		*act += next_rand() % (*ref - *act + 1);
}

static void run_seed(uint64_t seed)
{
	struct fbctr_pair p = { 0 };
	uint64_t act = 0, ref = 0, last_a = 0, last_m = 0, reads = 0;
	uint64_t max_ratio;
	int stray;

	rng = seed;
	max_ratio = 1024 + next_rand() % 1600;	/* (H*1024/nominal + 1024) / 2 */
	stray = next_rand() & 1;		/* a reader of MPERF alone between ticks */
	for (int tick = 0; tick < 2000; tick++) {
		uint64_t aperf, mperf;

		host_step(&act, &ref);
		aperf = fbctr_read(&p, FBCTR_ACT, act, ref);	/* rdmsrl(APERF) */
		reads++;
		CU_ASSERT(p.ref >= ref && p.ref - ref <= reads);
		if (next_rand() & 1)
			host_step(&act, &ref);
		mperf = fbctr_read(&p, FBCTR_REF, act, ref);	/* rdmsrl(MPERF) */
		if (stray && !(next_rand() % 4)) {		/* someone else reads MPERF */
			host_step(&act, &ref);
			fbctr_read(&p, FBCTR_REF, act, ref);
			reads++;
		}
		reads++;
		if (tick && !guest_tick_ok(aperf - last_a, mperf - last_m, max_ratio)) {
			fprintf(stderr, "seed %#llx tick %d: dA %llu dM %llu ratio %llu is wobbly\n",
				(unsigned long long)seed, tick, (unsigned long long)(aperf - last_a),
				(unsigned long long)(mperf - last_m), (unsigned long long)max_ratio);
			CU_FAIL("a guest tick found wobbly counters");
			return;
		}
		CU_ASSERT(!tick || (aperf > last_a && mperf > last_m));
		/* Never faster than the reference: APERF/MPERF of one tick <= 1. */
		CU_ASSERT(!tick || aperf - last_a <= mperf - last_m);
		last_a = aperf;
		last_m = mperf;
	}
}

static void test_random_accounts_never_wobbly(void)
{
	uint64_t seed = 0x5eed0fbc7ull;

	fprintf(stderr, "fbctr seed %#llx (500 runs)\n", (unsigned long long)seed);
	for (int i = 0; i < 500; i++)
		run_seed(seed + (uint64_t)i * 0x9e3779b97f4a7c15ull);
}

/* With real progress the served ratio is the host's: no floor, no lead kept. */
static void test_follows_host_account_when_it_moves(void)
{
	struct fbctr_pair p = { 0 };

	CU_ASSERT_EQUAL(fbctr_read(&p, FBCTR_ACT, 500, 1000), 500);
	CU_ASSERT_EQUAL(fbctr_read(&p, FBCTR_REF, 600, 1100), 1000);	/* the same sample */
	CU_ASSERT_EQUAL(fbctr_read(&p, FBCTR_ACT, 500, 1000), 501);	/* no progress */
	CU_ASSERT_EQUAL(fbctr_read(&p, FBCTR_REF, 500, 1000), 1001);
	CU_ASSERT_EQUAL(fbctr_read(&p, FBCTR_REF, 500, 1000), 1002);	/* read again */
	CU_ASSERT_EQUAL(fbctr_read(&p, FBCTR_ACT, 1500, 3000), 1500);	/* lead absorbed */
	CU_ASSERT_EQUAL(fbctr_read(&p, FBCTR_REF, 1500, 3000), 3000);
}

/* A vCPU that barely ran still shows 1/128 of its reference step. */
static void test_floor_on_a_nearly_idle_step(void)
{
	struct fbctr_pair p = { 0 };
	uint64_t a = fbctr_read(&p, FBCTR_ACT, 0, 1280000);

	CU_ASSERT_EQUAL(a, 1280000 / FBCTR_MIN_RATIO);
	CU_ASSERT(guest_tick_ok(a, fbctr_read(&p, FBCTR_REF, 0, 1280000), 2600));
}

UNIT_SUITE(fbctr, NULL, NULL,
	   UNIT_TEST(test_random_accounts_never_wobbly),
	   UNIT_TEST(test_follows_host_account_when_it_moves),
	   UNIT_TEST(test_floor_on_a_nearly_idle_step));
