// SPDX-License-Identifier: MIT
/*
 * What each thread class may call once it runs (docs/security.md explains
 * every entry). Anything not listed takes the filter's default action.
 * Arguments are checked where that narrows a call to what capvisor does
 * with it: ioctls by request number, mmap/mprotect never executable,
 * signals and scheduling changes only for our own process and thread,
 * prctl only for the timer slack, no file opened at all.
 *
 * getpgrp is in no list: trap mode's SIGSYS handler repeats it to die.
 */
#include "util/sandbox.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NR(a)	((int)ARRAY_SIZE(a))	/* libseccomp counts in int */
/* Argument n equals v; (argument n & mask) equals v. Every field given, for clang. */
#define ARG_EQ(n, v)		SCMP_CMP(n, SCMP_CMP_EQ, (scmp_datum_t)(v), 0)
#define ARG_MASKED(n, mask, v)	SCMP_CMP(n, SCMP_CMP_MASKED_EQ, (scmp_datum_t)(mask), (scmp_datum_t)(v))

/* Every thread: its C library, its memory, time, locks, log lines and signals. */
static const int runtime_calls[] = {
	SCMP_SYS(futex), SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep), SCMP_SYS(sched_yield),
	SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(getrandom),
	SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigaction),
	SCMP_SYS(sigaltstack), SCMP_SYS(restart_syscall),
	SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
	SCMP_SYS(write), SCMP_SYS(fstat), SCMP_SYS(newfstatat),
	SCMP_SYS(statx), SCMP_SYS(getcpu),	/* what other glibc versions use for stat, sched_getcpu */
	SCMP_SYS(exit), SCMP_SYS(exit_group),
};

/* The dispatcher: KVM's per-vCPU statistics (halted or not). */
static const int dispatch_calls[] = {
	SCMP_SYS(pread64),
};

/* vCPU threads: their on-part timer. */
static const int vcpu_calls[] = {
	SCMP_SYS(timer_create), SCMP_SYS(timer_settime), SCMP_SYS(timer_gettime),
};

/* The main thread: the event loop, the control socket, console input, teardown. */
static const int main_calls[] = {
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_ctl),
	SCMP_SYS(read), SCMP_SYS(close), SCMP_SYS(fcntl),
	SCMP_SYS(accept4), SCMP_SYS(recvfrom), SCMP_SYS(recvmsg),
	SCMP_SYS(sendto), SCMP_SYS(sendmsg), SCMP_SYS(shutdown),
	SCMP_SYS(timerfd_settime), SCMP_SYS(timerfd_gettime), SCMP_SYS(timer_delete),
	SCMP_SYS(getcwd),	/* query-domain-xml makes relative paths absolute */
};

/*
 * capvisor host, all threads: the event loop and its sockets, each VM's
 * shared page (memfd), its vCPU threads' /proc files, kicks and pinning of
 * other processes' threads, proxy threads, the cgroups of enforcement and
 * the --state-dir file. No ioctl, no exec, no ptrace, no new sockets.
 */
static const int host_calls[] = {
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_ctl),
	SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(close), SCMP_SYS(fcntl),
	SCMP_SYS(accept4), SCMP_SYS(recvfrom), SCMP_SYS(recvmsg), SCMP_SYS(sendto),
	SCMP_SYS(sendmsg), SCMP_SYS(shutdown), SCMP_SYS(getsockopt),
	SCMP_SYS(timerfd_settime), SCMP_SYS(timerfd_gettime),
	SCMP_SYS(memfd_create), SCMP_SYS(ftruncate),
	SCMP_SYS(openat), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir),
	SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat),
	SCMP_SYS(renameat2), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2),
	SCMP_SYS(lseek),
	SCMP_SYS(futex_waitv),	/* a proxy asleep at its gate and on its VM's run end */
	SCMP_SYS(tgkill), SCMP_SYS(kill),	/* kicks; kill(pid, 0) asks if a VM lives */
	SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_getaffinity),
	SCMP_SYS(sched_setattr), SCMP_SYS(sched_getattr),
	SCMP_SYS(clone), SCMP_SYS(clone3), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
	SCMP_SYS(prctl),
	SCMP_SYS(wait4),	/* the helper that removes the cgroup directory, at exit */
};

/* KVM ioctls a vCPU thread issues: its run loop and exit handling. */
static const unsigned long vcpu_ioctls[] = {
	KVM_RUN, KVM_GET_REGS, KVM_SET_REGS, KVM_GET_SREGS, KVM_SET_SREGS,
	KVM_GET_MSRS, KVM_TRANSLATE, KVM_GET_VCPU_EVENTS, KVM_SET_VCPU_EVENTS,
	KVM_GET_FPU,
	KVM_IRQ_LINE,		/* the serial port's interrupt, on the VM fd */
};

/* The main thread: the serial port's interrupt when console input arrives. */
static const unsigned long main_ioctls[] = {
	KVM_IRQ_LINE,
};

static int allow_list(scmp_filter_ctx ctx, const int *calls, int n)
{
	for (int i = 0; i < n; i++) {
		int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);

		if (rc && rc != -EEXIST)	/* listed by two lists */
			return rc;
	}
	return 0;
}

/* ioctl by request: the kernel reads it as 32 bits, so compare only those. */
static int allow_ioctl(scmp_filter_ctx ctx, int fd, unsigned long req)
{
	if (fd >= 0)
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 2,
					ARG_EQ(0, fd),
					ARG_MASKED(1, 0xffffffffu, req & 0xffffffffu));
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				ARG_MASKED(1, 0xffffffffu, req & 0xffffffffu));
}

