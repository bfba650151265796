// SPDX-License-Identifier: MIT
/*
 * Reservations that are kept: partitioned admission (one pCPU each, the
 * pCPU's density x 1024/capacity within the limit), re-packing when first
 * fit fails, refusals that change nothing, density for constrained
 * deadlines, the level a reserved pCPU keeps, and no migration but the
 * admission's own. The loads are recomputed here from the parameters, in
 * exact integer arithmetic, not with the engine's helpers.
 */
#include "tests/lib/dl_host64.h"
#include "tests/lib/xorshift.h"
#include "tests/unit/test_sched_util.h"

#include <stdlib.h>

/* sum(runtime/deadline) x 1024/capacity <= permille/1000, exactly (cross-multiplied). */
static bool cpu_within_limit(struct sched *s, unsigned int cpu, unsigned int permille)
{
	long double load = 0;	/* only for the message */
	unsigned __int128 num = 0, den = 1;
	unsigned int cap = s->rq[cpu].capacity;

	for (unsigned int i = 0; i < s->nr_ent_slots; i++) {
		struct sched_entity_info info;

		if (!s->ent[i] || sched_entity_info(s, (int)i, &info) || !info.deadline ||
		    info.dl_cpu != (int)cpu)
			continue;
		/* num/den += r/d, kept exact while the denominators stay small */
		num = num * info.dl.deadline_ns + (unsigned __int128)info.dl.runtime_ns * den;
		den *= info.dl.deadline_ns;
		while (den > ((unsigned __int128)1 << 80)) {	/* rescale, rounding the sum up */
			num = (num >> 20) + 1;
			den >>= 20;
		}
		load += (long double)info.dl.runtime_ns / info.dl.deadline_ns;
	}
	if (num * 1024 * 1000 > (unsigned __int128)permille * cap * den) {
		fprintf(stderr, "pCPU %u (capacity %u): density %.4Lf x 1024/cap over %u/1000\n",
			cpu, cap, load, permille);
		return false;
	}
	return true;
}

static bool all_within_limit(struct sched *s)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (!cpu_within_limit(s, cpu, 950))
			return false;
	return true;
}

static struct sched_dl_params dl_params(uint64_t runtime, uint64_t deadline, uint64_t period)
{
	return (struct sched_dl_params){ runtime, deadline, period };
}

/*
 * One big pCPU, three little ones; 6/10 fits only the big one. The second
 * is refused (through add and through set_reservation), the message names
 * the clusters with their numbers, nothing changes, and the first one,
 * beside busy fair entities, misses nothing.
 */
static void test_dl_big_only_second_refused(void)
{
	struct sched *s = mk_sched(1, 1024, 3, 512, NULL);
	struct sched_dl_params dl = dl_params(6 * MS, 10 * MS, 10 * MS);
	struct sched_entity_info before, after;
	struct sched_entity_stats st;
	struct sched_entity_params p;
	uint64_t used0, used1, now = 0;
	char err[512];
	int a, b;

	a = add_dl(s, "a", dl.runtime_ns, dl.deadline_ns, dl.period_ns, true, 0);
	CU_ASSERT_FATAL(a >= 0);
	CU_ASSERT_EQUAL(sched_ent(s, a)->dl_cpu, 0);
	sched_entity_params_init(&p, "b");
	p.dl = dl;
	p.runnable = true;
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_BANDWIDTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "big pCPUs 0-0 cap 1024: 0.350 free of 0.950"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "little pCPUs 1-3 cap 512: 0.475 free of 0.475"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no solution"));
	b = add_ent(s, "b", 1024, true, 0);
	for (int i = 0; i < 4; i++)
		add_ent(s, "busy", 1024, true, 0);
	sched_entity_info(s, b, &before);
	sched_dl_bandwidth(s, &used0, NULL);
	CU_ASSERT_EQUAL(sched_set_reservation(s, b, &dl, 0, err, sizeof(err)), -SCHED_E_BANDWIDTH);
	sched_entity_info(s, b, &after);
	sched_dl_bandwidth(s, &used1, NULL);
	CU_ASSERT_EQUAL(memcmp(&before, &after, sizeof(before)), 0);
	CU_ASSERT_EQUAL(used0, used1);
	run_until(s, &now, 1000 * MS, MS);
	sched_entity_stats(s, a, &st);
	CU_ASSERT_EQUAL(st.nr_deadline_misses, 0);
	CU_ASSERT(st.work_ns >= 99 * dl.runtime_ns);
	CU_ASSERT(all_within_limit(s));
	sched_destroy(s);
}

