/* SPDX-License-Identifier: MIT */
/*
 * capvisor sim: drives the scheduling engine with synthetic vCPU workloads
 * in virtual time. Scenario format: docs/sim-scenarios.md.
 */
#ifndef CAPVISOR_SIM_H
#define CAPVISOR_SIM_H

#include "sched/sched.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_MAX_VCPUS	4096
#define SIM_ERR_LEN	512

enum sim_work_type { WORK_BUSY, WORK_PERIODIC, WORK_RANDOM, WORK_LOCK, WORK_IDLE };

struct sim_vcpu_spec {
	char name[SCHED_NAME_MAX - 12];	/* instances add a number */
	unsigned int count;
	uint32_t weight;		/* 0: from nice */
	int nice;
	bool has_uclamp;
	unsigned int uclamp_min, uclamp_max;
	unsigned int perf_request;	/* guest performance request, 0 = none */
	char cluster[SCHED_NAME_MAX];	/* "" = any */
	struct sched_dl_params dl;	/* runtime 0 = none */
	uint64_t cap_quota_ns, cap_period_ns;	/* 0, 0 = no cap */
	uint64_t start_ns;
	enum sim_work_type type;
	uint64_t run_ns, period_ns;		/* periodic */
	uint64_t run_mean_ns, sleep_mean_ns;	/* random */
	char group[SCHED_NAME_MAX];		/* lock */
	char sched_group[SCHED_NAME_MAX];	/* engine group, "" = the root */
	uint64_t cs_ns, ncs_ns, ple_ns;
	bool yield_to;
};

/* An engine group (sched_group_add); parents come before their children. */
struct sim_group_spec {
	char name[SCHED_NAME_MAX];
	char parent[SCHED_NAME_MAX];	/* "" = the root */
	uint32_t weight;
	uint64_t cap_quota_ns, cap_period_ns;	/* 0, 0 = no cap */
};

struct sim_scenario {
	uint64_t duration_ns, tick_ns, seed;
	uint64_t slice_ns;		/* 0 = engine default */
	bool exact_cbs;			/* stop at sched_next_event() too */
	/*
	 * supply: the window and latency admission assumes (the engine's
	 * dl_supply_*), and with duty_cycle the simulator delivers work as
	 * the dispatcher does: on-parts at fixed slots (supply.c).
	 */
	uint64_t window_ns, latency_ns;
	bool duty_cycle;
	struct sched_topology topo;
	unsigned int nr_specs;
	struct sim_vcpu_spec *specs;
	unsigned int nr_groups;
	struct sim_group_spec *groups;
};

/* scenario.c: parse a scenario file; errors name the JSON path. */
int sim_scenario_load(const char *path, struct sim_scenario *sc, char *err, size_t errlen);
void sim_scenario_free(struct sim_scenario *sc);

/* Per-vCPU state of the simulated workload. */
enum sim_phase { PH_RUN, PH_SLEEP, PH_SPIN, PH_CS, PH_NCS, PH_OFF };

struct sim_lock_group {
	char name[SCHED_NAME_MAX];
	int holder;			/* vCPU index or -1 */
	uint64_t completed;
	bool yield_to;
	uint64_t yield_to_calls, yield_to_boosted;
};

/*
 * What every switch and event touches first (exactly one cache line: the
 * array is line-aligned), the name last.
 */
struct sim_vcpu {
	const struct sim_vcpu_spec *spec;
	int id;				/* engine entity */
	int cpu;			/* running on, or -1 */
	unsigned int level;
	enum sim_phase phase;
	uint64_t rem;			/* work left in ns x 1024 (UINT64_MAX: forever) */
	uint64_t next_event;
	uint64_t synced_at;		/* progress accounted up to here */
	uint64_t wake_at;		/* PH_SLEEP */
	uint64_t next_arrival;		/* periodic */
	uint64_t spun;			/* running ns spent spinning since the last PLE exit */
	int group;			/* lock group index or -1 */
	bool rejected;
	bool started;			/* first phase begun (start_us passed) */
	uint64_t jobs;			/* periodic jobs / random bursts completed */
	uint64_t late_jobs;		/* periodic jobs done after their deadline */
	uint64_t delivered;		/* work the supply delivered, ns x 1024 */
	uint64_t util_sum, util_samples;
	char name[SCHED_NAME_MAX];
} __attribute__((aligned(64)));

struct sim_rejection {
	char vcpu[SCHED_NAME_MAX];
	int code;
	char message[512];
};

struct sim_trace;

#define SIM_NO_EVENT	UINT64_MAX

