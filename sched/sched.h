/* SPDX-License-Identifier: MIT */
/*
 * capvisor scheduling engine: public API.
 *
 * A pure, deterministic library. It owns no clock, no thread and no lock:
 * every call that depends on time takes `now` (ns, from one monotonic
 * clock). A call whose `now` is older than one already seen (threads that
 * read the clock before taking the lock in another order) is treated as
 * happening at the latest time seen. The caller (the simulator, or the VMM
 * dispatcher holding one lock) reports events (wakeup, block, yield, tick)
 * and asks, per pCPU, "which entity runs here now, at which performance
 * level?". The engine is not thread-safe: callers serialize all calls.
 *
 * Model: a pCPU of capacity C (1..1024) running at performance level P
 * (1..C) delivers P/1024 of full-capacity work per ns of wall time. The
 * dispatcher realizes that by letting the vCPU run P/1024 of the time.
 * Deadline runtime and PELT are charged in full-capacity time (scaled by P);
 * fair vruntime advances with wall time, as in Linux.
 *
 * Entities are named by small integer ids returned by sched_entity_add().
 * Errors are negative SCHED_E_* codes; functions that take (err, errlen)
 * also write a human-readable message naming the field and the numbers.
 * A rejected request changes nothing.
 *
 * See docs/sched.md for the design and the Linux rules followed.
 *
 * Naming: no symbol here may collide with libc or POSIX (<sched.h> is pulled
 * in by <pthread.h> in every VMM file): hence sched_entity_yield(), not
 * sched_yield(), and SCHED_NONE, not SCHED_IDLE. A libc name defined by this
 * static library would silently replace libc's for the whole process.
 */
#ifndef CAPVISOR_SCHED_H
#define CAPVISOR_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCHED_MAX_CPUS		256	/* pCPUs per engine */
#define SCHED_MAX_CLUSTERS	16	/* clusters (performance domains) */
#define SCHED_MAX_LEVELS	32	/* discrete performance levels per cluster */
#define SCHED_NAME_MAX		32	/* names, including the NUL */
#define SCHED_CAPACITY_SCALE	1024
#define SCHED_NICE_0_WEIGHT	1024
#define SCHED_WEIGHT_MIN	1
#define SCHED_WEIGHT_MAX	(1u << 20)
/* Caps (sched_set_cap): cgroup cpu.max's and libvirt's limits, in ns. */
#define SCHED_CAP_PERIOD_MIN_NS	1000000ull	/* 1 ms */
#define SCHED_CAP_PERIOD_MAX_NS	1000000000ull	/* 1 s */
#define SCHED_CAP_QUOTA_MIN_NS	1000000ull	/* 1 ms */
#define SCHED_NONE		(-1)	/* "no entity" in sched_cpu_state and events; the root group */
/* Groups (sched_group_add): how many, and how deep below the root. */
#define SCHED_MAX_GROUPS	256
#define SCHED_GROUP_DEPTH_MAX	3	/* root -> VM -> in-VM group -> in-group group */

/* Error codes; functions return their negative. */
enum sched_error {
	SCHED_E_INVAL = 1,	/* malformed argument (message names the field) */
	SCHED_E_NOENT,		/* no such entity / cpu / cluster */
	SCHED_E_NOMEM,		/* allocation failed */
	SCHED_E_AFFINITY,	/* affinity selects no pCPU of the engine */
	SCHED_E_CAPACITY_FIT,	/* reservation fits no pCPU of its affinity */
	SCHED_E_BANDWIDTH,	/* reservation exceeds the admissible bandwidth */
	SCHED_E_CLASS,		/* operation not valid for the entity's class */
	SCHED_E_BUSY,		/* group still has members */
	SCHED_E_EXIST,		/* a group of that name exists */
};

/* Human-readable name of an error code (positive or negative). */
const char *sched_strerror(int err);

/* ---------------------------------------------------------------- cpumask */

struct sched_cpumask {
	uint64_t bits[SCHED_MAX_CPUS / 64];
};

static inline void sched_cpumask_clear(struct sched_cpumask *m)
{
	for (unsigned int i = 0; i < SCHED_MAX_CPUS / 64; i++)
		m->bits[i] = 0;
}

static inline void sched_cpumask_set(struct sched_cpumask *m, unsigned int cpu)
{
	if (cpu < SCHED_MAX_CPUS)
		m->bits[cpu / 64] |= 1ull << (cpu % 64);
}

