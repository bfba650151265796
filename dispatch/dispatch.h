/* SPDX-License-Identifier: MIT */
/*
 * The dispatcher: makes real vCPU threads obey the scheduling engine.
 *
 * Threading model (see docs/architecture.md):
 *  - one mutex per dispatcher guards the engine and all dispatcher state;
 *  - each vCPU thread calls dispatch_vcpu_enter() before every KVM_RUN and
 *    dispatch_vcpu_leave() after it. enter blocks (outside KVM_RUN, using no
 *    CPU) until the engine has made the vCPU current on a pCPU and the pCPU's
 *    duty cycle is in its on-part; it returns when the vCPU must be out again;
 *  - one dispatcher thread ticks the engine, watches which vCPUs halted or
 *    woke (KVM's per-vCPU `blocking` statistic), and kicks vCPUs out of
 *    KVM_RUN when the engine preempts them or their on-part ends;
 *  - a halted vCPU waits for its interrupt inside KVM_RUN (asleep in the
 *    kernel), so no wakeup is ever lost; the dispatcher sees it wake within
 *    a tick and the engine decides whether it keeps running.
 * The control socket calls the dispatch_set_*() functions from the main
 * thread; they take the same mutex and take effect at once.
 *
 * The seam: dispatch/ drives sched/ in real time as sim/ does in virtual
 * time, and includes no KVM header. It needs from the vCPU layer only
 * struct dispatch_vcpu_ops (kick a vCPU, is it halted), the kick signal for
 * the on-part timers a vCPU thread arms on itself, and two optional
 * callbacks (thread_init, tick_hook). It offers the vCPU threads the gate
 * (dispatch_vcpu_enter()/leave(), which vmm/vm_sched.c plugs into the
 * vCPU's struct vcpu_gate_ops), and everyone else live QoS and reports.
 */
#ifndef CAPVISOR_DISPATCH_H
#define CAPVISOR_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sched/sched.h"
#include "dispatch/hostspec.h"
#include "dispatch/qosspec.h"

struct dispatch;

#define DISPATCH_MAX_VCPUS	1024	/* a group report lists at most this many */
/*
 * --tick-us and --slice-us: the one home of their defaults and ranges
 * (plain numbers: help texts print them). The window's are in dutycycle.h.
 */
#define DISPATCH_DEFAULT_TICK_US	1000
#define DISPATCH_TICK_MIN_US		100
#define DISPATCH_TICK_MAX_US		100000
/*
 * A switch between vCPU threads costs a kick and a handoff (~100 us on PVM
 * hosts, a few us on VMX/SVM); a 4 ms slice keeps that near 2%.
 */
#define DISPATCH_DEFAULT_SLICE_US	4000
#define DISPATCH_SLICE_MIN_US		100
#define DISPATCH_SLICE_MAX_US		100000
#define DISPATCH_DEFAULT_TICK_NS	(DISPATCH_DEFAULT_TICK_US * 1000ull)
#define DISPATCH_DEFAULT_SLICE_NS	(DISPATCH_DEFAULT_SLICE_US * 1000ull)

/*
 * What a run the gate let in starts with: what the thread passing the gate
 * tells the vCPU's own thread when that is another thread (capvisor host).
 */
struct dispatch_run {
	uint64_t steal_ns;	/* held out while runnable since the last run */
	uint64_t active_ns, run_ns;	/* the vCPU's accounts as charged now */
	/*
	 * With remote_run_end: where the run is to end its own slice
	 * (CLOCK_MONOTONIC ns), UINT64_MAX none. The dispatcher does not wake
	 * for that end; its stretched tick remains the bound on a vCPU thread
	 * that does not stop.
	 */
	uint64_t run_end_ns;
	int host_cpu;		/* the host CPU it runs on, -1 unknown */
	bool blocked;		/* let in blocked: to wait for its interrupt in KVM_RUN */
};

