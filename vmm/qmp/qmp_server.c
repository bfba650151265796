// SPDX-License-Identifier: MIT
/*
 * The QMP server: a Unix stream socket on the VMM's event loop, one
 * qmp_session per client.
 *
 * Nothing here ever blocks. Output goes to a per-client queue that is written
 * as the socket accepts it (EPOLLOUT while something is pending). A client
 * that stops reading first stops being read from (QMP_OUTQ_PAUSE: its own
 * requests can no longer grow the queue), and is dropped if events still push
 * its queue over the limit. Clients are freed only outside session callbacks
 * (a command may emit an event that overflows a client, even the caller).
 */
#include "vmm/qmp/qmp.h"
#include "util/evloop.h"
#include "util/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct qmp_client {
	struct qmp_server *srv;
	int fd;
	unsigned int id;
	struct qmp_session *session;
	char *out;			/* unsent output is out[head..len) */
	size_t head, len, cap;
	char in[4096];			/* read but not yet parsed: in[in_head..in_len) */
	size_t in_head, in_len;
	bool paused;			/* not parsing input until the queue drains */
	bool eof;			/* peer closed its side: flush, then close */
	bool out_gone;			/* peer reads no more: output is dropped */
	bool dead;			/* to be freed by sweep() */
	struct qmp_client *next;
};

struct qmp_server {
	struct evloop *loop;
	int fd;
	char *path;
	dev_t dev;
	ino_t ino;
	const struct qmp_backend_ops *ops;
	void *opaque;
	struct qmp_client *clients;
	unsigned int nr_clients, next_id;
	unsigned int busy;		/* nesting depth of session callbacks */
	size_t outq_max;
	size_t outq_pause;
};

static void set_events(struct qmp_client *c)
{
	uint32_t ev = c->paused || c->eof ? 0 : EPOLLIN;

	if (c->len > c->head && !c->out_gone)
		ev |= EPOLLOUT;
	evloop_mod_fd(c->srv->loop, c->fd, ev);
}

static void kill_client(struct qmp_client *c, const char *why)
{
	if (c->dead)
		return;
	/* Dropping a client is the server's decision: worth a warning. */
	if (strstr(why, "dropped"))
		pr_warn("qmp: client %u: %s\n", c->id, why);
	else
		pr_info("qmp: client %u: %s\n", c->id, why);
	c->dead = true;
	evloop_del_fd(c->srv->loop, c->fd);
	shutdown(c->fd, SHUT_RDWR);
}

/*
 * The peer closed (or reset) with replies unread. It can read nothing more,
 * but the requests it completed before leaving are still carried out
 * (docs/qmp.md): drop the output, stop pausing, and go on reading to EOF.
 */
static void output_lost(struct qmp_client *c)
{
	if (!c->out_gone)
		pr_debug("qmp: client %u: stopped reading, its replies are dropped\n", c->id);
	c->out_gone = true;
	c->head = c->len = 0;
	c->paused = false;
}

/* Writes as much of the queue as the socket takes now; -1 if nothing more can be sent. */
static int flush_client(struct qmp_client *c)
{
	while (c->head < c->len) {
		ssize_t n = send(c->fd, c->out + c->head, c->len - c->head,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			output_lost(c);
			return -1;
		}
		if (n <= 0) {
			kill_client(c, "write failed, disconnected");
			return -1;
		}
		c->head += (size_t)n;
	}
	if (c->head == c->len)
		c->head = c->len = 0;
	return 0;
}

static bool queue_append(struct qmp_client *c, const char *line, size_t len)
{
	if (c->head && c->head >= c->cap / 2) {
		memmove(c->out, c->out + c->head, c->len - c->head);
		c->len -= c->head;
		c->head = 0;
	}
	if (c->len + len > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		char *out;

		while (cap < c->len + len)
			cap *= 2;
		out = realloc(c->out, cap);
		if (!out)
			return false;
		c->out = out;
		c->cap = cap;
	}
	memcpy(c->out + c->len, line, len);
	c->len += len;
	return true;
}

static void client_write(void *opaque, const char *line, size_t len)
{
	struct qmp_client *c = opaque;
	bool was_idle = c->head == c->len;

	if (c->dead || c->out_gone)
		return;
	if (c->len - c->head + len > c->srv->outq_max) {
		kill_client(c, "not reading its output, dropped");
		return;
	}
	if (!queue_append(c, line, len)) {
		kill_client(c, "out of memory for its output, dropped");
		return;
	}
	if (was_idle && flush_client(c) < 0)
		return;
	if (!c->paused && c->len - c->head > c->srv->outq_pause)
		c->paused = true;
	set_events(c);
}