struct sim {
	const struct sim_scenario *sc;
	struct sched *s;
	uint64_t now, rng;
	unsigned int nr_vcpus, nr_groups, nr_rejected;
	struct sim_vcpu *vcpu;
	struct sim_lock_group *groups;
	struct sim_rejection *rejected;
	/*
	 * Per pCPU, as the engine's events leave them (the last SWITCH's
	 * next entity, the last PERF level of its cluster), so that a refresh
	 * need not ask the engine.
	 */
	int *next;
	unsigned int *level;
	int *curr;			/* vCPU index per pCPU, or -1 */
	unsigned int *dirty, nr_dirty;	/* pCPUs switched since the last refresh */
	bool *is_dirty;
	struct sim_trace *trace;
	uint64_t steps;
	bool exact;			/* reservations present and exact_cbs */
	uint64_t *evq;			/* evq.c: tournament tree, root at [1] */
	uint64_t *slot_offset;		/* duty cycle: each pCPU's slot in the window */
	unsigned int evq_leaves;
};

/* run.c */
/*
 * trace: the --trace file, open for writing, or NULL; sim->trace owns it
 * once set (trace_close() closes it), the caller until then. Errors name the
 * scenario field.
 */
int sim_setup(struct sim *sim, const struct sim_scenario *sc, FILE *trace, char *err,
	      size_t errlen);
void sim_run(struct sim *sim);
void sim_teardown(struct sim *sim);
/* Re-read every pCPU whose generation changed; call after each engine call. */
void sim_refresh(struct sim *sim);

/* workload.c */
void workload_init(struct sim *sim, struct sim_vcpu *v);
void workload_event(struct sim *sim, unsigned int idx);
void workload_on_cpu(struct sim *sim, unsigned int idx);
void workload_next_event(struct sim *sim, struct sim_vcpu *v);
void workload_sync(struct sim *sim, struct sim_vcpu *v);
void workload_account(struct sim *sim, struct sim_vcpu *v);

/* A busy vCPU (work without end): no events, no progress to account. */
static inline bool workload_always_busy(const struct sim_vcpu *v)
{
	return v->phase == PH_RUN && v->rem == UINT64_MAX;
}

/* supply.c: work (ns x 1024) a pCPU at level delivers in [t0, t1), and its inverse. */
void supply_init(struct sim *sim, struct sched_config *cfg);
uint64_t supply_work(const struct sim *sim, int cpu, unsigned int level, uint64_t t0,
		     uint64_t t1);
uint64_t supply_done_at(const struct sim *sim, int cpu, unsigned int level, uint64_t t0,
			uint64_t work);

/* rand.c */
uint64_t sim_rand(struct sim *sim);
uint64_t sim_exp(struct sim *sim, uint64_t mean_ns);
double sim_ln_u53(uint64_t k);	/* ln k for 1 <= k <= 2^53, libm-free */

/* evq.c: the vCPUs ordered by (next_event, index); set next_event, then evq_update(). */
int evq_init(struct sim *sim, unsigned int n);
void evq_free(struct sim *sim);
void evq_update(struct sim *sim, unsigned int idx);

/*
 * Tree entries pack (next_event, index) into one word, the time in the
 * high bits (capped beyond any scenario's duration) so that one unsigned
 * compare orders both; SIM_NO_EVENT stays all ones.
 */
#define EVQ_IDX_BITS	16
#define EVQ_IDX_MASK	((1ull << EVQ_IDX_BITS) - 1)

/* The vCPU with the earliest event (-1 if none). */
static inline int evq_first(const struct sim *sim)
{
	return sim->evq[1] == SIM_NO_EVENT ? -1 : (int)(sim->evq[1] & EVQ_IDX_MASK);
}

/*
 * The time from the packed word, without reading the vCPU: exact below
 * 2^48 ns (3.2 days), capped at that beyond, which compares the same with
 * any time of a scenario (at most one day).
 */
static inline uint64_t evq_first_key(const struct sim *sim)
{
	return sim->evq[1] == SIM_NO_EVENT ? SIM_NO_EVENT : sim->evq[1] >> EVQ_IDX_BITS;
}

/* result.c */
int sim_write_result(const struct sim *sim, FILE *f);

/* trace.c */
/* Takes f on success only. */
struct sim_trace *trace_open(FILE *f, const struct sim *sim, unsigned int nr_vcpus,
			     char *err, size_t errlen);
void trace_event(void *opaque, const struct sched_event *ev);
int trace_close(struct sim_trace *t, uint64_t end_ns);

#endif
