// SPDX-License-Identifier: MIT
/*
 * The QMP client of `capvisor ctl` and `capvisor top` (qmp_client.h).
 *
 * Whatever the server sends, the result is a message or a clear error,
 * never a hang or a crash: input goes through json-c's strict tokener with
 * UTF-8 validation, a message may not exceed QMP_CLIENT_MAX_MESSAGE bytes,
 * every wait has a deadline (one per command, so a server that trickles
 * bytes or floods events cannot stretch it), and every message must be an
 * object that is a greeting, an event or the reply to our request. After
 * any failure the connection is marked unusable, since what comes next
 * can no longer be matched to a request.
 */
#include "cli/qmp_client.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum conn_state {
	CONN_OPEN,
	CONN_EOF,			/* closed by the server between two messages */
	CONN_BROKEN,			/* closed mid-message, timed out, or invalid input */
};

struct qmp_conn {
	int fd;
	int timeout_ms;
	struct json_tokener *tok;
	char buf[4096];
	size_t head, len;		/* unparsed input is buf[head..len) */
	size_t msg_bytes;		/* bytes of the message being parsed */
	bool mid_message;		/* part of a message has been parsed */
	long next_id;
	qmp_conn_event_fn on_event;
	void *event_opaque;
	enum conn_state state;
};

