// SPDX-License-Identifier: MIT
/*
 * The CPPC register page, driven through its bus ops exactly as the MMIO bus
 * would: register semantics, clamps, counters, and hostile input.
 */
#include "tests/unit/harness.h"
#include "devices/cppc.h"
#include "capvisor/layout.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

/* A little cluster: levels 256..512 of 1024 -> perf 64..128. */
static const struct acpi_cppc_caps little = {
	.highest_perf = 128, .nominal_perf = 128, .lowest_nonlinear_perf = 64,
	.lowest_perf = 64, .guaranteed_perf = 32, .nominal_freq_mhz = 2400,
	.lowest_freq_mhz = 1200,
};
/* A big one with boost, so nominal != highest is covered too. */
static const struct acpi_cppc_caps big = {
	.highest_perf = 255, .nominal_perf = 204, .lowest_nonlinear_perf = 100,
	.lowest_perf = 51, .guaranteed_perf = 0, .nominal_freq_mhz = 2400,
	.lowest_freq_mhz = 600,
};

static uint64_t rd(struct cppc_dev *d, uint64_t off, unsigned int len)
{
	uint64_t v = 0xdeadbeefdeadbeefull;

	d->bus.ops->read(&d->bus, off, &v, len);
	if (len < 8)
		v &= (1ull << (8 * len)) - 1;
	return v;
}

static void wr(struct cppc_dev *d, uint64_t off, uint64_t v, unsigned int len)
{
	d->bus.ops->write(&d->bus, off, &v, len);
}

static void test_init_and_defaults(void)
{
	struct acpi_cppc_caps bad = little;
	struct cppc_dev d;

	CU_ASSERT_EQUAL_FATAL(cppc_init(&d, 3, acpi_cppc_page_gpa(3), &little), 0);
	CU_ASSERT_EQUAL(d.bus.base, LAYOUT_CPPC_BASE + 3 * LAYOUT_PER_VCPU_STRIDE);
	CU_ASSERT_EQUAL(d.bus.len, LAYOUT_PER_VCPU_STRIDE);
	CU_ASSERT_PTR_EQUAL(d.bus.priv, &d);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MIN_PERF, 4), 64);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MAX_PERF, 4), 128);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_ENABLE, 4), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_PERF_LIMITED, 4), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_AUTO_SEL, 4), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_GUARANTEED_PERF, 4), 32);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_REF_COUNTER, 8), 0);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);
	cppc_destroy(&d);

	bad.lowest_perf = 0;
	CU_ASSERT_EQUAL(cppc_init(&d, 0, acpi_cppc_page_gpa(0), &bad), -EINVAL);
	bad = little;
	bad.nominal_perf = 200;		/* above highest */
	CU_ASSERT_EQUAL(cppc_init(&d, 0, acpi_cppc_page_gpa(0), &bad), -EINVAL);
	bad = little;
	bad.guaranteed_perf = 129;
	CU_ASSERT_EQUAL(cppc_init(&d, 0, acpi_cppc_page_gpa(0), &bad), -EINVAL);
	CU_ASSERT_EQUAL(cppc_init(&d, LAYOUT_MAX_VCPUS, acpi_cppc_page_gpa(LAYOUT_MAX_VCPUS), &little), -EINVAL);
}

static void test_request_follows_guest(void)
{
	struct cppc_dev d;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &little);
	wr(&d, CPPC_REG_DESIRED_PERF, 100, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 100);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);	/* not enabled yet */
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 100);
	CU_ASSERT_EQUAL(cppc_effective_request_capacity(&d), 402);	/* 100*1024/255 */
	/* Guest min/max bound the request. */
	wr(&d, CPPC_REG_MIN_PERF, 110, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 110);
	wr(&d, CPPC_REG_MIN_PERF, 64, 4);
	wr(&d, CPPC_REG_MAX_PERF, 90, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 90);
	/* min above max: max wins. */
	wr(&d, CPPC_REG_MIN_PERF, 120, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 90);
	wr(&d, CPPC_REG_MIN_PERF, 64, 4);
	wr(&d, CPPC_REG_MAX_PERF, 128, 4);
	/* desired 0 is "no request"; so is disabling. */
	wr(&d, CPPC_REG_DESIRED_PERF, 0, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 0);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);
	CU_ASSERT_EQUAL(cppc_effective_request_capacity(&d), 0);
	wr(&d, CPPC_REG_DESIRED_PERF, 128, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 128);
	wr(&d, CPPC_REG_ENABLE, 0, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);
	cppc_destroy(&d);
}

