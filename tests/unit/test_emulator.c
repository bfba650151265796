// SPDX-License-Identifier: MIT
/*
 * --emulator-cpus (libvirt's <emulatorpin>): host CPU sets in libvirt's
 * syntax, refused when they name CPUs this process may not use, and the
 * calling thread really pinned.
 */
#include "tests/unit/harness.h"
#include "vmm/emulator.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static char err[256];

/* The lowest CPU this process may run on, as text. */
static int first_allowed(cpu_set_t *allowed)
{
	CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof(*allowed), allowed), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, allowed))
			return c;
	return -1;
}

static void test_sets_in_libvirt_syntax(void)
{
	cpu_set_t allowed, set;
	char list[64];
	int c = first_allowed(&allowed);

	snprintf(list, sizeof(list), "%d", c);
	CU_ASSERT_EQUAL(emulator_cpus_parse(list, &set, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(CPU_COUNT(&set), 1);
	CU_ASSERT(CPU_ISSET(c, &set));
	snprintf(list, sizeof(list), "%d-%d,^%d", c, c + 1, c + 1);
	if (CPU_ISSET(c + 1, &allowed)) {
		CU_ASSERT_EQUAL(emulator_cpus_parse(list, &set, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(CPU_COUNT(&set), 1);
	}
	snprintf(list, sizeof(list), "%d,^%d", c, c);
	CU_ASSERT(emulator_cpus_parse(list, &set, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no host CPU left"));
}

static void test_bad_sets_are_refused(void)
{
	static const char *const bad[] = { "", "a", "1-", "3-1", "0;1", "-1", "0,", "99999999" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT(emulator_cpus_parse(bad[i], NULL, err, sizeof(err)) < 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i]));
	}
	/* A CPU that exists in the mask type but not for this process. */
	CU_ASSERT(emulator_cpus_parse("1000", NULL, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "may not run on"));
}

static void *pin_and_report(void *arg)
{
	cpu_set_t *set = arg, old, now;

	if (emulator_pin_self(set, &old) ||
	    pthread_getaffinity_np(pthread_self(), sizeof(now), &now))
		return NULL;
	return CPU_EQUAL(&now, set) ? arg : NULL;
}

static void test_pin_self(void)
{
	cpu_set_t allowed, one;
	pthread_t t;
	void *res = NULL;
	int c = first_allowed(&allowed);

	CPU_ZERO(&one);
	CPU_SET(c, &one);
	/* On a thread of its own, so the test runner's mask is not touched. */
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, pin_and_report, &one), 0);
	pthread_join(t, &res);
	CU_ASSERT_PTR_EQUAL(res, &one);
}

UNIT_SUITE(emulator_cpus, NULL, NULL,
	   UNIT_TEST(test_sets_in_libvirt_syntax),
	   UNIT_TEST(test_bad_sets_are_refused),
	   UNIT_TEST(test_pin_self))
