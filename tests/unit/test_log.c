// SPDX-License-Identifier: MIT
/*
 * Logging: the process-wide level is set and read back.
 */
#include "tests/unit/harness.h"
#include "util/log.h"

static void test_level_roundtrip(void)
{
	enum log_level old = log_get_level();

	log_set_level(LOG_DEBUG);
	CU_ASSERT_EQUAL(log_get_level(), LOG_DEBUG);
	log_set_level(old);
	CU_ASSERT_EQUAL(log_get_level(), old);
}

UNIT_SUITE(log, NULL, NULL, UNIT_TEST(test_level_roundtrip))