/* What the dispatcher needs from the vCPU layer. */
struct dispatch_vcpu_ops {
	/* Force the vCPU out of KVM_RUN (immediate_exit + signal): never lost. */
	void (*kick)(void *opaque, unsigned int vcpu);
	/* 1 while halted inside KVM_RUN (KVM stat `blocking`), 0 if not, < 0 unknown. */
	int (*halted)(void *opaque, unsigned int vcpu);
	/*
	 * Optional: the vCPU thread's CPU time in ns, for a thread the caller of
	 * the gate is not (capvisor host: the gate is passed by a proxy thread
	 * on the thread's behalf). NULL: the gate caller's own CPU clock.
	 */
	uint64_t (*cpu_ns)(void *opaque, unsigned int vcpu);
	/*
	 * Optional, both or neither: hand-off (capvisor host's proxies). A
	 * thread that leaves a vCPU's run passes the gate for the next vCPU on
	 * the same host CPU itself, and hand_off() (called under the
	 * dispatcher's lock, on the leaving thread, from vCPU `from` to `to`)
	 * starts that run; the next vCPU's own gate thread is not woken for it
	 * and sleeps on until run_end_word() (a shared futex word the vCPU's
	 * thread wakes when a run ends) changes, then gets DISPATCH_HANDED.
	 */
	const uint32_t *(*run_end_word)(void *opaque, unsigned int vcpu);
	void (*hand_off)(void *opaque, unsigned int from, unsigned int to,
			 const struct dispatch_run *run);
};

struct dispatch_config {
	const struct host_spec *host;
	const unsigned int *host_cpu;	/* pCPU -> host CPU (host_spec_place) */
	unsigned int nr_vcpus;
	const struct vcpu_qos *qos;	/* one per vCPU */
	const struct vm_qos *vm_qos;	/* the VM's group and its groups; NULL: defaults */
	uint64_t tick_ns;		/* engine tick, 0: DISPATCH_DEFAULT_TICK_NS */
	uint64_t window_ns;		/* duty-cycle window, 0: DUTY_DEFAULT_WINDOW_NS */
	uint64_t slice_ns;		/* fair-class base slice, 0: DISPATCH_DEFAULT_SLICE_NS */
	bool no_pin;			/* leave host CPU placement to the host */
	/*
	 * nr_vcpus free slots for VMs that join later (dispatch_slot.h): no
	 * group and no entity are made now, qos and vm_qos are not read.
	 */
	bool free_slots;
	const struct dispatch_vcpu_ops *ops;
	void *opaque;
	/*
	 * Signal that interrupts a vCPU thread's KVM_RUN (the kick signal). The
	 * vCPU thread arms a timer with it for the end of each on-part, so the
	 * duty cycle does not depend on how soon the host schedules the
	 * dispatcher thread; 0: rely on the dispatcher's kick alone.
	 */
	int kick_signal;
	/*
	 * The threads that pass the gate are not the vCPU threads (the host's
	 * proxies): a run's slice end is told to the vCPU's own thread
	 * (struct dispatch_run, run_end_ns), which arms its own timer for it, as a
	 * stand-alone vCPU thread arms its kick_signal timer. So a slice that
	 * ends on a stretched tick needs no dispatcher wakeup and no kick.
	 */
	bool remote_run_end;
	/* Called by the dispatcher thread after every 4th engine tick, unlocked. */
	void (*tick_hook)(void *opaque);
	/*
	 * Called first on the dispatcher thread (its seccomp filter); non-zero
	 * ends the thread at once, the callee having reported why. May be NULL.
	 */
	int (*thread_init)(void *opaque);
};

/* Builds the engine and admits every vCPU; NULL with err on a bad QoS. */
struct dispatch *dispatch_create(const struct dispatch_config *cfg, char *err, size_t errlen);
int dispatch_start(struct dispatch *d);		/* starts the dispatcher thread */
void dispatch_stop(struct dispatch *d);		/* releases every gate, joins the thread */
void dispatch_destroy(struct dispatch *d);

