// SPDX-License-Identifier: MIT
#include "vmm/qmp_client.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct qmp_conn {
	int fd;
	int timeout_ms;
	struct json_tokener *tok;
	char buf[4096];
	size_t head, len;		/* unparsed input is buf[head..len) */
	long next_id;
	qmp_conn_event_fn on_event;
	void *event_opaque;
	bool closed;			/* the server went away (EOF, reset, garbage) */
};

/* Next complete message, or NULL: *closed tells a closed socket from a timeout. */
static json_object *next_message(struct qmp_conn *c, int timeout_ms, bool *closed)
{
	*closed = false;
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		ssize_t n;

		while (c->head < c->len) {
			int avail = (int)(c->len - c->head);
			json_object *obj = json_tokener_parse_ex(c->tok, c->buf + c->head, avail);
			enum json_tokener_error jerr = json_tokener_get_error(c->tok);

			c->head += obj ? json_tokener_get_parse_end(c->tok) : (size_t)avail;
			if (obj) {
				json_tokener_reset(c->tok);
				return obj;
			}
			if (jerr != json_tokener_continue) {
				*closed = c->closed = true;	/* garbage from the server: give up */
				return NULL;
			}
		}
		c->head = c->len = 0;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return NULL;
		n = recv(c->fd, c->buf, sizeof(c->buf), 0);
		if (n <= 0) {
			*closed = c->closed = true;
			return NULL;
		}
		c->len = (size_t)n;
	}
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

static bool is_event(json_object *msg)
{
	return json_object_object_get_ex(msg, "event", NULL);
}

static void deliver_event(struct qmp_conn *c, json_object *msg)
{
	if (c->on_event)
		c->on_event(c->event_opaque, msg);
}

int qmp_conn_execute(struct qmp_conn *c, const char *cmd, json_object *args,
		     json_object **ret, char *err, size_t errlen)
{
	json_object *req = json_object_new_object(), *msg, *id, *val;
	long want = ++c->next_id;
	const char *line;
	char *text;
	bool closed;

	*ret = NULL;
	json_object_object_add(req, "execute", json_object_new_string(cmd));
	if (args)
		json_object_object_add(req, "arguments", json_object_get(args));
	json_object_object_add(req, "id", json_object_new_int64(want));
	/* One write with the newline: the server may act (quit) and close at the '}'. */
	line = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	text = malloc(strlen(line) + 2);
	if (!text || (sprintf(text, "%s\n", line), send_all(c->fd, text, strlen(text)) < 0)) {
		if (text && (errno == EPIPE || errno == ECONNRESET))
			c->closed = true;
		free(text);
		json_object_put(req);
		snprintf(err, errlen, "sending %s: %s", cmd, strerror(errno));
		return -1;
	}
	free(text);
	json_object_put(req);
	while ((msg = next_message(c, c->timeout_ms, &closed))) {
		if (is_event(msg)) {
			deliver_event(c, msg);
		} else if (json_object_object_get_ex(msg, "id", &id) &&
			   json_object_get_int64(id) == want) {
			if (json_object_object_get_ex(msg, "return", &val)) {
				*ret = json_object_get(val);
				json_object_put(msg);
				return 0;
			}
			if (json_object_object_get_ex(msg, "error", &val)) {
				snprintf(err, errlen, "%s: %s",
					 json_object_get_string(json_object_object_get(val, "class")),
					 json_object_get_string(json_object_object_get(val, "desc")));
				json_object_put(msg);
				return 1;
			}
		}
		json_object_put(msg);
	}
	snprintf(err, errlen, "%s: %s", cmd, closed ? "the connection was closed"
						   : "no reply in time");
	return -1;
}

int qmp_conn_poll_events(struct qmp_conn *c, int timeout_ms)
{
	json_object *msg;
	bool closed;

	while ((msg = next_message(c, timeout_ms, &closed))) {
		if (is_event(msg))
			deliver_event(c, msg);
		json_object_put(msg);
		timeout_ms = 0;
	}
	return closed ? -1 : 0;
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

struct qmp_conn *qmp_conn_open(const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct qmp_conn *c = calloc(1, sizeof(*c));
	json_object *greeting, *ret;
	bool closed;

	if (!c || !(c->tok = json_tokener_new())) {
		free(c);	/* c->tok is NULL here */
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->timeout_ms = timeout_ms;
	c->fd = connect_to(path, err, errlen);
	if (c->fd < 0) {
		qmp_conn_close(c);
		return NULL;
	}
	greeting = next_message(c, timeout_ms, &closed);
	if (!greeting || !json_object_object_get_ex(greeting, "QMP", NULL)) {
		snprintf(err, errlen, "%s: no QMP greeting (%s)", path,
			 greeting ? "unexpected message" : closed ? "connection closed" : "timeout");
		json_object_put(greeting);
		qmp_conn_close(c);
		return NULL;
	}
	json_object_put(greeting);
	if (qmp_conn_execute(c, "qmp_capabilities", NULL, &ret, err, errlen)) {
		qmp_conn_close(c);
		return NULL;
	}
	json_object_put(ret);
	return c;
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
	return c->closed;
}

int qmp_conn_fd(const struct qmp_conn *c)
{
	return c->fd;
}
