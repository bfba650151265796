// SPDX-License-Identifier: MIT
/*
 * How fast is this host's CPU right now? Prints the seconds a fixed amount
 * of integer work takes (three independent multiply/shift chains, enough
 * instruction-level parallelism to feel a busy SMT sibling).
 *
 *   host_speed [MILLIONS]   (default 100 million iterations, ~0.14 s)
 *
 * The development machines are nested VMs whose cores go through phases
 * of about half speed that no counter inside shows (no PMU): the
 * simulator, this loop and a guest's spin loop all slow down together.
 * bench_sched.sh runs it before and after every simulator run, so each
 * figure comes with the host's speed during the run (a peer in the same
 * run), and runs taken at different host speeds can be told apart.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 100) * 1000000L;
	uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
	double t0;

	if (n <= 0) {
		fprintf(stderr, "host_speed: MILLIONS must be a positive number, got '%s'\n", argv[1]);
		return 2;
	}
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		a = a * 3 + b;
		b ^= a >> 7;
		c = c * 5 + d;
		d ^= c >> 9;
		e += f ^ a;
		f = (f << 1) ^ e;
	}
	/* The result is printed so that the loop cannot be optimized away. */
	printf("%.4f %u\n", now_s() - t0, (unsigned int)((a ^ b ^ c ^ d ^ e ^ f) & 1));
	return 0;
}
