// SPDX-License-Identifier: MIT
/*
 * The guest's CPUID (vmm/kvm/cpuid.h): KVM's supported leaves fixed up for
 * N CPUs, the KVM leaves and the TSC frequency, --cpu-hide and the default
 * features this host's KVM cannot run.
 */
#include "vmm/kvm/cpuid.h"
#include "util/log.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

enum cpuid_reg { EAX, EBX, ECX, EDX };

struct cpuid_bit {
	uint32_t leaf, subleaf;
	enum cpuid_reg reg;
	uint8_t bit;
};

#define MAX_BITS 7
struct cpu_feature {
	const char *name;
	struct cpuid_bit bits[MAX_BITS];	/* the feature and what cannot work without it */
	unsigned int nr_bits;
	bool drop_leaf_0xd;			/* XSAVE state enumeration */
};

static const struct cpu_feature features[] = {
	{ "cx16", { { 1, 0, ECX, 13 } }, 1, false },
	/* XSAVE and everything that needs XSAVE-managed state (AVX, AVX2, AVX-512, FMA, F16C). */
	{ "xsave", { { 1, 0, ECX, 26 }, { 1, 0, ECX, 27 }, { 1, 0, ECX, 28 }, { 1, 0, ECX, 12 },
		     { 1, 0, ECX, 29 }, { 7, 0, EBX, 5 }, { 7, 0, EBX, 16 } }, 7, true },
	{ "avx", { { 1, 0, ECX, 28 }, { 7, 0, EBX, 5 }, { 7, 0, EBX, 16 } }, 3, false },
	{ "pdpe1gb", { { 0x80000001, 0, EDX, 26 } }, 1, false },
	{ "x2apic", { { 1, 0, ECX, 21 } }, 1, false },
	{ "pcid", { { 1, 0, ECX, 17 } }, 1, false },
	{ "tsc-deadline", { { 1, 0, ECX, 24 } }, 1, false },
	{ "rdrand", { { 1, 0, ECX, 30 } }, 1, false },
	{ "rdseed", { { 7, 0, EBX, 18 } }, 1, false },
	{ "fsgsbase", { { 7, 0, EBX, 0 } }, 1, false },
	{ "smep", { { 7, 0, EBX, 7 } }, 1, false },
	{ "smap", { { 7, 0, EBX, 20 } }, 1, false },
	{ "invpcid", { { 7, 0, EBX, 10 } }, 1, false },
	{ "umip", { { 7, 0, ECX, 2 } }, 1, false },
	{ "pku", { { 7, 0, ECX, 3 } }, 1, false },
	{ "la57", { { 7, 0, ECX, 16 } }, 1, false },
	{ "rdtscp", { { 0x80000001, 0, EDX, 27 } }, 1, false },
	{ "monitor", { { 1, 0, ECX, 3 } }, 1, false },
};

#define NR_FEATURES (sizeof(features) / sizeof(features[0]))
_Static_assert(NR_FEATURES <= 64, "cpuid_feature_set has 64 bits");

#define HYPERV_BASE		0x40000000u
#define KVM_FEATURES_LEAF	0x40000001u
#define KVM_FEATURE_PV_SCHED_YIELD	(1u << 13)
#define LEAF1_ECX_HYPERVISOR	(1u << 31)
#define HYPERV_TSC_LEAF		0x40000010u
#define APIC_BUS_KHZ		1000000u	/* KVM's LAPIC timer counts at 1 GHz */
#define LEAF6_ECX_APERFMPERF	(1u << 0)
#define EXT8_EBX_CPPC		(1u << 27)

static int feature_index(const char *name, size_t len)
{
	for (unsigned int i = 0; i < NR_FEATURES; i++)
		if (strlen(features[i].name) == len && !strncmp(features[i].name, name, len))
			return (int)i;
	return -1;
}

