// SPDX-License-Identifier: MIT
/* Placeholder until the owning issue lands. */
#include "vmm/commands.h"

#include <stdio.h>

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "capvisor run: not built yet\n");
	return 2;
}
