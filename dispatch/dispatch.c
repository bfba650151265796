// SPDX-License-Identifier: MIT
/*
 * The dispatcher thread: ticks the engine, turns KVM's view of halted vCPUs
 * into engine wakeup/block events, and kicks vCPUs whose time is up.
 */
#include "dispatch/dispatch_internal.h"
#include "dispatch/dispatch_slot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/util.h"

#define DISPATCH_IDLE_POLL_NS	(10 * 1000 * 1000)	/* tick when every vCPU is blocked */
#define DISPATCH_NOHZ_TICKS	4	/* stretched tick period, in ticks */
#define DISPATCH_NOHZ_QUIET_NS	(20 * 1000 * 1000)	/* no halt for this long first */
#define DISPATCH_HOOK_TICKS	4	/* the tick hook (CPPC counters) runs at 250 Hz */
/*
 * How late a vCPU thread may start or stop against the duty cycle: a kick
 * or a wakeup reaches it in 30-150 us on PVM hosts (a few us on VMX/SVM).
 * With one tick (a vCPU waking inside KVM_RUN is seen at the next tick),
 * this is the latency the engine's admission allows for.
 */
#define DISPATCH_KICK_LATENCY_NS	(200 * 1000)

uint64_t dispatch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ns_from_timespec(&ts);
}

/* Every timed wait here is on a CLOCK_MONOTONIC deadline. */
void dispatch_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

static void build_topology(const struct host_spec *hs, struct sched_topology *topo)
{
	memset(topo, 0, sizeof(*topo));
	topo->nr_clusters = hs->nr_clusters;
	for (unsigned int c = 0; c < hs->nr_clusters; c++) {
		const struct host_cluster_spec *in = &hs->clusters[c];
		struct sched_cluster_desc *out = &topo->clusters[c];

		snprintf(out->name, sizeof(out->name), "%s", in->name);
		out->capacity = in->capacity;
		out->nr_cpus = in->count;
		out->nr_levels = in->nr_levels;
		memcpy(out->levels, in->levels, sizeof(in->levels[0]) * in->nr_levels);
		memcpy(out->mhz, in->mhz, sizeof(in->mhz[0]) * in->nr_levels);
	}
}

/* Slot i's entity in group gid; the BSP of a VM starts runnable, its APs blocked. */
int dispatch_add_entity(struct dispatch *d, unsigned int i, const struct vcpu_qos *q, int gid,
			bool runnable, char *err, size_t errlen)
{
	struct sched_entity_params p;
	char msg[512];
	int id, c;

	snprintf(msg, sizeof(msg), "vcpu%u", i);
	sched_entity_params_init(&p, msg);
	p.weight = q->weight;
	p.uclamp_min = q->uclamp_min;
	p.uclamp_max = q->uclamp_max;
	p.runnable = runnable;
	p.group = gid;
	if (q->cluster[0]) {
		c = sched_cluster_find(d->sched, q->cluster);
		if (c < 0) {
			snprintf(err, errlen, "vCPU %u: cluster '%s' does not exist", i, q->cluster);
			return -SCHED_E_NOENT;
		}
		sched_cluster_mask(d->sched, (unsigned int)c, &p.affinity);
	}
	if (q->has_reservation) {
		p.dl.runtime_ns = q->runtime_ns;
		p.dl.deadline_ns = q->deadline_ns;
		p.dl.period_ns = q->period_ns;
	}
	/* Its first period may begin inside: dispatch_engine_event() knows whose. */
	d->adding_vcpu = (int)i;
	id = sched_entity_add(d->sched, &p, dispatch_now_ns(), msg, sizeof(msg));
	d->adding_vcpu = -1;
	if (id < 0) {
		snprintf(err, errlen, "vCPU %u: %s", i, msg);
		return id;
	}
	d->vcpu_of_entity[id] = (int)i;
	d->v[i].id = id;
	if (q->has_cap && sched_set_cap(d->sched, id, q->cap_quota_ns, q->cap_period_ns,
					dispatch_now_ns(), msg, sizeof(msg))) {
		snprintf(err, errlen, "vCPU %u: %s", i, msg);
		return -SCHED_E_INVAL;
	}
	return 0;
}

