// SPDX-License-Identifier: MIT
/*
 * `capvisor run`'s options (cli/options.h): the option table, grouped as
 * --help shows it, whose entries point at their field of struct vm_config
 * (strings, flags, counts, microseconds in their limits) or, where a value
 * needs more than storing, at a setter; numbers and sizes; --config and
 * --domain expanded in place; the help text, built from the table.
 */
#include "cli/options.h"
#include "cli/domain.h"
#include "dispatch/dispatch.h"
#include "dispatch/dutycycle.h"
#include "vmm/emulator.h"
#include "util/keyval.h"
#include "util/log.h"
#include "util/util.h"
#include "dispatch/qosspec.h"
#include "cli/vmdef.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	const char *end;

	if (kv_scan_uint(&s, UINT64_MAX, &v))
		return -EINVAL;
	end = s;
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

static int set_vcpus(struct vm_config *cfg, const char *arg)
{
	unsigned long long n;

	if (kv_parse_uint(arg, VM_MAX_VCPUS, &n) || n == 0) {
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

static int set_cpu_hide(struct vm_config *cfg, const char *arg)
{
	if (cpuid_parse_hide(arg, &cfg->cpu_hide))
		return -EINVAL;
	cfg->cpu_hide_set = true;
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

/* Options that only store their value point at their field, of the type it must have. */
#define FIELD(f, t)	_Generic(((struct vm_config *)0)->f, t: offsetof(struct vm_config, f))
#define OPT_GROUP(title)	{ .kind = VM_OPT_GROUP, .help = title }
#define OPT_STRING(opt, meta, f, text)						\
	{ .name = opt, .metavar = meta, .help = text, .kind = VM_OPT_STRING,	\
	  .offset = FIELD(f, const char *) }
#define OPT_FLAG(opt, f, text)							\
	{ .name = opt, .help = text, .kind = VM_OPT_FLAG, .offset = FIELD(f, bool) }
#define OPT_COUNT(opt, f, text)							\
	{ .name = opt, .help = text, .kind = VM_OPT_COUNT, .offset = FIELD(f, unsigned int) }
#define OPT_US(opt, f, lo, hi, dflt, text)					\
	{ .name = opt, .metavar = "US", .help = text, .kind = VM_OPT_US,	\
	  .offset = FIELD(f, uint64_t), .min = lo, .max = hi, .def = dflt }

/* Options that parse their value name a setter (VM_OPT_CALL), and may show their limits. */
static const struct vm_option options[] = {
	OPT_GROUP("guest"),
	OPT_STRING("kernel", "FILE", kernel,
		   "PVH ELF or bzImage to boot (default: the embedded test guest)"),
	OPT_STRING("initrd", "FILE", initrd, "initial ramdisk"),
	OPT_STRING("cmdline", "STR", cmdline, "kernel command line"),
	{ "vcpus", "N", "number of vCPUs", set_vcpus,
	  .min = 1, .max = VM_MAX_VCPUS, .def = VM_DEFAULT_VCPUS },
	{ "mem", "SIZE", "guest RAM, e.g. 512M or 2G, at least 16M (default 256M)", set_mem,
	  .kind = VM_OPT_CALL },
	{ "console", "stdio|file:PATH", "where COM1 output goes (default stdio; input from stdin)",
	  set_console, .kind = VM_OPT_CALL },
	{ "cpu-hide", "LIST", "CPUID features to hide, e.g. cx16,xsave, or none (default: probed)",
	  set_cpu_hide, .kind = VM_OPT_CALL },
	OPT_FLAG("no-cppc", no_cppc, "no _CPC, CPPC registers or APERF/MPERF for the guest"),

	OPT_GROUP("scheduling"),
	{ "host", "SPEC", "emulated pCPUs: NAME=COUNT:CAPACITY[:levels=L,..][:mhz=M,..][,...] "
	  "(default: one 1024 pCPU per host CPU)", set_host, .kind = VM_OPT_CALL },
	{ "vcpu", "SET:KEY=VAL,..", "QoS of vCPUs SET (e.g. 0-3,^2): weight=, uclamp=MIN-MAX, "
	  "reservation=RUN/DEADLINE/PERIOD, cap=QUOTA/PERIOD, cluster=, group= (repeatable)",
	  set_vcpu, .kind = VM_OPT_CALL },
	{ "vm-weight", "W", "weight of the VM as a whole (cgroup v2's cpu.weight 100 is 1024)",
	  set_vm_weight, .min = QOS_WEIGHT_MIN, .max = QOS_WEIGHT_MAX,
	  .def = QOS_GROUP_WEIGHT_DEFAULT },
	{ "vm-cap", "QUOTA/PERIOD", "CPU time of the VM as a whole per period (cgroup cpu.max), "
	  "e.g. 150ms/100ms; the quota may be up to vCPUs x period", set_vm_cap,
	  .kind = VM_OPT_CALL },
	{ "group", "NAME:KEY=VAL,..", "a group of vCPUs in the VM: weight=W[,cap=QUOTA/PERIOD]; "
	  "its vCPUs: --vcpu SET:group=NAME (repeatable)", set_group, .kind = VM_OPT_CALL },
	{ "sched", "capvisor|host", "who schedules the vCPU threads (default capvisor)", set_sched,
	  .kind = VM_OPT_CALL },
	OPT_US("tick-us", tick_ns, DISPATCH_TICK_MIN_US, DISPATCH_TICK_MAX_US,
	       DISPATCH_DEFAULT_TICK_US, "scheduler tick"),
	OPT_US("window-us", window_ns, DUTY_MIN_WINDOW_US, DUTY_MAX_WINDOW_US,
	       DUTY_DEFAULT_WINDOW_US, "duty-cycle window of emulated capacity (every level "
	       "must run >= " STRINGIFY(DUTY_MIN_ON_US) " us of it)"),
	OPT_US("slice-us", slice_ns, DISPATCH_SLICE_MIN_US, DISPATCH_SLICE_MAX_US,
	       DISPATCH_DEFAULT_SLICE_US, "fair-class base slice of the engine"),
	{ "emulator-cpus", "SET", "host CPUs of capvisor's own threads, e.g. 0 or 0-1 "
	  "(default: any)",
	  set_emulator_cpus, .kind = VM_OPT_CALL },

	OPT_GROUP("definition files and dumps"),
	{ "config", "FILE", "read options from a VM definition file (JSON, docs/dispatcher.md)",
	  set_config, .kind = VM_OPT_CALL },
	{ "domain", "FILE", "read the VM from libvirt domain XML (docs/libvirt.md)", set_domain,
	  .kind = VM_OPT_CALL },
	OPT_STRING("dump-domain", "FILE", dump_domain,
		   "write the VM as libvirt domain XML to FILE (- for stdout) and exit"),
	OPT_STRING("dump-acpi", "DIR", dump_acpi_dir,
		   "write the ACPI tables as DIR/SIG.dat and exit"),
	OPT_STRING("stats-json", "FILE", stats_json, "write the per-vCPU summary as JSON at exit"),

	OPT_GROUP("control and privileges"),
	OPT_STRING("api-socket", "PATH", api_socket,
		   "serve the QMP control socket on PATH (docs/qmp.md)"),
	OPT_STRING("join", "PATH", join, "let the host scheduler on PATH (capvisor host's join "
		   "socket) schedule the vCPUs (docs/host.md)"),
	OPT_STRING("name", "NAME", name, "name of the VM on its host (--join; default vmPID)"),
	OPT_STRING("user", "NAME", user,
		   "switch to this user after setup (capabilities are dropped anyway)"),
	{ "seccomp", "kill|trap|log|off", "system-call filters once running: kill the process on "
	  "a forbidden call, log it first (trap), only log it, or none (default kill; "
	  "docs/security.md)", set_seccomp, .kind = VM_OPT_CALL },

	OPT_GROUP("general"),
	OPT_COUNT("verbose", verbose, "log more (repeat: debug)"),
	OPT_FLAG("help", help, "show this help (also -h)"),
	OPT_FLAG("version", version, "print the version"),
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

void vm_config_init(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_vcpus = VM_DEFAULT_VCPUS;
	cfg->mem_size = VM_DEFAULT_MEM;
	cfg->console = CONSOLE_STDIO;
	cfg->seccomp = SANDBOX_KILL;
	vm_qos_default(&cfg->vm_qos);
}

/* "--NAME METAVAR": the left column of --help. */
static void usage_line(FILE *f, const struct vm_option *o)
{
	char left[48];

	snprintf(left, sizeof(left), "--%s%s%s", o->name, o->metavar ? " " : "",
		 o->metavar ? o->metavar : "");
	fprintf(f, "  %-28s %s", left, o->help);
	if (o->max)
		fprintf(f, ", %llu..%llu%s", o->min, o->max, o->kind == VM_OPT_US ? " us" : "");
	if (o->def)
		fprintf(f, " (default %llu)", o->def);
	fputc('\n', f);
}

void vm_config_usage(FILE *f)
{
	fprintf(f, "usage: capvisor run [OPTIONS]\n");
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		if (options[i].kind == VM_OPT_GROUP)
			fprintf(f, "\n%s options:\n", options[i].help);
		else
			usage_line(f, &options[i]);
	}
	fprintf(f, "\nexit status: 0 guest powered off or rebooted, 1 guest failure, 2 bad usage or\n"
		   "input file, 3 KVM/host error, 128+N stopped by signal N (docs/vmm.md)\n");
}

static const struct vm_option *find_option(const char *name, size_t len)
{
	for (size_t i = 0; i < NR_OPTIONS; i++)
		if (options[i].kind != VM_OPT_GROUP && strlen(options[i].name) == len &&
		    !strncmp(options[i].name, name, len))
			return &options[i];
	return NULL;
}

bool vm_config_has_option(const char *name)
{
	return find_option(name, strlen(name)) != NULL;
}

const struct vm_option *vm_config_option(unsigned int i)
{
	for (size_t k = 0; k < NR_OPTIONS; k++)
		if (options[k].kind != VM_OPT_GROUP && !i--)
			return &options[k];
	return NULL;
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

/* Microseconds within the option's limits, stored in ns. */
static int set_us(const struct vm_option *o, const char *arg, uint64_t *out)
{
	unsigned long long us;

	if (kv_parse_uint(arg, o->max, &us) || us < o->min) {
		pr_err("--%s: '%s' (expected microseconds, %llu..%llu)", o->name, arg, o->min,
		       o->max);
		return -EINVAL;
	}
	*out = us * 1000;
	return 0;
}

static int apply_option(struct vm_config *cfg, const struct vm_option *o, const char *arg)
{
	void *field = (char *)cfg + o->offset;

	switch (o->kind) {
	case VM_OPT_STRING:
		*(const char **)field = arg;
		return 0;
	case VM_OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case VM_OPT_COUNT:
		(*(unsigned int *)field)++;
		return 0;
	case VM_OPT_US:
		return set_us(o, arg, field);
	case VM_OPT_CALL:
		return o->set(cfg, arg);
	case VM_OPT_GROUP:
		break;
	}
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
		if (apply_option(cfg, o, val))
			return vm_origin_report(&cfg->origin);
	}
	cfg->origin = (struct vm_origin){ 0 };
	return 0;
}
