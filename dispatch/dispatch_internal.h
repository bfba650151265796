/* SPDX-License-Identifier: MIT */
/* Dispatcher internals shared by dispatch.c, dispatch_gate.c and dispatch_qos.c. */
#ifndef CAPVISOR_DISPATCH_INTERNAL_H
#define CAPVISOR_DISPATCH_INTERNAL_H

#include <pthread.h>
#include <time.h>

#include "dispatch/dispatch.h"
#include "dispatch/dl_miss.h"
#include "dispatch/dutycycle.h"

/*
 * A vCPU that KVM woke inside KVM_RUN on a duty-cycled pCPU and that ran
 * unseen for this long makes the dispatcher look every tick, for
 * DISPATCH_UNSEEN_POLL_FOR_NS after (halted_on_duty_cycle()): a guest busy
 * in bursts between halts. An idle guest's timer wakeups run far shorter
 * and keep the idle poll (a 1 ms look costs about 1% of a CPU).
 */
#define DISPATCH_DEFER_WAKES	8	/* more in one pass are woken at once */
#define DISPATCH_UNSEEN_LONG_NS		(250 * 1000)
#define DISPATCH_UNSEEN_POLL_FOR_NS	(1000ull * 1000 * 1000)

struct dvcpu {
	int id;				/* engine entity, -1 for a free slot */
	bool retiring;			/* its VM left: the gate says DISPATCH_STOP */
	bool held;			/* its VM is stopped: blocked, kept out of KVM_RUN */
	uint32_t gate_seq;		/* its gate thread sleeps on it (dispatch_wait.c) */
	bool at_gate;			/* that thread is asleep at the gate (atomic) */
	bool handed;			/* a run was handed to it: DISPATCH_HANDED next */
	pid_t tid;
	bool in_run;			/* between enter and leave */
	bool halted;			/* last observed `blocking` */
	bool halted_in_run;		/* seen halting in this run: what was left of it was declined */
	uint64_t woke_ns;		/* last seen waking from a halt */
	bool sanctioned;		/* entered as the engine's current, not as blocked */
	bool kicked;			/* kicked in this run: do not kick (or wake for it) again */
	int pinned_host;		/* host CPU its runs are on, -1 none */
	int thread_host;		/* host CPU its gate thread is pinned to, -1 none */
	uint64_t leave_at;		/* absolute end of its on-part, UINT64_MAX none */
	uint64_t slice_end;		/* its slice's end, which this run ends itself */
	int run_cpu;			/* pCPU of the current run, -1 if none */
	int home_cpu;			/* pCPU of its last sanctioned run, -1 none */
	uint64_t active_enter;		/* active_ns when the run began */
	clockid_t cpu_clock;		/* the vCPU thread's CPU-time clock */
	timer_t onpart_timer;		/* fires the kick signal at leave_at */
	bool has_timer;
	uint64_t cpu_acct;		/* its CPU time at the last accounting point */
	uint64_t cpu_enter;		/* its CPU time when the run began */
	uint64_t acct_ns;		/* last active/stolen accounting point */
	uint64_t run_ns, active_ns, stolen_ns;
	uint64_t stolen_told;		/* stolen_ns already added to the guest's steal time */
	uint64_t held_ns, held_max_ns;	/* the current and the longest stretch of stolen_ns */
	/* Runs that lasted to their on-part's end, and how late they left it (wall time). */
	uint64_t onparts, onpart_late_ns, onpart_late_max_ns;
	uint64_t onparts_missed;	/* windows it opened but could not run in */
	struct dl_miss_watch miss;	/* whose its deadline misses were (dl_miss.h) */
};

/*
 * The duty cycle belongs to the pCPU, not to whichever vCPU it runs: a
 * switch inside a window does not open a second on-part, and what one vCPU
 * over- or under-ran is settled by the next.
 */
struct dpcpu {
	struct duty_slot slot;
	uint64_t onpart_until;		/* end of the current window's on-part */
	uint64_t onpart_window;		/* index of that window, UINT64_MAX none */
	int64_t debt_ns;		/* target on-time minus measured on-time */
	unsigned int debt_level;	/* level the debt was built at */
	/*
	 * Run unseen by the gate (a vCPU KVM woke inside KVM_RUN, before the
	 * dispatcher looked), owed until later on-parts are shortened by it:
	 * unlike the debt, time the guest declines by halting does not pay it.
	 */
	uint64_t unseen_owed_ns;
	uint64_t unseen_paying_ns;	/* what the current on-part was shortened by for it */
	uint64_t unseen_long_ns;	/* when a run unseen lasted DISPATCH_UNSEEN_LONG_NS, 0 never */
	uint64_t phase_ns;		/* its windows start at epoch + phase */
	bool own_host;			/* alone on its host CPU: may re-phase */
	unsigned int host_cpu;
	int curr;			/* vCPU index or -1 */
	unsigned int level;
	uint64_t gen;
};

