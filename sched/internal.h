/* SPDX-License-Identifier: MIT */
/*
 * Engine internals shared by the sched/ files. Not part of the API.
 *
 * Layout follows the kernel: one runqueue per pCPU (struct sched_rq) with a
 * fair part (EEVDF tree) and a deadline part (EDF tree); classes behind
 * struct sched_class; uclamp, PELT, balancing and performance selection in
 * their own files.
 */
#ifndef CAPVISOR_SCHED_INTERNAL_H
#define CAPVISOR_SCHED_INTERNAL_H

#include "sched/queue.h"
#include "sched/sched.h"
#include "sched/vruntime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSEC_PER_USEC	1000ull
#define NSEC_PER_MSEC	1000000ull
#define NSEC_PER_SEC	1000000000ull
#define BW_SHIFT	20		/* bandwidth fixed point, like the kernel */
#define BW_UNIT		(1ull << BW_SHIFT)
#define UCLAMP_BUCKETS	5
#define UCLAMP_BUCKET_DELTA	205	/* round(1024 / 5) */
#define SCHED_DOMAINS	2		/* cluster level, then the whole host */

/* --------------------------------------------------------------- PELT */

#include "sched/pelt.h"

/* --------------------------------------------------------------- entity */

/*
 * Run time against a quota per period (group.c: a group's cap, an
 * entity's share of one); period 0 = none.
 */
struct cap_acct {
	uint64_t quota, period;
	uint64_t used, index;		/* run time in period number index */
	uint64_t prev;			/* run time in period index - 1 (group caps) */
};

/*
 * An entity's share of a binding group cap (group.c): quota tokens per
 * period, kept up to `depth`, so that an entity that waited (a light one
 * runs a slice now and then) can spend them when it runs. period 0 = none.
 */
struct share_bucket {
	uint64_t quota, period, depth;
	int64_t tokens;			/* at the start of period number index */
	uint64_t index;
};

enum uclamp_id { UCLAMP_MIN, UCLAMP_MAX, UCLAMP_CNT };

struct sched_class;
struct sched;

/*
 * Field order is for the cache: what the tick touches for the running
 * entity fits the first two lines (entities are cache-line aligned), what
 * the pick and a switch touch comes next, configuration and the big
 * statistics block (with its latency histogram) last.
 */
struct sched_entity {
	const struct sched_class *class;
	int id;
	enum sched_state state;
	int cpu;			/* rq it is on or was last on; -1 never placed */
	bool on_rq;			/* counted on its rq's class (queued or curr) */
	bool protect;			/* fair: RUN_TO_PARITY armed */
	bool new_entity;		/* first enqueue gets half a slice */
	bool wake_pending;
	uint32_t weight;		/* what EEVDF runs it with: own_weight flattened (group.c) */
	int group;			/* SCHED_NONE: the root */
	uint32_t vrem;			/* fair: vruntime's remainder, in 1/weight ns */

	/* fair (EEVDF); the tick touches this first line and the PELT line only */
	uint64_t vruntime, deadline;
	/*
	 * Run time charged while current and not yet added to st (whose
	 * lines the tick would otherwise touch for every busy pCPU): added
	 * at switch-out by stats_flush_run(), and by readers until then.
	 */
	uint64_t run_ns, run_work_ns;
	struct sched_pelt pelt;		/* one line */
	struct tnode run_node;		/* key = deadline, aux = vruntime; the pick's line */
	uint64_t slice;
	int64_t vlag;
	uint64_t prot_deadline;		/* RUN_TO_PARITY: deadline at set_next */
	uint64_t wait_start;		/* became runnable-not-running */
	uint64_t wake_time;		/* woken, not yet run (latency) */
	struct slist rq_link;		/* rq->queued (on_rq entities) */

	/* deadline (CBS) */
	struct sched_dl_params dl;
	uint64_t dl_bw;			/* runtime/period << BW_SHIFT */
	uint64_t dl_density;		/* runtime/deadline << BW_SHIFT */
	int64_t dl_runtime;		/* remaining, full-capacity ns */
	uint64_t dl_deadline;		/* absolute deadline */
	uint64_t dl_timer;		/* replenishment time while throttled */
	uint64_t dl_missed;		/* last absolute deadline counted as missed */
	bool dl_throttled;
	struct tnode dl_node;		/* key = absolute deadline */
	struct slist dl_link;		/* rq->dl_assigned */
	int dl_cpu;			/* pCPU admission assigned it to, -1 if none */

