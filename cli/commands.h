/* SPDX-License-Identifier: MIT */
/* The `capvisor` subcommands; each lives in its own file. */
#ifndef CAPVISOR_COMMANDS_H
#define CAPVISOR_COMMANDS_H

#include <stdio.h>

int cmd_run(int argc, char **argv);	/* cli/cmd_run.c: boot and run a VM */
int cmd_sim(int argc, char **argv);	/* cli/cmd_sim.c: scheduling simulator */
int cmd_ctl(int argc, char **argv);	/* cli/cmd_ctl.c: control-socket client */
int cmd_top(int argc, char **argv);	/* cli/cmd_top.c: live per-vCPU view */
int cmd_host(int argc, char **argv);	/* cli/cmd_host.c: the host scheduler of several VMs */

/* `--version` of every command: one line, exit status 0. */
static inline int cmd_print_version(void)
{
	printf("capvisor %s\n", CAPVISOR_VERSION);
	return 0;
}

#endif
