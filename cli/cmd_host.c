// SPDX-License-Identifier: MIT
/*
 * capvisor host --api-socket PATH [--join-socket PATH] [--host SPEC]
 * [--state-dir DIR] [--tick-us US] [--slice-us US] [--verbose]
 *
 * The host scheduler of several VMs (docs/host.md): one engine, one
 * dispatcher and the emulated pCPUs for every `capvisor run --join`
 * process; QMP for people and tools on --api-socket.
 */
#include "cli/commands.h"
#include "host/host.h"
#include "util/evloop.h"
#include "util/log.h"
#include "util/sandbox.h"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: capvisor host --api-socket PATH [--join-socket PATH] [--host SPEC]\n"
		"                     [--state-dir DIR] [--seccomp MODE] [--tick-us US] [--slice-us US] [--verbose]\n\n"
		"Schedules the vCPUs of every VM that joins it (capvisor run --join PATH)\n"
		"under one engine on the emulated pCPUs of --host (docs/host.md).\n\n"
		"  --api-socket PATH   the host's QMP socket: query-vms, query-host, query-vcpus,\n"
		"                      every set-vcpu-* and set-vm-* with vm, vm-stop, vm-cont,\n"
		"                      quit (query-commands lists them); events VM_JOINED,\n"
		"                      VM_LEFT, VM_OBEDIENCE and the VM socket's, each with vm\n"
		"  --join-socket PATH  where VMs join (default: the api socket's path + .join)\n"
		"  --host SPEC         emulated pCPUs, as capvisor run --host (default: one\n"
		"                      1024 pCPU per host CPU)\n"
		"  --state-dir DIR     remember the joined VMs there: after a restart they\n"
		"                      are re-admitted first as they rejoin\n"
		"  --seccomp MODE      the host threads' filter: kill (default), trap, log, off\n"
		"  --tick-us US        scheduler tick (default %d)\n"
		"  --slice-us US       fair-class base slice (default %d)\n"
		"  --verbose           log more\n\n"
		"exit status: 0 stopped (quit, SIGINT, SIGTERM), 2 bad usage, 3 host error\n",
		DISPATCH_DEFAULT_TICK_US, DISPATCH_DEFAULT_SLICE_US);
}

static void emit_event(struct host *h, const char *event, void *data)
{
	host_qmp_event(h->qmp, event, data);
}

static void on_signal(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct signalfd_siginfo si;

	(void)events;
	(void)opaque;
	if (read(fd, &si, sizeof(si)) == sizeof(si))
		pr_info("stopped by signal %u", si.ssi_signo);
	evloop_stop(loop);
}

static int parse_us(const char *opt, const char *arg, unsigned long min, unsigned long max,
		    uint64_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || v < min || v > max) {
		fprintf(stderr, "capvisor host: %s: '%s' (expected %lu..%lu)\n", opt, arg, min, max);
		return -1;
	}
	*out = (uint64_t)v * 1000;
	return 0;
}

static int parse_args(int argc, char **argv, struct host_config *cfg, char *join, size_t joinlen,
		      bool *help, bool *version)
{
	char err[512];

	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *arg = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = strcmp(opt, "--verbose") && strcmp(opt, "--help") && strcmp(opt, "-h") &&
			     strcmp(opt, "--version");

		if (takes && !arg) {
			fprintf(stderr, "capvisor host: %s needs a value (see --help)\n", opt);
			return -1;
		}
		if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
			*help = true;
		else if (!strcmp(opt, "--version"))
			*version = true;
		else if (!strcmp(opt, "--verbose"))
			log_set_level(LOG_INFO);
		else if (!strcmp(opt, "--api-socket"))
			cfg->api_path = arg;
		else if (!strcmp(opt, "--join-socket"))
			cfg->join_path = arg;
		else if (!strcmp(opt, "--state-dir"))
			cfg->state_dir = arg;
		else if (!strcmp(opt, "--seccomp")) {
			enum sandbox_mode m;

			if (sandbox_parse_mode(arg, &m)) {
				fprintf(stderr, "capvisor host: --seccomp: '%s' (expected kill, trap, "
					"log or off)\n", arg);
				return -1;
			}
			cfg->seccomp = (int)m;
			cfg->seccomp_set = true;
		}
		else if (!strcmp(opt, "--host")) {
			if (host_spec_parse(arg, &cfg->spec, err, sizeof(err))) {
				fprintf(stderr, "capvisor host: --host: %s\n", err);
				return -1;
			}
			cfg->spec_set = true;
		} else if (!strcmp(opt, "--tick-us")) {
			if (parse_us(opt, arg, DISPATCH_TICK_MIN_US, DISPATCH_TICK_MAX_US, &cfg->tick_ns))
				return -1;
		} else if (!strcmp(opt, "--slice-us")) {
			if (parse_us(opt, arg, DISPATCH_SLICE_MIN_US, DISPATCH_SLICE_MAX_US,
				     &cfg->slice_ns))
				return -1;
		} else {
			fprintf(stderr, "capvisor host: unknown option '%s' (see --help)\n", opt);
			return -1;
		}
		i += takes;
	}
	if (*help || *version)
		return 0;
	if (!cfg->api_path) {
		fprintf(stderr, "capvisor host: --api-socket PATH is required (see --help)\n");
		return -1;
	}
	if (!cfg->join_path) {
		snprintf(join, joinlen, "%s.join", cfg->api_path);
		cfg->join_path = join;
	}
	return 0;
}

static int add_signals(struct host *h)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* The proxies and the dispatcher inherit the mask: signals reach the main thread. */
	signal(SIGPIPE, SIG_IGN);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -1 : evloop_add_fd(h->loop, fd, EPOLLIN, on_signal, h);
}

int cmd_host(int argc, char **argv)
{
	static struct host h;
	struct host_config cfg = { 0 };
	char join[256], err[512];
	bool help = false, version = false;
	int rc;

	if (parse_args(argc, argv, &cfg, join, sizeof(join), &help, &version))
		return 2;
	if (help) {
		usage(stdout);
		return 0;
	}
	if (version)
		return cmd_print_version();
	if (host_init(&h, &cfg, err, sizeof(err)) || add_signals(&h) ||
	    host_start(&h, err, sizeof(err))) {
		pr_err("%s", err);
		host_fini(&h);
		return 3;
	}
	h.emit = emit_event;
	pr_info("host: %u pCPUs; VMs join on %s, QMP on %s", h.nr_pcpus, cfg.join_path,
		cfg.api_path);
	rc = evloop_run(h.loop);
	host_fini(&h);
	return rc ? 3 : 0;
}