	/* uclamp */
	unsigned int uc_req[UCLAMP_CNT];
	unsigned int uc_eff[UCLAMP_CNT];
	unsigned int uc_bucket[UCLAMP_CNT];
	bool uc_active;			/* counted in its rq's buckets */
	unsigned int perf_request;

	char name[SCHED_NAME_MAX];
	struct sched_cpumask affinity;	/* as given */
	struct sched_cpumask allowed;	/* affinity & existing pCPUs */
	uint64_t throttle_start;

	/* cap (cap.c): quota ns of run time per period ns; period 0 = none */
	uint64_t cap_quota, cap_period;
	uint64_t cap_used;		/* run time in period number cap_index */
	uint64_t cap_index;
	uint64_t cap_until;		/* end of the throttling while cap_throttled */
	bool cap_throttled;
	bool cap_counted;		/* in its rq's nr_capped and on its capped list */
	int16_t cap_home;		/* pCPU + 1 a push took it from (cap_push_loser()), or 0 */
	struct slist capped_link;	/* rq->capped while cap_counted */
	struct slist cap_link;		/* rq->cap_throttled while cap_throttled */
	bool grp_capped;		/* a group on its path has a cap */
	struct share_bucket grp_share;	/* its share of a binding group cap (group.c) */
	uint64_t share_round;		/* fluid balance round that gave it */
	int share_gid;			/* the group whose cap it is a share of */
	struct share_bucket grp_outer;	/* its share of a binding cap above share_gid's (group.c) */
	int outer_gid;			/* the group whose cap grp_outer is a share of */
	uint64_t ideal_round;		/* round that set its weight from its ideal rate */
	bool cap_keep_lag;		/* throttled by a group cap that is not its ideal */
	uint32_t own_weight;		/* as set (sched_set_weight) */

	/* fluid-ideal balance (fairlag.c), at the last periodic balance */
	int64_t lag;			/* ideal work - work done, while runnable */
	uint64_t lag_rate;		/* ideal rate, 1 << 20 = one 1024 pCPU */
	uint64_t lag_work, lag_prev_work; /* work at the last balance, at this one */
	uint64_t lag_wakeups;		/* st.nr_wakeups then: blocked since? */
	uint64_t lag_moved;		/* balance round it last moved in */
	bool lag_on_rq, lag_tracked;
	bool lag_packed;		/* its placement is feasible (fair_repack.c) */
	bool lag_tight;			/* its level of the ideal has its pCPUs whole (fairlag.c) */
	bool lag_moving;		/* being moved by it: drop the EEVDF credit */
	bool lag_local_cap;		/* its cap binds on its pCPU only (fair_moves.c) */
	uint64_t sl_demand;		/* EWMA of its use as a rate (fair_sleepers.c) */
	uint64_t sl_long;		/* its mean over seconds: the solve's */
	uint32_t sl_count;		/* intervals in sl_long, up to its length */
	uint64_t sl_waited, sl_cpu_time; /* its wait and cpu time at the last balance */
	uint64_t sl_used, sl_active;	/* work, and runnable time owed its rate, since */
	uint64_t sl_got, sl_owed;	/* averages: its work, and its busy rate's */
	uint64_t sl_busy_rate;		/* its rate were every entity busy */
	bool sl_starved;		/* sl_got below sl_owed (fair_wake.c) */
	uint64_t sl_share;		/* its solved rate when it last slept */
	uint32_t sl_hold;		/* run weight factor (16.16) while over; 0 = 1 */
	bool sl_init;			/* sl_demand has a first value */
	uint64_t sl_woke_round;		/* balance round it last woke in; 0 never */
	bool sl_was_runnable;		/* a balance saw it runnable */
	uint32_t sl_backlog_rounds;	/* balances tracked since it was a sleeper */

	struct sched_entity_stats st;
};

/* ---------------------------------------------------------------- rq */

struct uclamp_bucket {
	unsigned int tasks;
	unsigned int value;
};

struct sched_domain_cost {	/* valid in nr_span's padding: 56 bytes, not 64 */
	struct sched_cpumask span;
	unsigned int nr_span;
	bool valid;
	uint64_t max_newidle_lb_cost;
	uint64_t last_decay_max_lb_cost;
};

