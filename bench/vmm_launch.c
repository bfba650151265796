// SPDX-License-Identifier: MIT
/*
 * Launch benchmark: run a VMM command RUNS times and report the medians of
 * the time to the guest's first console line, the time to exit, and the peak
 * RSS (wait4 rusage), as one JSON line.
 *
 *   vmm_launch NAME RUNS -- COMMAND [ARGS...]
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 101

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One run: returns 0 and the three figures, or -1. */
static int run_once(char **cmd, double *first_line, double *exit_ms, double *rss_kib)
{
	int out[2], status;
	struct rusage ru;
	double start = now_ms();
	pid_t pid;
	char buf[4096];

	*first_line = -1;
	if (pipe(out) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", 0);

		dup2(out[1], 1);
		dup2(devnull, 0);
		dup2(devnull, 2);
		close(out[0]);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(out[1]);
	for (;;) {
		ssize_t n = read(out[0], buf, sizeof(buf));

		if (n <= 0)
			break;
		if (*first_line < 0 && memchr(buf, '\n', (size_t)n))
			*first_line = now_ms() - start;
	}
	close(out[0]);
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	*exit_ms = now_ms() - start;
	*rss_kib = (double)ru.ru_maxrss;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: exit status %d\n", cmd[0], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return *first_line < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	double first[MAX_RUNS], total[MAX_RUNS], rss[MAX_RUNS];
	int runs;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: vmm_launch NAME RUNS -- COMMAND [ARGS...]\n");
		return 2;
	}
	runs = atoi(argv[2]);
	if (runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "vmm_launch: RUNS must be 1..%d\n", MAX_RUNS);
		return 2;
	}
	for (int i = 0; i < runs; i++)
		if (run_once(argv + 4, &first[i], &total[i], &rss[i])) {
			fprintf(stderr, "vmm_launch: %s: run %d failed (no console line or non-zero exit)\n",
				argv[1], i);
			return 1;
		}
	printf("{\"vmm\":\"%s\",\"runs\":%d,\"first_line_ms\":%.1f,\"exit_ms\":%.1f,\"peak_rss_mib\":%.1f}\n",
	       argv[1], runs, median(first, runs), median(total, runs), median(rss, runs) / 1024);
	return 0;
}
