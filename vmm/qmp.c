// SPDX-License-Identifier: MIT
/*
 * QMP sessions: framing, negotiation state, request parsing and replies.
 *
 * Framing follows QEMU: the input is a stream of JSON objects, parsed
 * incrementally, so a request may arrive one byte at a time, span several
 * lines, or share a line with the next one; newlines are just whitespace
 * between objects. After a parse error the rest of the offending line is
 * dropped (the newline is where we resynchronise), and one error reply is
 * sent. Output is one JSON object per line.
 */
#include "vmm/qmp.h"
#include "vmm/qmp_commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct qmp_session {
	struct json_tokener *tok;
	size_t msg_bytes;		/* bytes of the request being parsed */
	bool discarding;		/* dropping input up to the next newline */
	bool negotiated;
	struct qmp_cmd_ctx ctx;
	qmp_write_fn write;
	void *write_opaque;
};

int qmp_error_set(struct qmp_error *err, enum qmp_error_class cls, const char *fmt, ...)
{
	va_list ap;

	err->cls = cls;
	va_start(ap, fmt);
	vsnprintf(err->desc, sizeof(err->desc), fmt, ap);
	va_end(ap);
	return -1;
}

const char *qmp_error_class_name(enum qmp_error_class cls)
{
	return cls == QMP_ERR_COMMAND_NOT_FOUND ? "CommandNotFound" : "GenericError";
}

static void write_object(struct qmp_session *s, json_object *obj)
{
	const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = strlen(text);
	char *line = malloc(len + 1);

	if (!line)
		return;
	memcpy(line, text, len);
	line[len] = '\n';
	s->write(s->write_opaque, line, len + 1);
	free(line);
}

/* Sends a reply, echoing the request's id verbatim when it had one. */
static void reply(struct qmp_session *s, const char *key, json_object *val, json_object *id)
{
	json_object *obj = json_object_new_object();

	json_object_object_add(obj, key, val);
	if (id)
		json_object_object_add(obj, "id", json_object_get(id));
	write_object(s, obj);
	json_object_put(obj);
}

static void reply_error(struct qmp_session *s, const struct qmp_error *err, json_object *id)
{
	json_object *e = json_object_new_object();

	json_object_object_add(e, "class", json_object_new_string(qmp_error_class_name(err->cls)));
	json_object_object_add(e, "desc", json_object_new_string(err->desc));
	reply(s, "error", e, id);
}

static void reply_errorf(struct qmp_session *s, json_object *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void reply_errorf(struct qmp_session *s, json_object *id, const char *fmt, ...)
{
	struct qmp_error err = { .cls = QMP_ERR_GENERIC };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.desc, sizeof(err.desc), fmt, ap);
	va_end(ap);
	reply_error(s, &err, id);
}

json_object *qmp_event_new(const char *name, json_object *data)
{
	json_object *ev = json_object_new_object();
	json_object *ts = json_object_new_object();
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	json_object_object_add(ts, "seconds", json_object_new_int64(now.tv_sec));
	json_object_object_add(ts, "microseconds", json_object_new_int64(now.tv_nsec / 1000));
	json_object_object_add(ev, "event", json_object_new_string(name));
	if (data)
		json_object_object_add(ev, "data", data);
	json_object_object_add(ev, "timestamp", ts);
	return ev;
}

void qmp_session_event(struct qmp_session *s, const char *name, json_object *data)
{
	json_object *ev;

	if (!s->negotiated) {
		json_object_put(data);
		return;
	}
	ev = qmp_event_new(name, data);
	write_object(s, ev);
	json_object_put(ev);
}

static void self_emit(void *opaque, const char *name, json_object *data)
{
	qmp_session_event(opaque, name, data);
}

