// SPDX-License-Identifier: MIT
/*
 * `lock cs_us=C hint=0|1`: all vCPUs share one ring-3 ticket lock. Each
 * takes it, spins C us inside, releases, and counts critical sections. A
 * waiter that has spun longer than yield_after_us writes YIELD_TO(holder's
 * vCPU index) to its own hint page when hint=1 (lock-holder preemption: the
 * holder may be a vCPU the host is not running), else it keeps spinning.
 */
#include "guest/user/user.h"

#define NO_HOLDER 0xffffffffu

struct ticket_lock {
	volatile u32 next;
	volatile u32 serving;
	volatile u32 holder;	/* CPU index of the holder, for the hint */
} __attribute__((aligned(64)));

struct lock_count {
	u64 cs, hints;
} __attribute__((aligned(64)));

static struct ticket_lock lock = { 0, 0, NO_HOLDER };
static struct lock_count counts[GUEST_MAX_CPUS];
static volatile u32 lock_done;

static void hint_yield_to(unsigned int cpu, u32 target)
{
	u64 page = LAYOUT_HINT_BASE + bootinfo.uid[cpu] * LAYOUT_PER_VCPU_STRIDE;

	*(volatile u32 *)(page + HINT_REG_YIELD_TO) = bootinfo.uid[target];
}

static void lock_acquire(unsigned int cpu, u64 yield_after)
{
	u32 me = __atomic_fetch_add(&lock.next, 1, __ATOMIC_ACQ_REL);
	u64 since = now_ns(cpu);

	while (__atomic_load_n(&lock.serving, __ATOMIC_ACQUIRE) != me) {
		cpu_pause();
		if (!cfg.hint || now_ns(cpu) - since < yield_after)
			continue;
		u32 h = lock.holder;

		if (h != NO_HOLDER && h != cpu && h < bootinfo.ncpus) {
			hint_yield_to(cpu, h);
			counts[cpu].hints++;
		}
		since = now_ns(cpu);
	}
	lock.holder = cpu;
}

static void lock_release(void)
{
	lock.holder = NO_HOLDER;
	__atomic_add_fetch(&lock.serving, 1, __ATOMIC_RELEASE);
}

void test_lock(unsigned int cpu)
{
	u64 cs = (cfg.cs_us ? cfg.cs_us : 10) * 1000UL;
	u64 yield_after = (cfg.yield_after_us ? cfg.yield_after_us : 50) * 1000UL;
	u64 start = now_ns(cpu), end = start + cfg.secs * 1000000000UL, t;
	char secs[24];

	while ((t = now_ns(cpu)) < end) {
		lock_acquire(cpu, yield_after);
		t = now_ns(cpu);
		while (now_ns(cpu) - t < cs)
			cpu_pause();
		counts[cpu].cs++;
		lock_release();
	}
	report("{\"test\":\"lock\",\"vcpu\":%u,\"cs\":%lu,\"hints\":%lu,\"seconds\":%s}", cpu,
	       counts[cpu].cs, counts[cpu].hints, fmt_secs(secs, now_ns(cpu) - start));
	__atomic_add_fetch(&lock_done, 1, __ATOMIC_ACQ_REL);
	if (cpu != 0)
		return;
	while (__atomic_load_n(&lock_done, __ATOMIC_ACQUIRE) < bootinfo.ncpus)
		sleep_until_ns(cpu, now_ns(cpu) + 1000000);
	u64 total = 0, hints = 0;

	for (unsigned int i = 0; i < bootinfo.ncpus; i++) {
		total += counts[i].cs;
		hints += counts[i].hints;
	}
	report("{\"test\":\"lock-total\",\"vcpu\":0,\"cpus\":%u,\"hint\":%lu,\"cs_us\":%lu,"
	       "\"total_cs\":%lu,\"hints\":%lu,\"seconds\":%lu}", bootinfo.ncpus, cfg.hint,
	       cs / 1000, total, hints, cfg.secs);
}
