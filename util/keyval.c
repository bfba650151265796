// SPDX-License-Identifier: MIT
/*
 * Decimal numbers and key=value items of the user's text (util/keyval.h).
 * Numbers are read digit by digit rather than with strtoull(), which would
 * take a sign, leading space and (with base 0) a prefix, and saturate
 * silently unless errno is checked.
 */
#include "util/keyval.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int kv_scan_uint(const char **s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!*s || !is_digit(**s))
		return -EINVAL;
	while (is_digit(**s)) {
		unsigned int d = (unsigned int)(*(*s)++ - '0');

		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int kv_parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v;

	if (kv_scan_uint(&s, max, &v) || *s)
		return -EINVAL;
	*out = v;
	return 0;
}

int kv_parse_int(const char *s, long long *out)
{
	bool neg = s && *s == '-';
	unsigned long long mag;

	if (kv_parse_uint(s + neg, neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX, &mag))
		return -EINVAL;
	/* LLONG_MIN's magnitude is no long long: negate one less, then step down. */
	if (!neg)
		*out = (long long)mag;
	else
		*out = mag ? -(long long)(mag - 1) - 1 : 0;
	return 0;
}

char *kv_next_item(char **list, char sep)
{
	char *item = *list, *end = item ? strchr(item, sep) : NULL;

	if (end)
		*end++ = '\0';
	*list = end;
	return item;
}

int kv_split(char *item, char **value)
{
	char *eq = strchr(item, '=');

	if (!eq)
		return -EINVAL;
	*eq = '\0';
	*value = eq + 1;
	return 0;
}
