// SPDX-License-Identifier: MIT
/* The command table: argument schema, ranges, cross-field rules, events, state kept on error. */
#include "tests/unit/harness.h"
#include "tests/unit/qmp_capture.h"

#include <stdio.h>
#include <string.h>

/* Sends one request; true if its last output line is an error whose desc contains desc. */
static bool rejects(struct capture *c, const char *cmd, const char *args, const char *desc)
{
	char req[512];
	int before = c->nr_lines;

	snprintf(req, sizeof(req), "{\"execute\":\"%s\",\"arguments\":%s}\n", cmd, args);
	capture_feed(c, req);
	return c->nr_lines > before && capture_is_error(c, c->nr_lines - 1, "GenericError", desc);
}

/* Sends one request; true if its last output line is a return. */
static bool accepts(struct capture *c, const char *cmd, const char *args)
{
	char req[512];

	snprintf(req, sizeof(req), "{\"execute\":\"%s\",\"arguments\":%s}\n", cmd, args);
	capture_feed(c, req);
	return capture_is_return(c, c->nr_lines - 1);
}

static void test_type_checks(void)
{
	struct capture cap;
	struct fake_vm before;

	capture_negotiated(&cap, 4);
	before = cap.vm;
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":true}",
			  "Invalid parameter type for 'weight', expected: integer"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":\"100\"}",
			  "Invalid parameter type for 'weight', expected: integer"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":100.0}",
			  "Invalid parameter type for 'weight', expected: integer"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":null,\"weight\":100}",
			  "Invalid parameter type for 'vcpu', expected: integer"));
	CU_ASSERT(rejects(&cap, "set-vcpu-cluster", "{\"vcpu\":1,\"cluster\":3}",
			  "Invalid parameter type for 'cluster', expected: string"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1}", "Parameter 'weight' is missing"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":5,\"nice\":1}",
			  "Parameter 'nice' is unexpected"));
	CU_ASSERT(memcmp(&before, &cap.vm, sizeof(before)) == 0);
	capture_close(&cap);
}

static void test_ranges_and_huge_numbers(void)
{
	struct capture cap;
	struct fake_vm before;

	capture_negotiated(&cap, 4);
	before = cap.vm;
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":0}",
			  "Parameter 'weight' out of range: 0 (expected 1..1048576)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":-5}",
			  "out of range: -5"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":1e3}",
			  "expected: integer"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":18446744073709551615}",
			  "Parameter 'weight' out of range"));
	/* Beyond int64 json-c saturates: the error must not show a made-up value. */
	CU_ASSERT(rejects(&cap, "set-vcpu-weight",
			  "{\"vcpu\":1,\"weight\":123456789012345678901234567890}",
			  "Parameter 'weight' out of range: too large (expected 1..1048576)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight",
			  "{\"vcpu\":1,\"weight\":-123456789012345678901234567890}",
			  "Parameter 'weight' out of range: too small"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":-1,\"weight\":5}",
			  "Parameter 'vcpu' out of range: -1"));
	CU_ASSERT(rejects(&cap, "set-vcpu-weight", "{\"vcpu\":4,\"weight\":5}",
			  "Parameter 'vcpu' out of range: 4 (expected 0..3: the VM has 4 vCPUs)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-clamp", "{\"vcpu\":0,\"max\":1025}",
			  "Parameter 'max' out of range: 1025 (expected 0..1024)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":0,\"runtime_us\":0,\"period_us\":1000}",
			  "Parameter 'runtime_us' out of range: 0 (expected 1..4000000 us)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":0,\"runtime_us\":10,\"period_us\":4000001}",
			  "Parameter 'period_us' out of range"));
	CU_ASSERT(rejects(&cap, "query-vcpus", "{\"vcpu\":7}", "the VM has 4 vCPUs"));
	CU_ASSERT(memcmp(&before, &cap.vm, sizeof(before)) == 0);
	capture_close(&cap);
}

