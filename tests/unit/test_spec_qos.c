// SPDX-License-Identifier: MIT
/*
 * --vcpu: libvirt cpuset syntax, durations, keys applied to the chosen
 * vCPUs, a rejected spec that changes nothing.
 */
#include "tests/unit/harness.h"
#include "dispatch/qosspec.h"

#include <stdio.h>
#include <string.h>

static char err[256];

static void test_vcpu_sets_follow_libvirt_syntax(void)
{
	bool m[8];

	CU_ASSERT_EQUAL(vcpu_set_parse("0-3,^2", 8, m, err, sizeof(err)), 0);
	CU_ASSERT(m[0] && m[1] && !m[2] && m[3] && !m[4]);
	CU_ASSERT_EQUAL(vcpu_set_parse("5", 8, m, err, sizeof(err)), 0);
	CU_ASSERT(m[5] && !m[4]);
	CU_ASSERT(vcpu_set_parse("8", 8, m, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "out of range"));
	CU_ASSERT(vcpu_set_parse("3-1", 8, m, err, sizeof(err)) < 0);
	CU_ASSERT(vcpu_set_parse("a", 8, m, err, sizeof(err)) < 0);
	CU_ASSERT(vcpu_set_parse("1;2", 8, m, err, sizeof(err)) < 0);
}

static void test_durations(void)
{
	uint64_t ns;

	CU_ASSERT_EQUAL(qos_parse_duration("3ms", &ns), 0);
	CU_ASSERT_EQUAL(ns, 3000000);
	CU_ASSERT_EQUAL(qos_parse_duration("250us", &ns), 0);
	CU_ASSERT_EQUAL(ns, 250000);
	CU_ASSERT_EQUAL(qos_parse_duration("800ns", &ns), 0);
	CU_ASSERT_EQUAL(ns, 800);
	CU_ASSERT(qos_parse_duration("250", &ns) < 0);	/* the unit is required */
	CU_ASSERT(qos_parse_duration("3m", &ns) < 0);
	CU_ASSERT_EQUAL(qos_parse_duration("1s", &ns), 0);
	CU_ASSERT_EQUAL(ns, 1000000000);
	CU_ASSERT(qos_parse_duration("3 ms", &ns) < 0);
	CU_ASSERT(qos_parse_duration("-3ms", &ns) < 0);
	CU_ASSERT(qos_parse_duration("99999999999s", &ns) < 0);
}

static void test_apply_sets_selected_vcpus(void)
{
	struct vcpu_qos q[4];

	for (int i = 0; i < 4; i++)
		vcpu_qos_default(&q[i]);
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("1-2:weight=2048,uclamp=0-256,cluster=little", 4, q,
					      err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(q[0].weight, 1024);
	CU_ASSERT_EQUAL(q[1].weight, 2048);
	CU_ASSERT_EQUAL(q[2].uclamp_max, 256);
	CU_ASSERT(q[2].uclamp_set);
	CU_ASSERT_STRING_EQUAL(q[2].cluster, "little");
	CU_ASSERT_EQUAL(q[3].uclamp_max, 1024);
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("0:reservation=3ms/10ms/10ms", 4, q, err,
					      sizeof(err)), 0);
	CU_ASSERT(q[0].has_reservation);
	CU_ASSERT_EQUAL(q[0].runtime_ns, 3000000);
	CU_ASSERT_EQUAL(q[0].period_ns, 10000000);
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("2-3:cap=2ms/10ms", 4, q, err, sizeof(err)), 0);
	CU_ASSERT(!q[1].has_cap);
	CU_ASSERT(q[2].has_cap && q[3].has_cap);
	CU_ASSERT_EQUAL(q[3].cap_quota_ns, 2000000);
	CU_ASSERT_EQUAL(q[3].cap_period_ns, 10000000);
}