/*
 * A slot as new: no entity, no thread seen. Its gate word keeps counting,
 * so that a thread still asleep on it is never woken into an equal value.
 */
void dispatch_vcpu_slot_init(struct dvcpu *v)
{
	uint32_t seq = v->gate_seq;

	memset(v, 0, sizeof(*v));
	v->gate_seq = seq;
	v->id = -1;
	v->pinned_host = -1;
	v->thread_host = -1;
	v->leave_at = UINT64_MAX;
	v->slice_end = UINT64_MAX;
	v->run_cpu = -1;
	v->home_cpu = -1;
}

/* Every vCPU a free slot: no entity yet. */
static int init_vcpus(struct dispatch *d, const struct dispatch_config *cfg)
{
	d->v = calloc(cfg->nr_vcpus ? cfg->nr_vcpus : 1, sizeof(*d->v));
	d->vcpu_of_entity = calloc(cfg->nr_vcpus ? cfg->nr_vcpus : 1, sizeof(int));
	if (!d->v || !d->vcpu_of_entity)
		return -SCHED_E_NOMEM;
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++) {
		struct dvcpu *v = &d->v[i];

		dispatch_vcpu_slot_init(v);
		d->vcpu_of_entity[i] = -1;
	}
	return 0;
}

/*
 * A stand-alone VM: its slots are all it has, admitted as capvisor host
 * admits a joined VM, so slot i is vCPU i and its groups are the ones
 * dispatch_nr_groups() and dispatch_set_group_*() number.
 */
static int admit_own_vm(struct dispatch *d, const struct dispatch_config *cfg, char *err,
			size_t errlen)
{
	struct vm_qos defaults;
	const struct vm_qos *vq = cfg->vm_qos;
	unsigned int *slots = calloc(cfg->nr_vcpus ? cfg->nr_vcpus : 1, sizeof(*slots));
	int rc;

	if (!slots)
		return -SCHED_E_NOMEM;
	if (!vq) {
		vm_qos_default(&defaults);
		vq = &defaults;
	}
	rc = dispatch_vm_admit(d, vq, cfg->qos, cfg->nr_vcpus, slots, d->gid, err, errlen);
	for (unsigned int i = 0; !rc && i < cfg->nr_vcpus; i++)
		if (slots[i] != i) {	/* free slots are taken lowest first */
			snprintf(err, errlen, "vCPU %u got slot %u", i, slots[i]);
			rc = -SCHED_E_INVAL;
		}
	if (!rc)
		d->nr_groups = 1 + vq->nr_groups;
	free(slots);
	return rc;
}

/* Where pCPU pc's on-parts start in the engine's time, modulo the window. */
static uint64_t supply_offset(const struct dispatch *d, const struct dpcpu *pc)
{
	return (d->epoch_ns + pc->phase_ns + pc->slot.offset_ns) % d->window_ns;
}

static int init_pcpus(struct dispatch *d, const struct dispatch_config *cfg)
{
	unsigned int cap[HOST_MAX_PCPUS];
	struct duty_slot slots[HOST_MAX_PCPUS];

	d->nr_pcpus = host_spec_nr_pcpus(cfg->host);
	d->p = calloc(d->nr_pcpus, sizeof(*d->p));
	if (!d->p)
		return -SCHED_E_NOMEM;
	for (unsigned int p = 0; p < d->nr_pcpus; p++)
		cap[p] = cfg->host->clusters[host_spec_cluster_of(cfg->host, p)].capacity;
	duty_plan(cap, cfg->host_cpu, d->nr_pcpus, d->window_ns, slots);
	for (unsigned int p = 0; p < d->nr_pcpus; p++) {
		d->p[p].slot = slots[p];
		d->p[p].host_cpu = cfg->host_cpu[p];
		d->p[p].curr = -1;
		d->p[p].gen = UINT64_MAX;
		d->p[p].onpart_window = UINT64_MAX;
		d->p[p].own_host = true;
		for (unsigned int q = 0; q < d->nr_pcpus; q++)
			if (q != p && cfg->host_cpu[q] == cfg->host_cpu[p])
				d->p[p].own_host = false;
	}
	return 0;
}

