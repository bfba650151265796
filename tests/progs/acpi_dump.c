// SPDX-License-Identifier: MIT
/*
 * Build the ACPI tables for a described VM and dump them for ACPICA:
 *
 *   acpi_dump DIR [--vcpus N] [--big N] [--cppc] [--hint] [--no-com1]
 *                 [--apic-base B] [--apic-stride S] [--corrupt WHAT]
 *
 * The first --big vCPUs (default: half, rounded up) sit on a "big" cluster
 * (levels 512,768,1024 at 1500,2250,3000 MHz), the rest on a "little" one
 * (256,384,512 at 1200,1800,2400 MHz); even vCPUs are guaranteed capacity 256.
 * DIR gets SIG.dat per table and config.json, the configuration the checker
 * (tests/integration/acpi_check_cpc.py) compares the evaluated _CPC with.
 *
 * --corrupt breaks one thing after the build (re-sealing the checksum), so
 * the tests can show the checker catches it:
 *   nument  the first _CPC says NumEntries 22
 *   drop    the last _CPC package holds 22 elements
 *   addr    vCPU 1's desired_perf register points into vCPU 0's page
 *   osc     _OSC stops acking the flexible address space
 *   config  config.json claims a different reference_perf for vCPU 0
 */
#include "acpi/acpi.h"
#include "capvisor/layout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned int big_levels[] = { 512, 768, 1024 };
static const unsigned int big_mhz[] = { 1500, 2250, 3000 };
static const unsigned int little_levels[] = { 256, 384, 512 };
static const unsigned int little_mhz[] = { 1200, 1800, 2400 };

struct opts {
	const char *dir;
	unsigned int vcpus, big, apic_base, apic_stride;
	bool cppc, hint, com1;
	const char *corrupt;
};

static int usage(const char *why)
{
	fprintf(stderr, "acpi_dump: %s\nusage: acpi_dump DIR [--vcpus N] [--big N] [--cppc] "
		"[--hint] [--no-com1] [--apic-base B] [--apic-stride S] "
		"[--corrupt nument|drop|addr|osc|config]\n", why);
	return 2;
}

static int parse_uint(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xfffffffful)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){ .vcpus = 4, .big = ~0u, .apic_stride = 1, .com1 = true };
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		unsigned int *num = NULL;

		if (!strcmp(a, "--cppc"))
			o->cppc = true;
		else if (!strcmp(a, "--hint"))
			o->hint = true;
		else if (!strcmp(a, "--no-com1"))
			o->com1 = false;
		else if (!strcmp(a, "--vcpus"))
			num = &o->vcpus;
		else if (!strcmp(a, "--big"))
			num = &o->big;
		else if (!strcmp(a, "--apic-base"))
			num = &o->apic_base;
		else if (!strcmp(a, "--apic-stride"))
			num = &o->apic_stride;
		else if (!strcmp(a, "--corrupt") && i + 1 < argc)
			o->corrupt = argv[++i];
		else if (a[0] != '-' && !o->dir)
			o->dir = a;
		else
			return usage(a);
		if (num && (i + 1 >= argc || parse_uint(argv[++i], num)))
			return usage("option needs a number");
	}
	if (!o->dir)
		return usage("no output directory");
	if (o->big == ~0u)
		o->big = (o->vcpus + 1) / 2;
	return 0;
}

static struct acpi_vcpu_desc *make_vcpus(const struct opts *o)
{
	struct acpi_vcpu_desc *v = calloc(o->vcpus ? o->vcpus : 1, sizeof(*v));
	unsigned int i;

	for (i = 0; v && i < o->vcpus; i++) {
		bool big = i < o->big;
		unsigned int guaranteed = (i % 2) ? 0 : 256;

		v[i].apic_id = o->apic_base + i * o->apic_stride;
		acpi_cppc_caps_from_levels(big ? big_levels : little_levels,
					   big ? big_mhz : little_mhz, 3, guaranteed, &v[i].cppc);
	}
	return v;
}

