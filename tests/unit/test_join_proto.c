// SPDX-License-Identifier: MIT
/*
 * The join protocol's hello check (dispatch/join_proto.c), the one place a
 * host believes anything a VM process sends: a filled hello round-trips,
 * every field out of range is refused naming it, and random bytes (from a
 * printed seed), with or without a valid header, never pass.
 */
#include "tests/lib/xorshift.h"
#include "tests/unit/harness.h"
#include "dispatch/join_proto.h"

#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct vcpu_qos qos_in[JOIN_MAX_VCPUS], qos_out[JOIN_MAX_VCPUS];

static void fill_default(struct join_hello *h, unsigned int n)
{
	struct group_qos vm = { .weight = 2048 };
	char err[256];

	for (unsigned int i = 0; i < n; i++)
		vcpu_qos_default(&qos_in[i]);
	qos_in[0].has_reservation = true;
	qos_in[0].runtime_ns = 2000000;
	qos_in[0].deadline_ns = qos_in[0].period_ns = 10000000;
	qos_in[n - 1].weight = 77;
	CU_ASSERT_EQUAL_FATAL(join_hello_fill(h, "web-1", n, qos_in, &vm, err, sizeof(err)), 0);
}

static int check(const struct join_hello *h, size_t len, char *err, size_t errlen)
{
	struct group_qos vm;
	unsigned int n;
	char name[JOIN_NAME_MAX + 1];

	return join_hello_check(h, len, qos_out, &vm, &n, name, err, errlen);
}

static void test_filled_hello_round_trips(void)
{
	struct join_hello h;
	struct group_qos vm;
	unsigned int n = 0;
	char name[JOIN_NAME_MAX + 1], err[256];

	fill_default(&h, 3);
	CU_ASSERT_EQUAL(join_hello_check(&h, sizeof(h), qos_out, &vm, &n, name, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_STRING_EQUAL(name, "web-1");
	CU_ASSERT_EQUAL(vm.weight, 2048);
	CU_ASSERT_FALSE(vm.has_cap);
	CU_ASSERT_TRUE(qos_out[0].has_reservation);
	CU_ASSERT_EQUAL(qos_out[0].runtime_ns, 2000000);
	CU_ASSERT_EQUAL(qos_out[2].weight, 77);
	CU_ASSERT_EQUAL(qos_out[1].weight, qos_in[1].weight);
}

/* Each broken field is refused, and the message names what was wrong. */
static void test_each_bad_field_is_refused_by_name(void)
{
	struct join_hello h;
	char err[512];

	fill_default(&h, 2);
	CU_ASSERT_EQUAL(check(&h, sizeof(h) - 1, err, sizeof(err)), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "bytes"));
	h.version = JOIN_VERSION + 1;
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EPROTO);
	fill_default(&h, 2);
	h.nr_vcpus = JOIN_MAX_VCPUS + 1;
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "vCPUs"));
	fill_default(&h, 2);
	memset(h.name, 'a', sizeof(h.name));
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "name"));
	fill_default(&h, 2);
	h.vcpus[1].weight = 0;
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "vCPU 1: weight 0"));
	fill_default(&h, 2);
	h.vcpus[0].runtime_ns = h.vcpus[0].period_ns + 1;
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "vCPU 0: reservation"));
	fill_default(&h, 2);
	h.vcpus[1].uclamp_min = 600;
	h.vcpus[1].uclamp_max = 500;
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "uclamp"));
	fill_default(&h, 2);
	h.vm_has_cap = 1;
	h.vm_cap_period_ns = 100000000;
	h.vm_cap_quota_ns = 3 * h.vm_cap_period_ns;	/* more than its 2 vCPUs can use */
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "VM: cap"));
	fill_default(&h, 2);
	memset(h.vcpus[0].cluster, 'x', sizeof(h.vcpus[0].cluster));
	CU_ASSERT_EQUAL(check(&h, sizeof(h), err, sizeof(err)), -EINVAL);
}

