// SPDX-License-Identifier: MIT
/*
 * capvisor top SOCKET [--interval S] [--iterations N]
 *
 * A live per-vCPU view of a running VM over its QMP socket, like virt-top:
 * state, pCPU, share of a pCPU over the last interval, utilization,
 * performance asked/delivered, clamps, reservation, deadline misses, and the
 * pCPUs underneath. Plain ANSI (clear + home) when stdout is a terminal, so
 * it works over ssh; plain successive frames otherwise. Leaves on q, Ctrl-C,
 * after N frames, or when the VM goes away.
 */
#include "vmm/commands.h"
#include "vmm/ctl_format.h"
#include "vmm/qmp_client.h"

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

#define TOP_MAX_VCPUS 1024

struct top {
	struct qmp_conn *conn;
	double interval;
	long iterations;
	bool tty_in, tty_out;
	struct termios saved;
	uint64_t prev_cpu[TOP_MAX_VCPUS];
	double prev_time;
	bool have_prev;
	bool shutdown;
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

	if (!strcmp(json_object_get_string(json_object_object_get(ev, "event")), "SHUTDOWN"))
		t->shutdown = true;
}

/* Percent of one pCPU each vCPU got since the previous frame. */
static void compute_share(struct top *t, json_object *vcpus, double *share)
{
	double now = now_s(), dt = now - t->prev_time;
	size_t n = json_object_array_length(vcpus);

	for (size_t i = 0; i < n && i < TOP_MAX_VCPUS; i++) {
		json_object *v = json_object_array_get_idx(vcpus, i);
		uint64_t cpu = (uint64_t)json_object_get_int64(json_object_object_get(v, "cpu_time_ns"));

		share[i] = t->have_prev && dt > 0 && cpu >= t->prev_cpu[i] ?
			   100.0 * (double)(cpu - t->prev_cpu[i]) / (dt * 1e9) : NAN;
		t->prev_cpu[i] = cpu;
	}
	t->prev_time = now;
	t->have_prev = true;
}

/* One frame: 0; 1 when the VM went away (a normal end); -1 on any other failure. */
static int draw(struct top *t, long frame)
{
	json_object *vcpus = NULL, *host = NULL, *status = NULL;
	static double share[TOP_MAX_VCPUS];
	char err[512];
	time_t wall = time(NULL);

	if (qmp_conn_execute(t->conn, "query-status", NULL, &status, err, sizeof(err)) ||
	    qmp_conn_execute(t->conn, "query-vcpus", NULL, &vcpus, err, sizeof(err)) ||
	    qmp_conn_execute(t->conn, "query-host", NULL, &host, err, sizeof(err))) {
		json_object_put(status);
		json_object_put(vcpus);
		/* The VM quitting between two queries is a normal way to leave. */
		if (t->shutdown || qmp_conn_closed(t->conn)) {
			if (!t->shutdown)
				fprintf(stderr, "capvisor top: the VM closed the connection\n");
			return 1;
		}
		fprintf(stderr, "capvisor top: %s\n", err);
		return -1;
	}
	compute_share(t, vcpus, share);
	if (t->tty_out)
		fputs("\033[H\033[2J", stdout);
	printf("capvisor top - %s - %s - %zu vCPUs - frame %ld%s",
	       json_object_get_string(json_object_object_get(status, "status")),
	       strtok(ctime(&wall), "\n"), json_object_array_length(vcpus), frame,
	       t->tty_in ? " - q to quit" : "");
	printf("\n\n");
	ctl_print_vcpus(stdout, vcpus, share);
	printf("\n");
	ctl_print_host(stdout, host);
	if (!t->tty_out)
		printf("\n");
	fflush(stdout);
	json_object_put(status);
	json_object_put(vcpus);
	json_object_put(host);
	return 0;
}

/* Waits one interval; true if the user asked to leave or the VM went away. */
static bool wait_interval(struct top *t)
{
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
		if ((pfd[0].revents & (POLLIN | POLLHUP)) && qmp_conn_poll_events(t->conn, 0) < 0) {
			fprintf(stderr, "capvisor top: the VM closed the connection\n");
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
		} else if (argv[i][0] != '-' && !*sock) {
			*sock = argv[i];
		} else {
			return -1;
		}
	}
	return *sock ? 0 : -1;
}

int cmd_top(int argc, char **argv)
{
	struct top t = { .interval = 1.0 };
	const char *sock = NULL;
	char err[512];
	long frame = 0;
	int rc = 0;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: capvisor top SOCKET [--interval SECONDS] [--iterations N]\n"
		       "Live per-vCPU view of the VM whose QMP socket is SOCKET; q or Ctrl-C leaves.\n");
		return 0;
	}
	if (parse_args(&t, argc, argv, &sock) < 0) {
		fprintf(stderr, "usage: capvisor top SOCKET [--interval SECONDS] [--iterations N]\n");
		return 2;
	}
	t.conn = qmp_conn_open(sock, 5000, err, sizeof(err));
	if (!t.conn) {
		fprintf(stderr, "capvisor top: %s\n", err);
		return 2;
	}
	qmp_conn_on_event(t.conn, on_event, &t);
	t.tty_in = isatty(STDIN_FILENO);
	t.tty_out = isatty(STDOUT_FILENO);
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	raw_terminal(&t, true);
	while (!interrupted) {
		int drawn = draw(&t, ++frame);

		if (drawn < 0)
			rc = 1;
		if (drawn)
			break;
		if ((t.iterations && frame >= t.iterations) || wait_interval(&t))
			break;
	}
	raw_terminal(&t, false);
	if (t.shutdown)
		fprintf(stderr, "capvisor top: the VM shut down\n");
	qmp_conn_close(t.conn);
	return rc;
}
