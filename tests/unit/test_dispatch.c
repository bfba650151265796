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
	/* A run goes on this long after its kick (the host's kick latency). */
	uint64_t overrun_ns;
	/* Every spike_every-th run goes on spike_ns longer still (a host stall). */
	uint64_t spike_ns;
	unsigned int spike_every, runs;
	_Atomic uint64_t kicked_at;	/* when the last kick came */
	/*
	 * With run_clock: the "CPU time" the dispatcher reads (cpu_ns op) is
	 * the wall time inside runs, as if the host ran the thread all along,
	 * so that only the latencies, not the test machine's load, shape it.
	 */
	pthread_mutex_t clock_lock;
	uint64_t run_acc_ns, run_start_ns;
	bool running;
};

struct fake_vm {
	struct dispatch *d;
	unsigned int nr_vcpus;
	bool run_clock;		/* cpu_ns is the wall time in runs (above) */
	uint64_t window_ns;	/* the duty cycle's window, 0: the default */
	struct fake_vcpu v[FAKE_MAX_VCPUS];
};

static void fake_kick(void *opaque, unsigned int vcpu)
{
	struct fake_vm *vm = opaque;

	atomic_store(&vm->v[vcpu].kicked_at, dispatch_now_ns());
	atomic_store(&vm->v[vcpu].kicked, true);
	atomic_fetch_add(&vm->v[vcpu].kicks, 1);
}

static int fake_halted(void *opaque, unsigned int vcpu)
{
	struct fake_vm *vm = opaque;

	return atomic_load(&vm->v[vcpu].halted);
}

/* Wall time a fake vCPU spent inside its runs so far. */
static uint64_t run_clock_ns(struct fake_vcpu *v)
{
	uint64_t t;

	pthread_mutex_lock(&v->clock_lock);
	t = v->run_acc_ns + (v->running ? dispatch_now_ns() - v->run_start_ns : 0);
	pthread_mutex_unlock(&v->clock_lock);
	return t;
}

static void run_clock_mark(struct fake_vcpu *v, bool start)
{
	uint64_t now = dispatch_now_ns();

	pthread_mutex_lock(&v->clock_lock);
	if (start)
		v->run_start_ns = now;
	else if (v->running)
		v->run_acc_ns += now - v->run_start_ns;
	v->running = start;
	pthread_mutex_unlock(&v->clock_lock);
}

static uint64_t fake_cpu_ns(void *opaque, unsigned int vcpu)
{
	struct fake_vm *vm = opaque;

	return run_clock_ns(&vm->v[vcpu]);
}

static const struct dispatch_vcpu_ops fake_ops = { .kick = fake_kick, .halted = fake_halted };
static const struct dispatch_vcpu_ops fake_ops_run_clock = {
	.kick = fake_kick, .halted = fake_halted, .cpu_ns = fake_cpu_ns,
};

/* CPU time of a fake vCPU thread so far. */
static uint64_t cpu_ns(const struct fake_vcpu *v)
{
	struct timespec ts;

	clock_gettime(v->cpu_clock, &ts);
	return ns_from_timespec(&ts);
}

/*
 * One run: spin while the guest is busy, sleep while it is halted, until
 * kicked, and then overrun_ns more.
 */
static void fake_run(struct fake_vcpu *v)
{
	uint64_t over = v->overrun_ns;

	while (!atomic_load(&v->kicked)) {
		if (atomic_load(&v->halted))
			usleep(1000);
	}
	if (v->spike_every && ++v->runs % v->spike_every == 0)
		over += v->spike_ns;
	while (over && dispatch_now_ns() < atomic_load(&v->kicked_at) + over)
		;
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
		if (v->vm->run_clock)
			run_clock_mark(v, true);
		atomic_store(&v->in_run, true);
		atomic_fetch_add(&v->entries, 1);
		fake_run(v);
		atomic_store(&v->in_run, false);
		if (v->vm->run_clock)
			run_clock_mark(v, false);
		dispatch_vcpu_leave(v->vm->d, v->index);
	}
	atomic_store(&v->stopped, true);
	return NULL;
}

/*
 * A VM of nr fake vCPUs with the given QoS on the host spec, started; the
 * vm's run_clock, window_ns and its vCPUs' overrun_ns are read from *vm as
 * set.
 */
