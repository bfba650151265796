// SPDX-License-Identifier: MIT
/* QMP sessions without sockets: framing, negotiation, envelope errors, ids. */
#include "tests/unit/harness.h"
#include "tests/unit/qmp_capture.h"

#include <stdlib.h>
#include <string.h>

static void test_greeting_is_qmp(void)
{
	struct capture cap;
	json_object *g, *qmp, *ver;

	capture_open(&cap, 2);
	g = capture_line(&cap, 0);
	CU_ASSERT_FATAL(g != NULL);
	CU_ASSERT_FATAL(json_object_object_get_ex(g, "QMP", &qmp));
	CU_ASSERT(json_object_object_get_ex(qmp, "version", &ver));
	CU_ASSERT(json_object_object_get_ex(ver, "package", NULL));
	CU_ASSERT(json_object_is_type(json_object_object_get(qmp, "capabilities"),
				      json_type_array));
	CU_ASSERT_EQUAL(json_object_array_length(json_object_object_get(qmp, "capabilities")), 0);
	json_object_put(g);
	capture_close(&cap);
}

static void test_commands_before_negotiation(void)
{
	struct capture cap;

	capture_open(&cap, 2);
	capture_feed(&cap, "{\"execute\":\"query-status\",\"id\":7}\n");
	CU_ASSERT(capture_is_error(&cap, 1, "CommandNotFound",
				   "Expecting capabilities negotiation with 'qmp_capabilities'"));
	CU_ASSERT(capture_id_is(&cap, 1, "7"));
	CU_ASSERT(!qmp_session_negotiated(cap.s));
	capture_feed(&cap, "{\"execute\":\"qmp_capabilities\"}\n");
	CU_ASSERT(capture_is_return(&cap, 2));
	CU_ASSERT(qmp_session_negotiated(cap.s));
	capture_feed(&cap, "{\"execute\":\"qmp_capabilities\"}\n");
	CU_ASSERT(capture_is_error(&cap, 3, "CommandNotFound", "already complete"));
	capture_close(&cap);
}

static void test_capabilities_enable_refused(void)
{
	struct capture cap;

	capture_open(&cap, 2);
	capture_feed(&cap, "{\"execute\":\"qmp_capabilities\",\"arguments\":{\"enable\":[\"oob\"]}}");
	CU_ASSERT(capture_is_error(&cap, 1, "GenericError", "Capability oob not available"));
	CU_ASSERT(!qmp_session_negotiated(cap.s));
	capture_feed(&cap, "{\"execute\":\"qmp_capabilities\",\"arguments\":{\"enable\":[1]}}");
	CU_ASSERT(capture_is_error(&cap, 2, "GenericError", "'enable[0]', expected: string"));
	capture_feed(&cap, "{\"execute\":\"qmp_capabilities\",\"arguments\":{\"enable\":[]}}");
	CU_ASSERT(capture_is_return(&cap, 3));
	capture_close(&cap);
}

static void test_id_echoed_verbatim(void)
{
	struct capture cap;

	capture_negotiated(&cap, 2);
	capture_feed(&cap, "{\"execute\":\"query-status\",\"id\":{\"a\":[1,\"b\",null]}}\n"
			   "{\"id\":\"s\",\"execute\":\"nope\"}\n"
			   "{\"execute\":\"query-status\",\"id\":1.5}\n");
	CU_ASSERT(capture_id_is(&cap, 2, "{\"a\":[1,\"b\",null]}"));
	CU_ASSERT(capture_is_error(&cap, 3, "CommandNotFound", "The command nope has not been found"));
	CU_ASSERT(capture_id_is(&cap, 3, "\"s\""));
	CU_ASSERT(capture_id_is(&cap, 4, "1.5"));
	capture_close(&cap);
}

/* Every JSON value but an object: one error naming it, framing untouched. */
static void test_non_object_requests(void)
{
	static const struct { const char *in, *what; } cases[] = {
		{ "null", "not null" }, { "true", "not a boolean" }, { "false", "not a boolean" },
		{ "-7", "not a number" }, { "2.5e1", "not a number" }, { "\"s\"", "not a string" },
		{ "[]", "not an array" }, { "[{}]", "not an array" },
	};
	char line[128];
	struct capture cap;
	int next = 2;

	capture_negotiated(&cap, 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Alone, one byte at a time, then after an object on the same line. */
		snprintf(line, sizeof(line), "%s\n{\"execute\":\"query-status\"}\n", cases[i].in);
		for (size_t b = 0; b < strlen(line); b++)
			capture_feed_bytes(&cap, &line[b], 1);
		CU_ASSERT(capture_is_error(&cap, next, "GenericError", cases[i].what));
		CU_ASSERT(capture_is_return(&cap, next + 1));
		snprintf(line, sizeof(line), "{\"execute\":\"query-status\"} %s\n"
			 "{\"execute\":\"query-status\"}\n", cases[i].in);
		capture_feed(&cap, line);
		CU_ASSERT(capture_is_return(&cap, next + 2));
		CU_ASSERT(capture_is_error(&cap, next + 3, "GenericError", cases[i].what));
		CU_ASSERT(capture_is_return(&cap, next + 4));
		next += 5;
	}
	CU_ASSERT_EQUAL(cap.nr_lines, next);
	capture_close(&cap);
}

