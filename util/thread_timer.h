/* SPDX-License-Identifier: MIT */
/*
 * A CLOCK_MONOTONIC timer that signals the thread that made it, at an
 * absolute time: how a vCPU thread ends its own run (its on-part or its
 * slice) with the kick signal, stand-alone (dispatch_gate.c) or joined to
 * a host (vmm/join.c).
 */
#ifndef CAPVISOR_UTIL_THREAD_TIMER_H
#define CAPVISOR_UTIL_THREAD_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* On the thread to be signalled: true when made. */
bool thread_timer_create(timer_t *t, int signo);
/* Fire at abs_ns (CLOCK_MONOTONIC); UINT64_MAX disarms. True when set. */
bool thread_timer_arm(timer_t t, uint64_t abs_ns);

#endif
