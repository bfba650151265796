// SPDX-License-Identifier: MIT
/*
 * Whose a deadline miss was (dispatch/dl_miss.c): a 3 ms / 10 ms
 * reservation (7 ms of slack) in the period 10..20 ms, missed, with the
 * dispatcher thread kept runnable but off the CPU for more or less than
 * the slack inside that period; only the parts of a stretch inside the
 * period count; a miss nobody measured is the engine's; a run_delay
 * reading becomes the stretch it ends; schedstat's text is parsed strictly.
 */
#include "tests/unit/harness.h"
#include "dispatch/dl_miss.h"

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <string.h>

#define MS		1000000ull
#define SLACK		(7 * MS)

static void begin(struct dl_miss_watch *w)
{
	memset(w, 0, sizeof(*w));
	dl_miss_period(w, 20 * MS, 10 * MS);
}

/*
 * Stretches [from, to] in ms before the miss of the deadline at 20 ms and
 * one after it ({0, 0} ends the list): whose it was, and what
 * was withheld in the period.
 */
static void check_miss(const uint64_t (*before)[2], const uint64_t *after, bool host,
		       uint64_t withheld_ms)
{
	struct dl_miss_watch w;

	begin(&w);
	for (; before[0][1]; before++)
		dl_miss_stretch(&w, before[0][0] * MS, before[0][1] * MS);
	dl_miss_missed(&w, 20 * MS, SLACK);
	dl_miss_stretch(&w, after[0] * MS, after[1] * MS);
	CU_ASSERT_EQUAL(w.host, host);
	CU_ASSERT_EQUAL(w.engine, !host);
	CU_ASSERT_EQUAL(w.withheld_max_ns, withheld_ms * MS);
}

/* The replenishment came 8 ms late: the dispatcher was held from 10 to 18 ms. */
static void test_host_withheld_the_slack(void)
{
	static const uint64_t before[][2] = { { 10, 18 }, { 0, 0 } }, after[] = { 21, 21 };

	check_miss(before, after, true, 8);
}

static void test_less_than_the_slack_is_the_engines(void)
{
	static const uint64_t before[][2] = { { 11, 14 }, { 15, 18 }, { 0, 0 } };
	static const uint64_t after[] = { 20, 20 };

	check_miss(before, after, false, 6);
}

/* A stretch counts only inside the period: not before it, not after its deadline. */
static void test_only_the_period_counts(void)
{
	struct dl_miss_watch w;

	begin(&w);
	dl_miss_stretch(&w, 2 * MS, 14 * MS);	/* 4 ms of it inside */
	dl_miss_missed(&w, 20 * MS, SLACK);
	dl_miss_stretch(&w, 18 * MS, 30 * MS);	/* 2 ms of it inside */
	CU_ASSERT_EQUAL(w.engine, 1);
	CU_ASSERT_EQUAL(w.withheld_max_ns, 6 * MS);
	/* The stretch after the miss still counts up to the deadline. */
	begin(&w);
	dl_miss_stretch(&w, 10 * MS, 14 * MS);
	dl_miss_missed(&w, 20 * MS, SLACK);
	dl_miss_stretch(&w, 17 * MS, 25 * MS);
	CU_ASSERT_EQUAL(w.host, 1);
	CU_ASSERT_EQUAL(w.withheld_max_ns, 7 * MS);
}

static void test_unmeasured_misses_are_the_engines(void)
{
	struct dl_miss_watch w;

	/* No period seen. */
	memset(&w, 0, sizeof(w));
	dl_miss_missed(&w, 20 * MS, SLACK);
	dl_miss_stretch(&w, 10 * MS, 20 * MS);
	CU_ASSERT_EQUAL(w.engine, 1);
	/* A miss of another deadline than the period's. */
	begin(&w);
	dl_miss_stretch(&w, 10 * MS, 20 * MS);
	dl_miss_missed(&w, 30 * MS, SLACK);
	dl_miss_stretch(&w, 30 * MS, 30 * MS);
	CU_ASSERT_EQUAL(w.engine, 1);
	/* Two misses in one pass: the first is judged with what it had. */
	begin(&w);
	dl_miss_stretch(&w, 10 * MS, 18 * MS);
	dl_miss_missed(&w, 20 * MS, SLACK);
	dl_miss_period(&w, 30 * MS, 10 * MS);
	dl_miss_missed(&w, 30 * MS, SLACK);
	dl_miss_stretch(&w, 30 * MS, 30 * MS);
	CU_ASSERT_EQUAL(w.host, 1);
	CU_ASSERT_EQUAL(w.engine, 1);
}

/* A reading's growth is the stretch ending now, at most the time since the last. */
static void test_stretch_of_a_reading(void)
{
	uint64_t last = DL_MISS_DELAY_UNKNOWN, from;

	dl_miss_stretch_of(&last, 0, 100 * MS, 5 * MS, &from);
	CU_ASSERT_EQUAL(from, 5 * MS);		/* the first reading: nothing known */
	dl_miss_stretch_of(&last, 5 * MS, 103 * MS, 20 * MS, &from);
	CU_ASSERT_EQUAL(from, 17 * MS);
	dl_miss_stretch_of(&last, 20 * MS, 130 * MS, 21 * MS, &from);
	CU_ASSERT_EQUAL(from, 20 * MS);		/* more than the time between: capped */
	dl_miss_stretch_of(&last, 21 * MS, DL_MISS_DELAY_UNKNOWN, 22 * MS, &from);
	CU_ASSERT_EQUAL(from, 22 * MS);
	CU_ASSERT_EQUAL(last, DL_MISS_DELAY_UNKNOWN);
}

static void test_schedstat_text(void)
{
	CU_ASSERT_EQUAL(dl_miss_schedstat_delay("123456 7890 12\n"), 7890);
	CU_ASSERT_EQUAL(dl_miss_schedstat_delay("0 0 0\n"), 0);
	CU_ASSERT_EQUAL(dl_miss_schedstat_delay(""), DL_MISS_DELAY_UNKNOWN);
	CU_ASSERT_EQUAL(dl_miss_schedstat_delay("123456"), DL_MISS_DELAY_UNKNOWN);
	CU_ASSERT_EQUAL(dl_miss_schedstat_delay("12x 34 5"), DL_MISS_DELAY_UNKNOWN);
	CU_ASSERT_EQUAL(dl_miss_schedstat_delay("1 99999999999999999999999 5"),
			DL_MISS_DELAY_UNKNOWN);
}

UNIT_SUITE(dl_miss, NULL, NULL, UNIT_TEST(test_host_withheld_the_slack),
	   UNIT_TEST(test_less_than_the_slack_is_the_engines),
	   UNIT_TEST(test_only_the_period_counts),
	   UNIT_TEST(test_unmeasured_misses_are_the_engines), UNIT_TEST(test_stretch_of_a_reading),
	   UNIT_TEST(test_schedstat_text))
