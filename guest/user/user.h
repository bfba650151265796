/* SPDX-License-Identifier: MIT */
/* Ring-3 side of the test guest: syscall wrappers, time, reporting, tests. */
#ifndef GUEST_USER_H
#define GUEST_USER_H

#include "guest/lib.h"

static inline long syscall4(long nr, long a0, long a1, long a2, long a3)
{
	register long r10 asm("r10") = a3;
	long ret;

	/* UD2 is the syscall instruction (see guest/trap.c); rax is the result. */
	asm volatile("ud2"
		     : "=a"(ret), "+D"(a0), "+S"(a1), "+d"(a2), "+r"(r10)
		     : "a"(nr)
		     : "rcx", "r8", "r9", "r11", "memory", "cc");
	return ret;
}

static inline long sys0(long nr) { return syscall4(nr, 0, 0, 0, 0); }
static inline long sys1(long nr, long a) { return syscall4(nr, a, 0, 0, 0); }
static inline long sys2(long nr, long a, long b) { return syscall4(nr, a, b, 0, 0); }

/*
 * The unit of work every workload counts: SPIN_CHUNK loop iterations (the
 * barrier keeps the compiler from folding them), then the caller reads the
 * clock. spin and periodic count the same loop so their rates compare.
 */
#define SPIN_CHUNK 4096

static inline u64 spin_count(u64 iters)
{
	for (int i = 0; i < SPIN_CHUNK; i++)
		__asm__ volatile("" : "+r"(iters));
	return iters + SPIN_CHUNK;
}

static inline void cpu_pause(void)
{
	asm volatile("pause" ::: "memory");
}

/* One test's configuration: the command line's key=value pairs. */
#define MAX_KEYS 16
#define MAX_LIST 8
struct config {
	const char *test;
	u64 secs;
	u64 interval_ms;
	u64 seed;
	/* periodic */
	u64 run_us, period_us;
	/* lock */
	u64 cs_us, hint, yield_after_us;
	/* cppc */
	u64 desired[MAX_LIST];
	unsigned int n_desired;
	u64 switch_ms;
	/* governor */
	u64 tick_ms, naive, highest, nominal, duty, model, asym, start;
	/* ioexit */
	u64 n, port;
};

extern struct config cfg;
extern volatile u32 tests_done;

u64 now_ns(unsigned int cpu);
void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "S.UUUUUU" for ns, in buf (>= 24 bytes). */
const char *fmt_secs(char *buf, u64 ns);
/* "I.FFF" for a ratio num/den with 3 decimals, in buf (>= 32 bytes). */
const char *fmt_ratio(char *buf, u64 num, u64 den);
/* Halt (tickless, one-shot timer) until this CPU's clock reads deadline. */
void sleep_until_ns(unsigned int cpu, u64 deadline);
/* Mark this CPU's test done; CPU 0 waits for all, then powers off. */
void finish(unsigned int cpu) __attribute__((noreturn));

void test_spin(unsigned int cpu);
void test_idle(unsigned int cpu);
void test_periodic(unsigned int cpu);
void test_lock(unsigned int cpu);
void test_cppc(unsigned int cpu);
void test_governor(unsigned int cpu);
void test_hostile(unsigned int cpu);
void test_ioexit(unsigned int cpu);

#endif