static int fake_vm_start_qos(struct fake_vm *vm, const char *host, const unsigned int *host_cpu,
			     unsigned int nr, const struct vcpu_qos *qos)
{
	static struct host_spec hs;
	struct dispatch_config cfg = { 0 };
	char err[256];

	if (host_spec_parse(host, &hs, err, sizeof(err)))
		return -1;
	cfg.host = &hs;
	cfg.host_cpu = host_cpu;
	cfg.nr_vcpus = nr;
	cfg.qos = qos;
	cfg.no_pin = true;	/* the test's threads stay wherever the host puts them */
	cfg.window_ns = vm->window_ns;
	cfg.ops = vm->run_clock ? &fake_ops_run_clock : &fake_ops;
	cfg.opaque = vm;
	vm->nr_vcpus = nr;
	for (unsigned int i = 0; i < nr; i++)
		pthread_mutex_init(&vm->v[i].clock_lock, NULL);
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

/* A VM of nr fake vCPUs with weights (NULL: 1024 each) and no clamps, started. */
static int fake_vm_start(struct fake_vm *vm, const char *host, const unsigned int *host_cpu,
			 unsigned int nr, const uint32_t *weight)
{
	struct vcpu_qos qos[FAKE_MAX_VCPUS];

	memset(vm, 0, sizeof(*vm));
	for (unsigned int i = 0; i < nr; i++) {
		vcpu_qos_default(&qos[i]);
		qos[i].weight = weight ? weight[i] : 1024;
	}
	return fake_vm_start_qos(vm, host, host_cpu, nr, qos);
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
		pthread_mutex_destroy(&vm->v[i].clock_lock);
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

/*
 * Two busy vCPUs on one pCPU: each is held out again and again, for a slice
 * or so at a time. held_max_ns is the longest of those stretches, not their
 * sum (stolen_ns): what a guest's stall detector sees of capvisor.
 */
static void test_longest_hold_is_a_stretch(void)
{
	static const unsigned int host_cpu[] = { 0 };
	struct dispatch_vcpu_report r;
	struct fake_vm vm;

	CU_ASSERT_EQUAL_FATAL(fake_vm_start(&vm, "one=1:1024", host_cpu, 2, NULL), 0);
	sleep_ms(600);
	for (unsigned int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, i, &r), 0);
		printf("\n    dispatch: vCPU %u held out %.1f ms in all, %.1f ms at most at a time",
		       i, r.stolen_ns / 1e6, r.held_max_ns / 1e6);
		/*
		 * Some stretch, and not all of them at once: a loaded test
		 * machine may stretch one (the dispatcher thread runs late), but
		 * in 600 ms the two vCPUs trade the pCPU many times.
		 */
		CU_ASSERT(r.held_max_ns > 0);
		CU_ASSERT(r.held_max_ns < r.stolen_ns);
	}
	fake_vm_stop(&vm);
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

/*
 * A duty-cycled pCPU whose vCPU thread leaves each on-part overrun_ns after
 * its kick. The host "little" at uclamp max 320 runs at level 320: an
 * on-part of 5 ms in every 16 ms window, the nested guest's 1.25 ms in 4 ms
 * scaled by 4 so that this machine's own kick latency (the dispatcher
 * thread wakes late on a loaded host: 1-8 ms measured here at load
 * averages of 3-9) stays small against it. Over 3 s the vCPU's time inside
 * its runs (the fake's run clock: wall time, so the load only adds
 * latency) must converge on 320/1024 of it within 10%, whatever the
 * over-run: 0 (a PVM or hardware host), 4 ms (the nested guest's 1 ms
 * against its 1.25 ms on-part: the debt ends each on-part early by most of
 * it) and 8 ms (longer than the on-part: on-parts are skipped). Paying
 * back at most half an on-part per window, as the dispatcher once did,
 * gives at least (2.5 + over-run) / 16 ms: 0.41 at 4 ms, 0.66 at 8 ms.
 */
static void check_level_share(uint64_t overrun_ns, uint64_t spike_ns, unsigned int spike_every,
			      unsigned int measure_ms)
{
	static const unsigned int host_cpu[] = { 0 };
	const double want = 320.0 / 1024, tol = 0.10;
	struct dispatch_vcpu_report r;
	struct vcpu_qos qos;
	struct fake_vm vm;
	uint64_t on0, t0, on, t, late0, parts0, missed0, parts, host_late_ns;
	double share;

	memset(&vm, 0, sizeof(vm));
	vm.run_clock = true;
	vm.window_ns = 16 * MS;
	vm.v[0].overrun_ns = overrun_ns;
	vm.v[0].spike_ns = spike_ns;
	vm.v[0].spike_every = spike_every;
	vcpu_qos_default(&qos);
	qos.uclamp_max = 320;
	CU_ASSERT_EQUAL_FATAL(fake_vm_start_qos(&vm, "little=1:512:levels=128,320,512", host_cpu, 1,
						&qos), 0);
	CU_ASSERT(wait_all_out(&vm, false));
	sleep_ms(300);	/* the engine's util rises, the level settles at the clamp */
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 0, &r), 0);
	late0 = r.onpart_late_ns;
	parts0 = r.onparts;
	missed0 = r.onparts_missed;
	on0 = run_clock_ns(&vm.v[0]);
	t0 = dispatch_now_ns();
	sleep_ms(measure_ms);
	on = run_clock_ns(&vm.v[0]) - on0;
	t = dispatch_now_ns() - t0;
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 0, &r), 0);
	fake_vm_stop(&vm);
	share = (double)on / (double)t;
	parts = r.onparts - parts0;
	host_late_ns = parts ? (r.onpart_late_ns - late0) / parts : 0;
	host_late_ns -= host_late_ns > overrun_ns ? overrun_ns : host_late_ns;
	if (spike_every)
		host_late_ns -= host_late_ns > spike_ns / spike_every ? spike_ns / spike_every : host_late_ns;
	printf("\n    dispatch: level %u, over-run %.1f ms (+%.0f ms every %u): on %.3f of the time "
	       "(level %.3f), %llu on-parts left %.2f ms late on average (%.2f ms at most), "
	       "%llu missed\n", r.level, overrun_ns / 1e6, spike_ns / 1e6, spike_every, share, want, (unsigned long long)(r.onparts - parts0),
	       r.onparts > parts0 ? (r.onpart_late_ns - late0) / 1e6 / (double)(r.onparts - parts0) : 0,
	       r.onpart_late_max_ns / 1e6, (unsigned long long)(r.onparts_missed - missed0));
	CU_ASSERT_EQUAL(r.level, 320);
	/*
	 * Judged only while this machine's own lateness (the dispatcher
	 * thread's wakeup and the fake thread's, beyond the injected over-run)
	 * stays below the 5 ms on-part: at a load average of 11 here it was
	 * 12-30 ms, more than the window, which no duty cycle can hold a level
	 * through (the debt is bounded to one window).
	 */
	if (host_late_ns > 5 * MS) {
		printf("    dispatch: not judged, this host's own kick latency %.1f ms is more than "
		       "the on-part\n", host_late_ns / 1e6);
		return;
	}
	CU_ASSERT(share >= want * (1 - tol) && share <= want * (1 + tol));
	/* The over-run is what the counters see: every on-part left at least that late. */
	CU_ASSERT(r.onparts > parts0);
	CU_ASSERT((r.onpart_late_ns - late0) >= (r.onparts - parts0) * overrun_ns);
}