static unsigned int nr_admission_moves, nr_other_dl_moves;

static void count_moves(void *opaque, const struct sched_event *ev)
{
	struct sched *s = *(struct sched **)opaque;

	if (ev->type != SCHED_EV_MIGRATE || !dl_entity(sched_ent(s, ev->entity)))
		return;
	if (ev->reason == SCHED_MIGRATE_ADMISSION)
		nr_admission_moves++;
	else
		nr_other_dl_moves++;
}

/*
 * 0.44 and 0.44 arrive first and first fit puts both on pCPU 0; 0.5 takes
 * pCPU 1; the second 0.5, arriving 25.5 ms later while they all run busy
 * beside fair entities, fits nowhere as placed, but 0.5 + 0.44 per pCPU
 * does: admission re-packs and moves exactly one 0.44 (with an event),
 * mid-period. Afterwards nobody misses a deadline and each gets its
 * runtime every period (the moved one may lose part of the period in
 * flight to the CBS wakeup rule on arrival).
 */
static void test_dl_repack_on_arrival(void)
{
	static struct sched *sp;
	struct sched_config cfg = { .event = count_moves, .event_opaque = &sp };
	struct sched *s = sp = mk_sched(2, 1024, 0, 0, &cfg);
	int ids[4];
	uint64_t rt[4] = { 4400 * US, 4400 * US, 5 * MS, 5 * MS }, now = 0;

	nr_admission_moves = nr_other_dl_moves = 0;
	add_ent(s, "busy", 1024, true, 0);
	add_ent(s, "busy", 1024, true, 0);
	for (int i = 0; i < 4; i++) {
		if (i == 3)
			run_until(s, &now, 25 * MS + 500 * US, 500 * US);
		ids[i] = add_dl(s, "r", rt[i], 10 * MS, 10 * MS, true, now);
		CU_ASSERT_FATAL(ids[i] >= 0);
	}
	CU_ASSERT_EQUAL(nr_admission_moves, 1);
	run_until(s, &now, 1025 * MS, 500 * US);
	for (int i = 0; i < 4; i++) {
		struct sched_entity_stats st;

		sched_entity_stats(s, ids[i], &st);
		CU_ASSERT_EQUAL(st.nr_deadline_misses, 0);
		CU_ASSERT(st.work_ns >= (i == 3 ? 98 : 100) * rt[i]);
	}
	CU_ASSERT_NOT_EQUAL(sched_ent(s, ids[0])->dl_cpu, sched_ent(s, ids[1])->dl_cpu);
	CU_ASSERT_NOT_EQUAL(sched_ent(s, ids[2])->dl_cpu, sched_ent(s, ids[3])->dl_cpu);
	CU_ASSERT(all_within_limit(s));
	/* A fifth, however small, has no room left anywhere. */
	CU_ASSERT_EQUAL(add_dl(s, "r", 200 * US, 10 * MS, 10 * MS, true, 0), -SCHED_E_BANDWIDTH);
	CU_ASSERT_EQUAL(nr_admission_moves, 1);
	CU_ASSERT_EQUAL(nr_other_dl_moves, 0);
	sched_destroy(s);
}

