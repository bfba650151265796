// SPDX-License-Identifier: MIT
/*
 * The Generic Event Device: a raised vCPU reads back once in its pending
 * word and each event pulses the interrupt line; hostile accesses are
 * ignored. A random sequence of raises and guest accesses (seed printed,
 * CAPVISOR_TEST_SEED=N repeats it) is checked against a plain set of
 * pending vCPUs.
 */
#include "tests/unit/harness.h"
#include "devices/ged.h"
#include "capvisor/layout.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned int rises, falls, last_irq;
static int level;

static void record_level(void *opaque, unsigned int irq, int l)
{
	(void)opaque;
	last_irq = irq;
	if (l && !level)
		rises++;
	if (!l && level)
		falls++;
	level = l;
}

static const struct irq_line line = { record_level, NULL, GED_GSI };

static uint64_t rd(struct ged_dev *d, uint64_t off, unsigned int len)
{
	uint64_t v = 0xdeadbeefdeadbeefull;

	d->bus.ops->read(&d->bus, off, &v, len);
	if (len < 8)
		v &= (1ull << (8 * len)) - 1;
	return v;
}

static void test_raise_reads_once_and_pulses(void)
{
	struct ged_stats st;
	struct ged_dev d;

	CU_ASSERT_EQUAL_FATAL(ged_init(&d, 0xd0900000ULL, 40, &line), 0);
	CU_ASSERT_EQUAL(d.bus.base, 0xd0900000ULL); /* the caller places it */
	CU_ASSERT_EQUAL(d.bus.len, LAYOUT_GED_SIZE);
	rises = falls = 0;
	ged_raise(&d, 1);
	ged_raise(&d, 33);
	ged_raise(&d, 1);
	CU_ASSERT_EQUAL(rises, 3);	/* an edge per event */
	CU_ASSERT_EQUAL(falls, 3);
	CU_ASSERT_EQUAL(level, 0);
	CU_ASSERT_EQUAL(last_irq, GED_GSI);
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING, 4), 1u << 1);
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING, 4), 0);		/* read-to-clear */
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING + 4, 4), 1u << 1);	/* vCPU 33 */
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING + 4, 4), 0);
	/* A vCPU the VM does not have is no event. */
	ged_raise(&d, 40);
	ged_raise(&d, LAYOUT_MAX_VCPUS + 5);
	CU_ASSERT_EQUAL(rises, 3);
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING + 4, 4), 0);
	ged_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.events, 3);
	CU_ASSERT_EQUAL(st.reads, 5);
	ged_destroy(&d);
	CU_ASSERT_EQUAL(ged_init(&d, LAYOUT_GED_BASE, 0, &line), -EINVAL);
	CU_ASSERT_EQUAL(ged_init(&d, LAYOUT_GED_BASE, LAYOUT_MAX_VCPUS + 1, &line), -EINVAL);
}

static void test_hostile_accesses_change_nothing(void)
{
	uint32_t v = 0xffffffff;
	struct ged_stats st;
	struct ged_dev d;

	ged_init(&d, LAYOUT_GED_BASE, 8, &line);
	ged_raise(&d, 3);
	d.bus.ops->write(&d.bus, GED_REG_PENDING, &v, 4);	/* cannot clear or set */
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING, 2), 0);		/* width: no clear */
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING, 8), 0);
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING + 1, 4), 0);	/* alignment */
	CU_ASSERT_EQUAL(rd(&d, GED_PENDING_WORDS * 4, 4), 0);	/* past the words */
	CU_ASSERT_EQUAL(rd(&d, LAYOUT_GED_SIZE - 4, 4), 0);
	CU_ASSERT_EQUAL(rd(&d, GED_REG_PENDING, 4), 1u << 3);
	ged_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.ignored, 6);
	ged_destroy(&d);
}

static uint64_t xs;

static uint64_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

/* The oracle: a vCPU is pending from its raise until its word is read. */
static void test_random_against_a_pending_set(void)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	const char *env = getenv("CAPVISOR_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	unsigned int nr = 1 + (unsigned int)(seed % LAYOUT_MAX_VCPUS), raised = 0;
	static bool pending[LAYOUT_MAX_VCPUS];
	struct ged_dev d;

	fprintf(stderr, "  ged: %u vCPUs, seed %" PRIu64 "\n", nr, seed);
	xs = seed | 1;
	memset(pending, 0, sizeof(pending));
	ged_init(&d, LAYOUT_GED_BASE, nr, &line);
	rises = 0;
	for (unsigned int i = 0; i < 100000; i++) {
		unsigned int vcpu = (unsigned int)(rnd() % (nr + 4)), len = widths[rnd() % 4];
		uint64_t off = rnd() % 2 ? (rnd() % GED_PENDING_WORDS) * 4 : rnd() % LAYOUT_GED_SIZE;
		uint32_t got, want = 0;

		if (rnd() % 2) {
			ged_raise(&d, vcpu);
			if (vcpu < nr) {
				pending[vcpu] = true;
				raised++;
			}
			continue;
		}
		got = (uint32_t)rd(&d, off, len);
		if (len == 4 && off % 4 == 0 && off < GED_PENDING_WORDS * 4) {
			for (unsigned int j = 0; j < 32; j++) {
				unsigned int v = (unsigned int)off / 4 * 32 + j;

				if (v < nr && pending[v])
					want |= 1u << j;
				if (v < nr)
					pending[v] = false;
			}
		}
		if (got != want) {
			fprintf(stderr, "seed %" PRIu64 " step %u: offset 0x%" PRIx64 " len %u read "
				"0x%x, expected 0x%x\n", seed, i, off, len, got, want);
			CU_FAIL_FATAL("pending word differs from the oracle");
		}
	}
	CU_ASSERT_EQUAL(rises, raised);
	ged_destroy(&d);
}

UNIT_SUITE(dev_ged, NULL, NULL,
	   UNIT_TEST(test_raise_reads_once_and_pulses),
	   UNIT_TEST(test_hostile_accesses_change_nothing),
	   UNIT_TEST(test_random_against_a_pending_set))
