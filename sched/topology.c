// SPDX-License-Identifier: MIT
/*
 * Topology: clusters of identical pCPUs, each a performance domain with
 * ascending performance levels whose top is the cluster's capacity.
 * Validation names the offending field, e.g. "clusters[1].capacity".
 */
#include "sched/internal.h"

static int check_levels(struct sched_cluster_desc *d, unsigned int c, char *err, size_t errlen)
{
	if (d->nr_levels > SCHED_MAX_LEVELS)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "clusters[%u].nr_levels: %u exceeds %u", c, d->nr_levels,
				  SCHED_MAX_LEVELS);
	for (unsigned int i = 0; i < d->nr_levels; i++) {
		if (d->levels[i] < 1 || d->levels[i] > d->capacity)
			return sched_errf(err, errlen, SCHED_E_INVAL,
					  "clusters[%u].levels[%u]: %u out of range 1..%u", c, i,
					  d->levels[i], d->capacity);
		if (i && d->levels[i] <= d->levels[i - 1])
			return sched_errf(err, errlen, SCHED_E_INVAL,
					  "clusters[%u].levels[%u]: %u not above the previous level %u",
					  c, i, d->levels[i], d->levels[i - 1]);
	}
	if (d->nr_levels && d->levels[d->nr_levels - 1] != d->capacity)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "clusters[%u].levels: the top level %u must equal the capacity %u",
				  c, d->levels[d->nr_levels - 1], d->capacity);
	return 0;
}

static int check_cluster(const struct sched_topology *topo, unsigned int c, char *err,
			 size_t errlen)
{
	const struct sched_cluster_desc *d = &topo->clusters[c];

	if (!memchr(d->name, '\0', sizeof(d->name)) || !d->name[0])
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "clusters[%u].name: expected 1..%d characters", c,
				  SCHED_NAME_MAX - 1);
	for (unsigned int j = 0; j < c; j++)
		if (!strcmp(topo->clusters[j].name, d->name))
			return sched_errf(err, errlen, SCHED_E_INVAL,
					  "clusters[%u].name: '%s' already used by clusters[%u]", c,
					  d->name, j);
	if (d->capacity < 1 || d->capacity > SCHED_CAPACITY_SCALE)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "clusters[%u].capacity: %u out of range 1..1024", c, d->capacity);
	if (d->nr_cpus < 1)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "clusters[%u].cpus: empty cluster (expected at least 1 pCPU)", c);
	return 0;
}

int topology_build(struct sched *s, const struct sched_topology *topo, char *err, size_t errlen)
{
	unsigned int cpu = 0;
	int ret;

	if (topo->nr_clusters < 1 || topo->nr_clusters > SCHED_MAX_CLUSTERS)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "clusters: %u clusters, expected 1..%d", topo->nr_clusters,
				  SCHED_MAX_CLUSTERS);
	for (unsigned int c = 0; c < topo->nr_clusters; c++) {
		struct sched_cluster *cl = &s->cluster[c];

		ret = check_cluster(topo, c, err, errlen);
		if (ret)
			return ret;
		if (cpu + topo->clusters[c].nr_cpus > SCHED_MAX_CPUS)
			return sched_errf(err, errlen, SCHED_E_INVAL,
					  "clusters[%u].cpus: total pCPUs exceed %d", c,
					  SCHED_MAX_CPUS);
		cl->desc = topo->clusters[c];
		ret = check_levels(&cl->desc, c, err, errlen);
		if (ret)
			return ret;
		cl->first_cpu = cpu;
		/* Start at the top level, like a CPU at boot; the tick lowers it. */
		cl->level = cl->desc.capacity;
		cl->requested = cl->level;
		for (unsigned int i = 0; i < cl->desc.nr_cpus; i++, cpu++)
			sched_cpumask_set(&s->all_cpus, cpu);
		s->total_capacity += (uint64_t)cl->desc.capacity * cl->desc.nr_cpus;
		if (cl->desc.capacity > s->max_capacity)
			s->max_capacity = cl->desc.capacity;
	}
	s->nr_clusters = topo->nr_clusters;
	s->nr_cpus = cpu;
	for (unsigned int c = 0; c < s->nr_clusters; c++)
		for (unsigned int o = 0; o < s->nr_clusters; o++)
			if (s->cluster[o].desc.capacity > s->cluster[c].desc.capacity)
				for (unsigned int i = 0; i < s->cluster[o].desc.nr_cpus; i++)
					sched_cpumask_set(&s->cluster[c].bigger,
							  s->cluster[o].first_cpu + i);
	return 0;
}

unsigned int sched_nr_cpus(const struct sched *s)
{
	return s->nr_cpus;
}

unsigned int sched_nr_clusters(const struct sched *s)
{
	return s->nr_clusters;
}

int sched_cpu_cluster(const struct sched *s, unsigned int cpu)
{
	return cpu < s->nr_cpus ? (int)s->rq[cpu].cluster : -SCHED_E_NOENT;
}

int sched_cluster_find(const struct sched *s, const char *name)
{
	for (unsigned int c = 0; c < s->nr_clusters; c++)
		if (!strcmp(s->cluster[c].desc.name, name))
			return (int)c;
	return -SCHED_E_NOENT;
}

const struct sched_cluster_desc *sched_cluster_desc(const struct sched *s, unsigned int cluster)
{
	return cluster < s->nr_clusters ? &s->cluster[cluster].desc : NULL;
}

int sched_cluster_mask(const struct sched *s, unsigned int cluster, struct sched_cpumask *mask)
{
	const struct sched_cluster *cl;

	if (cluster >= s->nr_clusters)
		return -SCHED_E_NOENT;
	cl = &s->cluster[cluster];
	sched_cpumask_clear(mask);
	for (unsigned int i = 0; i < cl->desc.nr_cpus; i++)
		sched_cpumask_set(mask, cl->first_cpu + i);
	return 0;
}
