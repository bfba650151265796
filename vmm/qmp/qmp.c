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
#include "vmm/qmp/qmp.h"
#include "vmm/qmp/qmp_commands.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * json-c reads an integer literal beyond 64 bits as INT64_MIN or UINT64_MAX
 * and "-0" as 0, so such an id would not come back as it was sent. This scan
 * runs over the request's bytes beside the tokener and notes whether an
 * integer literal inside the top-level "id" member is one of those (one
 * elsewhere in the request must not make a valid id 0 look lossy).
 */
struct int_scan {
	bool in_string, escaped, in_number, is_int, negative, overflow;
	uint64_t magnitude;
	unsigned int depth;		/* of objects and arrays, outside strings */
	unsigned int key_len;		/* bytes of the depth-1 string being read */
	bool key_matches;		/* it reads "id" so far */
	bool key_escaped;		/* it holds an escape */
	bool last_was_id;		/* the last depth-1 string may be "id" */
	bool in_id;			/* inside the value of the top-level "id" */
	bool lossy;			/* such an integer in the id's value */
};

struct qmp_session {
	struct json_tokener *tok;
	struct int_scan scan;		/* of the request being parsed */
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

/* Length of the valid UTF-8 sequence at s, of at most left bytes (0 if none). */
static size_t utf8_seq_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		     c >= 0xf0 && c <= 0xf4 ? 4 : 0;

