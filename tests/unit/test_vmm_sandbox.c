// SPDX-License-Identifier: MIT
/*
 * The seccomp sandbox (util/sandbox.c, sandbox_rules.c) without KVM: each
 * probe forks a child that loads one class's filter and makes one call;
 * the parent sees it exit normally (allowed) or die by SIGSYS (refused).
 * Argument checks are probed on both sides: the same call allowed with the
 * arguments capvisor uses and refused with others.
 */
#include "tests/unit/harness.h"
#include "util/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp_path[64];

static void call_kvm_run(void) { ioctl(-1, KVM_RUN, 0); }
static void call_create_vcpu(void) { ioctl(-1, KVM_CREATE_VCPU, 0); }
static void call_irq_line(void) { ioctl(-1, KVM_IRQ_LINE, NULL); }
static void call_socket(void) { socket(AF_INET, SOCK_STREAM, 0); }
static void call_execve(void) { execve("/bin/true", (char *[]){ "true", NULL }, NULL); }
static void call_write(void) { (void)!write(-1, "x", 1); }
static void call_clock_cpu(void) { struct timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); }
static void call_tgkill_self(void) { syscall(SYS_tgkill, getpid(), gettid(), 0); }
static void call_tgkill_init(void) { syscall(SYS_tgkill, 1, 1, 0); }
static void call_pread(void) { char c; (void)!pread(-1, &c, 1, 0); }
static void call_timer_create(void) { timer_t t; timer_create(CLOCK_MONOTONIC, NULL, &t); }
static void call_epoll_wait(void) { syscall(SYS_epoll_wait, -1, NULL, 1, 0); }
static void call_accept(void) { accept4(-1, NULL, NULL, 0); }

static void call_mmap_rw(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		munmap(p, 4096);
}

static void call_mmap_exec(void)
{
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void call_timerslack(void) { prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); }
static void call_set_name(void) { prctl(PR_SET_NAME, "x", 0, 0, 0); }

static void call_affinity(pid_t who)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	sched_setaffinity(who, sizeof(set), &set);
}

static void call_affinity_self(void) { call_affinity(0); }
static void call_affinity_tid(void) { call_affinity(gettid()); }
static void call_affinity_other(void) { call_affinity(1); }

static void call_open_stats(void)
{
	int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0)
		close(fd);
}

static void call_open_read(void) { open("/etc/hostname", O_RDONLY); }
static void call_open_append(void) { open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600); }
static void call_unlink(void) { unlink(tmp_path); }

/*
 * Run call in a child under cls's filter; its wait status. The child's
 * stderr goes to err_fd when >= 0 (trap mode's line).
 */
