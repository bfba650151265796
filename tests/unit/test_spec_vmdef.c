// SPDX-License-Identifier: MIT
/*
 * VM definition files (--config): keys become options, bad definitions and
 * types name the key, strict JSON, and a directory, FIFO or device refused
 * as the file without blocking.
 */
#include "tests/unit/harness.h"
#include "cli/options.h"
#include "cli/vmdef.h"
#include "dispatch/qosspec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[512];

static void test_definition_becomes_options(void)
{
	struct vmdef_args a;
	const char *json = "{\"kernel\": \"g.elf\", \"vcpus\": 4, \"verbose\": true,"
			   " \"vcpu\": [{\"vcpus\": \"1-3\", \"weight\": 2048, \"uclamp\": \"0-512\"},"
			   "            {\"vcpus\": 0, \"reservation\": \"3ms/10ms/10ms\"},"
			   "            {\"vcpus\": \"2\", \"cap\": \"2ms/10ms\"}]}";

	CU_ASSERT_EQUAL_FATAL(vmdef_parse(json, &a, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(a.argc, 11);
	CU_ASSERT_STRING_EQUAL(a.argv[0], "--kernel");
	CU_ASSERT_STRING_EQUAL(a.argv[1], "g.elf");
	CU_ASSERT_STRING_EQUAL(a.argv[3], "4");
	CU_ASSERT_STRING_EQUAL(a.argv[4], "--verbose");
	CU_ASSERT_STRING_EQUAL(a.argv[5], "--vcpu");
	CU_ASSERT_STRING_EQUAL(a.argv[6], "1-3:weight=2048,uclamp=0-512");
	CU_ASSERT_STRING_EQUAL(a.argv[8], "0:reservation=3ms/10ms/10ms");
	CU_ASSERT_STRING_EQUAL(a.argv[10], "2:cap=2ms/10ms");
	CU_ASSERT_PTR_NULL(a.argv[11]);
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
	expect_error("[1]", "expected a JSON object at the top, got an array");
	expect_error("{\"kernel\": ", "kernel: unexpected end (expected a value)");
	expect_error("{\"colour\": 1}", "colour: unknown key");
	expect_error("{\"vcpus\": [1]}", "vcpus: expected a non-negative integer, got an array");
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

/* Integers are integers: not strings, fractions, booleans, negatives or huge values. */
static void test_wrong_types_are_refused(void)
{
	expect_error("{\"vcpus\": \"1\"}", "vcpus: expected a non-negative integer, got a string");
	expect_error("{\"vcpus\": 1.5}", "vcpus: expected a non-negative integer, got a number");
	expect_error("{\"vcpus\": 1.0}", "vcpus: expected a non-negative integer");
	expect_error("{\"vcpus\": 1e2}", "vcpus: expected a non-negative integer");
	expect_error("{\"vcpus\": true}", "vcpus: expected a non-negative integer, got a boolean");
	expect_error("{\"vcpus\": -1}", "got a negative integer");
	expect_error("{\"vcpus\": 99999999999999999999}", "vcpus: expected a non-negative integer");
	expect_error("{\"tick-us\": null}", "tick-us: expected a non-negative integer, got null");
	expect_error("{\"kernel\": 5}", "kernel: expected a string, got an integer");
	expect_error("{\"mem\": true}", "mem: expected a size string");
	expect_error("{\"no-cppc\": \"yes\"}", "no-cppc: expected true or false, got a string");
	expect_error("{\"vcpu\": [{\"vcpus\": \"0\", \"weight\": \"2048\"}]}",
		     "vcpu[0].weight: expected a non-negative integer, got a string");
	expect_error("{\"vcpu\": [{\"vcpus\": \"0\", \"weight\": true}]}",
		     "vcpu[0].weight: expected a non-negative integer, got a boolean");
	expect_error("{\"vcpu\": [{\"vcpus\": 1.5, \"weight\": 1}]}", "vcpu[0].vcpus: expected");
	expect_error("{\"vcpu\": [{\"vcpus\": \"0\", \"uclamp\": 5}]}",
		     "vcpu[0].uclamp: expected a string, got an integer");
}

/* Strict JSON: what json-c alone would let through. */
static void test_strict_json(void)
{
	struct vmdef_args a;

	expect_error("{\"vcpus\": 1} {\"vcpus\": 2}", "a second value after the first");
	expect_error("{\"vcpus\": 1} x", "trailing data");
	expect_error("{\"vcpus\": 1, \"vcpus\": 2}", "duplicate key \"vcpus\"");
	expect_error("{\"vcpus\": 1, \"vc\\u0070us\": 2}", "duplicate key");
	expect_error("{\"vcpu\": [{\"vcpus\": \"0\", \"weight\": 1, \"weight\": 2}]}",
		     "vcpu[0]: duplicate key \"weight\"");
	expect_error("{/* c */ \"vcpus\": 1}", "comments are not JSON");
	expect_error("{\"vcpus\": 1} // c", "comments are not JSON");
	expect_error("{\"vcpus\": 1,}", "trailing comma");
	expect_error("{'vcpus': 1}", "expected a key in double quotes");
	expect_error("{\"vcpus\": NaN}", "vcpus: unexpected 'N'");
	expect_error("{\"vcpus\": 01}", "no leading zeros");
	expect_error("{\"kernel\": \"a\\u0000b\"}", "kernel: \\u0000 in a string");
	expect_error("{\"kernel\": \"\xff\"}", "kernel: invalid UTF-8");
	expect_error("{\"kernel\": \"a\tb\"}", "control character 0x09");
	expect_error("{\"kernel\": \"\\ud800\"}", "without its low half");
	expect_error("{\n\"vcpus\": 1,\n  \"vcpus\": 2}", "(line 3, column 3)");
	/* Escaped control characters never reach an error message or an option. */
	expect_error("{\"kernel\": \"a\\u001b[2Jb\"}", "kernel: expected a string without control");
	expect_error("{\"x\\u001b[2J\": 1}", "x?[2J: unknown key");
	expect_error("{\"a\\u001b\": 1, \"a\\u001b\": 2}", "duplicate key \"a\\u001b\"");
	expect_error("{\"vcpus\": \x01}", "unexpected byte 0x01");
	expect_error("{\"k\\u001b\": [1, }", "k?[1]: unexpected '}'");
	CU_ASSERT_EQUAL(vmdef_parse_buf("{\"vcpus\": 1}\0{\"x\": 1}", 23, &a, err,
					sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "NUL byte at offset 12"));
	/* Whitespace around the object and escaped strings are fine. */
	CU_ASSERT_EQUAL_FATAL(vmdef_parse(" \n{\"cmdline\": \"a\\\"b \\u00e9\\ud83d\\ude00\"}\n ",
					  &a, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(a.argv[1], "a\"b \xc3\xa9\xf0\x9f\x98\x80");
	CU_ASSERT_STRING_EQUAL(a.where[1], "cmdline");
	vmdef_free(&a);
}

/* Each key a file may hold is a run option: the test fails if the two drift. */
static void test_keys_are_options(void)
{
	char json[256];
	struct vmdef_args a;
	unsigned int i;

	for (i = 0; vmdef_key_name(i); i++) {
		const char *k = vmdef_key_name(i);
		bool flag = !strcmp(k, "verbose") || !strcmp(k, "no-cppc");

		snprintf(json, sizeof(json), "{\"%s\": %s}", k, flag ? "true" :
			 strstr(k, "-us") || !strcmp(k, "vcpus") || !strcmp(k, "vm-weight") ?
			 "1" : "\"x\"");
		CU_ASSERT_EQUAL_FATAL(vmdef_parse(json, &a, err, sizeof(err)), 0);
		CU_ASSERT(vm_config_has_option(a.argv[0] + 2));
		vmdef_free(&a);
	}
	CU_ASSERT(i >= 17);
}

static void test_config_file_paths(void)
{
	char dir[] = "/tmp/capvisor-vmdef-XXXXXX", path[64];
	struct vmdef_args a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT(vmdef_load(dir, &a, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "it is a directory"));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	CU_ASSERT(vmdef_load(path, &a, err, sizeof(err)) < 0);	/* must not block */
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--config: '"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "it is a FIFO (expected a regular file to read)"));
	unlink(path);
	CU_ASSERT(vmdef_load("/dev/null", &a, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "a character device"));
	rmdir(dir);
}

/* The VM's weight and cap, its groups, and a vCPU's group=. */
static void test_groups_become_options(void)
{
	struct vmdef_args a;
	const char *json = "{\"vm-weight\": 2048, \"vm-cap\": \"150ms/100ms\","
			   " \"group\": [{\"name\": \"web\", \"weight\": 512, \"cap\": \"50ms/100ms\"},"
			   "             {\"name\": \"db\", \"cap\": \"10ms/10ms\"}],"
			   " \"vcpu\": [{\"vcpus\": \"0-1\", \"group\": \"web\"}]}";

	CU_ASSERT_EQUAL_FATAL(vmdef_parse(json, &a, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(a.argc, 10);
	CU_ASSERT_STRING_EQUAL(a.argv[0], "--vm-weight");
	CU_ASSERT_STRING_EQUAL(a.argv[1], "2048");
	CU_ASSERT_STRING_EQUAL(a.argv[3], "150ms/100ms");
	CU_ASSERT_STRING_EQUAL(a.argv[4], "--group");
	CU_ASSERT_STRING_EQUAL(a.argv[5], "web:weight=512,cap=50ms/100ms");
	CU_ASSERT_STRING_EQUAL(a.where[5], "group[0]");
	CU_ASSERT_STRING_EQUAL(a.argv[7], "db:cap=10ms/10ms");
	CU_ASSERT_STRING_EQUAL(a.argv[9], "0-1:group=web");
	for (int i = 0; i < a.argc; i += 2)
		CU_ASSERT(vm_config_has_option(a.argv[i] + 2));
	vmdef_free(&a);
	expect_error("{\"group\": {}}", "group: expected an array");
	expect_error("{\"group\": [{\"weight\": 1}]}", "group[0]: expected an object with \"name\"");
	expect_error("{\"group\": [{\"name\": \"a\"}]}", "group[0]: no QoS key given (expected "
		     "weight or cap)");
	expect_error("{\"group\": [{\"name\": \"a\", \"weight\": \"1\"}]}",
		     "group[0].weight: expected a non-negative integer, got a string");
	expect_error("{\"group\": [{\"name\": \"a\", \"shares\": 1}]}",
		     "group[0].shares: unknown key (expected name, weight or cap)");
	expect_error("{\"group\": [{\"name\": 3, \"weight\": 1}]}",
		     "group[0].name: expected a string");
	expect_error("{\"vm-weight\": \"2048\"}", "vm-weight: expected a non-negative integer");
	expect_error("{\"vm-cap\": 5}", "vm-cap: expected a string");
}

/* A vcpu[] entry takes every key of --vcpu (dispatch/qosspec.h's one list), with its type. */
static void test_vcpu_entry_keys_are_the_option_keys(void)
{
	struct vmdef_args a;
	char json[256], want[64];

	for (unsigned int i = 0; vcpu_qos_key(i); i++) {
		const struct qos_key *k = vcpu_qos_key(i);

		snprintf(json, sizeof(json), "{\"vcpu\": [{\"vcpus\": 0, \"%s\": %s}]}", k->name,
			 k->integer ? "7" : "\"v\"");
		CU_ASSERT_EQUAL_FATAL(vmdef_parse(json, &a, err, sizeof(err)), 0);
		snprintf(want, sizeof(want), "0:%s=%s", k->name, k->integer ? "7" : "v");
		CU_ASSERT_STRING_EQUAL(a.argv[1], want);
		vmdef_free(&a);
		/* The other type is refused, naming the key. */
		snprintf(json, sizeof(json), "{\"vcpu\": [{\"vcpus\": 0, \"%s\": %s}]}", k->name,
			 k->integer ? "\"7\"" : "7");
		expect_error(json, k->name);
	}
}

UNIT_SUITE(spec_vmdef, NULL, NULL, UNIT_TEST(test_definition_becomes_options),
	   UNIT_TEST(test_bad_definitions_name_the_key), UNIT_TEST(test_missing_file),
	   UNIT_TEST(test_wrong_types_are_refused), UNIT_TEST(test_strict_json),
	   UNIT_TEST(test_keys_are_options), UNIT_TEST(test_config_file_paths),
	   UNIT_TEST(test_groups_become_options), UNIT_TEST(test_vcpu_entry_keys_are_the_option_keys))
