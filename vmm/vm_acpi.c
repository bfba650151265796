// SPDX-License-Identifier: MIT
/* The VM described to acpi/ (vCPU i has APIC id i and processor UID i). */
#include "vmm/layout.h"
#include "vmm/log.h"
#include "vmm/vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int vm_acpi_build(unsigned int nr_vcpus, void *buf, size_t len, uint64_t gpa,
		  struct acpi_tables *out)
{
	struct acpi_vcpu_desc *vcpus = calloc(nr_vcpus, sizeof(*vcpus));
	struct acpi_vm_desc desc = {
		.nr_vcpus = nr_vcpus,
		.vcpus = vcpus,
		.com1 = true,
	};
	int ret;

	if (!vcpus)
		return -ENOMEM;
	for (unsigned int i = 0; i < nr_vcpus; i++)
		vcpus[i].apic_id = i;
	ret = acpi_build_tables(&desc, buf, len, gpa, out);
	if (ret)
		pr_err("building the ACPI tables for %u vCPUs: %s", nr_vcpus, strerror(-ret));
	free(vcpus);
	return ret;
}

int vm_setup_acpi(struct vm *vm)
{
	void *buf = guest_mem_ptr(&vm->mem, LAYOUT_ACPI_BASE, LAYOUT_ACPI_SIZE);

	if (!buf)
		return -EINVAL;
	return vm_acpi_build(vm->nr_vcpus, buf, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_BASE, &vm->acpi);
}
