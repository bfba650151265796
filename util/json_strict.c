// SPDX-License-Identifier: MIT
/*
 * Strict JSON validation (util/json_strict.h): a recursive-descent reader of
 * the grammar of RFC 8259 that builds nothing but the JSON path for errors.
 */
#include "util/json_strict.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN 256
#define KEY_MAX_LEN 256

struct jscan {
	const unsigned char *s;
	size_t len, pos;
	unsigned int depth;
	char path[PATH_MAX_LEN];
	char *err;
	size_t errlen;
};

static int fail(struct jscan *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct jscan *j, const char *fmt, ...)
{
	unsigned int line = 1, col = 1;
	va_list ap;
	int n;

	for (size_t i = 0; i < j->pos && i < j->len; i++, col++)
		if (j->s[i] == '\n') {
			line++;
			col = 0;
		}
	n = snprintf(j->err, j->errlen, "%s%s", j->path[0] ? j->path : "", j->path[0] ? ": " : "");
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < j->errlen)
		n += vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < j->errlen)
		snprintf(j->err + n, j->errlen - (size_t)n, " (line %u, column %u)", line, col);
	return -1;
}

static int peek(const struct jscan *j)
{
	return j->pos < j->len ? j->s[j->pos] : -1;
}

static void skip_ws(struct jscan *j)
{
	while (j->pos < j->len && strchr(" \t\r\n", j->s[j->pos]) && j->s[j->pos])
		j->pos++;
}

/* The character at pos as the error shows it: 'x', or its byte value when unprintable. */
static const char *shown(const struct jscan *j, char *buf, size_t len)
{
	int c = peek(j);

	if (c > 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", (unsigned int)c);
	return buf;
}

static int expect_char(struct jscan *j, int c, const char *what)
{
	char b[16];

	skip_ws(j);
	if (peek(j) != c) {
		if (peek(j) == '/')
			return fail(j, "comments are not JSON (expected %s)", what);
		return peek(j) < 0 ? fail(j, "unexpected end (expected %s)", what) :
				     fail(j, "unexpected %s (expected %s)", shown(j, b, sizeof(b)), what);
	}
	j->pos++;
	return 0;
}

/* One UTF-8 sequence starting at pos: its length, or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

static size_t utf8_put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int hex4(struct jscan *j, unsigned int *out)
{
	*out = 0;
	for (int i = 0; i < 4; i++, j->pos++) {
		int c = peek(j);

		if (c < 0 || !strchr("0123456789abcdefABCDEF", c) || !c)
			return fail(j, "bad \\u escape (expected 4 hex digits)");
		*out = *out << 4 | (unsigned int)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return 0;
}

static int escape(struct jscan *j, char *key, size_t *klen)
{
	unsigned int u, lo;
	int c = peek(j);

	j->pos++;
	if (c >= 0 && c && strchr("\"\\/bfnrt", c)) {
		if (key && *klen < KEY_MAX_LEN)
			key[(*klen)++] = (char)c;
		return 0;
	}
	if (c != 'u')
		return fail(j, "bad escape (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
	if (hex4(j, &u))
		return -1;
	if (!u)
		return fail(j, "\\u0000 in a string (NUL is not allowed)");
	if (u >= 0xdc00 && u <= 0xdfff)
		return fail(j, "lone low surrogate \\u%04x", u);
	if (u >= 0xd800 && u <= 0xdbff) {
		if (peek(j) != '\\' || (j->pos++, peek(j) != 'u'))
			return fail(j, "high surrogate \\u%04x without its low half", u);
		j->pos++;
		if (hex4(j, &lo))
			return -1;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(j, "high surrogate \\u%04x without its low half", u);
		u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (key && *klen + 4 < KEY_MAX_LEN)
		*klen += utf8_put(u, key + *klen);	/* keys compare decoded: "a" == "\u0061" */
	return 0;
}

/* A string; with key non-NULL, its decoded form for comparing keys. */
static int string(struct jscan *j, char *key, size_t *klen)
{
	if (expect_char(j, '"', "a string in double quotes"))
		return -1;
	for (;;) {
		int c = peek(j);
		size_t n;

		if (c < 0)
			return fail(j, "unterminated string");
		if (c == '"') {
			j->pos++;
			return 0;
		}
		if (!c)
			return fail(j, "NUL byte in a string");
		if (c < 0x20)
			return fail(j, "control character 0x%02x in a string (escape it)", c);
		if (c == '\\') {
			j->pos++;
			if (escape(j, key, klen))
				return -1;
			continue;
		}
		n = utf8_len(j->s + j->pos, j->len - j->pos);
		if (!n)
			return fail(j, "invalid UTF-8 in a string");
		if (key && *klen + n < KEY_MAX_LEN) {
			memcpy(key + *klen, j->s + j->pos, n);
			*klen += n;
		}
		j->pos += n;
	}
}

static bool digit(int c)
{
	return c >= '0' && c <= '9';
}

static int number(struct jscan *j)
{
	if (peek(j) == '-')
		j->pos++;
	if (peek(j) == '0')
		j->pos++;
	else if (digit(peek(j)))
		while (digit(peek(j)))
			j->pos++;
	else
		return fail(j, "bad number (expected a digit)");
	if (peek(j) == '.') {
		j->pos++;
		if (!digit(peek(j)))
			return fail(j, "bad number (expected a digit after '.')");
		while (digit(peek(j)))
			j->pos++;
	}
	if (peek(j) == 'e' || peek(j) == 'E') {
		j->pos++;
		if (peek(j) == '+' || peek(j) == '-')
			j->pos++;
		if (!digit(peek(j)))
			return fail(j, "bad number (expected an exponent)");
		while (digit(peek(j)))
			j->pos++;
	}
	if (digit(peek(j)))
		return fail(j, "bad number (no leading zeros)");
	return 0;
}

