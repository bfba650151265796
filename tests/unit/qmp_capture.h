/* SPDX-License-Identifier: MIT */
/*
 * Unit-test helper: a QMP session over the fake VM whose output lines are
 * captured and parsed back, so tests can assert on replies and events.
 */
#ifndef CAPVISOR_TESTS_QMP_CAPTURE_H
#define CAPVISOR_TESTS_QMP_CAPTURE_H

#include <string.h>

#include "tests/lib/qmp_fake_vm.h"

#define CAPTURE_MAX_LINES 64

struct capture {
	struct fake_vm vm;
	struct qmp_session *s;
	char *lines[CAPTURE_MAX_LINES];
	int nr_lines;
};

static inline void capture_write(void *opaque, const char *line, size_t len)
{
	struct capture *c = opaque;

	if (c->nr_lines < CAPTURE_MAX_LINES)
		c->lines[c->nr_lines++] = strndup(line, len);
}

static inline void capture_emit(void *opaque, const char *name, json_object *data)
{
	qmp_session_event(((struct capture *)opaque)->s, name, data);
}

static inline void capture_open(struct capture *c, unsigned int nr_vcpus)
{
	memset(c, 0, sizeof(*c));
	fake_vm_init(&c->vm, nr_vcpus);
	c->vm.emit = capture_emit;
	c->vm.emit_opaque = c;
	c->s = qmp_session_new(&fake_vm_ops, &c->vm, capture_write, c, NULL, NULL);
	qmp_session_greet(c->s);
}

static inline void capture_close(struct capture *c)
{
	qmp_session_free(c->s);
	for (int i = 0; i < c->nr_lines; i++)
		free(c->lines[i]);
}

static inline void capture_feed_bytes(struct capture *c, const char *buf, size_t len)
{
	qmp_session_feed(c->s, buf, len);
}

static inline void capture_feed(struct capture *c, const char *text)
{
	qmp_session_feed(c->s, text, strlen(text));
}

/* Opened and past qmp_capabilities: lines 0 (greeting) and 1 (its return). */
static inline void capture_negotiated(struct capture *c, unsigned int nr_vcpus)
{
	capture_open(c, nr_vcpus);
	capture_feed(c, "{\"execute\":\"qmp_capabilities\"}\n");
}

/* Line i parsed (caller puts it), NULL if missing or not one JSON value + '\n'. */
static inline json_object *capture_line(struct capture *c, int i)
{
	size_t len;

	if (i < 0 || i >= c->nr_lines)
		return NULL;
	len = strlen(c->lines[i]);
	if (!len || c->lines[i][len - 1] != '\n' || memchr(c->lines[i], '\n', len - 1))
		return NULL;
	return json_tokener_parse(c->lines[i]);
}

static inline bool capture_is_error(struct capture *c, int i, const char *cls, const char *desc)
{
	json_object *o = capture_line(c, i), *e, *v;
	bool ok = o && json_object_object_get_ex(o, "error", &e) &&
		  json_object_object_get_ex(e, "class", &v) &&
		  !strcmp(json_object_get_string(v), cls) &&
		  json_object_object_get_ex(e, "desc", &v) &&
		  strstr(json_object_get_string(v), desc);

	if (!ok)
		fprintf(stderr, "\nline %d: %s (wanted %s: %s)\n", i,
			i < c->nr_lines ? c->lines[i] : "(none)", cls, desc);
	json_object_put(o);
	return ok;
}

static inline bool capture_is_return(struct capture *c, int i)
{
	json_object *o = capture_line(c, i);
	bool ok = o && json_object_object_get_ex(o, "return", NULL);

	if (!ok)
		fprintf(stderr, "\nline %d: %s (wanted a return)\n", i,
			i < c->nr_lines ? c->lines[i] : "(none)");
	json_object_put(o);
	return ok;
}

static inline bool capture_is_event(struct capture *c, int i, const char *name)
{
	json_object *o = capture_line(c, i), *v, *ts;
	bool ok = o && json_object_object_get_ex(o, "event", &v) &&
		  !strcmp(json_object_get_string(v), name) &&
		  json_object_object_get_ex(o, "timestamp", &ts) &&
		  json_object_object_get_ex(ts, "seconds", NULL) &&
		  json_object_object_get_ex(ts, "microseconds", NULL);

	json_object_put(o);
	return ok;
}

/* The reply's id, serialized, equals want. */
static inline bool capture_id_is(struct capture *c, int i, const char *want)
{
	json_object *o = capture_line(c, i), *id;
	bool ok = o && json_object_object_get_ex(o, "id", &id) &&
		  !strcmp(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN), want);

	json_object_put(o);
	return ok;
}

#endif
