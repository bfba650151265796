/* SPDX-License-Identifier: MIT */
/*
 * The VMM's event loop: one epoll set run by the main thread. The control
 * socket, signals (through signalfd) and VM lifecycle events (eventfd) all
 * plug in here, so nothing that waits on a client ever runs on a vCPU thread.
 */
#ifndef CAPVISOR_EVLOOP_H
#define CAPVISOR_EVLOOP_H

#include <stdbool.h>
#include <stdint.h>

struct evloop;

/* Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLHUP, ...) that fired. */
typedef void (*evloop_fd_cb)(struct evloop *loop, int fd, uint32_t events, void *opaque);
typedef void (*evloop_timer_cb)(struct evloop *loop, void *opaque);

struct evloop *evloop_new(void);
void evloop_free(struct evloop *loop);

int evloop_add_fd(struct evloop *loop, int fd, uint32_t events, evloop_fd_cb cb, void *opaque);
int evloop_mod_fd(struct evloop *loop, int fd, uint32_t events);
/* Safe to call from inside a callback, also for the fd being dispatched. */
int evloop_del_fd(struct evloop *loop, int fd);

/* A periodic timer; returns a timer fd (>= 0) that evloop_del_fd() removes. */
int evloop_add_timer(struct evloop *loop, uint64_t period_ns, evloop_timer_cb cb, void *opaque);

/* Run until evloop_stop(); returns 0, or -errno on an epoll failure. */
int evloop_run(struct evloop *loop);
/* Run one round of at most timeout_ms (-1: block); returns events handled. */
int evloop_run_once(struct evloop *loop, int timeout_ms);
/* Thread-safe: may be called from any thread or a signal handler context-free path. */
void evloop_stop(struct evloop *loop);
bool evloop_stopped(const struct evloop *loop);

#endif
