// SPDX-License-Identifier: MIT
/*
 * Duty-cycle slots and on-parts: disjoint slots on a shared host CPU,
 * on-times that follow the level and stay within the slot.
 */
#include "tests/lib/xorshift.h"
#include "tests/unit/harness.h"
#include "dispatch/dutycycle.h"

#include <stdio.h>

#define W 4000000ull

static void test_shared_host_cpu_gets_disjoint_slots(void)
{
	/* big on host 0, two littles of 512 sharing host 1. */
	unsigned int cap[] = { 1024, 512, 512 }, host[] = { 0, 1, 1 };
	struct duty_slot s[3];

	duty_plan(cap, host, 3, W, s);
	CU_ASSERT_EQUAL(s[0].offset_ns, 0);
	CU_ASSERT_EQUAL(s[0].len_ns, W);
	CU_ASSERT_EQUAL(s[1].offset_ns, 0);
	CU_ASSERT_EQUAL(s[1].len_ns, W / 2);
	CU_ASSERT_EQUAL(s[2].offset_ns, W / 2);
	CU_ASSERT_EQUAL(s[2].len_ns, W / 2);
	/* Room to make up lost time: none before the next slot, none after the window. */
	CU_ASSERT_EQUAL(s[0].room_ns, W);
	CU_ASSERT_EQUAL(s[1].room_ns, W / 2);
	CU_ASSERT_EQUAL(s[2].room_ns, W / 2);
}

/* A pCPU alone on its host CPU, or the last slot on it, may run on into the free rest. */
static void test_room_after_the_last_slot(void)
{
	unsigned int cap[] = { 512, 256, 256 }, host[] = { 0, 1, 1 };
	struct duty_slot s[3];
	uint64_t until;

	duty_plan(cap, host, 3, W, s);
	CU_ASSERT_EQUAL(s[0].room_ns, W);
	CU_ASSERT_EQUAL(s[1].room_ns, W / 4);
	CU_ASSERT_EQUAL(s[2].offset_ns, W / 4);
	CU_ASSERT_EQUAL(s[2].room_ns, 3 * W / 4);
	/* A corrected on-part of 1.5 slots fits the room after the last slot... */
	CU_ASSERT(duty_may_run(&s[2], W, 3 * W / 8, W + W / 4, &until));
	CU_ASSERT_EQUAL(until, W + W / 4 + 3 * W / 8);
	/* ...but not the first slot's, which would run into the second. */
	CU_ASSERT(duty_may_run(&s[1], W, 3 * W / 8, W, &until));
	CU_ASSERT_EQUAL(until, W + W / 4);
}

/* One row of the timeline in dispatch/dutycycle.h: '#' where the pCPU may run. */
static void render_row(const struct duty_slot *slot, unsigned int level, char *row, size_t cols)
{
	const uint64_t col_ns = W / 16;
	uint64_t until;

	for (size_t c = 0; c < cols; c++)
		row[c] = duty_may_run(slot, W, duty_on_ns(W, level), c * col_ns + col_ns / 2, &until) ?
			 '#' : '.';
	row[cols] = 0;
}

/* The picture in dispatch/dutycycle.h's header is what the code does. */
static void test_timeline_of_the_header(void)
{
	unsigned int cap[] = { 1024, 512, 512 }, host[] = { 0, 1, 1 };
	static const unsigned int level[] = { 768, 384, 512 };
	static const char *const drawn[] = {
		"############....############....",
		"######..........######..........",
		"........########........########",
	};
	struct duty_slot s[3];
	char row[33];

	duty_plan(cap, host, 3, W, s);
	for (unsigned int p = 0; p < 3; p++) {
		render_row(&s[p], level[p], row, 32);
		CU_ASSERT_STRING_EQUAL(row, drawn[p]);
	}
}

static void test_full_capacity_top_level_never_stops(void)
{
	struct duty_slot s = { 0, W, W };
	uint64_t until;

	CU_ASSERT(duty_may_run(&s, W, duty_on_ns(W, 1024), 12345, &until));
	CU_ASSERT_EQUAL(until, DUTY_ALWAYS);
}

