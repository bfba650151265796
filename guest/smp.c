// SPDX-License-Identifier: MIT
/*
 * SMP bring-up: the BSP copies the real-mode trampoline to 0x8000 (below
 * 1 MiB, clear of the boot data at 0x6000-0x7fff) and starts every AP of
 * the MADT at once with INIT + SIPI through its LAPIC (one more SIPI to
 * those not up after 50 ms). Each AP reaches ap_main() in long mode on its
 * own ring-0 stack (found from its LAPIC id, see entry.S), sets up its
 * descriptor tables, LAPIC and clock, says it is alive and waits for the
 * BSP's release. Starting them together matters here: an AP takes ~7 ms of
 * emulated ring 0 to come up.
 */
#include "guest/kernel.h"

#define ICR_INIT	0x4500		/* INIT, level assert */
#define ICR_SIPI	0x4600		/* start-up, vector = page number */
#define ICR_WAKE	(0x4000 | WAKE_VECTOR)	/* fixed, level assert */
#define AP_WAIT_NS	50000000ULL
#define WAIT_SLICE_NS	1000000ULL

u8 apic_to_cpu[256];
static volatile u32 alive[GUEST_MAX_CPUS], released;
static unsigned int usable_cpus;	/* CPUs that may enter ring 3 */

static unsigned int count_alive(unsigned int n)
{
	unsigned int up = 1;

	for (unsigned int i = 1; i < n; i++)
		up += __atomic_load_n(&alive[i], __ATOMIC_ACQUIRE);
	return up;
}

/*
 * Wait, halted, until all n CPUs are alive or ns passed. Each AP sends the
 * BSP a wake IPI when it is up; the one-shot timer bounds each halt. The BSP
 * must not spin: on a PVM host its emulated spinning would take the host
 * CPU the APs' emulated start-up needs.
 */
static unsigned int wait_alive(unsigned int n, u64 ns)
{
	u64 t0 = clock_ns();
	unsigned int up;

	while ((up = count_alive(n)) < n && clock_ns() - t0 < ns)
		sleep_tsc(rdtsc() + WAIT_SLICE_NS * bootinfo.tsc_khz / 1000000);
	return up;
}

static void send_all(unsigned int n, u32 icr)
{
	for (unsigned int i = 1; i < n; i++)
		if (!alive[i])
			lapic_send_ipi(bootinfo.apic_id[i], icr);
}

/* Put the BSP's MADT entry first: CPU index 0 is always the BSP. */
static void order_bsp_first(u32 bsp_id, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++) {
		if (bootinfo.apic_id[i] != bsp_id)
			continue;
		u32 uid = bootinfo.uid[i];

		bootinfo.apic_id[i] = bootinfo.apic_id[0];
		bootinfo.uid[i] = bootinfo.uid[0];
		bootinfo.apic_id[0] = bsp_id;
		bootinfo.uid[0] = uid;
		return;
	}
}

/* Drop MADT entries we cannot start (x2APIC-only ids), keeping the order. */
static unsigned int usable_entries(unsigned int n)
{
	unsigned int up = 1;

	for (unsigned int i = 1; i < n; i++) {
		if (bootinfo.apic_id[i] > 0xfe) {
			kprint("{\"test\":\"error\",\"vcpu\":%u,\"error\":\"APIC id %u needs "
			       "x2APIC mode, not supported\"}", i, bootinfo.apic_id[i]);
			continue;
		}
		bootinfo.apic_id[up] = bootinfo.apic_id[i];
		bootinfo.uid[up] = bootinfo.uid[i];
		up++;
	}
	return up;
}

void smp_boot(void)
{
	u32 bsp_id = lapic_id();
	unsigned int n = bootinfo.madt_cpus, up;

	if (n > GUEST_MAX_CPUS) {
		kprint("{\"test\":\"error\",\"vcpu\":0,\"error\":\"%u CPUs in the MADT, "
		       "the guest supports %u\"}", n, GUEST_MAX_CPUS);
		n = GUEST_MAX_CPUS;
	}
	percpu[0].apic_id = bsp_id;
	bootinfo.ncpus = usable_cpus = 1;
	if (n <= 1) {	/* no MADT, or one CPU */
		bootinfo.apic_id[0] = bsp_id;
		percpu[0].uid = bootinfo.uid[0];	/* 0 without a MADT */
		return;
	}
	order_bsp_first(bsp_id, n);
	percpu[0].uid = bootinfo.uid[0];
	n = usable_entries(n);
	for (unsigned int i = 1; i < n; i++) {
		percpu[i].index = i;
		percpu[i].apic_id = bootinfo.apic_id[i];
		percpu[i].uid = bootinfo.uid[i];
		apic_to_cpu[bootinfo.apic_id[i]] = (u8)i;
	}
	memcpy((void *)GUEST_TRAMPOLINE, tramp_start, (size_t)(tramp_end - tramp_start));
	asm volatile("sti");
	send_all(n, ICR_INIT);
	send_all(n, ICR_SIPI | (GUEST_TRAMPOLINE >> 12));
	if (wait_alive(n, AP_WAIT_NS) < n) {
		send_all(n, ICR_SIPI | (GUEST_TRAMPOLINE >> 12));
		wait_alive(n, 20 * AP_WAIT_NS);	/* halted: waiting costs nothing */
	}
	/* CPU indices must stay dense: stop at the first AP that did not come up. */
	for (up = 1; up < n && alive[up]; up++)
		;
	if (up < n)
		kprint("{\"test\":\"error\",\"vcpu\":%u,\"error\":\"AP with APIC id %u did "
		       "not start: running on %u CPUs\"}", up, bootinfo.apic_id[up], up);
	bootinfo.ncpus = usable_cpus = up;
}

void smp_release(void)
{
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
	for (unsigned int i = 1; i < bootinfo.ncpus; i++)
		lapic_send_ipi(bootinfo.apic_id[i], ICR_WAKE);
}

/* Halted, not spinning (see wait_alive()); the release IPI wakes us. */
void smp_wait_release(void)
{
	asm volatile("sti");
	while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
		idle_wait(&released);
}

void ap_main(unsigned int idx)
{
	struct percpu *cpu = &percpu[idx];

	trap_init_cpu(cpu);
	lapic_init_cpu();
	clock_init_cpu(cpu);
	__atomic_store_n(&alive[idx], 1, __ATOMIC_RELEASE);
	lapic_send_ipi(percpu[0].apic_id, ICR_WAKE);
	smp_wait_release();
	if (idx >= usable_cpus)		/* came up too late: never runs tests */
		park();
	start_user(cpu);
}