static void test_level_holds_without_overrun(void)
{
	check_level_share(0, 0, 0, 3000);
}

static void test_level_holds_with_slow_kicks(void)
{
	check_level_share(4 * MS, 0, 0, 3000);
}

static void test_level_holds_with_kicks_slower_than_onpart(void)
{
	check_level_share(8 * MS, 0, 0, 3000);
}

/*
 * A thread that now and then leaves an on-part many windows late (a stall
 * of the host around it, 0.7-1.25 s in the nested guest under TCG): a
 * 64 ms over-run every 16th on-part, over 5 s so that a spike not yet paid
 * back at the end weighs little. All of it is guest time run, so the level
 * holds only if it is paid back beyond one window: with the debt bounded
 * to one window (16 ms) this read 0.383 of the time for a level of 0.3125.
 */
static void test_level_holds_through_long_overruns(void)
{
	check_level_share(0, 64 * MS, 16, 5000);
}

/* The fake guest's task: busy busy_ns of every period_ns of wall time, halted the rest. */
struct halting_guest {
	struct fake_vcpu *v;
	uint64_t busy_ns, period_ns, until_ns;
	pthread_t thread;
};

static void *halting_guest_thread(void *arg)
{
	struct halting_guest *g = arg;

	for (uint64_t start = dispatch_now_ns(); start < g->until_ns; start += g->period_ns) {
		struct timespec busy_end = timespec_from_ns(start + g->busy_ns);
		struct timespec period_end = timespec_from_ns(start + g->period_ns);

		atomic_store(&g->v->halted, 0);	/* its interrupt: KVM resumes it */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &busy_end, NULL);
		atomic_store(&g->v->halted, 1);	/* HLT */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &period_end, NULL);
	}
	return NULL;
}

