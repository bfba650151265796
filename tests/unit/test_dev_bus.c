// SPDX-License-Identifier: MIT
/*
 * The PIO/MMIO bus: overlapping and empty ranges refused, accesses reach
 * the device that claims them, unclaimed reads return ones and are counted.
 */
#include "devices/bus.h"
#include "tests/unit/harness.h"
#include "util/log.h"

#include <errno.h>
#include <string.h>

struct rec {
	uint64_t last_off;
	unsigned int last_len, reads, writes;
	uint8_t last_byte;
};

static void rec_read(struct bus_device *dev, uint64_t off, void *data, unsigned int len)
{
	struct rec *r = dev->priv;

	r->reads++;
	r->last_off = off;
	r->last_len = len;
	memset(data, 0x5a, len);
}

static void rec_write(struct bus_device *dev, uint64_t off, const void *data, unsigned int len)
{
	struct rec *r = dev->priv;

	r->writes++;
	r->last_off = off;
	r->last_len = len;
	r->last_byte = *(const uint8_t *)data;
}

static const struct bus_device_ops rec_ops = { "rec", rec_read, rec_write };

static void test_bus_rejects_overlap_and_empty(void)
{
	struct bus *bus = bus_new("pio");
	struct rec r = { 0 };
	struct bus_device a = { &rec_ops, 0x100, 8, &r }, b = { &rec_ops, 0x107, 2, &r };
	struct bus_device c = { &rec_ops, 0xf8, 8, &r }, d = { &rec_ops, 0x108, 8, &r };
	struct bus_device e = { &rec_ops, 0x200, 0, &r }, f = { &rec_ops, UINT64_MAX, 2, &r };

	CU_ASSERT_EQUAL(bus_register(bus, &a), 0);
	CU_ASSERT_EQUAL(bus_register(bus, &b), -EEXIST);	/* overlaps a's tail */
	CU_ASSERT_EQUAL(bus_register(bus, &c), 0);		/* ends right before a */
	CU_ASSERT_EQUAL(bus_register(bus, &d), 0);		/* starts right after a */
	CU_ASSERT_EQUAL(bus_register(bus, &e), -EINVAL);
	CU_ASSERT_EQUAL(bus_register(bus, &f), -EINVAL);	/* wraps around */
	CU_ASSERT_EQUAL(bus_register(bus, &a), -EEXIST);
	bus_free(bus);
}

static void test_bus_dispatches_to_the_right_device(void)
{
	struct bus *bus = bus_new("mmio");
	struct rec ra = { 0 }, rb = { 0 };
	struct bus_device devs[40];
	struct rec many[40];
	struct bus_device a = { &rec_ops, 0x1000, 0x10, &ra }, b = { &rec_ops, 0x3000, 0x1000, &rb };
	uint32_t v = 0;
	uint8_t byte = 0x42;

	/* Registered out of order, with many others, to exercise the sorted search. */
	CU_ASSERT_EQUAL(bus_register(bus, &b), 0);
	for (int i = 0; i < 40; i++) {
		devs[i] = (struct bus_device){ &rec_ops, 0x10000 + 0x100 * (uint64_t)(39 - i), 0x10,
					       &many[i] };
		CU_ASSERT_EQUAL(bus_register(bus, &devs[i]), 0);
	}
	CU_ASSERT_EQUAL(bus_register(bus, &a), 0);
	CU_ASSERT(bus_read(bus, 0x100c, &v, 4));
	CU_ASSERT_EQUAL(ra.reads, 1);
	CU_ASSERT_EQUAL(ra.last_off, 0xc);
	CU_ASSERT_EQUAL(v, 0x5a5a5a5a);
	CU_ASSERT(bus_write(bus, 0x3ffe, &byte, 1));
	CU_ASSERT_EQUAL(rb.writes, 1);
	CU_ASSERT_EQUAL(rb.last_off, 0xffe);
	CU_ASSERT_EQUAL(rb.last_byte, 0x42);
	memset(many, 0, sizeof(many));
	CU_ASSERT(bus_write(bus, 0x10000 + 0x100 * 7 + 3, &byte, 1));
	CU_ASSERT_EQUAL(many[32].writes, 1);	/* i = 39 - 7 */
	CU_ASSERT_EQUAL(many[32].last_off, 3);
	/* An access straddling a device's end is not claimed. */
	CU_ASSERT_FALSE(bus_read(bus, 0x100e, &v, 4));
	CU_ASSERT_EQUAL(ra.reads, 1);
	bus_free(bus);
}

static void test_bus_unclaimed_reads_ones_and_counts(void)
{
	struct bus *bus = bus_new("pio");
	uint32_t v = 0;

	CU_ASSERT_FALSE(bus_read(bus, 0x80, &v, 4));
	CU_ASSERT_EQUAL(v, 0xffffffff);
	CU_ASSERT_FALSE(bus_write(bus, 0x80, &v, 1));
	CU_ASSERT_FALSE(bus_write(bus, 0x81, &v, 1));
	CU_ASSERT_EQUAL(bus_unclaimed_count(bus), 3);
	/* Many distinct addresses: still counted, never fatal (and not logged here). */
	log_set_level(LOG_ERROR);
	for (uint64_t a = 0x1000; a < 0x1000 + 200; a++)
		bus_write(bus, a, &v, 1);
	log_set_level(LOG_WARN);
	CU_ASSERT_EQUAL(bus_unclaimed_count(bus), 203);
	bus_free(bus);
}

UNIT_SUITE(dev_bus, NULL, NULL,
	   UNIT_TEST(test_bus_rejects_overlap_and_empty),
	   UNIT_TEST(test_bus_dispatches_to_the_right_device),
	   UNIT_TEST(test_bus_unclaimed_reads_ones_and_counts))
