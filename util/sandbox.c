// SPDX-License-Identifier: MIT
/*
 * The seccomp sandbox's machinery (util/sandbox.h): modes, installing a
 * class's filter on the calling thread, and trap mode's SIGSYS handler.
 * What each class may call is in sandbox_rules.c.
 */
#include "util/sandbox.h"
#include "util/log.h"
#include "util/util.h"

#include <errno.h>
#include <linux/kvm.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* Sanitizer runtimes need far more than capvisor (see docs/security.md). */
#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_SANITIZED 1
#endif
#endif
#ifndef SANDBOX_SANITIZED
#define SANDBOX_SANITIZED 0
#endif

#define SANDBOX_MAX_SYSCALL	512	/* names resolved ahead for the SIGSYS handler */

static struct sandbox_config config = { .mode = SANDBOX_OFF };
static bool initialised;
static int selftest_class = -1;		/* CAPVISOR_SECCOMP_SELFTEST */
static const char *syscall_names[SANDBOX_MAX_SYSCALL];

/* What the SIGSYS handler says about the thread it runs on. */
static __thread int thread_class = -1;
static __thread char thread_name[16];

static const char *const mode_names[] = {
	[SANDBOX_KILL] = "kill",
	[SANDBOX_TRAP] = "trap",
	[SANDBOX_LOG] = "log",
	[SANDBOX_OFF] = "off",
};

static const char *const class_names[SANDBOX_NR_CLASSES] = {
	[SANDBOX_MAIN] = "main",
	[SANDBOX_DISPATCH] = "dispatch",
	[SANDBOX_VCPU] = "vcpu",
	[SANDBOX_HOST] = "host",
};

int sandbox_parse_mode(const char *s, enum sandbox_mode *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (s && !strcmp(s, mode_names[i])) {
			*out = (enum sandbox_mode)i;
			return 0;
		}
	return -EINVAL;
}

const char *sandbox_mode_name(enum sandbox_mode mode)
{
	return (unsigned int)mode < ARRAY_SIZE(mode_names) ?
	       mode_names[mode] : "?";
}

const char *sandbox_class_name(enum sandbox_class cls)
{
	return (unsigned int)cls < SANDBOX_NR_CLASSES ? class_names[cls] : "?";
}

enum sandbox_mode sandbox_mode(void)
{
	return config.mode;
}

bool sandbox_sanitizer_build(void)
{
	return SANDBOX_SANITIZED;
}

/* Async-signal-safe formatting for the SIGSYS handler: no stdio there. */
static size_t put_str(char *buf, size_t pos, size_t size, const char *s)
{
	while (*s && pos + 1 < size)
		buf[pos++] = *s++;
	buf[pos] = 0;
	return pos;
}

static size_t put_num(char *buf, size_t pos, size_t size, unsigned long v, unsigned int base)
{
	char digits[24];
	int n = 0;

	do {
		digits[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (base == 16)
		pos = put_str(buf, pos, size, "0x");
	while (n && pos + 1 < size)
		buf[pos++] = digits[--n];
	buf[pos] = 0;
	return pos;
}

/*
 * Trap mode: name the thread and the call, then die by SIGSYS. The
 * handler is installed with SA_RESETHAND | SA_NODEFER, so the disposition
 * is already the default again: repeating a forbidden call kills the
 * process like SECCOMP_RET_KILL_PROCESS would, and needs no call (such as
 * rt_sigaction or tgkill) that the thread's filter might refuse.
 */
static void on_sigsys(int sig, siginfo_t *si, void *uctx)
{
	int nr = si->si_syscall;
	const char *name = nr >= 0 && nr < SANDBOX_MAX_SYSCALL ? syscall_names[nr] : NULL;
	char line[320];
	size_t n = 0;

	(void)sig;
	(void)uctx;	/* read on x86-64 only */
	n = put_str(line, n, sizeof(line), "capvisor: error: seccomp: thread ");
	n = put_str(line, n, sizeof(line), thread_name[0] ? thread_name : "?");
	n = put_str(line, n, sizeof(line), " (");
	n = put_str(line, n, sizeof(line), thread_class >= 0 ? class_names[thread_class] : "?");
	n = put_str(line, n, sizeof(line), " filter) called ");
	n = put_str(line, n, sizeof(line), name ? name : "an unknown system call");
	n = put_str(line, n, sizeof(line), " (nr ");
	n = put_num(line, n, sizeof(line), (unsigned long)nr, 10);
#ifdef __x86_64__
	if (nr == SYS_ioctl) {	/* which request: the rules are per request */
		n = put_str(line, n, sizeof(line), ", request ");
		n = put_num(line, n, sizeof(line),
			    (unsigned long)((ucontext_t *)uctx)->uc_mcontext.gregs[REG_RSI] &
			    0xffffffffu, 16);
	}
#endif
	n = put_str(line, n, sizeof(line), "), which its filter forbids; stopping "
		    "(--seccomp=log to let it through while debugging)\n");
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nothing left to tell it to */
	}
	syscall(SYS_getpgrp);	/* in no class's list */
	_exit(128 + SIGSYS);	/* not reached */
}

/* Resolve names now: libseccomp allocates, which a signal handler may not. */
static void resolve_syscall_names(void)
{
	for (int nr = 0; nr < SANDBOX_MAX_SYSCALL; nr++)
		if (!syscall_names[nr])
			syscall_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
}

static int install_sigsys_handler(char *err, size_t errlen)
{
	struct sigaction sa = {
		.sa_sigaction = on_sigsys,
		.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER,
	};

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		snprintf(err, errlen, "--seccomp=trap: cannot install the SIGSYS handler: %s",
			 strerror(errno));
		return -1;
	}
	return 0;
}

