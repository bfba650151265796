/* SPDX-License-Identifier: MIT */
/*
 * The configuration of one VM (struct vm_config), as vmm/ builds and runs
 * it: kernel, vCPUs and memory, console, the scheduling setup, the control
 * socket and privileges, and the limits and defaults of those values. vmm/
 * owns it; cli/ fills it in from run's options, VM definition files and
 * libvirt domain XML (cli/options.h), which is why this header includes
 * nothing of cli/.
 */
#ifndef CAPVISOR_VM_CONFIG_H
#define CAPVISOR_VM_CONFIG_H

#include "vmm/kvm/cpuid.h"
#include "dispatch/qosspec.h"
#include "util/sandbox.h"

#include <stdbool.h>
#include <stdint.h>

/* The --domain file's identity (cli/domain.h); vmm/ only passes it back to cli/. */
struct domain_info;

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

/*
 * After an error about a value checked later than its option (--host,
 * --vcpu): name the definition file and JSON path it came from, if any.
 * Always -EINVAL.
 */
int vm_origin_report(const struct vm_origin *o);

#endif
