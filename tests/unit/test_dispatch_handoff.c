// SPDX-License-Identifier: MIT
/*
 * Hand-off (dispatch_vcpu_ops.hand_off) without KVM and without a host:
 * each fake vCPU is a pair of threads shaped like capvisor host's, a proxy
 * that passes the gate and a runner (the VM's vCPU thread) that waits on a
 * gate word, "runs" (spins until kicked or its slice's end), then says so
 * on a left word. Two busy vCPUs share one pCPU, so every switch is a
 * leave followed by the other's run: with hand-off the leaving proxy starts
 * it and the other proxy sleeps through it.
 *
 * The oracle is what the runners saw, not the dispatcher's word: runs at
 * once on the host CPU (never two), the runs each proxy started or was
 * handed (each run exactly once), and the runners' spin time (half each).
 */
#include "tests/unit/harness.h"
#include "dispatch/dispatch.h"
#include "util/util.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HO_VCPUS	2
#define MS		1000000ull
#define HO_RUN_MAX_NS	(50 * MS)	/* a run nobody ends: the test fails, never hangs */

struct ho_vm;

struct ho_vcpu {
	struct ho_vm *vm;
	unsigned int index;
	pthread_t proxy, runner;
	clockid_t runner_clock;
	uint32_t gate;			/* proxy -> runner: the run's sequence number */
	uint32_t left;			/* runner -> proxy: the last run that ended */
	uint32_t seq;			/* of the run last started */
	_Atomic uint64_t run_end;	/* its slice's end, 0 none */
	atomic_bool blocked;		/* the run was let in blocked */
	atomic_bool kicked;
	atomic_uint runs;		/* runs the runner made */
	atomic_uint started, handed;	/* its proxy got DISPATCH_RUN / DISPATCH_HANDED */
	_Atomic uint64_t spun_ns;	/* wall time in runs */
	uint32_t *wake_gate;		/* a hand-off of its proxy's leave */
	atomic_bool stop;
};

struct ho_vm {
	struct dispatch *d;
	atomic_int active;		/* runners in a run now */
	atomic_uint overlaps;		/* a run began while another was on */
	struct ho_vcpu v[HO_VCPUS];
};

