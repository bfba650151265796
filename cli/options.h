/* SPDX-License-Identifier: MIT */
/*
 * `capvisor run` options: one table (cli/options.c) points each option at
 * its field of struct vm_config (or at a setter where storing is not
 * enough), so new options are one table entry and one field. A rejected
 * argument gets an error naming the option and what was expected.
 */
#ifndef CAPVISOR_OPTIONS_H
#define CAPVISOR_OPTIONS_H

#include "vmm/vm_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum vm_option_kind {
	VM_OPT_CALL,		/* set() checks the argument and stores it */
	VM_OPT_STRING,		/* the const char * field takes the argument */
	VM_OPT_FLAG,		/* the bool field is set */
	VM_OPT_COUNT,		/* the unsigned int field counts how often it is given */
	VM_OPT_US,		/* the uint64_t field takes min..max microseconds, in ns */
	VM_OPT_GROUP,		/* a heading of --help, not an option */
};

struct vm_option {
	const char *name;		/* without the leading "--" */
	const char *metavar;		/* NULL: a flag without argument */
	const char *help;		/* of a group: its title */
	int (*set)(struct vm_config *cfg, const char *arg);	/* VM_OPT_CALL */
	enum vm_option_kind kind;
	size_t offset;			/* of the field in struct vm_config */
	unsigned long long min, max, def;	/* shown by --help if non-zero; VM_OPT_US: in us */
};

void vm_config_init(struct vm_config *cfg);
/*
 * argv[0] is the subcommand name. `--config FILE` (a VM definition, see
 * cli/vmdef.h) is expanded in place. 0, or -EINVAL after printing one error
 * line. Strings in cfg point into argv or into storage kept by
 * vm_config_free().
 */
int vm_config_parse(struct vm_config *cfg, int argc, char **argv);
void vm_config_free(struct vm_config *cfg);
void vm_config_usage(FILE *f);
/* Is NAME (without "--") a run option? The i-th option of the table (headings skipped), NULL past the last. */
bool vm_config_has_option(const char *name);
const struct vm_option *vm_config_option(unsigned int i);

/* "256M", "2G", "4096K", "1T", or bytes; 0 or -EINVAL (overflow, bad suffix). */
int parse_size(const char *s, uint64_t *out);

#endif
