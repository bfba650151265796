// SPDX-License-Identifier: MIT
/*
 * The scheduler hint device: its page address, YIELD and YIELD_TO reaching
 * the scheduler, hostile accesses ignored.
 */
#include "tests/unit/harness.h"
#include "devices/hint.h"
#include "capvisor/layout.h"

static unsigned int yields, last_vcpu, last_target;
static int boost_answer;

static void fake_yield(void *opaque, unsigned int vcpu)
{
	(void)opaque;
	yields++;
	last_vcpu = vcpu;
}

static int fake_yield_to(void *opaque, unsigned int vcpu, unsigned int target)
{
	(void)opaque;
	last_vcpu = vcpu;
	last_target = target;
	return boost_answer;
}

static const struct hint_ops fake_ops = { fake_yield, fake_yield_to };

static uint32_t status(struct hint_dev *dev)
{
	uint32_t v = 0xdead;

	dev->bus.ops->read(&dev->bus, HINT_REG_STATUS, &v, 4);
	return v;
}

static void test_page_sits_at_the_vcpus_address(void)
{
	struct hint_dev dev;

	hint_init(&dev, 3, 4, LAYOUT_HINT_BASE + 3 * LAYOUT_PER_VCPU_STRIDE, &fake_ops, NULL);
	CU_ASSERT_EQUAL(dev.bus.base, LAYOUT_HINT_BASE + 3 * LAYOUT_PER_VCPU_STRIDE);
	CU_ASSERT_EQUAL(dev.bus.len, LAYOUT_PER_VCPU_STRIDE);
}

static void test_yield_and_yield_to_reach_the_scheduler(void)
{
	struct hint_dev dev;
	uint32_t v = 2;

	hint_init(&dev, 1, 4, LAYOUT_HINT_BASE + 1 * LAYOUT_PER_VCPU_STRIDE, &fake_ops, NULL);
	yields = 0;
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD, &v, 4);
	CU_ASSERT_EQUAL(yields, 1);
	CU_ASSERT_EQUAL(last_vcpu, 1);
	boost_answer = 1;
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD_TO, &v, 4);
	CU_ASSERT_EQUAL(last_target, 2);
	CU_ASSERT_EQUAL(status(&dev), 1);
	boost_answer = 0;
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD_TO, &v, 4);
	CU_ASSERT_EQUAL(status(&dev), 0);
	CU_ASSERT_EQUAL(dev.stats.boosted, 1);
}

static void test_hostile_accesses_are_ignored(void)
{
	struct hint_dev dev;
	uint64_t big = 2;
	uint32_t v;
	uint8_t b = 2;

	hint_init(&dev, 1, 4, LAYOUT_HINT_BASE + 1 * LAYOUT_PER_VCPU_STRIDE, &fake_ops, NULL);
	yields = 0;
	last_target = 99;
	boost_answer = 1;
	v = 4;		/* no such vCPU */
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD_TO, &v, 4);
	v = 1;		/* itself */
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD_TO, &v, 4);
	v = 0xffffffff;
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD_TO, &v, 4);
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD_TO, &big, 8);
	dev.bus.ops->write(&dev.bus, HINT_REG_YIELD, &b, 1);
	dev.bus.ops->write(&dev.bus, 0xffc, &v, 4);
	CU_ASSERT_EQUAL(last_target, 99);
	CU_ASSERT_EQUAL(yields, 0);
	CU_ASSERT_EQUAL(dev.stats.bad_target, 3);
	CU_ASSERT_EQUAL(dev.stats.bad_access, 3);
	CU_ASSERT_EQUAL(status(&dev), 0);
	dev.bus.ops->read(&dev.bus, HINT_REG_YIELD, &v, 4);
	CU_ASSERT_EQUAL(v, 0);
}

UNIT_SUITE(dev_hint, NULL, NULL, UNIT_TEST(test_page_sits_at_the_vcpus_address),
	   UNIT_TEST(test_yield_and_yield_to_reach_the_scheduler),
	   UNIT_TEST(test_hostile_accesses_are_ignored))
