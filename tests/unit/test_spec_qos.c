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
		{ "0:group=", "group=: expected a group name" },
		{ "0:group=9x", "expected a group name" },
		{ "0:group=a:b", "expected a group name" },
		{ "0:group=a,group=b", "group= given twice" },
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

/* --vm-weight, --vm-cap and --group: values, defaults and the group= of a vCPU. */
static void test_vm_and_groups_parse(void)
{
	struct vm_qos vq;
	struct vcpu_qos q[4];
	const struct group_qos *g;

	vm_qos_default(&vq);
	CU_ASSERT_STRING_EQUAL(vq.vm.name, QOS_VM_GROUP_NAME);
	CU_ASSERT_EQUAL(vq.vm.weight, QOS_GROUP_WEIGHT_DEFAULT);
	CU_ASSERT(!vq.vm.has_cap);
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_weight(&vq, "3000", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vq.vm.weight, 3000);
	/* cgroup cpu.max: the quota may be several periods. */
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "250ms/100ms", err, sizeof(err)), 0);
	CU_ASSERT(vq.vm.has_cap);
	CU_ASSERT_EQUAL(vq.vm.cap_quota_ns, 250000000);
	CU_ASSERT_EQUAL(vq.vm.cap_period_ns, 100000000);
	CU_ASSERT_EQUAL_FATAL(group_spec_apply(&vq, "web:weight=2048,cap=50ms/100ms", err,
					       sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(group_spec_apply(&vq, "batch-1:cap=10ms/10ms", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vq.nr_groups, 2);
	g = vm_qos_find(&vq, "web");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(g->weight, 2048);
	CU_ASSERT(g->has_cap && g->cap_quota_ns == 50000000 && g->cap_period_ns == 100000000);
	g = vm_qos_find(&vq, "batch-1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL(g->weight, QOS_GROUP_WEIGHT_DEFAULT);
	CU_ASSERT_PTR_EQUAL(vm_qos_find(&vq, QOS_VM_GROUP_NAME), &vq.vm);
	CU_ASSERT_PTR_NULL(vm_qos_find(&vq, "nope"));
	for (int i = 0; i < 4; i++)
		vcpu_qos_default(&q[i]);
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("0-1:group=web", 4, q, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("2:group=batch-1,weight=5", 4, q, err, sizeof(err)),
			      0);
	/* group=vm is the VM's own group: the same as no group=. */
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("3:group=vm", 4, q, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(q[0].group, "web");
	CU_ASSERT_STRING_EQUAL(q[2].group, "batch-1");
	CU_ASSERT_EQUAL(q[2].weight, 5);
	CU_ASSERT_STRING_EQUAL(q[3].group, "");
	CU_ASSERT_EQUAL(vm_qos_check(&vq, q, 4, 8, err, sizeof(err)), 0);
}

static void expect_group_refused(const char *spec, const char *msg)
{
	struct vm_qos vq, before;

	vm_qos_default(&vq);
	CU_ASSERT_EQUAL_FATAL(group_spec_apply(&vq, "a:weight=1", err, sizeof(err)), 0);
	before = vq;
	err[0] = 0;
	CU_ASSERT(group_spec_apply(&vq, spec, err, sizeof(err)) < 0);
	if (!strstr(err, msg))
		printf("\n    '%s': got '%s', want '%s'\n", spec, err, msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, msg));
	CU_ASSERT_EQUAL(memcmp(&before, &vq, sizeof(vq)), 0);
}

static void test_bad_groups_change_nothing(void)
{
	struct vm_qos vq;

	expect_group_refused("b", "expected NAME:KEY=VALUE");
	expect_group_refused("b:", "expected NAME:KEY=VALUE");
	expect_group_refused(":weight=1", "expected a group name");
	expect_group_refused("1b:weight=1", "expected a group name");
	expect_group_refused("b c:weight=1", "expected a group name");
	expect_group_refused("abcdefghijklmnopqrstuvwxyz012345:weight=1", "expected a group name");
	expect_group_refused("a:weight=2", "group 'a' is given twice");
	expect_group_refused("vm:weight=2", "the VM's own group (use --vm-weight");
	expect_group_refused("b:weight=0", "expected an integer 1..1048576");
	expect_group_refused("b:weight=1048577", "expected an integer 1..1048576");
	expect_group_refused("b:weight=2,weight=3", "weight= given twice");
	expect_group_refused("b:weight=2,", "expected KEY=VALUE");
	expect_group_refused("b:share=2", "unknown group key 'share' (expected weight or cap)");
	expect_group_refused("b:cap=2/10", "expected QUOTA/PERIOD");
	expect_group_refused("b:weight=2,cap=1ms", "expected QUOTA/PERIOD");
	vm_qos_default(&vq);
	CU_ASSERT(vm_qos_set_weight(&vq, "0", err, sizeof(err)) < 0);
	CU_ASSERT(vm_qos_set_weight(&vq, "12x", err, sizeof(err)) < 0);
	CU_ASSERT(vm_qos_set_cap(&vq, "100ms", err, sizeof(err)) < 0);
	CU_ASSERT_EQUAL(vq.vm.weight, QOS_GROUP_WEIGHT_DEFAULT);
	CU_ASSERT(!vq.vm.has_cap);
	for (unsigned int i = 0; i < QOS_MAX_GROUPS; i++) {
		char spec[32];

		snprintf(spec, sizeof(spec), "g%u:weight=1", i);
		CU_ASSERT_EQUAL(group_spec_apply(&vq, spec, err, sizeof(err)), 0);
	}
	CU_ASSERT(group_spec_apply(&vq, "one-more:weight=1", err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "more than 16 groups"));
}

/* The checks that need the vCPUs: membership, and a cap's limit of one period per vCPU. */
static void test_group_checks_need_the_vcpus(void)
{
	struct vcpu_qos q[3];
	struct vm_qos vq;

	for (int i = 0; i < 3; i++)
		vcpu_qos_default(&q[i]);
	vm_qos_default(&vq);
	CU_ASSERT_EQUAL_FATAL(group_spec_apply(&vq, "two:cap=20ms/10ms", err, sizeof(err)), 0);
	CU_ASSERT(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "group 'two' has no vCPU"));
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("0-1:group=two", 3, q, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)), 0);
	/* Two vCPUs: 20 ms per 10 ms is the most that can bind; one more us cannot. */
	vq.groups[0].cap_quota_ns = 20001000;
	CU_ASSERT(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "group 'two' cap"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "quota <= 2 CPUs x period = 20000 us"));
	vq.groups[0].cap_quota_ns = 20000000;
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("2:group=three", 3, q, err, sizeof(err)), 0);
	CU_ASSERT(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "vCPU 2: group 'three' is not given"));
	CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply("2:group=vm", 3, q, err, sizeof(err)), 0);
	/* The VM's cap: up to all three vCPUs' periods, in whole microseconds. */
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "30ms/10ms", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "31ms/10ms", err, sizeof(err)), 0);
	CU_ASSERT(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--vm-cap"));
	/* On two pCPUs the VM runs two vCPUs at once at most: 20 ms per 10 ms. */
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "20ms/10ms", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(vm_qos_check(&vq, q, 3, 2, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "21ms/10ms", err, sizeof(err)), 0);
	CU_ASSERT(vm_qos_check(&vq, q, 3, 2, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "2 CPUs x period = 20000 us"));
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "1000500ns/10ms", err, sizeof(err)), 0);
	CU_ASSERT(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "whole microseconds"));
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "500us/10ms", err, sizeof(err)), 0);
	CU_ASSERT(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)) < 0);
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_cap(&vq, "5ms/2s", err, sizeof(err)), 0);
	CU_ASSERT(vm_qos_check(&vq, q, 3, 8, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "period 1000..1000000 us"));
}

