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

/* Write each table as DIR/SIG.dat (for `iasl -d`). Returns 0 or -errno. */
int acpi_dump_tables(const struct acpi_tables *t, const void *buf, const char *dir);

#endif