/*
 * A duty-cycled pCPU promises its level of a host CPU while its vCPU wants
 * to run, never more: a guest that halts half the time (a task busy 6 of
 * every 14 ms of wall time, as the stock guest's `cvload duty` is) gets at
 * most the level's share of its busy time. What it declined by halting is
 * not owed later (an on-part lengthened by it reads faster than the level
 * in the guest's APERF/MPERF), and a wakeup inside KVM_RUN, where the gate
 * cannot see it, is charged to the pCPU like any over-run. The oracle is
 * the thread's own CPU time.
 */
static void test_level_holds_for_a_halting_guest(void)
{
	static const unsigned int host_cpu[] = { 0 };
	const double level = 320.0 / 1024, busy = 6.0 / 14, slack = 1.7;
	struct halting_guest g = { .busy_ns = 6 * MS, .period_ns = 14 * MS };
	struct dispatch_vcpu_report r;
	struct vcpu_qos qos;
	struct fake_vm vm;
	uint64_t c0, t0, c, t;
	double share;

	memset(&vm, 0, sizeof(vm));
	vm.window_ns = 16 * MS;
	vcpu_qos_default(&qos);
	CU_ASSERT_EQUAL_FATAL(fake_vm_start_qos(&vm, "little=1:320:levels=320", host_cpu, 1,
						&qos), 0);
	g.v = &vm.v[0];
	atomic_store(&vm.v[0].halted, 1);
	CU_ASSERT(wait_all_out(&vm, false));
	g.until_ns = dispatch_now_ns() + 3300 * MS;
	pthread_create(&g.thread, NULL, halting_guest_thread, &g);
	sleep_ms(300);
	c0 = cpu_ns(&vm.v[0]);
	t0 = dispatch_now_ns();
	sleep_ms(3000);
	c = cpu_ns(&vm.v[0]) - c0;
	t = dispatch_now_ns() - t0;
	pthread_join(g.thread, NULL);
	CU_ASSERT_EQUAL(dispatch_vcpu_report(vm.d, 0, &r), 0);
	fake_vm_stop(&vm);
	share = (double)c / (double)t;
	printf("\n    dispatch: a guest busy %.2f of the time on level %u: ran %.3f of the time, "
	       "level x busy share %.3f, bound %.3f\n", busy, r.level, share, level * busy,
	       level * busy * slack);
	CU_ASSERT_EQUAL(r.level, 320);
	/*
	 * 70% over: a wakeup KVM makes inside KVM_RUN runs unseen until the
	 * dispatcher's next look (every tick while such a vCPU is halted and
	 * one ran long unseen lately, later when the dispatcher shares a CPU
	 * with it), and what it ran is paid back only by on-parts the guest is
	 * busy in. Read 0.79-1.51 x (mean 1.1 x, 19 runs on an idle machine);
	 * 2.2 x before the fixes, 2.4 x with a fresh on-part on every wakeup,
	 * 1.75 x looking only at the idle pace.
	 */
	CU_ASSERT(share <= level * busy * slack);
}

UNIT_SUITE(dispatch, unit_quiet_init, unit_quiet_cleanup,
	   UNIT_TEST(test_weights_share_one_pcpu),
	   UNIT_TEST(test_longest_hold_is_a_stretch),
	   UNIT_TEST(test_halted_vcpu_gives_way),
	   UNIT_TEST(test_pause_holds_every_vcpu),
	   UNIT_TEST(test_held_slot_stays_out),
	   UNIT_TEST(test_rejected_qos_changes_nothing),
	   UNIT_TEST(test_level_holds_without_overrun),
	   UNIT_TEST(test_level_holds_through_long_overruns),
	   UNIT_TEST(test_level_holds_with_slow_kicks),
	   UNIT_TEST(test_level_holds_with_kicks_slower_than_onpart),
	   UNIT_TEST(test_level_holds_for_a_halting_guest))
