// SPDX-License-Identifier: MIT
/*
 * `capvisor run`'s options (cli/options.h): the option table and its
 * setters on struct vm_config, numbers and sizes, --config and --domain
 * expanded in place, and the help text.
 */
#include "cli/options.h"
#include "cli/domain.h"
#include "dispatch/dispatch.h"
#include "dispatch/dutycycle.h"
#include "vmm/emulator.h"
#include "util/log.h"
#include "util/util.h"
#include "dispatch/qosspec.h"
#include "cli/vmdef.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 0:
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1] && !(toupper((unsigned char)end[1]) == 'B' && !end[2]) &&
	    !(toupper((unsigned char)end[1]) == 'I' && toupper((unsigned char)end[2]) == 'B' &&
	      !end[3]))
		return -EINVAL;	/* accept 2G, 2GB, 2GiB */
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int set_kernel(struct vm_config *cfg, const char *arg)
{
	cfg->kernel = arg;
	return 0;
}

static int set_initrd(struct vm_config *cfg, const char *arg)
{
	cfg->initrd = arg;
	return 0;
}

static int set_cmdline(struct vm_config *cfg, const char *arg)
{
	cfg->cmdline = arg;
	return 0;
}

static int set_vcpus(struct vm_config *cfg, const char *arg)
{
	unsigned long long n;

	if (parse_uint(arg, VM_MAX_VCPUS, &n) || n == 0) {
		pr_err("--vcpus: '%s' is not a number of vCPUs between 1 and %d", arg, VM_MAX_VCPUS);
		return -EINVAL;
	}
	cfg->nr_vcpus = (unsigned int)n;
	return 0;
}

static int set_mem(struct vm_config *cfg, const char *arg)
{
	uint64_t size;

	if (parse_size(arg, &size)) {
		pr_err("--mem: '%s' is not a size (expected e.g. 256M, 2G)", arg);
		return -EINVAL;
	}
	if (size < VM_MIN_MEM || size > VM_MAX_MEM || size % 4096) {
		pr_err("--mem: '%s' must be a multiple of 4K between %lluM and %lluT", arg,
		       VM_MIN_MEM >> 20, VM_MAX_MEM >> 40);
		return -EINVAL;
	}
	cfg->mem_size = size;
	return 0;
}

static int set_console(struct vm_config *cfg, const char *arg)
{
	if (!strcmp(arg, "stdio")) {
		cfg->console = CONSOLE_STDIO;
		return 0;
	}
	if (!strncmp(arg, "file:", 5) && arg[5]) {
		cfg->console = CONSOLE_FILE;
		cfg->console_path = arg + 5;
		return 0;
	}
	pr_err("--console: '%s' (expected stdio or file:PATH)", arg);
	return -EINVAL;
}

static int set_dump_acpi(struct vm_config *cfg, const char *arg)
{
	cfg->dump_acpi_dir = arg;
	return 0;
}

static int set_cpu_hide(struct vm_config *cfg, const char *arg)
{
	if (cpuid_parse_hide(arg, &cfg->cpu_hide))
		return -EINVAL;
	cfg->cpu_hide_set = true;
	return 0;
}

static int set_verbose(struct vm_config *cfg, const char *arg)
{
	(void)arg;
	cfg->verbose++;
	return 0;
}

static int set_host(struct vm_config *cfg, const char *arg)
{
	cfg->host_spec = arg;	/* parsed with the rest of the scheduling setup */
	cfg->host_origin = cfg->origin;
	return 0;
}

static int set_vcpu(struct vm_config *cfg, const char *arg)
{
	if (cfg->nr_vcpu_specs == VM_MAX_VCPU_SPECS) {
		pr_err("--vcpu: more than %d given", VM_MAX_VCPU_SPECS);
		return -EINVAL;
	}
	cfg->vcpu_origin[cfg->nr_vcpu_specs] = cfg->origin;
	cfg->vcpu_specs[cfg->nr_vcpu_specs++] = arg;
	return 0;
}

/* The VM-level QoS parses at once; what needs the vCPUs is checked with them. */
static int set_vm_qos(const char *opt, int (*apply)(struct vm_qos *, const char *, char *, size_t),
		      struct vm_config *cfg, const char *arg)
{
	char err[512];

	if (apply(&cfg->vm_qos, arg, err, sizeof(err))) {
		/* --group's errors name the option and its argument already. */
		if (opt)
			pr_err("--%s: %s", opt, err);
		else
			pr_err("%s", err);
		return -EINVAL;
	}
	return 0;
}