/*
 * Hot fields first, by cache line (the array is cache-line aligned): the
 * tick and the periodic performance selection of a busy pCPU read lines
 * 0-2 only (line 0: accounting and state; line 1: the fair sums the tick
 * reads and the idle window; line 2: PELT).
 */
struct sched_rq {
	unsigned int cpu, cluster, capacity;
	unsigned int nr_running;	/* on_rq entities, all classes */
	struct sched_entity *curr;
	uint64_t clock;			/* last accounting update */
	uint64_t busy_ns;
	bool need_resched;
	bool idle;
	bool overutil;			/* at the last periodic evaluation */
	bool misfit;
	unsigned int nr_dl;
	struct slist dl_assigned;	/* deadline entities placed here (tested every tick) */

	/* fair (the waiting entities, cfs, are read by the pick only: further down) */
	unsigned int nr_fair;		/* on_rq fair, including curr */
	unsigned int lb_streak;		/* balances in a row above the mean load */
	uint64_t fair_weight;		/* sum of weights of on_rq fair */
	uint64_t zero_vruntime;		/* base of the keys below */
	uint64_t idle_in_window;	/* idle ns since the last perf evaluation */
	uint64_t last_idle;		/* last time this pCPU was idle */
	int64_t avg_vruntime;		/* sum over tree of (v - zero) * w */
	uint64_t avg_load;		/* sum over tree of w */
	struct sched_entity *next_buddy;

	/* PELT: line 2 exactly (checked below) */
	struct sched_pelt pelt;

	struct fair_queue cfs;
	uint64_t gen;
	uint64_t idle_ns;
	uint64_t dl_bw;			/* bandwidth of entities assigned here */
	unsigned int dl_level;		/* lowest level that keeps them (dl_supply.c) */
	uint64_t dl_supply_load;	/* what they need of it at its top level */
	unsigned int bucket_tasks;	/* entities counted in the buckets */
	unsigned int nr_capped;		/* queued fair entities counted with a cap (fair_capped.c) */

	/* deadline */
	struct treap dl;
	struct slist queued;		/* on_rq entities */
	struct slist capped;		/* the cap_counted ones, in queued's order */
	struct slist cap_throttled;	/* entities out of quota, placed here */

	/* uclamp */
	struct uclamp_bucket bucket[UCLAMP_CNT][UCLAMP_BUCKETS];
	unsigned int uc_value[UCLAMP_CNT];

	/* idle and balancing */
	uint64_t idle_start;
	uint64_t avg_idle;
	struct sched_domain_cost sd[SCHED_DOMAINS];

	/* stats */
	uint64_t nr_switches, nr_ticks_deferred;
	uint64_t nr_newidle, nr_newidle_skipped, nr_newidle_aborted, nr_newidle_pulled;
	uint64_t nr_lb_migrations, nr_misfit_migrations;

	/* fluid-ideal balance (fairlag.c) */
	uint64_t lag_cap;		/* capacity the sleepers left, 1 << 20 = 1024 */
	uint64_t lag_weight;		/* weight of the tracked entities here */
	uint64_t lag_free_weight;	/* ... of those no cap holds (fairlag.c) */
	bool lag_full;			/* runs an entity whose share is the whole pCPU */
	bool lag_behind;		/* its tracked entities are behind in sum (fair_wake.c) */
	bool lag_tight;			/* runs an entity of a tight level (fair_wake.c) */
	bool lag_cap_init;		/* lag_cap has a first value */
	/*
	 * The cap rates of those a cap holds (fairlag.c). 32 bits, in the
	 * bools' padding, to keep the runqueue at 12 cache lines (one more
	 * cost 5-8 ns per decision at 1024 entities): they add up to at
	 * most the ideal rates of the pCPUs' entities, 2^28 for 256 pCPUs.
	 */
	uint32_t lag_held;
	double lag_pot[5];		/* the potential's sums (fairlag.c: POT_*) */
} __attribute__((aligned(SCHED_CACHELINE)));

_Static_assert(offsetof(struct sched_rq, pelt) % SCHED_CACHELINE == 0 &&
	       sizeof(struct sched_pelt) <= SCHED_CACHELINE,
	       "a runqueue's PELT series must sit in one cache line");

struct sched_cluster {
	struct sched_cluster_desc desc;
	struct sched_cpumask bigger;	/* pCPUs of larger capacity (misfit targets) */
	unsigned int first_cpu;
	unsigned int level;
	unsigned int requested;
	bool overutilized;
	uint64_t level_ns_sum, time_ns, last_level_update, nr_perf_changes;
};