static int run_probe(enum sandbox_class cls, const struct sandbox_config *cfg, void (*call)(void),
		     int err_fd)
{
	int status = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char err[256];

		if (err_fd >= 0)
			dup2(err_fd, STDERR_FILENO);
		if (sandbox_init(cfg, err, sizeof(err)) || sandbox_enter(cls))
			_exit(99);
		call();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static bool refused(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

static bool allowed(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#define ALLOW		0x1u	/* the call goes through */
#define SAN_ALLOWS	0x2u	/* in the sanitizer additions: allowed in such builds */
#define API_SOCKET	0x8u	/* --api-socket given */

struct probe {
	const char *what;
	enum sandbox_class cls;
	void (*call)(void);
	unsigned int flags;
};

static const struct probe probes[] = {
	/* KVM_RUN is the vCPU threads' alone; a vCPU cannot create one. */
	{ "KVM_RUN from a vCPU", SANDBOX_VCPU, call_kvm_run, ALLOW },
	{ "KVM_RUN from main", SANDBOX_MAIN, call_kvm_run, 0 },
	{ "KVM_RUN from the dispatcher", SANDBOX_DISPATCH, call_kvm_run, 0 },
	{ "KVM_CREATE_VCPU from a vCPU", SANDBOX_VCPU, call_create_vcpu, 0 },
	{ "KVM_IRQ_LINE from main", SANDBOX_MAIN, call_irq_line, ALLOW },
	{ "KVM_IRQ_LINE from the dispatcher", SANDBOX_DISPATCH, call_irq_line, 0 },
	/* Nobody opens sockets, executes or maps code. */
	{ "socket from main", SANDBOX_MAIN, call_socket, 0 },
	{ "execve from a vCPU", SANDBOX_VCPU, call_execve, 0 },
	{ "mmap read-write", SANDBOX_DISPATCH, call_mmap_rw, ALLOW },
	{ "mmap executable", SANDBOX_VCPU, call_mmap_exec, 0 },
	{ "write", SANDBOX_DISPATCH, call_write, ALLOW },
	{ "a thread's CPU clock", SANDBOX_DISPATCH, call_clock_cpu, ALLOW },
	/* Signals only to ourselves. */
	{ "tgkill to our own thread", SANDBOX_VCPU, call_tgkill_self, ALLOW },
	{ "tgkill to another process", SANDBOX_DISPATCH, call_tgkill_init, 0 },
	/* Each class's own calls. */
	{ "pread from the dispatcher", SANDBOX_DISPATCH, call_pread, ALLOW },
	{ "pread from a vCPU", SANDBOX_VCPU, call_pread, SAN_ALLOWS },
	{ "timer_create from a vCPU", SANDBOX_VCPU, call_timer_create, ALLOW },
	{ "timer_create from the dispatcher", SANDBOX_DISPATCH, call_timer_create, 0 },
	{ "epoll_wait from main", SANDBOX_MAIN, call_epoll_wait, ALLOW },
	{ "epoll_wait from a vCPU", SANDBOX_VCPU, call_epoll_wait, 0 },
	{ "accept4 from main", SANDBOX_MAIN, call_accept, ALLOW },
	{ "accept4 from the dispatcher", SANDBOX_DISPATCH, call_accept, 0 },
	/* A vCPU changes its own scheduling only. */
	{ "timer slack", SANDBOX_VCPU, call_timerslack, ALLOW },
	{ "prctl other than timer slack", SANDBOX_VCPU, call_set_name, SAN_ALLOWS },
	{ "affinity of pid 0", SANDBOX_VCPU, call_affinity_self, ALLOW },
	{ "affinity of the thread's own id", SANDBOX_VCPU, call_affinity_tid, ALLOW },
	{ "affinity of another process", SANDBOX_VCPU, call_affinity_other, 0 },
	{ "affinity from main", SANDBOX_MAIN, call_affinity_self, 0 },
	/* Files: nothing opened once running; the socket removed only when served. */
	{ "open for writing", SANDBOX_MAIN, call_open_stats, SAN_ALLOWS },
	{ "open for reading", SANDBOX_MAIN, call_open_read, SAN_ALLOWS },
	{ "open for appending", SANDBOX_MAIN, call_open_append, SAN_ALLOWS },
	{ "unlink the socket", SANDBOX_MAIN, call_unlink, ALLOW | API_SOCKET },
	{ "unlink without --api-socket", SANDBOX_MAIN, call_unlink, 0 },
	{ "unlink from a vCPU", SANDBOX_VCPU, call_unlink, API_SOCKET },
};

static void test_each_rule_allows_and_refuses(void)
{
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const struct probe *p = &probes[i];
		struct sandbox_config cfg = {
			.mode = SANDBOX_KILL, .mode_set = true,
			.api_socket = p->flags & API_SOCKET,
		};
		bool want = (p->flags & ALLOW) || ((p->flags & SAN_ALLOWS) && sandbox_sanitizer_build());
		int st = run_probe(p->cls, &cfg, p->call, -1);

		if (want ? !allowed(st) : !refused(st))
			fprintf(stderr, "\n  %s (%s filter): status %#x, expected %s\n", p->what,
				sandbox_class_name(p->cls), st, want ? "allowed" : "SIGSYS");
		CU_ASSERT(want ? allowed(st) : refused(st));
	}
}

static void test_off_installs_nothing(void)
{
	struct sandbox_config cfg = { .mode = SANDBOX_OFF, .mode_set = true };

	CU_ASSERT(allowed(run_probe(SANDBOX_DISPATCH, &cfg, call_kvm_run, -1)));
	CU_ASSERT(allowed(run_probe(SANDBOX_VCPU, &cfg, call_socket, -1)));
}

static void test_log_mode_lets_calls_through(void)
{
	struct sandbox_config cfg = { .mode = SANDBOX_LOG, .mode_set = true };

	CU_ASSERT(allowed(run_probe(SANDBOX_MAIN, &cfg, call_kvm_run, -1)));
}

/* Trap mode names the thread's class and the call, then dies by SIGSYS. */
static void test_trap_mode_names_the_call(void)
{
	struct sandbox_config cfg = { .mode = SANDBOX_TRAP, .mode_set = true };
	char buf[512] = "";
	FILE *f = tmpfile();
	int st;

	CU_ASSERT_FATAL(f != NULL);
	st = run_probe(SANDBOX_DISPATCH, &cfg, call_socket, fileno(f));
	CU_ASSERT(refused(st));
	rewind(f);
	CU_ASSERT(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	CU_ASSERT(strstr(buf, "(dispatch filter) called socket (nr 41), which its filter forbids") != NULL);
	fclose(f);
	f = tmpfile();
	CU_ASSERT_FATAL(f != NULL);
	st = run_probe(SANDBOX_MAIN, &cfg, call_kvm_run, fileno(f));
	CU_ASSERT(refused(st));
	rewind(f);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	CU_ASSERT(strstr(buf, "(main filter) called ioctl (nr 16, request 0xae80)") != NULL);
	fclose(f);
}

static void test_parse_mode(void)
{
	static const char *const names[] = { "kill", "trap", "log", "off" };
	enum sandbox_mode m;

	for (unsigned int i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(sandbox_parse_mode(names[i], &m), 0);
		CU_ASSERT_STRING_EQUAL(sandbox_mode_name(m), names[i]);
	}
	m = SANDBOX_TRAP;
	CU_ASSERT_EQUAL(sandbox_parse_mode("KILL", &m), -EINVAL);
	CU_ASSERT_EQUAL(sandbox_parse_mode("", &m), -EINVAL);
	CU_ASSERT_EQUAL(sandbox_parse_mode(NULL, &m), -EINVAL);
	CU_ASSERT_EQUAL(m, SANDBOX_TRAP);	/* a refused value changes nothing */
}

static int sandbox_suite_init(void)
{
	snprintf(tmp_path, sizeof(tmp_path), "/tmp/capvisor-sandbox-test.%d", (int)getpid());
	return 0;
}

static int sandbox_suite_cleanup(void)
{
	unlink(tmp_path);
	return 0;
}

UNIT_SUITE(vmm_sandbox, sandbox_suite_init, sandbox_suite_cleanup,
	   UNIT_TEST(test_each_rule_allows_and_refuses), UNIT_TEST(test_off_installs_nothing),
	   UNIT_TEST(test_log_mode_lets_calls_through), UNIT_TEST(test_trap_mode_names_the_call),
	   UNIT_TEST(test_parse_mode))
