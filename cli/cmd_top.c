// SPDX-License-Identifier: MIT
/*
 * capvisor top SOCKET [--interval S] [--iterations N] [--timeout S]
 *
 * SOCKET may be a capvisor host's (docs/host.md): then top_host.c draws
 * every VM the host schedules.
 *
 * A live per-vCPU view of a running VM over its QMP socket, like virt-top:
 * state, pCPU, share of a pCPU over the last interval, utilization,
 * performance asked/delivered, clamps, reservation, deadline misses, the
 * VM's groups (their weight, cap, share and throttled time) and the pCPUs
 * underneath. Plain ANSI (clear + home) when stdout is a terminal, so
 * it works over ssh; plain successive frames otherwise. Leaves on q, Ctrl-C,
 * after N frames, or when the VM goes away (status 0); every reply is
 * checked (ctl_check_reply) before it is shown, and anything invalid ends
 * it with an error (enum ctl_exit).
 */
#include "cli/commands.h"
#include "cli/ctl_format.h"
#include "cli/qmp_client.h"
#include "cli/top_host.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

struct top {
	struct qmp_conn *conn;
	double interval;
	long iterations;
	int timeout_ms;
	bool tty_in, tty_out;
	struct termios saved;
	uint64_t *prev_cpu;		/* cpu_time_ns of each vCPU in the previous frame */
	double *share;			/* of this frame */
	size_t nr_vcpus;		/* entries in both */
	double prev_time;
	bool have_prev;
	bool shutdown;
	struct top_host *host;		/* SOCKET is a capvisor host's: all its VMs */
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_event(void *opaque, json_object *ev)
{
	struct top *t = opaque;

	/* The client checked that "event" is a string. */
	if (!strcmp(json_object_get_string(json_object_object_get(ev, "event")), "SHUTDOWN"))
		t->shutdown = true;
}

/* Room for n vCPUs; a change of their number forgets the previous frame. */
static int size_arrays(struct top *t, size_t n)
{
	uint64_t *prev;
	double *share;

	if (n == t->nr_vcpus)
		return 0;
	prev = realloc(t->prev_cpu, (n ? n : 1) * sizeof(*prev));
	if (prev)
		t->prev_cpu = prev;
	share = realloc(t->share, (n ? n : 1) * sizeof(*share));
	if (share)
		t->share = share;
	if (!prev || !share)
		return -1;
	t->nr_vcpus = n;
	t->have_prev = false;
	return 0;
}

/* Percent of one pCPU each vCPU got since the previous frame (NAN if unknown). */
static void compute_share(struct top *t, json_object *vcpus)
{
	double now = now_s(), dt = now - t->prev_time;

	for (size_t i = 0; i < t->nr_vcpus; i++) {
		json_object *v = json_object_array_get_idx(vcpus, i);
		uint64_t cpu = (uint64_t)json_object_get_int64(json_object_object_get(v, "cpu_time_ns"));

		t->share[i] = t->have_prev && dt > 0 && cpu >= t->prev_cpu[i] ?
			      100.0 * (double)(cpu - t->prev_cpu[i]) / (dt * 1e9) : NAN;
		t->prev_cpu[i] = cpu;
	}
	t->prev_time = now;
	t->have_prev = true;
}

static const char *const frame_queries[] = { "query-status", "query-vcpus", "query-host",
					     "query-groups" };
#define NR_FRAME_QUERIES	4
#define GROUPS_QUERY		3	/* a server without it (refused): no group table */

/*
 * The replies of one frame, each checked: 0; 1 when the VM went away (a
 * normal end); -1 on any other failure, with its exit status in *status.
 */
static int query_frame(struct top *t, json_object *reply[NR_FRAME_QUERIES], int *status)
{
	char err[768];

	for (int i = 0; i < NR_FRAME_QUERIES; i++) {
		int rc = qmp_conn_execute(t->conn, frame_queries[i], NULL, &reply[i], err,
					  sizeof(err));

		if (!rc && !ctl_check_reply(frame_queries[i], reply[i], err, sizeof(err)))
			continue;
		if (rc > 0 && i == GROUPS_QUERY) {
			reply[i] = NULL;
			continue;
		}
		/* The VM quitting between two messages is a normal way to leave. */
		if (rc < 0 && (t->shutdown || qmp_conn_closed(t->conn))) {
			if (!t->shutdown)
				fprintf(stderr, "capvisor top: the VM closed the connection\n");
			return 1;
		}
		if (!rc)
			fprintf(stderr, "capvisor top: %s: invalid reply from the server: %s\n",
				frame_queries[i], err);
		else
			fprintf(stderr, "capvisor top: %s\n", err);
		*status = rc > 0 ? CTL_EXIT_REFUSED : CTL_EXIT_NO_REPLY;
		return -1;
	}
	return 0;
}

/* A VM's frame: 0; 1 when the VM went away (a normal end); -1 with *status on failure. */
static int draw_vm(struct top *t, long frame, int *status)
{
	json_object *reply[NR_FRAME_QUERIES] = { NULL }, *vcpus;
	time_t wall = time(NULL);
	int rc = query_frame(t, reply, status);

	vcpus = reply[1];
	if (!rc && size_arrays(t, json_object_array_length(vcpus)) < 0) {
		fprintf(stderr, "capvisor top: out of memory for %zu vCPUs\n",
			json_object_array_length(vcpus));
		*status = CTL_EXIT_NO_REPLY;
		rc = -1;
	}
	if (!rc) {
		compute_share(t, vcpus);
		if (t->tty_out)
			fputs("\033[H\033[2J", stdout);
		printf("capvisor top - %s - %s - %zu vCPUs - frame %ld%s",
		       json_object_get_string(json_object_object_get(reply[0], "status")),
		       strtok(ctime(&wall), "\n"), t->nr_vcpus, frame,
		       t->tty_in ? " - q to quit" : "");
		printf("\n\n");
		ctl_print_vcpus(stdout, vcpus, t->share);
		printf("\n");
		if (reply[GROUPS_QUERY] && json_object_array_length(reply[GROUPS_QUERY])) {
			ctl_print_groups(stdout, reply[GROUPS_QUERY], t->share, t->nr_vcpus);
			printf("\n");
		}
		ctl_print_host(stdout, reply[2]);
		if (!t->tty_out)
			printf("\n");
		fflush(stdout);
	}
	for (int i = 0; i < NR_FRAME_QUERIES; i++)
		json_object_put(reply[i]);
	return rc;
}

/* A frame of a VM or of a host: 0; 1 when it went away; -1 with *status on failure. */
static int draw(struct top *t, long frame, int *status)
{
	if (t->host)
		return top_host_frame(t->host, t->conn, frame, t->tty_in, t->tty_out, status);
	return draw_vm(t, frame, status);
}

/* Waits one interval; true if the user asked to leave or the VM went away. */
static bool wait_interval(struct top *t, int *status)
{
	char err[512];

	double end = now_s() + t->interval;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = qmp_conn_fd(t->conn), .events = POLLIN },
			{ .fd = STDIN_FILENO, .events = POLLIN },
		};
		int ms = (int)((end - now_s()) * 1000);
		char c;

		if (interrupted || t->shutdown)
			return true;
		if (ms <= 0)
			return false;
		if (poll(pfd, t->tty_in ? 2 : 1, ms) < 0 && errno != EINTR)
			return true;
		if ((pfd[0].revents & (POLLIN | POLLHUP)) &&
		    qmp_conn_poll_events(t->conn, 0, err, sizeof(err)) < 0) {
			if (qmp_conn_closed(t->conn)) {
				fprintf(stderr, "capvisor top: the VM closed the connection\n");
			} else {
				fprintf(stderr, "capvisor top: %s\n", err);
				*status = CTL_EXIT_NO_REPLY;
			}
			return true;
		}
		if ((pfd[1].revents & POLLIN) && read(STDIN_FILENO, &c, 1) == 1 &&
		    (c == 'q' || c == 'Q'))
			return true;
	}
}