static void test_host_limits_win(void)
{
	struct cppc_snapshot s;
	struct cppc_dev d;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &big);
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	wr(&d, CPPC_REG_DESIRED_PERF, 255, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 255);
	/* uclamp max 256 of 1024 -> perf 63 (rounded down, never up). */
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 0, 256), 0);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 63);
	CU_ASSERT(cppc_effective_request_capacity(&d) <= 256);
	/* uclamp min 768 -> perf 192 (rounded up): a low request is raised. */
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 768, 1024), 0);
	wr(&d, CPPC_REG_DESIRED_PERF, 60, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 192);
	CU_ASSERT(cppc_effective_request_capacity(&d) >= 768);
	/* The guest's own registers still read what it wrote. */
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 60);
	/* A bad range is refused and changes nothing. */
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 600, 500), -EINVAL);
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 0, 1025), -EINVAL);
	cppc_snapshot(&d, &s);
	CU_ASSERT_EQUAL(s.host_min, 192);
	CU_ASSERT_EQUAL(s.host_max, 255);
	CU_ASSERT_EQUAL(s.effective, 192);
	/* Equal min and max that fall between two perf values: max wins. */
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 512, 512), 0);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 127);
	CU_ASSERT_EQUAL(cppc_effective_request_capacity(&d), 512);
	cppc_destroy(&d);
}

static void test_garbage_values_clamped(void)
{
	struct cppc_stats st;
	struct cppc_dev d;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &little);
	wr(&d, CPPC_REG_DESIRED_PERF, 0xffffffffu, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 128);
	wr(&d, CPPC_REG_DESIRED_PERF, 1, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 64);
	wr(&d, CPPC_REG_MIN_PERF, 3, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MIN_PERF, 4), 64);
	wr(&d, CPPC_REG_MAX_PERF, 1000, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MAX_PERF, 4), 128);
	wr(&d, CPPC_REG_ENABLE, 7, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_ENABLE, 4), 0);
	cppc_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.clamped, 4);
	CU_ASSERT_EQUAL(st.ignored, 1);
	CU_ASSERT_EQUAL(st.writes, 5);
	cppc_destroy(&d);
}

static void test_bad_widths_and_offsets(void)
{
	struct cppc_stats st;
	struct cppc_dev d;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &little);
	wr(&d, CPPC_REG_DESIRED_PERF, 100, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 2), 0);		/* width */
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 8), 0);		/* width */
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF + 1, 4), 0);	/* alignment */
	CU_ASSERT_EQUAL(rd(&d, 0x100, 4), 0);				/* offset */
	CU_ASSERT_EQUAL(rd(&d, 0xff8, 8), 0);				/* offset */
	wr(&d, CPPC_REG_DESIRED_PERF, 0x7f, 1);
	wr(&d, CPPC_REG_DESIRED_PERF, 0x7f7f, 2);
	wr(&d, CPPC_REG_DESIRED_PERF, 0x7f, 8);
	wr(&d, CPPC_REG_MIN_PERF + 2, 0x7f, 4);
	wr(&d, 0x800, 0x7f, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 100);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MIN_PERF, 4), 64);
	cppc_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.bad_width, 7);
	CU_ASSERT_EQUAL(st.bad_offset, 3);
	/* Read-only registers keep their values. */
	wr(&d, CPPC_REG_REF_COUNTER, 12345, 8);
	wr(&d, CPPC_REG_DEL_COUNTER + 4, 12345, 4);
	wr(&d, CPPC_REG_GUARANTEED_PERF, 100, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DEL_COUNTER, 8), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_REF_COUNTER, 8), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_GUARANTEED_PERF, 4), 32);
	cppc_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.ro_writes, 3);
	cppc_destroy(&d);
}

