// SPDX-License-Identifier: MIT
/*
 * Scheduling engine micro-benchmark.
 *
 *   bench_sched [decisions|clamps|groups]
 *
 * decisions: ns per scheduling decision at 8, 64 and 1024 entities on 4,
 *   16 and 64 pCPUs. One decision is one engine event with the work it
 *   triggers: a block (dequeue + pick of the next entity), a wakeup
 *   (placement + enqueue + preemption check + pick) or a pCPU tick
 *   (runtime accounting, slice, PELT), in equal numbers. Median of 31
 *   batches of 3000 decisions.
 * clamps: the same workload at 64 entities on 16 pCPUs with no clamp set,
 *   with clamps set on every entity; built with -DSCHED_NO_UCLAMP the
 *   engine has clamp support compiled out (bench_sched.sh builds that
 *   variant and prints all three).
 * groups: the decisions at 1024 entities on 16 and 64 pCPUs without
 *   groups and with every entity in one of 32 groups (VMs) of two
 *   subgroups each, every other VM capped at 4 pCPUs, interleaved; and the
 *   periodic tick with the fluid balance solving the hierarchical ideal.
 */
#include "bench/bench_util.h"
#include "sched/sched.h"
#include "tests/lib/xorshift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCHES		31
#define PER_BATCH	3000

static uint64_t rng = 88172645463325252ull;

struct world {
	struct sched *s;
	unsigned int n, ncpu;
	int *ids;
	bool *runnable;
	uint64_t t;
};

static struct sched *make(unsigned int ncpu)
{
	struct sched_topology topo;
	char err[256];
	struct sched *s;

	memset(&topo, 0, sizeof(topo));
	topo.nr_clusters = 2;
	snprintf(topo.clusters[0].name, SCHED_NAME_MAX, "big");
	topo.clusters[0].nr_cpus = ncpu / 2;
	topo.clusters[0].capacity = 1024;
	snprintf(topo.clusters[1].name, SCHED_NAME_MAX, "little");
	topo.clusters[1].nr_cpus = ncpu - ncpu / 2;
	topo.clusters[1].capacity = 512;
	s = sched_create(&topo, NULL, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "bench_sched: %s\n", err);
		exit(1);
	}
	return s;
}

#define BENCH_VMS	32

/* 32 VMs of two subgroups each, every other VM capped at 4 pCPUs; ids in *gids. */
static void make_groups(struct sched *s, int *gids)
{
	for (int v = 0; v < BENCH_VMS; v++) {
		char name[16];
		int vm;

		snprintf(name, sizeof(name), "vm%d", v);
		vm = sched_group_add(s, name, SCHED_NONE, 512 + 64 * (uint32_t)v, 0, NULL, 0);
		if (v % 2 && sched_group_set_cap(s, vm, 40000000, 10000000, 0, NULL, 0))
			exit(1);
		for (int k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "vm%d.%d", v, k);
			gids[2 * v + k] = sched_group_add(s, name, vm, 1024, 0, NULL, 0);
		}
	}
}

static bool with_groups;

static void setup(struct world *w, unsigned int n, unsigned int ncpu, bool clamps)
{
	struct sched_entity_params p;
	int gids[2 * BENCH_VMS];

	memset(w, 0, sizeof(*w));
	w->s = make(ncpu);
	w->n = n;
	w->ncpu = ncpu;
	w->ids = calloc(n, sizeof(*w->ids));
	w->runnable = calloc(n, sizeof(*w->runnable));
	if (with_groups)
		make_groups(w->s, gids);
	for (unsigned int i = 0; i < n; i++) {
		sched_entity_params_init(&p, "e");
		p.weight = 100 + (uint32_t)(xorshift64(&rng) % 3000);
		p.runnable = (i % 4) != 0;	/* 3/4 runnable: queues are long */
		if (clamps) {
			p.uclamp_min = (unsigned int)(xorshift64(&rng) % 400);
			p.uclamp_max = 600 + (unsigned int)(xorshift64(&rng) % 425);
		}
		if (with_groups)
			p.group = gids[i % (2 * BENCH_VMS)];
		w->ids[i] = sched_entity_add(w->s, &p, 0, NULL, 0);
		w->runnable[i] = p.runnable;
	}
}

static void teardown(struct world *w)
{
	sched_destroy(w->s);
	free(w->ids);
	free(w->runnable);
}

