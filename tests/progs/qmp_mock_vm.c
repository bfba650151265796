// SPDX-License-Identifier: MIT
/*
 * A QMP server in front of the in-memory fake VM of tests/lib/qmp_fake_vm.h,
 * so the control-socket tests run without KVM and without the engine.
 *
 *   qmp_mock_vm --socket PATH [--vcpus N] [--outq-limit BYTES]
 *               [--drop-privs [--keep-sys-nice] [--user NAME]] [--verbose]
 *
 * Runs until quit, SIGINT or SIGTERM; the socket is removed on exit. With
 * --drop-privs it drops privileges after the socket is listening (as
 * capvisor run does) and prints its CapEff line to stdout.
 */
#include "tests/lib/qmp_fake_vm.h"
#include "util/evloop.h"
#include "util/log.h"
#include "util/privs.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct mock {
	struct fake_vm vm;
	struct evloop *loop;
	struct qmp_server *srv;
};

static void emit_to_server(void *opaque, const char *name, json_object *data)
{
	struct mock *m = opaque;

	qmp_server_emit_event(m->srv, name, data);
	if (!strcmp(name, "SHUTDOWN"))
		evloop_stop(m->loop);	/* after the reply is queued: see main() */
}

static void on_tick(struct evloop *loop, void *opaque)
{
	(void)loop;
	fake_vm_tick(&((struct mock *)opaque)->vm);
}

static void on_signal(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct signalfd_siginfo si;

	(void)events;
	(void)opaque;
	if (read(fd, &si, sizeof(si)) == sizeof(si))
		evloop_stop(loop);
}

static int watch_signals(struct evloop *loop)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return fd < 0 ? -1 : evloop_add_fd(loop, fd, EPOLLIN, on_signal, NULL);
}

static void print_capeff(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7) || !strncmp(line, "CapPrm:", 7) ||
		    !strncmp(line, "CapBnd:", 7) || !strncmp(line, "Uid:", 4))
			fputs(line, stdout);
	if (f)
		fclose(f);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "vcpus", required_argument, NULL, 'n' },
		{ "outq-limit", required_argument, NULL, 'o' },
		{ "drop-privs", no_argument, NULL, 'd' },
		{ "keep-sys-nice", no_argument, NULL, 'k' },
		{ "user", required_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 },
	};
	struct privs_opts popts = { 0 };
	const char *path = NULL;
	unsigned int vcpus = 4;
	size_t outq = 0;
	bool drop = false;
	char err[256] = "";
	struct mock m;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': path = optarg; break;
		case 'n': vcpus = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'o': outq = strtoul(optarg, NULL, 0); break;
		case 'd': drop = true; break;
		case 'k': popts.keep_sys_nice = true; break;
		case 'u': popts.user = optarg; break;
		case 'v': log_set_level(LOG_DEBUG); break;
		default: return 2;
		}
	}
	if (!path || !vcpus || vcpus > FAKE_MAX_VCPUS) {
		fprintf(stderr, "usage: qmp_mock_vm --socket PATH [--vcpus 1..%d] ...\n",
			FAKE_MAX_VCPUS);
		return 2;
	}
	memset(&m, 0, sizeof(m));
	fake_vm_init(&m.vm, vcpus);
	m.vm.emit = emit_to_server;
	m.vm.emit_opaque = &m;
	m.loop = evloop_new();
	if (!m.loop || watch_signals(m.loop) < 0)
		return 1;
	m.srv = qmp_server_new(m.loop, path, &fake_vm_ops, &m.vm, err, sizeof(err));
	if (!m.srv) {
		fprintf(stderr, "qmp_mock_vm: %s\n", err);
		return 1;
	}
	if (outq)
		qmp_server_set_outq_limit(m.srv, outq);
	if (drop) {
		if (privs_drop(&popts, err, sizeof(err)) < 0) {
			fprintf(stderr, "qmp_mock_vm: %s\n", err);
			qmp_server_free(m.srv);
			return 1;
		}
		print_capeff();
	}
	evloop_add_timer(m.loop, 100000000ull, on_tick, &m);
	evloop_run(m.loop);
	/* quit's reply was queued after SHUTDOWN: one more round flushes it. */
	qmp_server_free(m.srv);
	evloop_free(m.loop);
	return 0;
}
