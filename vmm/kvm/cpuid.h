/* SPDX-License-Identifier: MIT */
/*
 * The guest's CPUID: what KVM supports (KVM_GET_SUPPORTED_CPUID), fixed up
 * so the guest sees exactly N CPUs with APIC ids 0..N-1, the KVM hypervisor
 * leaves (kvmclock), the TSC frequency at 0x40000010, and minus the features
 * the operator hides with --cpu-hide (default: what this host's KVM cannot
 * execute for a guest, probed at start-up).
 */
#ifndef CAPVISOR_CPUID_H
#define CAPVISOR_CPUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvm_cpuid2;

/* A set of hideable features: bit i is the i-th entry of cpuid.c's table. */
typedef uint64_t cpuid_feature_set;

/* "cx16,xsave" -> set; "" or "none" -> empty. -EINVAL naming the unknown feature. */
int cpuid_parse_hide(const char *list, cpuid_feature_set *out);
/* Render a set as "cx16,xsave" (or "none"). */
void cpuid_format_set(cpuid_feature_set set, char *buf, size_t len);

/*
 * True when /dev/kvm is PVM (software KVM): the host CPU flags have neither
 * vmx nor svm and the kvm_pvm module is loaded. Paths are parameters so the
 * probe can be tested.
 */
bool cpuid_host_is_pvm(const char *cpuinfo_path, const char *pvm_module_path);
/* The default --cpu-hide for this host: cx16,xsave,pdpe1gb under PVM, none otherwise. */
cpuid_feature_set cpuid_default_hide(void);

struct cpuid_config {
	unsigned int nr_vcpus;
	cpuid_feature_set hide;
	uint32_t tsc_khz;	/* 0: no 0x40000010 leaf */
	/* Hook for frequency invariance: advertise APERF/MPERF (leaf 6 ECX bit 0). */
	bool aperfmperf;
};

/* Entries allocated beyond nent for the leaves cpuid_fixup() adds. */
#define CPUID_SPARE_ENTRIES 8

/* KVM_GET_SUPPORTED_CPUID, grown until it fits; free() the result. NULL on error. */
struct kvm_cpuid2 *cpuid_get_supported(int kvm_fd);
/* Fix up the VM-wide leaves in place; the table has room for max_entries. */
int cpuid_fixup(struct kvm_cpuid2 *c, size_t max_entries, const struct cpuid_config *cfg);
/* Per-vCPU part: APIC id in leaves 1, 0xb, 0x1f, 0x8000001e. */
void cpuid_set_apic_id(struct kvm_cpuid2 *c, uint32_t apic_id);

#endif
