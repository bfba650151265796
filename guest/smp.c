// SPDX-License-Identifier: MIT
/*
 * SMP bring-up: the BSP copies the real-mode trampoline to 0x8000 (below
 * 1 MiB, clear of the boot data at 0x6000-0x7fff) and starts each AP from
 * the MADT with INIT + SIPI through its LAPIC, one at a time. An AP reaches
 * ap_main() in long mode on its own ring-0 stack, sets up its descriptor
 * tables, LAPIC and clock, reports alive and waits for the BSP's release.
 */
#include "guest/kernel.h"

#define ICR_INIT	0x4500		/* INIT, level assert */
#define ICR_SIPI	0x4600		/* start-up, vector = page number */
#define AP_WAIT_NS	50000000ULL

static volatile u32 ap_index, ap_alive, released;

static int wait_alive(u64 ns)
{
	u64 t0 = clock_ns();

	while (!__atomic_load_n(&ap_alive, __ATOMIC_ACQUIRE))
		if (clock_ns() - t0 > ns)
			return -1;
	return 0;
}

static int start_ap(unsigned int idx, u32 apic_id)
{
	percpu[idx].index = idx;
	percpu[idx].apic_id = apic_id;
	ap_index = idx;
	ap_boot_stack = GUEST_KSTACKS + idx * GUEST_STACK_SIZE + KSTACK_SYSCALL_TOP;
	__atomic_store_n(&ap_alive, 0, __ATOMIC_RELEASE);
	lapic_send_ipi(apic_id, ICR_INIT);
	lapic_send_ipi(apic_id, ICR_SIPI | (GUEST_TRAMPOLINE >> 12));
	if (!wait_alive(AP_WAIT_NS))
		return 0;
	lapic_send_ipi(apic_id, ICR_SIPI | (GUEST_TRAMPOLINE >> 12));
	return wait_alive(4 * AP_WAIT_NS);
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

void smp_boot(void)
{
	u32 bsp_id = lapic_id();
	unsigned int n = bootinfo.madt_cpus, up = 1;

	if (n > GUEST_MAX_CPUS) {
		kprint("{\"test\":\"error\",\"vcpu\":0,\"error\":\"%u CPUs in the MADT, "
		       "the guest supports %u\"}", n, GUEST_MAX_CPUS);
		n = GUEST_MAX_CPUS;
	}
	if (n == 0) {	/* no MADT: run on the BSP alone */
		bootinfo.apic_id[0] = bsp_id;
		bootinfo.ncpus = 1;
		return;
	}
	order_bsp_first(bsp_id, n);
	percpu[0].apic_id = bsp_id;
	memcpy((void *)GUEST_TRAMPOLINE, tramp_start, (size_t)(tramp_end - tramp_start));
	for (unsigned int i = 1; i < n; i++) {
		u32 apic = bootinfo.apic_id[i], uid = bootinfo.uid[i];

		if (apic > 0xfe) {
			kprint("{\"test\":\"error\",\"vcpu\":%u,\"error\":\"APIC id %u needs "
			       "x2APIC mode, not supported\"}", i, apic);
			continue;
		}
		bootinfo.apic_id[up] = apic;
		bootinfo.uid[up] = uid;
		if (start_ap(up, apic)) {
			kprint("{\"test\":\"error\",\"vcpu\":%u,\"error\":\"AP with APIC id %u "
			       "did not start\"}", up, apic);
			continue;
		}
		up++;
	}
	bootinfo.ncpus = up;
}

void smp_release(void)
{
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
}

void smp_wait_release(void)
{
	while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
		cpu_relax();
}

void ap_main(void)
{
	struct percpu *cpu = &percpu[ap_index];

	trap_init_cpu(cpu);
	lapic_init_cpu();
	clock_init_cpu(cpu);
	__atomic_store_n(&ap_alive, 1, __ATOMIC_RELEASE);
	smp_wait_release();
	start_user(cpu);
}