/* What json-c would not give back exactly is refused, without an id. */
static void test_id_not_echoable_refused(void)
{
	static const char *const ids[] = {
		"18446744073709551616", "-9223372036854775809", "-0", "[0,1e2,-0]",
		"{\"k\":99999999999999999999}", "\"\xed\xa0\x80\"", "\"\xc0\xaf\"",
		"\"\xf4\x90\x80\x80\"",
	};
	char line[128];
	struct capture cap;

	capture_negotiated(&cap, 2);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(line, sizeof(line), "{\"execute\":\"stop\",\"id\":%s}\n", ids[i]);
		capture_feed(&cap, line);
		CU_ASSERT(capture_is_error(&cap, 2 + (int)i, "GenericError",
					   "QMP input member 'id' holds"));
		CU_ASSERT(!capture_id_is(&cap, 2 + (int)i, ids[i]));
	}
	CU_ASSERT(cap.vm.running);	/* none of the stops ran */
	/* The limits themselves, and digits inside strings, are echoed. */
	capture_feed(&cap, "{\"execute\":\"query-status\",\"id\":[18446744073709551615,"
			   "-9223372036854775808,\"-0 99999999999999999999\"]}\n");
	CU_ASSERT(capture_id_is(&cap, 10, "[18446744073709551615,-9223372036854775808,"
				 "\"-0 99999999999999999999\"]"));
	capture_close(&cap);
}

/*
 * A lossy integer elsewhere in the request (the arguments, a nested "id")
 * does not make a valid id look lossy; one behind an escaped "id" key does.
 */
static void test_lossy_integer_outside_id(void)
{
	static const char *const ok_ids[] = { "0", "-9223372036854775808", "18446744073709551615" };
	char line[192];
	struct capture cap;

	capture_negotiated(&cap, 2);
	for (size_t i = 0; i < sizeof(ok_ids) / sizeof(ok_ids[0]); i++) {
		snprintf(line, sizeof(line), "{\"execute\":\"query-status\",\"arguments\":"
			 "{\"n\":-0,\"id\":99999999999999999999},\"id\":%s}\n", ok_ids[i]);
		capture_feed(&cap, line);
		CU_ASSERT(capture_id_is(&cap, 2 + (int)i, ok_ids[i]));
	}
	capture_feed(&cap, "{\"execute\":\"query-status\",\"i\\u0064\":-0}\n");
	CU_ASSERT(capture_is_error(&cap, 5, "GenericError", "QMP input member 'id' holds"));
	capture_feed(&cap, "{\"id\":0,\"execute\":\"query-status\",\"x\":[-0]}\n");
	CU_ASSERT(capture_id_is(&cap, 6, "0"));
	capture_close(&cap);
}

/* A desc cut through a UTF-8 character still is valid UTF-8 ('?' for the rest). */
static void test_cut_desc_stays_utf8(void)
{
	struct capture cap;
	const char *line;

	capture_negotiated(&cap, 2);
	/* 63 bytes of key, then a 2-byte character: %.64s keeps its first byte. */
	capture_feed(&cap, "{\"execute\":\"stop\",\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
			   "kkkkkkkkkkkkkkk\xc3\xa9\":1}\n");
	CU_ASSERT(capture_is_error(&cap, 2, "GenericError", "kkk?' is unexpected"));
	line = cap.nr_lines > 2 ? cap.lines[2] : "";
	CU_ASSERT(strchr(line, '\xc3') == NULL);
	capture_close(&cap);
}

static void test_envelope_errors(void)
{
	static const struct { const char *in, *desc; } cases[] = {
		{ "[1,2]\n", "QMP input must be a JSON object" },
		{ "\"x\"\n", "QMP input must be a JSON object" },
		{ "{}\n", "QMP input lacks member 'execute'" },
		{ "{\"execute\":5}\n", "QMP input member 'execute' must be a string" },
		{ "{\"execute\":\"stop\",\"arguments\":[]}\n",
		  "QMP input member 'arguments' must be an object" },
		{ "{\"execute\":\"stop\",\"foo\":1}\n", "QMP input member 'foo' is unexpected" },
		{ "{\"execute\":\"stop\",\"arguments\":{\"x\":1}}\n", "Parameter 'x' is unexpected" },
	};
	struct capture cap;

	capture_negotiated(&cap, 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		capture_feed(&cap, cases[i].in);
		CU_ASSERT(capture_is_error(&cap, 2 + (int)i, "GenericError", cases[i].desc));
	}
	CU_ASSERT(cap.vm.running);	/* the rejected stop did nothing */
	capture_close(&cap);
}