/* Random bytes never pass, whether the header is valid or not. */
static void test_random_bytes_never_pass(void)
{
	uint64_t rng = 0x6a6f696e68656cull;
	static union {
		struct join_hello h;
		unsigned char b[sizeof(struct join_hello) + 64];
	} u;
	char err[512];
	unsigned int passed = 0;

	printf("\n    join hello: seed 0x%llx, 2000 messages\n", (unsigned long long)rng);
	for (int i = 0; i < 2000; i++) {
		size_t len = i & 1 ? sizeof(u.h) : 1 + xorshift64(&rng) % sizeof(u.b);

		for (size_t k = 0; k < sizeof(u.b); k++)
			u.b[k] = (unsigned char)xorshift64(&rng);
		if (i & 1) {
			u.h.magic = JOIN_MAGIC;
			u.h.version = JOIN_VERSION;
			u.h.size = sizeof(u.h);
		}
		err[0] = '\0';
		if (!check(&u.h, len, err, sizeof(err)))
			passed++;
		else
			CU_ASSERT(err[0] != '\0');
	}
	CU_ASSERT_EQUAL(passed, 0);
}

/* Whatever a VM writes as its CPPC request, the host reads a level of 0..1024. */
static void test_request_is_clamped(void)
{
	static const uint32_t raw[] = { 0, 1, 512, 1024, 1025, 4096, 0x7fffffff, 0xdeadbeef,
					UINT32_MAX };
	static const unsigned int want[] = { 0, 1, 512, 1024, 1024, 1024, 1024, 1024, 1024 };

	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
		CU_ASSERT_EQUAL(join_request_clamp(raw[i]), want[i]);
}

static void big_little_welcome(struct join_welcome *w)
{
	struct host_spec hs;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(host_spec_parse("big=1:1024,little=1:512", &hs, err, sizeof(err)), 0);
	join_welcome_fill(w, 0, 2, "");
	join_welcome_set_spec(w, &hs);
}

/* The host's spec reaches the VM as it was; a broken one is refused by field. */
static void test_welcome_carries_the_spec(void)
{
	struct join_welcome w;
	char err[512];

	big_little_welcome(&w);
	CU_ASSERT_EQUAL(join_welcome_check(&w, sizeof(w), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(w.spec.nr_clusters, 2);
	CU_ASSERT_STRING_EQUAL(w.spec.clusters[1].name, "little");
	CU_ASSERT_EQUAL(w.spec.clusters[1].capacity, 512);
	w.spec.nr_clusters = HOST_MAX_CLUSTERS + 1;
	CU_ASSERT_EQUAL(join_welcome_check(&w, sizeof(w), err, sizeof(err)), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "clusters"));
	big_little_welcome(&w);
	w.spec.clusters[1].levels[0] = 600;	/* not ascending */
	CU_ASSERT_EQUAL(join_welcome_check(&w, sizeof(w), err, sizeof(err)), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster 1"));
	big_little_welcome(&w);
	w.spec.clusters[0].capacity = 2048;
	CU_ASSERT_EQUAL(join_welcome_check(&w, sizeof(w), err, sizeof(err)), -EPROTO);
	big_little_welcome(&w);
	memset(w.spec.clusters[0].name, 'x', sizeof(w.spec.clusters[0].name));
	CU_ASSERT_EQUAL(join_welcome_check(&w, sizeof(w), err, sizeof(err)), -EPROTO);
	/* A refusal carries no spec. */
	join_welcome_fill(&w, -1, 0, "no room");
	CU_ASSERT_EQUAL(join_welcome_check(&w, sizeof(w), err, sizeof(err)), 0);
}

UNIT_SUITE(join_proto, NULL, NULL, UNIT_TEST(test_filled_hello_round_trips),
	   UNIT_TEST(test_each_bad_field_is_refused_by_name),
	   UNIT_TEST(test_random_bytes_never_pass), UNIT_TEST(test_request_is_clamped),
	   UNIT_TEST(test_welcome_carries_the_spec))
