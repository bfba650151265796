// SPDX-License-Identifier: MIT
/*
 * privs_drop() refuses in a multi-threaded process (capabilities are per
 * thread, so other threads would keep theirs) and changes nothing then.
 * The drop itself is tested on a running server by
 * tests/integration/test_privs_capeff, not here: it would drop the
 * test runner's own privileges.
 */
#include "tests/unit/harness.h"
#include "util/privs.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int pipefd[2];

static void *idle_thread(void *arg)
{
	char c;

	(void)arg;
	if (read(pipefd[0], &c, 1) < 0)
		perror("read");
	return NULL;
}

static void read_capeff(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	snprintf(out, len, "?");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7))
			snprintf(out, len, "%s", line);
	if (f)
		fclose(f);
}

static void test_refuses_with_threads(void)
{
	struct privs_opts opts = { .keep_sys_nice = false };
	char err[256] = "", before[256], after[256];
	pthread_t t;

	CU_ASSERT_FATAL(pipe(pipefd) == 0);
	CU_ASSERT_FATAL(pthread_create(&t, NULL, idle_thread, NULL) == 0);
	CU_ASSERT(privs_nr_threads() >= 2);
	read_capeff(before, sizeof(before));
	CU_ASSERT_EQUAL(privs_drop(&opts, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "threads") != NULL);
	CU_ASSERT(strstr(err, "per thread") != NULL);
	read_capeff(after, sizeof(after));
	CU_ASSERT_STRING_EQUAL(before, after);
	CU_ASSERT_EQUAL(write(pipefd[1], "x", 1), 1);
	pthread_join(t, NULL);
	close(pipefd[0]);
	close(pipefd[1]);
}

UNIT_SUITE(qmp_privs, NULL, NULL, UNIT_TEST(test_refuses_with_threads))