static int set_vm_weight(struct vm_config *cfg, const char *arg)
{
	return set_vm_qos("vm-weight", vm_qos_set_weight, cfg, arg);
}

static int set_vm_cap(struct vm_config *cfg, const char *arg)
{
	return set_vm_qos("vm-cap", vm_qos_set_cap, cfg, arg);
}

static int set_group(struct vm_config *cfg, const char *arg)
{
	return set_vm_qos(NULL, group_spec_apply, cfg, arg);
}

static int set_sched(struct vm_config *cfg, const char *arg)
{
	if (!strcmp(arg, "capvisor"))
		cfg->sched = SCHED_KIND_CAPVISOR;
	else if (!strcmp(arg, "host"))
		cfg->sched = SCHED_KIND_HOST;
	else {
		pr_err("--sched: '%s' (expected capvisor or host)", arg);
		return -EINVAL;
	}
	return 0;
}

static int set_us(const char *opt, const char *arg, unsigned long long min, unsigned long long max,
		  uint64_t *out)
{
	unsigned long long us;

	if (parse_uint(arg, max, &us) || us < min) {
		pr_err("--%s: '%s' (expected microseconds, %llu..%llu)", opt, arg, min, max);
		return -EINVAL;
	}
	*out = us * 1000;
	return 0;
}

static int set_tick(struct vm_config *cfg, const char *arg)
{
	return set_us("tick-us", arg, DISPATCH_TICK_MIN_US, DISPATCH_TICK_MAX_US, &cfg->tick_ns);
}

static int set_window(struct vm_config *cfg, const char *arg)
{
	return set_us("window-us", arg, DUTY_MIN_WINDOW_US, DUTY_MAX_WINDOW_US, &cfg->window_ns);
}

static int set_slice(struct vm_config *cfg, const char *arg)
{
	return set_us("slice-us", arg, DISPATCH_SLICE_MIN_US, DISPATCH_SLICE_MAX_US, &cfg->slice_ns);
}

static int set_no_cppc(struct vm_config *cfg, const char *arg)
{
	(void)arg;
	cfg->no_cppc = true;
	return 0;
}

static int set_stats_json(struct vm_config *cfg, const char *arg)
{
	cfg->stats_json = arg;
	return 0;
}

static int set_api_socket(struct vm_config *cfg, const char *arg)
{
	cfg->api_socket = arg;
	return 0;
}

static int set_join(struct vm_config *cfg, const char *arg)
{
	cfg->join = arg;
	return 0;
}

static int set_name(struct vm_config *cfg, const char *arg)
{
	cfg->name = arg;
	return 0;
}

static int set_user(struct vm_config *cfg, const char *arg)
{
	cfg->user = arg;
	return 0;
}

static int set_seccomp(struct vm_config *cfg, const char *arg)
{
	if (sandbox_parse_mode(arg, &cfg->seccomp)) {
		pr_err("--seccomp: '%s' (expected kill, trap, log or off)", arg);
		return -EINVAL;
	}
	cfg->seccomp_set = true;
	return 0;
}

static int set_config(struct vm_config *cfg, const char *arg);
static int set_domain(struct vm_config *cfg, const char *arg);

static int set_dump_domain(struct vm_config *cfg, const char *arg)
{
	cfg->dump_domain = arg;
	return 0;
}

static int set_emulator_cpus(struct vm_config *cfg, const char *arg)
{
	char err[256];

	if (emulator_cpus_parse(arg, NULL, err, sizeof(err))) {
		pr_err("--emulator-cpus: %s", err);
		return -EINVAL;
	}
	cfg->emulator_cpus = arg;
	return 0;
}

static int set_help(struct vm_config *cfg, const char *arg)
{
	(void)arg;
	cfg->help = true;
	return 0;
}

static int set_version(struct vm_config *cfg, const char *arg)
{
	(void)arg;
	cfg->version = true;
	return 0;
}

