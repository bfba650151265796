// SPDX-License-Identifier: MIT
/*
 * What a seccomp filter costs per system call: times N calls of
 * ioctl(KVM_RUN) on a bad fd (the vCPU filter's hot call, argument
 * checked) and of gettid (a cheap call allowed outright) without a filter, then
 * again under the vCPU class's filter (util/sandbox.c).
 *
 *   build/tools/seccomp_cost [N]     (default 1000000)
 */
#include "util/sandbox.h"

#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static double ioctl_ns(long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		ioctl(-1, KVM_RUN, 0);
	return (now_ns() - t0) / n;
}

static double gettid_ns(long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		syscall(SYS_gettid);
	return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	struct sandbox_config cfg = { .mode = SANDBOX_KILL, .mode_set = true };
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	double io0, tid0;
	char err[256] = "see the log";

	if (n <= 0) {
		fprintf(stderr, "usage: seccomp_cost [N > 0]\n");
		return 2;
	}
	io0 = ioctl_ns(n);
	tid0 = gettid_ns(n);
	if (sandbox_init(&cfg, err, sizeof(err)) || sandbox_enter(SANDBOX_VCPU)) {
		fprintf(stderr, "seccomp_cost: cannot install the vCPU filter: %s\n", err);
		return 1;
	}
	printf("ioctl(KVM_RUN): %.0f ns without a filter, %.0f ns under the vCPU filter\n", io0,
	       ioctl_ns(n));
	printf("gettid:         %.0f ns without a filter, %.0f ns under the vCPU filter\n", tid0,
	       gettid_ns(n));
	return 0;
}