static void test_rejected_spec_changes_nothing(void)
{
	struct vcpu_qos q[2], before[2];

	vcpu_qos_default(&q[0]);
	vcpu_qos_default(&q[1]);
	memcpy(before, q, sizeof(q));
	/* The good key comes first: it must not stick when a later key fails. */
	CU_ASSERT(vcpu_spec_apply("0-1:weight=5,uclamp=600-100", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "uclamp"));
	CU_ASSERT(vcpu_spec_apply("0:weight=0", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT(vcpu_spec_apply("0:weight=99999999", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT(vcpu_spec_apply("0:reservation=5ms/2ms/10ms", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "runtime"));
	CU_ASSERT(vcpu_spec_apply("0:reservation=1ms/2ms", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT(vcpu_spec_apply("0:colour=red", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown vCPU key"));
	CU_ASSERT(vcpu_spec_apply("weight=5", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT(vcpu_spec_apply("0:weight", 2, q, err, sizeof(err)) < 0);
	CU_ASSERT_EQUAL(memcmp(before, q, sizeof(q)), 0);
}

/* Sets that select nothing, empty key lists and repeated keys: errors, and nothing changes. */
static void test_empty_and_repeated_refused(void)
{
	struct vcpu_qos q[3], before[3];
	bool m[3];
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "^0:weight=5", "selects no vCPU" },
		{ "0-2,^0-2:weight=5", "selects no vCPU" },
		{ "1,^1:weight=5", "selects no vCPU" },
		{ ":weight=5", "vCPU set ''" },
		{ "0,:weight=5", "expected N, N-M or ^N" },
		{ "0:", "no KEY=VALUE given" },
		{ "0:weight=5,", "an empty item" },
		{ "0:,weight=5", "an empty item" },
		{ "0:weight=5,,uclamp=0-512", "an empty item" },
		{ "0:weight=5,weight=6", "weight= given twice" },
		{ "0-1:uclamp=0-512,weight=2,uclamp=0-256", "uclamp= given twice" },
		{ "0:reservation=1ms/10ms/10ms,reservation=2ms/10ms/10ms", "reservation= given twice" },
		{ "0:cluster=a,cluster=a", "cluster= given twice" },
		{ "0:reservation=1000/10000/10000", "each like 500us" },
		{ "0:reservation=1ms/10ms/10", "each like 500us" },
		{ "0:weight=", "expected an integer" },
		{ "0:cap=2ms/10ms,cap=3ms/10ms", "cap= given twice" },
		{ "0:cap=2/10", "cap=2/10: expected QUOTA/PERIOD, each like 500us" },
		{ "0:cap=2ms", "expected QUOTA/PERIOD" },
		{ "0:cap=2ms/10ms/10ms", "expected QUOTA/PERIOD" },
		{ "0:cap=20ms/10ms", "quota (20000000 ns) <= period (10000000 ns)" },
		{ "0:cap=500us/10ms", "1ms <= quota" },
		{ "0:cap=1ms/2s", "period 1ms..1s" },
		{ "0:cap=2ms/10ms,reservation=1ms/10ms/10ms", "cap= and reservation= together" },
	};

	for (int i = 0; i < 3; i++)
		vcpu_qos_default(&q[i]);
	memcpy(before, q, sizeof(q));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CU_ASSERT(vcpu_spec_apply(bad[i].spec, 3, q, err, sizeof(err)) < 0);
		if (!strstr(err, bad[i].msg))
			printf("\n    '%s': got '%s', want '%s'\n", bad[i].spec, err, bad[i].msg);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].msg));
	}
	CU_ASSERT_EQUAL(memcmp(before, q, sizeof(q)), 0);
	CU_ASSERT(vcpu_set_parse("^1", 3, m, err, sizeof(err)) < 0);
	CU_ASSERT_EQUAL(vcpu_set_parse("0-2,^1", 3, m, err, sizeof(err)), 0);
	CU_ASSERT(m[0] && !m[1] && m[2]);
}

UNIT_SUITE(spec_qos, NULL, NULL, UNIT_TEST(test_empty_and_repeated_refused), UNIT_TEST(test_vcpu_sets_follow_libvirt_syntax),
	   UNIT_TEST(test_durations), UNIT_TEST(test_apply_sets_selected_vcpus),
	   UNIT_TEST(test_rejected_spec_changes_nothing))