struct dispatch *dispatch_create(const struct dispatch_config *cfg, char *err, size_t errlen)
{
	struct sched_topology topo;
	struct sched_config scfg = { 0 };
	struct dispatch *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	dispatch_cond_init(&d->tick_cond);
	d->adding_vcpu = -1;
	d->schedstat_fd = -1;
	d->delay_last = DL_MISS_DELAY_UNKNOWN;
	d->ops = cfg->ops;
	d->opaque = cfg->opaque;
	d->tick_hook = cfg->tick_hook;
	d->thread_init = cfg->thread_init;
	d->kick_signal = cfg->kick_signal;
	d->remote_run_end = cfg->remote_run_end;
	d->nr_vcpus = cfg->nr_vcpus;
	d->tick_ns = cfg->tick_ns ? cfg->tick_ns : DISPATCH_DEFAULT_TICK_NS;
	d->window_ns = duty_window_ns(cfg->window_ns);
	d->no_pin = cfg->no_pin;
	/* Hand-off knows the host CPUs by the gate threads' pinning. */
	d->hand_off = !cfg->no_pin && dispatch_hand_off_usable(cfg->ops);
	build_topology(cfg->host, &topo);
	scfg.tick_ns = d->tick_ns;
	/* Admission keeps reservations for the supply the duty cycle really gives. */
	scfg.dl_supply_window_ns = d->window_ns;
	scfg.dl_supply_latency_ns = d->tick_ns + DISPATCH_KICK_LATENCY_NS;
	scfg.slice_ns = cfg->slice_ns ? cfg->slice_ns : DISPATCH_DEFAULT_SLICE_NS;
	scfg.event = dispatch_engine_event;
	scfg.event_opaque = d;
	d->epoch_ns = dispatch_now_ns();
	if (init_pcpus(d, cfg)) {
		snprintf(err, errlen, "out of memory");
		dispatch_destroy(d);
		return NULL;
	}
	/* ... and charges reservations what the on-parts deliver: their phases. */
	scfg.dl_supply_charge = true;
	for (unsigned int p = 0; p < d->nr_pcpus && p < SCHED_MAX_CPUS; p++)
		scfg.dl_supply_offset_ns[p] = supply_offset(d, &d->p[p]);
	d->sched = sched_create(&topo, &scfg, err, errlen);
	if (!d->sched)
		goto fail;
	if (init_vcpus(d, cfg)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* A stand-alone VM is admitted as capvisor host admits one that joins. */
	if (!cfg->free_slots && admit_own_vm(d, cfg, err, errlen))
		goto fail;
	return d;
fail:
	dispatch_destroy(d);
	return NULL;
}

void dispatch_destroy(struct dispatch *d)
{
	if (!d)
		return;
	if (d->thread_started)
		dispatch_stop(d);
	for (unsigned int i = 0; d->v && i < d->nr_vcpus; i++) {
		if (d->v[i].has_timer)
			timer_delete(d->v[i].onpart_timer);
	}
	if (d->schedstat_fd >= 0)
		close(d->schedstat_fd);
	sched_destroy(d->sched);
	free(d->v);
	free(d->p);
	free(d->vcpu_of_entity);
	pthread_cond_destroy(&d->tick_cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static void kick(struct dispatch *d, unsigned int vcpu)
{
	if (d->v[vcpu].kicked)
		return;
	d->v[vcpu].kicked = true;
	d->ops->kick(d->opaque, vcpu);
}

/*
 * An idle pCPU that gets work starts a new window now, so a vCPU waking from
 * idle runs at once for its on-part instead of waiting for the slot of a
 * window that began while nothing ran (a slow CPU is slow, it does not sleep
 * through its wakeups). Only for a pCPU alone on its host CPU: slots shared
 * with other pCPUs must stay in step. Only once the window of its last
 * on-part is over: a vCPU that woke every 14 ms got a fresh 5 ms on-part
 * each time in windows of 16 ms, 0.36 of the host CPU on a level of 0.31
 * while busy less than half the time.
 */
static void rephase(struct dispatch *d, struct dpcpu *pc)
{
	uint64_t now = dispatch_now_ns();
	uint64_t last_end = d->epoch_ns + pc->phase_ns + (pc->onpart_window + 1) * d->window_ns;

	if (!pc->own_host || (pc->onpart_window != UINT64_MAX && now < last_end))
		return;
	pc->phase_ns = (now - d->epoch_ns) % d->window_ns;
	pc->onpart_window = UINT64_MAX;
	sched_set_supply_offset(d->sched, (unsigned int)(pc - d->p), supply_offset(d, pc), now);
}

/* A pCPU changed hands or level: kick the old vCPU, wake the new one. */
static void apply_pcpu(struct dispatch *d, unsigned int p, const struct sched_cpu_state *st)
{
	struct dpcpu *pc = &d->p[p];
	int prev = pc->curr;
	int next = st->curr == SCHED_NONE ? -1 : d->vcpu_of_entity[st->curr];
	bool level_changed = pc->level != st->level;

	pc->gen = st->gen;
	pc->level = st->level;
	pc->curr = next;
	if (prev < 0 && next >= 0)
		rephase(d, pc);
	if (prev >= 0 && prev != next && d->v[prev].in_run && !d->v[prev].halted)
		kick(d, (unsigned int)prev);
	/*
	 * Woken while the vCPU it replaces is still in KVM_RUN, the thread
	 * would only find its host CPU busy and sleep again (a context switch
	 * for nothing, two with a proxy): that one's leave or halt wakes it
	 * (dispatch_wake_host()).
	 */
	if (next >= 0 && !dispatch_host_busy(d, (int)pc->host_cpu, (unsigned int)next))
		dispatch_wake_vcpu(d, (unsigned int)next);
	/*
	 * A level change moves (or creates) the end of the on-part: let the gate
	 * redo it. Exits handled on the spot do not pass the gate, so this kick
	 * is what makes a new level take effect.
	 */
	if (next >= 0 && next == prev && level_changed && d->v[next].in_run &&
	    !d->v[next].halted)
		kick(d, (unsigned int)next);
}

/*
 * Is another vCPU executing on host CPU `host` right now (inside KVM_RUN and
 * not halted)? A vCPU that the engine switched in waits for the one it
 * replaces to be out: two vCPU threads in KVM_RUN on one host CPU would
 * share it at the host scheduler's whim, and the old one would keep running
 * until the host let it see its kick.
 */
bool dispatch_host_busy(struct dispatch *d, int host, unsigned int self)
{
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		if (i != self && d->v[i].in_run && !d->v[i].halted && d->v[i].pinned_host == host)
			return true;
	return false;
}

/*
 * Wake a vCPU thread waiting at its gate, now or, deferred, at the unlock.
 * A vCPU in a run has no thread waiting to pass its gate: its own is in
 * KVM_RUN, or (a run handed to it) asleep until the run ends.
 */
void dispatch_wake_vcpu(struct dispatch *d, unsigned int vcpu)
{
	if (d->v[vcpu].in_run)
		return;
	if (d->defer_wakes) {
		for (unsigned int i = 0; i < d->nr_deferred; i++)
			if (d->deferred[i] == vcpu)
				return;
		if (d->nr_deferred < DISPATCH_DEFER_WAKES) {
			d->deferred[d->nr_deferred++] = vcpu;
			return;
		}
	}
	dispatch_gate_wake(d, vcpu);
}

/* From here to dispatch_unlock_and_wake(), wakeups wait for the unlock. */
void dispatch_defer_wakes(struct dispatch *d)
{
	d->defer_wakes = true;
	d->nr_deferred = 0;
}

/*
 * Release the lock, then wake: the woken thread finds it free. Safe as a
 * waiter re-checks its state under the lock before it waits.
 */
void dispatch_unlock_and_wake(struct dispatch *d)
{
	unsigned int wake[DISPATCH_DEFER_WAKES], n = d->nr_deferred;

	memcpy(wake, d->deferred, n * sizeof(wake[0]));
	d->defer_wakes = false;
	d->nr_deferred = 0;
	pthread_mutex_unlock(&d->lock);
	for (unsigned int i = 0; i < n; i++)
		dispatch_gate_wake(d, wake[i]);
}

/* Host CPU `host` may have become free: wake the vCPUs current on its pCPUs. */
void dispatch_wake_host(struct dispatch *d, int host)
{
	for (unsigned int p = 0; p < d->nr_pcpus; p++)
		if ((int)d->p[p].host_cpu == host && d->p[p].curr >= 0)
			dispatch_wake_vcpu(d, (unsigned int)d->p[p].curr);
}

/*
 * Make the vCPU threads match the engine's decisions at `now`, without
 * waking the dispatcher thread (a vCPU thread ending its own slice).
 */
void dispatch_apply_quiet(struct dispatch *d, uint64_t now)
{
	for (unsigned int p = 0; p < d->nr_pcpus; p++) {
		struct sched_cpu_state st;

		sched_cpu_curr(d->sched, p, &st);
		if (st.gen != d->p[p].gen)
			apply_pcpu(d, p, &st);
	}
	for (unsigned int i = 0; i < d->nr_vcpus; i++) {
		struct dvcpu *v = &d->v[i];
		struct sched_entity_info info;

		if (!v->in_run)
			continue;
		/*
		 * A halted vCPU leaves at its on-part's end too (its own timer
		 * does so on KVM): one KVM wakes after it would run unseen.
		 */
		if (v->halted) {
			if (v->sanctioned && v->leave_at <= now)
				kick(d, i);
			continue;
		}
		/*
		 * Running without the engine's say-so (woken while halted), current
		 * but not yet through the gate (it went in while blocked), or past
		 * its on-part.
		 */
		if (dispatch_vcpu_pcpu(d, i, &info) < 0 ? info.state != SCHED_BLOCKED :
		    !v->sanctioned || v->leave_at <= now)
			kick(d, i);
	}
}

/* The same, and the dispatcher thread replans its next wakeup. */
void dispatch_apply(struct dispatch *d, uint64_t now)
{
	dispatch_apply_quiet(d, now);
	pthread_cond_signal(&d->tick_cond);
}

/* Feed KVM's halted/running view of every vCPU in KVM_RUN to the engine. */
static void observe_vcpus(struct dispatch *d, uint64_t now)
{
	for (unsigned int i = 0; i < d->nr_vcpus; i++) {
		struct dvcpu *v = &d->v[i];
		struct sched_entity_info info;
		int h;

		/* A held vCPU stays blocked whatever its guest does. */
		if (!v->in_run || v->held)
			continue;
		h = d->ops->halted(d->opaque, i);
		if (h < 0)
			continue;
		if (h && !v->halted) {
			dispatch_settle_run(d, i);
			v->halted_in_run = true;
			dispatch_wake_host(d, v->pinned_host);
			d->last_halt_ns = now;
		}
		if (!h && v->halted)
			v->woke_ns = now;
		v->halted = h;
		sched_entity_info(d->sched, v->id, &info);
		if (h && info.state != SCHED_BLOCKED) {
			sched_block(d->sched, v->id, now);
		} else if (!h && info.state == SCHED_BLOCKED) {
			sched_wakeup(d->sched, v->id, now);
		}
	}
}

static bool any_runnable(struct dispatch *d)
{
	for (unsigned int i = 0; i < d->nr_vcpus; i++) {
		struct sched_entity_info info;

		if (d->v[i].id < 0)
			continue;
		sched_entity_info(d->sched, d->v[i].id, &info);
		if (info.state != SCHED_BLOCKED)
			return true;
	}
	return false;
}

/*
 * Whether the tick may stretch to every DISPATCH_NOHZ_TICKS ticks, waking
 * in between only for the engine's own events (a slice that ends on a
 * contended pCPU: sched_next_event()). Like the kernel's nohz_full with
 * hrtick; on a VM host every timer wakeup is an exit (~20 us). Not while:
 * - a vCPU is blocked: it halts inside KVM_RUN and, woken there by its
 *   interrupt, would run unseen until the next poll;
 * - a pCPU is duty-cycled: its CPU-time debt needs halts seen at once;
 * - a reservation or a cap runs: CBS and quota accounting stay at tick
 *   precision, and a vCPU out of quota is not blocked but must be woken
 *   at its period's end;
 * - a vCPU halted in the last DISPATCH_NOHZ_QUIET_NS: a vCPU that halts is
 *   seen up to the stretched period late (its halted time counted as
 *   active, a vCPU waiting for its pCPU kept waiting), so only workloads
 *   that have stopped halting get the stretched tick.
 */
bool dispatch_tick_may_stretch(struct dispatch *d)
{
	for (unsigned int i = 0; i < d->nr_vcpus; i++) {
		struct sched_entity_info info;

		if (d->v[i].id < 0)
			continue;
		sched_entity_info(d->sched, d->v[i].id, &info);
		if (d->v[i].halted || info.state == SCHED_BLOCKED || info.deadline ||
		    info.cap_period_ns)
			return false;
	}
	if (d->last_halt_ns + DISPATCH_NOHZ_QUIET_NS > d->last_tick)
		return false;
	for (unsigned int p = 0; p < d->nr_pcpus; p++)
		if (d->p[p].curr >= 0 && dpcpu_duty_cycled(&d->p[p]))
			return false;
	return true;
}

/*
 * The earliest slice end or CBS event the engine has on a pCPU whose
 * current vCPU does not end its slice itself (dispatch_vcpu_enter()).
 */
static uint64_t next_engine_event(struct dispatch *d)
{
	uint64_t t = UINT64_MAX;

	for (unsigned int p = 0; p < d->nr_pcpus; p++) {
		int curr = d->p[p].curr;
		uint64_t e;

		if (curr >= 0 && d->v[curr].in_run && d->v[curr].slice_end != UINT64_MAX)
			continue;
		e = sched_next_event(d->sched, p);
		if (e < t)
			t = e;
	}
	return t;
}

/*
 * Is a vCPU halted inside KVM_RUN whose pCPU is duty-cycled, and has one
 * there lately run long unseen? KVM wakes it there by itself (the
 * in-kernel LAPIC), unseen by the gate, and it runs at full speed until
 * the dispatcher looks: at the idle poll's pace a little vCPU's wakeups
 * ran as fast as a big one's. What it runs so is charged to its pCPU
 * (dispatch_vcpu_leave()), and looking every tick keeps it short.
 */
static bool halted_on_duty_cycle(struct dispatch *d, uint64_t now)
{
	for (unsigned int i = 0; i < d->nr_vcpus; i++) {
		const struct dvcpu *v = &d->v[i];
		const struct dpcpu *pc;

		if (!v->in_run || !v->halted || v->home_cpu < 0)
			continue;
		pc = &d->p[v->home_cpu];
		if (dpcpu_duty_cycled(pc) && pc->unseen_long_ns &&
		    now - pc->unseen_long_ns < DISPATCH_UNSEEN_POLL_FOR_NS)
			return true;
	}
	return false;
}

/* When to wake next; sets tick_due, when the engine's next tick is due. */
static uint64_t next_wake(struct dispatch *d, uint64_t now)
{
	uint64_t t = d->tick_due = d->next_tick;

	if (!any_runnable(d)) {
		t = now + (halted_on_duty_cycle(d, now) ? d->tick_ns : DISPATCH_IDLE_POLL_NS);
	} else if (dispatch_tick_may_stretch(d)) {
		uint64_t ev = next_engine_event(d);

		/* An event the last tick did not clear waits for a full tick: no hot loop. */
		if (ev <= d->last_tick)
			ev = d->last_tick + d->tick_ns;
		t = d->last_tick + DISPATCH_NOHZ_TICKS * d->tick_ns;
		if (ev < t)
			t = ev;
		d->tick_due = t;
	}
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		if (d->v[i].in_run && !d->v[i].kicked && d->v[i].leave_at < t)
			t = d->v[i].leave_at;
	return t;
}

static void timed_wait(struct dispatch *d, uint64_t abs_ns)
{
	struct timespec ts = timespec_from_ns(abs_ns);

	pthread_cond_timedwait(&d->tick_cond, &d->lock, &ts);
	d->counters.wakeups++;
}

static void *dispatch_thread(void *arg)
{
	struct dispatch *d = arg;

	/* Precise wakeups: the duty cycle's on-parts end on this thread's timers. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pthread_setname_np(pthread_self(), "dispatch");
	/* Before its seccomp filter, which allows pread but no open (dispatch_miss.c). */
	d->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (d->thread_init && d->thread_init(d->opaque))
		return NULL;
	pthread_mutex_lock(&d->lock);
	d->next_tick = dispatch_now_ns();
	while (!d->stopping) {
		uint64_t now = dispatch_now_ns();

		if (!d->paused) {
			bool ticked = now >= d->tick_due;

			dispatch_account_all(d, now);
			observe_vcpus(d, now);
			if (ticked) {
				sched_tick(d->sched, now);
				d->counters.ticks++;
				d->last_tick = now;
				d->tick_due = UINT64_MAX;	/* until next_wake() plans one */
				while (d->next_tick <= now)
					d->next_tick += d->tick_ns;
			}
			dispatch_judge_misses(d, now);
			dispatch_apply(d, now);
			/* The hook (CPPC counters) every 4 ticks' time: 250 Hz is plenty. */
			if (ticked && d->tick_hook && now >= d->next_hook) {
				d->next_hook = now + DISPATCH_HOOK_TICKS * d->tick_ns;
				pthread_mutex_unlock(&d->lock);
				d->tick_hook(d->opaque);
				pthread_mutex_lock(&d->lock);
				continue;
			}
		}
		timed_wait(d, next_wake(d, now));
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int dispatch_start(struct dispatch *d)
{
	uint64_t now = dispatch_now_ns();
	int rc;

	/* Accounting starts now, not at the epoch of the monotonic clock. */
	for (unsigned int i = 0; i < d->nr_vcpus; i++)
		d->v[i].acct_ns = now;
	rc = pthread_create(&d->thread, NULL, dispatch_thread, d);
	if (rc)
		return -rc;
	d->thread_started = true;
	return 0;
}

void dispatch_stop(struct dispatch *d)
{
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	for (unsigned int i = 0; i < d->nr_vcpus; i++) {
		dispatch_gate_wake(d, i);
		if (d->v[i].in_run)
			d->ops->kick(d->opaque, i);
	}
	pthread_cond_broadcast(&d->tick_cond);
	pthread_mutex_unlock(&d->lock);
	if (d->thread_started) {
		pthread_join(d->thread, NULL);
		d->thread_started = false;
	}
}
