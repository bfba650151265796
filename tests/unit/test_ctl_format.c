// SPDX-License-Identifier: MIT
/*
 * ctl_check_reply(), the check ctl and top make of a server's replies
 * before printing them: what capvisor's own server sends (the session over
 * the fake VM) always passes, and each member the tables use, changed to a
 * wrong type or left out, fails with its path in the message.
 */
#include "tests/unit/harness.h"
#include "tests/unit/qmp_capture.h"
#include "cli/ctl_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The "return" value of QUERY from the server over the fake VM (caller puts it). */
static json_object *server_reply(const char *query)
{
	struct capture cap;
	json_object *line, *ret = NULL;
	char req[96];

	capture_negotiated(&cap, 3);
	snprintf(req, sizeof(req), "{\"execute\":\"%s\"}\n", query);
	capture_feed(&cap, req);
	line = capture_line(&cap, 2);
	if (line && json_object_object_get_ex(line, "return", &ret))
		json_object_get(ret);
	json_object_put(line);
	capture_close(&cap);
	return ret;
}

static const char *const queries[] = {
	"query-vcpus", "query-host", "query-status", "query-version", "query-commands",
	"query-groups",
};

static void test_own_server_passes(void)
{
	char err[256];

	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		json_object *ret = server_reply(queries[i]);

		CU_ASSERT_FATAL(ret != NULL);
		err[0] = '\0';
		CU_ASSERT_EQUAL(ctl_check_reply(queries[i], ret, err, sizeof(err)), 0);
		if (err[0])
			fprintf(stderr, "\n%s: %s\n", queries[i], err);
		json_object_put(ret);
	}
}

/*
 * Every member of every object in the reply: replaced by a string, or
 * removed. Members the tables use must then fail naming their path; the
 * others (wait_time_ns, running) may pass. Returns how many failed.
 */
static int mutate_members(const char *query, json_object *root, json_object *o,
			  const char *path)
{
	char *keys[32];
	int nr = 0, failed = 0;

	/* Keys first: re-adding a member moves it to the end of the object. */
	json_object_object_foreach(o, k, v) {
		(void)v;
		if (nr < 32)
			keys[nr++] = strdup(k);
	}
	for (int i = 0; i < nr; i++) {
		json_object *saved = json_object_get(json_object_object_get(o, keys[i]));
		char sub[128], err[256];

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", keys[i]);
		if (json_object_is_type(saved, json_type_object))
			failed += mutate_members(query, root, saved, sub);
		json_object_object_add(o, keys[i], json_object_new_string("x\x1b[2J"));
		if (ctl_check_reply(query, root, err, sizeof(err))) {
			CU_ASSERT(strstr(err, sub) != NULL);
			failed++;
		}
		json_object_object_del(o, keys[i]);
		if (ctl_check_reply(query, root, err, sizeof(err)))
			CU_ASSERT(strstr(err, sub) != NULL);
		json_object_object_add(o, keys[i], saved);
		CU_ASSERT_EQUAL(ctl_check_reply(query, root, err, sizeof(err)), 0);
		free(keys[i]);
	}
	return failed;
}

static int mutate_array(const char *query, json_object *root, json_object *a, const char *path)
{
	int failed = 0;

	for (size_t i = 0; i < json_object_array_length(a); i++) {
		char sub[64];

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		failed += mutate_members(query, root, json_object_array_get_idx(a, i), sub);
	}
	return failed;
}

static void test_each_member_checked(void)
{
	json_object *vcpus = server_reply("query-vcpus"), *host = server_reply("query-host");
	json_object *status = server_reply("query-status");

	/* 16 members per vCPU are shown (wait_time_ns is not); 3 vCPUs. */
	CU_ASSERT_EQUAL(mutate_array("query-vcpus", vcpus, vcpus, ""), 3 * 16);
	/* 6 per cluster and per pCPU; the fake host has 2 clusters of 2 pCPUs. */
	CU_ASSERT_EQUAL(mutate_array("query-host", host, json_object_object_get(host, "clusters"),
				     "clusters"), 2 * 6);
	CU_ASSERT_EQUAL(mutate_array("query-host", host, json_object_object_get(host, "pcpus"),
				     "pcpus"), 4 * 6);
	CU_ASSERT_EQUAL(mutate_members("query-status", status, status, ""), 1);
	json_object_put(vcpus);
	json_object_put(host);
	json_object_put(status);
}

