// SPDX-License-Identifier: MIT
/*
 * The gate every vCPU thread passes before KVM_RUN: it lets the vCPU in only
 * while the engine has it current on a pCPU and that pCPU's duty cycle is in
 * its on-part, and otherwise waits outside KVM_RUN using no CPU.
 */
#include "dispatch/dispatch_internal.h"
#include "dispatch/kernelsched.h"
#include "util/log.h"
#include "util/thread_timer.h"
#include "util/util.h"

#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>


/* The vCPU thread's own timer for the end of its on-parts (first entry). */
static void create_onpart_timer(struct dispatch *d, struct dvcpu *v)
{
	if (d->kick_signal)
		v->has_timer = thread_timer_create(&v->onpart_timer, d->kick_signal);
}

/*
 * Arm (or, with UINT64_MAX, disarm) the on-part timer. The thread runs its
 * vCPU when the timer fires, so the signal interrupts KVM_RUN at once; the
 * dispatcher's kick at the same deadline remains the guarantee.
 */
static void arm_onpart_timer(struct dvcpu *v, uint64_t abs_ns)
{
	if (v->has_timer)
		thread_timer_arm(v->onpart_timer, abs_ns);
}

/*
 * The duty cycle hands out host CPU time; host frequency scaling must not
 * shrink what that time is worth (kernelsched_request_full_speed()).
 */
static void ask_full_speed(struct dispatch *d)
{
	int rc = kernelsched_request_full_speed();

	if (rc && !d->full_speed_warned) {
		d->full_speed_warned = true;
		pr_info("host util clamps unavailable (%s): on hosts that scale CPU frequency "
			"by load, duty-cycled vCPUs may run slower than their capacity",
			strerror(-rc));
	}
}

/*
 * The vCPU's runs go to host CPU `host`: pin the calling thread there (it
 * wakes where its vCPU runs). pinned_host is where the vCPU's runs are,
 * which a hand-off sets without the thread (hand_off()).
 */