/* The capabilities are read-only registers that cppc_set_caps() changes. */
static void test_caps_registers(void)
{
	static const struct { uint64_t off; size_t field; } regs[] = {
		{ CPPC_REG_HIGHEST_PERF, offsetof(struct acpi_cppc_caps, highest_perf) },
		{ CPPC_REG_NOMINAL_PERF, offsetof(struct acpi_cppc_caps, nominal_perf) },
		{ CPPC_REG_LOWEST_NONLINEAR_PERF,
		  offsetof(struct acpi_cppc_caps, lowest_nonlinear_perf) },
		{ CPPC_REG_LOWEST_PERF, offsetof(struct acpi_cppc_caps, lowest_perf) },
	};
	const struct acpi_cppc_caps *each[] = { &little, &big, &little };
	struct cppc_stats st;
	struct cppc_dev d;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &little);
	for (unsigned int k = 0; k < ARRAY_SIZE(each); k++) {
		CU_ASSERT_EQUAL(cppc_set_caps(&d, each[k]), 0);
		for (unsigned int i = 0; i < ARRAY_SIZE(regs); i++) {
			uint32_t want;

			memcpy(&want, (const char *)each[k] + regs[i].field, 4);
			CU_ASSERT_EQUAL(rd(&d, regs[i].off, 4), want);
			wr(&d, regs[i].off, want + 1, 4);	/* read-only */
			CU_ASSERT_EQUAL(rd(&d, regs[i].off, 4), want);
			CU_ASSERT_EQUAL(rd(&d, regs[i].off, 2), 0);	/* width */
		}
		CU_ASSERT_EQUAL(cppc_highest_perf(&d), each[k]->highest_perf);
	}
	cppc_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.ro_writes, 3 * ARRAY_SIZE(regs));
	CU_ASSERT_EQUAL(st.bad_width, 3 * ARRAY_SIZE(regs));
	cppc_destroy(&d);
}

/*
 * Moving to a bigger and back to a smaller cluster: the guest's requests are
 * brought into the new range, a max at the old top follows the new top, the
 * engine is told when the effective request moved, and inconsistent caps are
 * refused with every register as it was.
 */
static unsigned int moved_notified;

static void count_moved(struct cppc_dev *dev, void *opaque)
{
	(void)dev;
	(void)opaque;
	moved_notified++;
}

static void test_caps_change_keeps_requests_in_range(void)
{
	struct acpi_cppc_caps bad = big;
	struct cppc_snapshot before, after;
	struct cppc_dev d;

	cppc_init(&d, 1, acpi_cppc_page_gpa(1), &little);
	cppc_set_notify(&d, count_moved, NULL);
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	wr(&d, CPPC_REG_DESIRED_PERF, 128, 4);
	moved_notified = 0;
	CU_ASSERT_EQUAL(cppc_set_caps(&d, &big), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MAX_PERF, 4), 255);	/* followed the top */
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MIN_PERF, 4), 64);	/* inside [51, 255] */
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 128);
	CU_ASSERT_EQUAL(moved_notified, 0);			/* still asks 128 */
	wr(&d, CPPC_REG_DESIRED_PERF, 250, 4);
	wr(&d, CPPC_REG_MIN_PERF, 200, 4);
	wr(&d, CPPC_REG_MAX_PERF, 240, 4);
	moved_notified = 0;
	CU_ASSERT_EQUAL(cppc_set_caps(&d, &little), 0);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DESIRED_PERF, 4), 128);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MIN_PERF, 4), 128);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_MAX_PERF, 4), 128);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 128);
	CU_ASSERT_EQUAL(moved_notified, 1);

	cppc_snapshot(&d, &before);
	bad.lowest_perf = 0;
	CU_ASSERT_EQUAL(cppc_set_caps(&d, &bad), -EINVAL);
	bad = big;
	bad.nominal_perf = bad.highest_perf + 1;
	CU_ASSERT_EQUAL(cppc_set_caps(&d, &bad), -EINVAL);
	cppc_snapshot(&d, &after);
	CU_ASSERT(before.desired == after.desired && before.min == after.min &&
		  before.max == after.max && before.effective == after.effective);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_HIGHEST_PERF, 4), little.highest_perf);
	cppc_destroy(&d);
}

