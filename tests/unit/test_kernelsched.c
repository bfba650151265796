// SPDX-License-Identifier: MIT
/*
 * `--sched host`: weight to nice, the settings applied to the calling
 * thread, and full speed through the util clamps alone.
 */
#include "tests/unit/harness.h"
#include "dispatch/kernelsched.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* sched_getattr(2)'s struct, as far as the util clamps. */
struct attr_out {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

static void test_weight_maps_to_nearest_nice(void)
{
	CU_ASSERT_EQUAL(kernelsched_weight_to_nice(1024), 0);
	CU_ASSERT_EQUAL(kernelsched_weight_to_nice(88761), -20);
	CU_ASSERT_EQUAL(kernelsched_weight_to_nice(1u << 20), -20);
	CU_ASSERT_EQUAL(kernelsched_weight_to_nice(15), 19);
	CU_ASSERT_EQUAL(kernelsched_weight_to_nice(1), 19);
	/* 2048 lies between nice -3 (1991) and -4 (2501). */
	CU_ASSERT_EQUAL(kernelsched_weight_to_nice(2048), -3);
	CU_ASSERT_EQUAL(kernelsched_weight_to_nice(512), 3);	/* 526 */
}

static void test_apply_sets_thread_nice(void)
{
	struct vcpu_qos q;
	char err[256];

	vcpu_qos_default(&q);
	q.weight = 335;		/* nice 5 */
	CU_ASSERT_EQUAL(kernelsched_apply_self(&q, -1, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(getpriority(PRIO_PROCESS, (id_t)gettid()), 5);
	/* Back to nice 0 needs privilege; tests run as root here, skip quietly otherwise. */
	q.weight = 1024;
	if (geteuid() == 0)
		CU_ASSERT_EQUAL(kernelsched_apply_self(&q, -1, err, sizeof(err)), 0);
}

/*
 * Full speed asks for util clamps 1024-1024 and nothing else: policy and
 * nice stay. On a host without util clamps it fails with nothing changed.
 */
static void test_full_speed_sets_only_the_clamps(void)
{
	struct attr_out a = { 0 };
	int nice_before, rc;

	setpriority(PRIO_PROCESS, (id_t)gettid(), 2);
	nice_before = getpriority(PRIO_PROCESS, (id_t)gettid());
	rc = kernelsched_request_full_speed();
	CU_ASSERT(rc == 0 || rc == -EOPNOTSUPP || rc == -EINVAL || rc == -E2BIG);
	CU_ASSERT_EQUAL(getpriority(PRIO_PROCESS, (id_t)gettid()), nice_before);
	CU_ASSERT_EQUAL(syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0), 0);
	CU_ASSERT_EQUAL(a.policy, SCHED_OTHER);
	if (rc == 0 && a.size >= sizeof(a)) {
		CU_ASSERT_EQUAL(a.util_min, 1024);
		CU_ASSERT_EQUAL(a.util_max, 1024);
	}
	if (geteuid() == 0)
		setpriority(PRIO_PROCESS, (id_t)gettid(), 0);
}

UNIT_SUITE(kernelsched, NULL, NULL, UNIT_TEST(test_weight_maps_to_nearest_nice),
	   UNIT_TEST(test_apply_sets_thread_nice), UNIT_TEST(test_full_speed_sets_only_the_clamps))