/* The key lists are the setters' own: every listed key is accepted, nothing else is. */
static void test_key_lists_are_the_parsers(void)
{
	struct vcpu_qos q;
	struct vm_qos vq;
	unsigned int n = 0;

	for (unsigned int i = 0; vcpu_qos_key(i); i++, n++) {
		const char *k = vcpu_qos_key(i)->name;

		CU_ASSERT_PTR_NOT_NULL(strstr(vcpu_qos_key_list(), k));
		vcpu_qos_default(&q);
		/* Refused for its value, never as an unknown key. */
		CU_ASSERT(vcpu_qos_set_key(&q, k, "", err, sizeof(err)) < 0);
		CU_ASSERT_PTR_NULL(strstr(err, "unknown"));
	}
	CU_ASSERT_EQUAL(n, 6);
	CU_ASSERT(vcpu_qos_set_key(&q, "shares", "1", err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, vcpu_qos_key_list()));
	for (unsigned int i = 0; group_qos_key(i); i++) {
		char spec[64];

		vm_qos_default(&vq);
		snprintf(spec, sizeof(spec), "g:%s=", group_qos_key(i)->name);
		CU_ASSERT(group_spec_apply(&vq, spec, err, sizeof(err)) < 0);
		CU_ASSERT_PTR_NULL(strstr(err, "unknown"));
	}
}

UNIT_SUITE(spec_qos, NULL, NULL, UNIT_TEST(test_empty_and_repeated_refused), UNIT_TEST(test_vcpu_sets_follow_libvirt_syntax),
	   UNIT_TEST(test_durations), UNIT_TEST(test_apply_sets_selected_vcpus),
	   UNIT_TEST(test_rejected_spec_changes_nothing), UNIT_TEST(test_vm_and_groups_parse),
	   UNIT_TEST(test_bad_groups_change_nothing), UNIT_TEST(test_group_checks_need_the_vcpus),
	   UNIT_TEST(test_key_lists_are_the_parsers))