/*
 * Capacity left to the fair class once reserved bandwidth is served (dl_bw
 * is the sum over dl_assigned).
 */
static inline uint64_t fair_capacity(const struct sched_rq *rq)
{
	uint64_t dl = slist_empty(&rq->dl_assigned) ? 0 :
		      (rq->dl_bw * SCHED_CAPACITY_SCALE) >> BW_SHIFT;

	return dl + 1 < rq->capacity ? rq->capacity - dl : 1;
}

/*
 * A group (group.c). The cap is accounted like an entity's (cap.c), over
 * all its members; the scratch part is rebuilt by every user of it.
 */
struct sched_group {
	bool used;
	char name[SCHED_NAME_MAX];
	int parent;			/* SCHED_NONE: the root */
	unsigned int depth;		/* 1: in the root */
	uint32_t weight;
	unsigned int nr_members, nr_groups;	/* direct */
	unsigned int nr_entities;	/* in its subtree */
	struct cap_acct cap;
	bool thr_active;		/* a throttling began at thr_start, ends at thr_until */
	uint64_t thr_start, thr_until;
	/* stats */
	uint64_t run_ns, work_ns, throttled_ns, nr_throttles;
	/* scratch: weights and the hierarchical ideal */
	uint64_t act_weight;		/* weights of its members that want to run */
	bool active;			/* some entity below it wants to run */
	uint64_t bound_sum, bound;	/* rate its members can use; with its cap */
	uint64_t cap_sum;		/* capacities its members are on */
	unsigned int nr_on;
	int head_ent, head_grp, next_grp;	/* tracked members, active child groups */
	bool limited;			/* its cap is below what its members can use */
	bool binding;			/* ... and below its share: its cap is its ideal */
	uint64_t alloc, cap_rate;	/* its ideal rate; its cap's rate (0: none) */
	struct sched_cpumask running;	/* pCPUs whose curr is below it (group_switch_curr()) */
};

/* pCPUs a waking sleeper may be sent to, handed out round robin (fair_wake.c) */
struct fair_wake_targets {
	uint16_t cpu[SCHED_MAX_CPUS];
	unsigned int nr, next;
};

struct sched {
	struct sched_config cfg;
	unsigned int nr_cpus, nr_clusters;
	struct sched_cluster cluster[SCHED_MAX_CLUSTERS];
	struct sched_rq *rq;
	struct sched_cpumask all_cpus;
	struct sched_cpumask idle_mask;	/* pCPUs with nothing running */
	unsigned int max_capacity;
	uint64_t total_capacity;	/* sum of pCPU capacities */

	struct sched_entity **ent;
	unsigned int nr_ent_slots;

	uint64_t dl_total_bw;		/* admitted, << BW_SHIFT */
	bool uclamp_enabled;		/* the static key (seed 001) */
	uint32_t perf_dirty;		/* clusters whose clamp aggregate changed */
	unsigned int nr_overloaded;	/* rqs with nr_running >= 2 */

	uint64_t last_balance, last_perf;
	struct lag_ent *lag_ents;	/* fairlag.c scratch, nr_ent_slots long */
	int *lag_order;			/* entity ids by weight, nr_ent_slots long */
	unsigned int nr_lag_order;
	bool lag_order_dirty;		/* an entity came, went or changed weight */
	uint64_t lag_last, lag_round;
	bool fluid_soon;		/* a fluid balance at the next tick (group_share_soon()) */
	bool lag_in_move;		/* between the two halves of an exchange */
	bool lag_capped;		/* a fair entity had a cap at the last balance (cap_ahead_share()) */
	struct sched_entity *cap_loser;	/* the pick's held loser (fair_cap_urgent()), for cap_push_loser() */
	struct sched_entity *lag_local[SCHED_MAX_CPUS]; /* fair_moves.c, during the moves only */
	struct fair_wake_targets wake_free;	/* not full, least loaded first */
	struct fair_wake_targets wake_ahead;	/* ahead in sum, most first */
	struct fair_wake_targets wake_any;	/* every pCPU, least loaded first */
	uint64_t newidle_decay_due;	/* no newidle cost decays before this */
	struct sched_group *grp;	/* SCHED_MAX_GROUPS, allocated with the first group */
	unsigned int nr_groups;
	struct grp_member *grp_scratch;	/* group.c: nr_ent_slots + SCHED_MAX_GROUPS */
	unsigned int nr_grp_scratch;
	uint64_t grp_level_alloc, grp_level_weight;	/* group_solve(): the root's water level */
	uint64_t grp_scale;		/* run weights / weights, 16.16 (group.c); 0 = 1 */
	uint64_t grp_top_weight;	/* largest run weight below its bound (group_request()) */
	unsigned int grp_held[SCHED_MAX_CPUS];	/* group_solve(): entities held near a bound, per pCPU */
	uint64_t grp_room[SCHED_MAX_CPUS];	/* group_solve(): least room below a cap there, per pCPU */
	uint64_t now;			/* latest time seen */
};