static int write_config(const struct opts *o, const struct acpi_vcpu_desc *v)
{
	char path[4096];
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.json", o->dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "{\"cppc\": %s, \"hint\": %s, \"com1\": %s, \"mmio_hole\": [%llu, %llu], "
		"\"page_size\": %llu,\n", o->cppc ? "true" : "false",
		o->hint ? "true" : "false", o->com1 ? "true" : "false",
		LAYOUT_MMIO_HOLE_START, LAYOUT_MMIO_HOLE_END, LAYOUT_PER_VCPU_STRIDE);
	fprintf(f, " \"s5_slp_typ\": %d, \"cppc_regs\": {\"desired\": %d, \"min\": %d, "
		"\"max\": %d, \"enable\": %d, \"perf_limited\": %d, \"ref_counter\": %d, "
		"\"del_counter\": %d, \"guaranteed\": %d, \"auto_sel\": %d, ", ACPI_S5_SLP_TYP,
		CPPC_REG_DESIRED_PERF, CPPC_REG_MIN_PERF, CPPC_REG_MAX_PERF, CPPC_REG_ENABLE,
		CPPC_REG_PERF_LIMITED, CPPC_REG_REF_COUNTER, CPPC_REG_DEL_COUNTER,
		CPPC_REG_GUARANTEED_PERF, CPPC_REG_AUTO_SEL);
	fprintf(f, "\"highest\": %d, \"nominal\": %d, \"lowest_nonlinear\": %d, "
		"\"lowest\": %d},\n", CPPC_REG_HIGHEST_PERF, CPPC_REG_NOMINAL_PERF,
		CPPC_REG_LOWEST_NONLINEAR_PERF, CPPC_REG_LOWEST_PERF);
	fprintf(f, " \"vcpus\": [\n");
	for (i = 0; i < o->vcpus; i++) {
		const struct acpi_cppc_caps *c = &v[i].cppc;
		unsigned int reference = acpi_cppc_reference_perf(c);

		if (o->corrupt && !strcmp(o->corrupt, "config") && i == 0)
			reference++;
		fprintf(f, " {\"uid\": %u, \"apic_id\": %u, \"highest_perf\": %u, "
			"\"nominal_perf\": %u, \"lowest_nonlinear_perf\": %u, \"lowest_perf\": %u, "
			"\"guaranteed_perf\": %u, \"lowest_freq\": %u, \"nominal_freq\": %u, "
			"\"reference_perf\": %u, "
			"\"cppc_page\": %llu, \"hint_page\": %llu}%s\n", i, v[i].apic_id,
			c->highest_perf, c->nominal_perf, c->lowest_nonlinear_perf, c->lowest_perf,
			c->guaranteed_perf, c->lowest_freq_mhz, c->nominal_freq_mhz,
			reference, (unsigned long long)acpi_cppc_page_gpa(i),
			(unsigned long long)acpi_hint_page_gpa(i), i + 1 < o->vcpus ? "," : "");
	}
	fprintf(f, "]}\n");
	return fclose(f) ? -errno : 0;
}

static uint8_t *find(uint8_t *p, size_t len, const void *pat, size_t plen, bool last)
{
	uint8_t *hit = NULL;
	size_t i;

	for (i = 0; i + plen <= len; i++) {
		if (!memcmp(p + i, pat, plen)) {
			hit = p + i;
			if (!last)
				break;
		}
	}
	return hit;
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Patch the DSDT (t, len) as --corrupt says; returns 0 or -1 if not found. */
static int corrupt_dsdt(const char *what, uint8_t *t, size_t len)
{
	static const uint8_t cpc_head[] = { 0x0a, 23, 0x0a, 3 };
	static const uint8_t osc_and[] = { 0x0b, 0x40, 0x40 };
	uint8_t addr[8], *p;

	if (!strcmp(what, "nument") || !strcmp(what, "drop")) {
		p = find(t, len, cpc_head, sizeof(cpc_head), !strcmp(what, "drop"));
		if (!p)
			return -1;
		if (!strcmp(what, "nument"))
			p[1] = 22;
		else
			p[-1] = 22;	/* the Package's NumElements byte */
	} else if (!strcmp(what, "addr")) {
		le64(addr, acpi_cppc_page_gpa(1) + CPPC_REG_DESIRED_PERF);
		p = find(t, len, addr, sizeof(addr), false);
		if (!p)
			return -1;
		le64(p, acpi_cppc_page_gpa(0) + CPPC_REG_DESIRED_PERF);
	} else if (!strcmp(what, "osc")) {
		p = find(t, len, osc_and, sizeof(osc_and), false);
		if (!p)
			return -1;
		p[2] = 0x00;
	} else {
		return 0;
	}
	t[9] = 0;
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += t[i];
	t[9] = (uint8_t)-sum;
	return 0;
}

int main(int argc, char **argv)
{
	struct acpi_vcpu_desc *vcpus;
	struct acpi_tables t;
	struct opts o;
	uint8_t *buf;
	unsigned int i;
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	vcpus = make_vcpus(&o);
	buf = malloc(LAYOUT_ACPI_SIZE);
	if (!vcpus || !buf)
		return 1;
	struct acpi_vm_desc desc = {
		.nr_vcpus = o.vcpus, .vcpus = vcpus, .cppc = o.cppc, .ged = o.cppc,
		.hint_device = o.hint, .com1 = o.com1,
	};
	ret = acpi_build_tables(&desc, buf, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_BASE, &t);
	if (ret) {
		fprintf(stderr, "acpi_dump: building tables: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; o.corrupt && i < t.nr; i++) {
		if (strcmp(t.tables[i].sig, "DSDT"))
			continue;
		if (corrupt_dsdt(o.corrupt, buf + t.tables[i].offset, t.tables[i].len)) {
			fprintf(stderr, "acpi_dump: nothing to corrupt for '%s'\n", o.corrupt);
			return 1;
		}
	}
	ret = acpi_dump_tables(&t, buf, o.dir);
	if (!ret)
		ret = write_config(&o, vcpus);
	if (ret) {
		fprintf(stderr, "acpi_dump: writing %s: %s\n", o.dir, strerror(-ret));
		return 1;
	}
	printf("acpi_dump: %u tables, %zu of %llu bytes used, RSDP at 0x%llx\n", t.nr, t.used,
	       LAYOUT_ACPI_SIZE, (unsigned long long)t.rsdp_gpa);
	free(vcpus);
	free(buf);
	return 0;
}