static void free_client(struct qmp_client *c)
{
	evloop_del_fd(c->srv->loop, c->fd);	/* -ENOENT if kill_client() did */
	close(c->fd);
	qmp_session_free(c->session);
	free(c->out);
	free(c);
}

/* Frees dead clients, unless a session callback is still on the stack. */
static void sweep(struct qmp_server *srv)
{
	struct qmp_client **pp = &srv->clients, *c;

	if (srv->busy)
		return;
	while ((c = *pp)) {
		if (!c->dead) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		srv->nr_clients--;
		free_client(c);
	}
}

/*
 * Parses buffered input one line at a time, so that a client whose replies
 * pile up stops being served at the next line boundary (back-pressure)
 * instead of after everything it managed to send.
 */
static void parse_input(struct qmp_client *c)
{
	while (!c->dead && !c->paused && c->in_head < c->in_len) {
		const char *start = c->in + c->in_head;
		size_t avail = c->in_len - c->in_head;
		const char *nl = memchr(start, '\n', avail);
		size_t len = nl ? (size_t)(nl - start) + 1 : avail;

		c->in_head += len;
		qmp_session_feed(c->session, start, len);
	}
	if (c->in_head == c->in_len)
		c->in_head = c->in_len = 0;
}

static void read_client(struct qmp_client *c)
{
	size_t total = 0;

	/* Bounded per wakeup so one chatty client cannot starve the loop. */
	for (;;) {
		ssize_t n;

		parse_input(c);
		if (c->dead || c->paused || c->eof || c->in_len || total >= 64 * 1024)
			return;
		n = recv(c->fd, c->in, sizeof(c->in), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno != ECONNRESET) {
			kill_client(c, "read failed, disconnected");
			return;
		}
		/*
		 * Half-closed (e.g. socat after its script): answer, then close.
		 * A reset comes only after the data sent before it (POSIX order),
		 * so it ends the input the same way.
		 */
		if (n <= 0) {
			c->eof = true;
			return;
		}
		total += (size_t)n;
		c->in_len = (size_t)n;
	}
}

static void on_client(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct qmp_client *c = opaque;
	struct qmp_server *srv = c->srv;

	(void)loop;
	(void)fd;
	srv->busy++;
	/* On a hang-up too: a dead peer makes the write fail, which drops the client. */
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		flush_client(c);
	if (!c->dead && c->paused && c->len - c->head <= srv->outq_pause / 2)
		c->paused = false;
	if (!c->dead && !c->paused &&
	    ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || c->in_head < c->in_len))
		read_client(c);
	if (!c->dead && c->eof && c->in_head == c->in_len && (c->head == c->len || c->out_gone))
		kill_client(c, "disconnected");
	else if (!c->dead)
		set_events(c);
	srv->busy--;
	sweep(srv);
}

static void reject_client(int fd, const char *why)
{
	char line[256];
	int len = snprintf(line, sizeof(line),
			   "{\"error\":{\"class\":\"GenericError\",\"desc\":\"%s\"}}\n", why);

	if (send(fd, line, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		pr_debug("qmp: could not tell a rejected client why\n");
	close(fd);
}

static void server_emit(void *opaque, const char *name, json_object *data)
{
	qmp_server_emit_event(opaque, name, data);
}

static void add_client(struct qmp_server *srv, int fd)
{
	struct qmp_client *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->srv = srv;
	c->fd = fd;
	c->id = ++srv->next_id;
	c->session = qmp_session_new(srv->ops, srv->opaque, client_write, c, server_emit, srv);
	if (!c->session || evloop_add_fd(srv->loop, fd, EPOLLIN, on_client, c) < 0) {
		qmp_session_free(c->session);
		free(c);
		close(fd);
		return;
	}
	c->next = srv->clients;
	srv->clients = c;
	srv->nr_clients++;
	pr_debug("qmp: client %u connected\n", c->id);
	srv->busy++;
	qmp_session_greet(c->session);
	srv->busy--;
}

static void on_listen(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct qmp_server *srv = opaque;

	(void)loop;
	(void)events;
	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				pr_warn("qmp: accept: %s\n", strerror(errno));
			break;
		}
		if (srv->nr_clients >= QMP_MAX_CLIENTS)
			reject_client(cfd, "too many clients");
		else
			add_client(srv, cfd);
	}
	sweep(srv);
}