/* ---------------------------------------------------------------- classes */

enum {
	ENQ_WAKEUP = 1,		/* from blocked */
	ENQ_MIGRATED = 2,	/* moved from another rq */
	ENQ_INITIAL = 4,	/* first enqueue of a new entity */
	ENQ_REPLENISH = 8,	/* CBS replenishment */
	DEQ_SLEEP = 1,
	DEQ_MIGRATE = 2,
	DEQ_THROTTLE = 4,
};

/* The kernel's struct sched_class, reduced to what a vCPU scheduler needs. */
struct sched_class {
	const char *name;
	void (*enqueue)(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags);
	void (*dequeue)(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags);
	/* Best entity of this class on rq, considering rq->curr; NULL if none. */
	struct sched_entity *(*pick)(struct sched *s, struct sched_rq *rq);
	/* curr stops running but stays queued / next starts running. */
	void (*put_prev)(struct sched *s, struct sched_rq *rq, struct sched_entity *se);
	void (*set_next)(struct sched *s, struct sched_rq *rq, struct sched_entity *se);
	/* Charge `delta` ns of wall time to rq->curr at `level`. */
	void (*update_curr)(struct sched *s, struct sched_rq *rq, uint64_t delta, uint64_t now);
	void (*tick)(struct sched *s, struct sched_rq *rq, uint64_t now);
	void (*yield)(struct sched *s, struct sched_rq *rq, struct sched_entity *se);
	/* Should the woken `se` preempt rq->curr (same class)? */
	bool (*wakeup_preempt)(struct sched *s, struct sched_rq *rq, struct sched_entity *se);
	/* pCPU to queue a waking entity on. */
	unsigned int (*select_cpu)(struct sched *s, struct sched_entity *se);
	/* Next time this class needs attention on rq (or UINT64_MAX). */
	uint64_t (*next_event)(const struct sched *s, const struct sched_rq *rq);
};

extern const struct sched_class fair_sched_class;
extern const struct sched_class dl_sched_class;

/*
 * Every class, highest first: the order the pick tries them in, and a class
 * above another preempts it on wakeup (the kernel's for_each_class()).
 */
#define SCHED_NR_CLASSES	2
extern const struct sched_class *const sched_classes[SCHED_NR_CLASSES];

