// SPDX-License-Identifier: MIT
/*
 * The strict JSON check (util/json_strict.c) on random documents from a
 * printed seed: valid ones are accepted, every proper prefix and an
 * injected duplicate key are refused, and whatever it accepts json-c's own
 * strict parser accepts too (json-c is the independent oracle for the
 * grammar; it is laxer, so only that direction must hold).
 */
#include "tests/lib/xorshift.h"
#include "tests/unit/harness.h"
#include "util/json_strict.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC_MAX 4096

static uint64_t rng;

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)(xorshift64(&rng) % n);
}

struct doc {
	char s[DOC_MAX];
	size_t n;
};

static void put(struct doc *d, const char *t)
{
	size_t l = strlen(t);

	if (d->n + l < DOC_MAX) {
		memcpy(d->s + d->n, t, l);
		d->n += l;
		d->s[d->n] = 0;
	}
}

static void gen_string(struct doc *d, unsigned int id)
{
	static const char *const pieces[] = { "a", "Z", "9", " ", "\\n", "\\\"", "\\\\", "\\/",
					      "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9", "\xe2\x82\xac" };
	char key[16];

	put(d, "\"");
	snprintf(key, sizeof(key), "k%u", id);	/* unique per object when id is */
	put(d, key);
	for (unsigned int i = rnd(4); i; i--)
		put(d, pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))]);
	put(d, "\"");
}

static void gen_value(struct doc *d, unsigned int depth);

static void gen_object(struct doc *d, unsigned int depth, bool dup)
{
	unsigned int n = 1 + rnd(4), dup_at = dup ? rnd(n) : n;

	put(d, "{");
	for (unsigned int i = 0; i < n; i++) {
		put(d, i ? ", " : "");
		/* The duplicate repeats key 0 exactly (no random tail). */
		if (i == dup_at && i > 0)
			put(d, "\"k0\"");
		else if (dup && i == 0)
			put(d, "\"k0\"");
		else
			gen_string(d, i);
		put(d, rnd(2) ? ": " : ":");
		gen_value(d, depth + 1);
	}
	if (dup && dup_at == 0)
		put(d, ", \"k0\": 1");
	put(d, "}");
}

static void gen_value(struct doc *d, unsigned int depth)
{
	static const char *const scalars[] = { "0", "-1", "42", "3.25", "-0.5e-3", "1E+2", "true",
					       "false", "null", "123456789012" };
	unsigned int k = rnd(depth > 4 ? 2 : 4);

	if (k == 0) {
		put(d, scalars[rnd(sizeof(scalars) / sizeof(scalars[0]))]);
	} else if (k == 1) {
		gen_string(d, rnd(100));
	} else if (k == 2) {
		put(d, "[");
		for (unsigned int i = rnd(4); i; i--) {
			gen_value(d, depth + 1);
			put(d, i > 1 ? "," : "");
		}
		put(d, "]");
	} else {
		gen_object(d, depth, false);
	}
}

static bool json_c_accepts(const char *s, size_t n)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;
	bool ok;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, s, (int)n);
	ok = o && json_tokener_get_error(tok) == json_tokener_success &&
	     json_tokener_get_parse_end(tok) == n;
	json_object_put(o);
	json_tokener_free(tok);
	return ok;
}

static void test_random_documents(void)
{
	const uint64_t seed = 0x5eed0000c11ull;
	unsigned int accepted_mutants = 0;
	char err[256];

	printf("\n    json_strict: seed 0x%llx, 400 documents\n", (unsigned long long)seed);
	rng = seed;
	for (int i = 0; i < 400; i++) {
		struct doc d = { .n = 0 }, dup = { .n = 0 }, mut;

		gen_object(&d, 0, false);
		CU_ASSERT_EQUAL(json_strict_check(d.s, d.n, err, sizeof(err)), 0);
		if (json_strict_check(d.s, d.n, err, sizeof(err)))
			printf("    refused a valid document %s: %s\n", d.s, err);
		CU_ASSERT(json_c_accepts(d.s, d.n));
		for (size_t cut = 0; cut < d.n; cut++)
			CU_ASSERT_EQUAL(json_strict_check(d.s, cut, err, sizeof(err)), -1);
		gen_object(&dup, 0, true);
		CU_ASSERT_EQUAL(json_strict_check(dup.s, dup.n, err, sizeof(err)), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "duplicate key \"k0\""));
		/* One byte changed: whatever we accept, json-c accepts. */
		for (int m = 0; m < 20; m++) {
			mut = d;
			mut.s[rnd((unsigned int)mut.n)] = "{}[]\",:0-.eE \\/tnu'x\x80"[rnd(22)];
			if (json_strict_check(mut.s, mut.n, err, sizeof(err)) == 0) {
				accepted_mutants++;
				CU_ASSERT(json_c_accepts(mut.s, mut.n));
			}
		}
	}
	CU_ASSERT(accepted_mutants > 0);	/* the oracle was consulted */
}

/* Object of n distinct keys "k0".."k(n-1)", each 0. */
static char *flat_object(unsigned int n, size_t *len)
{
	char *s = malloc((size_t)n * 16 + 4);
	size_t off = 0;

	s[off++] = '{';
	for (unsigned int i = 0; i < n; i++)
		off += (size_t)sprintf(s + off, "%s\"k%u\": 0", i ? ", " : "", i);
	s[off++] = '}';
	s[off] = 0;
	*len = off;
	return s;
}

/* The member limit bounds the duplicate search: 100k keys are refused, not searched. */
static void test_member_limit(void)
{
	char err[256], *s;
	size_t n;

	s = flat_object(JSON_STRICT_MAX_MEMBERS, &n);
	CU_ASSERT_EQUAL(json_strict_check(s, n, err, sizeof(err)), 0);
	free(s);
	s = flat_object(JSON_STRICT_MAX_MEMBERS + 1, &n);
	CU_ASSERT_EQUAL(json_strict_check(s, n, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "more than 256 members in one object"));
	free(s);
	s = flat_object(100000, &n);
	CU_ASSERT_EQUAL(json_strict_check(s, n, err, sizeof(err)), -1);
	free(s);
}

UNIT_SUITE(json_strict, NULL, NULL, UNIT_TEST(test_random_documents), UNIT_TEST(test_member_limit))