static void test_clamp_rules(void)
{
	struct capture cap;

	capture_negotiated(&cap, 2);
	CU_ASSERT(rejects(&cap, "set-vcpu-clamp", "{\"vcpu\":0,\"min\":600,\"max\":500}",
			  "Parameter 'min' (600) must not exceed 'max' (500)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-clamp", "{\"vcpu\":0}", "'min' or 'max' is missing"));
	CU_ASSERT(accepts(&cap, "set-vcpu-clamp", "{\"vcpu\":0,\"max\":512}"));
	CU_ASSERT_EQUAL(cap.vm.vcpu[0].uclamp_max, 512);
	CU_ASSERT_EQUAL(cap.vm.vcpu[0].uclamp_min, 0);
	/* A bound left out keeps its value, and is checked against the new one. */
	CU_ASSERT(rejects(&cap, "set-vcpu-clamp", "{\"vcpu\":0,\"min\":600}",
			  "'min' (600) must not exceed 'max' (512)"));
	CU_ASSERT(accepts(&cap, "set-vcpu-clamp", "{\"vcpu\":0,\"min\":100}"));
	CU_ASSERT_EQUAL(cap.vm.vcpu[0].uclamp_min, 100);
	CU_ASSERT_EQUAL(cap.vm.vcpu[0].uclamp_max, 512);
	CU_ASSERT_EQUAL(cap.vm.vcpu[1].uclamp_max, 1024);
	capture_close(&cap);
}

static void test_weight_change_emits_event(void)
{
	struct capture cap;
	json_object *ev, *data;

	capture_negotiated(&cap, 2);
	CU_ASSERT(accepts(&cap, "set-vcpu-weight", "{\"vcpu\":1,\"weight\":88761}"));
	CU_ASSERT_EQUAL(cap.vm.vcpu[1].weight, 88761);
	CU_ASSERT(capture_is_event(&cap, 2, "VCPU_QOS_CHANGED"));
	ev = capture_line(&cap, 2);
	CU_ASSERT_FATAL(json_object_object_get_ex(ev, "data", &data));
	CU_ASSERT_EQUAL(json_object_get_int(json_object_object_get(data, "vcpu")), 1);
	CU_ASSERT_EQUAL(json_object_get_int(json_object_object_get(data, "weight")), 88761);
	json_object_put(ev);
	capture_close(&cap);
}

static void test_reservation_rules_and_admission(void)
{
	struct capture cap;
	struct fake_vm before;

	capture_negotiated(&cap, 4);
	CU_ASSERT(rejects(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":0,\"runtime_us\":500,\"deadline_us\":400,\"period_us\":1000}",
			  "'runtime_us' (500) must not exceed 'deadline_us' (400)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":0,\"runtime_us\":500,\"deadline_us\":2000,\"period_us\":1000}",
			  "'deadline_us' (2000) must not exceed 'period_us' (1000)"));
	/* Deadline defaults to the period. */
	CU_ASSERT(accepts(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":0,\"runtime_us\":900,\"period_us\":1000}"));
	CU_ASSERT(cap.vm.vcpu[0].has_reservation);
	CU_ASSERT_EQUAL(cap.vm.vcpu[0].reservation.deadline_us, 1000);
	CU_ASSERT(accepts(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":1,\"runtime_us\":900,\"period_us\":1000}"));
	/* Capacity 3.0, limit 2.85: a third 0.9 fits, a fourth does not. */
	CU_ASSERT(accepts(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":2,\"runtime_us\":900,\"period_us\":1000}"));
	before = cap.vm;
	CU_ASSERT(rejects(&cap, "set-vcpu-reservation",
			  "{\"vcpu\":3,\"runtime_us\":900,\"period_us\":1000}", "admission control"));
	CU_ASSERT(capture_is_event(&cap, cap.nr_lines - 2, "RESERVATION_REJECTED"));
	/* Moving a 0.9-density reservation to the 512 cluster does not fit. */
	CU_ASSERT(rejects(&cap, "set-vcpu-cluster", "{\"vcpu\":0,\"cluster\":\"little\"}",
			  "does not fit"));
	CU_ASSERT(rejects(&cap, "set-vcpu-cluster", "{\"vcpu\":0,\"cluster\":\"huge\"}",
			  "no cluster named 'huge' (expected one of: big, little)"));
	CU_ASSERT(memcmp(&before, &cap.vm, sizeof(before)) == 0);
	CU_ASSERT(accepts(&cap, "clear-vcpu-reservation", "{\"vcpu\":0}"));
	CU_ASSERT(!cap.vm.vcpu[0].has_reservation);
	CU_ASSERT(accepts(&cap, "set-vcpu-cluster", "{\"vcpu\":0,\"cluster\":\"little\"}"));
	CU_ASSERT_STRING_EQUAL(cap.vm.vcpu[0].cluster_affinity, "little");
	CU_ASSERT(accepts(&cap, "set-vcpu-cluster", "{\"vcpu\":0}"));
	CU_ASSERT_STRING_EQUAL(cap.vm.vcpu[0].cluster_affinity, "");
	capture_close(&cap);
}

