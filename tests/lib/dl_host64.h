/* SPDX-License-Identifier: MIT */
/*
 * The host and reservation timing that the deadline-admission test
 * (tests/unit/test_sched_dl_admit.c) and its benchmark (bench/bench_dl_admit.c)
 * share: 64 pCPUs in four clusters of 16 (capacities 1024, 768, 512, 256),
 * and periods of 5-20 ms whose deadline is the period (two thirds of them)
 * or a constrained one in [period / 2, period), and how a reservation of
 * theirs is added.
 */
#ifndef CAPVISOR_TESTS_DL_HOST64_H
#define CAPVISOR_TESTS_DL_HOST64_H

#include <stdio.h>
#include <string.h>

#include "sched/sched.h"
#include "tests/lib/xorshift.h"

#define HOST64_CLUSTERS		4
#define HOST64_CLUSTER_CPUS	16
#define HOST64_CPUS		(HOST64_CLUSTERS * HOST64_CLUSTER_CPUS)

static inline unsigned int host64_capacity(unsigned int cluster)
{
	static const unsigned int capacity[HOST64_CLUSTERS] = { 1024, 768, 512, 256 };

	return capacity[cluster];
}

/* Clusters "c0".."c3", fastest first. */
static inline void host64_topology(struct sched_topology *t)
{
	memset(t, 0, sizeof(*t));
	t->nr_clusters = HOST64_CLUSTERS;
	for (unsigned int c = 0; c < HOST64_CLUSTERS; c++) {
		snprintf(t->clusters[c].name, SCHED_NAME_MAX, "c%u", c);
		t->clusters[c].nr_cpus = HOST64_CLUSTER_CPUS;
		t->clusters[c].capacity = host64_capacity(c);
	}
}

/*
 * Add reservation dl at time 0, not runnable, pinned to cluster (-1: any
 * pCPU). Returns the id or a negative SCHED_E_* (why in err).
 */
static inline int dl_add_pinned(struct sched *s, const char *name, struct sched_dl_params dl,
				int cluster, char *err, size_t errlen)
{
	struct sched_entity_params p;

	sched_entity_params_init(&p, name);
	p.dl = dl;
	if (cluster >= 0)
		sched_cluster_mask(s, (unsigned int)cluster, &p.affinity);
	return sched_entity_add(s, &p, 0, err, errlen);
}

/* A random period and deadline, in ns (the random calls in a fixed order). */
static inline void host64_random_timing(uint64_t *rng, uint64_t *period, uint64_t *deadline)
{
	const uint64_t ms = 1000000ull;

	*period = (5 + xorshift64(rng) % 16) * ms;
	*deadline = xorshift64(rng) % 3 ? *period : *period / 2 + xorshift64(rng) % (*period / 2);
}

#endif
