// SPDX-License-Identifier: MIT
/*
 * util/keyval.h: decimal numbers and key=value items, on fixed cases with
 * garbage among them, and on random strings against the C library's
 * strtoull()/strtoll() with the stricter syntax checked apart (seed
 * printed; CAPVISOR_TEST_SEED replays one).
 */
#include "tests/unit/harness.h"
#include "tests/lib/xorshift.h"
#include "util/keyval.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS	2000

static void test_numbers(void)
{
	unsigned long long u;
	long long i;
	const char *s = "1024:8", *big = "12345";
	const char *garbage[] = { "", " 5", "+5", "-5", "5 ", "0x10", "1e3", "5.0", "٣", "--1",
				  "18446744073709551616", "99999999999999999999999" };

	CU_ASSERT(kv_parse_uint("0", 0, &u) == 0 && u == 0);
	CU_ASSERT(kv_parse_uint("007", 7, &u) == 0 && u == 7);
	CU_ASSERT(kv_parse_uint("18446744073709551615", ULLONG_MAX, &u) == 0 && u == ULLONG_MAX);
	CU_ASSERT_EQUAL(kv_parse_uint("8", 7, &u), -EINVAL);
	for (size_t k = 0; k < sizeof(garbage) / sizeof(garbage[0]); k++)
		CU_ASSERT_EQUAL(kv_parse_uint(garbage[k], ULLONG_MAX, &u), -EINVAL);
	CU_ASSERT_EQUAL(kv_parse_uint(NULL, 1, &u), -EINVAL);
	/* The cursor stops at the first non-digit, or just past the digit that went over. */
	CU_ASSERT(kv_scan_uint(&s, 1024, &u) == 0 && u == 1024 && !strcmp(s, ":8"));
	CU_ASSERT(kv_scan_uint(&big, 999, &u) == -ERANGE && !strcmp(big, "5"));
	s = "x1";
	CU_ASSERT(kv_scan_uint(&s, 9, &u) == -EINVAL && !strcmp(s, "x1"));
	CU_ASSERT(kv_parse_int("-9223372036854775808", &i) == 0 && i == LLONG_MIN);
	CU_ASSERT(kv_parse_int("9223372036854775807", &i) == 0 && i == LLONG_MAX);
	CU_ASSERT(kv_parse_int("-0", &i) == 0 && i == 0);
	CU_ASSERT_EQUAL(kv_parse_int("9223372036854775808", &i), -EINVAL);
	CU_ASSERT_EQUAL(kv_parse_int("-9223372036854775809", &i), -EINVAL);
	CU_ASSERT_EQUAL(kv_parse_int("-", &i), -EINVAL);
	CU_ASSERT_EQUAL(kv_parse_int("+1", &i), -EINVAL);
}

static void test_items(void)
{
	char text[] = "weight=5,,cap=1ms/2ms,=x,noeq", *list = text, *item, *val;

	item = kv_next_item(&list, ',');
	CU_ASSERT(!kv_split(item, &val) && !strcmp(item, "weight") && !strcmp(val, "5"));
	CU_ASSERT_STRING_EQUAL(kv_next_item(&list, ','), "");
	item = kv_next_item(&list, ',');
	/* Only the first '=' splits. */
	CU_ASSERT(!kv_split(item, &val) && !strcmp(item, "cap") && !strcmp(val, "1ms/2ms"));
	item = kv_next_item(&list, ',');
	CU_ASSERT(!kv_split(item, &val) && !strcmp(item, "") && !strcmp(val, "x"));
	item = kv_next_item(&list, ',');
	CU_ASSERT_EQUAL(kv_split(item, &val), -EINVAL);
	CU_ASSERT_STRING_EQUAL(item, "noeq");
	CU_ASSERT_PTR_NULL(list);
	CU_ASSERT_PTR_NULL(kv_next_item(&list, ','));
}

/* Digits, signs, space, hex and junk, up to 24 characters. */
static void random_text(uint64_t *rng, char *buf, size_t len)
{
	static const char alphabet[] = "0123456789012345678901234567890123456789-+ x.";
	size_t n = xorshift64(rng) % (len - 1);

	for (size_t k = 0; k < n; k++)
		buf[k] = alphabet[xorshift64(rng) % (sizeof(alphabet) - 1)];
	buf[n] = 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* One random string: both parsers agree with the library and the syntax rule. */
static bool round_agrees(uint64_t *rng, uint64_t seed, unsigned int r)
{
	char text[25];
	unsigned long long max = xorshift64(rng) % 3 ? ULLONG_MAX : xorshift64(rng) % 100000;
	unsigned long long u, lib_u;
	long long i, lib_i;
	bool want_u, want_i, ok;
	int rc_u, rc_i;

	random_text(rng, text, sizeof(text));
	errno = 0;
	lib_u = strtoull(text, NULL, 10);
	want_u = all_digits(text) && !errno && lib_u <= max;
	errno = 0;
	lib_i = strtoll(text, NULL, 10);
	want_i = all_digits(text + (text[0] == '-')) && !errno;
	rc_u = kv_parse_uint(text, max, &u);
	rc_i = kv_parse_int(text, &i);
	ok = (rc_u == 0) == want_u && (!want_u || u == lib_u) &&
	     (rc_i == 0) == want_i && (!want_i || i == lib_i);
	if (!ok)
		fprintf(stderr, "seed %" PRIu64 " round %u: '%s' (max %llu): uint %d, int %d\n",
			seed, r, text, max, rc_u, rc_i);
	return ok;
}

static void test_random_numbers_against_libc(void)
{
	const char *env = getenv("CAPVISOR_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 10) : 20261203, rng = seed ? seed : 1;
	unsigned int failures = 0;

	fprintf(stderr, "  keyval: %d random numbers, seed %" PRIu64 "\n", ROUNDS, seed);
	for (unsigned int r = 0; r < ROUNDS && failures < 3; r++)
		failures += !round_agrees(&rng, seed, r);
	CU_ASSERT_EQUAL(failures, 0);
}

UNIT_SUITE(keyval, NULL, NULL,
	   UNIT_TEST(test_numbers),
	   UNIT_TEST(test_items),
	   UNIT_TEST(test_random_numbers_against_libc))