#define for_each_class(class)						\
	for (unsigned int class##_i = 0;				\
	     class##_i < SCHED_NR_CLASSES && ((class) = sched_classes[class##_i], true); \
	     class##_i++)

/* Does class a come before class b (a preempts b)? */
static inline bool sched_class_above(const struct sched_class *a, const struct sched_class *b)
{
	const struct sched_class *c;

	for_each_class(c) {
		if (c == b)
			return false;
		if (c == a)
			return true;
	}
	return false;
}

static inline bool dl_entity(const struct sched_entity *se)
{
	return se->class == &dl_sched_class;
}

/* ---------------------------------------------------------------- core.c */

/* A pCPU's performance level: its cluster's (read by every PELT update). */
static inline unsigned int rq_level(const struct sched *s, const struct sched_rq *rq)
{
	return s->cluster[rq->cluster].level;
}

/*
 * Engine time never goes backwards: callers on several threads may read
 * their clock, then take the lock in another order. Every entry point
 * passes its `now` through here.
 */
static inline uint64_t engine_now(struct sched *s, uint64_t now)
{
	if (now < s->now)
		return s->now;
	s->now = now;
	return now;
}

void update_rq_clock_slow(struct sched *s, struct sched_rq *rq, uint64_t now);

/*
 * update_rq_clock(): account rq up to `now`. Inline up to the test whether
 * time moved at all, since most calls come at a time the rq has already
 * seen (the same event touching it twice, the balance after the tick).
 */
static inline void update_rq_clock(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	if (now > s->now)
		s->now = now;
	if ((int64_t)(now - rq->clock) <= 0)
		return;
	update_rq_clock_slow(s, rq, now);
}

struct sched_entity *sched_ent(const struct sched *s, int id);
void sched_emit(struct sched *s, const struct sched_event *ev);
void sched_emit_entity(struct sched *s, int type, struct sched_entity *se, uint64_t now);
static inline void resched_rq(struct sched_rq *rq)
{
	rq->need_resched = true;
}
void update_curr_pelt(struct sched *s, struct sched_rq *rq, uint64_t now);
void schedule_rq(struct sched *s, struct sched_rq *rq, uint64_t now);
void enqueue_entity(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags,
		    uint64_t now);
void dequeue_entity(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags,
		    uint64_t now);
void wakeup_preempt(struct sched *s, struct sched_rq *rq, struct sched_entity *se);
int sched_activate(struct sched *s, struct sched_entity *se, int flags, uint64_t now);
void migrate_entity(struct sched *s, struct sched_entity *se, unsigned int to, int reason,
		    uint64_t now);
int sched_errf(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---------------------------------------------------------------- fair.c */

uint64_t avg_vruntime(const struct sched_rq *rq);
bool entity_eligible(const struct sched_rq *rq, const struct sched_entity *se);
struct sched_entity *pick_eevdf(struct sched_rq *rq);
void fair_place_at_v(struct sched_rq *rq, struct sched_entity *se);
void reweight_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint32_t w);
bool yield_to_fair(struct sched *s, struct sched_entity *se, struct sched_entity *target,
		   uint64_t now);

/*
 * The fair class's update_curr(): charge `delta` ns of wall time to the
 * running entity's vruntime, and start a new slice once its deadline is
 * reached (update_deadline()). Inline: the run-time accounting of every
 * update, the tick's included, calls it for a fair entity directly.
 */
static inline void fair_update_curr(struct sched *s, struct sched_rq *rq, uint64_t delta)
{
	struct sched_entity *curr = rq->curr;

	curr->vruntime += vruntime_delta(curr->weight, delta, &curr->vrem);
	if (!time_before64(curr->vruntime, curr->deadline)) {
		curr->deadline = curr->vruntime + calc_delta_fair(curr->slice ? curr->slice :
								   s->cfg.slice_ns, curr->weight);
		if (rq->nr_fair > 1)
			resched_rq(rq);
	}
}

/* ---------------------------------------------------------------- cap.c */

/*
 * Run time charged to the period number `index` by a cap (an entity's in
 * cap.c, a group's in group.c) that charged `used` to period number `at`:
 * what it ran there, plus what it ran beyond the quota in the period before
 * (a caller that only sees the engine at its ticks throttles a tick late;
 * the overrun is paid in the next period, as CBS does, so the cap holds on
 * average).
 */
static inline uint64_t cap_charged_in(uint64_t index, uint64_t at, uint64_t used, uint64_t quota)
{
	if (index == at)
		return used;
	if (index == at + 1 && used > quota)
		return used - quota;
	return 0;
}

void cap_charge(struct sched_rq *rq, struct sched_entity *se, uint64_t delta, uint64_t now);
bool cap_exhausted(const struct sched *s, const struct sched_entity *se, uint64_t now);
void cap_throttle(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint64_t now);
void cap_hold(struct sched *s, struct sched_entity *se, uint64_t now);
bool cap_hole_short(const struct sched *s, const struct sched_rq *rq, uint64_t now);
void cap_unthrottle_due(struct sched *s, struct sched_rq *rq, uint64_t now);
void cap_unthrottle(struct sched *s, struct sched_entity *se, uint64_t now);
uint64_t cap_next_event(const struct sched *s, const struct sched_rq *rq);
int64_t cap_laxity(const struct sched_entity *se, uint64_t now);
bool cap_all_but_holds(const struct sched *s, const struct sched_entity *se);
uint64_t cap_quota_left(const struct sched_entity *se, uint64_t now);
int64_t group_share_laxity(const struct sched *s, const struct sched_entity *se, uint64_t now);
uint64_t group_share_left(const struct sched_entity *se, uint64_t now);
/*
 * The shortest run a member is given at once: its request's floor
 * (group_request()), and what newidle must be able to give one it pulls
 * (group_pull_short()): a tick / this.
 */
#define REQUEST_TICK_DIV	4
bool group_pull_short(const struct sched *s, const struct sched_entity *se, uint64_t now);
int cap_check_range(const struct sched *s, bool group, uint64_t quota, uint64_t period,
		    char *err, size_t errlen);

/* ---------------------------------------------------------------- deadline.c */

/*
 * An admission's outcome: the pCPU of the reservation being admitted and
 * the already-admitted reservations a re-pack moves (dl_admit.c).
 */
struct dl_move {
	struct sched_entity *se;
	unsigned int cpu;
};

struct dl_plan {
	int cpu;
	unsigned int nr_moves;
	struct dl_move *moves;
};

int dl_admit(const struct sched *s, const struct sched_entity *se,
	     const struct sched_dl_params *dl, const struct sched_cpumask *allowed,
	     struct dl_plan *plan, char *err, size_t errlen);
void dl_plan_commit(struct sched *s, struct dl_plan *plan, uint64_t now);
void dl_plan_free(struct dl_plan *plan);
#define DL_NO_FIT	UINT64_MAX	/* a supply density: the deadline is within the blackout */
uint64_t dl_blackout_ns(const struct sched *s, unsigned int level);
uint64_t dl_supply_density(const struct sched_dl_params *dl, uint64_t blackout_ns);
uint64_t dl_level_room(const struct sched *s, unsigned int level);
uint64_t dl_rq_supply_load(const struct sched *s, const struct sched_rq *rq,
			   const struct sched_entity *skip, unsigned int level);
unsigned int dl_needed_level(const struct sched *s, const struct sched_rq *rq);
uint64_t dl_supply_delivered(const struct sched *s, const struct sched_rq *rq, unsigned int level,
			     uint64_t t0, uint64_t t1);
uint64_t dl_supply_until(const struct sched *s, const struct sched_rq *rq, unsigned int level,
			 uint64_t t0, uint64_t work);
void dl_move(struct sched *s, struct sched_entity *se, unsigned int cpu, uint64_t now);
int dl_check_params(const struct sched_dl_params *dl, char *err, size_t errlen);
void dl_set_params(struct sched *s, struct sched_entity *se, const struct sched_dl_params *dl,
		   unsigned int cpu);
void dl_clear_params(struct sched *s, struct sched_entity *se);
void dl_assign_rq(struct sched *s, struct sched_entity *se, int cpu);
void dl_throttle(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint64_t now);
void dl_replenish_due(struct sched *s, struct sched_rq *rq, uint64_t now);
void dl_check_misses(struct sched *s, struct sched_rq *rq, uint64_t now);

/* ---------------------------------------------------------------- uclamp.c */

void uclamp_rq_inc(struct sched *s, struct sched_rq *rq, struct sched_entity *se);
void uclamp_rq_dec(struct sched *s, struct sched_rq *rq, struct sched_entity *se);
void uclamp_update_eff(struct sched_entity *se);
void uclamp_enable(struct sched *s);
void uclamp_rq_init(struct sched_rq *rq);
unsigned long uclamp_rq_util_with(const struct sched *s, const struct sched_rq *rq,
				  unsigned long util, const struct sched_entity *se);
unsigned int uclamp_bucket_id(unsigned int value);

static inline bool uclamp_is_used(const struct sched *s)
{
#ifdef SCHED_NO_UCLAMP
	(void)s;
	return false;
#else
	return s->uclamp_enabled;
#endif
}

/* The fluid-ideal balance of the fair class: fairlag.c and the fair_*.c beside it. */
#include "sched/fairlag.h"

/* ---------------------------------------------------------------- group.c */

/* Is group gid on the path of se (its own group or above)? */
static inline bool group_contains(const struct sched *s, const struct sched_entity *se, int gid)
{
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent)
		if (g == gid)
			return true;
	return false;
}

