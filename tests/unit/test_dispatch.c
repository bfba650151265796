// SPDX-License-Identifier: MIT
/*
 * The dispatcher without KVM: fake vCPU threads behind struct
 * dispatch_vcpu_ops (as tests/progs/qmp_mock_vm.c fakes a VM behind the QMP
 * backend). Each fake thread does what a vCPU thread does around KVM_RUN:
 * clears its kick flag, passes the gate, "runs" (spins, or sleeps while its
 * fake guest is halted) until it is kicked, and leaves. The oracle is what
 * the host measured: each fake thread's CPU time (its thread CPU clock),
 * which a waiting thread does not add to.
 *
 * Timing: the runs are real time on a shared machine, so the bounds are
 * wide; they still fail when the gate lets a preempted vCPU run on, never
 * kicks, ignores a halt, or keeps a vCPU out after resume.
 */
#include "tests/unit/harness.h"
#include "dispatch/dispatch.h"
#include "dispatch/dispatch_slot.h"
#include "util/log.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE_MAX_VCPUS	4
#define MS		1000000ull

struct fake_vm;

struct fake_vcpu {
	struct fake_vm *vm;
	unsigned int index;
	pthread_t thread;
	atomic_bool kicked;	/* immediate_exit */
	atomic_int halted;	/* the fake guest executes HLT */
	atomic_bool in_run;	/* between a DISPATCH_RUN and its leave */
	atomic_uint entries;	/* runs begun */
	atomic_uint kicks;
	atomic_bool stopped;	/* the gate said DISPATCH_STOP */
	clockid_t cpu_clock;	/* the thread's CPU-time clock */
};

struct fake_vm {
	struct dispatch *d;
	unsigned int nr_vcpus;
	struct fake_vcpu v[FAKE_MAX_VCPUS];
};

static void fake_kick(void *opaque, unsigned int vcpu)
{
	struct fake_vm *vm = opaque;

	atomic_store(&vm->v[vcpu].kicked, true);
	atomic_fetch_add(&vm->v[vcpu].kicks, 1);
}

static int fake_halted(void *opaque, unsigned int vcpu)
{
	struct fake_vm *vm = opaque;

	return atomic_load(&vm->v[vcpu].halted);
}

static const struct dispatch_vcpu_ops fake_ops = { .kick = fake_kick, .halted = fake_halted };

/* CPU time of a fake vCPU thread so far. */
static uint64_t cpu_ns(const struct fake_vcpu *v)
{
	struct timespec ts;

	clock_gettime(v->cpu_clock, &ts);
	return ns_from_timespec(&ts);
}

/* One run: spin while the guest is busy, sleep while it is halted, until kicked. */
static void fake_run(struct fake_vcpu *v)
{
	while (!atomic_load(&v->kicked)) {
		if (atomic_load(&v->halted))
			usleep(1000);
	}
}

static void *fake_vcpu_thread(void *arg)
{
	struct fake_vcpu *v = arg;
	uint64_t steal;

	for (;;) {
		/* Cleared before the gate, so a kick after it still ends the run. */
		atomic_store(&v->kicked, false);
		if (dispatch_vcpu_enter(v->vm->d, v->index, &steal) == DISPATCH_STOP)
			break;
		atomic_store(&v->in_run, true);
		atomic_fetch_add(&v->entries, 1);
		fake_run(v);
		atomic_store(&v->in_run, false);
		dispatch_vcpu_leave(v->vm->d, v->index);
	}
	atomic_store(&v->stopped, true);
	return NULL;
}

