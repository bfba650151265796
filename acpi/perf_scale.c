// SPDX-License-Identifier: MIT
/*
 * The CPPC performance scale and the guest-physical places of the per-vCPU
 * register pages: the single source for everyone (tables, the CPPC device,
 * the dispatcher). See acpi.h and docs/acpi.md for why 1024 -> 255.
 */
#include "acpi/acpi.h"
#include "capvisor/layout.h"

#include <errno.h>

static uint32_t capped(unsigned int capacity)
{
	return capacity > ACPI_CAPACITY_SCALE ? ACPI_CAPACITY_SCALE : capacity;
}

uint32_t acpi_perf_from_capacity(unsigned int capacity)
{
	uint32_t c = capped(capacity);
	uint32_t p = (c * ACPI_CPPC_PERF_MAX + ACPI_CAPACITY_SCALE / 2) / ACPI_CAPACITY_SCALE;

	/* A CPU with any capacity has a non-zero performance level. */
	return (c && !p) ? 1 : p;
}

uint32_t acpi_perf_from_capacity_floor(unsigned int capacity)
{
	return capped(capacity) * ACPI_CPPC_PERF_MAX / ACPI_CAPACITY_SCALE;
}

uint32_t acpi_perf_from_capacity_ceil(unsigned int capacity)
{
	return (capped(capacity) * ACPI_CPPC_PERF_MAX + ACPI_CAPACITY_SCALE - 1) /
	       ACPI_CAPACITY_SCALE;
}

uint32_t acpi_cppc_reference_perf(const struct acpi_cppc_caps *caps)
{
	return caps->reference_perf ? caps->reference_perf : caps->nominal_perf;
}

unsigned int acpi_capacity_from_perf(uint32_t perf)
{
	if (perf > ACPI_CPPC_PERF_MAX)
		perf = ACPI_CPPC_PERF_MAX;
	return (perf * ACPI_CAPACITY_SCALE + ACPI_CPPC_PERF_MAX / 2) / ACPI_CPPC_PERF_MAX;
}

int acpi_cppc_caps_from_levels(const unsigned int *levels, const unsigned int *mhz,
			       unsigned int nr, unsigned int guaranteed_capacity,
			       struct acpi_cppc_caps *out)
{
	unsigned int top;

	if (!nr || !levels || !mhz || !levels[0] || !mhz[0])
		return -EINVAL;
	top = levels[nr - 1];
	out->highest_perf = acpi_perf_from_capacity(top);
	out->nominal_perf = out->highest_perf;
	out->lowest_perf = acpi_perf_from_capacity(levels[0]);
	/*
	 * Emulated performance is linear all the way down, but real CPUs have
	 * a nonlinear knee above their lowest level and Linux 6.12's
	 * amd-pstate refuses a CPU without one (lowest_nonlinear_freq must
	 * lie above lowest_freq); it also uses it as the default policy
	 * minimum. The second level plays that part; the first stays reachable.
	 */
	out->lowest_nonlinear_perf = nr > 1 ? acpi_perf_from_capacity(levels[1]) : out->lowest_perf;
	out->guaranteed_perf = acpi_perf_from_capacity(guaranteed_capacity < top ?
						       guaranteed_capacity : top);
	out->reference_perf = acpi_perf_from_capacity(ACPI_CAPACITY_SCALE);
	out->nominal_freq_mhz = mhz[nr - 1];
	out->lowest_freq_mhz = mhz[0];
	return 0;
}

uint64_t acpi_cppc_page_gpa(unsigned int vcpu)
{
	return LAYOUT_CPPC_BASE + (uint64_t)vcpu * LAYOUT_PER_VCPU_STRIDE;
}

uint64_t acpi_hint_page_gpa(unsigned int vcpu)
{
	return LAYOUT_HINT_BASE + (uint64_t)vcpu * LAYOUT_PER_VCPU_STRIDE;
}