/*
 * A reservation moved by a re-pack arrives with the CBS wakeup rule: B
 * (4/10) waited behind A (5/10) on pCPU 0 and still has all its runtime
 * 5 ms before its deadline (4/5 > 4/10), so on pCPU 1 it starts a new
 * period instead of demanding 0.8 of its new pCPU.
 */
static void test_dl_move_applies_wakeup_rule(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	struct sched_entity *b;
	uint64_t now = 0;
	int ia, ib;

	ia = add_dl(s, "a", 5 * MS, 10 * MS, 10 * MS, true, 0);
	ib = add_dl(s, "b", 4 * MS, 10 * MS, 10 * MS, true, 0);
	CU_ASSERT_FATAL(ia >= 0 && ib >= 0);
	b = sched_ent(s, ib);
	CU_ASSERT_EQUAL_FATAL(b->dl_cpu, sched_ent(s, ia)->dl_cpu);
	run_until(s, &now, 5 * MS, 500 * US);
	CU_ASSERT_EQUAL(b->dl_runtime, 4 * (int64_t)MS);
	CU_ASSERT_EQUAL(b->dl_deadline, 10 * MS);
	dl_move(s, b, 1 - (unsigned int)b->dl_cpu, now);
	CU_ASSERT_EQUAL(b->cpu, b->dl_cpu);
	CU_ASSERT_EQUAL(b->dl_deadline, 15 * MS);
	CU_ASSERT_EQUAL(b->dl_runtime, 4 * (int64_t)MS);
	sched_destroy(s);
}

/*
 * Constrained deadlines count with their density: 3/5/20 has bandwidth
 * 0.15 but takes 0.6 of the pCPU; 2/5/10 (density 0.4) then no longer fits,
 * 1.5/5/10 (0.3) does.
 */
static void test_dl_constrained_uses_density(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);

	CU_ASSERT(add_dl(s, "c", 3 * MS, 5 * MS, 20 * MS, false, 0) >= 0);
	CU_ASSERT_EQUAL(add_dl(s, "d", 2 * MS, 5 * MS, 10 * MS, false, 0), -SCHED_E_BANDWIDTH);
	CU_ASSERT(add_dl(s, "e", 1500 * US, 5 * MS, 10 * MS, false, 0) >= 0);
	CU_ASSERT(all_within_limit(s));
	sched_destroy(s);
}

/* Moving a reservation to a cluster where it cannot be kept is refused and changes nothing. */
static void test_dl_affinity_change_refused(void)
{
	struct sched *s = mk_sched(1, 1024, 2, 512, NULL);
	struct sched_cpumask little, big;
	struct sched_entity_info before, after;
	char err[512];
	int a, b;

	sched_cluster_mask(s, 1, &little);
	sched_cluster_mask(s, 0, &big);
	a = add_dl(s, "a", 6 * MS, 10 * MS, 10 * MS, true, 0);
	b = add_dl(s, "b", 3 * MS, 10 * MS, 10 * MS, true, 0);
	CU_ASSERT_FATAL(a >= 0 && b >= 0);
	sched_entity_info(s, a, &before);
	CU_ASSERT_EQUAL(sched_set_affinity(s, a, &little, 0, err, sizeof(err)),
			-SCHED_E_CAPACITY_FIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "capacity >= 647"));
	sched_entity_info(s, a, &after);
	CU_ASSERT_EQUAL(memcmp(&before, &after, sizeof(before)), 0);
	/* b (0.3) joins a (0.6) on the big pCPU; growing it to 0.4 there is refused. */
	CU_ASSERT_EQUAL(sched_set_affinity(s, b, &big, 0, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(sched_ent(s, b)->dl_cpu, 0);
	CU_ASSERT_EQUAL(sched_set_reservation(s, b, &(struct sched_dl_params){ 4 * MS, 10 * MS,
			10 * MS }, 0, err, sizeof(err)), -SCHED_E_BANDWIDTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "big pCPUs 0-0 cap 1024: 0.350 free of 0.950"));
	CU_ASSERT_EQUAL(sched_ent(s, b)->dl.runtime_ns, 3 * MS);
	CU_ASSERT(all_within_limit(s));
	sched_destroy(s);
}