void qmp_server_emit_event(struct qmp_server *srv, const char *name, json_object *data)
{
	json_object *ev = qmp_event_new(name, data);
	const char *text = json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = strlen(text);
	char *line = malloc(len + 1);

	if (line) {
		memcpy(line, text, len);
		line[len] = '\n';
		srv->busy++;
		for (struct qmp_client *c = srv->clients; c; c = c->next)
			if (!c->dead && qmp_session_negotiated(c->session))
				client_write(c, line, len + 1);
		srv->busy--;
		free(line);
	}
	json_object_put(ev);
	sweep(srv);
}

/* Is something answering on PATH? 1 yes, 0 stale, -errno if we cannot tell. */
static int probe_live(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ret;

	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 ? 1 :
	      errno == ECONNREFUSED ? 0 : -errno;
	close(fd);
	return ret;
}

static int prepare_path(const struct sockaddr_un *addr, char *err, size_t errlen)
{
	const char *path = addr->sun_path;
	struct stat st;
	int live;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "api socket %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "api socket %s exists and is not a socket; not replacing it",
			 path);
		return -1;
	}
	live = probe_live(addr);
	if (live == 1) {
		snprintf(err, errlen, "api socket %s is in use by a running instance", path);
		return -1;
	}
	if (live < 0) {
		snprintf(err, errlen, "api socket %s: cannot tell whether it is in use: %s",
			 path, strerror(-live));
		return -1;
	}
	pr_info("qmp: replacing stale socket %s\n", path);
	if (unlink(path) < 0) {
		snprintf(err, errlen, "api socket %s: removing the stale socket: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

static int listen_on(struct qmp_server *srv, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int rc;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "api socket path is %zu bytes long, the limit is %zu",
			 strlen(path), sizeof(addr.sun_path) - 1);
		return -1;
	}
	strcpy(addr.sun_path, path);
	if (prepare_path(&addr, err, errlen) < 0)
		return -1;
	srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->fd < 0) {
		snprintf(err, errlen, "api socket: socket(): %s", strerror(errno));
		return -1;
	}
	/* The socket file is created 0600: only its owner may control the VM. */
	old = umask(0177);
	rc = bind(srv->fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (rc < 0) {
		snprintf(err, errlen, "api socket %s: bind: %s", path, strerror(errno));
		return -1;
	}
	if (chmod(path, 0600) < 0 || listen(srv->fd, QMP_LISTEN_BACKLOG) < 0 ||
	    stat(path, &st) < 0) {
		snprintf(err, errlen, "api socket %s: %s", path, strerror(errno));
		unlink(path);	/* ours: we just bound it */
		return -1;
	}
	srv->dev = st.st_dev;
	srv->ino = st.st_ino;
	return 0;
}

struct qmp_server *qmp_server_new(struct evloop *loop, const char *path,
				  const struct qmp_backend_ops *ops, void *opaque,
				  char *err, size_t errlen)
{
	struct qmp_server *srv = calloc(1, sizeof(*srv));

	if (!srv || !(srv->path = strdup(path))) {
		snprintf(err, errlen, "api socket: out of memory");
		free(srv);
		return NULL;
	}
	srv->loop = loop;
	srv->ops = ops;
	srv->opaque = opaque;
	qmp_server_set_outq_limit(srv, QMP_OUTQ_MAX);
	srv->fd = -1;
	if (listen_on(srv, path, err, errlen) < 0 ||
	    evloop_add_fd(loop, srv->fd, EPOLLIN, on_listen, srv) < 0) {
		if (srv->fd >= 0) {
			if (srv->ino)	/* listening, but the event loop refused it */
				unlink(path);
			close(srv->fd);
		}
		if (!*err)
			snprintf(err, errlen, "api socket %s: cannot watch it", path);
		free(srv->path);
		free(srv);
		return NULL;
	}
	pr_info("qmp: listening on %s\n", path);
	return srv;
}

void qmp_server_free(struct qmp_server *srv)
{
	struct stat st;

	if (!srv)
		return;
	for (struct qmp_client *c = srv->clients; c; c = c->next) {
		if (!c->dead)
			flush_client(c);	/* best effort: e.g. quit's reply */
		c->dead = true;
	}
	srv->busy = 0;
	sweep(srv);
	evloop_del_fd(srv->loop, srv->fd);
	close(srv->fd);
	/* Remove the socket file only if it is still ours. */
	if (stat(srv->path, &st) == 0 && st.st_dev == srv->dev && st.st_ino == srv->ino)
		unlink(srv->path);
	free(srv->path);
	free(srv);
}

void qmp_server_set_outq_limit(struct qmp_server *srv, size_t bytes)
{
	srv->outq_max = bytes;
	srv->outq_pause = bytes / 2 < QMP_OUTQ_PAUSE ? bytes / 2 : QMP_OUTQ_PAUSE;
}