static void test_parse_error_resyncs_at_newline(void)
{
	struct capture cap;

	capture_negotiated(&cap, 2);
	capture_feed(&cap, "{\"execute\" oops, more garbage\n{\"execute\":\"query-status\"}\n");
	CU_ASSERT(capture_is_error(&cap, 2, "GenericError", "JSON parse error"));
	CU_ASSERT(capture_is_return(&cap, 3));
	CU_ASSERT_EQUAL(cap.nr_lines, 4);
	/* A NUL byte is an error too, not a silent stop. */
	capture_feed_bytes(&cap, "{\"exe\0cute\"}\n{\"execute\":\"cont\"}\n", 32);
	CU_ASSERT(capture_is_error(&cap, 4, "GenericError", "JSON parse error"));
	CU_ASSERT(capture_is_return(&cap, 5));
	capture_close(&cap);
}

static void test_split_and_joined_requests(void)
{
	static const char req[] = "{\"execute\": \"query-status\", \"id\": 42}";
	struct capture cap;

	capture_negotiated(&cap, 2);
	for (size_t i = 0; i < strlen(req); i++) {
		capture_feed_bytes(&cap, &req[i], 1);
		CU_ASSERT_EQUAL(cap.nr_lines, i + 1 < strlen(req) ? 2 : 3);
	}
	CU_ASSERT(capture_id_is(&cap, 2, "42"));
	/* Two objects on one line, and one spread over several lines. */
	capture_feed(&cap, "{\"execute\":\"stop\"}{\"execute\":\"cont\"}\n{\n\"execute\"\n:\n\"stop\"}\n");
	CU_ASSERT_EQUAL(cap.nr_lines, 3 + 6);	/* STOP, return, RESUME, return, STOP, return */
	CU_ASSERT(capture_is_return(&cap, 8));
	CU_ASSERT(!cap.vm.running);
	capture_close(&cap);
}

static void test_oversized_message(void)
{
	size_t n = QMP_MAX_MESSAGE + 100;
	char *big = malloc(n + 64);
	struct capture cap;
	int len;

	CU_ASSERT_FATAL(big != NULL);
	len = sprintf(big, "{\"execute\":\"stop\",\"id\":\"");
	memset(big + len, 'a', n);
	strcpy(big + len + n, "\"}\n{\"execute\":\"query-status\"}\n");
	capture_negotiated(&cap, 2);
	capture_feed(&cap, big);
	CU_ASSERT(capture_is_error(&cap, 2, "GenericError", "exceeds 65536 bytes"));
	CU_ASSERT(capture_is_return(&cap, 3));
	CU_ASSERT_EQUAL(cap.nr_lines, 4);
	CU_ASSERT(cap.vm.running);	/* the oversized stop was not run */
	free(big);
	capture_close(&cap);
}

static void test_deep_nesting_is_an_error(void)
{
	char deep[512];
	struct capture cap;

	memset(deep, '[', 300);
	strcpy(deep + 300, "\n");
	capture_negotiated(&cap, 2);
	capture_feed(&cap, deep);
	CU_ASSERT(capture_is_error(&cap, 2, "GenericError", "JSON parse error"));
	capture_close(&cap);
}

static void test_events_only_after_negotiation(void)
{
	struct capture cap;

	capture_open(&cap, 2);
	qmp_session_event(cap.s, "STOP", NULL);
	CU_ASSERT_EQUAL(cap.nr_lines, 1);
	capture_feed(&cap, "{\"execute\":\"qmp_capabilities\"}");
	qmp_session_event(cap.s, "STOP", json_object_new_object());
	CU_ASSERT(capture_is_event(&cap, 2, "STOP"));
	capture_close(&cap);
}

UNIT_SUITE(qmp_session, NULL, NULL,
	   UNIT_TEST(test_greeting_is_qmp),
	   UNIT_TEST(test_commands_before_negotiation),
	   UNIT_TEST(test_capabilities_enable_refused),
	   UNIT_TEST(test_id_echoed_verbatim),
	   UNIT_TEST(test_non_object_requests),
	   UNIT_TEST(test_id_not_echoable_refused),
	   UNIT_TEST(test_lossy_integer_outside_id),
	   UNIT_TEST(test_cut_desc_stays_utf8),
	   UNIT_TEST(test_envelope_errors),
	   UNIT_TEST(test_parse_error_resyncs_at_newline),
	   UNIT_TEST(test_split_and_joined_requests),
	   UNIT_TEST(test_oversized_message),
	   UNIT_TEST(test_deep_nesting_is_an_error),
	   UNIT_TEST(test_events_only_after_negotiation))