/* set-vcpu-cap: typed and checked before the backend; a refusal changes nothing. */
static void test_set_cap(void)
{
	struct capture cap;
	struct fake_vm before;

	capture_negotiated(&cap, 3);
	CU_ASSERT(accepts(&cap, "set-vcpu-cap",
			  "{\"vcpu\":1,\"quota_us\":2000,\"period_us\":10000}"));
	CU_ASSERT(cap.vm.vcpu[1].has_cap);
	CU_ASSERT_EQUAL(cap.vm.vcpu[1].cap.quota_us, 2000);
	CU_ASSERT_EQUAL(cap.vm.vcpu[1].cap.period_us, 10000);
	before = cap.vm;
	CU_ASSERT(rejects(&cap, "set-vcpu-cap",
			  "{\"vcpu\":1,\"quota_us\":20000,\"period_us\":10000}",
			  "'quota_us' (20000) must not exceed 'period_us' (10000)"));
	CU_ASSERT(rejects(&cap, "set-vcpu-cap", "{\"vcpu\":1,\"quota_us\":500,\"period_us\":10000}",
			  "'quota_us' (500) must be 0 (no cap) or at least 1000"));
	CU_ASSERT(rejects(&cap, "set-vcpu-cap", "{\"vcpu\":1,\"quota_us\":2000}",
			  "'period_us' is missing"));
	CU_ASSERT(rejects(&cap, "set-vcpu-cap", "{\"vcpu\":1,\"quota_us\":2000,\"period_us\":500}",
			  "period_us"));
	CU_ASSERT(rejects(&cap, "set-vcpu-cap", "{\"vcpu\":1,\"quota_us\":\"2ms\",\"period_us\":10000}",
			  "quota_us"));
	CU_ASSERT(rejects(&cap, "set-vcpu-cap", "{\"vcpu\":7,\"quota_us\":2000,\"period_us\":10000}",
			  "out of range"));
	CU_ASSERT(memcmp(&before, &cap.vm, sizeof(before)) == 0);
	CU_ASSERT(accepts(&cap, "set-vcpu-cap", "{\"vcpu\":1,\"quota_us\":0}"));
	CU_ASSERT(!cap.vm.vcpu[1].has_cap);
	CU_ASSERT(accepts(&cap, "set-vcpu-cap", "{\"vcpu\":1,\"quota_us\":3000,\"period_us\":10000}"));
	CU_ASSERT(accepts(&cap, "set-vcpu-cap", "{\"vcpu\":1}"));
	CU_ASSERT(!cap.vm.vcpu[1].has_cap);
	capture_close(&cap);
}

/* query-groups: the VM's own group first, its groups with their parent, vCPUs and cap. */
static void test_query_groups(void)
{
	struct capture cap;
	json_object *o, *ret, *g, *v;

	capture_negotiated(&cap, 3);
	cap.vm.vcpu[0].cpu_time_ns = 5;
	cap.vm.vcpu[1].cpu_time_ns = 7;
	cap.vm.vcpu[2].cpu_time_ns = 11;
	CU_ASSERT(accepts(&cap, "set-group-cap",
			  "{\"group\":\"pair\",\"quota_us\":15000,\"period_us\":10000}"));
	capture_feed(&cap, "{\"execute\":\"query-groups\"}");
	o = capture_line(&cap, cap.nr_lines - 1);
	CU_ASSERT_FATAL(json_object_object_get_ex(o, "return", &ret));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(ret), 2);
	g = json_object_array_get_idx(ret, 0);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_object_get(g, "name")), "vm");
	CU_ASSERT(json_object_object_get_ex(g, "parent", &v) && !v);
	CU_ASSERT(json_object_object_get_ex(g, "cap", &v) && !v);
	CU_ASSERT_EQUAL(json_object_get_int64(json_object_object_get(g, "cpu_time_ns")), 23);
	CU_ASSERT_EQUAL(json_object_array_length(json_object_object_get(g, "vcpus")), 3);
	g = json_object_array_get_idx(ret, 1);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_object_get(g, "parent")), "vm");
	CU_ASSERT_EQUAL(json_object_get_int64(json_object_object_get(g, "cpu_time_ns")), 12);
	CU_ASSERT_EQUAL(json_object_get_int(json_object_object_get(
		json_object_object_get(g, "cap"), "quota_us")), 15000);
	CU_ASSERT(json_object_object_get_ex(g, "throttled_ns", NULL));
	CU_ASSERT(json_object_object_get_ex(g, "throttles", NULL));
	v = json_object_object_get(g, "vcpus");
	CU_ASSERT_EQUAL(json_object_array_length(v), 2);
	CU_ASSERT_EQUAL(json_object_get_int(json_object_array_get_idx(v, 1)), 1);
	json_object_put(o);
	capture_close(&cap);
}