static int literal(struct jscan *j)
{
	static const char *const words[] = { "true", "false", "null" };
	char b[16];

	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);

		if (j->len - j->pos >= n && !memcmp(j->s + j->pos, words[i], n)) {
			j->pos += n;
			return 0;
		}
	}
	return fail(j, "unexpected %s (expected a value: object, array, string, number, "
		    "true, false or null)", shown(j, b, sizeof(b)));
}

static int value(struct jscan *j);

/* Append ".key" or "[i]" to the path; returns the old length to restore. */
static size_t path_push(struct jscan *j, const char *fmt, const char *key, size_t idx)
{
	size_t old = strlen(j->path);

	if (key) {
		size_t n = old;

		if (n && n + 1 < sizeof(j->path))
			j->path[n++] = '.';
		/* Decoded keys may hold control characters: never print them. */
		for (; *key && n + 1 < sizeof(j->path); key++)
			j->path[n++] = (unsigned char)*key < 0x20 || *key == 0x7f ? '?' : *key;
		j->path[n] = 0;
	} else
		snprintf(j->path + old, sizeof(j->path) - old, fmt, idx);
	return old;
}

struct keyset {
	char (*keys)[KEY_MAX_LEN + 8];
	size_t nr, cap;
};

/* 0 added, 1 a duplicate, 2 one member too many, -1 out of memory. */
static int keyset_add(struct keyset *ks, const char *key)
{
	if (ks->nr == JSON_STRICT_MAX_MEMBERS)
		return 2;
	for (size_t i = 0; i < ks->nr; i++)
		if (!strcmp(ks->keys[i], key))
			return 1;
	if (ks->nr == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 8;
		void *p = realloc(ks->keys, cap * sizeof(*ks->keys));

		if (!p)
			return -1;
		ks->keys = p;
		ks->cap = cap;
	}
	snprintf(ks->keys[ks->nr++], sizeof(ks->keys[0]), "%s", key);
	return 0;
}

static int member(struct jscan *j, struct keyset *ks)
{
	char key[KEY_MAX_LEN + 8];
	size_t klen = 0, start, old;
	int rc;

	skip_ws(j);
	start = j->pos;
	if (peek(j) != '"')
		return expect_char(j, '"', "a key in double quotes");
	if (string(j, key, &klen))
		return -1;
	key[klen] = 0;
	rc = keyset_add(ks, key);
	if (rc) {
		/* Shown as written (escapes and all): no control character reaches the terminal. */
		int raw = (int)(j->pos - start);

		j->pos = start;
		if (rc == 2)
			return fail(j, "more than %d members in one object",
				    JSON_STRICT_MAX_MEMBERS);
		return rc < 0 ? fail(j, "out of memory") :
				fail(j, "duplicate key %.*s", raw > 80 ? 80 : raw,
				     (const char *)j->s + start);
	}
	old = path_push(j, NULL, key, 0);
	rc = expect_char(j, ':', "':' after the key") ?: value(j);
	if (!rc)
		j->path[old] = 0;
	return rc;
}

static int object(struct jscan *j)
{
	struct keyset ks = { 0 };
	int rc = 0;

	j->pos++;
	skip_ws(j);
	if (peek(j) == '}') {
		j->pos++;
		return 0;
	}
	for (;;) {
		rc = member(j, &ks);
		if (rc)
			break;
		skip_ws(j);
		if (peek(j) == ',') {
			j->pos++;
			skip_ws(j);
			if (peek(j) == '}') {
				rc = fail(j, "trailing comma (expected another key)");
				break;
			}
			continue;
		}
		rc = expect_char(j, '}', "',' or '}'");
		break;
	}
	free(ks.keys);
	return rc;
}

static int array(struct jscan *j)
{
	size_t idx = 0;

	j->pos++;
	skip_ws(j);
	if (peek(j) == ']') {
		j->pos++;
		return 0;
	}
	for (;; idx++) {
		size_t old = path_push(j, "[%zu]", NULL, idx);

		if (value(j))
			return -1;
		j->path[old] = 0;
		skip_ws(j);
		if (peek(j) == ',') {
			j->pos++;
			skip_ws(j);
			if (peek(j) == ']')
				return fail(j, "trailing comma (expected another value)");
			continue;
		}
		return expect_char(j, ']', "',' or ']'");
	}
}

static int value(struct jscan *j)
{
	int c, rc;

	skip_ws(j);
	c = peek(j);
	if (c == '{' || c == '[') {
		if (++j->depth > JSON_STRICT_MAX_DEPTH)
			return fail(j, "nested deeper than %d", JSON_STRICT_MAX_DEPTH);
		rc = c == '{' ? object(j) : array(j);
		j->depth--;
		return rc;
	}
	if (c == '"')
		return string(j, NULL, NULL);
	if (c == '-' || digit(c))
		return number(j);
	if (c == '/')
		return fail(j, "comments are not JSON");
	if (c < 0)
		return fail(j, "unexpected end (expected a value)");
	return literal(j);
}

int json_strict_check(const char *text, size_t len, char *err, size_t errlen)
{
	struct jscan j = { .s = (const unsigned char *)text, .len = len, .err = err,
			   .errlen = errlen };

	if (value(&j))
		return -1;
	skip_ws(&j);
	if (j.pos < j.len)
		return fail(&j, j.s[j.pos] == '{' || j.s[j.pos] == '[' ?
			    "a second value after the first (expected one JSON object)" :
			    j.s[j.pos] == '/' ? "comments are not JSON" :
			    "trailing data after the JSON value");
	return 0;
}
