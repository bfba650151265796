// SPDX-License-Identifier: MIT
/*
 * `hostile secs=N seed=S`: random reads and writes of every width (1, 2, 4,
 * 8 bytes) at random offsets of this vCPU's CPPC and hint pages (straight
 * from ring 3), and random RDMSR/WRMSR of MPERF, APERF and 0xC0010062
 * through ring 0, which survives a #GP. Then it reports that it survived,
 * with the CPPC registers as they read afterwards.
 */
#include "guest/user/user.h"


static u64 xorshift(u64 *s)
{
	u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

struct hostile_stats {
	u64 ops, mmio_writes, mmio_reads, msr_ok, msr_gp, msr_other;
};

static void mmio_poke(u64 page, u64 *rng, struct hostile_stats *st)
{
	unsigned int width = 1u << (xorshift(rng) % 4);
	u64 off = xorshift(rng) % (LAYOUT_PER_VCPU_STRIDE - width + 1);
	u64 val = xorshift(rng), a = page + off;

	if (xorshift(rng) % 4 == 0) {
		switch (width) {
		case 1: (void)*(volatile u8 *)a; break;
		case 2: (void)*(volatile u16 *)a; break;
		case 4: (void)*(volatile u32 *)a; break;
		default: (void)*(volatile u64 *)a; break;
		}
		st->mmio_reads++;
		return;
	}
	switch (width) {
	case 1: *(volatile u8 *)a = (u8)val; break;
	case 2: *(volatile u16 *)a = (u16)val; break;
	case 4: *(volatile u32 *)a = (u32)val; break;
	default: *(volatile u64 *)a = val; break;
	}
	st->mmio_writes++;
}

static void msr_poke(u64 *rng, struct hostile_stats *st)
{
	static const u32 msrs[] = { MSR_IA32_MPERF, MSR_IA32_APERF, MSR_AMD_PSTATE_CTL };
	u32 msr = msrs[xorshift(rng) % 3];
	u64 v = 0;
	long rc;

	if (xorshift(rng) & 1)
		rc = sys2(SYS_MSR_READ, msr, (long)&v);
	else
		rc = sys2(SYS_MSR_WRITE, msr, (long)xorshift(rng));
	if (rc == 0)
		st->msr_ok++;
	else if (rc == GERR_GP)
		st->msr_gp++;
	else
		st->msr_other++;
}

void test_hostile(unsigned int cpu)
{
	u64 rng = (cfg.seed ? cfg.seed : 1) * 0x9e3779b97f4a7c15UL + cpu + 1;
	u64 cppc = LAYOUT_CPPC_BASE + bootinfo.uid[cpu] * LAYOUT_PER_VCPU_STRIDE;
	u64 hint = LAYOUT_HINT_BASE + bootinfo.uid[cpu] * LAYOUT_PER_VCPU_STRIDE;
	u64 start = now_ns(cpu), end = start + cfg.secs * 1000000000UL;
	struct hostile_stats st = { 0 };
	struct guest_cppc_regs r = { 0 };
	char secs[24];
	long rc;

	if (bootinfo.uid[cpu] >= LAYOUT_MAX_VCPUS) {
		report("{\"test\":\"hostile\",\"vcpu\":%u,\"error\":\"vCPU index %u has no "
		       "register pages\"}", cpu, bootinfo.uid[cpu]);
		return;
	}
	while (now_ns(cpu) < end) {
		unsigned int what = xorshift(&rng) % 10;

		if (what < 5)
			mmio_poke(cppc, &rng, &st);
		else if (what < 7)
			mmio_poke(hint, &rng, &st);
		else
			msr_poke(&rng, &st);
		st.ops++;
	}
	rc = sys1(SYS_CPPC_READ, (long)&r);
	report("{\"test\":\"hostile\",\"vcpu\":%u,\"survived\":true,\"ops\":%lu,\"mmio_writes\":%lu,"
	       "\"mmio_reads\":%lu,\"msr_ok\":%lu,\"msr_gp\":%lu,\"msr_refused\":%lu,"
	       "\"cppc_rc\":%ld,\"desired\":%u,\"min\":%u,\"max\":%u,\"enable\":%u,\"seconds\":%s}",
	       cpu, st.ops, st.mmio_writes, st.mmio_reads, st.msr_ok, st.msr_gp, st.msr_other, rc,
	       r.desired, r.min, r.max, r.enable, fmt_secs(secs, now_ns(cpu) - start));
}
