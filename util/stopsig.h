/* SPDX-License-Identifier: MIT */
/*
 * The signals that stop a process (SIGINT, SIGTERM, ...) as bytes on a
 * pipe its event loop reads, without signalfd: the kernel wakes every
 * signalfd reader of a process (and the epoll that holds it) on every
 * signal sent to any of its threads, whatever the signalfd's mask, so a
 * VM's main thread woke for each kick of a vCPU thread (about 250 times a
 * second on one pCPU of two busy vCPUs; none with this).
 */
#ifndef CAPVISOR_UTIL_STOPSIG_H
#define CAPVISOR_UTIL_STOPSIG_H

#include <signal.h>
#include <stdbool.h>

#define STOPSIG_MAX	4

struct stop_signals {
	int fd;				/* read end: one byte per signal, its number */
	unsigned int n;
	int signo[STOPSIG_MAX];
	struct sigaction old[STOPSIG_MAX];
	sigset_t set, old_mask;
};

/*
 * Catch signo[0..n) and block them in the calling thread, so that the
 * threads it creates now inherit the block: 0, or -errno.
 */
int stop_signals_open(struct stop_signals *s, const int *signo, unsigned int n);
/* In the thread that reads the pipe, once the other threads exist. */
void stop_signals_unblock(struct stop_signals *s);
/* The next signal caught, 0 for none. */
int stop_signals_next(struct stop_signals *s);
/* Restores the old handlers and mask and closes the pipe. */
void stop_signals_close(struct stop_signals *s);

#endif