/*
 * DISPATCH_HANDED: the run was started by another thread's hand-off
 * (dispatch_vcpu_ops.hand_off) and may be over already; leave it as any.
 */
enum dispatch_verdict { DISPATCH_RUN, DISPATCH_STOP, DISPATCH_HANDED };

/* vCPU thread side. */
/*
 * DISPATCH_RUN with *steal_ns the time the engine held the vCPU out while
 * runnable since its last run: what the guest should see as steal (the
 * vCPU thread adds it to the guest's steal-time record before KVM_RUN).
 */
enum dispatch_verdict dispatch_vcpu_enter(struct dispatch *d, unsigned int vcpu,
					 uint64_t *steal_ns);
/* The same, with everything the run starts with (for a gate passed by a proxy). */
enum dispatch_verdict dispatch_vcpu_enter_run(struct dispatch *d, unsigned int vcpu,
					     struct dispatch_run *run);
/* Returns the vCPU whose run this leave handed off to (hand_off()), else -1. */
int dispatch_vcpu_leave(struct dispatch *d, unsigned int vcpu);
/* The same, with the accounts as the leave charged them in *after (active_ns, run_ns). */
int dispatch_vcpu_leave_run(struct dispatch *d, unsigned int vcpu, struct dispatch_run *after);

/* stop / cont: hold every vCPU outside KVM_RUN, or let them go again. */
void dispatch_pause(struct dispatch *d);
void dispatch_resume(struct dispatch *d);

/* Live QoS; 0 or a negative SCHED_E_* with err filled; a failure changes nothing. */
int dispatch_set_weight(struct dispatch *d, unsigned int vcpu, uint32_t weight, char *err,
			size_t errlen);
int dispatch_set_uclamp(struct dispatch *d, unsigned int vcpu, unsigned int min, unsigned int max,
			char *err, size_t errlen);
/* runtime_ns == 0 clears the reservation. */
int dispatch_set_reservation(struct dispatch *d, unsigned int vcpu, uint64_t runtime_ns,
			     uint64_t deadline_ns, uint64_t period_ns, char *err, size_t errlen);
/* quota_ns == 0 removes the cap (sched_set_cap()). */
int dispatch_set_cap(struct dispatch *d, unsigned int vcpu, uint64_t quota_ns, uint64_t period_ns,
		     char *err, size_t errlen);
/* cluster NULL or "" = any pCPU. */
int dispatch_set_cluster(struct dispatch *d, unsigned int vcpu, const char *cluster, char *err,
			 size_t errlen);
/*
 * The VM's groups: 0 is the VM's own (every vCPU is in it), 1.. its --group
 * groups in the order given. Weight and cap as the engine's
 * sched_group_set_weight() and sched_group_set_cap() (quota_ns 0 removes
 * the cap); -SCHED_E_NOENT for a group that does not exist.
 */
unsigned int dispatch_nr_groups(const struct dispatch *d);
int dispatch_set_group_weight(struct dispatch *d, unsigned int group, uint32_t weight, char *err,
			      size_t errlen);
int dispatch_set_group_cap(struct dispatch *d, unsigned int group, uint64_t quota_ns,
			   uint64_t period_ns, char *err, size_t errlen);

struct dispatch_group_report {
	struct sched_group_stats stats;	/* the engine's: weight, cap, run and throttled time */
	int parent;			/* group index, -1 for the VM's own */
	uint64_t cpu_time_ns;		/* its vCPUs' run_ns (as dispatch_vcpu_report), summed */
	unsigned int nr_vcpus;
	unsigned int vcpus[DISPATCH_MAX_VCPUS];	/* its vCPUs, ascending */
};

int dispatch_group_report(struct dispatch *d, unsigned int group, struct dispatch_group_report *r);