static const struct vm_option options[] = {
	{ "kernel", "FILE", "PVH ELF or bzImage to boot (default: the embedded test guest)",
	  set_kernel },
	{ "initrd", "FILE", "initial ramdisk", set_initrd },
	{ "cmdline", "STR", "kernel command line", set_cmdline },
	{ "vcpus", "N", "number of vCPUs, 1..255 (default 1)", set_vcpus },
	{ "mem", "SIZE", "guest RAM, e.g. 512M or 2G, at least 16M (default 256M)", set_mem },
	{ "console", "stdio|file:PATH", "where COM1 output goes (default stdio; input from stdin)",
	  set_console },
	{ "dump-acpi", "DIR", "write the ACPI tables as DIR/SIG.dat and exit", set_dump_acpi },
	{ "cpu-hide", "LIST", "CPUID features to hide, e.g. cx16,xsave, or none (default: probed)",
	  set_cpu_hide },
	{ "host", "SPEC", "emulated pCPUs: NAME=COUNT:CAPACITY[:levels=L,..][:mhz=M,..][,...] "
	  "(default: one 1024 pCPU per host CPU)", set_host },
	{ "vcpu", "SET:KEY=VAL,..", "QoS of vCPUs SET (e.g. 0-3,^2): weight=, uclamp=MIN-MAX, "
	  "reservation=RUN/DEADLINE/PERIOD, cap=QUOTA/PERIOD, cluster=, group= (repeatable)",
	  set_vcpu },
	{ "vm-weight", "W", "weight of the VM as a whole, 1..1048576 (default 1024, cgroup v2's "
	  "cpu.weight 100)", set_vm_weight },
	{ "vm-cap", "QUOTA/PERIOD", "CPU time of the VM as a whole per period (cgroup cpu.max), "
	  "e.g. 150ms/100ms; the quota may be up to vCPUs x period", set_vm_cap },
	{ "group", "NAME:KEY=VAL,..", "a group of vCPUs in the VM: weight=W[,cap=QUOTA/PERIOD]; "
	  "its vCPUs: --vcpu SET:group=NAME (repeatable)", set_group },
	{ "sched", "capvisor|host", "who schedules the vCPU threads (default capvisor)", set_sched },
	{ "tick-us", "US", "scheduler tick (default " STRINGIFY(DISPATCH_DEFAULT_TICK_US) ")",
	  set_tick },
	{ "window-us", "US", "duty-cycle window of emulated capacity, "
	  STRINGIFY(DUTY_MIN_WINDOW_US) ".." STRINGIFY(DUTY_MAX_WINDOW_US)
	  " (default " STRINGIFY(DUTY_DEFAULT_WINDOW_US) "); every level must run >= "
	  STRINGIFY(DUTY_MIN_ON_US) " us of it", set_window },
	{ "slice-us", "US", "fair-class base slice of the engine (default "
	  STRINGIFY(DISPATCH_DEFAULT_SLICE_US) ")", set_slice },
	{ "no-cppc", NULL, "no _CPC, CPPC registers or APERF/MPERF for the guest", set_no_cppc },
	{ "stats-json", "FILE", "write the per-vCPU summary as JSON at exit", set_stats_json },
	{ "api-socket", "PATH", "serve the QMP control socket on PATH (docs/qmp.md)",
	  set_api_socket },
	{ "join", "PATH", "let the host scheduler on PATH (capvisor host's join socket) "
	  "schedule the vCPUs (docs/host.md)", set_join },
	{ "name", "NAME", "name of the VM on its host (--join; default vmPID)", set_name },
	{ "user", "NAME", "switch to this user after setup (capabilities are dropped anyway)",
	  set_user },
	{ "seccomp", "kill|trap|log|off", "system-call filters once running: kill the process on "
	  "a forbidden call, log it first (trap), only log it, or none (default kill; "
	  "docs/security.md)", set_seccomp },
	{ "config", "FILE", "read options from a VM definition file (JSON, docs/dispatcher.md)",
	  set_config },
	{ "domain", "FILE", "read the VM from libvirt domain XML (docs/libvirt.md)", set_domain },
	{ "dump-domain", "FILE", "write the VM as libvirt domain XML to FILE (- for stdout) and exit",
	  set_dump_domain },
	{ "emulator-cpus", "SET", "host CPUs of capvisor's own threads, e.g. 0 or 0-1 (default: any)",
	  set_emulator_cpus },
	{ "verbose", NULL, "log more (repeat: debug)", set_verbose },
	{ "help", NULL, "show this help (also -h)", set_help },
	{ "version", NULL, "print the version", set_version },
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

void vm_config_init(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_vcpus = 1;
	cfg->mem_size = VM_DEFAULT_MEM;
	cfg->console = CONSOLE_STDIO;
	cfg->seccomp = SANDBOX_KILL;
	vm_qos_default(&cfg->vm_qos);
}

void vm_config_usage(FILE *f)
{
	fprintf(f, "usage: capvisor run [OPTIONS]\n\noptions:\n");
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		char left[48];

		snprintf(left, sizeof(left), "--%s%s%s", options[i].name,
			 options[i].metavar ? " " : "", options[i].metavar ? options[i].metavar : "");
		fprintf(f, "  %-28s %s\n", left, options[i].help);
	}
	fprintf(f, "\nexit status: 0 guest powered off or rebooted, 1 guest failure, 2 bad usage or\n"
		   "input file, 3 KVM/host error, 128+N stopped by signal N (docs/vmm.md)\n");
}