static void test_counters(void)
{
	struct cppc_dev d;
	uint64_t ref, del, lo;
	unsigned int i;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &big);		/* nominal 204 */
	cppc_account(&d, 1000, 204);
	/* Read as Linux does: delivered, then reference of the same sample. */
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DEL_COUNTER, 8), 1000);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_REF_COUNTER, 8), 1000);
	/* Remainders carry: 1000 rounds of 7 ticks at 102 = exactly half. */
	for (i = 0; i < 1000; i++)
		cppc_account(&d, 7, 102);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DEL_COUNTER, 8), 1000 + 3500);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_REF_COUNTER, 8), 8000);
	/* Boost: delivered above nominal counts faster; above highest is capped. */
	cppc_account(&d, 204, 255);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DEL_COUNTER, 8), 4500 + 255);
	cppc_account(&d, 204, 9999);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_DEL_COUNTER, 8), 4755 + 255);
	/*
	 * Halves of a counter beyond 32 bits: the high half belongs to the
	 * low half's read. Reading the reference again moves it by a tick.
	 */
	cppc_account(&d, 0x100000000ull, 204);
	del = rd(&d, CPPC_REG_DEL_COUNTER, 8);
	ref = rd(&d, CPPC_REG_REF_COUNTER, 8);
	CU_ASSERT_EQUAL(ref >> 32, 1);
	lo = rd(&d, CPPC_REG_REF_COUNTER, 4);
	CU_ASSERT_EQUAL(lo | rd(&d, CPPC_REG_REF_COUNTER + 4, 4) << 32, ref + 1);
	lo = rd(&d, CPPC_REG_DEL_COUNTER, 4);	/* a new sample: one more tick */
	CU_ASSERT_EQUAL(lo | rd(&d, CPPC_REG_DEL_COUNTER + 4, 4) << 32, del + 2);
	del += 2;
	/* No overflow in the multiplication for huge deltas. */
	cppc_account(&d, UINT64_MAX / 2, 255);
	CU_ASSERT(rd(&d, CPPC_REG_DEL_COUNTER, 8) > del);
	cppc_destroy(&d);
}

/*
 * With one reference rate for every cluster (reference_perf 255), a little
 * vCPU at its top (128) counts delivered at half the rate of a big one at
 * its top (255): delivered/reference compares across clusters.
 */
static void test_common_reference(void)
{
	struct acpi_cppc_caps lc = little, bc = big;
	struct cppc_dev l, b;
	uint64_t lr, ld, br, bd;

	lc.reference_perf = bc.reference_perf = 255;
	CU_ASSERT_EQUAL_FATAL(cppc_init(&l, 0, acpi_cppc_page_gpa(0), &lc), 0);
	CU_ASSERT_EQUAL_FATAL(cppc_init(&b, 1, acpi_cppc_page_gpa(1), &bc), 0);
	for (unsigned int i = 0; i < 1000; i++) {
		cppc_account(&l, 1000, 128);
		cppc_account(&b, 1000, 255);
	}
	ld = rd(&l, CPPC_REG_DEL_COUNTER, 8);
	lr = rd(&l, CPPC_REG_REF_COUNTER, 8);
	bd = rd(&b, CPPC_REG_DEL_COUNTER, 8);
	br = rd(&b, CPPC_REG_REF_COUNTER, 8);
	CU_ASSERT_EQUAL(lr, 1000000);
	CU_ASSERT_EQUAL(br, 1000000);
	CU_ASSERT_EQUAL(bd, 1000000);
	CU_ASSERT_EQUAL(ld, 1000000ull * 128 / 255);	/* exact: remainders carried */
	/* A reference beyond the perf scale is refused. */
	cppc_destroy(&l);
	lc.reference_perf = 256;
	CU_ASSERT_EQUAL(cppc_init(&l, 0, acpi_cppc_page_gpa(0), &lc), -EINVAL);
	cppc_destroy(&b);
}

static void test_perf_limited(void)
{
	struct cppc_dev d;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &big);
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	wr(&d, CPPC_REG_MIN_PERF, 150, 4);
	wr(&d, CPPC_REG_DESIRED_PERF, 200, 4);
	cppc_account(&d, 100, 200);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_PERF_LIMITED, 4), 0);
	cppc_set_host_limits(&d, 0, 512);	/* host caps it at 127 */
	cppc_account(&d, 100, 127);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_PERF_LIMITED, 4),
			CPPC_PERF_LIMITED_DESIRED | CPPC_PERF_LIMITED_MINIMUM);
	/* Sticky until the guest writes 1 to clear, bit by bit. */
	cppc_set_host_limits(&d, 0, 1024);
	cppc_account(&d, 100, 200);
	wr(&d, CPPC_REG_PERF_LIMITED, CPPC_PERF_LIMITED_MINIMUM, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_PERF_LIMITED, 4), CPPC_PERF_LIMITED_DESIRED);
	wr(&d, CPPC_REG_PERF_LIMITED, 0xffffffffu, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_PERF_LIMITED, 4), 0);
	cppc_destroy(&d);
}

