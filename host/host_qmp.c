// SPDX-License-Identifier: MIT
/*
 * The host's QMP socket (docs/host.md): the session (greeting,
 * qmp_capabilities, one request per line, replies and events) around the
 * command table of host_qmp_cmds.c. The same wire format as a VM's
 * socket, so `capvisor ctl` and `capvisor top` work against it.
 */
#include "host/host_qmp_cmds.h"
#include "util/evloop.h"
#include "util/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define HQ_MAX_CLIENTS	32
#define HQ_MAX_LINE	(64 * 1024)

struct hq_client {
	int fd;
	bool negotiated;
	json_object *id;		/* of the request being answered, echoed back */
	size_t len;
	char buf[HQ_MAX_LINE];
};

struct host_qmp {
	struct host *h;
	int fd;
	char path[108];
	struct hq_client *c[HQ_MAX_CLIENTS];
};

static void send_obj(struct hq_client *c, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s);

	/* A client that does not read its replies loses them, never blocks the host. */
	if (send(c->fd, s, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len)
		send(c->fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	json_object_put(o);
}

static void reply_error(struct hq_client *c, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reply_error(struct hq_client *c, const char *cls, const char *fmt, ...)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();
	char desc[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	json_object_object_add(e, "class", json_object_new_string(cls));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(o, "error", e);
	if (c->id)
		json_object_object_add(o, "id", json_object_get(c->id));
	send_obj(c, o);
}

static void reply_return(struct hq_client *c, json_object *ret)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "return", ret ? ret : json_object_new_object());
	if (c->id)
		json_object_object_add(o, "id", json_object_get(c->id));
	send_obj(c, o);
}

static void execute(struct host_qmp *q, struct hq_client *c, const char *name,
		    json_object *args)
{
	const struct hq_command *cmd = hq_command_find(name);
	char err[HQ_ERR_LEN], names[1024];
	json_object *ret;

	if (!strcmp(name, "qmp_capabilities")) {
		c->negotiated = true;
		return reply_return(c, NULL);
	}
	if (!c->negotiated)
		return reply_error(c, "CommandNotFound", "expected qmp_capabilities first");
	if (!cmd) {
		hq_command_names(names, sizeof(names));
		return reply_error(c, "CommandNotFound", "the host has no command '%.64s' "
				   "(expected one of: %s)", name, names);
	}
	if (hq_command_run(q->h, cmd, args, &ret, err))
		return reply_error(c, "GenericError", "%s", err);
	reply_return(c, ret);
}

static void handle_line(struct host_qmp *q, struct hq_client *c, const char *line)
{
	json_object *req = json_tokener_parse(line), *cmd, *args = NULL;

	c->id = NULL;
	if (req && json_object_is_type(req, json_type_object))
		json_object_object_get_ex(req, "id", &c->id);

	if (!req || !json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "execute", &cmd) ||
	    !json_object_is_type(cmd, json_type_string)) {
		reply_error(c, "GenericError", "expected a JSON object with \"execute\"");
	} else {
		json_object_object_get_ex(req, "arguments", &args);
		if (args && !json_object_is_type(args, json_type_object))
			reply_error(c, "GenericError", "'arguments': expected an object");
		else
			execute(q, c, json_object_get_string(cmd), args);
	}
	c->id = NULL;
	json_object_put(req);
}

static void drop_client(struct host_qmp *q, unsigned int i)
{
	evloop_del_fd(q->h->loop, q->c[i]->fd);
	close(q->c[i]->fd);
	free(q->c[i]);
	q->c[i] = NULL;
}

static void client_readable(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct host_qmp *q = opaque;
	struct hq_client *c = NULL;
	unsigned int i;
	ssize_t n;
	char *nl;

	(void)loop;
	(void)events;
	for (i = 0; i < HQ_MAX_CLIENTS && !c; i++)
		if (q->c[i] && q->c[i]->fd == fd)
			c = q->c[i];
	if (!c)
		return;
	i--;
	n = recv(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			drop_client(q, i);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	while ((nl = strchr(c->buf, '\n'))) {
		*nl = '\0';
		handle_line(q, c, c->buf);
		c->len -= (size_t)(nl + 1 - c->buf);
		memmove(c->buf, nl + 1, c->len + 1);
	}
	if (c->len >= sizeof(c->buf) - 1) {
		reply_error(c, "GenericError", "request longer than %d bytes", HQ_MAX_LINE);
		drop_client(q, i);
	}
}

static void greet(struct hq_client *c)
{
	json_object *o = json_object_new_object(), *qmp = json_object_new_object();

	json_object_object_add(qmp, "version", json_object_new_string(CAPVISOR_VERSION));
	json_object_object_add(qmp, "capabilities", json_object_new_array());
	json_object_object_add(qmp, "host", json_object_new_boolean(true));
	json_object_object_add(o, "QMP", qmp);
	send_obj(c, o);
}

static void qmp_accept(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct host_qmp *q = opaque;
	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	(void)events;
	if (cfd < 0)
		return;
	for (unsigned int i = 0; i < HQ_MAX_CLIENTS; i++) {
		if (q->c[i])
			continue;
		q->c[i] = calloc(1, sizeof(*q->c[i]));
		if (!q->c[i])
			break;
		q->c[i]->fd = cfd;
		greet(q->c[i]);
		evloop_add_fd(loop, cfd, EPOLLIN, client_readable, q);
		return;
	}
	close(cfd);
}

struct host_qmp *host_qmp_new(struct host *h, const char *path, char *err, size_t errlen)
{
	struct host_qmp *q = calloc(1, sizeof(*q));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!q || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--api-socket: %s", q ? "path too long" : "out of memory");
		free(q);
		return NULL;
	}
	q->h = h;
	snprintf(q->path, sizeof(q->path), "%s", path);
	strcpy(sa.sun_path, path);
	unlink(path);
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (q->fd < 0 || bind(q->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(q->fd, 64) ||
	    chmod(path, 0600) || evloop_add_fd(h->loop, q->fd, EPOLLIN, qmp_accept, q)) {
		snprintf(err, errlen, "--api-socket '%s': %s", path, strerror(errno));
		if (q->fd >= 0)
			close(q->fd);
		free(q);
		return NULL;
	}
	return q;
}

void host_qmp_free(struct host_qmp *q)
{
	if (!q)
		return;
	for (unsigned int i = 0; i < HQ_MAX_CLIENTS; i++)
		if (q->c[i])
			drop_client(q, i);
	evloop_del_fd(q->h->loop, q->fd);
	close(q->fd);
	unlink(q->path);
	free(q);
}

void host_qmp_event(struct host_qmp *q, const char *name, void *data)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	for (unsigned int i = 0; q && i < HQ_MAX_CLIENTS; i++) {
		json_object *o, *t;

		if (!q->c[i] || !q->c[i]->negotiated)
			continue;
		o = json_object_new_object();
		t = json_object_new_object();
		json_object_object_add(o, "event", json_object_new_string(name));
		json_object_object_add(o, "data", json_object_get(data));
		json_object_object_add(t, "seconds", json_object_new_int64(ts.tv_sec));
		json_object_object_add(t, "microseconds", json_object_new_int64(ts.tv_nsec / 1000));
		json_object_object_add(o, "timestamp", t);
		send_obj(q->c[i], o);
	}
	json_object_put(data);
}