static int parse_selftest(char *err, size_t errlen)
{
	const char *s = getenv("CAPVISOR_SECCOMP_SELFTEST");

	if (!s || !*s)
		return 0;
	for (int c = 0; c < SANDBOX_NR_CLASSES; c++)
		if (!strcmp(s, class_names[c])) {
			selftest_class = c;
			return 0;
		}
	snprintf(err, errlen, "CAPVISOR_SECCOMP_SELFTEST: '%s' (expected main, dispatch, vcpu or host)",
		 s);
	return -1;
}

int sandbox_init(const struct sandbox_config *cfg, char *err, size_t errlen)
{
	if (initialised) {
		snprintf(err, errlen, "seccomp: sandbox_init() called twice");
		return -1;
	}
	config = *cfg;
	if (!cfg->mode_set && SANDBOX_SANITIZED) {
		config.mode = SANDBOX_OFF;
		pr_warn("seccomp: filters are off by default in this sanitizer build: the "
			"ASan/LSan runtime needs ptrace, clone and file access at exit "
			"(--seccomp=kill to install them anyway)");
	}
	if (parse_selftest(err, errlen))
		return -1;
	if (config.mode == SANDBOX_TRAP) {
		resolve_syscall_names();
		if (install_sigsys_handler(err, errlen))
			return -1;
	}
	initialised = true;
	pr_info("seccomp: %s", config.mode == SANDBOX_OFF ? "off" : sandbox_mode_name(config.mode));
	return 0;
}

static uint32_t default_action(void)
{
	switch (config.mode) {
	case SANDBOX_TRAP:
		return SCMP_ACT_TRAP;
	case SANDBOX_LOG:
		return SCMP_ACT_LOG;
	default:
		return SCMP_ACT_KILL_PROCESS;
	}
}

/* A call the class's filter refuses (see sandbox_enter()). */
static void selftest_violate(enum sandbox_class cls)
{
	pr_warn("seccomp self-test: the %s thread issues a call its filter forbids", class_names[cls]);
	if (cls == SANDBOX_VCPU)
		ioctl(-1, KVM_CREATE_VCPU, 0);	/* vCPU threads only run their vCPU */
	else
		ioctl(-1, KVM_RUN, 0);		/* only vCPU threads may */
}

static int load_filter(enum sandbox_class cls)
{
	scmp_filter_ctx ctx = seccomp_init(default_action());
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/* A binary search over system calls (libseccomp >= 2.5), else a linear scan. */
	if (!rc)
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (!rc)
		rc = sandbox_add_rules(ctx, cls, &config, (int)gettid());
	if (!rc && SANDBOX_SANITIZED)
		rc = sandbox_add_sanitizer_rules(ctx);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

int sandbox_enter(enum sandbox_class cls)
{
	int rc;

	if (!initialised || config.mode == SANDBOX_OFF)
		return 0;
	thread_class = (int)cls;
	prctl(PR_GET_NAME, thread_name, 0, 0, 0);
	rc = load_filter(cls);
	if (rc) {
		pr_err("seccomp: cannot install the %s thread's filter: %s", class_names[cls],
		       strerror(-rc));
		return rc;
	}
	pr_debug("seccomp: %s filter installed on thread %s", class_names[cls], thread_name);
	/* One thread of the class is enough; vCPU threads start together. */
	if (__atomic_load_n(&selftest_class, __ATOMIC_RELAXED) == (int)cls &&
	    __atomic_exchange_n(&selftest_class, -1, __ATOMIC_RELAXED) == (int)cls)
		selftest_violate(cls);
	return 0;
}
