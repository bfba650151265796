// SPDX-License-Identifier: MIT
/*
 * Syscalls from ring 3. Ring 0 trusts no user pointer beyond a range check
 * against the user region, and touches only this vCPU's own CPPC and hint
 * registers and a short list of MSRs.
 */
#include "guest/kernel.h"

#define REPORT_MAX	8192
#define OUT_LOOP_MAX	1000000

static int user_range_ok(u64 p, u64 len)
{
	return p >= GUEST_USER_BASE && p + len >= p && p + len <= GUEST_USER_END;
}

static u64 cppc_page(void)
{
	return LAYOUT_CPPC_BASE + this_cpu()->uid * LAYOUT_PER_VCPU_STRIDE;
}

static u64 hint_page(void)
{
	return LAYOUT_HINT_BASE + this_cpu()->uid * LAYOUT_PER_VCPU_STRIDE;
}

static int msr_allowed(u64 msr)
{
	return msr == MSR_IA32_MPERF || msr == MSR_IA32_APERF || msr == MSR_AMD_PSTATE_CTL;
}

static long sys_cppc_read(u64 out)
{
	struct guest_cppc_regs *r = (void *)out;
	u64 page = cppc_page();

	if (!user_range_ok(out, sizeof(*r)))
		return GERR_FAULT;
	if (this_cpu()->uid >= LAYOUT_MAX_VCPUS)
		return GERR_NODEV;
	r->desired = mmio_read32(page + CPPC_REG_DESIRED_PERF);
	r->min = mmio_read32(page + CPPC_REG_MIN_PERF);
	r->max = mmio_read32(page + CPPC_REG_MAX_PERF);
	r->enable = mmio_read32(page + CPPC_REG_ENABLE);
	r->perf_limited = mmio_read32(page + CPPC_REG_PERF_LIMITED);
	r->auto_sel = mmio_read32(page + CPPC_REG_AUTO_SEL);
	/* Delivered first, as Linux reads them: the pair is sampled at that read. */
	r->delivered = mmio_read64(page + CPPC_REG_DEL_COUNTER);
	r->reference = mmio_read64(page + CPPC_REG_REF_COUNTER);
	r->guaranteed = mmio_read32(page + CPPC_REG_GUARANTEED_PERF);
	return 0;
}

static long sys_cppc_write(u64 off, u64 val)
{
	if (off != CPPC_REG_DESIRED_PERF && off != CPPC_REG_MIN_PERF &&
	    off != CPPC_REG_MAX_PERF && off != CPPC_REG_ENABLE)
		return GERR_INVAL;
	if (val > 0xffffffffULL || this_cpu()->uid >= LAYOUT_MAX_VCPUS)
		return GERR_INVAL;
	mmio_write32(cppc_page() + off, (u32)val);
	return 0;
}

static long sys_msr_read(u64 msr, u64 out)
{
	u64 v;
	long err;

	if (!msr_allowed(msr))
		return GERR_INVAL;
	if (!user_range_ok(out, 8))
		return GERR_FAULT;
	if (msr != MSR_AMD_PSTATE_CTL && !bootinfo.aperfmperf)
		return GERR_NODEV;
	err = msr_read_safe((u32)msr, &v);
	if (!err)
		*(u64 *)out = v;
	return err;
}

/* Both counters in one (emulated, ~100 us) ring-0 entry, as a tick reads them. */
static long sys_aperfmperf(u64 out)
{
	u64 *v = (u64 *)out;
	long err;

	if (!user_range_ok(out, 16))
		return GERR_FAULT;
	if (!bootinfo.aperfmperf)
		return GERR_NODEV;
	err = msr_read_safe(MSR_IA32_APERF, &v[0]);
	return err ? err : msr_read_safe(MSR_IA32_MPERF, &v[1]);
}

/* Costs for the VMM's benchmarks: n emulated RDMSRs, or n CPPC register reads. */
static long sys_msr_loop(u64 msr, u64 n)
{
	u64 t0, v;
	long err = 0;

	if ((msr != MSR_IA32_MPERF && msr != MSR_IA32_APERF) || n > OUT_LOOP_MAX)
		return GERR_INVAL;
	if (!bootinfo.aperfmperf)
		return GERR_NODEV;
	t0 = clock_ns();
	for (u64 i = 0; i < n && !err; i++)
		err = msr_read_safe((u32)msr, &v);
	return err ? err : (long)(clock_ns() - t0);
}

static long sys_mmio_loop(u64 off, u64 n)
{
	u64 t0;

	if (off > LAYOUT_PER_VCPU_STRIDE - 4 || (off & 3) || n > OUT_LOOP_MAX)
		return GERR_INVAL;
	if (this_cpu()->uid >= LAYOUT_MAX_VCPUS)
		return GERR_NODEV;
	t0 = clock_ns();
	for (u64 i = 0; i < n; i++)
		(void)mmio_read32(cppc_page() + off);
	return (long)(clock_ns() - t0);
}

static long sys_out_loop(u64 port, u64 n)
{
	u64 t0;

	if (port > 0xffff || n > OUT_LOOP_MAX)
		return GERR_INVAL;
	t0 = clock_ns();
	for (u64 i = 0; i < n; i++)
		outb((u16)port, 0);
	return (long)(clock_ns() - t0);
}

long syscall_dispatch(long a0, long a1, long a2, long a3, long nr)
{
	(void)a2;
	(void)a3;
	switch (nr) {
	case SYS_REPORT:
		if ((u64)a1 > REPORT_MAX || !user_range_ok(a0, a1))
			return GERR_FAULT;
		serial_write_line((const char *)a0, (size_t)a1);
		return 0;
	case SYS_SLEEP_TSC:
		sleep_tsc((u64)a0);
		return 0;
	case SYS_YIELD:
		if (!bootinfo.hint_device || this_cpu()->uid >= LAYOUT_MAX_VCPUS)
			return GERR_NODEV;
		mmio_write32(hint_page() + HINT_REG_YIELD, 1);
		return 0;
	case SYS_TIME:
		return (long)clock_ns();
	case SYS_CPPC_READ:
		return sys_cppc_read(a0);
	case SYS_MSR_READ:
		return sys_msr_read(a0, a1);
	case SYS_CPPC_WRITE:
		return sys_cppc_write(a0, a1);
	case SYS_POWEROFF:
		acpi_poweroff();
	case SYS_MSR_WRITE:
		if (!msr_allowed(a0))
			return GERR_INVAL;
		if (a0 != MSR_AMD_PSTATE_CTL && !bootinfo.aperfmperf)
			return GERR_NODEV;
		return msr_write_safe((u32)a0, (u64)a1);
	case SYS_PARK:
		park();
	case SYS_OUT_LOOP:
		return sys_out_loop(a0, a1);
	case SYS_ACPI_SCAN:
		acpi_scan_dsdt();
		return bootinfo.cppc_dsdt ? 0 : GERR_NODEV;
	case SYS_APERFMPERF:
		return sys_aperfmperf(a0);
	case SYS_MSR_LOOP:
		return sys_msr_loop(a0, a1);
	case SYS_MMIO_LOOP:
		return sys_mmio_loop(a0, a1);
	default:
		return GERR_INVAL;
	}
}