static void test_limits_and_types(void)
{
	json_object *vcpus = server_reply("query-vcpus"), *one, *many = json_object_new_array();
	char err[256];

	CU_ASSERT_FATAL(vcpus != NULL);
	one = json_object_array_get_idx(vcpus, 0);
	/* QMP_MAX_VCPUS entries pass, one more does not. */
	for (int i = 0; i < QMP_MAX_VCPUS; i++)
		json_object_array_add(many, json_object_get(one));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", many, err, sizeof(err)), 0);
	json_object_array_add(many, json_object_get(one));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", many, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "1025 entries, expected at most 1024") != NULL);
	/* Integers: beyond int64, negative, a float. */
	json_object_object_add(one, "cpu_time_ns", json_object_new_uint64(UINT64_MAX));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), -1);
	json_object_object_add(one, "cpu_time_ns", json_object_new_int64(-1));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), -1);
	json_object_object_add(one, "cpu_time_ns", json_object_new_double(1.0));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), -1);
	json_object_object_add(one, "cpu_time_ns", json_object_new_int64(INT64_MAX));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), 0);
	/* pcpu -1 (not placed) passes, -2 does not; a C1 control in a string does not. */
	json_object_object_add(one, "pcpu", json_object_new_int64(-1));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), 0);
	json_object_object_add(one, "pcpu", json_object_new_int64(-2));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), -1);
	json_object_object_add(one, "pcpu", json_object_new_int64(0));
	json_object_object_add(one, "state", json_object_new_string("run\xc2\x9bning"));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), -1);
	json_object_object_add(one, "state", json_object_new_string("r\xc3\xa9"));
	CU_ASSERT_EQUAL(ctl_check_reply("query-vcpus", vcpus, err, sizeof(err)), 0);
	/* Commands printed as JSON take anything. */
	CU_ASSERT_EQUAL(ctl_check_reply("set-vcpu-weight", one, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(ctl_check_reply("set-vcpu-weight", NULL, err, sizeof(err)), 0);
	json_object_put(many);
	json_object_put(vcpus);
}

/* query-groups: each member checked, the vCPU list entry by entry, and the table. */
static void test_groups_checked_and_printed(void)
{
	json_object *groups = server_reply("query-groups"), *vcpus;
	char err[256], *buf = NULL;
	double share[3] = { 10.0, 20.0, 30.0 };
	size_t len = 0;
	FILE *f;

	CU_ASSERT_FATAL(groups != NULL);
	/* 8 members per group, all shown; the fake VM has "vm" and "pair". */
	CU_ASSERT_EQUAL(mutate_array("query-groups", groups, groups, ""), 2 * 8);
	vcpus = json_object_object_get(json_object_array_get_idx(groups, 1), "vcpus");
	json_object_array_add(vcpus, json_object_new_int64(QMP_MAX_VCPUS));
	CU_ASSERT_EQUAL(ctl_check_reply("query-groups", groups, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "[1].vcpus: [2]: expected a vCPU number 0..1023") != NULL);
	json_object_array_put_idx(vcpus, 2, json_object_new_string("2"));
	CU_ASSERT_EQUAL(ctl_check_reply("query-groups", groups, err, sizeof(err)), -1);
	json_object_array_del_idx(vcpus, 2, 1);
	CU_ASSERT_EQUAL(ctl_check_reply("query-groups", groups, err, sizeof(err)), 0);
	f = open_memstream(&buf, &len);
	CU_ASSERT_FATAL(f != NULL);
	ctl_print_groups(f, groups, share, 3);
	fclose(f);
	/* vm: every vCPU's share, pair: vCPUs 0 and 1. */
	CU_ASSERT(strstr(buf, "GROUP") && strstr(buf, "SHARE"));
	CU_ASSERT(strstr(buf, "vm ") && strstr(buf, " 60.0%"));
	CU_ASSERT(strstr(buf, "pair ") && strstr(buf, " 30.0%"));
	free(buf);
	json_object_put(groups);
}

UNIT_SUITE(ctl_format, NULL, NULL,
	   UNIT_TEST(test_groups_checked_and_printed),
	   UNIT_TEST(test_own_server_passes),
	   UNIT_TEST(test_each_member_checked),
	   UNIT_TEST(test_limits_and_types))