int cpuid_parse_hide(const char *list, cpuid_feature_set *out)
{
	cpuid_feature_set set = 0;
	const char *p = list;

	if (!strcmp(list, "none") || !*list) {
		*out = 0;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		int i = feature_index(p, len);

		if (i < 0) {
			char known[512];

			cpuid_format_set(~0ULL >> (64 - NR_FEATURES), known, sizeof(known));
			pr_err("--cpu-hide: unknown feature '%.*s' (known: %s, or none)", (int)len, p, known);
			return -EINVAL;
		}
		set |= 1ULL << i;
		p += len;
		if (*p == ',')
			p++;
	}
	*out = set;
	return 0;
}

void cpuid_format_set(cpuid_feature_set set, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < NR_FEATURES && n < len; i++)
		if (set & (1ULL << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", features[i].name);
	if (!n)
		snprintf(buf, len, "none");
}

/* Does the first "flags" line of cpuinfo list vmx or svm? */
static bool cpuinfo_has_hw_virt(const char *path, bool *readable)
{
	char line[8192];
	FILE *f = fopen(path, "r");
	bool found = false;

	*readable = f != NULL;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (char *tok = strtok(strchr(line, ':') ? strchr(line, ':') + 1 : line, " \t\n");
		     tok; tok = strtok(NULL, " \t\n"))
			if (!strcmp(tok, "vmx") || !strcmp(tok, "svm"))
				found = true;
		break;
	}
	fclose(f);
	return found;
}

bool cpuid_host_is_pvm(const char *cpuinfo_path, const char *pvm_module_path)
{
	bool readable;

	if (cpuinfo_has_hw_virt(cpuinfo_path, &readable) || !readable)
		return false;
	return access(pvm_module_path, F_OK) == 0;
}

cpuid_feature_set cpuid_default_hide(void)
{
	static const char *const pvm_hide[] = { "cx16", "xsave", "pdpe1gb" };
	cpuid_feature_set set = 0;

	if (!cpuid_host_is_pvm("/proc/cpuinfo", "/sys/module/kvm_pvm"))
		return 0;
	/* PVM's instruction emulator lacks CMPXCHG16B and XRSTOR; 1 GiB pages triple-fault. */
	for (size_t i = 0; i < sizeof(pvm_hide) / sizeof(pvm_hide[0]); i++)
		set |= 1ULL << feature_index(pvm_hide[i], strlen(pvm_hide[i]));
	return set;
}

struct kvm_cpuid2 *cpuid_get_supported(int kvm_fd)
{
	for (unsigned int n = 64; n <= 4096; n *= 2) {
		/* Spare entries for the leaves cpuid_fixup() may add. */
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) +
					      (n + CPUID_SPARE_ENTRIES) * sizeof(c->entries[0]));

		if (!c)
			return NULL;
		c->nent = n;
		if (!ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c))
			return c;
		free(c);
		if (errno != E2BIG) {
			pr_err("KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
			return NULL;
		}
	}
	return NULL;
}

static struct kvm_cpuid_entry2 *find(struct kvm_cpuid2 *c, uint32_t leaf, uint32_t subleaf)
{
	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf &&
		    (!(c->entries[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) ||
		     c->entries[i].index == subleaf))
			return &c->entries[i];
	return NULL;
}

static void fixup_topology_leaf(struct kvm_cpuid_entry2 *e, unsigned int nr_vcpus);

static uint32_t *reg_of(struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	switch (r) {
	case EAX:
		return &e->eax;
	case EBX:
		return &e->ebx;
	case ECX:
		return &e->ecx;
	default:
		return &e->edx;
	}
}