static void wake_word(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void wait_word(uint32_t *word, uint32_t val)
{
	struct timespec ts = timespec_from_ns(10 * MS);

	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void ho_kick(void *opaque, unsigned int vcpu)
{
	struct ho_vm *vm = opaque;

	atomic_store(&vm->v[vcpu].kicked, true);
	wake_word(&vm->v[vcpu].left);
}

static int ho_halted(void *opaque, unsigned int vcpu)
{
	(void)opaque, (void)vcpu;
	return 0;
}

static uint64_t ho_cpu_ns(void *opaque, unsigned int vcpu)
{
	struct ho_vm *vm = opaque;
	struct timespec ts;

	clock_gettime(vm->v[vcpu].runner_clock, &ts);
	return ns_from_timespec(&ts);
}

/* What a proxy tells its runner of a run, the gate word last. */
static void start_run(struct ho_vcpu *v, const struct dispatch_run *run)
{
	v->seq++;
	atomic_store(&v->run_end, run->run_end_ns == UINT64_MAX ? 0 : run->run_end_ns);
	atomic_store(&v->blocked, run->blocked);
	__atomic_store_n(&v->gate, v->seq, __ATOMIC_RELEASE);
}

static void ho_hand_off(void *opaque, unsigned int from, unsigned int to,
			const struct dispatch_run *run)
{
	struct ho_vm *vm = opaque;

	start_run(&vm->v[to], run);
	vm->v[from].wake_gate = &vm->v[to].gate;
}

static const uint32_t *ho_run_end_word(void *opaque, unsigned int vcpu)
{
	struct ho_vm *vm = opaque;

	return &vm->v[vcpu].left;
}

static const struct dispatch_vcpu_ops ho_ops = {
	.kick = ho_kick, .halted = ho_halted, .cpu_ns = ho_cpu_ns,
	.run_end_word = ho_run_end_word, .hand_off = ho_hand_off,
};
static const struct dispatch_vcpu_ops classic_ops = {
	.kick = ho_kick, .halted = ho_halted, .cpu_ns = ho_cpu_ns,
};

/*
 * A run let in blocked is a guest waiting for its interrupt inside KVM_RUN,
 * asleep (the first runs of a vCPU other than the first start so): it may
 * share the host CPU, and is not counted. The fake guest is never halted,
 * so the dispatcher sees it wake at once and the engine takes it in.
 */
static void spin_run(struct ho_vcpu *v)
{
	uint64_t t0 = dispatch_now_ns(), end = atomic_load(&v->run_end), now = t0;
	bool counted = !atomic_load(&v->blocked);

	if (counted && atomic_fetch_add(&v->vm->active, 1))
		atomic_fetch_add(&v->vm->overlaps, 1);
	while (!atomic_load(&v->kicked) && (!end || now < end) && now - t0 < HO_RUN_MAX_NS)
		now = dispatch_now_ns();
	if (counted)
		atomic_fetch_sub(&v->vm->active, 1);
	atomic_fetch_add(&v->spun_ns, now - t0);
	atomic_fetch_add(&v->runs, 1);
}

static void *runner_thread(void *arg)
{
	struct ho_vcpu *v = arg;
	uint32_t last = 0, g;

	while (!atomic_load(&v->stop)) {
		g = __atomic_load_n(&v->gate, __ATOMIC_ACQUIRE);
		if (g == last) {
			wait_word(&v->gate, g);
			continue;
		}
		last = g;
		spin_run(v);
		__atomic_store_n(&v->left, g, __ATOMIC_RELEASE);
		wake_word(&v->left);
	}
	return NULL;
}

static void *proxy_thread(void *arg)
{
	struct ho_vcpu *v = arg;
	struct dispatch *d = v->vm->d;
	struct dispatch_run run;
	enum dispatch_verdict verdict;
	uint32_t left;

	for (;;) {
		atomic_store(&v->kicked, false);
		verdict = dispatch_vcpu_enter_run(d, v->index, &run);
		if (verdict == DISPATCH_STOP)
			break;
		if (verdict == DISPATCH_RUN) {
			atomic_fetch_add(&v->started, 1);
			start_run(v, &run);
			wake_word(&v->gate);
		} else {
			atomic_fetch_add(&v->handed, 1);
		}
		while ((left = __atomic_load_n(&v->left, __ATOMIC_ACQUIRE)) != v->seq)
			wait_word(&v->left, left);
		dispatch_vcpu_leave(d, v->index);
		if (v->wake_gate) {
			wake_word(v->wake_gate);
			v->wake_gate = NULL;
		}
	}
	return NULL;
}

static int ho_start(struct ho_vm *vm, const struct dispatch_vcpu_ops *ops)
{
	static const unsigned int host_cpu[] = { 0 };
	static struct host_spec hs;
	struct vcpu_qos qos[HO_VCPUS];
	struct dispatch_config cfg = {
		.host = &hs, .host_cpu = host_cpu, .nr_vcpus = HO_VCPUS, .qos = qos,
		.slice_ns = 2 * MS, .ops = ops, .opaque = vm, .remote_run_end = true,
	};
	char err[256];

	memset(vm, 0, sizeof(*vm));
	if (host_spec_parse("one=1:1024", &hs, err, sizeof(err)))
		return -1;
	for (unsigned int i = 0; i < HO_VCPUS; i++)
		vcpu_qos_default(&qos[i]);
	vm->d = dispatch_create(&cfg, err, sizeof(err));
	if (!vm->d) {
		printf("\n    dispatch_create: %s\n", err);
		return -1;
	}
	for (unsigned int i = 0; i < HO_VCPUS; i++) {
		struct ho_vcpu *v = &vm->v[i];

		v->vm = vm;
		v->index = i;
		pthread_create(&v->runner, NULL, runner_thread, v);
		pthread_getcpuclockid(v->runner, &v->runner_clock);
		pthread_create(&v->proxy, NULL, proxy_thread, v);
	}
	return dispatch_start(vm->d);
}

/* Every thread must be out within 2 s of the stop: never a hang. */
static void ho_stop(struct ho_vm *vm, struct dispatch_counters *c)
{
	dispatch_stop(vm->d);
	for (unsigned int i = 0; i < HO_VCPUS; i++) {
		struct ho_vcpu *v = &vm->v[i];
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		CU_ASSERT_EQUAL(pthread_timedjoin_np(v->proxy, NULL, &ts), 0);
		atomic_store(&v->stop, true);
		wake_word(&v->gate);
		CU_ASSERT_EQUAL(pthread_timedjoin_np(v->runner, NULL, &ts), 0);
	}
	dispatch_get_counters(vm->d, c);
	dispatch_destroy(vm->d);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = timespec_from_ns(ms * MS);

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * One second of two busy vCPUs at 2 ms slices; returns the hand-offs the
 * dispatcher counted and checks what holds with or without them.
 */
static uint64_t run_pair(const struct dispatch_vcpu_ops *ops, bool *usable)
{
	struct dispatch_counters c;
	unsigned int runs = 0, entered = 0, handed = 0;
	uint64_t spun[HO_VCPUS], total = 0;
	struct ho_vm vm;

	CU_ASSERT_EQUAL_FATAL(ho_start(&vm, ops), 0);
	sleep_ms(1000);
	ho_stop(&vm, &c);
	for (unsigned int i = 0; i < HO_VCPUS; i++) {
		runs += atomic_load(&vm.v[i].runs);
		entered += atomic_load(&vm.v[i].started);
		handed += atomic_load(&vm.v[i].handed);
		spun[i] = atomic_load(&vm.v[i].spun_ns);
		total += spun[i];
	}
	printf("\n    runs %u (started %u, handed %u), hand-offs %llu, spin %.3f / %.3f, "
	       "overlaps %u ", runs, entered, handed, (unsigned long long)c.handoffs,
	       (double)spun[0] / (double)total, (double)spun[1] / (double)total,
	       atomic_load(&vm.overlaps));
	CU_ASSERT_EQUAL(atomic_load(&vm.overlaps), 0);
	CU_ASSERT_EQUAL(entered + handed, runs);	/* each run begun once, by one thread */
	CU_ASSERT_EQUAL(handed, c.handoffs);
	CU_ASSERT(runs >= 100);				/* 2 ms slices: about 500 */
	for (unsigned int i = 0; i < HO_VCPUS; i++)
		CU_ASSERT(spun[i] > total * 3 / 10);
	*usable = c.hand_off;
	return c.handoffs;
}

/* With hand-off, almost every switch is one: the other proxy never wakes for it. */
static void test_handoff_starts_the_next_run(void)
{
	bool usable;
	uint64_t handoffs = run_pair(&ho_ops, &usable);

	if (!usable) {
		printf("(no futex_waitv on this kernel: the classic path ran) ");
		CU_ASSERT_EQUAL(handoffs, 0);
		return;
	}
	CU_ASSERT(handoffs >= 100);
}

/* Without the ops, the same guarantees through each vCPU's own gate thread. */
static void test_handoff_absent_classic_gate(void)
{
	bool usable;

	CU_ASSERT_EQUAL(run_pair(&classic_ops, &usable), 0);
	CU_ASSERT_FALSE(usable);
}

UNIT_SUITE(dispatch_handoff, unit_quiet_init, unit_quiet_cleanup,
	   UNIT_TEST(test_handoff_starts_the_next_run),
	   UNIT_TEST(test_handoff_absent_classic_gate));