/* Guest hints (the scheduler hint device): yield, and yield_to -> 1 if boosted. */
void dispatch_yield(struct dispatch *d, unsigned int vcpu);
int dispatch_yield_to(struct dispatch *d, unsigned int vcpu, unsigned int target);
/* A guest performance request (CPPC desired_perf on the 0..1024 scale), 0 = none. */
int dispatch_set_perf_request(struct dispatch *d, unsigned int vcpu, unsigned int level);

struct dispatch_vcpu_report {
	struct sched_entity_info info;
	struct sched_entity_stats stats;
	pid_t tid;			/* host thread id, 0 before it first ran */
	bool in_run;			/* inside KVM_RUN now */
	int host_cpu;			/* host CPU of its pCPU, -1 if none */
	unsigned int level;		/* performance level of its pCPU */
	/*
	 * Measured time inside KVM_RUN while current: the vCPU executes at host
	 * speed (level 1024) then, so this is also the integral of delivered
	 * performance (APERF's base). active_ns is the time it was current and
	 * not halted, running or in its duty cycle's off-part (MPERF's base).
	 */
	uint64_t run_ns;
	uint64_t active_ns;
	uint64_t stolen_ns;		/* runnable, held out by the engine */
	/*
	 * The longest stretch of stolen_ns without a run between: what a
	 * guest's stall detectors would see of capvisor (a cap's throttling
	 * included).
	 */
	uint64_t held_max_ns;
	/*
	 * Runs that lasted to the end of their duty-cycle on-part, and the wall
	 * time from that end to the thread's leave, summed and at most: the
	 * kick latency the on-part debt pays back.
	 */
	uint64_t onparts;
	uint64_t onpart_late_ns;
	uint64_t onpart_late_max_ns;
	/*
	 * Windows whose on-part it could not run in: skipped to pay an
	 * over-run back, or over before its thread woke. Their share is in the
	 * debt either way.
	 */
	uint64_t onparts_missed;
	/*
	 * The engine's deadline misses (stats.nr_deadline_misses) as judged
	 * (dl_miss.h): those in whose period the host kernel kept the
	 * dispatcher thread runnable but off every CPU for at least the
	 * reservation's slack, the rest (the engine's), and the most such
	 * time seen in a missed period.
	 * A miss is judged at the dispatcher's next pass, so the two may
	 * trail the engine's count by one for a tick.
	 */
	uint64_t misses_host;
	uint64_t misses_engine;
	uint64_t miss_withheld_max_ns;
};

int dispatch_vcpu_report(struct dispatch *d, unsigned int vcpu, struct dispatch_vcpu_report *r);

/* A report's judged misses by the names query-vcpus and --stats-json give them. */
struct dispatch_count {
	const char *name;
	uint64_t value;
};

#define DISPATCH_MISS_COUNTS	3
void dispatch_miss_counts(const struct dispatch_vcpu_report *r,
			  struct dispatch_count out[DISPATCH_MISS_COUNTS]);
/* Just run_ns and active_ns of dispatch_vcpu_report(), brought up to now. */
void dispatch_vcpu_times(struct dispatch *d, unsigned int vcpu, uint64_t *active_ns,
			 uint64_t *run_ns);
/* What the dispatcher did: engine ticks, times its thread woke, hand-offs. */
struct dispatch_counters {
	uint64_t ticks, wakeups;
	uint64_t handoffs;	/* runs a leaving thread started (dispatch_vcpu_ops.hand_off) */
	bool hand_off;		/* hand-off in use (the ops have it, the kernel has futex_waitv) */
};

void dispatch_get_counters(struct dispatch *d, struct dispatch_counters *c);
/* The engine, for read-only queries under dispatch_lock()/dispatch_unlock(). */
struct sched *dispatch_engine(struct dispatch *d);
void dispatch_lock(struct dispatch *d);
void dispatch_unlock(struct dispatch *d);
uint64_t dispatch_now_ns(void);

#endif