static int fail(struct qmp_conn *c, enum conn_state state, char *err, size_t errlen,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(struct qmp_conn *c, enum conn_state state, char *err, size_t errlen,
		const char *fmt, ...)
{
	va_list ap;

	c->state = state;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* Parses buffered input: 1 with *msg, 0 if more input is needed, -1 on bad input. */
static int parse_buffered(struct qmp_conn *c, json_object **msg, char *err, size_t errlen)
{
	while (c->head < c->len) {
		size_t avail = c->len - c->head, used;
		enum json_tokener_error jerr;
		json_object *obj;

		if (!c->mid_message && is_space(c->buf[c->head])) {
			c->head++;	/* between messages */
			continue;
		}
		c->mid_message = true;
		obj = json_tokener_parse_ex(c->tok, c->buf + c->head, (int)avail);
		jerr = json_tokener_get_error(c->tok);
		used = json_tokener_get_parse_end(c->tok);
		c->head += used;
		c->msg_bytes += used;
		if (jerr == json_tokener_success) {
			json_tokener_reset(c->tok);
			c->mid_message = false;
			c->msg_bytes = 0;
			if (!json_object_is_type(obj, json_type_object)) {
				json_object_put(obj);
				return fail(c, CONN_BROKEN, err, errlen,
					    "the server sent a message that is not a JSON object");
			}
			*msg = obj;
			return 1;
		}
		if (jerr != json_tokener_continue)
			return fail(c, CONN_BROKEN, err, errlen, "the server sent invalid JSON (%s)",
				    json_tokener_error_desc(jerr));
		if (used < avail)	/* the tokener stops at a NUL byte */
			return fail(c, CONN_BROKEN, err, errlen,
				    "the server sent invalid JSON (a NUL byte)");
		if (c->msg_bytes > QMP_CLIENT_MAX_MESSAGE)
			return fail(c, CONN_BROKEN, err, errlen,
				    "the server sent a message larger than %d bytes",
				    QMP_CLIENT_MAX_MESSAGE);
	}
	c->head = c->len = 0;
	return 0;
}

/* Reads more input by the deadline: 0; 1 at the deadline; -1 with the reason. */
static int read_more(struct qmp_conn *c, long long deadline, char *err, size_t errlen)
{
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		long long left = deadline - now_ms();
		int ready = poll(&pfd, 1, left > 0 ? (int)left : 0);
		ssize_t n;

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return fail(c, CONN_BROKEN, err, errlen, "poll: %s", strerror(errno));
		if (!ready) {
			snprintf(err, errlen, "no reply in time");
			return 1;
		}
		n = recv(c->fd, c->buf, sizeof(c->buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(c, CONN_BROKEN, err, errlen, "reading from the server: %s",
				    strerror(errno));
		if (!n && c->mid_message)
			return fail(c, CONN_BROKEN, err, errlen,
				    "the connection was closed in the middle of a message");
		if (!n)
			return fail(c, CONN_EOF, err, errlen, "the connection was closed");
		c->len = (size_t)n;
		return 0;
	}
}

/* The next message by the deadline: 0 with *msg; 1 at the deadline; -1 with the reason. */
static int next_message(struct qmp_conn *c, long long deadline, json_object **msg,
			char *err, size_t errlen)
{
	*msg = NULL;
	if (c->state != CONN_OPEN)
		return fail(c, c->state, err, errlen, "the connection is no longer usable");
	for (;;) {
		int got = parse_buffered(c, msg, err, errlen), rc;

		if (got)
			return got > 0 ? 0 : -1;
		if ((rc = read_more(c, deadline, err, errlen)))
			return rc;
	}
}

/* Copies a server's text for a terminal: control characters (C0, DEL, C1) become '?'. */
static void copy_printable(char *dst, size_t len, const char *src)
{
	size_t j = 0;

	for (size_t i = 0; src[i] && j + 1 < len; i++) {
		unsigned char ch = (unsigned char)src[i], next = (unsigned char)src[i + 1];

		if (ch == 0xc2 && next >= 0x80 && next <= 0x9f) {
			dst[j++] = '?';
			i++;
			continue;
		}
		dst[j++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	if (len)
		dst[j] = '\0';
}

static const char *string_member(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The server went away between two messages (a VM quitting), or the socket broke. */
static int send_failed(struct qmp_conn *c, const char *cmd, char *err, size_t errlen)
{
	if ((errno == EPIPE || errno == ECONNRESET) && !c->mid_message)
		return fail(c, CONN_EOF, err, errlen, "%s: the connection was closed", cmd);
	return fail(c, CONN_BROKEN, err, errlen, "sending %s: %s", cmd, strerror(errno));
}

static int send_request(struct qmp_conn *c, const char *cmd, json_object *args, long id,
			char *err, size_t errlen)
{
	json_object *req = json_object_new_object();
	const char *line;
	char *text;
	int rc = 0;

	json_object_object_add(req, "execute", json_object_new_string(cmd));
	if (args)
		json_object_object_add(req, "arguments", json_object_get(args));
	json_object_object_add(req, "id", json_object_new_int64(id));
	/* One write with the newline: the server may act (quit) and close at the '}'. */
	line = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	text = malloc(strlen(line) + 2);
	if (!text)
		rc = fail(c, CONN_BROKEN, err, errlen, "%s: out of memory", cmd);
	else if (sprintf(text, "%s\n", line), send_all(c->fd, text, strlen(text)) < 0)
		rc = send_failed(c, cmd, err, errlen);
	free(text);
	json_object_put(req);
	return rc;
}

/* Events go to the callback: 0; -1 if MSG claims to be one but is not. */
static int take_event(struct qmp_conn *c, json_object *msg, char *err, size_t errlen)
{
	if (!string_member(msg, "event"))
		return fail(c, CONN_BROKEN, err, errlen,
			    "the server sent an event whose name is not a string");
	if (c->on_event)
		c->on_event(c->event_opaque, msg);
	return 0;
}

/* The reply MSG to request WANT: 0 with *ret, 1 refused (reason in err), -1 invalid. */
static int take_reply(struct qmp_conn *c, json_object *msg, long want, json_object **ret,
		      char *err, size_t errlen)
{
	json_object *id, *val, *error;
	const char *cls, *desc;
	char shown[256];
	bool has_ret = json_object_object_get_ex(msg, "return", &val);
	bool has_err = json_object_object_get_ex(msg, "error", &error);

	if (has_ret == has_err)
		return fail(c, CONN_BROKEN, err, errlen, has_ret ?
			    "a reply with both 'return' and 'error'" :
			    "a message that is neither a reply nor an event");
	if (!json_object_object_get_ex(msg, "id", &id) || !json_object_is_type(id, json_type_int) ||
	    json_object_get_int64(id) != want) {
		if (has_err && (desc = string_member(error, "desc"))) {
			copy_printable(shown, sizeof(shown), desc);
			return fail(c, CONN_BROKEN, err, errlen,
				    "an error that is not a reply to the request: %s", shown);
		}
		return fail(c, CONN_BROKEN, err, errlen,
			    "a reply without the request's id (%ld)", want);
	}
	if (has_ret) {
		*ret = json_object_get(val);
		return 0;
	}
	cls = string_member(error, "class");
	desc = string_member(error, "desc");
	if (!cls || !desc)
		return fail(c, CONN_BROKEN, err, errlen,
			    "an error reply without a string 'class' and 'desc'");
	copy_printable(shown, sizeof(shown), cls);
	snprintf(err, errlen, "%s: ", shown);
	copy_printable(shown, sizeof(shown), desc);
	strncat(err, shown, errlen - strlen(err) - 1);
	return 1;
}

int qmp_conn_execute(struct qmp_conn *c, const char *cmd, json_object *args,
		     json_object **ret, char *err, size_t errlen)
{
	long long deadline = now_ms() + c->timeout_ms;
	long want = ++c->next_id;
	char why[384];
	json_object *msg;
	int rc = 0;

	*ret = NULL;
	if (c->state != CONN_OPEN)
		return fail(c, c->state, err, errlen, "%s: the connection is no longer usable", cmd);
	if (send_request(c, cmd, args, want, err, errlen) < 0)
		return -1;
	for (;;) {
		bool event;

		rc = next_message(c, deadline, &msg, why, sizeof(why));
		if (rc)		/* a late reply could not be told from the next one's */
			return fail(c, c->state == CONN_EOF ? CONN_EOF : CONN_BROKEN, err, errlen,
				    "%s: %s", cmd, why);
		event = json_object_object_get_ex(msg, "event", NULL);
		rc = event ? take_event(c, msg, why, sizeof(why)) :
			     take_reply(c, msg, want, ret, why, sizeof(why));
		json_object_put(msg);
		if (!event || rc)
			break;
	}
	if (rc > 0)
		snprintf(err, errlen, "%s", why);
	else if (rc < 0)
		snprintf(err, errlen, "%s: invalid reply from the server: %s", cmd, why);
	return rc;
}

int qmp_conn_poll_events(struct qmp_conn *c, int timeout_ms, char *err, size_t errlen)
{
	long long deadline = now_ms() + timeout_ms;
	json_object *msg;
	int rc;

	/* Until nothing more is there by the deadline (not a failure here). */
	while (!(rc = next_message(c, deadline, &msg, err, errlen))) {
		if (!json_object_object_get_ex(msg, "event", NULL))
			rc = fail(c, CONN_BROKEN, err, errlen,
				  "the server sent a reply to no request");
		else
			rc = take_event(c, msg, err, errlen);
		json_object_put(msg);
		if (rc)
			return -1;
		deadline = 0;	/* then only what has already arrived */
	}
	return rc > 0 ? 0 : -1;
}

static int connect_to(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The greeting: 0, or -1 with what came instead. */
static int read_greeting(struct qmp_conn *c, const char *name, char *err, size_t errlen)
{
	json_object *greeting, *qmp, *error;
	char why[384], shown[256];
	const char *desc;

	if (next_message(c, now_ms() + c->timeout_ms, &greeting, why, sizeof(why))) {
		snprintf(err, errlen, "%s: no QMP greeting (%s)", name, why);
		return -1;
	}
	if (json_object_object_get_ex(greeting, "QMP", &qmp) &&
	    json_object_is_type(qmp, json_type_object)) {
		json_object_put(greeting);
		return 0;
	}
	/* e.g. "too many clients" */
	if (json_object_object_get_ex(greeting, "error", &error) &&
	    (desc = string_member(error, "desc"))) {
		copy_printable(shown, sizeof(shown), desc);
		snprintf(err, errlen, "%s: the server refused the connection: %s", name, shown);
	} else {
		snprintf(err, errlen, "%s: no QMP greeting (the first message is not one)", name);
	}
	json_object_put(greeting);
	return -1;
}

struct qmp_conn *qmp_conn_open_fd(int fd, const char *name, int timeout_ms, char *err,
				  size_t errlen)
{
	struct qmp_conn *c = calloc(1, sizeof(*c));
	json_object *ret;

	if (!c || !(c->tok = json_tokener_new())) {
		free(c);	/* c->tok is NULL here */
		close(fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(c->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
				       JSON_TOKENER_VALIDATE_UTF8);
	c->fd = fd;
	c->timeout_ms = timeout_ms;
	if (read_greeting(c, name, err, errlen) < 0 ||
	    qmp_conn_execute(c, "qmp_capabilities", NULL, &ret, err, errlen)) {
		qmp_conn_close(c);
		return NULL;
	}
	json_object_put(ret);
	return c;
}

struct qmp_conn *qmp_conn_open(const char *path, int timeout_ms, char *err, size_t errlen)
{
	int fd = connect_to(path, err, errlen);

	return fd < 0 ? NULL : qmp_conn_open_fd(fd, path, timeout_ms, err, errlen);
}

void qmp_conn_close(struct qmp_conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->tok)
		json_tokener_free(c->tok);
	free(c);
}

void qmp_conn_on_event(struct qmp_conn *c, qmp_conn_event_fn fn, void *opaque)
{
	c->on_event = fn;
	c->event_opaque = opaque;
}

bool qmp_conn_closed(const struct qmp_conn *c)
{
	return c->state == CONN_EOF;
}

int qmp_conn_fd(const struct qmp_conn *c)
{
	return c->fd;
}

int qmp_client_parse_timeout(const char *text)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(text, &end);
	if (!*text || *end || errno || !(s >= 0.001 && s <= QMP_CLIENT_TIMEOUT_MAX_S))
		return -1;
	return (int)ceil(s * 1000);
}