/* A VM of nr fake vCPUs with weights on the host spec, started. */
static int fake_vm_start(struct fake_vm *vm, const char *host, const unsigned int *host_cpu,
			 unsigned int nr, const uint32_t *weight)
{
	static struct host_spec hs;
	struct vcpu_qos qos[FAKE_MAX_VCPUS];
	struct dispatch_config cfg = { 0 };
	char err[256];

	memset(vm, 0, sizeof(*vm));
	if (host_spec_parse(host, &hs, err, sizeof(err)))
		return -1;
	for (unsigned int i = 0; i < nr; i++) {
		vcpu_qos_default(&qos[i]);
		qos[i].weight = weight ? weight[i] : 1024;
	}
	cfg.host = &hs;
	cfg.host_cpu = host_cpu;
	cfg.nr_vcpus = nr;
	cfg.qos = qos;
	cfg.no_pin = true;	/* the test's threads stay wherever the host puts them */
	cfg.ops = &fake_ops;
	cfg.opaque = vm;
	vm->nr_vcpus = nr;
	vm->d = dispatch_create(&cfg, err, sizeof(err));
	if (!vm->d) {
		printf("\n    dispatch_create: %s\n", err);
		return -1;
	}
	for (unsigned int i = 0; i < nr; i++) {
		vm->v[i].vm = vm;
		vm->v[i].index = i;
		pthread_create(&vm->v[i].thread, NULL, fake_vcpu_thread, &vm->v[i]);
		pthread_getcpuclockid(vm->v[i].thread, &vm->v[i].cpu_clock);
	}
	return dispatch_start(vm->d);
}

/* Stop: every gate must release its thread (2 s each at most, never a hang). */
static void fake_vm_stop(struct fake_vm *vm)
{
	dispatch_stop(vm->d);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		CU_ASSERT_EQUAL(pthread_timedjoin_np(vm->v[i].thread, NULL, &ts), 0);
		CU_ASSERT_TRUE(atomic_load(&vm->v[i].stopped));
	}
	dispatch_destroy(vm->d);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = timespec_from_ns(ms * MS);

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Waits (up to 2 s: a loaded host may not run a thread for a while) until
 * no vCPU is inside its run (all) or every vCPU has begun one (!all).
 */
static bool wait_all_out(struct fake_vm *vm, bool out)
{
	for (unsigned int waited = 0; waited < 2000; waited++) {
		bool done = true;

		for (unsigned int i = 0; i < vm->nr_vcpus; i++)
			done &= out ? !atomic_load(&vm->v[i].in_run) :
				      atomic_load(&vm->v[i].entries) > 0;
		if (done)
			return true;
		sleep_ms(1);
	}
	return false;
}

static enum log_level saved_level;

static int quiet_init(void)
{
	/* Host util clamps are missing on most test hosts: that info line is noise here. */
	saved_level = log_get_level();
	log_set_level(LOG_WARN);
	return 0;
}

static int quiet_cleanup(void)
{
	log_set_level(saved_level);
	return 0;
}

/*
 * Weights 1:4 on one pCPU: the threads' CPU time follows, through kicks.
 * Without the gate's enforcement it would be near 1:1 (the host's share) or
 * one vCPU would keep the pCPU; the bounds leave room for a loaded host.
 */
static void test_weights_share_one_pcpu(void)
{
	static const unsigned int host_cpu[] = { 0 };
	static const uint32_t weight[] = { 1024, 4096 };
	uint64_t given[2], given0[2], cpu0[2], run;
	struct fake_vm vm;
	double a, b;

	CU_ASSERT_EQUAL_FATAL(fake_vm_start(&vm, "one=1:1024", host_cpu, 2, weight), 0);
	/* From when both threads run: one started late would have run alone before. */
	CU_ASSERT(wait_all_out(&vm, false));
	sleep_ms(50);
	for (unsigned int i = 0; i < 2; i++) {
		dispatch_vcpu_times(vm.d, i, &given0[i], &run);
		cpu0[i] = cpu_ns(&vm.v[i]);
	}
	sleep_ms(1000);
	a = (double)(cpu_ns(&vm.v[0]) - cpu0[0]);
	b = (double)(cpu_ns(&vm.v[1]) - cpu0[1]);
	for (unsigned int i = 0; i < 2; i++) {
		dispatch_vcpu_times(vm.d, i, &given[i], &run);
		given[i] -= given0[i];
	}
	fake_vm_stop(&vm);
	printf("\n    dispatch: weights 1:4 given %.0f / %.0f ms (ratio %.2f), ran %.0f / %.0f ms "
	       "(ratio %.2f), %u / %u kicks\n", given[0] / 1e6, given[1] / 1e6,
	       given[0] ? (double)given[1] / given[0] : 0, a / 1e6, b / 1e6, a > 0 ? b / a : 0,
	       atomic_load(&vm.v[0].kicks), atomic_load(&vm.v[1].kicks));
	/*
	 * What the dispatcher gave (time current on the pCPU) follows the
	 * weights within a few slices; the CPU time the host then ran each
	 * thread also depends on the host's load, so it is held only to the
	 * heavier getting clearly more (near 1:1 without the gate).
	 */
	CU_ASSERT(given[0] > 0 && (double)given[1] / given[0] > 2.5 &&
		  (double)given[1] / given[0] < 6.0);
	CU_ASSERT(a > 0 && b / a > 1.3);
	/* Sharing one pCPU means preemption: each vCPU was kicked out again and again. */
	CU_ASSERT(atomic_load(&vm.v[0].kicks) >= 10 && atomic_load(&vm.v[1].kicks) >= 10);
}

