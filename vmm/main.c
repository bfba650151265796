// SPDX-License-Identifier: MIT
/* capvisor: a KVM VMM whose vCPU scheduler gives every guest honest capacity. */
#include "vmm/commands.h"

#include <stdio.h>
#include <string.h>

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "run", cmd_run, "boot a VM (default: the embedded test guest)" },
	{ "sim", cmd_sim, "run a scheduling scenario in virtual time" },
	{ "ctl", cmd_ctl, "send one command to a running VM's control socket" },
	{ "top", cmd_top, "live per-vCPU view of a running VM" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: capvisor COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-5s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f, "\n`capvisor COMMAND --help` describes each command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("capvisor %s\n", CAPVISOR_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "capvisor: unknown command '%s' (expected run, sim, ctl or top)\n", argv[1]);
	return 2;
}