/* Below a whole host CPU: its vCPU runs in on-parts of each window (dutycycle.h). */
static inline bool dpcpu_duty_cycled(const struct dpcpu *pc)
{
	return pc->level < SCHED_CAPACITY_SCALE;
}

struct dispatch {
	pthread_mutex_t lock;
	pthread_cond_t tick_cond;	/* wakes the dispatcher thread early */
	pthread_t thread;
	bool thread_started, stopping, paused;
	bool full_speed_warned;		/* told once that the host has no util clamps */
	struct sched *sched;
	const struct dispatch_vcpu_ops *ops;
	void *opaque;
	void (*tick_hook)(void *opaque);
	int (*thread_init)(void *opaque);
	int kick_signal;
	bool remote_run_end;
	bool hand_off;			/* dispatch_vcpu_ops.hand_off in use */
	uint64_t tick_ns, window_ns, epoch_ns, next_tick, last_tick, next_hook;
	uint64_t tick_due;		/* the engine's next tick (next_wake) */
	uint64_t last_halt_ns;		/* a vCPU was last seen halting */
	struct dispatch_counters counters;
	bool no_pin;
	unsigned int nr_vcpus, nr_pcpus;
	struct dvcpu *v;
	struct dpcpu *p;
	int *vcpu_of_entity;		/* engine entity id -> vCPU index */
	int adding_vcpu;		/* the vCPU whose entity is being added, -1 none */
	/* The dispatcher thread's own schedstat, and its run_delay at the last pass. */
	int schedstat_fd;
	uint64_t delay_last, delay_last_ns;
	bool any_reservation;		/* a period began: read run_delay from then on */
	/*
	 * Wakeups of vCPU threads held back until the lock is released
	 * (dispatch_defer_wakes()): a thread woken while the waker still holds
	 * the lock would only block on it again, one more context switch.
	 */
	bool defer_wakes;
	unsigned int nr_deferred;
	unsigned int deferred[DISPATCH_DEFER_WAKES];
	unsigned int nr_groups;		/* the VM's own and its --group groups */
	int gid[QOS_MAX_GROUPS + 1];	/* engine group id of each (dispatch_group_report) */
};

/* dispatch_wait.c */
bool dispatch_hand_off_usable(const struct dispatch_vcpu_ops *ops);
void dispatch_gate_sleep(struct dispatch *d, unsigned int vcpu, uint64_t abs_ns);
void dispatch_gate_wake(struct dispatch *d, unsigned int vcpu);

/* dispatch.c */
void dispatch_wake_vcpu(struct dispatch *d, unsigned int vcpu);
void dispatch_defer_wakes(struct dispatch *d);
void dispatch_unlock_and_wake(struct dispatch *d);
bool dispatch_host_busy(struct dispatch *d, int host, unsigned int self);
void dispatch_wake_host(struct dispatch *d, int host);
void dispatch_apply(struct dispatch *d, uint64_t now);
void dispatch_apply_quiet(struct dispatch *d, uint64_t now);
bool dispatch_tick_may_stretch(struct dispatch *d);
void dispatch_account(struct dispatch *d, unsigned int vcpu, uint64_t now);
void dispatch_account_all(struct dispatch *d, uint64_t now);
void dispatch_settle_run(struct dispatch *d, unsigned int vcpu);
uint64_t dispatch_charge_cpu(struct dispatch *d, unsigned int vcpu);
uint64_t dispatch_thread_cpu(clockid_t clock);
int dispatch_vcpu_pcpu(struct dispatch *d, unsigned int vcpu, struct sched_entity_info *info);
uint64_t dispatch_vcpu_cpu_ns(struct dispatch *d, unsigned int vcpu);
void dispatch_cond_init(pthread_cond_t *cond);
void dispatch_vcpu_slot_init(struct dvcpu *v);
void dispatch_engine_event(void *opaque, const struct sched_event *ev);
void dispatch_judge_misses(struct dispatch *d, uint64_t now);
int dispatch_add_entity(struct dispatch *d, unsigned int i, const struct vcpu_qos *q, int gid,
			bool runnable, char *err, size_t errlen);

#endif
