// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: libvirt domain XML in (cli/domain_*.c). Any input must
 * give either an argument vector or an error naming a place, never a crash,
 * a leak or a hang; an accepted one must be writable back out. libvirt's
 * schema is left out (it is libvirt's code, and slow per input).
 */
#include "tests/fuzz/fuzz.h"
#include "cli/domain.h"
#include "cli/options.h"
#include "dispatch/qosspec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return setenv("CAPVISOR_LIBVIRT_SCHEMA", "", 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct domain_args d;
	char err[1024];

	memset(&d, 0, sizeof(d));
	if (domain_parse((const char *)data, size, "fuzz.xml", &d, err, sizeof(err))) {
		if (!strstr(err, "fuzz.xml"))
			abort();	/* every error names the file */
		return 0;
	}
	for (int i = 0; i < d.args.argc; i++)
		if (strncmp(d.args.argv[i], "--", 2) || d.origin[i].line < 0)
			abort();
	domain_args_free(&d);
	return 0;
}
