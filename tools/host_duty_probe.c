// SPDX-License-Identifier: MIT
/*
 * host_duty_probe: how much work does this host give a thread that runs in
 * duty cycles, per CPU-second, compared with a thread that never pauses?
 *
 * Emulated capacity gives a vCPU part of a host CPU's time in each window
 * (docs/dispatcher.md). That only turns into the same part of the *work* if
 * the host CPU runs as fast for a thread that keeps pausing as for one that
 * does not. Hosts that scale frequency, or hypervisors below us that pack
 * partly idle vCPUs together, break that, and no counter in the guest or in
 * capvisor can see it when the host has no APERF/MPERF. This probe measures
 * it with plain host threads, no KVM: two threads pinned to two host CPUs
 * count the test guest's spin loop; in each round one runs continuously and
 * the other runs ON us out of every WINDOW us (absolute timer), and the roles
 * swap every round so both host CPUs serve both roles equally.
 *
 *   host_duty_probe [ROUNDS [ROUND_MS [ON_US WINDOW_US [CPU_A CPU_B]]]]
 *
 * Prints one JSON line: iterations per CPU-second of each role and
 * "efficiency" = duty-cycled / continuous. 1.0 means the host is neutral;
 * the guest-measured speed of a vCPU at capacity C is then C/1024 of a big
 * one's times this efficiency.
 */
#include "util/util.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHUNK 4096

struct probe {
	int host_cpu;
	unsigned int rounds, round_ms, on_us, window_us;
	unsigned int first_role;	/* 0: continuous in even rounds, 1: duty */
	pthread_barrier_t *barrier;
	uint64_t iters[2], cpu_ns[2];	/* [0] continuous, [1] duty-cycled */
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ns_from_timespec(&ts);
}

/* The test guest's loop (guest/user/spin.c): CHUNK iterations, then a clock read. */
static uint64_t spin_until(uint64_t end_ns, uint64_t iters)
{
	do {
		for (int i = 0; i < CHUNK; i++)
			__asm__ volatile("" : "+r"(iters));
		iters += CHUNK;
	} while (clock_ns(CLOCK_MONOTONIC) < end_ns);
	return iters;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = timespec_from_ns(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static uint64_t run_round(const struct probe *p, unsigned int role, uint64_t end)
{
	uint64_t iters = 0, w = clock_ns(CLOCK_MONOTONIC);

	if (role == 0)
		return spin_until(end, 0);
	while (w < end) {
		uint64_t off = w + p->on_us * 1000ull;

		iters = spin_until(off < end ? off : end, iters);
		w += p->window_us * 1000ull;
		if (w < end)
			sleep_until(w);
	}
	return iters;
}

static void *probe_thread(void *arg)
{
	struct probe *p = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->host_cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (unsigned int r = 0; r < p->rounds; r++) {
		unsigned int role = (r + p->first_role) & 1;
		uint64_t c0, end;

		pthread_barrier_wait(p->barrier);
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		end = clock_ns(CLOCK_MONOTONIC) + p->round_ms * 1000000ull;
		p->iters[role] += run_round(p, role, end);
		p->cpu_ns[role] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	}
	return NULL;
}

static unsigned int arg_or(int argc, char **argv, int i, unsigned int dflt)
{
	return argc > i ? (unsigned int)strtoul(argv[i], NULL, 0) : dflt;
}

static double per_cpu_s(const struct probe *a, const struct probe *b, unsigned int role)
{
	uint64_t ns = a->cpu_ns[role] + b->cpu_ns[role];

	return ns ? (double)(a->iters[role] + b->iters[role]) * 1e9 / (double)ns : 0.0;
}

int main(int argc, char **argv)
{
	pthread_barrier_t barrier;
	struct probe pr[2];
	pthread_t t[2];
	double cont, duty;

	for (int i = 0; i < 2; i++) {
		pr[i] = (struct probe){
			.rounds = arg_or(argc, argv, 1, 10),
			.round_ms = arg_or(argc, argv, 2, 500),
			.on_us = arg_or(argc, argv, 3, 2000),
			.window_us = arg_or(argc, argv, 4, 4000),
			.host_cpu = (int)arg_or(argc, argv, 5 + i, (unsigned int)i),
			.first_role = (unsigned int)i,
			.barrier = &barrier,
		};
	}
	if (!pr[0].rounds || !pr[0].round_ms || !pr[0].window_us || pr[0].on_us > pr[0].window_us) {
		fprintf(stderr, "host_duty_probe: need ROUNDS > 0, ROUND_MS > 0, "
			"0 <= ON_US <= WINDOW_US, WINDOW_US > 0\n");
		return 2;
	}
	pthread_barrier_init(&barrier, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, probe_thread, &pr[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cont = per_cpu_s(&pr[0], &pr[1], 0);
	duty = per_cpu_s(&pr[0], &pr[1], 1);
	printf("{\"continuous_per_cpu_s\":%.0f,\"duty_per_cpu_s\":%.0f,\"duty\":%.3f,"
	       "\"efficiency\":%.3f}\n", cont, duty,
	       (double)pr[0].on_us / pr[0].window_us, cont > 0 ? duty / cont : 0.0);
	return 0;
}