/* One decision of each kind, time advancing 10 us per decision. */
static void three_decisions(struct world *w)
{
	unsigned int i = (unsigned int)(xorshift64(&rng) % w->n);
	unsigned int j = (unsigned int)(xorshift64(&rng) % w->n);

	w->t += 10000;
	if (w->runnable[i]) {
		sched_block(w->s, w->ids[i], w->t);
		w->runnable[i] = false;
	} else {
		sched_wakeup(w->s, w->ids[i], w->t);
		w->runnable[i] = true;
	}
	w->t += 10000;
	if (!w->runnable[j]) {
		sched_wakeup(w->s, w->ids[j], w->t);
		w->runnable[j] = true;
	} else {
		sched_block(w->s, w->ids[j], w->t);
		w->runnable[j] = false;
	}
	w->t += 10000;
	sched_tick_cpu(w->s, (unsigned int)(xorshift64(&rng) % w->ncpu), w->t);
}

static double median_ns(unsigned int n, unsigned int ncpu, bool clamps)
{
	uint64_t samples[BATCHES];
	struct world w;

	setup(&w, n, ncpu, clamps);
	for (int k = 0; k < PER_BATCH; k++)	/* warm up */
		three_decisions(&w);
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = now_ns();

		for (int k = 0; k < PER_BATCH / 3; k++)
			three_decisions(&w);
		samples[b] = now_ns() - t0;
	}
	teardown(&w);
	qsort(samples, BATCHES, sizeof(samples[0]), cmp_u64);
	return (double)samples[BATCHES / 2] / PER_BATCH;
}

/* Full periodic tick cost (all pCPUs, balance, perf) per pCPU. */
static double tick_ns(unsigned int n, unsigned int ncpu)
{
	uint64_t samples[BATCHES];
	struct world w;

	setup(&w, n, ncpu, false);
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = now_ns();

		for (int k = 0; k < 50; k++) {
			w.t += 1000000;
			sched_tick(w.s, w.t);
		}
		samples[b] = now_ns() - t0;
	}
	teardown(&w);
	qsort(samples, BATCHES, sizeof(samples[0]), cmp_u64);
	return (double)samples[BATCHES / 2] / 50 / ncpu;
}

static void decisions(void)
{
	static const unsigned int ents[] = { 8, 64, 1024 }, cpus[] = { 4, 16, 64 };

	printf("engine: ns per scheduling decision (median; wakeup, block+pick, tick accounting)\n");
	printf("%10s", "entities");
	for (unsigned int c = 0; c < 3; c++)
		printf("  %4u pCPUs", cpus[c]);
	printf("\n");
	for (unsigned int e = 0; e < 3; e++) {
		printf("%10u", ents[e]);
		for (unsigned int c = 0; c < 3; c++)
			printf("  %10.0f", median_ns(ents[e], cpus[c], false));
		printf("\n");
	}
	printf("engine: periodic tick (accounting, CBS, PELT, perf, balance), ns per pCPU\n");
	for (unsigned int c = 0; c < 3; c++)
		printf("  %u entities on %u pCPUs: %.0f ns\n", 1024u, cpus[c], tick_ns(1024, cpus[c]));
}

static void clamps(void)
{
#ifdef SCHED_NO_UCLAMP
	printf("clamp support compiled out: %.1f ns per decision\n", median_ns(64, 16, false));
#else
	printf("no clamp set:               %.1f ns per decision\n", median_ns(64, 16, false));
	printf("clamps set on every entity: %.1f ns per decision\n", median_ns(64, 16, true));
#endif
}

static void groups(void)
{
	static const unsigned int cpus[] = { 16, 64 };

	printf("groups: 1024 entities, ns per decision (3 interleaved runs) and tick per pCPU\n");
	for (unsigned int c = 0; c < 2; c++) {
		for (int run = 0; run < 3; run++) {
			with_groups = false;
			printf("  %2u pCPUs: no groups %.0f ns, tick %.0f ns;", cpus[c],
			       median_ns(1024, cpus[c], false), tick_ns(1024, cpus[c]));
			with_groups = true;
			printf(" in %d groups %.0f ns, tick %.0f ns\n", 3 * BENCH_VMS,
			       median_ns(1024, cpus[c], false), tick_ns(1024, cpus[c]));
			with_groups = false;
		}
	}
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "decisions";

	if (!strcmp(what, "decisions")) {
		decisions();
	} else if (!strcmp(what, "clamps")) {
		clamps();
	} else if (!strcmp(what, "groups")) {
		groups();
	} else {
		fprintf(stderr, "usage: bench_sched [decisions|clamps|groups]\n");
		return 2;
	}
	return 0;
}
