// SPDX-License-Identifier: MIT
/* The VM's ACPI tables, from the description vm_sched makes (vCPU i: APIC id i, UID i). */
#include "capvisor/layout.h"
#include "util/log.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int vm_acpi_build(const struct acpi_vm_desc *desc, void *buf, size_t len, uint64_t gpa,
		  struct acpi_tables *out)
{
	int ret = acpi_build_tables(desc, buf, len, gpa, out);

	if (ret)
		pr_err("building the ACPI tables for %u vCPUs: %s", desc->nr_vcpus, strerror(-ret));
	return ret;
}

int vm_setup_acpi(struct vm *vm, const struct acpi_vm_desc *desc)
{
	void *buf = guest_mem_ptr(&vm->mem, LAYOUT_ACPI_BASE, LAYOUT_ACPI_SIZE);

	if (!buf || desc->nr_vcpus != vm->nr_vcpus)
		return -EINVAL;
	return vm_acpi_build(desc, buf, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_BASE, &vm->acpi);
}
