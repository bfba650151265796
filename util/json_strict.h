/* SPDX-License-Identifier: MIT */
/*
 * A strict RFC 8259 check of a JSON text before json-c builds its tree.
 *
 * json-c is lenient where a definition file must not be: it keeps the last
 * of duplicate keys, takes single quotes, NaN and Infinity, saturates huge
 * integers and passes "\u0000" and invalid UTF-8 through. This pass refuses
 * all of those, comments, and anything after the first value, and names the
 * JSON path (`vcpu[0].weight`) and the line and column of the problem.
 */
#ifndef CAPVISOR_JSON_STRICT_H
#define CAPVISOR_JSON_STRICT_H

#include <stddef.h>

#define JSON_STRICT_MAX_DEPTH	16	/* under json-c's own limit of 32 */
/*
 * Members of one object. Duplicates are found by comparing each key with
 * the earlier ones, so this bounds that work (a definition object has about
 * twenty keys; a 1 MiB flat object of 100k keys took 10 s before the limit).
 */
#define JSON_STRICT_MAX_MEMBERS	256

/* 0, or -1 with err filled ("vcpu[1]: duplicate key \"weight\" (line 3, column 9)"). */
int json_strict_check(const char *text, size_t len, char *err, size_t errlen);

#endif
