// SPDX-License-Identifier: MIT
/* Placeholder until the owning issue lands. */
#include "vmm/commands.h"

#include <stdio.h>

int cmd_top(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "capvisor top: not built yet\n");
	return 2;
}