/* set-vm-*, set-group-*: a quota up to what the group can run at once; refusals change nothing. */
static void test_group_weight_and_cap(void)
{
	struct capture cap;
	struct fake_vm before;
	json_object *ev, *data;

	capture_negotiated(&cap, 3);
	CU_ASSERT(accepts(&cap, "set-vm-weight", "{\"weight\":3000}"));
	CU_ASSERT_EQUAL(cap.vm.group[0].weight, 3000);
	CU_ASSERT(capture_is_event(&cap, cap.nr_lines - 2, "GROUP_QOS_CHANGED"));
	ev = capture_line(&cap, cap.nr_lines - 2);
	CU_ASSERT_FATAL(json_object_object_get_ex(ev, "data", &data));
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_object_get(data, "group")), "vm");
	CU_ASSERT_EQUAL(json_object_get_int(json_object_object_get(data, "weight")), 3000);
	json_object_put(ev);
	CU_ASSERT(accepts(&cap, "set-group-weight", "{\"group\":\"pair\",\"weight\":5}"));
	CU_ASSERT_EQUAL(cap.vm.group[1].weight, 5);
	/* Three vCPUs on four pCPUs: the VM runs at most three at once. */
	CU_ASSERT(accepts(&cap, "set-vm-cap", "{\"quota_us\":30000,\"period_us\":10000}"));
	CU_ASSERT(cap.vm.group[0].has_cap && cap.vm.group[0].cap.quota_us == 30000);
	before = cap.vm;
	CU_ASSERT(rejects(&cap, "set-vm-cap", "{\"quota_us\":30001,\"period_us\":10000}",
			  "'quota_us' (30001) must not exceed 3 x 'period_us' (10000) = 30000: "
			  "group 'vm' runs at most 3 vCPUs at once"));
	CU_ASSERT(rejects(&cap, "set-group-cap",
			  "{\"group\":\"pair\",\"quota_us\":20001,\"period_us\":10000}",
			  "must not exceed 2 x 'period_us' (10000) = 20000"));
	CU_ASSERT(rejects(&cap, "set-vm-cap", "{\"quota_us\":2000}", "'period_us' is missing"));
	CU_ASSERT(rejects(&cap, "set-vm-cap", "{\"quota_us\":500,\"period_us\":10000}",
			  "must be 0 (no cap) or at least 1000"));
	CU_ASSERT(rejects(&cap, "set-vm-cap", "{\"quota_us\":2000,\"period_us\":999}",
			  "Parameter 'period_us' out of range: 999 (expected 1000..1000000 us)"));
	CU_ASSERT(rejects(&cap, "set-vm-weight", "{\"weight\":0}",
			  "Parameter 'weight' out of range: 0 (expected 1..1048576)"));
	CU_ASSERT(rejects(&cap, "set-group-weight", "{\"group\":\"trio\",\"weight\":5}",
			  "no group named 'trio' (expected one of: vm, pair)"));
	CU_ASSERT(rejects(&cap, "set-group-weight", "{\"weight\":5}", "'group' is missing"));
	CU_ASSERT(rejects(&cap, "set-group-cap", "{\"group\":7,\"quota_us\":0}",
			  "Invalid parameter type for 'group', expected: string"));
	CU_ASSERT(memcmp(&before, &cap.vm, sizeof(before)) == 0);
	CU_ASSERT(accepts(&cap, "set-vm-cap", "{\"quota_us\":0}"));
	CU_ASSERT(!cap.vm.group[0].has_cap);
	CU_ASSERT(accepts(&cap, "set-group-cap", "{\"group\":\"vm\",\"quota_us\":2000,"
			  "\"period_us\":10000}"));
	CU_ASSERT(cap.vm.group[0].has_cap);
	CU_ASSERT(accepts(&cap, "set-group-cap", "{\"group\":\"vm\"}"));
	CU_ASSERT(!cap.vm.group[0].has_cap);
	/* A backend without groups (--sched host) says so. */
	cap.vm.nr_groups = 0;
	CU_ASSERT(rejects(&cap, "set-vm-weight", "{\"weight\":5}", "this VM has no groups"));
	capture_close(&cap);
}

