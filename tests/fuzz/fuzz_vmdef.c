// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for VM definition files: arbitrary bytes (not NUL-
 * terminated) through the strict JSON check and the key/type rules. Checks
 * that what is accepted is JSON json-c's strict parser takes too, that it
 * became "--option value" pairs of known keys with their JSON paths, and
 * that a refusal always says why.
 */
#include "tests/fuzz/fuzz.h"
#include "util/json_strict.h"
#include "cli/vmdef.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool known_option(const char *opt)
{
	if (strncmp(opt, "--", 2))
		return false;
	if (!strcmp(opt, "--vcpu"))
		return true;
	for (unsigned int i = 0; vmdef_key_name(i); i++)
		if (!strcmp(opt + 2, vmdef_key_name(i)))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1), err[512] = "";
	struct vmdef_args a;

	if (!copy)
		return 0;
	memcpy(copy, data, size);	/* exactly size bytes: ASan catches a read past them */
	if (vmdef_parse_buf(copy, size, &a, err, sizeof(err))) {
		if (!err[0])
			abort();	/* every refusal says why */
		free(copy);
		return 0;
	}
	if (json_strict_check(copy, size, err, sizeof(err)))
		abort();	/* accepted as a definition but not strict JSON */
	/* Options and their values in turn; the two flags take none. */
	for (int i = 0; i < a.argc; i++) {
		bool flag;

		if (!a.argv[i] || !a.where[i] || !*a.where[i] || !known_option(a.argv[i]))
			abort();
		flag = !strcmp(a.argv[i], "--verbose") || !strcmp(a.argv[i], "--no-cppc");
		if (!flag && (++i >= a.argc || !a.argv[i] || strcmp(a.where[i], a.where[i - 1])))
			abort();
	}
	if (a.argv[a.argc])
		abort();
	vmdef_free(&a);
	free(copy);
	return 0;
}