static void test_half_level_runs_first_half_of_slot(void)
{
	struct duty_slot s = { W / 2, W / 2, W / 2 };	/* the second little above */
	uint64_t on = duty_on_ns(W, 256), until;	/* a quarter window */

	CU_ASSERT_EQUAL(on, W / 4);
	/* Before the slot: wait for its start. */
	CU_ASSERT_FALSE(duty_may_run(&s, W, on, 3 * W + 100, &until));
	CU_ASSERT_EQUAL(until, 3 * W + W / 2);
	/* Inside the on-part: run until its end. */
	CU_ASSERT(duty_may_run(&s, W, on, 3 * W + W / 2 + 10, &until));
	CU_ASSERT_EQUAL(until, 3 * W + W / 2 + W / 4);
	/* After the on-part: wait for the next window's slot. */
	CU_ASSERT_FALSE(duty_may_run(&s, W, on, 3 * W + W / 2 + W / 4, &until));
	CU_ASSERT_EQUAL(until, 4 * W + W / 2);
}

static void test_on_time_is_capped_by_the_slot(void)
{
	struct duty_slot s = { 0, W / 2, W / 2 };	/* another slot follows */
	uint64_t until;

	/* A correction asking for more than the room must not spill over. */
	CU_ASSERT(duty_may_run(&s, W, W, 0, &until));
	CU_ASSERT_EQUAL(until, W / 2);
	CU_ASSERT_FALSE(duty_may_run(&s, W, 0, 0, &until));
}

static void test_fraction_of_time_on_matches_level(void)
{
	struct duty_slot s = { 0, W, W };
	uint64_t on_time = 0, until;

	for (uint64_t t = 0; t < 10 * W; t += 1000)
		on_time += duty_may_run(&s, W, duty_on_ns(W, 384), t, &until) ? 1000 : 0;
	CU_ASSERT_EQUAL(on_time, 10 * W * 384 / 1024);
}

/*
 * The smallest workable level for a window, checked against the definition
 * (the on-part duty_on_ns() gives) on random windows from a printed seed:
 * that level's on-part is long enough, the level below it is not.
 */
static void test_min_level_is_the_smallest_that_runs(void)
{
	uint64_t rng = 0x6d696e6c76ull, win;

	printf("\n    dutycycle: seed 0x%llx, 500 windows\n", (unsigned long long)rng);
	for (int i = 0; i < 500; i++) {
		unsigned int lvl;

		xorshift64(&rng);
		win = DUTY_MIN_WINDOW_NS + rng % (DUTY_MAX_WINDOW_NS - DUTY_MIN_WINDOW_NS + 1);
		lvl = duty_min_level(win);
		CU_ASSERT(lvl >= 1 && lvl <= 1024);
		CU_ASSERT(duty_on_ns(win, lvl) >= DUTY_MIN_ON_NS);
		CU_ASSERT(lvl == 1 || duty_on_ns(win, lvl - 1) < DUTY_MIN_ON_NS);
		/* And the other way round: the shortest window for that level. */
		CU_ASSERT(duty_on_ns(duty_min_window_ns(lvl), lvl) >= DUTY_MIN_ON_NS);
		CU_ASSERT(duty_on_ns(duty_min_window_ns(lvl) - 1, lvl) < DUTY_MIN_ON_NS);
	}
	/* The documented table (docs/dispatcher.md). */
	CU_ASSERT_EQUAL(duty_min_level(500000), 410);
	CU_ASSERT_EQUAL(duty_min_level(1000000), 205);
	CU_ASSERT_EQUAL(duty_min_level(4000000), 52);
	CU_ASSERT_EQUAL(duty_min_level(16000000), 13);
	CU_ASSERT_EQUAL(duty_min_level(100000000), 3);
}

UNIT_SUITE(dutycycle, NULL, NULL, UNIT_TEST(test_min_level_is_the_smallest_that_runs), UNIT_TEST(test_shared_host_cpu_gets_disjoint_slots),
	   UNIT_TEST(test_room_after_the_last_slot),
	   UNIT_TEST(test_timeline_of_the_header),
	   UNIT_TEST(test_full_capacity_top_level_never_stops),
	   UNIT_TEST(test_half_level_runs_first_half_of_slot),
	   UNIT_TEST(test_on_time_is_capped_by_the_slot),
	   UNIT_TEST(test_fraction_of_time_on_matches_level))