static void raw_terminal(struct top *t, bool on)
{
	struct termios raw;

	if (!t->tty_in)
		return;
	if (!on) {
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
		return;
	}
	tcgetattr(STDIN_FILENO, &t->saved);
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);	/* keys without Enter; ISIG kept for ^C */
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

static int parse_args(struct top *t, int argc, char **argv, const char **sock)
{
	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			t->interval = strtod(argv[++i], &end);
			if (*end || !(t->interval >= 0.05 && t->interval <= 3600)) {
				fprintf(stderr, "capvisor top: --interval: expected 0.05..3600 seconds\n");
				return -1;
			}
		} else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
			t->iterations = strtol(argv[++i], &end, 10);
			if (*end || t->iterations < 1) {
				fprintf(stderr, "capvisor top: --iterations: expected a count >= 1\n");
				return -1;
			}
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			t->timeout_ms = qmp_client_parse_timeout(argv[++i]);
			if (t->timeout_ms < 0) {
				fprintf(stderr, "capvisor top: --timeout: expected seconds, "
					"0.001..%d\n", QMP_CLIENT_TIMEOUT_MAX_S);
				return -1;
			}
		} else if (argv[i][0] != '-' && !*sock) {
			*sock = argv[i];
		} else {
			return -1;
		}
	}
	return *sock ? 0 : -1;
}