static void pin_to(struct dispatch *d, struct dvcpu *v, unsigned int host)
{
	cpu_set_t set;

	if (d->no_pin)
		return;
	v->pinned_host = (int)host;
	if (v->thread_host == (int)host)
		return;
	CPU_ZERO(&set);
	CPU_SET(host, &set);
	if (!pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		v->thread_host = (int)host;
}

/*
 * The shortened on-part ended: paid only if the vCPU ran to its end, busy
 * (an on-part it halted in cost the guest nothing).
 */
static void paid_unseen(struct dpcpu *pc, bool to_the_end)
{
	uint64_t pay = to_the_end ? pc->unseen_paying_ns : 0;

	pc->unseen_owed_ns -= pay < pc->unseen_owed_ns ? pay : pc->unseen_owed_ns;
	pc->unseen_paying_ns = 0;
}

/* An on-part of on_ns, shortened by what the pCPU owes for unseen runs (or skipped). */
static uint64_t pay_unseen(struct dpcpu *pc, uint64_t on_ns)
{
	uint64_t pay = pc->unseen_owed_ns < on_ns ? pc->unseen_owed_ns : on_ns;

	if (on_ns - pay < DUTY_MIN_ON_NS)
		pay = on_ns;
	pc->unseen_paying_ns = pay;
	/* Skipped: a vCPU that wants to run opened the window, and is denied all of it. */
	if (pay == on_ns)
		paid_unseen(pc, true);
	return on_ns - pay;
}

/*
 * On-time for a new on-part of pCPU p: the level's share of the window,
 * corrected by what earlier on-parts over- or under-ran (kick and wakeup
 * latencies, a vCPU that halted early), so that the delivered share
 * converges on the level whatever those latencies are.
 *
 * An over-run is paid back in full: the next on-part ends early by it,
 * which is ending each on-part early by the last measured kick latency.
 * Where that leaves less than DUTY_MIN_ON_NS (a kick slower than the
 * on-part, as a signal to a thread inside a nested guest can be), the
 * on-part is skipped (0) and the window's share pays the debt, for as many
 * windows as it takes (up to DUTY_MAX_OVERRUN_DEBT_NS): an over-run is time
 * the guest ran, whatever the level is now. Credit (an under-run)
 * lengthens an on-part by at most half of it and is kept only within one
 * window and one level (settle_debt()), so time the host took is made up
 * over a few windows, never in a burst above the level.
 */
static uint64_t corrected_on_ns(struct dispatch *d, unsigned int p)
{
	struct dpcpu *pc = &d->p[p];
	int64_t base = (int64_t)duty_on_ns(d->window_ns, pc->level);
	int64_t debt;

	if (pc->debt_level != pc->level) {
		if (pc->debt_ns > 0)
			pc->debt_ns = 0;
		pc->debt_level = pc->level;
	}
	if (base >= (int64_t)d->window_ns)
		return (uint64_t)base;	/* never stopped: nothing to correct */
	debt = pc->debt_ns;
	if (debt > base / 2)
		debt = base / 2;
	if (debt < 0 && base + debt < (int64_t)DUTY_MIN_ON_NS)
		return 0;
	return pay_unseen(pc, (uint64_t)(base + debt));
}

/*
 * The share of a window that v opens as due to it: all of it, but for the
 * part of its on-part that passed while v was halted (it woke after the
 * on-part began). That part was declined, not taken by the host: credited,
 * it lengthened the next on-parts, and a guest busy 6 of every 14 ms ran
 * 0.16 of the host CPU on a level of 0.31.
 */
static uint64_t share_due(const struct dvcpu *v, const struct dpcpu *pc, uint64_t window_start,
			  uint64_t share)
{
	uint64_t start = window_start + pc->slot.offset_ns;

	if (v->woke_ns <= start)
		return share;
	return v->woke_ns - start < share ? share - (v->woke_ns - start) : 0;
}

/*
 * Returns true when v may run now on pCPU p, with v->leave_at set; else *wake.
 *
 * The first vCPU to reach the gate in a window after the pCPU's slot began,
 * and within its on-part as planned without the correction, opens the
 * window: the level's share of it becomes due (the debt) and the on-part
 * runs from the slot's start for its corrected length (nothing when
 * corrected_on_ns() skips it). A thread that wakes after a shortened
 * on-part has already ended still opens the window, so the share it could
 * not use is credited, not lost.
 */
static bool may_run(struct dispatch *d, struct dvcpu *v, unsigned int p, uint64_t now,
		    uint64_t *wake)
{
	struct dpcpu *pc = &d->p[p];
	uint64_t base = d->epoch_ns + pc->phase_ns;
	uint64_t rel = now - base, window = rel / d->window_ns, until;
	uint64_t share = duty_on_ns(d->window_ns, pc->level), on, plan;

	if (pc->onpart_window != window) {
		on = corrected_on_ns(d, p);
		plan = on > share ? on : share;
		if (!duty_may_run(&pc->slot, d->window_ns, plan, rel, &until)) {
			*wake = until == DUTY_ALWAYS ? UINT64_MAX : base + until;
			return false;
		}
		if (until == DUTY_ALWAYS) {
			v->leave_at = UINT64_MAX;
			pc->debt_ns = 0;
			return true;
		}
		pc->onpart_window = window;
		pc->onpart_until = 0;
		if (on)
			pc->onpart_until = base + window * d->window_ns + pc->slot.offset_ns +
					   (on < pc->slot.room_ns ? on : pc->slot.room_ns);
		pc->debt_ns += (int64_t)share_due(v, pc, base + window * d->window_ns, share);
		if (now >= pc->onpart_until)
			v->onparts_missed++;
	}
	/* Inside the pCPU's current on-part (a first entry, a re-entry, a switch within it). */
	if (now < pc->onpart_until) {
		v->leave_at = pc->onpart_until;
		return true;
	}
	*wake = base + (window + 1) * d->window_ns + pc->slot.offset_ns;
	return false;
}

/*
 * Charge a run against its pCPU's on-time target. Credit stays within one
 * window, so a long stall (a vCPU held up in the host) is not made up in a
 * burst; an over-run is owed until paid (corrected_on_ns()). A run in
 * which the guest halted (declined) earns no credit at all: the rest of
 * its on-part, and the windows it slept through, were declined, not taken
 * by the host, and an on-part lengthened by them would run faster than the
 * level while the guest is busy (a half-busy guest's APERF/MPERF read up to
 * 1.0 on a level of 0.5).
 */
static void settle_debt(struct dispatch *d, unsigned int p, uint64_t ran, uint64_t now,
			bool declined)
{
	int64_t credit_max = declined ? 0 : (int64_t)d->window_ns;
	int64_t owed_max = (int64_t)DUTY_MAX_OVERRUN_DEBT_NS;
	struct dpcpu *pc = &d->p[p];
	uint64_t window = (now - d->epoch_ns - pc->phase_ns) / d->window_ns;

	/*
	 * A run that left windows after its on-part's own (a thread the host
	 * held past the kick) had the pCPU through the windows between: their
	 * shares are due too, or the over-run would be paid back with more
	 * than it took. The window it left in is used up by it.
	 */
	if (!declined && window > pc->onpart_window) {
		pc->debt_ns += (int64_t)((window - pc->onpart_window) *
					 duty_on_ns(d->window_ns, pc->level));
		pc->onpart_window = window;
		pc->onpart_until = 0;
	}
	pc->debt_ns -= (int64_t)ran;
	if (pc->debt_ns < -owed_max)
		pc->debt_ns = -owed_max;
	if (pc->debt_ns > credit_max)
		pc->debt_ns = credit_max;
}

/*
 * A run the vCPU went into blocked (halted) and in which KVM woke it: what
 * it ran is its own CPU time like any other (run and active time: it ran
 * at full speed, unseen), and on a duty-cycled pCPU owed by the pCPU it
 * last ran on until the next on-parts pay it (pay_unseen()).
 */
static void settle_unsanctioned(struct dispatch *d, struct dvcpu *v, unsigned int vcpu,
				uint64_t now)
{
	uint64_t ran = dispatch_charge_cpu(d, vcpu);	/* from entry: unsanctioned runs settle only here */
	uint64_t active = v->active_ns - v->active_enter;

	if (!ran)
		return;
	if (ran > active)
		v->active_ns += ran - active;
	if (v->home_cpu >= 0 && dpcpu_duty_cycled(&d->p[v->home_cpu])) {
		struct dpcpu *pc = &d->p[v->home_cpu];

		pc->unseen_owed_ns += ran;
		if (ran >= DISPATCH_UNSEEN_LONG_NS)
			pc->unseen_long_ns = now;
		if (pc->unseen_owed_ns > DUTY_MAX_OVERRUN_DEBT_NS)
			pc->unseen_owed_ns = DUTY_MAX_OVERRUN_DEBT_NS;
	}
}

enum gate_pass { GATE_WAIT, GATE_RUN, GATE_BLOCKED_RUN };

/*
 * May v enter KVM_RUN now? A blocked vCPU always may (it waits for its
 * interrupt inside KVM_RUN, asleep in the kernel); a current one when its
 * host CPU is free and its pCPU's duty cycle lets it (*p its pCPU). Else
 * GATE_WAIT until *wake, or until someone wakes it (*p >= 0: the vCPU it
 * replaces is still in KVM_RUN, whose leave wakes it).
 */
static enum gate_pass gate_try(struct dispatch *d, unsigned int vcpu, uint64_t now, int *p,
			       uint64_t *wake)
{
	struct sched_entity_info info = { .state = SCHED_RUNNABLE };
	struct dvcpu *v = &d->v[vcpu];
	bool held = d->paused || v->held;

	*wake = UINT64_MAX;
	*p = held ? -1 : dispatch_vcpu_pcpu(d, vcpu, &info);
	if (*p < 0)
		return !held && info.state == SCHED_BLOCKED ? GATE_BLOCKED_RUN : GATE_WAIT;
	if (dispatch_host_busy(d, (int)d->p[*p].host_cpu, vcpu))
		return GATE_WAIT;
	return may_run(d, v, (unsigned int)*p, now, wake) ? GATE_RUN : GATE_WAIT;
}

/* The run gate_try() let in begins: what the engine and the vCPU's thread need. */
static void begin_run(struct dispatch *d, unsigned int vcpu, int p, struct dispatch_run *run)
{
	struct dvcpu *v = &d->v[vcpu];
	uint64_t now = dispatch_now_ns();

	v->sanctioned = p >= 0;
	v->run_cpu = p;
	if (p >= 0) {
		v->home_cpu = p;
		v->halted = false;
	} else {
		v->leave_at = UINT64_MAX;
	}
	dispatch_account(d, vcpu, now);
	run->steal_ns = v->stolen_ns - v->stolen_told;
	v->stolen_told = v->stolen_ns;
	v->cpu_acct = dispatch_vcpu_cpu_ns(d, vcpu);
	v->cpu_enter = v->cpu_acct;
	v->active_enter = v->active_ns;
	v->halted_in_run = false;
	v->in_run = true;
	v->kicked = false;
	/* The dispatcher thread must wake at leave_at to end the on-part. */
	if (v->leave_at != UINT64_MAX)
		pthread_cond_signal(&d->tick_cond);
	/*
	 * With the tick stretched, a full-speed vCPU ends its own slice: its
	 * timer stops the run where the engine's slice ends and the thread
	 * makes the pick on its own CPU at leave, like the kernel's hrtick (no
	 * IPI from the dispatcher, which does not wake for it). Only where a
	 * timer will: without one (and not told to the vCPU's thread) the
	 * dispatcher must wake for the slice's end, or the run would last to
	 * the stretched tick whatever the slice.
	 */
	v->slice_end = UINT64_MAX;
	if (v->leave_at == UINT64_MAX && v->sanctioned && (v->has_timer || d->remote_run_end) &&
	    dispatch_tick_may_stretch(d))
		v->slice_end = sched_next_event(d->sched, (unsigned int)v->run_cpu);
	arm_onpart_timer(v, v->leave_at < v->slice_end ? v->leave_at : v->slice_end);
	run->active_ns = v->active_ns;
	run->run_ns = v->run_ns;
	run->run_end_ns = d->remote_run_end ? v->slice_end : UINT64_MAX;
	run->host_cpu = v->pinned_host;
	run->blocked = p < 0;
}

/* The first time a thread passes this vCPU's gate: it is the vCPU's thread. */
static void first_entry(struct dispatch *d, struct dvcpu *v)
{
	v->tid = gettid();
	pthread_getcpuclockid(pthread_self(), &v->cpu_clock);
	create_onpart_timer(d, v);
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	ask_full_speed(d);
}

/* A run another thread handed to v (hand_off()): take it as passed. */
static enum dispatch_verdict take_handed(struct dispatch *d, struct dvcpu *v)
{
	__atomic_store_n(&v->handed, false, __ATOMIC_RELAXED);
	if (v->pinned_host >= 0)
		pin_to(d, v, (unsigned int)v->pinned_host);
	pthread_mutex_unlock(&d->lock);
	return DISPATCH_HANDED;
}

enum dispatch_verdict dispatch_vcpu_enter_run(struct dispatch *d, unsigned int vcpu,
					     struct dispatch_run *run)
{
	struct dvcpu *v = &d->v[vcpu];
	enum gate_pass pass;
	uint64_t wake;
	int p;

	pthread_mutex_lock(&d->lock);
	if (!v->tid)
		first_entry(d, v);
	for (;;) {
		if (__atomic_load_n(&v->handed, __ATOMIC_RELAXED))
			return take_handed(d, v);
		if (d->stopping || v->retiring || v->id < 0) {
			pthread_mutex_unlock(&d->lock);
			return DISPATCH_STOP;
		}
		pass = gate_try(d, vcpu, dispatch_now_ns(), &p, &wake);
		if (p >= 0)
			pin_to(d, v, d->p[p].host_cpu);
		if (pass != GATE_WAIT)
			break;
		dispatch_gate_sleep(d, vcpu, wake);
	}
	begin_run(d, vcpu, pass == GATE_RUN ? p : -1, run);
	pthread_mutex_unlock(&d->lock);
	return DISPATCH_RUN;
}

enum dispatch_verdict dispatch_vcpu_enter(struct dispatch *d, unsigned int vcpu,
					 uint64_t *steal_ns)
{
	struct dispatch_run run;
	enum dispatch_verdict verdict = dispatch_vcpu_enter_run(d, vcpu, &run);

	*steal_ns = verdict == DISPATCH_RUN ? run.steal_ns : 0;
	return verdict;
}

/*
 * A run that was to end its own slice left: when the slice is over, tick
 * this pCPU and switch here (the next vCPU is on this host CPU, so waking
 * it is local); otherwise just stop the timer.
 */
static void end_own_slice(struct dispatch *d, struct dvcpu *v, uint64_t now)
{
	uint64_t end = v->slice_end;

	v->slice_end = UINT64_MAX;
	arm_onpart_timer(v, UINT64_MAX);
	if (now < end || !v->sanctioned || v->run_cpu < 0 || d->paused)
		return;
	dispatch_account_all(d, now);
	sched_tick_cpu(d->sched, (unsigned int)v->run_cpu, now);
	dispatch_apply_quiet(d, now);
}

/* A run that lasted to its on-part's end: how late the thread got out (kick latency). */
static void count_onpart_end(struct dvcpu *v, uint64_t now)
{
	uint64_t late;

	if (!v->sanctioned || v->leave_at == UINT64_MAX || now < v->leave_at)
		return;
	late = now - v->leave_at;
	v->onparts++;
	v->onpart_late_ns += late;
	if (late > v->onpart_late_max_ns)
		v->onpart_late_max_ns = late;
}

/*
 * Pass the gate for `to` on its thread's behalf, if it sleeps there and the
 * gate lets it in now on host CPU `host`, which `from` has just left.
 */
static bool hand_off_to(struct dispatch *d, unsigned int from, unsigned int to, int host)
{
	struct sched_entity_info info;
	struct dvcpu *v = &d->v[to];
	struct dispatch_run run;
	uint64_t wake;
	int p;

	if (to == from || !v->tid || v->in_run || v->retiring || v->held || v->id < 0 ||
	    !__atomic_load_n(&v->at_gate, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&v->handed, __ATOMIC_RELAXED))
		return false;
	p = dispatch_vcpu_pcpu(d, to, &info);
	if (p < 0 || (int)d->p[p].host_cpu != host)
		return false;
	if (gate_try(d, to, dispatch_now_ns(), &p, &wake) != GATE_RUN)
		return false;
	v->pinned_host = host;
	begin_run(d, to, p, &run);
	__atomic_store_n(&v->handed, true, __ATOMIC_RELEASE);
	d->counters.handoffs++;
	d->ops->hand_off(d->opaque, from, to, &run);
	return true;
}

/*
 * Hand-off (dispatch_vcpu_ops.hand_off): the thread that leaves a run
 * starts the next one on the same host CPU itself, rather than waking the
 * next vCPU's gate thread to do it. With proxies (capvisor host) a switch
 * is then the VM's thread waking its proxy and that proxy waking the next
 * VM's thread: two context switches, where waking the next proxy made
 * three. Only for the vCPUs this leave was about to wake (the engine's new
 * current on that host CPU); returns the one handed to, or -1.
 */
static int hand_off(struct dispatch *d, unsigned int from)
{
	int host = d->v[from].pinned_host;

	if (!d->hand_off || !d->v[from].sanctioned || host < 0 || d->stopping || d->paused)
		return -1;
	for (unsigned int i = 0; i < d->nr_deferred; i++) {
		unsigned int to = d->deferred[i];

		if (hand_off_to(d, from, to, host)) {
			d->deferred[i] = d->deferred[--d->nr_deferred];
			return (int)to;
		}
	}
	return -1;
}

int dispatch_vcpu_leave(struct dispatch *d, unsigned int vcpu)
{
	return dispatch_vcpu_leave_run(d, vcpu, NULL);
}

int dispatch_vcpu_leave_run(struct dispatch *d, unsigned int vcpu, struct dispatch_run *after)
{
	struct dvcpu *v = &d->v[vcpu];
	uint64_t now;
	int next;

	pthread_mutex_lock(&d->lock);
	dispatch_defer_wakes(d);
	now = dispatch_now_ns();
	dispatch_account(d, vcpu, now);
	dispatch_settle_run(d, vcpu);
	count_onpart_end(v, now);
	/*
	 * The debt is settled in the thread's CPU time, not wall time: a level
	 * promises that share of a host CPU, and the host may take part of an
	 * on-part (kick delivery, other processes) that the next ones make up.
	 */
	if (v->sanctioned && v->leave_at != UINT64_MAX && v->run_cpu >= 0) {
		settle_debt(d, (unsigned int)v->run_cpu, v->cpu_acct - v->cpu_enter, now,
			    v->halted_in_run);
		paid_unseen(&d->p[v->run_cpu], now >= v->leave_at && !v->halted_in_run);
	} else if (!v->sanctioned) {
		settle_unsanctioned(d, v, vcpu, now);
	}
	v->in_run = false;
	if (v->slice_end != UINT64_MAX)
		end_own_slice(d, v, now);
	if (!v->halted)
		dispatch_wake_host(d, v->pinned_host);
	next = hand_off(d, vcpu);
	if (after) {
		after->active_ns = v->active_ns;
		after->run_ns = v->run_ns;
	}
	dispatch_unlock_and_wake(d);
	return next;
}
