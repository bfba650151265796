/* SPDX-License-Identifier: MIT */
/*
 * A small synchronous QMP client for `capvisor ctl` and `capvisor top`:
 * connect, read the greeting, negotiate, then execute commands one at a
 * time. Events that arrive in between are handed to an optional callback.
 */
#ifndef CAPVISOR_QMP_CLIENT_H
#define CAPVISOR_QMP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

struct qmp_conn;

typedef void (*qmp_conn_event_fn)(void *opaque, json_object *event);

/* NULL with the reason in err. timeout_ms bounds every wait for the server. */
struct qmp_conn *qmp_conn_open(const char *path, int timeout_ms, char *err, size_t errlen);
void qmp_conn_close(struct qmp_conn *c);
void qmp_conn_on_event(struct qmp_conn *c, qmp_conn_event_fn fn, void *opaque);
int qmp_conn_fd(const struct qmp_conn *c);
/* Whether the server has gone away (end of file, reset, or unparsable input). */
bool qmp_conn_closed(const struct qmp_conn *c);

/*
 * Runs CMD with ARGS (may be NULL; not consumed). Returns 0 with *ret (the
 * "return" value, caller puts it); 1 when the server answered with an error
 * (its class and desc in err as "Class: desc"); -1 when the connection failed
 * (reason in err).
 */
int qmp_conn_execute(struct qmp_conn *c, const char *cmd, json_object *args,
		     json_object **ret, char *err, size_t errlen);

/* Waits up to timeout_ms for input and passes any events on; -1 if the connection closed. */
int qmp_conn_poll_events(struct qmp_conn *c, int timeout_ms);

#endif
