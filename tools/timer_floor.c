// SPDX-License-Identifier: MIT
/*
 * timer_floor: host CPU that a thread costs just by waking up every
 * PERIOD_US, doing nothing else, the way the dispatcher thread waits
 * (pthread_cond_timedwait on CLOCK_MONOTONIC deadlines, 1 us timer slack).
 * bench/bench_dispatch.py prints it next to the dispatcher's cost: the floor
 * any design with a periodic tick pays on this host. On a VM host (this
 * machine is one) every wakeup is a timer exit, so the floor is far higher
 * than on bare metal.
 *
 *   timer_floor [PERIOD_US [SECONDS]]   -> {"period_us":..,"core_fraction":..}
 */
#include "util/util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ns_from_timespec(&ts);
}

int main(int argc, char **argv)
{
	unsigned long period_us = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
	double secs = argc > 2 ? atof(argv[2]) : 4.0;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_condattr_t attr;
	pthread_cond_t cond;
	uint64_t t, end, cpu0, wall0;

	if (period_us < 10 || !(secs > 0.0 && secs < 3600.0)) {
		fprintf(stderr, "timer_floor: need PERIOD_US >= 10 and 0 < SECONDS < 3600\n");
		return 2;
	}
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&cond, &attr);
	pthread_mutex_lock(&lock);
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	wall0 = t = clock_ns(CLOCK_MONOTONIC);
	end = t + (uint64_t)(secs * 1e9);
	while (t < end) {
		struct timespec ts;

		t += period_us * 1000ull;
		ts = timespec_from_ns(t);
		pthread_cond_timedwait(&cond, &lock, &ts);
	}
	printf("{\"period_us\":%lu,\"core_fraction\":%.4f}\n", period_us,
	       (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) /
	       (double)(clock_ns(CLOCK_MONOTONIC) - wall0));
	return 0;
}
