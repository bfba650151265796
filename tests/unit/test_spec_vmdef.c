// SPDX-License-Identifier: MIT
#include "tests/unit/harness.h"
#include "vmm/vmdef.h"

#include <string.h>

static char err[512];

static void test_definition_becomes_options(void)
{
	struct vmdef_args a;
	const char *json = "{\"kernel\": \"g.elf\", \"vcpus\": 4, \"verbose\": true,"
			   " \"vcpu\": [{\"vcpus\": \"1-3\", \"weight\": 2048, \"uclamp\": \"0-512\"},"
			   "            {\"vcpus\": 0, \"reservation\": \"3ms/10ms/10ms\"}]}";

	CU_ASSERT_EQUAL_FATAL(vmdef_parse(json, &a, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(a.argc, 9);
	CU_ASSERT_STRING_EQUAL(a.argv[0], "--kernel");
	CU_ASSERT_STRING_EQUAL(a.argv[1], "g.elf");
	CU_ASSERT_STRING_EQUAL(a.argv[3], "4");
	CU_ASSERT_STRING_EQUAL(a.argv[4], "--verbose");
	CU_ASSERT_STRING_EQUAL(a.argv[5], "--vcpu");
	CU_ASSERT_STRING_EQUAL(a.argv[6], "1-3:weight=2048,uclamp=0-512");
	CU_ASSERT_STRING_EQUAL(a.argv[8], "0:reservation=3ms/10ms/10ms");
	CU_ASSERT_PTR_NULL(a.argv[9]);
	vmdef_free(&a);
	CU_ASSERT_EQUAL(vmdef_parse("{}", &a, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(a.argc, 0);
	CU_ASSERT_PTR_NULL(a.argv[0]);
	vmdef_free(&a);
}

static void expect_error(const char *json, const char *needle)
{
	struct vmdef_args a = { .argc = 42 };

	err[0] = 0;
	CU_ASSERT(vmdef_parse(json, &a, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
	CU_ASSERT_EQUAL(a.argc, 42);
}

static void test_bad_definitions_name_the_key(void)
{
	expect_error("[1]", "not a JSON object");
	expect_error("{\"kernel\": ", "not a JSON object");
	expect_error("{\"colour\": 1}", "colour: unknown key");
	expect_error("{\"vcpus\": [1]}", "vcpus: expected a string or an integer");
	expect_error("{\"verbose\": 1}", "verbose: expected true or false");
	expect_error("{\"vcpu\": {}}", "vcpu: expected an array");
	expect_error("{\"vcpu\": [{\"weight\": 1}]}", "vcpu[0]: expected an object with \"vcpus\"");
	expect_error("{\"vcpu\": [{\"vcpus\": \"0\", \"speed\": 1}]}", "vcpu[0].speed: unknown key");
	expect_error("{\"vcpu\": [{\"vcpus\": \"0\", \"weight\": 1.5}]}", "vcpu[0].weight");
	expect_error("{\"vcpu\": [{\"vcpus\": \"0\"}]}", "no QoS key");
}

static void test_missing_file(void)
{
	struct vmdef_args a;

	CU_ASSERT(vmdef_load("/nonexistent/vm.json", &a, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/vm.json"));
}

UNIT_SUITE(spec_vmdef, NULL, NULL, UNIT_TEST(test_definition_becomes_options),
	   UNIT_TEST(test_bad_definitions_name_the_key), UNIT_TEST(test_missing_file))
