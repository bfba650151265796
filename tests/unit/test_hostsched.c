// SPDX-License-Identifier: MIT
#include "tests/unit/harness.h"
#include "vmm/hostsched.h"

#include <sys/resource.h>
#include <unistd.h>

static void test_weight_maps_to_nearest_nice(void)
{
	CU_ASSERT_EQUAL(hostsched_weight_to_nice(1024), 0);
	CU_ASSERT_EQUAL(hostsched_weight_to_nice(88761), -20);
	CU_ASSERT_EQUAL(hostsched_weight_to_nice(1u << 20), -20);
	CU_ASSERT_EQUAL(hostsched_weight_to_nice(15), 19);
	CU_ASSERT_EQUAL(hostsched_weight_to_nice(1), 19);
	/* 2048 lies between nice -3 (1991) and -4 (2501). */
	CU_ASSERT_EQUAL(hostsched_weight_to_nice(2048), -3);
	CU_ASSERT_EQUAL(hostsched_weight_to_nice(512), 3);	/* 526 */
}

static void test_apply_sets_thread_nice(void)
{
	struct vcpu_qos q;
	char err[256];

	vcpu_qos_default(&q);
	q.weight = 335;		/* nice 5 */
	CU_ASSERT_EQUAL(hostsched_apply_self(&q, -1, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(getpriority(PRIO_PROCESS, (id_t)gettid()), 5);
	/* Back to nice 0 needs privilege; tests run as root here, skip quietly otherwise. */
	q.weight = 1024;
	if (geteuid() == 0)
		CU_ASSERT_EQUAL(hostsched_apply_self(&q, -1, err, sizeof(err)), 0);
}

UNIT_SUITE(hostsched, NULL, NULL, UNIT_TEST(test_weight_maps_to_nearest_nice),
	   UNIT_TEST(test_apply_sets_thread_nice))
