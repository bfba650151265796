// SPDX-License-Identifier: MIT
/*
 * The epoll event loop (util/evloop.h): fd sources and periodic timers
 * (timerfd), run by the main thread until evloop_stop().
 */
#include "util/evloop.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct evloop_source {
	int fd;
	bool is_timer;
	evloop_fd_cb fd_cb;
	evloop_timer_cb timer_cb;
	void *opaque;
	struct evloop_source *next;
};

struct evloop {
	int epfd;
	int wakefd;		/* eventfd that evloop_stop() writes */
	atomic_bool stop;
	struct evloop_source *sources;
};

static struct evloop_source *find_source(struct evloop *loop, int fd)
{
	for (struct evloop_source *s = loop->sources; s; s = s->next)
		if (s->fd == fd)
			return s;
	return NULL;
}

struct evloop *evloop_new(void)
{
	struct evloop *loop = calloc(1, sizeof(*loop));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!loop)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.fd = loop->wakefd;
	if (loop->epfd < 0 || loop->wakefd < 0 ||
	    epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wakefd, &ev) < 0) {
		evloop_free(loop);
		return NULL;
	}
	return loop;
}

void evloop_free(struct evloop *loop)
{
	struct evloop_source *s, *next;

	if (!loop)
		return;
	for (s = loop->sources; s; s = next) {
		next = s->next;
		if (s->is_timer)
			close(s->fd);
		free(s);
	}
	if (loop->epfd >= 0)
		close(loop->epfd);
	if (loop->wakefd >= 0)
		close(loop->wakefd);
	free(loop);
}

static int add_source(struct evloop *loop, struct evloop_source *src, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = src->fd };

	if (find_source(loop, src->fd)) {
		free(src);
		return -EEXIST;
	}
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, src->fd, &ev) < 0) {
		int err = -errno;

		free(src);
		return err;
	}
	src->next = loop->sources;
	loop->sources = src;
	return 0;
}

int evloop_add_fd(struct evloop *loop, int fd, uint32_t events, evloop_fd_cb cb, void *opaque)
{
	struct evloop_source *src = calloc(1, sizeof(*src));

	if (!src)
		return -ENOMEM;
	src->fd = fd;
	src->fd_cb = cb;
	src->opaque = opaque;
	return add_source(loop, src, events);
}

int evloop_mod_fd(struct evloop *loop, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	if (!find_source(loop, fd))
		return -ENOENT;
	return epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

int evloop_del_fd(struct evloop *loop, int fd)
{
	struct evloop_source **pp, *s;

	for (pp = &loop->sources; (s = *pp); pp = &s->next) {
		if (s->fd != fd)
			continue;
		*pp = s->next;
		epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
		if (s->is_timer)
			close(s->fd);
		free(s);
		return 0;
	}
	return -ENOENT;
}

int evloop_add_timer(struct evloop *loop, uint64_t period_ns, evloop_timer_cb cb, void *opaque)
{
	struct itimerspec its = {
		.it_interval = { (time_t)(period_ns / 1000000000u), (long)(period_ns % 1000000000u) },
	};
	struct evloop_source *src;
	int fd, err;

	if (!period_ns)
		return -EINVAL;
	its.it_value = its.it_interval;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	src = calloc(1, sizeof(*src));
	if (!src || timerfd_settime(fd, 0, &its, NULL) < 0) {
		free(src);
		close(fd);
		return -ENOMEM;
	}
	src->fd = fd;
	src->is_timer = true;
	src->timer_cb = cb;
	src->opaque = opaque;
	err = add_source(loop, src, EPOLLIN);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static void dispatch(struct evloop *loop, const struct epoll_event *ev)
{
	struct evloop_source *s = find_source(loop, ev->data.fd);
	uint64_t ticks;

	if (!s)
		return;		/* removed by an earlier callback of this round */
	if (!s->is_timer) {
		s->fd_cb(loop, s->fd, ev->events, s->opaque);
		return;
	}
	if (read(s->fd, &ticks, sizeof(ticks)) == sizeof(ticks))
		s->timer_cb(loop, s->opaque);
}

int evloop_run_once(struct evloop *loop, int timeout_ms)
{
	struct epoll_event evs[32];
	int n = epoll_wait(loop->epfd, evs, 32, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n && !atomic_load(&loop->stop); i++) {
		if (evs[i].data.fd == loop->wakefd)
			continue;
		dispatch(loop, &evs[i]);
	}
	return n;
}

int evloop_run(struct evloop *loop)
{
	while (!atomic_load(&loop->stop)) {
		int n = evloop_run_once(loop, -1);

		if (n < 0)
			return n;
	}
	return 0;
}

void evloop_stop(struct evloop *loop)
{
	uint64_t one = 1;

	atomic_store(&loop->stop, true);
	/* Wake epoll_wait; eventfd writes are async-signal-safe. */
	if (write(loop->wakefd, &one, sizeof(one)) < 0)
		return;
}

bool evloop_stopped(const struct evloop *loop)
{
	return atomic_load(&loop->stop);
}