/*
 * The level of a pCPU holding reservations keeps their density within the
 * limit of what it delivers: 4/10 needs 0.4 x 1024 / 0.95 = 432 even when
 * nothing runs (the reservation sleeps, the fair util is zero).
 */
static void test_dl_level_covers_density(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_cluster_stats cs;
	uint64_t now = 0;

	CU_ASSERT(add_dl(s, "r", 4 * MS, 10 * MS, 10 * MS, false, 0) >= 0);
	run_until(s, &now, 200 * MS, MS);
	CU_ASSERT_EQUAL(sched_cluster_stats(s, 0, &cs), 0);
	CU_ASSERT(cs.level >= 432);
	sched_destroy(s);
}

/* ---------------------------------------------------------------- random */

static uint64_t rng;

struct gen_res {
	struct sched_dl_params dl;
	int cluster;		/* -1: any pCPU */
};

/*
 * Reservations that fit by construction: each pCPU filled to 3-13% below
 * the limit, split into 2..5 reservations (implicit or constrained
 * deadlines), half of them pinned to the pCPU's cluster.
 */
static unsigned int gen_known_placement(struct sched *s, struct gen_res *out)
{
	unsigned int n = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		double fill = xorshift_uniform(&rng, 0.82, 0.92), cut[6], left = 0;
		unsigned int k = 2 + (unsigned int)(xorshift64(&rng) % 4);

		for (unsigned int j = 0; j + 1 < k; j++)
			cut[j] = xorshift_uniform(&rng, 0, fill);
		cut[k - 1] = fill;
		for (unsigned int j = 1; j < k; j++)	/* sort the cuts */
			for (unsigned int m = j; m > 0 && cut[m - 1] > cut[m]; m--) {
				double t = cut[m];

				cut[m] = cut[m - 1];
				cut[m - 1] = t;
			}
		for (unsigned int j = 0; j < k; j++) {
			double dens = (cut[j] - left) * s->rq[cpu].capacity / 1024;
			uint64_t period, deadline, runtime;

			host64_random_timing(&rng, &period, &deadline);
			runtime = (uint64_t)(dens * (double)deadline);
			left = cut[j];
			if (runtime < 2 * US)
				continue;
			out[n].dl = dl_params(runtime, deadline, period);
			out[n].cluster = xorshift64(&rng) % 2 ? sched_cpu_cluster(s, cpu) : -1;
			n++;
		}
	}
	return n;
}

static struct sched *mk_host64(void)
{
	struct sched_topology t;
	char err[256];
	struct sched *s;

