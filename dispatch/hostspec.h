/* SPDX-License-Identifier: MIT */
/*
 * The emulated host: clusters of pCPUs with a capacity and performance
 * levels, and how those pCPUs are backed by real host CPUs.
 *
 *   --host big=1:1024,little=2:512:levels=256,384,512:mhz=1200,1800,2400
 *
 * Emulated capacity is backed by host time: a pCPU of capacity C needs C/1024
 * of a host CPU, so pCPUs are packed onto host CPUs (first fit, biggest
 * first) and a spec that needs more than the host has is rejected.
 */
#ifndef CAPVISOR_HOSTSPEC_H
#define CAPVISOR_HOSTSPEC_H

#include <stddef.h>

#include "sched/sched.h"

/* Limits of --host; where the engine has the same limit, it is the engine's. */
#define HOST_MAX_CLUSTERS	8
#define HOST_MAX_LEVELS		16
#define HOST_MAX_PCPUS		SCHED_MAX_CPUS
#define HOST_NAME_MAX_LEN	(SCHED_NAME_MAX - 1)	/* without the NUL */
_Static_assert(HOST_MAX_CLUSTERS <= SCHED_MAX_CLUSTERS, "every --host cluster is an engine cluster");
_Static_assert(HOST_MAX_LEVELS <= SCHED_MAX_LEVELS, "every --host level is an engine level");
#define HOST_TOP_MHZ		3000	/* default MHz of capacity 1024 */

struct host_cluster_spec {
	char name[HOST_NAME_MAX_LEN + 1];
	unsigned int count;		/* pCPUs in the cluster */
	unsigned int capacity;		/* 1..1024 */
	unsigned int nr_levels;
	unsigned int levels[HOST_MAX_LEVELS];	/* ascending, last == capacity */
	unsigned int mhz[HOST_MAX_LEVELS];	/* MHz of each level */
};

struct host_spec {
	unsigned int nr_clusters;
	struct host_cluster_spec clusters[HOST_MAX_CLUSTERS];
};

/* Parse SPEC; on error fills err (naming the part that is wrong) and returns -EINVAL. */
int host_spec_parse(const char *spec, struct host_spec *out, char *err, size_t errlen);
/*
 * One 1024-capacity pCPU per host CPU, each its own cluster "cpuN" (its own
 * performance domain, as x86 cores are); one cluster "host" for them all
 * when there are more than HOST_MAX_CLUSTERS host CPUs.
 */
void host_spec_default(struct host_spec *out, unsigned int nr_host_cpus);
unsigned int host_spec_nr_pcpus(const struct host_spec *spec);
/* Cluster index of pCPU p (pCPUs are numbered cluster by cluster). */
int host_spec_cluster_of(const struct host_spec *spec, unsigned int pcpu);
int host_spec_find_cluster(const struct host_spec *spec, const char *name);
/*
 * Pack pCPUs onto host CPUs so that no host CPU backs more than 1024 of
 * capacity. Fills host_cpu[p] for every pCPU. -ENOSPC with the numbers in
 * err when the host CPUs cannot back the spec.
 */
int host_spec_place(const struct host_spec *spec, unsigned int nr_host_cpus,
		    unsigned int *host_cpu, char *err, size_t errlen);

#endif
