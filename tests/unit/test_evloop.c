// SPDX-License-Identifier: MIT
/*
 * The event loop: fd callbacks until evloop_stop(), periodic timers.
 */
#include "tests/unit/harness.h"
#include "util/evloop.h"

#include <sys/epoll.h>
#include <unistd.h>

static int reads;

static void on_readable(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	char c;

	(void)opaque;
	CU_ASSERT(events & EPOLLIN);
	CU_ASSERT_EQUAL(read(fd, &c, 1), 1);
	if (++reads == 2)
		evloop_stop(loop);
}

static void test_fd_callbacks_until_stop(void)
{
	struct evloop *loop = evloop_new();
	int p[2];

	CU_ASSERT_FATAL(loop != NULL);
	CU_ASSERT_FATAL(pipe(p) == 0);
	reads = 0;
	CU_ASSERT_EQUAL(evloop_add_fd(loop, p[0], EPOLLIN, on_readable, NULL), 0);
	CU_ASSERT(evloop_add_fd(loop, p[0], EPOLLIN, on_readable, NULL) < 0);
	CU_ASSERT_EQUAL(write(p[1], "ab", 2), 2);
	CU_ASSERT_EQUAL(evloop_run(loop), 0);
	CU_ASSERT_EQUAL(reads, 2);
	CU_ASSERT_EQUAL(evloop_del_fd(loop, p[0]), 0);
	CU_ASSERT(evloop_del_fd(loop, p[0]) < 0);
	close(p[0]);
	close(p[1]);
	evloop_free(loop);
}

static int ticks;

static void on_tick(struct evloop *loop, void *opaque)
{
	(void)opaque;
	if (++ticks == 3)
		evloop_stop(loop);
}

static void test_periodic_timer(void)
{
	struct evloop *loop = evloop_new();
	int fd;

	ticks = 0;
	fd = evloop_add_timer(loop, 1000000, on_tick, NULL);
	CU_ASSERT(fd >= 0);
	CU_ASSERT_EQUAL(evloop_run(loop), 0);
	CU_ASSERT_EQUAL(ticks, 3);
	CU_ASSERT(evloop_add_timer(loop, 0, on_tick, NULL) < 0);
	evloop_free(loop);
}

UNIT_SUITE(evloop, NULL, NULL, UNIT_TEST(test_fd_callbacks_until_stop),
	   UNIT_TEST(test_periodic_timer))