/* A halted vCPU is blocked in the engine and leaves the pCPU; un-halted, it runs again. */
static void test_halted_vcpu_gives_way(void)
{
	static const unsigned int host_cpu[] = { 0 };
	uint64_t g0[2], g[2], run, b0, b;
	struct dispatch_vcpu_report r;
	struct fake_vm vm;
	unsigned int entries;

	CU_ASSERT_EQUAL_FATAL(fake_vm_start(&vm, "one=1:1024", host_cpu, 2, NULL), 0);
	atomic_store(&vm.v[1].halted, 1);
	sleep_ms(20);	/* the first ticks see the halt */
	dispatch_vcpu_times(vm.d, 0, &g0[0], &run);
	dispatch_vcpu_times(vm.d, 1, &g0[1], &run);
	b0 = cpu_ns(&vm.v[1]);
	sleep_ms(300);
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 1, &r), 0);
	CU_ASSERT_EQUAL(r.info.state, SCHED_BLOCKED);
	dispatch_vcpu_times(vm.d, 0, &g[0], &run);
	dispatch_vcpu_times(vm.d, 1, &g[1], &run);
	b = cpu_ns(&vm.v[1]) - b0;
	printf("\n    dispatch: halted vCPU 1 given %.1f ms and ran %.1f ms beside vCPU 0's "
	       "%.1f ms given\n", (g[1] - g0[1]) / 1e6, b / 1e6, (g[0] - g0[0]) / 1e6);
	/*
	 * vCPU 0 was given the pCPU to itself (two thirds of the 300 ms at
	 * least, whatever the host's load), the halted one next to nothing; its
	 * thread only polls its flag (a spinning one would use ~300 ms).
	 */
	CU_ASSERT(g[0] - g0[0] > 200 * MS && g[1] - g0[1] < (g[0] - g0[0]) / 10);
	CU_ASSERT(b < 30 * MS);
	entries = atomic_load(&vm.v[1].entries);
	atomic_store(&vm.v[1].halted, 0);
	sleep_ms(200);
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 1, &r), 0);
	CU_ASSERT_NOT_EQUAL(r.info.state, SCHED_BLOCKED);
	CU_ASSERT(atomic_load(&vm.v[1].entries) > entries);
	dispatch_vcpu_times(vm.d, 1, &g0[1], &run);
	CU_ASSERT(g0[1] > g[1] + 10 * MS);	/* given time again once it woke */
	fake_vm_stop(&vm);
}

/* stop holds every vCPU outside its run; cont lets them in again. */
static void test_pause_holds_every_vcpu(void)
{
	static const unsigned int host_cpu[] = { 0, 1 };
	unsigned int before[2];
	struct fake_vm vm;

	CU_ASSERT_EQUAL_FATAL(fake_vm_start(&vm, "two=2:1024", host_cpu, 2, NULL), 0);
	sleep_ms(50);
	dispatch_pause(vm.d);
	/* The kicks land within a tick; the threads leave when the host runs them. */
	CU_ASSERT(wait_all_out(&vm, true));
	for (unsigned int i = 0; i < 2; i++) {
		CU_ASSERT_FALSE(atomic_load(&vm.v[i].in_run));
		before[i] = atomic_load(&vm.v[i].entries);
	}
	sleep_ms(150);
	for (unsigned int i = 0; i < 2; i++) {
		CU_ASSERT_FALSE(atomic_load(&vm.v[i].in_run));
		CU_ASSERT_EQUAL(atomic_load(&vm.v[i].entries), before[i]);
	}
	dispatch_resume(vm.d);
	sleep_ms(150);
	for (unsigned int i = 0; i < 2; i++)
		CU_ASSERT(atomic_load(&vm.v[i].entries) > before[i]);
	fake_vm_stop(&vm);
}

