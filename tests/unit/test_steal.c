// SPDX-License-Identifier: MIT
/*
 * Steal time capvisor adds to the guest's struct kvm_steal_time: the value
 * grows by exactly what was added, and the version ends even and two higher,
 * as the guest's kvm_steal_clock() retry loop requires.
 */
#include "tests/unit/harness.h"
#include "vmm/kvm/vcpu.h"

#include <string.h>

static void test_steal_record_add(void)
{
	uint8_t rec[64];
	uint64_t steal = 1000;
	uint32_t version = 6;

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &steal, sizeof(steal));
	memcpy(rec + STEAL_TIME_VERSION_OFFSET, &version, sizeof(version));
	rec[16] = 1;	/* preempted: not touched */
	steal_record_add(rec, 250);
	steal_record_add(rec, 0);
	memcpy(&steal, rec, sizeof(steal));
	memcpy(&version, rec + STEAL_TIME_VERSION_OFFSET, sizeof(version));
	CU_ASSERT_EQUAL(steal, 1250);
	CU_ASSERT_EQUAL(version, 10);
	CU_ASSERT_EQUAL(rec[16], 1);
}

UNIT_SUITE(steal, NULL, NULL,
	   UNIT_TEST(test_steal_record_add));