static int allow_ioctls(scmp_filter_ctx ctx, const unsigned long *reqs, int n)
{
	for (int i = 0; i < n; i++) {
		int rc = allow_ioctl(ctx, -1, reqs[i]);

		if (rc)
			return rc;
	}
	return 0;
}

/* Memory may be mapped and protected, never executable: no new code. */
static int allow_memory(scmp_filter_ctx ctx)
{
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				  ARG_MASKED(2, PROT_EXEC, 0));

	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				      ARG_MASKED(2, PROT_EXEC, 0));
	return rc;
}

/*
 * Signals only to our own threads (kicks, pthread_kill, raise), and the
 * terminal settings of stdin back from a fatal-signal handler on any thread.
 */
static int allow_signals_and_tty(scmp_filter_ctx ctx)
{
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				  ARG_EQ(0, getpid()));

	if (!rc)
		rc = allow_ioctl(ctx, STDIN_FILENO, TCGETS);
	if (!rc)
		rc = allow_ioctl(ctx, STDIN_FILENO, TCSETS);
	return rc;
}

/*
 * A vCPU thread sets its own timer slack, affinity (pinning to the host
 * CPU of its pCPU), util clamps and, with --sched host, its deadline
 * parameters or nice value: for itself only (0 or its own id).
 */
static int allow_own_scheduling(scmp_filter_ctx ctx, int tid)
{
	static const int self_calls[] = {
		SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_getaffinity),
		SCMP_SYS(sched_setattr), SCMP_SYS(sched_getattr),
	};
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				  ARG_EQ(0, PR_SET_TIMERSLACK));

	for (int i = 0; !rc && i < NR(self_calls); i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, self_calls[i], 1,
				      ARG_EQ(0, 0));
		if (!rc)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, self_calls[i], 1,
					      ARG_EQ(0, tid));
	}
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setpriority), 2,
				      ARG_EQ(0, PRIO_PROCESS),
				      ARG_EQ(1, tid));
	return rc;
}

/*
 * At exit the main thread removes its control socket, or with --user reaps
 * the helper that removes it for us (wait4): only with a socket. Nothing
 * is opened: --stats-json was opened at start and is written through its fd.
 */
static int allow_exit_files(scmp_filter_ctx ctx, const struct sandbox_config *cfg)
{
	if (!cfg->api_socket)
		return 0;
	return allow_list(ctx, (const int[]){ SCMP_SYS(unlink), SCMP_SYS(unlinkat),
					      SCMP_SYS(wait4) }, 3);
}

/*
 * --join: a VM whose host went away connects to the same path again (a
 * Unix socket only; the path it may reach is the one it was given), on a
 * timer of its backoff.
 */
static int allow_rejoin(scmp_filter_ctx ctx, const struct sandbox_config *cfg)
{
	int rc;

	if (!cfg->rejoin)
		return 0;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, ARG_EQ(0, AF_UNIX));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(connect), 0);
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 0);
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(timerfd_create), 0);
	return rc;
}

static int add_class_rules(scmp_filter_ctx ctx, enum sandbox_class cls,
			   const struct sandbox_config *cfg, int tid)
{
	switch (cls) {
	case SANDBOX_MAIN: {
		int rc = allow_list(ctx, main_calls, NR(main_calls));

		if (!rc)
			rc = allow_ioctls(ctx, main_ioctls, NR(main_ioctls));
		if (!rc)
			rc = allow_rejoin(ctx, cfg);
		return rc ? rc : allow_exit_files(ctx, cfg);
	}
	case SANDBOX_DISPATCH:
		return allow_list(ctx, dispatch_calls, NR(dispatch_calls));
	case SANDBOX_VCPU: {
		int rc = allow_list(ctx, vcpu_calls, NR(vcpu_calls));

		if (!rc)
			rc = allow_ioctls(ctx, vcpu_ioctls, NR(vcpu_ioctls));
		return rc ? rc : allow_own_scheduling(ctx, tid);
	}
	case SANDBOX_HOST:
		return allow_list(ctx, host_calls, NR(host_calls));
	default:
		return -EINVAL;
	}
}

int sandbox_add_rules(void *ctx, enum sandbox_class cls, const struct sandbox_config *cfg,
		      int tid)
{
	int rc = allow_list(ctx, runtime_calls, NR(runtime_calls));

	if (!rc)
		rc = allow_memory(ctx);
	if (!rc)
		rc = allow_signals_and_tty(ctx);
	return rc ? rc : add_class_rules(ctx, cls, cfg, tid);
}

/*
 * ASan/LSan/UBSan at run time and at exit: reports read /proc/self/maps
 * and the binary, the leak checker stops the world with a ptrace()ing
 * clone. Only in sanitizer builds, where filters are off unless forced.
 */
int sandbox_add_sanitizer_rules(void *ctx)
{
	static const int calls[] = {
		SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(close),
		SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getdents), SCMP_SYS(getdents64),
		SCMP_SYS(lseek),
		SCMP_SYS(clone), SCMP_SYS(clone3), SCMP_SYS(ptrace), SCMP_SYS(wait4),
		SCMP_SYS(waitid), SCMP_SYS(prctl), SCMP_SYS(sched_getaffinity),
		SCMP_SYS(getppid), SCMP_SYS(kill), SCMP_SYS(uname), SCMP_SYS(pipe2),
		SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(getrlimit), SCMP_SYS(prlimit64),
	};

	return allow_list(ctx, calls, NR(calls));
}
