/* SPDX-License-Identifier: MIT */
/*
 * Self-registering CUnit suites: each tests/unit/test_*.c file declares its
 * suite with UNIT_SUITE(); a constructor adds it to a list that main() hands
 * to CUnit. No central table to edit when a test file is added.
 */
#ifndef CAPVISOR_TEST_HARNESS_H
#define CAPVISOR_TEST_HARNESS_H

#include <CUnit/CUnit.h>

struct unit_test {
	const char *name;
	CU_TestFunc fn;
};

struct unit_suite {
	const char *name;
	const struct unit_test *tests;
	CU_InitializeFunc init;
	CU_CleanupFunc cleanup;
	struct unit_suite *next;
};

void unit_register_suite(struct unit_suite *suite);

/*
 * Suite init and cleanup that keep log lines below warnings out of the
 * output (host util clamps are missing on most test hosts: that info line
 * is noise), and put the level back after.
 */
int unit_quiet_init(void);
int unit_quiet_cleanup(void);

#define UNIT_TEST(fn) { #fn, fn }

/* UNIT_SUITE(name, init, cleanup, tests...) with tests made by UNIT_TEST(). */
#define UNIT_SUITE(sname, sinit, sclean, ...)                                  \
	static const struct unit_test sname##_tests[] = { __VA_ARGS__, { 0, 0 } }; \
	static struct unit_suite sname##_suite = {                             \
		.name = #sname, .tests = sname##_tests,                        \
		.init = sinit, .cleanup = sclean,                              \
	};                                                                     \
	__attribute__((constructor)) static void sname##_register(void)        \
	{                                                                      \
		unit_register_suite(&sname##_suite);                           \
	}

#endif