struct notify_log {
	unsigned int calls;
	uint32_t last;
};

static void on_change(struct cppc_dev *dev, void *opaque)
{
	struct notify_log *log = opaque;

	log->calls++;
	log->last = cppc_effective_request(dev);	/* lock is not held here */
}

static void test_notify(void)
{
	struct notify_log log = { 0 };
	struct cppc_dev d;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &little);
	cppc_set_notify(&d, on_change, &log);
	wr(&d, CPPC_REG_DESIRED_PERF, 100, 4);
	CU_ASSERT_EQUAL(log.calls, 0);			/* not enabled: no change */
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	CU_ASSERT_EQUAL(log.calls, 1);
	CU_ASSERT_EQUAL(log.last, 100);
	wr(&d, CPPC_REG_DESIRED_PERF, 100, 4);
	CU_ASSERT_EQUAL(log.calls, 1);			/* same value */
	cppc_set_host_limits(&d, 0, 256);
	CU_ASSERT_EQUAL(log.calls, 2);
	CU_ASSERT_EQUAL(log.last, 63);
	cppc_set_guaranteed(&d, 1000);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_GUARANTEED_PERF, 4), 128);
	cppc_destroy(&d);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t hostile_value(void)
{
	switch (rnd() % 4) {
	case 0:
		return rnd() % 300;
	case 1:
		return rnd() % 2;
	case 2:
		return UINT64_MAX - rnd() % 3;
	default:
		return rnd();
	}
}

/*
 * Random accesses of every width at register offsets, near them and far
 * away, random values, random host limits and accounting: the effective
 * request never leaves the host's limits and the registers stay sane.
 */
static void test_hostile_random(void)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	unsigned int i, umin = 0, umax = 1024, cap;
	const struct acpi_cppc_caps *now = &big;
	struct cppc_snapshot s;
	struct cppc_dev d;
	uint32_t eff;

	cppc_init(&d, 7, acpi_cppc_page_gpa(7), &big);
	for (i = 0; i < 200000; i++) {
		unsigned int len = widths[rnd() % 4];
		uint64_t off = rnd() % 3 ? rnd() % 0x40 : rnd() % 0x1000, v = hostile_value();

		switch (rnd() % 8) {
		case 3:
			if (rnd() % 8)
				break;
			now = rnd() % 2 ? &big : &little;	/* the vCPU moves */
			CU_ASSERT_FATAL(cppc_set_caps(&d, now) == 0);
			break;
		case 0:
			rd(&d, off, len);
			break;
		case 1:
			umin = rnd() % 1025;
			umax = umin + rnd() % (1025 - umin);
			if (rnd() % 16 == 0) {	/* now and then an invalid range */
				umin = rnd() % 1100;
				umax = rnd() % 1100;
			}
			if (cppc_set_host_limits(&d, umin, umax)) {
				CU_ASSERT(umin > umax || umax > 1024);
				cppc_snapshot(&d, &s);
				umin = acpi_capacity_from_perf(s.host_min);
			}
			break;
		case 2:
			cppc_account(&d, rnd() % 100000, (uint32_t)hostile_value());
			break;
		default:
			/* Mostly aim at the writable registers with 4 bytes. */
			if (rnd() % 2) {
				off = (rnd() % 5) * 4;
				len = 4;
			}
			wr(&d, off, v, len);
			break;
		}
		cppc_snapshot(&d, &s);
		eff = s.effective;
		if (eff) {
			CU_ASSERT_FATAL(eff <= s.host_max);
			CU_ASSERT_FATAL(eff >= (s.host_min < s.host_max ? s.host_min : s.host_max));
		}
		cap = cppc_effective_request_capacity(&d);
		CU_ASSERT_FATAL(cap <= d.host_max_cap);
		CU_ASSERT_FATAL(!cap || cap >= d.host_min_cap);
		CU_ASSERT_FATAL(!s.desired || (s.desired >= now->lowest_perf &&
					       s.desired <= now->highest_perf));
		CU_ASSERT_FATAL(s.min >= now->lowest_perf && s.min <= now->highest_perf);
		CU_ASSERT_FATAL(s.max >= now->lowest_perf && s.max <= now->highest_perf);
		CU_ASSERT_FATAL(rd(&d, CPPC_REG_HIGHEST_PERF, 4) == now->highest_perf);
		CU_ASSERT_FATAL(s.enable <= 1);
		CU_ASSERT_FATAL(s.perf_limited <= 3);
		CU_ASSERT_FATAL(s.del_counter <= s.ref_counter * 255 / 204 + 1);
	}
	cppc_destroy(&d);
}

