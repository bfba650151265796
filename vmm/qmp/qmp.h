/* SPDX-License-Identifier: MIT */
/*
 * The control socket, in QEMU's QMP wire format (docs/qmp.md).
 *
 * Two layers:
 *  - a session (struct qmp_session) is the protocol state of one client:
 *    input framing, the capabilities-negotiation state, request parsing,
 *    dispatch through the command table, replies. It knows nothing about
 *    sockets: bytes go in with qmp_session_feed(), complete reply lines come
 *    out through a write callback. Unit tests and the fuzzer drive it directly.
 *  - the server (struct qmp_server) owns the listening Unix socket and one
 *    session per connected client on the VMM's event loop, with a bounded
 *    output queue per client so a stuck reader never blocks anyone.
 *
 * Everything here runs on the event-loop thread.
 */
#ifndef CAPVISOR_QMP_H
#define CAPVISOR_QMP_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "vmm/qmp/qmp_backend.h"

struct evloop;
struct qmp_server;
struct qmp_session;

/* A request larger than this gets an error and is discarded. */
#define QMP_MAX_MESSAGE		(64 * 1024)
/* Stop reading a client's requests while its unsent output is above this. */
#define QMP_OUTQ_PAUSE		(256 * 1024)
/* Drop a client whose unsent output grows above this (events it never reads). */
#define QMP_OUTQ_MAX		(1024 * 1024)
#define QMP_MAX_CLIENTS		256
/*
 * Connections the kernel queues before accept (capped by
 * net.core.somaxconn): a burst of clients must not see EAGAIN while the
 * event loop is busy for a moment.
 */
#define QMP_LISTEN_BACKLOG	4096

/* Receives one complete line of output (a JSON object and '\n'). */
typedef void (*qmp_write_fn)(void *opaque, const char *line, size_t len);
/* Sends an event to whoever should see it; consumes the reference to data. */
typedef void (*qmp_emit_fn)(void *opaque, const char *name, json_object *data);

/* ---- session: protocol without sockets ---- */

/*
 * emit may be NULL: events raised by commands then go to this session only
 * (when it has negotiated), which is what a standalone session wants.
 */
struct qmp_session *qmp_session_new(const struct qmp_backend_ops *ops, void *backend,
				    qmp_write_fn write, void *write_opaque,
				    qmp_emit_fn emit, void *emit_opaque);
void qmp_session_free(struct qmp_session *s);
/* Sends the greeting. */
void qmp_session_greet(struct qmp_session *s);
/* Consumes len bytes of input, replying to every complete request in them. */
void qmp_session_feed(struct qmp_session *s, const char *buf, size_t len);
bool qmp_session_negotiated(const struct qmp_session *s);
/* Writes an event to this session if it has negotiated; consumes data. */
void qmp_session_event(struct qmp_session *s, const char *name, json_object *data);

/* {"event": NAME, "data": DATA, "timestamp": {...}}; consumes data (may be NULL). */
json_object *qmp_event_new(const char *name, json_object *data);

/* ---- server: the Unix socket on the event loop ---- */

/*
 * Listens on PATH (mode 0600). Refuses a PATH that is not a socket or that a
 * live instance answers on; replaces a stale socket file. NULL with a message
 * in err on failure.
 */
struct qmp_server *qmp_server_new(struct evloop *loop, const char *path,
				  const struct qmp_backend_ops *ops, void *opaque,
				  char *err, size_t errlen);
/* Flushes what it can without blocking, closes all clients, removes PATH. */
void qmp_server_free(struct qmp_server *srv);
/* Sends an event to every negotiated client; consumes data (may be NULL). */
void qmp_server_emit_event(struct qmp_server *srv, const char *name, json_object *data);
/* Overrides QMP_OUTQ_MAX (tests use a small one). */
void qmp_server_set_outq_limit(struct qmp_server *srv, size_t bytes);

#endif
