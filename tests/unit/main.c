// SPDX-License-Identifier: MIT
/*
 * CUnit runner for every self-registered suite.
 *   unit_tests            run all suites
 *   unit_tests SUITE...   run only the named suites
 */
#include "tests/unit/harness.h"
#include "util/log.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

static struct unit_suite *suites;

void unit_register_suite(struct unit_suite *suite)
{
	suite->next = suites;
	suites = suite;
}

static enum log_level saved_level;

int unit_quiet_init(void)
{
	saved_level = log_get_level();
	log_set_level(LOG_WARN);
	return 0;
}

int unit_quiet_cleanup(void)
{
	log_set_level(saved_level);
	return 0;
}

static int wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

static int add_suite(const struct unit_suite *s)
{
	CU_pSuite cs = CU_add_suite(s->name, s->init, s->cleanup);

	if (!cs)
		return -1;
	for (const struct unit_test *t = s->tests; t->name; t++)
		if (!CU_add_test(cs, t->name, t->fn))
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (const struct unit_suite *s = suites; s; s = s->next)
		if (wanted(s->name, argc, argv) && add_suite(s))
			return 2;
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	if (CU_get_number_of_tests_run() == 0)
		failed = 1;
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