struct qmp_session *qmp_session_new(const struct qmp_backend_ops *ops, void *backend,
				    qmp_write_fn write, void *write_opaque,
				    qmp_emit_fn emit, void *emit_opaque)
{
	struct qmp_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->tok = json_tokener_new();
	if (!s->tok) {
		free(s);
		return NULL;
	}
	/* Strict JSON like QEMU's parser, but several objects may share a buffer. */
	json_tokener_set_flags(s->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	s->ctx.ops = ops;
	s->ctx.backend = backend;
	s->ctx.emit = emit ? emit : self_emit;
	s->ctx.emit_opaque = emit ? emit_opaque : s;
	s->write = write;
	s->write_opaque = write_opaque;
	return s;
}

void qmp_session_free(struct qmp_session *s)
{
	if (!s)
		return;
	json_tokener_free(s->tok);
	free(s);
}

bool qmp_session_negotiated(const struct qmp_session *s)
{
	return s->negotiated;
}

void qmp_session_greet(struct qmp_session *s)
{
	json_object *qemu = json_object_new_object();
	json_object *version = json_object_new_object();
	json_object *qmp = json_object_new_object();
	json_object *greeting = json_object_new_object();
	unsigned int major = 0, minor = 0, micro = 0;

	sscanf(CAPVISOR_VERSION, "%u.%u.%u", &major, &minor, &micro);
	json_object_object_add(qemu, "micro", json_object_new_int(micro));
	json_object_object_add(qemu, "minor", json_object_new_int(minor));
	json_object_object_add(qemu, "major", json_object_new_int(major));
	json_object_object_add(version, "qemu", qemu);
	json_object_object_add(version, "package", json_object_new_string("capvisor-" CAPVISOR_VERSION));
	json_object_object_add(qmp, "version", version);
	json_object_object_add(qmp, "capabilities", json_object_new_array());
	json_object_object_add(greeting, "QMP", qmp);
	write_object(s, greeting);
	json_object_put(greeting);
}

/* Checks the request envelope; returns the command name or NULL after replying. */
static const char *check_envelope(struct qmp_session *s, json_object *req, json_object *id,
				  json_object **args)
{
	json_object *exec = NULL;

	*args = NULL;
	json_object_object_foreach(req, key, val) {
		if (!strcmp(key, "execute"))
			exec = val;
		else if (!strcmp(key, "arguments"))
			*args = val;
		else if (strcmp(key, "id")) {
			reply_errorf(s, id, "QMP input member '%.64s' is unexpected", key);
			return NULL;
		}
	}
	if (!exec) {
		reply_errorf(s, id, "QMP input lacks member 'execute'");
		return NULL;
	}
	if (!json_object_is_type(exec, json_type_string)) {
		reply_errorf(s, id, "QMP input member 'execute' must be a string");
		return NULL;
	}
	if (*args && !json_object_is_type(*args, json_type_object)) {
		reply_errorf(s, id, "QMP input member 'arguments' must be an object");
		return NULL;
	}
	return json_object_get_string(exec);
}

static void handle_request(struct qmp_session *s, json_object *req)
{
	struct qmp_error err = { .cls = QMP_ERR_GENERIC };
	json_object *id, *args, *ret = NULL;
	const struct qmp_command *cmd;
	const char *name;
	bool is_caps;

	if (!json_object_is_type(req, json_type_object)) {
		reply_errorf(s, NULL, "QMP input must be a JSON object");
		return;
	}
	id = json_object_object_get(req, "id");
	name = check_envelope(s, req, id, &args);
	if (!name)
		return;
	is_caps = !strcmp(name, "qmp_capabilities");
	if (!s->negotiated && !is_caps) {
		qmp_error_set(&err, QMP_ERR_COMMAND_NOT_FOUND,
			      "Expecting capabilities negotiation with 'qmp_capabilities'");
	} else if (s->negotiated && is_caps) {
		qmp_error_set(&err, QMP_ERR_COMMAND_NOT_FOUND,
			      "Capabilities negotiation is already complete, command ignored");
	} else if (!(cmd = qmp_command_find(name))) {
		qmp_error_set(&err, QMP_ERR_COMMAND_NOT_FOUND,
			      "The command %.64s has not been found", name);
	} else if (qmp_command_run(cmd, &s->ctx, args, &ret, &err) == 0) {
		if (is_caps)
			s->negotiated = true;
		reply(s, "return", ret, id);
		return;
	}
	reply_error(s, &err, id);
}

static void reset_parser(struct qmp_session *s, bool discard_line)
{
	json_tokener_reset(s->tok);
	s->msg_bytes = 0;
	s->discarding = discard_line;
}

static size_t skip_space(const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
		i++;
	return i;
}

/* Parses from buf; returns how many bytes it consumed (at least 1 if len > 0). */
static size_t parse_some(struct qmp_session *s, const char *buf, size_t len)
{
	size_t room = QMP_MAX_MESSAGE - s->msg_bytes;
	size_t n = len < room ? len : room;
	json_object *obj = json_tokener_parse_ex(s->tok, buf, (int)n);
	enum json_tokener_error jerr = json_tokener_get_error(s->tok);
	size_t used = json_tokener_get_parse_end(s->tok);

	if (obj) {
		reset_parser(s, false);
		handle_request(s, obj);
		json_object_put(obj);
		return used ? used : 1;
	}
	if (jerr == json_tokener_continue && used == n) {
		s->msg_bytes += n;
		if (s->msg_bytes >= QMP_MAX_MESSAGE) {
			reply_errorf(s, NULL, "JSON parse error, message exceeds %d bytes",
				     QMP_MAX_MESSAGE);
			reset_parser(s, true);
		}
		return n;
	}
	/* A syntax error, or a byte (NUL) the tokener stopped at: drop the line. */
	reply_errorf(s, NULL, "JSON parse error, %s",
		     jerr == json_tokener_continue ? "unexpected NUL byte"
						  : json_tokener_error_desc(jerr));
	reset_parser(s, true);
	return used < n ? used : n;
}

void qmp_session_feed(struct qmp_session *s, const char *buf, size_t len)
{
	while (len) {
		size_t used;

		if (s->discarding) {
			const char *nl = memchr(buf, '\n', len);

			if (!nl)
				return;
			s->discarding = false;
			used = (size_t)(nl - buf) + 1;
		} else if (!s->msg_bytes && (used = skip_space(buf, len))) {
			;	/* whitespace between requests */
		} else {
			used = parse_some(s, buf, len);
		}
		buf += used;
		len -= used;
	}
}