/*
 * The dispatcher calls cppc_account() holding the engine's lock while a vCPU
 * thread's write notifies a callback that takes the same lock: this must
 * not deadlock, and the request the "engine" sees stays inside the clamps.
 */
struct race {
	struct cppc_dev dev;
	pthread_mutex_t engine;
	uint32_t seen_max;
	unsigned int notified;
};

static void engine_notify(struct cppc_dev *dev, void *opaque)
{
	struct race *r = opaque;
	uint32_t eff;

	pthread_mutex_lock(&r->engine);
	eff = cppc_effective_request(dev);
	if (eff > r->seen_max)
		r->seen_max = eff;
	r->notified++;
	pthread_mutex_unlock(&r->engine);
}

static void *guest_thread(void *arg)
{
	struct race *r = arg;
	uint64_t x = 88172645463325252ull;

	wr(&r->dev, CPPC_REG_ENABLE, 1, 4);
	for (unsigned int i = 0; i < 50000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		wr(&r->dev, (x % 4) * 4, x >> 8, 4);
	}
	return NULL;
}

static void *dispatcher_thread(void *arg)
{
	struct race *r = arg;

	for (unsigned int i = 0; i < 50000; i++) {
		pthread_mutex_lock(&r->engine);
		cppc_account(&r->dev, 100, i % 256);
		pthread_mutex_unlock(&r->engine);
	}
	return NULL;
}

static void test_no_deadlock_with_engine_lock(void)
{
	static struct race r;
	pthread_t g, d;

	cppc_init(&r.dev, 0, acpi_cppc_page_gpa(0), &big);
	pthread_mutex_init(&r.engine, NULL);
	CU_ASSERT_EQUAL(cppc_set_host_limits(&r.dev, 0, 512), 0);
	cppc_set_notify(&r.dev, engine_notify, &r);
	pthread_create(&g, NULL, guest_thread, &r);
	pthread_create(&d, NULL, dispatcher_thread, &r);
	pthread_join(g, NULL);
	pthread_join(d, NULL);
	CU_ASSERT(r.notified > 0);
	CU_ASSERT(r.seen_max <= 127);		/* uclamp max 512 -> perf 127 */
	rd(&r.dev, CPPC_REG_DEL_COUNTER, 8);
	CU_ASSERT_EQUAL(rd(&r.dev, CPPC_REG_REF_COUNTER, 8), 5000000);
	pthread_mutex_destroy(&r.engine);
	cppc_destroy(&r.dev);
}

/* A guest that disables CPPC on its way down still shows what it asked. */
static void test_requests_counted_past_disable(void)
{
	struct cppc_dev d;
	struct cppc_stats st;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &big);
	wr(&d, CPPC_REG_ENABLE, 1, 4);		/* no request yet: nothing changes */
	wr(&d, CPPC_REG_DESIRED_PERF, 100, 4);
	wr(&d, CPPC_REG_DESIRED_PERF, 100, 4);	/* the same again: not a new request */
	wr(&d, CPPC_REG_DESIRED_PERF, 200, 4);
	wr(&d, CPPC_REG_ENABLE, 0, 4);
	cppc_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.requests, 3);
	CU_ASSERT_EQUAL(st.last_request, 200);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);
	cppc_destroy(&d);
}

/*
 * Autonomous selection (auto_sel_enable), as Linux 6.12's guided mode uses
 * it: desired 0 and schedutil's choice in min_perf. The request is the floor
 * when above lowest, bounded by max and the host; desired still wins.
 */