/*
 * vm-stop of one VM: its held vCPU leaves its run, stays out and is blocked
 * in the engine, so the other vCPU on the same pCPU gets it all; released,
 * it runs again. The oracle is the time the dispatcher gave each.
 */
static void test_held_slot_stays_out(void)
{
	static const unsigned int host_cpu[] = { 0 };
	uint64_t g0[2], g[2], run;
	struct dispatch_vcpu_report r;
	struct fake_vm vm;
	unsigned int entries;

	CU_ASSERT_EQUAL_FATAL(fake_vm_start(&vm, "one=1:1024", host_cpu, 2, NULL), 0);
	sleep_ms(50);
	dispatch_slot_hold(vm.d, 0, true);
	sleep_ms(50);	/* the kick lands, the thread leaves */
	entries = atomic_load(&vm.v[0].entries);
	dispatch_vcpu_times(vm.d, 0, &g0[0], &run);
	dispatch_vcpu_times(vm.d, 1, &g0[1], &run);
	sleep_ms(300);
	CU_ASSERT_FALSE(atomic_load(&vm.v[0].in_run));
	CU_ASSERT_EQUAL(atomic_load(&vm.v[0].entries), entries);
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 0, &r), 0);
	CU_ASSERT_EQUAL(r.info.state, SCHED_BLOCKED);
	dispatch_vcpu_times(vm.d, 0, &g[0], &run);
	dispatch_vcpu_times(vm.d, 1, &g[1], &run);
	printf("\n    dispatch: held vCPU 0 given %.1f ms beside vCPU 1's %.1f ms\n",
	       (g[0] - g0[0]) / 1e6, (g[1] - g0[1]) / 1e6);
	CU_ASSERT(g[0] == g0[0]);
	CU_ASSERT(g[1] - g0[1] > 200 * MS);
	dispatch_slot_hold(vm.d, 0, false);
	sleep_ms(200);
	CU_ASSERT(atomic_load(&vm.v[0].entries) > entries);
	dispatch_vcpu_times(vm.d, 0, &g0[0], &run);
	CU_ASSERT(g0[0] > g[0] + 10 * MS);
	fake_vm_stop(&vm);
}

/* Live QoS: a rejected change names what was wrong and changes nothing. */
static void test_rejected_qos_changes_nothing(void)
{
	static const unsigned int host_cpu[] = { 0, 1 };
	struct dispatch_vcpu_report r;
	struct fake_vm vm;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(fake_vm_start(&vm, "big=1:1024,little=1:512", host_cpu, 2, NULL), 0);
	err[0] = 0;
	CU_ASSERT(dispatch_set_weight(vm.d, 0, 0, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "weight 0"));
	CU_ASSERT(dispatch_set_uclamp(vm.d, 0, 600, 100, err, sizeof(err)) < 0);
	CU_ASSERT(dispatch_set_cluster(vm.d, 0, "medium", err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster 'medium' does not exist"));
	CU_ASSERT(dispatch_set_weight(vm.d, 7, 2048, err, sizeof(err)) < 0);
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 0, &r), 0);
	CU_ASSERT_EQUAL(r.info.weight, 1024);
	CU_ASSERT_EQUAL(r.info.uclamp_min, 0);
	CU_ASSERT_EQUAL(r.info.uclamp_max, 1024);
	CU_ASSERT_TRUE(sched_cpumask_empty(&r.info.affinity));
	/* An accepted one takes effect. */
	CU_ASSERT_EQUAL(dispatch_set_weight(vm.d, 0, 2048, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dispatch_set_cluster(vm.d, 0, "little", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 0, &r), 0);
	CU_ASSERT_EQUAL(r.info.weight, 2048);
	CU_ASSERT_FALSE(sched_cpumask_empty(&r.info.affinity));
	fake_vm_stop(&vm);
}

UNIT_SUITE(dispatch, quiet_init, quiet_cleanup,
	   UNIT_TEST(test_weights_share_one_pcpu),
	   UNIT_TEST(test_halted_vcpu_gives_way),
	   UNIT_TEST(test_pause_holds_every_vcpu),
	   UNIT_TEST(test_held_slot_stays_out),
	   UNIT_TEST(test_rejected_qos_changes_nothing))
