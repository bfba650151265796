// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the client side of the control socket: arbitrary
 * bytes play the server, and go through what `capvisor ctl` and `capvisor
 * top` do with them: the greeting and negotiation, the reply to one
 * command (or top's three queries of a frame), events in between, the
 * reply check (ctl_check_reply) and, when it passes, the tables. The
 * server's bytes wait in a socketpair (no files, no waits: the client
 * reads them, then end of file); its timeout is 0.
 *
 * It checks that a reply that passes the check prints without fault (ASan
 * and UBSan do the looking) and that every outcome comes with a message.
 *
 * Input: byte 0 picks the command (see commands[]); the rest is the stream
 * the server sends, greeting first. Requests carry ids 1 (qmp_capabilities),
 * 2, 3, ...
 */
#include "tests/fuzz/fuzz.h"
#include "cli/ctl_format.h"
#include "cli/qmp_client.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const commands[] = {
	"query-vcpus", "query-host", "query-status", "query-version", "query-commands",
	"set-vcpu-weight", NULL,	/* NULL: top's frame */
};
static const char *const frame[] = { "query-status", "query-vcpus", "query-host" };

static FILE *sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

static void on_event(void *opaque, json_object *ev)
{
	(void)opaque;
	/* The client promises the name is a string. */
	if (!json_object_is_type(json_object_object_get(ev, "event"), json_type_string))
		abort();
}

/* One command as ctl runs it: executed, checked, printed. */
static int run_command(struct qmp_conn *c, const char *cmd, bool top)
{
	json_object *ret = NULL;
	char err[768] = "";
	int rc = qmp_conn_execute(c, cmd, NULL, &ret, err, sizeof(err));

	if (rc && !err[0])
		abort();	/* every failure says why */
	if (rc)
		return -1;
	if (ctl_check_reply(cmd, ret, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else if (top && !strcmp(cmd, "query-vcpus")) {
		size_t n = json_object_array_length(ret);
		double *share = calloc(n ? n : 1, sizeof(*share));

		for (size_t i = 0; i < n; i++)
			share[i] = i % 2 ? NAN : 100.0 * (double)i;
		ctl_print_vcpus(sink(), ret, share);
		free(share);
	} else {
		ctl_print_reply(sink(), cmd, ret);
	}
	json_object_put(ret);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t nr_commands = sizeof(commands) / sizeof(commands[0]);
	const char *cmd;
	struct qmp_conn *c;
	char err[768] = "";
	int sv[2];

	if (!size || size > 64 * 1024)	/* fits the socket buffer in one write */
		return 0;
	cmd = commands[data[0] % nr_commands];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	if (size > 1 && send(sv[1], data + 1, size - 1, MSG_DONTWAIT) != (ssize_t)(size - 1))
		abort();
	shutdown(sv[1], SHUT_WR);
	c = qmp_conn_open_fd(sv[0], "fuzz", 0, err, sizeof(err));
	if (c) {
		qmp_conn_on_event(c, on_event, NULL);
		if (cmd) {
			run_command(c, cmd, false);
		} else {
			for (int i = 0; i < 3 && !run_command(c, frame[i], true); i++)
				;
		}
		qmp_conn_poll_events(c, 0, err, sizeof(err));
		qmp_conn_close(c);
	} else if (!err[0]) {
		abort();
	}
	close(sv[1]);
	return 0;
}
