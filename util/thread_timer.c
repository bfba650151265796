// SPDX-License-Identifier: MIT
/* A timer that signals its own thread (util/thread_timer.h). */
#include "util/thread_timer.h"
#include "util/util.h"

#include <signal.h>
#include <unistd.h>

bool thread_timer_create(timer_t *t, int signo)
{
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = signo,
	};

	sev._sigev_un._tid = gettid();
	return !timer_create(CLOCK_MONOTONIC, &sev, t);
}

bool thread_timer_arm(timer_t t, uint64_t abs_ns)
{
	struct itimerspec its = { 0 };

	if (abs_ns != UINT64_MAX)
		its.it_value = timespec_from_ns(abs_ns);
	return !timer_settime(t, TIMER_ABSTIME, &its, NULL);
}
