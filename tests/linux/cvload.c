// SPDX-License-Identifier: MIT
/*
 * cvload: the steady loads of the stock-Linux guest tests, a static program
 * in L2's initramfs (tests/linux/l2_init.sh). A busybox shell that stops and
 * continues a spinner forks for every sleep, which under nested emulation
 * makes its duty cycle anything but steady; this keeps time itself.
 *
 *   cvload duty CPU BUSY_US PERIOD_US SECS   busy BUSY_US of wall time in
 *       every PERIOD_US, asleep for the rest (clock_nanosleep to an absolute
 *       period end, so a late period does not shift the next ones)
 *   cvload tick CPU PERIOD_US SECS           wake every PERIOD_US and sleep
 *       again at once: a CPU that is idle but not forgotten by its governor
 *   cvload spin CPU SECS                     busy all the time
 *
 * CPU -1 leaves the task to the guest's scheduler; SECS 0 runs until killed.
 * The busy share is of wall time, so it does not depend on the CPU's speed:
 * seed 002's over-utilized load, and a run queue that idles, so PELT's
 * utilization is its busy time scaled by the frequency scale.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSEC_PER_USEC 1000LL
#define NSEC_PER_SEC 1000000000LL

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_until(long long t)
{
	struct timespec ts = { .tv_sec = t / NSEC_PER_SEC, .tv_nsec = t % NSEC_PER_SEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void spin_until(long long t)
{
	while (now_ns() < t)
		;
}

static int pin(long cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "cvload: cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static int number(const char *s, long min, long max, const char *what, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || end == s || *end || *out < min || *out > max) {
		fprintf(stderr, "cvload: %s '%s': expected an integer in [%ld, %ld]\n", what, s,
			min, max);
		return -1;
	}
	return 0;
}

/* busy_us of every period_us until end (0: forever). */
static void duty(long long busy_ns, long long period_ns, long long end)
{
	long long start = now_ns();

	for (long long t = start; !end || t < end; t += period_ns) {
		spin_until(t + busy_ns);
		sleep_until(t + period_ns);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: cvload duty CPU BUSY_US PERIOD_US SECS | tick CPU PERIOD_US SECS "
		"| spin CPU SECS\n");
	return 2;
}

int main(int argc, char **argv)
{
	long cpu, busy = 0, period = 1, secs;
	const long max_us = 10 * 1000 * 1000;

	if (argc < 4 || number(argv[2], -1, CPU_SETSIZE - 1, "CPU", &cpu))
		return usage();
	if (!strcmp(argv[1], "duty") && argc == 6) {
		if (number(argv[4], 1, max_us, "PERIOD_US", &period) ||
		    number(argv[3], 0, period, "BUSY_US", &busy))
			return 2;
	} else if (!strcmp(argv[1], "tick") && argc == 5) {
		if (number(argv[3], 1, max_us, "PERIOD_US", &period))
			return 2;
	} else if (!(!strcmp(argv[1], "spin") && argc == 4)) {
		return usage();
	} else {
		busy = period;
	}
	if (number(argv[argc - 1], 0, 24 * 3600, "SECS", &secs) || pin(cpu))
		return 2;
	duty(busy * NSEC_PER_USEC, period * NSEC_PER_USEC,
	     secs ? now_ns() + secs * NSEC_PER_SEC : 0);
	return 0;
}