static void hide_features(struct kvm_cpuid2 *c, cpuid_feature_set hide)
{
	for (unsigned int i = 0; i < NR_FEATURES; i++) {
		const struct cpuid_bit *main_bit = &features[i].bits[0];
		struct kvm_cpuid_entry2 *m;

		if (!(hide & (1ULL << i)))
			continue;
		/*
		 * KVM under PVM lets host bits it does not list as supported show
		 * through to the guest whatever the table says (XSAVE on AMD hosts):
		 * say so instead of pretending the feature is hidden.
		 */
		m = find(c, main_bit->leaf, main_bit->subleaf);
		if (!m || !(*reg_of(m, main_bit->reg) & (1u << main_bit->bit)))
			pr_info("--cpu-hide %s: KVM does not offer it, nothing to clear; under PVM the host's bit may still reach the guest (boot Linux with noxsave/clearcpuid=)",
				features[i].name);
		for (unsigned int b = 0; b < features[i].nr_bits; b++) {
			const struct cpuid_bit *cb = &features[i].bits[b];
			struct kvm_cpuid_entry2 *e = find(c, cb->leaf, cb->subleaf);

			if (e)
				*reg_of(e, cb->reg) &= ~(1u << cb->bit);
		}
		if (features[i].drop_leaf_0xd)
			for (uint32_t j = 0; j < c->nent; j++)
				if (c->entries[j].function == 0xd)
					c->entries[j].eax = c->entries[j].ebx = c->entries[j].ecx =
						c->entries[j].edx = 0;
	}
}

static unsigned int order_base_2(unsigned int n)
{
	unsigned int shift = 0;

	while ((1u << shift) < n)
		shift++;
	return shift;
}

/* The entry for leaf.subleaf, added (zeroed) when KVM did not list it. */
static struct kvm_cpuid_entry2 *ensure(struct kvm_cpuid2 *c, size_t max_entries, uint32_t leaf,
				       uint32_t subleaf)
{
	struct kvm_cpuid_entry2 *e;

	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf && c->entries[i].index == subleaf)
			return &c->entries[i];
	if (c->nent >= max_entries)
		return NULL;
	e = &c->entries[c->nent++];
	memset(e, 0, sizeof(*e));
	e->function = leaf;
	e->index = subleaf;
	e->flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
	return e;
}

/*
 * Leaves 0xb and 0x1f (when the host offers them): one thread per core,
 * nr_vcpus cores in one package. KVM often lists only subleaf 0, and an
 * unlisted subleaf reads as zeros (an "invalid" level that would end the
 * enumeration before the core level), so subleaves 0..2 are made explicit.
 */
static int fixup_topology(struct kvm_cpuid2 *c, size_t max_entries, uint32_t leaf,
			  unsigned int nr_vcpus)
{
	if (!find(c, leaf, 0))
		return 0;
	for (uint32_t sub = 0; sub < 3; sub++)
		if (!ensure(c, max_entries, leaf, sub))
			return -ENOSPC;
	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf)
			fixup_topology_leaf(&c->entries[i], nr_vcpus);
	return 0;
}

/* One level of leaf 0xb / 0x1f. */
static void fixup_topology_leaf(struct kvm_cpuid_entry2 *e, unsigned int nr_vcpus)
{
	switch (e->index) {
	case 0:	/* SMT level */
		e->eax = 0;
		e->ebx = 1;
		e->ecx = (1u << 8) | 0;
		break;
	case 1:	/* core level */
		e->eax = order_base_2(nr_vcpus);
		e->ebx = nr_vcpus;
		e->ecx = (2u << 8) | 1;
		break;
	default:	/* invalid level: ends the enumeration */
		e->eax = e->ebx = 0;
		e->ecx = e->index;
		break;
	}
}

static int add_tsc_leaf(struct kvm_cpuid2 *c, size_t max_entries, uint32_t tsc_khz)
{
	struct kvm_cpuid_entry2 *base = find(c, HYPERV_BASE, 0);
	struct kvm_cpuid_entry2 *e = find(c, HYPERV_TSC_LEAF, 0);

	if (!base)
		return 0;	/* no KVM leaves to extend */
	if (!e) {
		if (c->nent >= max_entries)
			return -ENOSPC;
		e = &c->entries[c->nent++];
		memset(e, 0, sizeof(*e));
		e->function = HYPERV_TSC_LEAF;
	}
	e->eax = tsc_khz;
	e->ebx = APIC_BUS_KHZ;
	if (base->eax < HYPERV_TSC_LEAF)
		base->eax = HYPERV_TSC_LEAF;
	return 0;
}