	if (len > left)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, UTF-16 surrogates and code points above U+10FFFF. */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

static bool utf8_valid(const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text;

	for (size_t used; len; p += used, len -= used)
		if (!(used = utf8_seq_len(p, len)))
			return false;
	return true;
}

/*
 * Replaces each byte that is not part of valid UTF-8 with '?'. Input is
 * checked, but a desc quotes it cut to a length (%.64s), which can split
 * a character; the reply must stay valid JSON text all the same.
 */
static void utf8_sanitize(char *text)
{
	unsigned char *p = (unsigned char *)text;
	size_t left = strlen(text);

	while (left) {
		size_t len = utf8_seq_len(p, left);

		if (!len) {
			*p = '?';
			len = 1;
		}
		p += len;
		left -= len;
	}
}

static void reply_error(struct qmp_session *s, const struct qmp_error *err, json_object *id)
{
	json_object *e = json_object_new_object();
	char desc[sizeof(err->desc)];

	snprintf(desc, sizeof(desc), "%s", err->desc);
	utf8_sanitize(desc);

	json_object_object_add(e, "class", json_object_new_string(qmp_error_class_name(err->cls)));
	json_object_object_add(e, "desc", json_object_new_string(desc));
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
	/*
	 * Strict JSON like QEMU's parser, but several objects may share a
	 * buffer. Strings must be valid UTF-8: an id is echoed back and must
	 * stay valid JSON in the reply.
	 */
	json_tokener_set_flags(s->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
				       JSON_TOKENER_VALIDATE_UTF8);
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

/* "an array", "null", ...: what a request was instead of an object. */
static const char *json_type_article(enum json_type type)
{
	switch (type) {
	case json_type_null:	return "null";
	case json_type_boolean:	return "a boolean";
	case json_type_double:	return "a number";
	case json_type_int:	return "a number";
	case json_type_string:	return "a string";
	case json_type_array:	return "an array";
	default:		return "an object";
	}
}

static void int_scan_end_number(struct int_scan *sc)
{
	sc->in_number = false;
	if (!sc->is_int)
		return;
	if (!sc->in_id)
		return;
	if (sc->overflow || (sc->negative && sc->magnitude > (uint64_t)INT64_MAX + 1) ||
	    (sc->negative && !sc->magnitude))
		sc->lossy = true;
}

/*
 * A string at depth 1 may be a member name: note whether it is "id". One
 * with an escape might be ("\u0069d" is "id" to json-c): count it as one.
 */
static void int_scan_string_byte(struct int_scan *sc, char ch)
{
	bool key = sc->depth == 1;

	if (sc->escaped) {
		sc->escaped = false;
	} else if (ch == '\\') {
		sc->escaped = true;
		sc->key_escaped |= key;
	} else if (ch == '"') {
		sc->in_string = false;
		if (key)
			sc->last_was_id = sc->key_escaped || (sc->key_matches && sc->key_len == 2);
	} else if (key) {
		if (sc->key_len >= 2 || ch != "id"[sc->key_len])
			sc->key_matches = false;
		sc->key_len++;
	}
}

/* Structure outside strings and numbers: nesting and which member we are in. */
static void int_scan_structure(struct int_scan *sc, char ch)
{
	if (ch == '{' || ch == '[') {
		sc->depth++;
	} else if ((ch == '}' || ch == ']') && sc->depth) {
		if (--sc->depth == 0)
			sc->in_id = false;
	} else if (sc->depth == 1 && ch == ':') {
		sc->in_id = sc->last_was_id;
	} else if (sc->depth == 1 && ch == ',') {
		sc->in_id = false;
	}
}

static void int_scan_byte(struct int_scan *sc, char ch)
{
	if (sc->in_string) {
		int_scan_string_byte(sc, ch);
		return;
	}
	if (sc->in_number) {
		unsigned int digit = (unsigned int)(ch - '0');

		if (digit <= 9) {
			if (sc->magnitude > (UINT64_MAX - digit) / 10)
				sc->overflow = true;
			else
				sc->magnitude = sc->magnitude * 10 + digit;
			return;
		}
		if (ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-') {
			sc->is_int = false;
			return;
		}
		int_scan_end_number(sc);
	}
	if (ch == '"') {
		sc->in_string = true;
		sc->key_len = 0;
		sc->key_matches = true;
		sc->key_escaped = false;
	} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
		sc->in_number = sc->is_int = true;
		sc->negative = ch == '-';
		sc->overflow = false;
		sc->magnitude = sc->negative ? 0 : (uint64_t)(ch - '0');
	} else {
		int_scan_structure(sc, ch);
	}
}

/* Why V would not be echoed exactly as it was sent, or NULL if it would. */
static const char *echo_problem(json_object *v, bool lossy_ints)
{
	const char *why = NULL;

	switch (json_object_get_type(v)) {
	case json_type_int:
		/* What json-c makes of a literal beyond 64 bits, or of -0. */
		if (lossy_ints && (json_object_get_int64(v) == INT64_MIN ||
				   json_object_get_int64(v) == 0 ||
				   json_object_get_uint64(v) == UINT64_MAX))
			return "an integer that cannot be echoed exactly (expected "
			       "-9223372036854775808..18446744073709551615, not -0)";
		return NULL;
	case json_type_string:
		/* json-c lets UTF-16 surrogates and overlong forms through. */
		return utf8_valid(json_object_get_string(v), (size_t)json_object_get_string_len(v)) ?
		       NULL : "a string that is not valid UTF-8";
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(v) && !why; i++)
			why = echo_problem(json_object_array_get_idx(v, i), lossy_ints);
		return why;
	case json_type_object: {
		json_object_object_foreach(v, key, val) {
			if (!utf8_valid(key, strlen(key)))
				return "a key that is not valid UTF-8";
			if ((why = echo_problem(val, lossy_ints)))
				return why;
		}
		return NULL;
	}
	default:
		return NULL;
	}
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

/* lossy_ints: the request's id held an integer literal json-c could not keep exactly. */
static void handle_request(struct qmp_session *s, json_object *req, bool lossy_ints)
{
	struct qmp_error err = { .cls = QMP_ERR_GENERIC };
	json_object *id, *args, *ret = NULL;
	const struct qmp_command *cmd;
	const char *name, *why;
	bool is_caps;

	if (!json_object_is_type(req, json_type_object)) {
		reply_errorf(s, NULL, "QMP input must be a JSON object, not %s",
			     json_type_article(json_object_get_type(req)));
		return;
	}
	id = json_object_object_get(req, "id");
	if (id && (why = echo_problem(id, lossy_ints))) {
		reply_errorf(s, NULL, "QMP input member 'id' holds %s", why);
		return;
	}
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
	memset(&s->scan, 0, sizeof(s->scan));
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

	for (size_t i = 0; i < (obj ? used : n); i++)
		int_scan_byte(&s->scan, buf[i]);
	/* A complete value; json-c hands back NULL for a JSON null. */
	if (obj || jerr == json_tokener_success) {
		bool lossy = s->scan.lossy;

		reset_parser(s, false);
		handle_request(s, obj, lossy);
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