static inline bool sched_cpumask_test(const struct sched_cpumask *m, unsigned int cpu)
{
	return cpu < SCHED_MAX_CPUS && (m->bits[cpu / 64] >> (cpu % 64)) & 1;
}

/* m |= other */
static inline void sched_cpumask_or(struct sched_cpumask *m, const struct sched_cpumask *other)
{
	for (unsigned int i = 0; i < SCHED_MAX_CPUS / 64; i++)
		m->bits[i] |= other->bits[i];
}

/* Do a and b share a pCPU? */
static inline bool sched_cpumask_intersects(const struct sched_cpumask *a,
					    const struct sched_cpumask *b)
{
	for (unsigned int i = 0; i < SCHED_MAX_CPUS / 64; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

static inline bool sched_cpumask_empty(const struct sched_cpumask *m)
{
	for (unsigned int i = 0; i < SCHED_MAX_CPUS / 64; i++)
		if (m->bits[i])
			return false;
	return true;
}

/* ---------------------------------------------------------------- topology */

/*
 * One cluster: nr_cpus identical pCPUs forming one performance domain.
 * pCPU numbers are assigned in cluster order: cluster 0 gets 0..n0-1, etc.
 * levels[]: ascending performance levels, the last one == capacity. With
 * nr_levels == 0 every integer 1..capacity is a level (continuous, like
 * CPPC). mhz[] is optional (0 = unknown) and only reported.
 */
struct sched_cluster_desc {
	char name[SCHED_NAME_MAX];
	unsigned int capacity;		/* 1..1024 */
	unsigned int nr_cpus;		/* >= 1 */
	unsigned int nr_levels;		/* 0..SCHED_MAX_LEVELS */
	unsigned int levels[SCHED_MAX_LEVELS];
	unsigned int mhz[SCHED_MAX_LEVELS];
};

struct sched_topology {
	unsigned int nr_clusters;	/* 1..SCHED_MAX_CLUSTERS */
	struct sched_cluster_desc clusters[SCHED_MAX_CLUSTERS];
};

/* Optional measurement clock for newidle balance cost (rule 25). */
typedef uint64_t (*sched_clock_fn)(void *opaque);

struct sched_event;
typedef void (*sched_event_fn)(void *opaque, const struct sched_event *ev);

/*
 * Engine tunables. Zero fields take the default given in brackets, so
 * `struct sched_config cfg = { 0 };` is a valid configuration.
 */
struct sched_config {
	uint64_t slice_ns;		/* EEVDF base slice [3 ms] */
	uint64_t tick_ns;		/* expected tick period, bounds lag [1 ms] */
	unsigned int dl_limit_permille;	/* admissible DL bandwidth [950] */
	/*
	 * The supply a pCPU really delivers, for admission (dl_supply.c):
	 * at level P it runs P x window/1024 at a fixed position in every
	 * window (the dispatcher's duty cycle; none at level 1024), and what
	 * it runs may come up to latency late. [0, 0]: continuous supply,
	 * the engine's own time (the simulator's default).
	 */
	uint64_t dl_supply_window_ns;
	uint64_t dl_supply_latency_ns;
	/*
	 * When the phase of that supply is known too (the simulator's duty
	 * cycle): pCPU c's on-part starts dl_supply_offset_ns[c] into every
	 * window counted from time 0, and reservations are charged only the
	 * work it delivered, so that a budget ends when the work is done.
	 */
	bool dl_supply_charge;
	uint64_t dl_supply_offset_ns[SCHED_MAX_CPUS];
	uint64_t balance_interval_ns;	/* periodic load balance [4 ms] */
	/*
	 * With no idle pCPU the periodic balance runs busy_factor times less
	 * often (the kernel's sd->busy_factor): every pCPU has work, so
	 * moving entities only evens out loads that wakeups keep changing.
	 * [4]; 1 balances a busy host as often as one with idle pCPUs.
	 */
	unsigned int busy_factor;
	uint64_t perf_interval_ns;	/* performance re-selection [tick_ns] */
	bool no_newidle;		/* disable newidle balancing */
	/*
	 * Always do a busy pCPU's tick in full, even when its running
	 * entity's slice goes on (see tick_defer() in core.c): the same
	 * decisions, with PELT rounded at every tick. For comparisons.
	 */
	bool no_tick_defer;
	/*
	 * Newidle cost measurement: when `clock` is set, each domain's
	 * balance attempt is timed with it (the dispatcher passes a monotonic
	 * host clock). When NULL, a deterministic model cost of
	 * newidle_model_ns_per_cpu x pCPUs scanned is used [50 ns].
	 */
	sched_clock_fn clock;
	void *clock_opaque;
	uint64_t newidle_model_ns_per_cpu;
	/* Event hook, called synchronously (keep it cheap); may be NULL. */
	sched_event_fn event;
	void *event_opaque;
};

struct sched;	/* opaque engine instance */

/*
 * Create an engine for `topo`. `cfg` may be NULL (all defaults).
 * Returns NULL on error with a message in err naming the field, e.g.
 * "clusters[1].capacity: 2000 out of range 1..1024".
 */
struct sched *sched_create(const struct sched_topology *topo, const struct sched_config *cfg,
			   char *err, size_t errlen);
void sched_destroy(struct sched *s);

unsigned int sched_nr_cpus(const struct sched *s);
unsigned int sched_nr_clusters(const struct sched *s);
/* Cluster index of a pCPU, or -SCHED_E_NOENT. */
int sched_cpu_cluster(const struct sched *s, unsigned int cpu);
/* Cluster index by name, or -SCHED_E_NOENT. */
int sched_cluster_find(const struct sched *s, const char *name);
/* The description the engine was created from (validated, levels filled). */
const struct sched_cluster_desc *sched_cluster_desc(const struct sched *s, unsigned int cluster);
/* Fill *mask with the pCPUs of a cluster; -SCHED_E_NOENT if none. */
int sched_cluster_mask(const struct sched *s, unsigned int cluster, struct sched_cpumask *mask);

/* --------------------------------------------------------------- entities */

enum sched_state {
	SCHED_BLOCKED,		/* not runnable (halted vCPU) */
	SCHED_RUNNABLE,		/* waiting on a runqueue */
	SCHED_RUNNING,		/* current on a pCPU */
	SCHED_THROTTLED,	/* out of runtime (deadline) or quota (cap) until a new period */
};

struct sched_dl_params {
	uint64_t runtime_ns;	/* full-capacity time per period; 0 = none */
	uint64_t deadline_ns;	/* relative deadline; runtime <= deadline <= period */
	uint64_t period_ns;
};

struct sched_entity_params {
	char name[SCHED_NAME_MAX];
	uint32_t weight;	/* 1..2^20; 0 = derive from nice */
	int nice;		/* -20..19, used when weight == 0 */
	/* Affinity: empty mask = every pCPU. */
	struct sched_cpumask affinity;
	/*
	 * uclamp request, 0..1024, min <= max (sched_entity_params_init sets
	 * 0, 1024: no clamp). Anything else turns clamp processing on.
	 */
	unsigned int uclamp_min, uclamp_max;
	struct sched_dl_params dl;	/* runtime 0: fair class */
	bool runnable;		/* start runnable (woken at `now`) instead of blocked */
	int group;		/* group id, SCHED_NONE = the root (sched_entity_params_init) */
};

/* Fill p with defaults: nice 0, all pCPUs, no clamp, no reservation, blocked, root group. */
void sched_entity_params_init(struct sched_entity_params *p, const char *name);

/*
 * Add an entity. Returns its id (>= 0) or a negative error; a reservation
 * goes through admission control (-SCHED_E_CAPACITY_FIT, -SCHED_E_BANDWIDTH).
 * Ids are reused lowest-first after sched_entity_remove().
 */
int sched_entity_add(struct sched *s, const struct sched_entity_params *p, uint64_t now,
		     char *err, size_t errlen);
/* Remove an entity (in any state); its bandwidth is released. */
int sched_entity_remove(struct sched *s, int id, uint64_t now);

/* Weight (1..2^20); lag is preserved as in reweight_entity. */
int sched_set_weight(struct sched *s, int id, uint32_t weight, uint64_t now);
/* nice -> weight (sched_prio_to_weight); 0 if nice is out of range. */
uint32_t sched_nice_to_weight(int nice);

/*
 * Clamp request [min, max] within 0..1024. The first call (or the first
 * entity added with a non-default clamp) turns on clamp processing for the
 * whole engine for good (the static key of seed 001).
 */
int sched_set_uclamp(struct sched *s, int id, unsigned int min, unsigned int max, uint64_t now,
		     char *err, size_t errlen);

/*
 * Set (dl->runtime_ns > 0) or clear (dl == NULL or runtime 0) a
 * reservation. Admission (partitioned EDF, docs/sched.md "Reservations
 * that are kept") assigns it one pCPU of its affinity on which the sum of
 * runtime/(deadline - blackout) x 1024/capacity stays within the limit
 * (blackout: 0 for a continuous supply, else window - on-part + latency
 * of cfg.dl_supply_*; a deadline within it does not fit), re-packing the
 * other reservations if first fit fails: -SCHED_E_CAPACITY_FIT if no pCPU
 * of the affinity could hold it alone, -SCHED_E_BANDWIDTH if no placement
 * of all reservations was found. The message names the clusters tried and
 * carries the numbers. On error nothing changes.
 */
int sched_set_reservation(struct sched *s, int id, const struct sched_dl_params *dl,
			  uint64_t now, char *err, size_t errlen);

/*
 * Cap a fair entity (cgroup cpu.max, libvirt <period>/<quota>): at most
 * quota_ns of run time (wall time on a pCPU, whatever its capacity or
 * level) in every period of period_ns, periods counted from time 0; once
 * the quota is used up the entity is throttled until the period ends.
 * quota_ns 0 removes the cap. Limits: period SCHED_CAP_PERIOD_MIN_NS..
 * SCHED_CAP_PERIOD_MAX_NS, SCHED_CAP_QUOTA_MIN_NS <= quota <= period (an
 * entity runs on one pCPU at a time, so a larger quota would never bind).
 * A reservation is already bounded by its runtime: -SCHED_E_CLASS for a
 * deadline entity (and sched_set_reservation() refuses a capped one).
 * On error nothing changes.
 */
int sched_set_cap(struct sched *s, int id, uint64_t quota_ns, uint64_t period_ns, uint64_t now,
		  char *err, size_t errlen);

/*
 * New affinity (empty = all pCPUs). A deadline entity is admitted again
 * for the new affinity (same rule and errors as above) and moves to the
 * pCPU admission gives it. A fair entity moves at once if it is runnable
 * on a pCPU outside the new mask.
 */
int sched_set_affinity(struct sched *s, int id, const struct sched_cpumask *mask, uint64_t now,
		       char *err, size_t errlen);

/*
 * Guest performance request (e.g. CPPC desired performance), 1..1024, or 0
 * to withdraw it. The engine bounds it by the entity's clamps and treats it
 * as the entity's effective clamp [r, r] while set, so the guest gets the
 * level it asks for as long as the host's clamps allow it. Returns the
 * bounded value that will be used (>= 0) or a negative error.
 */
int sched_set_perf_request(struct sched *s, int id, unsigned int level, uint64_t now);

/*
 * With cfg.dl_supply_charge: pCPU cpu's on-parts start offset_ns (mod the
 * window) into each window from now on (the dispatcher restarted its
 * windows); what ran before is charged at the old phase.
 * -SCHED_E_NOENT for a bad cpu.
 */
int sched_set_supply_offset(struct sched *s, unsigned int cpu, uint64_t offset_ns, uint64_t now);

/* ----------------------------------------------------------------- groups */

/*
 * Groups (cgroup v2 cpu.weight and cpu.max, Xen domain weights; one VM is
 * one group; docs/sched/groups.md "Groups and group caps"). Entities and groups
 * are the members of a group; the root holds the entities and groups that
 * have no parent, and they compete there by weight. A group's share is
 * divided among its runnable members by weight, whatever their number:
 * two busy groups of equal weight get equal work with 1 or 16 busy
 * members. What a member cannot use (an entity never runs on two pCPUs at
 * once, a capped member stops at its cap) goes to its siblings first.
 *
 * Fair entities run with a flattened weight, their weight x the product
 * along their path of group weight / the runnable members' weights of that
 * group, brought up to date at every fluid balance and at every change of
 * groups; the balance solves the hierarchical ideal and moves entities to
 * it (fairlag.c, group.c).
 *
 * Deadline entities may be members: they keep their reservation, are
 * never throttled by a group cap, and their run time counts against it
 * (a VM cap bounds the whole VM): so a cap must leave room for the
 * reservations below it. They take no part in the weight shares (the fair
 * class shares what the reservations leave).
 *
 * Group ids are small integers, reused lowest-first after removal; names
 * are unique (1..SCHED_NAME_MAX-1 characters). On error nothing changes.
 */

/*
 * A new group below `parent` (SCHED_NONE = the root), weight 1..2^20, no
 * cap. Returns its id (>= 0), or -SCHED_E_INVAL (name, weight, depth beyond
 * SCHED_GROUP_DEPTH_MAX), -SCHED_E_NOENT (parent), -SCHED_E_EXIST (name),
 * -SCHED_E_NOMEM (more than SCHED_MAX_GROUPS).
 */
int sched_group_add(struct sched *s, const char *name, int parent, uint32_t weight, uint64_t now,
		    char *err, size_t errlen);
/*
 * Remove an empty group: -SCHED_E_BUSY while entities or groups are in it
 * (move or remove them first: the caller decides where they go),
 * -SCHED_E_NOENT for a bad id. Its statistics go with it.
 */
int sched_group_remove(struct sched *s, int gid, uint64_t now);
/* Group id by name, or -SCHED_E_NOENT. */
int sched_group_find(const struct sched *s, const char *name);
int sched_group_set_weight(struct sched *s, int gid, uint32_t weight, uint64_t now, char *err,
			   size_t errlen);
/*
 * Cap a group (cgroup cpu.max, libvirt <global_period>/<global_quota>): its
 * members together run at most quota_ns (wall time on pCPUs, summed over
 * its members and its groups' members) in every period of period_ns,
 * periods counted from time 0; once it is used up every fair member is
 * throttled until the period ends. Where the cap binds in the ideal, each
 * member gets its share of the quota (its ideal rate as time per period)
 * and is throttled when that is used up: members on different pCPUs then
 * split the quota by weight, not by who runs first. quota_ns may exceed the period (several
 * pCPUs at once), up to the engine's number of pCPUs x the period; period
 * SCHED_CAP_PERIOD_MIN_NS..SCHED_CAP_PERIOD_MAX_NS, quota at least
 * SCHED_CAP_QUOTA_MIN_NS; quota_ns 0 removes the cap. -SCHED_E_BANDWIDTH
 * when the reservations of deadline entities below it need more time per
 * period than quota/period (each runtime/period x 1024/capacity of the
 * pCPU it is admitted on); the message carries both numbers.
 */
int sched_group_set_cap(struct sched *s, int gid, uint64_t quota_ns, uint64_t period_ns,
			uint64_t now, char *err, size_t errlen);
/*
 * Move entity id into group gid (SCHED_NONE = the root). Its lag is kept
 * as a weight change keeps it. A deadline entity is refused
 * (-SCHED_E_BANDWIDTH) where a capped group on the new path would have no
 * room for its reservation (as are sched_set_reservation() and
 * sched_set_affinity() changes that would leave a cap above it none).
 */
int sched_set_group(struct sched *s, int id, int gid, uint64_t now, char *err, size_t errlen);

struct sched_group_stats {
	char name[SCHED_NAME_MAX];
	int parent;			/* SCHED_NONE: the root */
	uint32_t weight;
	uint64_t cap_quota_ns, cap_period_ns;	/* 0, 0: no cap */
	unsigned int nr_members;	/* entities directly in it */
	unsigned int nr_groups;		/* groups directly in it */
	/* Of its members and its groups' members, while they were members: */
	uint64_t run_ns;		/* wall time on pCPUs */
	uint64_t work_ns;		/* full-capacity time (scaled by level) */
	/*
	 * Its cap: from the first throttling of a member by it in a period
	 * (the quota used up, or that member's share of it) to the period's
	 * end, and the number of such periods.
	 */
	uint64_t throttled_ns;
	uint64_t nr_throttles;
};

/* -SCHED_E_NOENT for a bad id. */
int sched_group_stats(const struct sched *s, int gid, struct sched_group_stats *st);

/* ----------------------------------------------------------------- events */

/*
 * Events. Each one brings the affected pCPUs up to date at `now` and, if
 * the choice changes, switches their current entity (bumping their
 * generation and emitting SCHED_EV_SWITCH), so sched_cpu_curr() is always
 * valid right after the call.
 */
int sched_wakeup(struct sched *s, int id, uint64_t now);	/* blocked -> runnable */
int sched_block(struct sched *s, int id, uint64_t now);		/* -> blocked */
/* The running (or runnable) fair entity gives up the rest of its slice. */
int sched_entity_yield(struct sched *s, int id, uint64_t now);
/*
 * id yields in favour of target (kvm_vcpu_on_spin, yield_to_task_fair):
 * target becomes the next buddy on its runqueue, that pCPU reschedules and
 * id yields. Returns 1 when target was boosted; 0 when not (target blocked,
 * throttled, already running, itself, or either is not in the fair class),
 * and then nothing changes (the caller may sched_entity_yield()); negative on a
 * bad id.
 */
int sched_yield_to(struct sched *s, int id, int target, uint64_t now);

/*
 * Periodic work at `now` for every pCPU: runtime accounting, slice expiry,
 * CBS throttle/replenish, PELT, performance selection, balancing.
 * May be called at any time (in particular at sched_next_event()); the
 * periodic parts are rate-limited by the configured intervals.
 */
void sched_tick(struct sched *s, uint64_t now);
/* The same for one pCPU (accounting, slice, CBS, PELT of that pCPU). */
void sched_tick_cpu(struct sched *s, unsigned int cpu, uint64_t now);

/*
 * Earliest time at which the engine would change something on `cpu`
 * without an external event (slice end of current, runtime exhaustion,
 * replenishment of a throttled entity placed there), or UINT64_MAX.
 * Calling sched_tick() at that time gives exact CBS enforcement.
 */
uint64_t sched_next_event(const struct sched *s, unsigned int cpu);

/* ---------------------------------------------------------------- queries */

struct sched_cpu_state {
	int curr;		/* entity id or SCHED_NONE */
	unsigned int level;	/* current performance level of the pCPU */
	unsigned int capacity;	/* capacity of the pCPU */
	uint64_t gen;		/* bumped whenever curr or level changes */
};

/* What pCPU `cpu` runs now; -SCHED_E_NOENT for a bad cpu. */
int sched_cpu_curr(const struct sched *s, unsigned int cpu, struct sched_cpu_state *out);
/* Generation counter of a pCPU (cheap change detection for the dispatcher). */
uint64_t sched_cpu_gen(const struct sched *s, unsigned int cpu);

struct sched_entity_info {
	char name[SCHED_NAME_MAX];
	enum sched_state state;
	int cpu;			/* pCPU it is queued/running on, or -1 */
	bool deadline;			/* deadline class */
	int dl_cpu;			/* pCPU its reservation is admitted on, or -1 */
	uint32_t weight;
	unsigned int uclamp_min, uclamp_max;
	unsigned int perf_request;	/* 0 = none */
	struct sched_dl_params dl;
	uint64_t cap_quota_ns, cap_period_ns;	/* 0, 0: no cap */
	struct sched_cpumask affinity;	/* as given (empty = all) */
	int group;			/* SCHED_NONE: the root */
	uint32_t eff_weight;		/* the weight it runs with: its share of its groups' */
};

int sched_entity_info(const struct sched *s, int id, struct sched_entity_info *out);

#define SCHED_LAT_BUCKETS	256

struct sched_entity_stats {
	uint64_t cpu_time_ns;		/* wall time current on a pCPU */
	uint64_t work_ns;		/* full-capacity time (scaled by level) */
	uint64_t wait_ns;		/* runnable but not running */
	uint64_t throttled_ns;		/* CBS throttled, or out of its cap's quota */
	uint64_t nr_switches;		/* times switched in */
	uint64_t nr_preemptions;	/* switched out while still runnable */
	uint64_t nr_wakeups;
	uint64_t nr_migrations;
	uint64_t nr_throttles;		/* CBS or cap throttlings */
	uint64_t nr_periods;		/* CBS replenishments (periods begun) */
	uint64_t nr_deadline_misses;	/* deadline passed with runtime left while runnable */
	uint64_t nr_yields, nr_yield_to, nr_yield_to_boosted;
	uint64_t cpu_time_by_cluster_ns[SCHED_MAX_CLUSTERS];
	/* PELT, invariant (full-capacity units, 0..1024). */
	unsigned int util_avg, runnable_avg;
	unsigned long load_avg;
	/* Wakeup latency (wakeup -> first run): log-linear histogram. */
	uint64_t lat_count, lat_max_ns, lat_sum_ns;
	uint32_t lat_hist[SCHED_LAT_BUCKETS];
};

int sched_entity_stats(const struct sched *s, int id, struct sched_entity_stats *out);
/* Cheap read of an entity's PELT util_avg and runnable_avg (no stats copy). */
int sched_entity_util(const struct sched *s, int id, unsigned int *util_avg,
		      unsigned int *runnable_avg);
/* Percentile (0..100) of an entity's wakeup latency in ns (upper bucket edge). */
uint64_t sched_lat_percentile(const struct sched_entity_stats *st, unsigned int pct);

struct sched_cpu_stats {
	unsigned int cluster, capacity, level;
	unsigned int nr_running;	/* runnable entities incl. current */
	uint64_t busy_ns, idle_ns;
	uint64_t nr_switches;
	uint64_t nr_ticks_deferred;		/* busy ticks left to the next event */
	unsigned int util_avg, runnable_avg;	/* PELT of the pCPU, invariant */
	unsigned long load_avg;
	unsigned int uclamp_min, uclamp_max;	/* current max aggregation */
	uint64_t avg_idle_ns;			/* 1/8 EWMA of idle periods */
	uint64_t nr_newidle, nr_newidle_skipped, nr_newidle_aborted, nr_newidle_pulled;
	uint64_t nr_lb_migrations, nr_misfit_migrations;
	bool misfit;				/* current does not fit this pCPU */
};

int sched_cpu_stats(const struct sched *s, unsigned int cpu, struct sched_cpu_stats *out);

struct sched_cluster_stats {
	unsigned int level;		/* current performance level */
	unsigned int requested;		/* last request before rounding */
	uint64_t level_ns_sum;		/* integral of level over time (level x ns) */
	uint64_t time_ns;		/* time covered by level_ns_sum */
	uint64_t nr_perf_changes;
	bool overutilized;
	/* Newidle cost of the first domain that spans this cluster (rule 25). */
	uint64_t max_newidle_lb_cost_ns;
};

int sched_cluster_stats(const struct sched *s, unsigned int cluster,
			struct sched_cluster_stats *out);

/*
 * Sum of admitted bandwidth (runtime/period) x 2^20, and limit x total
 * capacity x 2^20 (a bound only: admission holds every pCPU to its own).
 */
void sched_dl_bandwidth(const struct sched *s, uint64_t *used, uint64_t *limit);

/* True once any clamp has been set (the fast path is then active). */
bool sched_uclamp_enabled(const struct sched *s);

/* ---------------------------------------------------------------- tracing */

enum sched_event_type {
	SCHED_EV_SWITCH,	/* cpu: prev -> next (either may be SCHED_NONE) */
	SCHED_EV_MIGRATE,	/* entity: from_cpu -> to_cpu */
	SCHED_EV_THROTTLE,	/* entity throttled on cpu */
	SCHED_EV_REPLENISH,	/* entity replenished (new period) */
	SCHED_EV_DL_MISS,	/* entity missed a deadline */
	SCHED_EV_PERF,		/* cluster: level changed (cpu = first pCPU) */
	SCHED_EV_WAKEUP,	/* entity woken, queued on cpu */
	SCHED_EV_BLOCK,		/* entity blocked */
};

struct sched_event {
	enum sched_event_type type;
	uint64_t now;
	int cpu;
	int prev, next;		/* SWITCH */
	int entity;		/* MIGRATE, THROTTLE, REPLENISH, DL_MISS, WAKEUP, BLOCK */
	int from_cpu, to_cpu;	/* MIGRATE */
	int cluster;		/* PERF */
	unsigned int level;	/* PERF: new level */
	int reason;		/* MIGRATE: enum sched_migrate_reason */
	uint64_t deadline;	/* REPLENISH: its new absolute deadline; DL_MISS: the missed */
};

enum sched_migrate_reason {
	SCHED_MIGRATE_WAKEUP,	/* wakeup placement chose another pCPU */
	SCHED_MIGRATE_BALANCE,	/* periodic load balance */
	SCHED_MIGRATE_MISFIT,	/* moved to a bigger pCPU */
	SCHED_MIGRATE_NEWIDLE,	/* pulled by a pCPU going idle */
	SCHED_MIGRATE_AFFINITY,	/* affinity change */
	SCHED_MIGRATE_ADMISSION,	/* a reservation re-packed to admit another */
};

#endif
