// SPDX-License-Identifier: MIT
/*
 * Typed command arguments: the schema fills each command's argument struct
 * by name, checks the VM-dependent vCPU index only once every argument is
 * well-formed, and a random stream of set-vcpu-clamp requests is answered
 * exactly as an independent model of the rules says (seed printed;
 * CAPVISOR_TEST_SEED replays one).
 */
#include "tests/unit/harness.h"
#include "tests/unit/qmp_capture.h"
#include "tests/lib/xorshift.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS		400
#define NR_VCPUS	3

static uint64_t rng;

static uint64_t next_random(void)
{
	return xorshift64(&rng);
}

/* Mostly in range, sometimes just outside it. */
static int64_t random_in(int64_t lo, int64_t hi)
{
	return lo - 2 + (int64_t)(next_random() % (uint64_t)(hi - lo + 5));
}

static void forget_lines(struct capture *c)
{
	for (int i = 0; i < c->nr_lines; i++)
		free(c->lines[i]);
	c->nr_lines = 0;
}

static bool last_is_error(struct capture *c, const char *desc)
{
	return c->nr_lines > 0 && capture_is_error(c, c->nr_lines - 1, "GenericError", desc);
}

static void send(struct capture *c, const char *cmd, const char *args)
{
	char req[512];

	snprintf(req, sizeof(req), "{\"execute\":\"%s\",\"arguments\":%s}\n", cmd, args);
	capture_feed(c, req);
}

/* A malformed argument is reported before an index the VM does not have. */
static void test_vcpu_checked_after_the_schema(void)
{
	struct capture cap;

	capture_negotiated(&cap, 4);
	send(&cap, "set-vcpu-weight", "{\"vcpu\":7,\"weight\":0}");
	CU_ASSERT(last_is_error(&cap, "Parameter 'weight' out of range: 0"));
	send(&cap, "set-vcpu-cap", "{\"vcpu\":9,\"quota_us\":\"x\"}");
	CU_ASSERT(last_is_error(&cap, "Invalid parameter type for 'quota_us'"));
	send(&cap, "set-vcpu-weight", "{\"vcpu\":7,\"weight\":5}");
	CU_ASSERT(last_is_error(&cap, "the VM has 4 vCPUs"));
	send(&cap, "clear-vcpu-reservation", "{\"vcpu\":4}");
	CU_ASSERT(last_is_error(&cap, "Parameter 'vcpu' out of range: 4"));
	/* Each argument lands in its own field, whatever the order on the wire. */
	send(&cap, "set-vcpu-reservation",
	     "{\"period_us\":1000,\"vcpu\":3,\"runtime_us\":300,\"deadline_us\":600}");
	CU_ASSERT(capture_is_return(&cap, cap.nr_lines - 1));
	CU_ASSERT_EQUAL(cap.vm.vcpu[3].reservation.runtime_us, 300);
	CU_ASSERT_EQUAL(cap.vm.vcpu[3].reservation.deadline_us, 600);
	CU_ASSERT_EQUAL(cap.vm.vcpu[3].reservation.period_us, 1000);
	send(&cap, "set-group-weight", "{\"weight\":77,\"group\":\"vm\"}");
	CU_ASSERT_EQUAL(cap.vm.group[0].weight, 77);
	capture_close(&cap);
}

struct clamp_request {
	int64_t vcpu, min, max;
	bool has_min, has_max;
};

/*
 * The rules of set-vcpu-clamp written again from docs/qmp.md: ranges in
 * argument order, then the VM's vCPUs, then "one or both", then
 * min <= max with a bound left out keeping its value. Returns the text
 * the error must contain, or NULL for a request that is accepted.
 */
static const char *clamp_model(const struct clamp_request *r, const struct fake_vm *vm,
			       char *buf, size_t len)
{
	int64_t min, max;

	if (r->vcpu < 0 || r->vcpu >= QMP_MAX_VCPUS)
		return "Parameter 'vcpu' out of range";
	if (r->has_min && (r->min < 0 || r->min > QMP_UCLAMP_MAX))
		return "Parameter 'min' out of range";
	if (r->has_max && (r->max < 0 || r->max > QMP_UCLAMP_MAX))
		return "Parameter 'max' out of range";
	if (r->vcpu >= NR_VCPUS)
		return "the VM has 3 vCPUs";
	if (!r->has_min && !r->has_max)
		return "'min' or 'max' is missing";
	min = r->has_min ? r->min : vm->vcpu[r->vcpu].uclamp_min;
	max = r->has_max ? r->max : vm->vcpu[r->vcpu].uclamp_max;
	if (min <= max)
		return NULL;
	snprintf(buf, len, "'min' (%" PRId64 ") must not exceed 'max' (%" PRId64 ")", min, max);
	return buf;
}

static void random_clamp(struct clamp_request *r)
{
	r->vcpu = random_in(0, NR_VCPUS - 1);
	r->has_min = next_random() % 4 != 0;
	r->has_max = next_random() % 4 != 0;
	r->min = random_in(0, QMP_UCLAMP_MAX);
	r->max = random_in(0, QMP_UCLAMP_MAX);
}

static void clamp_json(const struct clamp_request *r, char *buf, size_t len)
{
	int n = snprintf(buf, len, "{\"vcpu\":%" PRId64, r->vcpu);

	if (r->has_min)
		n += snprintf(buf + n, len - (size_t)n, ",\"min\":%" PRId64, r->min);
	if (r->has_max)
		n += snprintf(buf + n, len - (size_t)n, ",\"max\":%" PRId64, r->max);
	snprintf(buf + n, len - (size_t)n, "}");
}

/* One request against the model; false (and a line naming the round) if they disagree. */
static bool clamp_round(struct capture *cap, uint64_t seed, unsigned int round)
{
	struct clamp_request r;
	struct fake_vm before = cap->vm;
	char args[128], why[128];
	const char *want;
	bool ok;

	random_clamp(&r);
	clamp_json(&r, args, sizeof(args));
	want = clamp_model(&r, &before, why, sizeof(why));
	forget_lines(cap);
	send(cap, "set-vcpu-clamp", args);
	if (want)
		ok = last_is_error(cap, want) && !memcmp(&before, &cap->vm, sizeof(before));
	else
		ok = cap->nr_lines == 2 && capture_is_return(cap, 1) &&
		     (!r.has_min || cap->vm.vcpu[r.vcpu].uclamp_min == r.min) &&
		     (!r.has_max || cap->vm.vcpu[r.vcpu].uclamp_max == r.max);
	if (!ok)
		fprintf(stderr, "seed %" PRIu64 " round %u: %s: expected %s, got %s\n", seed,
			round, args, want ? want : "a return", cap->nr_lines ?
			cap->lines[cap->nr_lines - 1] : "nothing");
	return ok;
}

static void test_random_clamps_against_model(void)
{
	const char *env = getenv("CAPVISOR_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 10) : 20261202;
	unsigned int failures = 0;
	struct capture cap;

	fprintf(stderr, "  set-vcpu-clamp: %d random requests, seed %" PRIu64 "\n", ROUNDS, seed);
	rng = seed ? seed : 1;
	capture_negotiated(&cap, NR_VCPUS);
	for (unsigned int round = 0; round < ROUNDS && failures < 3; round++)
		failures += !clamp_round(&cap, seed, round);
	CU_ASSERT_EQUAL(failures, 0);
	capture_close(&cap);
}

UNIT_SUITE(qmp_args, NULL, NULL,
	   UNIT_TEST(test_vcpu_checked_after_the_schema),
	   UNIT_TEST(test_random_clamps_against_model))