/* Leaf 0x40000000 says "KVMKVMKVM\0\0\0". */
static bool is_kvm_base(const struct kvm_cpuid_entry2 *e)
{
	return e && e->ebx == 0x4b4d564bu && e->ecx == 0x564b4d56u && e->edx == 0x4du;
}

/*
 * The KVM leaves are only read by a guest that sees the hypervisor bit
 * (CPUID.1:ECX[31]). KVM_GET_SUPPORTED_CPUID on hardware KVM leaves it clear
 * (every VMM sets it), and without it Linux boots "on bare hardware": no
 * kvm-clock, steal time or PV spinlocks. So it is set exactly when the KVM
 * leaves are there to be found.
 *
 * PV sched yield is hidden: the guest would hypercall KVM to yield to a vCPU
 * it sees preempted, and KVM only yields to a thread preempted inside
 * KVM_RUN, never to one the engine holds outside it, so the hypercall would
 * do nothing. Without it the guest sends the IPI, the target's wakeup
 * reaches the engine, and the engine decides (docs/testing-linux.md).
 */
static void fixup_kvm_leaves(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *base = find(c, HYPERV_BASE, 0), *feat, *e;

	if (!is_kvm_base(base))
		return;
	if ((e = find(c, 1, 0)))
		e->ecx |= LEAF1_ECX_HYPERVISOR;
	feat = find(c, KVM_FEATURES_LEAF, 0);
	if (feat)
		feat->eax &= ~KVM_FEATURE_PV_SCHED_YIELD;
	if (feat && base->eax < KVM_FEATURES_LEAF)
		base->eax = KVM_FEATURES_LEAF;
}

int cpuid_fixup(struct kvm_cpuid2 *c, size_t max_entries, const struct cpuid_config *cfg)
{
	unsigned int n = cfg->nr_vcpus;
	struct kvm_cpuid_entry2 *e;

	hide_features(c, cfg->hide);
	fixup_kvm_leaves(c);
	if ((e = find(c, 1, 0))) {
		e->ebx = (e->ebx & ~0x00ff0000u) | ((n > 255 ? 255 : n) << 16);
		if (n > 1)
			e->edx |= 1u << 28;	/* HTT: EBX[23:16] is valid */
	}
	if ((e = find(c, 4, 0)) && e->eax)
		e->eax = (e->eax & 0x03ffffffu) | (((n > 64 ? 64 : n) - 1) << 26);
	if (fixup_topology(c, max_entries, 0xb, n) || fixup_topology(c, max_entries, 0x1f, n))
		return -ENOSPC;
	if ((e = find(c, 0x80000008, 0))) {
		e->ecx = (e->ecx & ~0xf0ffu) | ((n - 1) & 0xff) | (order_base_2(n) << 12);
		e->ebx &= ~EXT8_EBX_CPPC;	/* CPPC goes through ACPI _CPC, never MSRs */
	}
	if ((e = find(c, 6, 0))) {
		if (cfg->aperfmperf)
			e->ecx |= LEAF6_ECX_APERFMPERF;
		else
			e->ecx &= ~LEAF6_ECX_APERFMPERF;
	}
	return cfg->tsc_khz ? add_tsc_leaf(c, max_entries, cfg->tsc_khz) : 0;
}

void cpuid_set_apic_id(struct kvm_cpuid2 *c, uint32_t apic_id)
{
	struct kvm_cpuid_entry2 *e;

	if ((e = find(c, 1, 0)))
		e->ebx = (e->ebx & 0x00ffffffu) | ((apic_id & 0xff) << 24);
	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == 0xb || c->entries[i].function == 0x1f)
			c->entries[i].edx = apic_id;
	if ((e = find(c, 0x8000001e, 0))) {
		e->eax = apic_id;
		e->ebx = apic_id & 0xff;	/* core id; one thread per core */
		e->ecx = 0;			/* node 0, one node */
	}
}