static void test_autonomous_selection(void)
{
	struct cppc_dev d;
	struct cppc_stats st;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &little);
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	wr(&d, CPPC_REG_AUTO_SEL, 1, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_AUTO_SEL, 4), 1);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);	/* floor at lowest: no request */
	wr(&d, CPPC_REG_MIN_PERF, 100, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 100);
	wr(&d, CPPC_REG_MAX_PERF, 90, 4);		/* max wins over min */
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 90);
	wr(&d, CPPC_REG_MAX_PERF, 128, 4);
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 0, 320), 0);	/* perf 79 */
	CU_ASSERT_EQUAL(cppc_effective_request(&d), acpi_perf_from_capacity_floor(320));
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 0, 1024), 0);
	wr(&d, CPPC_REG_DESIRED_PERF, 70, 4);		/* a desired level still wins... */
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 100);	/* ...inside [min, max] */
	wr(&d, CPPC_REG_DESIRED_PERF, 0, 4);
	wr(&d, CPPC_REG_AUTO_SEL, 0, 4);		/* off: desired 0 is no request */
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);
	wr(&d, CPPC_REG_AUTO_SEL, 1, 4);
	wr(&d, CPPC_REG_ENABLE, 0, 4);			/* CPPC off: nothing asked */
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);
	/* A value that is neither 0 nor 1 is dropped, the state kept. */
	wr(&d, CPPC_REG_AUTO_SEL, 7, 4);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_AUTO_SEL, 4), 1);
	cppc_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.ignored, 1);
	CU_ASSERT_EQUAL(st.ro_writes, 0);
	/* Short of the floor counts as a minimum excursion. */
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	cppc_account(&d, 1000, 80);
	CU_ASSERT_EQUAL(rd(&d, CPPC_REG_PERF_LIMITED, 4),
			CPPC_PERF_LIMITED_DESIRED | CPPC_PERF_LIMITED_MINIMUM);
	cppc_destroy(&d);
}

/*
 * The energy performance preference (served through MSR_AMD_CPPC_REQ):
 * balanced until the guest writes it, 0..255 kept, anything else dropped;
 * under autonomous selection with desired 0, EPP 0 asks for max_perf.
 */
static void test_energy_preference(void)
{
	struct cppc_dev d;
	struct cppc_stats st;

	cppc_init(&d, 0, acpi_cppc_page_gpa(0), &little);
	CU_ASSERT_EQUAL(cppc_get_epp(&d), CPPC_EPP_DEFAULT);
	cppc_set_epp(&d, 0);
	CU_ASSERT_EQUAL(cppc_get_epp(&d), 0);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);	/* not enabled, no auto_sel */
	wr(&d, CPPC_REG_ENABLE, 1, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);	/* auto_sel off: desired 0 asks nothing */
	wr(&d, CPPC_REG_AUTO_SEL, 1, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 128);	/* EPP 0: max_perf */
	wr(&d, CPPC_REG_MAX_PERF, 100, 4);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 100);
	CU_ASSERT_EQUAL(cppc_set_host_limits(&d, 0, 320), 0);
	CU_ASSERT_EQUAL(cppc_effective_request(&d), acpi_perf_from_capacity_floor(320));
	cppc_set_epp(&d, 128);					/* balanced: the floor rule */
	CU_ASSERT_EQUAL(cppc_effective_request(&d), 0);
	cppc_set_epp(&d, 256);					/* out of range: kept 128 */
	CU_ASSERT_EQUAL(cppc_get_epp(&d), 128);
	cppc_get_stats(&d, &st);
	CU_ASSERT_EQUAL(st.ignored, 1);
	CU_ASSERT(st.requests >= 2);
	cppc_destroy(&d);
}

UNIT_SUITE(cppc_dev, NULL, NULL,
	   UNIT_TEST(test_energy_preference),
	   UNIT_TEST(test_autonomous_selection),
	   UNIT_TEST(test_requests_counted_past_disable),
	   UNIT_TEST(test_no_deadlock_with_engine_lock),
	   UNIT_TEST(test_init_and_defaults),
	   UNIT_TEST(test_request_follows_guest),
	   UNIT_TEST(test_host_limits_win),
	   UNIT_TEST(test_garbage_values_clamped),
	   UNIT_TEST(test_bad_widths_and_offsets),
	   UNIT_TEST(test_caps_registers),
	   UNIT_TEST(test_caps_change_keeps_requests_in_range),
	   UNIT_TEST(test_counters),
	   UNIT_TEST(test_common_reference),
	   UNIT_TEST(test_perf_limited),
	   UNIT_TEST(test_notify),
	   UNIT_TEST(test_hostile_random))