void group_switch_curr(struct sched *s, struct sched_rq *rq, struct sched_entity *next);
uint64_t group_unaccounted(const struct sched *s, int gid, uint64_t now,
			   const struct sched_rq *skip);
void group_charge(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint64_t delta,
		  unsigned int level);
uint64_t group_exhausted_until(const struct sched *s, const struct sched_entity *se, uint64_t now);
void group_note_throttle(struct sched *s, const struct sched_entity *se, uint64_t now);
bool group_throttle_binds(const struct sched *s, const struct sched_entity *se, uint64_t now);
uint64_t group_cap_next(const struct sched *s, const struct sched_rq *rq);
void group_update_weights(struct sched *s, uint64_t now);
void group_entity_join(struct sched *s, struct sched_entity *se, int gid);
void group_entity_leave(struct sched *s, struct sched_entity *se);
int group_check_dl(const struct sched *s, int gid, const struct sched_entity *skip,
		   const struct sched_dl_params *dl, unsigned int cpu, char *err, size_t errlen);
bool group_solve(struct sched *s, struct lag_ent *e, unsigned int n, const uint64_t *left);
uint64_t group_request(const struct sched *s, const struct sched_entity *se);
void group_destroy(struct sched *s);

/*
 * A fluid balance at the next tick (sched_tick(), fair_lag_balance()),
 * not a balance interval later: a group cap was set or changed, or a
 * member of a capped group came (its first enqueue, or moved in). Until
 * that balance those members have no share of the cap and no lag is kept
 * for them, so they run alone until the quota is gone.
 */