/*
 * A capvisor host answers query-vms with an array, a VM refuses it (or a
 * server that is neither answers something else, and is then drawn as a
 * VM, every reply checked): 0 (t->host set for a host), or -1 when the
 * server gave no valid answer.
 */
static int is_host(struct top *t)
{
	json_object *ret = NULL;
	char err[768];
	int rc = qmp_conn_execute(t->conn, "query-vms", NULL, &ret, err, sizeof(err));
	bool host = rc == 0 && json_object_is_type(ret, json_type_array);

	json_object_put(ret);
	if (rc < 0) {
		fprintf(stderr, "capvisor top: %s\n", err);
		return -1;
	}
	if (host && !(t->host = top_host_new())) {
		fprintf(stderr, "capvisor top: out of memory\n");
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: capvisor top SOCKET [--interval SECONDS] [--iterations N]"
		" [--timeout SECONDS]\n\n"
		"Live per-vCPU view of the VM whose QMP socket is SOCKET; q or Ctrl-C leaves,\n"
		"as does the VM shutting down or closing the socket (status 0). SOCKET may\n"
		"be a capvisor host's: then every VM it schedules, with per-VM totals.\n"
		"--interval: between frames (default 1 s); --iterations: frames, then leave;\n"
		"--timeout: how long to wait for each reply (default %d s).\n\n"
		CTL_EXIT_HELP, QMP_CLIENT_TIMEOUT_MS / 1000);
}

int cmd_top(int argc, char **argv)
{
	struct top t = { .interval = 1.0, .timeout_ms = QMP_CLIENT_TIMEOUT_MS };
	const char *sock = NULL;
	int status = CTL_EXIT_OK;
	char err[768];
	long frame = 0;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return CTL_EXIT_OK;
	}
	if (parse_args(&t, argc, argv, &sock) < 0) {
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	t.conn = qmp_conn_open(sock, t.timeout_ms, err, sizeof(err));
	if (!t.conn) {
		fprintf(stderr, "capvisor top: %s\n", err);
		return CTL_EXIT_USAGE;
	}
	qmp_conn_on_event(t.conn, on_event, &t);
	if (is_host(&t) < 0) {
		qmp_conn_close(t.conn);
		return CTL_EXIT_NO_REPLY;
	}
	t.tty_in = isatty(STDIN_FILENO);
	t.tty_out = isatty(STDOUT_FILENO);
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	raw_terminal(&t, true);
	while (!interrupted) {
		if (draw(&t, ++frame, &status))
			break;
		if ((t.iterations && frame >= t.iterations) || wait_interval(&t, &status))
			break;
	}
	raw_terminal(&t, false);
	if (t.shutdown)
		fprintf(stderr, "capvisor top: the VM shut down\n");
	qmp_conn_close(t.conn);
	top_host_free(t.host);
	free(t.prev_cpu);
	free(t.share);
	return status;
}
