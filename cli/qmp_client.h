/* SPDX-License-Identifier: MIT */
/*
 * A small synchronous QMP client for `capvisor ctl` and `capvisor top`:
 * connect, read the greeting, negotiate, then execute commands one at a
 * time. Events that arrive in between are handed to an optional callback.
 *
 * The server is not trusted (any process can sit behind a socket path):
 * its messages must be strict JSON objects of valid UTF-8, at most
 * QMP_CLIENT_MAX_MESSAGE bytes each, and every wait for it is bounded by
 * the timeout; anything else ends the connection with a message saying
 * what was wrong. The shapes of the replies are checked by ctl_format.h.
 */
#ifndef CAPVISOR_QMP_CLIENT_H
#define CAPVISOR_QMP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* How long ctl and top wait for each reply by default (--timeout). */
#define QMP_CLIENT_TIMEOUT_MS		5000
#define QMP_CLIENT_TIMEOUT_MAX_S	3600
/* The largest message taken from a server (1024 vCPUs need about 0.5 MiB). */
#define QMP_CLIENT_MAX_MESSAGE		(2 << 20)

/* Exit status of `capvisor ctl` and `capvisor top` (their --help, docs/qmp.md). */
enum ctl_exit {
	CTL_EXIT_OK = 0,		/* done; top: left by q, ^C, --iterations, the VM leaving */
	CTL_EXIT_REFUSED = 1,		/* the VM answered with an error */
	CTL_EXIT_USAGE = 2,		/* bad command line, or no QMP server could be reached */
	CTL_EXIT_NO_REPLY = 3,		/* no valid reply: timeout, closed mid-way, invalid */
};

#define CTL_EXIT_HELP \
	"exit status: 0 done, 1 the VM refused the command (its reason on stderr),\n" \
	"2 usage error or no QMP server at SOCKET (nothing was sent), 3 no valid reply\n" \
	"(timeout, connection closed mid-way, or a reply that is not what QMP says)\n"

struct qmp_conn;

typedef void (*qmp_conn_event_fn)(void *opaque, json_object *event);

/* NULL with the reason in err. timeout_ms bounds every wait for the server. */
struct qmp_conn *qmp_conn_open(const char *path, int timeout_ms, char *err, size_t errlen);
/* The same on a connected stream socket (taken over, closed on failure). */
struct qmp_conn *qmp_conn_open_fd(int fd, const char *name, int timeout_ms, char *err,
				  size_t errlen);
void qmp_conn_close(struct qmp_conn *c);
void qmp_conn_on_event(struct qmp_conn *c, qmp_conn_event_fn fn, void *opaque);
int qmp_conn_fd(const struct qmp_conn *c);
/* Whether the server closed the connection between two messages (a VM leaving). */
bool qmp_conn_closed(const struct qmp_conn *c);

/*
 * Runs CMD with ARGS (may be NULL; not consumed). Returns 0 with *ret (the
 * "return" value, caller puts it); 1 when the server answered with an error
 * (its class and desc in err as "Class: desc"); -1 when there was no valid
 * reply (reason in err): the connection is unusable from then on.
 */
int qmp_conn_execute(struct qmp_conn *c, const char *cmd, json_object *args,
		     json_object **ret, char *err, size_t errlen);

/*
 * Waits up to timeout_ms for input and passes any events on; -1 with the
 * reason in err if the connection closed or the server sent something invalid.
 */
int qmp_conn_poll_events(struct qmp_conn *c, int timeout_ms, char *err, size_t errlen);

/* "5", "0.5": seconds for --timeout into milliseconds; -1 if not in 0.001..max. */
int qmp_client_parse_timeout(const char *text);

#endif