static inline void group_share_soon(struct sched *s)
{
	s->fluid_soon = true;
}

/* ---------------------------------------------------------------- balance.c */

bool util_fits_cpu(unsigned long util, unsigned int uclamp_min, unsigned int uclamp_max,
		   unsigned int capacity);
bool entity_fits_cpu(const struct sched *s, const struct sched_entity *se, unsigned int cpu);
unsigned int select_cpu_fair(struct sched *s, struct sched_entity *se);
void sched_balance(struct sched *s, uint64_t now);
bool sched_balance_newidle(struct sched *s, struct sched_rq *rq, uint64_t now);
void cap_hole_fill(struct sched *s, struct sched_rq *rq, uint64_t now);
void cap_ahead_share(struct sched *s, struct sched_rq *rq, uint64_t now);
void cap_push_loser(struct sched *s, struct sched_rq *rq, uint64_t now);
int64_t lag_now(const struct sched *s, const struct sched_entity *se, uint64_t now);
void move_queued(struct sched *s, struct sched_entity *se, struct sched_rq *dst, int reason,
		 uint64_t now);
void update_misfit_slow(struct sched *s, struct sched_rq *rq);
void update_misfit_util(struct sched *s, struct sched_rq *rq, unsigned long util);
void update_idle_enter(struct sched *s, struct sched_rq *rq, uint64_t now);
void update_idle_exit(struct sched *s, struct sched_rq *rq, uint64_t now);
void sched_domains_init(struct sched *s);
bool update_newidle_cost(struct sched_domain_cost *sd, uint64_t cost, uint64_t now);

/*
 * update_misfit_status(): is the current fair entity too big for this pCPU?
 * Run at every tick and switch; the biggest pCPUs and idle ones return
 * here, without reading the entity's signals.
 */
static inline void update_misfit(struct sched *s, struct sched_rq *rq)
{
	struct sched_entity *curr = rq->curr;

	rq->misfit = false;
	if (rq->capacity >= s->max_capacity || !curr || dl_entity(curr) || !curr->on_rq)
		return;
	update_misfit_slow(s, rq);
}

/* ---------------------------------------------------------------- perf.c */

void perf_update(struct sched *s, uint64_t now, bool periodic);
void perf_kick(struct sched *s, uint64_t now);
void perf_account(struct sched *s, struct sched_cluster *c, uint64_t now);
unsigned int perf_round_level(const struct sched_cluster_desc *d, unsigned int want,
			      unsigned int cap);

/* ---------------------------------------------------------------- stats.c */

void stats_lat_record(struct sched_entity_stats *st, uint64_t ns);
unsigned int lat_bucket(uint64_t ns);
uint64_t lat_bucket_upper(unsigned int idx);
void stats_switch_in(struct sched *s, struct sched_rq *rq, struct sched_entity *se,
		     uint64_t now);
void stats_switch_out(struct sched *s, struct sched_rq *rq, struct sched_entity *se,
		      uint64_t now);
void stats_flush_run(struct sched_entity *se, unsigned int cluster);

/* ---------------------------------------------------------------- topology.c */

int topology_build(struct sched *s, const struct sched_topology *topo, char *err,
		   size_t errlen);

#endif