	host64_topology(&t);
	s = sched_create(&t, NULL, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	return s;
}

static int cmp_density(const void *a, const void *b)
{
	const struct gen_res *x = a, *y = b;
	unsigned __int128 l = (unsigned __int128)x->dl.runtime_ns * y->dl.deadline_ns;
	unsigned __int128 r = (unsigned __int128)y->dl.runtime_ns * x->dl.deadline_ns;

	return l < r ? -1 : l > r;
}

/*
 * 64 pCPUs in four clusters (1024..256), ~220 reservations built to fit:
 * every one is admitted in shuffled, ascending and descending order, and
 * the engine's placement keeps every pCPU within the limit.
 */
static void test_dl_known_placement_64(void)
{
	const char *env = getenv("CAPVISOR_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed11ull;
	static struct gen_res set[SCHED_MAX_CPUS * 6];
	char err[512];

	printf("\n    known placement: seed %llu (CAPVISOR_TEST_SEED reproduces) ",
	       (unsigned long long)seed);
	rng = seed | 1;
	for (int round = 0; round < 4; round++) {
		struct sched *s = mk_host64();
		unsigned int n = gen_known_placement(s, set);

		sched_destroy(s);
		for (int order = 0; order < 3; order++) {
			unsigned int admitted = 0;

			if (order == 0) {
				for (unsigned int i = n; i > 1; i--) {
					unsigned int j = (unsigned int)(xorshift64(&rng) % i);
					struct gen_res t = set[i - 1];

					set[i - 1] = set[j];
					set[j] = t;
				}
			} else {
				qsort(set, n, sizeof(set[0]), cmp_density);
				if (order == 2)
					for (unsigned int i = 0; i < n / 2; i++) {
						struct gen_res t = set[i];

						set[i] = set[n - 1 - i];
						set[n - 1 - i] = t;
					}
			}
			s = mk_host64();
			for (unsigned int i = 0; i < n; i++) {
				if (dl_add_pinned(s, "g", set[i].dl, set[i].cluster, err, sizeof(err)) >= 0)
					admitted++;
				else if (admitted + 1 == i + 1)	/* first refusal: say why */
					fprintf(stderr, "round %d order %d: #%u refused: %s\n", round,
						order, i, err);
			}
			CU_ASSERT_EQUAL(admitted, n);
			CU_ASSERT(all_within_limit(s));
			sched_destroy(s);
		}
	}
}

/*
 * Random small hosts, reservations (some refused) and busy fair entities
 * run for 2 s: no reservation misses a deadline, each gets its runtime
 * every period, and none is ever moved but by admission (wakeups, the
 * balancer, newidle pulls and misfit moves leave them alone).
 */
static void test_dl_kept_under_load(void)
{
	static struct sched *sp;
	struct sched_config cfg = { .event = count_moves, .event_opaque = &sp };

	rng = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 20; round++) {
		unsigned int nb = 1 + (unsigned int)(xorshift64(&rng) % 3), nl = (unsigned int)(xorshift64(&rng) % 4);
		struct sched *s = sp = mk_sched(nb, 1024, nl, 256 + 128 * (unsigned int)(xorshift64(&rng) % 5),
						&cfg);
		int ids[12];
		unsigned int n = 0;
		uint64_t now = 0;

		nr_other_dl_moves = 0;
		for (int i = 0; i < 12; i++) {
			uint64_t period = (5 + xorshift64(&rng) % 20) * MS;
			uint64_t deadline = xorshift64(&rng) % 2 ? period : period / 2;
			uint64_t runtime = (uint64_t)(xorshift_uniform(&rng, 0.05, 0.5) * (double)deadline);
			int id = add_dl(s, "r", runtime, deadline, period, true, 0);

			if (id >= 0)
				ids[n++] = id;
		}
		for (int i = 0; i < 6; i++)
			add_ent(s, "busy", 1024, true, 0);
		run_until(s, &now, 2000 * MS, MS);
		CU_ASSERT_EQUAL(nr_other_dl_moves, 0);
		for (unsigned int i = 0; i < n; i++) {
			struct sched_entity_stats st;
			struct sched_entity *se = sched_ent(s, ids[i]);

			sched_entity_stats(s, ids[i], &st);
			CU_ASSERT_EQUAL(st.nr_deadline_misses, 0);
			CU_ASSERT(st.work_ns >= (2000 * MS / se->dl.period_ns - 1) * se->dl.runtime_ns);
		}
		CU_ASSERT(all_within_limit(s));
		sched_destroy(s);
	}
}

UNIT_SUITE(sched_dl_admit, NULL, NULL,
	   UNIT_TEST(test_dl_big_only_second_refused),
	   UNIT_TEST(test_dl_repack_on_arrival),
	   UNIT_TEST(test_dl_move_applies_wakeup_rule),
	   UNIT_TEST(test_dl_constrained_uses_density),
	   UNIT_TEST(test_dl_affinity_change_refused),
	   UNIT_TEST(test_dl_level_covers_density),
	   UNIT_TEST(test_dl_known_placement_64),
	   UNIT_TEST(test_dl_kept_under_load))