static const struct vm_option *find_option(const char *name, size_t len)
{
	for (size_t i = 0; i < NR_OPTIONS; i++)
		if (strlen(options[i].name) == len && !strncmp(options[i].name, name, len))
			return &options[i];
	return NULL;
}

bool vm_config_has_option(const char *name)
{
	return find_option(name, strlen(name)) != NULL;
}

const struct vm_option *vm_config_option(unsigned int i)
{
	return i < NR_OPTIONS ? &options[i] : NULL;
}

struct loaded_def {
	struct vmdef_args args;
	struct domain_args dom;		/* --domain */
	struct loaded_def *next;
};

static int parse_args(struct vm_config *cfg, int first, int argc, char **argv,
		      const char *file, char **where);

/* Options in the file apply where --config stands; later options override them. */
static int set_config(struct vm_config *cfg, const char *arg)
{
	struct loaded_def *def = calloc(1, sizeof(*def));
	char err[512];

	if (!def)
		return -ENOMEM;
	/* A file cannot hold "config", so definitions never nest. */
	if (vmdef_load(arg, &def->args, err, sizeof(err))) {
		pr_err("%s", err);
		free(def);
		return -EINVAL;
	}
	def->next = cfg->defs;
	cfg->defs = def;
	return parse_args(cfg, 0, def->args.argc, def->args.argv, arg, def->args.where);
}

/*
 * The domain's options apply where --domain stands, one at a time, so that
 * an option rejecting its value can be traced to the XML element it came
 * from.
 */
static int set_domain(struct vm_config *cfg, const char *arg)
{
	struct loaded_def *def = calloc(1, sizeof(*def));
	char err[1024];
	int rc;

	if (!def)
		return -ENOMEM;
	rc = domain_load(arg, &def->dom, err, sizeof(err));
	if (rc) {
		/* A path refused at open names the option already (util/paths.h). */
		if (rc == -ENOENT)
			pr_err("%s", err);
		else
			pr_err("--domain: %s", err);
		free(def);
		return -EINVAL;
	}
	def->next = cfg->defs;
	cfg->defs = def;
	cfg->domain = &def->dom.info;
	for (int i = 0; i < def->dom.args.argc; i++) {
		if (parse_args(cfg, i, i + 1, def->dom.args.argv, NULL, NULL)) {
			pr_err("--domain: %s:%d: <%s>: the value above comes from here", arg,
			       def->dom.origin[i].line, def->dom.origin[i].element);
			return -EINVAL;
		}
	}
	return 0;
}

void vm_config_free(struct vm_config *cfg)
{
	struct loaded_def *def = cfg->defs, *next;

	for (; def; def = next) {
		next = def->next;
		vmdef_free(&def->args);
		domain_args_free(&def->dom);
		free(def);
	}
	cfg->defs = NULL;
	cfg->domain = NULL;
}

int vm_config_parse(struct vm_config *cfg, int argc, char **argv)
{
	return parse_args(cfg, 1, argc, argv, NULL, NULL);
}

int vm_origin_report(const struct vm_origin *o)
{
	if (o->file)
		pr_err("--config: %s: %s: refused (see the error above)", o->file, o->where);
	return -EINVAL;
}

static int parse_args(struct vm_config *cfg, int first, int argc, char **argv,
		      const char *file, char **where)
{
	for (int i = first; i < argc; i++) {
		const char *a = argv[i], *eq, *val = NULL;
		const struct vm_option *o;

		if (!strcmp(a, "-h"))
			a = "--help";
		if (strncmp(a, "--", 2)) {
			pr_err("unexpected argument '%s' (options start with --; see --help)", a);
			return -EINVAL;
		}
		a += 2;
		eq = strchr(a, '=');
		o = find_option(a, eq ? (size_t)(eq - a) : strlen(a));
		if (!o) {
			pr_err("unknown option '%s' (see capvisor run --help)", argv[i]);
			return -EINVAL;
		}
		if (o->metavar) {
			val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!val) {
				pr_err("--%s needs a value (%s)", o->name, o->metavar);
				return -EINVAL;
			}
		} else if (eq) {
			pr_err("--%s takes no value", o->name);
			return -EINVAL;
		}
		cfg->origin = (struct vm_origin){ .file = file, .where = file ? where[i] : NULL };
		if (o->set(cfg, val))
			return vm_origin_report(&cfg->origin);
	}
	cfg->origin = (struct vm_origin){ 0 };
	return 0;
}
