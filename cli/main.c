// SPDX-License-Identifier: MIT
/* capvisor: a KVM VMM whose vCPU scheduler gives every guest honest capacity. */
#include "cli/commands.h"
#include "util/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	/*
	 * Arguments are positional or key=value and no option takes a value,
	 * so --help, -h and --version are recognised anywhere in them.
	 */
	bool common_flags_anywhere;
};

static const struct subcommand subcommands[] = {
	{ "run", cmd_run, "boot a VM (default: the embedded test guest)", false },
	{ "sim", cmd_sim, "run a scheduling scenario in virtual time", false },
	{ "ctl", cmd_ctl, "send one command to a running VM's control socket", true },
	{ "top", cmd_top, "live per-vCPU view of a running VM", true },
	{ "host", cmd_host, "schedule the vCPUs of several VMs (run --join) under one engine", false },
};

#define NR_SUBCOMMANDS ARRAY_SIZE(subcommands)

static void usage(FILE *f)
{
	fprintf(f, "usage: capvisor COMMAND [ARGS...]\n"
		   "       capvisor help [COMMAND]\n"
		   "       capvisor --version\n\ncommands:\n");
	for (size_t i = 0; i < NR_SUBCOMMANDS; i++)
		fprintf(f, "  %-5s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f, "\n`capvisor COMMAND --help` (or -h) describes each command; "
		   "`man capvisor` all of them.\n");
}

static const struct subcommand *find_subcommand(const char *name)
{
	for (size_t i = 0; i < NR_SUBCOMMANDS; i++)
		if (!strcmp(name, subcommands[i].name))
			return &subcommands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	fprintf(stderr, "capvisor: unknown command '%s' (expected run, sim, ctl, top or host; see "
		"capvisor help)\n", name);
	return 2;
}

/* `capvisor help [COMMAND]`: the same text as `capvisor COMMAND --help`. */
static int help(int argc, char **argv)
{
	const struct subcommand *sc;
	char *args[] = { NULL, "--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	sc = find_subcommand(argv[1]);
	if (!sc)
		return unknown_command(argv[1]);
	args[0] = argv[1];
	return sc->fn(2, args);
}

static int run_subcommand(const struct subcommand *sc, int argc, char **argv)
{
	for (int i = 1; sc->common_flags_anywhere && i < argc; i++) {
		if (!strcmp(argv[i], "--version"))
			return cmd_print_version();
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			char *args[] = { argv[0], "--help", NULL };

			return sc->fn(2, args);
		}
	}
	return sc->fn(argc, argv);
}

int main(int argc, char **argv)
{
	const struct subcommand *sc;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_print_version();
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	sc = find_subcommand(argv[1]);
	if (!sc)
		return unknown_command(argv[1]);
	return run_subcommand(sc, argc - 1, argv + 1);
}