static void test_queries(void)
{
	struct capture cap;
	json_object *o, *ret, *names;

	capture_negotiated(&cap, 3);
	capture_feed(&cap, "{\"execute\":\"query-commands\"}");
	o = capture_line(&cap, 2);
	CU_ASSERT_FATAL(json_object_object_get_ex(o, "return", &ret));
	CU_ASSERT_EQUAL(json_object_array_length(ret), 21);
	names = json_object_array_get_idx(ret, 5);
	CU_ASSERT_STRING_EQUAL(json_object_get_string(json_object_object_get(names, "name")),
			       "query-vcpus");
	json_object_put(o);
	capture_feed(&cap, "{\"execute\":\"query-version\"}");
	o = capture_line(&cap, 3);
	CU_ASSERT_FATAL(json_object_object_get_ex(o, "return", &ret));
	CU_ASSERT(json_object_object_get_ex(json_object_object_get(ret, "qemu"), "major", NULL));
	json_object_put(o);
	capture_feed(&cap, "{\"execute\":\"query-vcpus\"}");
	o = capture_line(&cap, 4);
	CU_ASSERT_FATAL(json_object_object_get_ex(o, "return", &ret));
	CU_ASSERT_EQUAL(json_object_array_length(ret), 3);
	json_object_put(o);
	capture_feed(&cap, "{\"execute\":\"query-host\"}");
	o = capture_line(&cap, 5);
	CU_ASSERT_FATAL(json_object_object_get_ex(o, "return", &ret));
	CU_ASSERT_EQUAL(json_object_array_length(json_object_object_get(ret, "pcpus")), 4);
	CU_ASSERT_EQUAL(json_object_array_length(json_object_object_get(ret, "clusters")), 2);
	json_object_put(o);
	capture_close(&cap);
}

static void test_lifecycle(void)
{
	struct capture cap;

	capture_negotiated(&cap, 1);
	CU_ASSERT(accepts(&cap, "stop", "{}"));
	CU_ASSERT(capture_is_event(&cap, 2, "STOP"));
	CU_ASSERT(!cap.vm.running);
	CU_ASSERT(accepts(&cap, "cont", "{}"));
	CU_ASSERT(capture_is_event(&cap, 4, "RESUME"));
	CU_ASSERT(accepts(&cap, "quit", "{}"));
	CU_ASSERT(capture_is_event(&cap, 6, "SHUTDOWN"));
	CU_ASSERT_EQUAL(cap.vm.quit_requests, 1);
	CU_ASSERT(rejects(&cap, "cont", "{}", "shut down"));
	capture_close(&cap);
}

/* A backend without domain XML says so; the real VM's is tested in test_domain_qmp. */
static void test_domain_xml_needs_backend(void)
{
	struct capture cap;

	capture_negotiated(&cap, 1);
	CU_ASSERT(rejects(&cap, "query-domain-xml", "{}", "no domain XML"));
	capture_close(&cap);
}

UNIT_SUITE(qmp_commands, NULL, NULL,
	   UNIT_TEST(test_domain_xml_needs_backend), UNIT_TEST(test_query_groups),
	   UNIT_TEST(test_group_weight_and_cap),
	   UNIT_TEST(test_type_checks),
	   UNIT_TEST(test_ranges_and_huge_numbers),
	   UNIT_TEST(test_clamp_rules),
	   UNIT_TEST(test_weight_change_emits_event),
	   UNIT_TEST(test_reservation_rules_and_admission),
	   UNIT_TEST(test_set_cap),
	   UNIT_TEST(test_queries),
	   UNIT_TEST(test_lifecycle))
