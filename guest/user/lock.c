// SPDX-License-Identifier: MIT
/*
 * `lock cs_us=C hint=0|1`: all vCPUs share one ring-3 ticket lock. Each
 * takes it, spins C us inside, releases, and counts critical sections. With
 * hint=1 a waiter writes YIELD_TO(vCPU index) to its own hint page, naming
 * the vCPU the lock waits for: the holder, or, between holders, the owner of
 * the ticket now served (with a ticket lock a preempted next waiter stalls
 * everyone as surely as a preempted holder). It hints when it has spun
 * longer than yield_after_us, or sooner (after PREEMPTED_SPIN_NS) when that
 * vCPU's steal-time record says the host holds it out (Linux's
 * vcpu_is_preempted()). With hint=0 it just keeps spinning.
 */
#include "guest/user/user.h"

#define NO_HOLDER 0xffffffffu
#define OWNER_SLOTS 256	/* > GUEST_MAX_CPUS, divides 2^32 */
#define PREEMPTED_SPIN_NS 5000

struct ticket_lock {
	volatile u32 next;
	volatile u32 serving;
	volatile u32 holder;	/* CPU index of the holder, NO_HOLDER between */
	volatile u32 owner[OWNER_SLOTS];	/* CPU index by ticket % OWNER_SLOTS */
} __attribute__((aligned(64)));

struct lock_count {
	u64 cs, hints;
} __attribute__((aligned(64)));

static struct ticket_lock lock = { .holder = NO_HOLDER };
static struct lock_count counts[GUEST_MAX_CPUS];
static volatile u32 lock_done;

static void hint_yield_to(unsigned int cpu, u32 target)
{
	u64 page = LAYOUT_HINT_BASE + bootinfo.uid[cpu] * LAYOUT_PER_VCPU_STRIDE;

	*(volatile u32 *)(page + HINT_REG_YIELD_TO) = bootinfo.uid[target];
}

static int holder_preempted(u32 h)
{
	return bootinfo.steal_time && *(volatile u8 *)&steal[h].preempted;
}

static void lock_acquire(unsigned int cpu, u64 yield_after)
{
	u32 me = __atomic_fetch_add(&lock.next, 1, __ATOMIC_ACQ_REL), serving;
	u64 since = now_ns(cpu);

	lock.owner[me % OWNER_SLOTS] = cpu;
	while ((serving = __atomic_load_n(&lock.serving, __ATOMIC_ACQUIRE)) != me) {
		u32 h = lock.holder;
		u64 spun;

		cpu_pause();
		if (!cfg.hint)
			continue;
		if (h == NO_HOLDER)	/* between holders: whose turn is it? */
			h = lock.owner[serving % OWNER_SLOTS];
		if (h == cpu || h >= bootinfo.ncpus)
			continue;
		spun = now_ns(cpu) - since;
		if (spun < yield_after && !(spun >= PREEMPTED_SPIN_NS && holder_preempted(h)))
			continue;
		hint_yield_to(cpu, h);
		counts[cpu].hints++;
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
	u64 steal0 = steal[cpu].steal;
	char secs[24];

	while ((t = now_ns(cpu)) < end) {
		lock_acquire(cpu, yield_after);
		t = now_ns(cpu);
		while (now_ns(cpu) - t < cs)
			cpu_pause();
		counts[cpu].cs++;
		lock_release();
	}
	report("{\"test\":\"lock\",\"vcpu\":%u,\"cs\":%lu,\"hints\":%lu,\"steal_ms\":%lu,"
	       "\"seconds\":%s}", cpu, counts[cpu].cs, counts[cpu].hints,
	       (steal[cpu].steal - steal0) / 1000000, fmt_secs(secs, now_ns(cpu) - start));
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
	report("{\"test\":\"lock-total\",\"vcpu\":0,\"cpus\":%u,\"hint\":%lu,\"hint_device\":%s,"
	       "\"cs_us\":%lu,\"total_cs\":%lu,\"hints\":%lu,\"seconds\":%lu}", bootinfo.ncpus,
	       cfg.hint, bootinfo.hint_device ? "true" : "false", cs / 1000, total, hints,
	       cfg.secs);
}
