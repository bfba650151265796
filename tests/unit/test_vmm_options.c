// SPDX-License-Identifier: MIT
/* `capvisor run` option parsing, sizes, and the CPUID feature-hiding helpers. */
#include "tests/unit/harness.h"
#include "vmm/kvm/cpuid.h"
#include "dispatch/dispatch.h"
#include "dispatch/dutycycle.h"
#include "cli/options.h"
#include "dispatch/qosspec.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

static void test_parse_size(void)
{
	uint64_t v;

	CU_ASSERT_EQUAL(parse_size("256M", &v), 0);
	CU_ASSERT_EQUAL(v, 256ULL << 20);
	CU_ASSERT_EQUAL(parse_size("2G", &v), 0);
	CU_ASSERT_EQUAL(v, 2ULL << 30);
	CU_ASSERT_EQUAL(parse_size("2gib", &v), 0);
	CU_ASSERT_EQUAL(v, 2ULL << 30);
	CU_ASSERT_EQUAL(parse_size("4096K", &v), 0);
	CU_ASSERT_EQUAL(v, 4ULL << 20);
	CU_ASSERT_EQUAL(parse_size("1048576", &v), 0);
	CU_ASSERT_EQUAL(v, 1ULL << 20);
	CU_ASSERT_EQUAL(parse_size("", &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_size("-1G", &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_size("12Q", &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_size("1Gx", &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_size("99999999999999999999", &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_size("17179869184T", &v), -EINVAL);	/* 2^34 T overflows */
}

static int parse(struct vm_config *cfg, int argc, const char *const *argv)
{
	vm_config_init(cfg);
	return vm_config_parse(cfg, argc, (char **)argv);
}

static void test_run_options_defaults_and_values(void)
{
	struct vm_config cfg;
	const char *none[] = { "run" };
	const char *all[] = { "run", "--kernel", "k.elf", "--vcpus=4", "--mem", "512M",
			      "--cmdline", "a b", "--console", "file:/tmp/x", "--cpu-hide",
			      "cx16,xsave", "--verbose", "--initrd", "i.img" };

	CU_ASSERT_EQUAL(parse(&cfg, 1, none), 0);
	CU_ASSERT_PTR_NULL(cfg.kernel);
	CU_ASSERT_EQUAL(cfg.nr_vcpus, 1);
	CU_ASSERT_EQUAL(cfg.mem_size, 256ULL << 20);
	CU_ASSERT_EQUAL(cfg.console, CONSOLE_STDIO);
	CU_ASSERT_FALSE(cfg.cpu_hide_set);
	CU_ASSERT_EQUAL(parse(&cfg, sizeof(all) / sizeof(all[0]), all), 0);
	CU_ASSERT_STRING_EQUAL(cfg.kernel, "k.elf");
	CU_ASSERT_STRING_EQUAL(cfg.initrd, "i.img");
	CU_ASSERT_STRING_EQUAL(cfg.cmdline, "a b");
	CU_ASSERT_EQUAL(cfg.nr_vcpus, 4);
	CU_ASSERT_EQUAL(cfg.mem_size, 512ULL << 20);
	CU_ASSERT_EQUAL(cfg.console, CONSOLE_FILE);
	CU_ASSERT_STRING_EQUAL(cfg.console_path, "/tmp/x");
	CU_ASSERT(cfg.cpu_hide_set);
	CU_ASSERT_EQUAL(__builtin_popcountll(cfg.cpu_hide), 2);
	CU_ASSERT_EQUAL(cfg.verbose, 1);
}

static void test_run_options_rejected(void)
{
	struct vm_config cfg;
	const char *const bad[][3] = {
		{ "run", "--vcpus", "0" }, { "run", "--vcpus", "256" }, { "run", "--vcpus", "x" },
		{ "run", "--vcpus", "-1" }, { "run", "--mem", "1M" }, { "run", "--mem", "2T" },
		{ "run", "--mem", "16777217" }, { "run", "--console", "tty" },
		{ "run", "--console", "file:" }, { "run", "--cpu-hide", "cx16,bogus" },
		{ "run", "--nope", "1" }, { "run", "stray", "x" }, { "run", "--verbose=1", "" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(parse(&cfg, bad[i][2][0] ? 3 : 2, bad[i]), -EINVAL);
	{
		const char *missing[] = { "run", "--kernel" };

		CU_ASSERT_EQUAL(parse(&cfg, 2, missing), -EINVAL);
	}
}

static void test_help_and_version_flags(void)
{
	struct vm_config cfg;
	const char *h[] = { "run", "-h" }, *help[] = { "run", "--vcpus", "2", "--help" };
	const char *ver[] = { "run", "--version" }, *val[] = { "run", "--cmdline", "--version" };

	CU_ASSERT_EQUAL(parse(&cfg, 2, h), 0);
	CU_ASSERT(cfg.help && !cfg.version);
	CU_ASSERT_EQUAL(parse(&cfg, 4, help), 0);
	CU_ASSERT(cfg.help);
	CU_ASSERT_EQUAL(parse(&cfg, 2, ver), 0);
	CU_ASSERT(cfg.version && !cfg.help);
	/* An option's value is never taken for a flag. */
	CU_ASSERT_EQUAL(parse(&cfg, 3, val), 0);
	CU_ASSERT(!cfg.version);
	CU_ASSERT_STRING_EQUAL(cfg.cmdline, "--version");
	/* The table is what --help prints and what the man page test reads. */
	CU_ASSERT(vm_config_has_option("version") && vm_config_has_option("help"));
	CU_ASSERT_FALSE(vm_config_has_option("h"));
	for (unsigned int i = 0; vm_config_option(i); i++)
		CU_ASSERT(vm_config_option(i)->help && *vm_config_option(i)->help);
}

/* --help, as vm_config_usage() writes it (the caller frees it). */
static char *usage_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	vm_config_usage(f);
	fclose(f);
	return text;
}

/* The line of --help for --NAME contains want. */
static bool help_line_has(const char *text, const char *name, const char *want)
{
	const char *line, *hit;
	char start[64];

	snprintf(start, sizeof(start), "\n  --%s ", name);
	line = strstr(text, start);
	if (!line)
		return false;
	hit = strstr(line + 1, want);
	return hit && hit < strchr(line + 1, '\n');
}

/* --help quotes the limits and defaults of dispatch/ and cli/: it fails if they drift apart. */
static void test_help_quotes_the_limits(void)
{
	char *text = usage_text();
	char want[96];

	snprintf(want, sizeof(want), "%u..%u (default %u)", QOS_WEIGHT_MIN, QOS_WEIGHT_MAX,
		 QOS_GROUP_WEIGHT_DEFAULT);
	CU_ASSERT(help_line_has(text, "vm-weight", want));
	snprintf(want, sizeof(want), "%llu..%llu us (default %llu)", DUTY_MIN_WINDOW_NS / 1000,
		 DUTY_MAX_WINDOW_NS / 1000, DUTY_DEFAULT_WINDOW_NS / 1000);
	CU_ASSERT(help_line_has(text, "window-us", want));
	snprintf(want, sizeof(want), ">= %llu us", DUTY_MIN_ON_NS / 1000);
	CU_ASSERT(help_line_has(text, "window-us", want));
	snprintf(want, sizeof(want), "%d..%d us (default %d)", DISPATCH_TICK_MIN_US,
		 DISPATCH_TICK_MAX_US, DISPATCH_DEFAULT_TICK_US);
	CU_ASSERT(help_line_has(text, "tick-us", want));
	snprintf(want, sizeof(want), "%d..%d us (default %d)", DISPATCH_SLICE_MIN_US,
		 DISPATCH_SLICE_MAX_US, DISPATCH_DEFAULT_SLICE_US);
	CU_ASSERT(help_line_has(text, "slice-us", want));
	snprintf(want, sizeof(want), "1..%d (default %d)", VM_MAX_VCPUS, VM_DEFAULT_VCPUS);
	CU_ASSERT(help_line_has(text, "vcpus", want));
	/* Grouped: every option under a heading; headings are not options. */
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nscheduling options:\n  --host "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nguest options:\n  --kernel "));
	CU_ASSERT_FALSE(vm_config_has_option("scheduling"));
	free(text);
}

/* Options that point at their field: strings, flags, counts, microseconds within limits. */
static void test_table_options_fill_their_fields(void)
{
	const char *argv[] = { "run", "--stats-json", "s.json", "--no-cppc", "--verbose",
			       "--verbose", "--tick-us=250", "--slice-us", "100000",
			       "--dump-acpi", "dir", "--api-socket", "q.sock" };
	const char *low[] = { "run", "--tick-us", "99" }, *high[] = { "run", "--slice-us", "100001" };
	struct vm_config cfg;

	CU_ASSERT_EQUAL_FATAL(parse(&cfg, sizeof(argv) / sizeof(argv[0]), argv), 0);
	CU_ASSERT_STRING_EQUAL(cfg.stats_json, "s.json");
	CU_ASSERT_STRING_EQUAL(cfg.dump_acpi_dir, "dir");
	CU_ASSERT_STRING_EQUAL(cfg.api_socket, "q.sock");
	CU_ASSERT(cfg.no_cppc);
	CU_ASSERT_EQUAL(cfg.verbose, 2);
	CU_ASSERT_EQUAL(cfg.tick_ns, 250000);
	CU_ASSERT_EQUAL(cfg.slice_ns, 100000000);
	CU_ASSERT_EQUAL(cfg.window_ns, 0);
	CU_ASSERT_EQUAL(parse(&cfg, 3, low), -EINVAL);
	CU_ASSERT_EQUAL(cfg.tick_ns, 0);
	CU_ASSERT_EQUAL(parse(&cfg, 3, high), -EINVAL);
	CU_ASSERT_EQUAL(cfg.slice_ns, 0);
}
/* The VM-level options land in cfg->vm_qos, and a refused one leaves it as it was. */
static void test_vm_qos_options(void)
{
	char *argv[] = { "run", "--vm-weight", "2048", "--vm-cap=150ms/100ms", "--group",
			 "web:weight=512", "--vcpu", "0:group=web", NULL };
	char *bad[] = { "run", "--vm-weight", "9", "--group", "web:weight=0", NULL };
	struct vm_config cfg;

	vm_config_init(&cfg);
	CU_ASSERT_EQUAL(cfg.vm_qos.vm.weight, QOS_GROUP_WEIGHT_DEFAULT);
	CU_ASSERT_EQUAL_FATAL(vm_config_parse(&cfg, 8, argv), 0);
	CU_ASSERT_EQUAL(cfg.vm_qos.vm.weight, 2048);
	CU_ASSERT(cfg.vm_qos.vm.has_cap && cfg.vm_qos.vm.cap_quota_ns == 150000000);
	CU_ASSERT_EQUAL_FATAL(cfg.vm_qos.nr_groups, 1);
	CU_ASSERT_STRING_EQUAL(cfg.vm_qos.groups[0].name, "web");
	CU_ASSERT_EQUAL(cfg.nr_vcpu_specs, 1);
	vm_config_free(&cfg);
	vm_config_init(&cfg);
	CU_ASSERT(vm_config_parse(&cfg, 5, bad) < 0);
	CU_ASSERT_EQUAL(cfg.vm_qos.vm.weight, 9);
	CU_ASSERT_EQUAL(cfg.vm_qos.nr_groups, 0);
	vm_config_free(&cfg);
}

static void test_cpu_hide_names_roundtrip(void)
{
	cpuid_feature_set set;
	char buf[256];

	CU_ASSERT_EQUAL(cpuid_parse_hide("xsave,cx16", &set), 0);
	cpuid_format_set(set, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "cx16,xsave");
	CU_ASSERT_EQUAL(cpuid_parse_hide("none", &set), 0);
	CU_ASSERT_EQUAL(set, 0);
	cpuid_format_set(set, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "none");
	CU_ASSERT_EQUAL(cpuid_parse_hide("cx1", &set), -EINVAL);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void test_pvm_probe(void)
{
	char dir[] = "/tmp/capvisor-cpuid-XXXXXX", info[64], mod[64];

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(info, sizeof(info), "%s/cpuinfo", dir);
	snprintf(mod, sizeof(mod), "%s/kvm_pvm", dir);
	write_file(info, "processor\t: 0\nflags\t\t: fpu cx16 xsave hypervisor\n");
	CU_ASSERT_FALSE(cpuid_host_is_pvm(info, mod));		/* no module */
	CU_ASSERT_EQUAL(mkdir(mod, 0700), 0);
	CU_ASSERT_TRUE(cpuid_host_is_pvm(info, mod));
	write_file(info, "processor\t: 0\nflags\t\t: fpu svm cx16\n");
	CU_ASSERT_FALSE(cpuid_host_is_pvm(info, mod));		/* hardware virtualization */
	write_file(info, "processor\t: 0\nflags\t\t: fpu vmx\n");
	CU_ASSERT_FALSE(cpuid_host_is_pvm(info, mod));
	unlink(info);
	CU_ASSERT_FALSE(cpuid_host_is_pvm(info, mod));		/* unreadable: assume not */
	rmdir(mod);
	rmdir(dir);
}

/* A fake supported-CPUID table to fix up. */
static struct kvm_cpuid2 *fake_cpuid(void)
{
	static const struct kvm_cpuid_entry2 base[] = {
		{ .function = 1, .ebx = 0x00020800, .ecx = (1u << 13) | (1u << 26) | (1u << 28) },
		{ .function = 6 },
		{ .function = 7, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .ebx = 1u << 5 },
		{ .function = 0xb, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX },
		{ .function = 0xd, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 7, .ebx = 0x988 },
		{ .function = 0x80000008, .ebx = 1u << 27, .ecx = 0x7001 },
		{ .function = 0x8000001e },
		{ .function = 0x40000000, .eax = 0x40000001, .ebx = 0x4b4d564b, .ecx = 0x564b4d56,
		  .edx = 0x4d },
		{ .function = 0x40000001, .eax = (1u << 3) | (1u << 5) | (1u << 13) },
	};
	size_t n = sizeof(base) / sizeof(base[0]);
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + (n + CPUID_SPARE_ENTRIES) * sizeof(base[0]));

	memcpy(c->entries, base, sizeof(base));
	c->nent = (uint32_t)n;
	return c;
}

static struct kvm_cpuid_entry2 *entry(struct kvm_cpuid2 *c, uint32_t f, uint32_t idx)
{
	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == f && c->entries[i].index == idx)
			return &c->entries[i];
	return NULL;
}

static void test_cpuid_fixup(void)
{
	struct kvm_cpuid2 *c = fake_cpuid();
	size_t max = c->nent + CPUID_SPARE_ENTRIES;
	cpuid_feature_set hide;
	struct cpuid_config cfg = { .nr_vcpus = 6, .tsc_khz = 2400000, .aperfmperf = true };
	struct kvm_cpuid_entry2 *e;

	CU_ASSERT_EQUAL(cpuid_parse_hide("cx16,xsave", &hide), 0);
	cfg.hide = hide;
	CU_ASSERT_EQUAL_FATAL(cpuid_fixup(c, max, &cfg), 0);
	cpuid_set_apic_id(c, 5);
	e = entry(c, 1, 0);
	CU_ASSERT_EQUAL(e->ecx & ((1u << 13) | (1u << 26) | (1u << 28)), 0);	/* cx16, xsave, avx */
	CU_ASSERT_EQUAL((e->ebx >> 16) & 0xff, 6);
	CU_ASSERT_EQUAL(e->ebx >> 24, 5);
	CU_ASSERT_EQUAL(entry(c, 7, 0)->ebx & (1u << 5), 0);			/* avx2 follows */
	CU_ASSERT_EQUAL(entry(c, 0xd, 0)->eax, 0);
	CU_ASSERT_EQUAL(entry(c, 6, 0)->ecx & 1, 1);				/* APERFMPERF */
	/* Leaf 0xb: SMT level, core level with 6 cores (shift 3), then the end. */
	CU_ASSERT_EQUAL(entry(c, 0xb, 0)->ebx, 1);
	CU_ASSERT_EQUAL(entry(c, 0xb, 1)->eax, 3);
	CU_ASSERT_EQUAL(entry(c, 0xb, 1)->ebx, 6);
	CU_ASSERT_EQUAL((entry(c, 0xb, 1)->ecx >> 8) & 0xff, 2);
	CU_ASSERT_EQUAL((entry(c, 0xb, 2)->ecx >> 8) & 0xff, 0);
	CU_ASSERT_EQUAL(entry(c, 0xb, 1)->edx, 5);
	e = entry(c, 0x80000008, 0);
	CU_ASSERT_EQUAL(e->ecx & 0xff, 5);
	CU_ASSERT_EQUAL((e->ecx >> 12) & 0xf, 3);
	CU_ASSERT_EQUAL(e->ebx & (1u << 27), 0);				/* no MSR CPPC */
	CU_ASSERT_EQUAL(entry(c, 0x8000001e, 0)->eax, 5);
	CU_ASSERT_EQUAL(entry(c, 0x40000000, 0)->eax, 0x40000010);
	CU_ASSERT_EQUAL(entry(c, 0x40000010, 0)->eax, 2400000);
	/* KVM leaves there: the hypervisor bit says so; PV sched yield is hidden. */
	CU_ASSERT_NOT_EQUAL(entry(c, 1, 0)->ecx & (1u << 31), 0);
	CU_ASSERT_EQUAL(entry(c, 0x40000001, 0)->eax, (1u << 3) | (1u << 5));
	free(c);
	/* No KVM signature: no hypervisor bit pointing at leaves nobody filled. */
	c = fake_cpuid();
	entry(c, 0x40000000, 0)->ebx = 0;
	cfg = (struct cpuid_config){ .nr_vcpus = 1 };
	CU_ASSERT_EQUAL(cpuid_fixup(c, c->nent + CPUID_SPARE_ENTRIES, &cfg), 0);
	CU_ASSERT_EQUAL(entry(c, 1, 0)->ecx & (1u << 31), 0);
	free(c);
	/* Without hiding or APERFMPERF nothing of that is touched. */
	c = fake_cpuid();
	cfg = (struct cpuid_config){ .nr_vcpus = 1 };
	CU_ASSERT_EQUAL(cpuid_fixup(c, c->nent + CPUID_SPARE_ENTRIES, &cfg), 0);
	CU_ASSERT_NOT_EQUAL(entry(c, 1, 0)->ecx & (1u << 13), 0);
	CU_ASSERT_EQUAL(entry(c, 6, 0)->ecx & 1, 0);
	CU_ASSERT_PTR_NULL(entry(c, 0x40000010, 0));
	free(c);
}

UNIT_SUITE(vmm_options, NULL, NULL,
	   UNIT_TEST(test_parse_size),
	   UNIT_TEST(test_help_quotes_the_limits),
	   UNIT_TEST(test_table_options_fill_their_fields),
	   UNIT_TEST(test_vm_qos_options),
	   UNIT_TEST(test_run_options_defaults_and_values),
	   UNIT_TEST(test_run_options_rejected),
	   UNIT_TEST(test_help_and_version_flags),
	   UNIT_TEST(test_cpu_hide_names_roundtrip),
	   UNIT_TEST(test_pvm_probe),
	   UNIT_TEST(test_cpuid_fixup))
