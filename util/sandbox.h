/* SPDX-License-Identifier: MIT */
/*
 * seccomp-bpf sandbox of `capvisor run` (libseccomp; docs/security.md).
 *
 * Every thread capvisor starts belongs to one class, and each class gets
 * its own allow-list of system calls (ioctls by request number) once its
 * setup is done:
 *   - the main thread (event loop, control socket, console, teardown),
 *     after privileges are dropped and every other thread is started;
 *   - the dispatcher thread, when it starts;
 *   - each vCPU thread, when it starts: only these may issue KVM_RUN;
 *   - `capvisor host`: one filter for all its threads, installed by the
 *     main thread before it starts any (host/host.c).
 * A filter applies to the thread that installs it and to threads it creates
 * afterwards, which is why the main thread installs its own last.
 *
 * Anything else stops the process: SECCOMP_RET_KILL_PROCESS by default
 * (the kernel's audit log names the call), or with `--seccomp=trap` a
 * SIGSYS handler first logs the thread, its class and the call by name.
 * `--seccomp=log` lets forbidden calls through and only has the kernel
 * log them (for finding what a new code path needs); `--seccomp=off`
 * installs nothing.
 *
 * This is process state, not VM state: sandbox_init() once, on the main
 * thread, before any thread starts. Until then sandbox_enter() does
 * nothing, so programs that never call sandbox_init() run unfiltered.
 */
#ifndef CAPVISOR_SANDBOX_H
#define CAPVISOR_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

enum sandbox_mode {
	SANDBOX_KILL,		/* the default */
	SANDBOX_TRAP,		/* log the call from a SIGSYS handler, then die by SIGSYS */
	SANDBOX_LOG,		/* allow, the kernel logs it: debugging only */
	SANDBOX_OFF,
};

enum sandbox_class {
	SANDBOX_MAIN,
	SANDBOX_DISPATCH,
	SANDBOX_VCPU,
	SANDBOX_HOST,		/* capvisor host: every thread (main, dispatcher, proxies) */
	SANDBOX_NR_CLASSES,
};

struct sandbox_config {
	enum sandbox_mode mode;
	bool mode_set;		/* given on the command line (else the build's default) */
	bool api_socket;	/* the main thread removes its control socket at exit */
	bool rejoin;		/* --join: the main thread reconnects to a restarted host */
};

/* "kill", "trap", "log" or "off"; 0 or -EINVAL. */
int sandbox_parse_mode(const char *s, enum sandbox_mode *out);
const char *sandbox_mode_name(enum sandbox_mode mode);
const char *sandbox_class_name(enum sandbox_class cls);

/*
 * Process-wide setup before any thread starts: the mode, the SIGSYS
 * handler of trap mode and the test hook below. 0, or -1 with the reason
 * in err.
 */
int sandbox_init(const struct sandbox_config *cfg, char *err, size_t errlen);

/*
 * The calling thread enters its run phase under its class's filter.
 * 0 (also when the sandbox is off), or -errno after logging why: the
 * caller must then stop rather than run unfiltered.
 *
 * Test hook: with CAPVISOR_SECCOMP_SELFTEST=CLASS in the environment at
 * sandbox_init(), the first thread of that class (main, dispatch, vcpu, host)
 * issues a call its filter forbids right after installing it, so the tests
 * can see each class's filter refuse. It cannot allow anything.
 */
int sandbox_enter(enum sandbox_class cls);

/* The effective mode after sandbox_init() (SANDBOX_OFF before). */
enum sandbox_mode sandbox_mode(void);
/* Built with a sanitizer: filters off by default, sanitizer calls added when on. */
bool sandbox_sanitizer_build(void);

/* Rules of one class into a libseccomp context (sandbox_rules.c). */
int sandbox_add_rules(void *ctx, enum sandbox_class cls, const struct sandbox_config *cfg,
		      int tid);
/* What a sanitizer runtime needs on top, in sanitizer builds (sandbox_rules.c). */
int sandbox_add_sanitizer_rules(void *ctx);

#endif
