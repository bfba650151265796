/* SPDX-License-Identifier: MIT */
/*
 * `capvisor run` options: one table (cli/options.c) points each option at
 * its field of struct vm_config (or at a setter where storing is not
 * enough), so new options are one table entry and one field. A rejected
 * argument gets an error naming the option and what was expected.
 */
#ifndef CAPVISOR_OPTIONS_H
#define CAPVISOR_OPTIONS_H

#include "vmm/kvm/cpuid.h"
#include "dispatch/qosspec.h"
#include "util/sandbox.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VM_MIN_MEM	(16ULL << 20)
#define VM_MAX_MEM	(1ULL << 40)
#define VM_MAX_VCPUS	255	/* xAPIC ids 0..254 */
#define VM_DEFAULT_VCPUS	1
#define VM_DEFAULT_MEM	(256ULL << 20)

enum console_kind { CONSOLE_STDIO, CONSOLE_FILE };
enum sched_kind { SCHED_KIND_CAPVISOR, SCHED_KIND_HOST };

#define VM_MAX_VCPU_SPECS	64	/* --vcpu options */

/* Where an option's value came from: a --config file and its JSON path, or the command line. */
struct vm_origin {
	const char *file;	/* NULL: the command line */
	const char *where;	/* "vcpu[1]", "host" */
};

struct vm_config {
	const char *kernel;		/* NULL: the embedded test guest */
	const char *initrd;
	const char *cmdline;
	unsigned int nr_vcpus;
	uint64_t mem_size;
	enum console_kind console;
	const char *console_path;	/* CONSOLE_FILE */
	const char *dump_acpi_dir;
	bool cpu_hide_set;		/* false: probe the host for the default */
	cpuid_feature_set cpu_hide;
	unsigned int verbose;		/* 1: info, 2: debug */
	bool help;
	bool version;
	void *defs;			/* loaded --config/--domain files (vm_config_free) */
	const struct domain_info *domain;	/* the last --domain's name, uuid, metadata */
	const char *dump_domain;	/* write the VM as domain XML and exit */
	const char *emulator_cpus;	/* host CPUs of capvisor's own threads (libvirt cpuset) */
	/* Scheduling (vmm/vm_sched.h). Parsed as given, applied once --vcpus is known. */
	const char *host_spec;		/* --host; NULL: one 1024 pCPU per host CPU */
	struct vm_origin host_origin;
	const char *vcpu_specs[VM_MAX_VCPU_SPECS];
	struct vm_origin vcpu_origin[VM_MAX_VCPU_SPECS];
	unsigned int nr_vcpu_specs;
	struct vm_qos vm_qos;		/* --vm-weight, --vm-cap, --group: parsed at once */
	enum sched_kind sched;
	uint64_t tick_ns;		/* 0: the default */
	uint64_t window_ns;
	uint64_t slice_ns;
	bool no_cppc;
	const char *stats_json;		/* write the per-vCPU summary as JSON at exit */
	/* Control socket and privileges. */
	const char *api_socket;
	const char *join;		/* --join: capvisor host's join socket */
	const char *name;		/* --name: the VM's name on that host */
	const char *user;
	enum sandbox_mode seccomp;	/* filters of the run phase (util/sandbox.h) */
	bool seccomp_set;		/* given: overrides a sanitizer build's default */
	struct vm_origin origin;	/* of the option being parsed */
};

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
/*
 * After an error about a value checked later than its option (--host,
 * --vcpu): name the definition file and JSON path it came from, if any.
 * Always -EINVAL.
 */
int vm_origin_report(const struct vm_origin *o);
void vm_config_usage(FILE *f);
/* Is NAME (without "--") a run option? The i-th option of the table (headings skipped), NULL past the last. */
bool vm_config_has_option(const char *name);
const struct vm_option *vm_config_option(unsigned int i);

/* "256M", "2G", "4096K", "1T", or bytes; 0 or -EINVAL (overflow, bad suffix). */
int parse_size(const char *s, uint64_t *out);

#endif
