/* SPDX-License-Identifier: MIT */
/*
 * ACPI tables for a capvisor VM. The VMM describes the VM (vCPUs, their CPPC
 * capabilities, which devices exist) and acpi_build_tables() lays out RSDP,
 * XSDT, FADT, MADT and DSDT in a buffer the guest sees at a given address.
 * acpi/ knows nothing about KVM.
 */
#ifndef CAPVISOR_ACPI_H
#define CAPVISOR_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What `_CPC` tells the guest about one vCPU (CPPC performance scale). */
struct acpi_cppc_caps {
	uint32_t highest_perf;
	uint32_t nominal_perf;
	uint32_t lowest_nonlinear_perf;
	uint32_t lowest_perf;
	uint32_t guaranteed_perf;	/* 0: nothing guaranteed */
	uint32_t nominal_freq_mhz;
	uint32_t lowest_freq_mhz;
	/*
	 * The rate of the reference counter, on the perf scale; 0 means
	 * nominal_perf. One value for every vCPU (the top of the biggest
	 * cluster) makes delivered/reference comparable across clusters, like
	 * MPERF ticking at one rate everywhere: a little vCPU at its top reads
	 * half a big one's ratio. May exceed highest_perf (ACPI 6.5, 8.4.6.1).
	 */
	uint32_t reference_perf;
};

struct acpi_vcpu_desc {
	uint32_t apic_id;		/* MADT entry; processor UID = vCPU index */
	struct acpi_cppc_caps cppc;	/* used when acpi_vm_desc.cppc is set */
};

struct acpi_vm_desc {
	unsigned int nr_vcpus;
	const struct acpi_vcpu_desc *vcpus;
	bool cppc;		/* emit \_SB._OSC and a _CPC per processor */
	bool hint_device;	/* describe the per-vCPU scheduler hint pages */
	bool com1;		/* describe the 16550 at PORT_COM1 */
	bool cmos_rtc;		/* an RTC at 0x70 exists (else FADT says "not present") */
	bool ged;		/* with cppc: the Generic Event Device (devices/ged.h) */
};

#define ACPI_MAX_TABLES 8

struct acpi_table_ref {
	char sig[5];		/* "RSDP", "XSDT", "FACP", "APIC", "DSDT", ... */
	size_t offset;		/* into the buffer */
	size_t len;
};

struct acpi_tables {
	uint64_t rsdp_gpa;	/* where the guest finds the RSDP */
	size_t used;		/* bytes of the buffer used */
	unsigned int nr;
	struct acpi_table_ref tables[ACPI_MAX_TABLES];
};

/*
 * Build every table into buf (len bytes), which the guest sees at gpa.
 * Returns 0, -EINVAL for a bad description, -ENOSPC when buf is too small.
 */
int acpi_build_tables(const struct acpi_vm_desc *desc, void *buf, size_t len, uint64_t gpa,
		      struct acpi_tables *out);

/*
 * The CPPC performance scale the guest reads in `_CPC`, and the one place
 * that maps the engine's capacity scale (1024 = one full host CPU = top level
 * of the biggest cluster) onto it: linear, 1024 -> ACPI_CPPC_PERF_MAX.
 * Why 255: an AMD-vendor Linux guest computes its frequency-invariance max
 * ratio from a model constant of 255 (or 166) divided by CPU0's nominal_perf,
 * so a top level of 255 gives it exactly 1024 (docs/acpi.md).
 * acpi_perf_from_capacity() rounds to nearest and never returns 0 for a
 * non-zero capacity; the _floor/_ceil variants are for clamp bounds, so that
 * a bound converted to perf and back never widens the range.
 */
#define ACPI_CPPC_PERF_MAX	255u
#define ACPI_CAPACITY_SCALE	1024u
uint32_t acpi_perf_from_capacity(unsigned int capacity);
uint32_t acpi_perf_from_capacity_floor(unsigned int capacity);
uint32_t acpi_perf_from_capacity_ceil(unsigned int capacity);
/* caps->reference_perf, or nominal_perf when it is 0. */
uint32_t acpi_cppc_reference_perf(const struct acpi_cppc_caps *caps);
unsigned int acpi_capacity_from_perf(uint32_t perf);	/* rounded to nearest */

/*
 * `_CPC` capabilities of a vCPU on a cluster with nr ascending performance
 * levels (capacity scale, last = the cluster's capacity) and their MHz:
 * highest = nominal = top level (no boost is emulated: every level is
 * sustained), lowest = first level, lowest_nonlinear = second level (the
 * knee Linux 6.12 requires above lowest; the first level when there is only
 * one), guaranteed from guaranteed_capacity (capped at
 * highest), reference = ACPI_CPPC_PERF_MAX (capacity 1024) for everyone. Returns 0, or -EINVAL when there is no level or the first level
 * or its MHz is 0 (the order of the levels is the host spec parser's job).
 */
int acpi_cppc_caps_from_levels(const unsigned int *levels, const unsigned int *mhz,
			       unsigned int nr, unsigned int guaranteed_capacity,
			       struct acpi_cppc_caps *out);

/* Guest-physical address of vCPU i's CPPC register page and hint page. */
uint64_t acpi_cppc_page_gpa(unsigned int vcpu);
uint64_t acpi_hint_page_gpa(unsigned int vcpu);

/* Write each table as DIR/SIG.dat (for `iasl -d`). Returns 0 or -errno. */
int acpi_dump_tables(const struct acpi_tables *t, const void *buf, const char *dir);

#endif
