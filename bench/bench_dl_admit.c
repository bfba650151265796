// SPDX-License-Identifier: MIT
/*
 * Admission cost of deadline reservations: 1024 reservations on 64 pCPUs
 * (four clusters of 16: capacities 1024, 768, 512, 256).
 *
 *   bench_dl_admit
 *
 * easy: densities that leave a third of the room free, any pCPU: every
 *   admission is a first fit. Per admission: median, p99, max.
 * packed: a known placement (each pCPU filled to 82-92% of the limit in
 *   16 pieces, half pinned to their cluster), arriving smallest first,
 *   which makes first fit fail and admission re-pack all reservations.
 *   Per admission, and how many admissions re-packed (moved others).
 * refused: with the packed set admitted, 0.1-density reservations (any
 *   pCPU) until the first is refused: the cost of the last admissions
 *   (re-packs of 1024+ reservations) and of the refusal (a re-pack search
 *   that finds nothing, up to its step bound).
 */
#include "bench/bench_util.h"
#include "sched/sched.h"
#include "tests/lib/dl_host64.h"
#include "tests/lib/xorshift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NR_RES		1024
#define NR_CPUS		HOST64_CPUS
#define MS		1000000ull

static uint64_t rng = 0x2545f4914f6cdd1dull;

struct res {
	struct sched_dl_params dl;
	int cluster;	/* -1: any pCPU */
	double density;
};

static double cpu_cap(unsigned int cpu)
{
	return host64_capacity(cpu / HOST64_CLUSTER_CPUS) / 1024.0;
}

static struct sched *make(void)
{
	struct sched_topology t;
	char err[256];
	struct sched *s;

	host64_topology(&t);
	s = sched_create(&t, NULL, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "bench_dl_admit: %s\n", err);
		exit(1);
	}
	return s;
}

static struct sched_dl_params params(double density)
{
	uint64_t period, deadline;

	host64_random_timing(&rng, &period, &deadline);
	return (struct sched_dl_params){ (uint64_t)(density * (double)deadline), deadline, period };
}

static void gen_easy(struct res *r)
{
	for (unsigned int i = 0; i < NR_RES; i++) {
		unsigned int cpu = i % NR_CPUS;
		double cap = cpu_cap(cpu);

		r[i].density = xorshift_uniform(&rng, 0.2, 0.6) * 0.95 * cap / (NR_RES / NR_CPUS);
		r[i].dl = params(r[i].density);
		r[i].cluster = -1;
	}
}

static void gen_packed(struct sched *s, struct res *r)
{
	for (unsigned int cpu = 0, n = 0; cpu < NR_CPUS; cpu++) {
		double fill = xorshift_uniform(&rng, 0.82, 0.92) * 0.95, cap = cpu_cap(cpu);

		for (unsigned int k = 0; k < NR_RES / NR_CPUS; k++, n++) {
			r[n].density = fill * cap / (NR_RES / NR_CPUS) * xorshift_uniform(&rng, 0.5, 1.5) / 1.02;
			r[n].dl = params(r[n].density);
			r[n].cluster = xorshift64(&rng) % 2 ? sched_cpu_cluster(s, cpu) : -1;
		}
	}
}

static int cmp_density(const void *a, const void *b)
{
	const struct res *x = a, *y = b;

	return x->density < y->density ? -1 : x->density > y->density;
}

/* Admit all of r in order; print per-admission figures. */
/* Reservations whose pCPU changed since the last call (ids[0..n), outside the timing). */
static unsigned int count_moved(struct sched *s, const int *ids, unsigned int n, int *where)
{
	unsigned int moved = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct sched_entity_info info;

		if (ids[i] < 0 || sched_entity_info(s, ids[i], &info))
			continue;
		moved += where[i] >= 0 && where[i] != info.dl_cpu;
		where[i] = info.dl_cpu;
	}
	return moved;
}

static struct sched *admit_all(const char *name, struct res *r)
{
	static uint64_t cost[NR_RES];
	static int ids[NR_RES], where[NR_RES];
	struct sched *s = make();
	unsigned int refused = 0, repacks = 0, moves = 0;
	uint64_t total = 0;
	char err[512];

	for (unsigned int i = 0; i < NR_RES; i++) {
		uint64_t t0 = now_ns();
		unsigned int m;

		ids[i] = dl_add_pinned(s, "r", r[i].dl, r[i].cluster, err, sizeof(err));
		cost[i] = now_ns() - t0;
		total += cost[i];
		where[i] = -1;
		if (ids[i] < 0 && !refused++)
			fprintf(stderr, "%s: #%u refused: %s\n", name, i, err);
		m = count_moved(s, ids, i + 1, where);
		repacks += m > 0;
		moves += m;
	}
	qsort(cost, NR_RES, sizeof(cost[0]), cmp_u64);
	printf("  %-8s %4u admitted, %u refused, %3u re-packs (%u moves): per admission "
	       "median %.1f us, p99 %.1f us, max %.1f us; all %u: %.1f ms\n", name,
	       NR_RES - refused, refused, repacks, moves, cost[NR_RES / 2] / 1e3,
	       cost[NR_RES * 99 / 100] / 1e3, cost[NR_RES - 1] / 1e3, NR_RES, total / 1e6);
	return s;
}

int main(void)
{
	static struct res r[NR_RES];
	struct sched *s = make();
	struct res big = { .cluster = -1 };
	char err[512];
	uint64_t t0, worst = 0;

	printf("admission: %u reservations on %u pCPUs (4 clusters: 1024/768/512/256)\n", NR_RES,
	       NR_CPUS);
	gen_easy(r);
	sched_destroy(admit_all("easy", r));
	gen_packed(s, r);
	sched_destroy(s);
	qsort(r, NR_RES, sizeof(r[0]), cmp_density);
	s = admit_all("packed", r);
	big.dl = (struct sched_dl_params){ 1 * MS, 10 * MS, 10 * MS };
	for (unsigned int extra = 0;; extra++) {
		uint64_t dt;

		t0 = now_ns();
		if (dl_add_pinned(s, "r", big.dl, big.cluster, err, sizeof(err)) >= 0) {
			dt = now_ns() - t0;
			worst = dt > worst ? dt : worst;
			continue;
		}
		printf("  fill     %u more 0.1 reservations admitted, the slowest in %.2f ms\n",
		       extra, worst / 1e6);
		printf("  refused  the next one: %.2f ms (%.50s)\n", (now_ns() - t0) / 1e6,
		       strstr(err, "(") ? strstr(err, "(") : err);
		break;
	}
	sched_destroy(s);
	return 0;
}
