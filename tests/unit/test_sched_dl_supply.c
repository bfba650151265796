// SPDX-License-Identifier: MIT
/*
 * Admission for the supply a duty-cycled pCPU really delivers: at level P
 * an on-part of P x W/1024 in every window W, up to L late, so nothing for
 * up to B = W - on-part + L; a pCPU holds reservations while the sum of
 * runtime/(deadline - B) is within the limit of P/1024. The test's oracle
 * computes B and the sums itself, in long double, and decides by brute
 * force over every placement of small random sets whether they fit; the
 * engine must agree wherever the answer is not within rounding of the
 * limit. Also: the level a reserved pCPU keeps, against clamps and guest
 * requests, the refusal that names the blackout, and budgets charged what
 * a duty-cycled pCPU delivered where its phase is known.
 */
#include "tests/lib/xorshift.h"
#include "tests/unit/test_sched_util.h"

#include <stdlib.h>

#define LIMIT		0.95L
#define MARGIN		1e-6L	/* the engine rounds densities up by < 2^-20 each */
#define MAX_RES		6
#define MAX_CPUS	3

struct host_model {
	unsigned int nr_cpus;
	unsigned int cap[MAX_CPUS];
	int cluster[MAX_CPUS];
	uint64_t window, latency;
};

struct res_model {
	uint64_t runtime, deadline, period;
	int cluster;		/* -1: any pCPU */
};

static long double oracle_blackout(const struct host_model *h, unsigned int level)
{
	long double on = (long double)(h->window * level / 1024);

	if (!h->window || level >= 1024)
		return (long double)h->latency;
	return (long double)h->window - on + (long double)h->latency;
}

/* Sum of runtime/(deadline - blackout) of the reservations on cpu at level, or -1: none fits. */
static long double oracle_load(const struct host_model *h, const struct res_model *r,
			       const int *where, unsigned int n, unsigned int cpu,
			       unsigned int level)
{
	long double b = oracle_blackout(h, level), sum = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (where[i] != (int)cpu)
			continue;
		if ((long double)r[i].deadline <= b)
			return -1;
		sum += (long double)r[i].runtime / ((long double)r[i].deadline - b);
	}
	return sum;
}

static long double oracle_room(unsigned int level)
{
	return LIMIT * level / 1024;
}

/* Does cpu hold its reservations at its top level, with `slack` (+ looser, - stricter)? */
static bool oracle_cpu_ok(const struct host_model *h, const struct res_model *r,
			  const int *where, unsigned int n, unsigned int cpu, long double slack)
{
	long double load = oracle_load(h, r, where, n, cpu, h->cap[cpu]);

	return load >= 0 && load <= oracle_room(h->cap[cpu]) + slack;
}

/* Some placement of all n (each within its affinity) keeps every pCPU within room + slack. */
static bool oracle_fits(const struct host_model *h, const struct res_model *r, unsigned int n,
			long double slack, int *where, unsigned int i)
{
	if (i == n) {
		for (unsigned int cpu = 0; cpu < h->nr_cpus; cpu++)
			if (!oracle_cpu_ok(h, r, where, n, cpu, slack))
				return false;
		return true;
	}
	for (unsigned int cpu = 0; cpu < h->nr_cpus; cpu++) {
		if (r[i].cluster >= 0 && h->cluster[cpu] != r[i].cluster)
			continue;
		where[i] = (int)cpu;
		if (oracle_fits(h, r, n, slack, where, i + 1))
			return true;
	}
	where[i] = -1;
	return false;
}

static uint64_t rng;

static uint64_t pick(const uint64_t *v, unsigned int n)
{
	return v[xorshift64(&rng) % n];
}

/* One big pCPU and one or two littles, a window and a latency (0 included). */
static struct sched *random_host(struct host_model *h)
{
	static const uint64_t windows[] = { 0, 1 * MS, 2 * MS, 4 * MS, 8 * MS };
	static const uint64_t latencies[] = { 0, 200 * US, 1200 * US };
	static const uint64_t bigs[] = { 768, 1024, 1024 }, littles[] = { 256, 384, 512, 640 };
	struct sched_config cfg = { 0 };
	unsigned int nl = 1 + (unsigned int)(xorshift64(&rng) % 2);

	h->window = pick(windows, 5);
	h->latency = pick(latencies, 3);
	h->nr_cpus = 1 + nl;
	h->cap[0] = (unsigned int)pick(bigs, 3);
	h->cluster[0] = 0;
	h->cap[1] = h->cap[2] = (unsigned int)pick(littles, 4);
	h->cluster[1] = h->cluster[2] = 1;
	cfg.dl_supply_window_ns = h->window;
	cfg.dl_supply_latency_ns = h->latency;
	return mk_sched(1, h->cap[0], nl, h->cap[1], &cfg);
}

static struct res_model random_res(void)
{
	struct res_model r;

	r.period = (2 + xorshift64(&rng) % 29) * MS;
	r.deadline = xorshift64(&rng) % 2 ? r.period : r.period * (40 + xorshift64(&rng) % 60) / 100;
	r.runtime = r.deadline * (5 + xorshift64(&rng) % 56) / 100;
	if (!r.runtime)
		r.runtime = 1;
	r.cluster = xorshift64(&rng) % 3 ? -1 : (int)(xorshift64(&rng) % 2);
	return r;
}

static int add_res(struct sched *s, const struct res_model *r, char *err, size_t errlen)
{
	struct sched_entity_params p;

	sched_entity_params_init(&p, "r");
	p.dl = (struct sched_dl_params){ r->runtime, r->deadline, r->period };
	p.runnable = true;
	if (r->cluster >= 0)
		sched_cluster_mask(s, (unsigned int)r->cluster, &p.affinity);
	return sched_entity_add(s, &p, 0, err, errlen);
}

static void print_case(const struct host_model *h, const struct res_model *r, unsigned int n)
{
	fprintf(stderr, "host: W %llu us, L %llu us, caps", (unsigned long long)(h->window / US),
		(unsigned long long)(h->latency / US));
	for (unsigned int c = 0; c < h->nr_cpus; c++)
		fprintf(stderr, " %u", h->cap[c]);
	for (unsigned int i = 0; i < n; i++)
		fprintf(stderr, "\n  %llu/%llu/%llu us cluster %d",
			(unsigned long long)(r[i].runtime / US), (unsigned long long)(r[i].deadline / US),
			(unsigned long long)(r[i].period / US), r[i].cluster);
	fprintf(stderr, "\n");
}

/* The engine's placement of the admitted ones holds in the oracle's arithmetic. */
static bool placement_ok(struct sched *s, const struct host_model *h, const struct res_model *r,
			 const int *ids, unsigned int n)
{
	int where[MAX_RES];

	for (unsigned int i = 0; i < n; i++)
		where[i] = sched_ent(s, ids[i])->dl_cpu;
	for (unsigned int cpu = 0; cpu < h->nr_cpus; cpu++)
		if (!oracle_cpu_ok(h, r, where, n, cpu, 0))
			return false;
	return true;
}

/*
 * 400 random hosts, up to six reservations each, added one at a time:
 * admitted exactly when some placement fits (outside rounding), and then
 * the engine's own placement fits.
 */
static void test_dl_supply_random_vs_oracle(void)
{
	uint64_t seed = 0x5eed0d11a5u;
	unsigned int nr_admitted = 0, nr_refused = 0, nr_blackout = 0;

	fprintf(stderr, "\n  dl supply oracle seed %#llx\n", (unsigned long long)seed);
	rng = seed;
	for (int round = 0; round < 400; round++) {
		struct host_model h;
		struct sched *s = random_host(&h);
		struct res_model r[MAX_RES];
		int ids[MAX_RES], where[MAX_RES];
		unsigned int n = 0;

		for (int k = 0; k < MAX_RES; k++) {
			char err[512];
			bool strict, loose;
			int id;

			r[n] = random_res();
			strict = oracle_fits(&h, r, n + 1, -MARGIN, where, 0);
			loose = oracle_fits(&h, r, n + 1, MARGIN, where, 0);
			id = add_res(s, &r[n], err, sizeof(err));
			if ((strict && id < 0) || (!loose && id >= 0)) {
				fprintf(stderr, "round %d: engine %s, oracle %s (%s)\n", round,
					id >= 0 ? "admits" : "refuses", strict ? "fits" : "does not fit",
					id >= 0 ? "" : err);
				print_case(&h, r, n + 1);
				CU_FAIL("admission disagrees with the oracle");
			}
			if (id < 0) {
				nr_refused++;
				nr_blackout += strstr(err, "not above its blackout") != NULL;
				continue;
			}
			ids[n++] = id;
			nr_admitted++;
			if (!placement_ok(s, &h, r, ids, n)) {
				print_case(&h, r, n);
				CU_FAIL("the engine's placement breaks the supply test");
			}
		}
		sched_destroy(s);
	}
	fprintf(stderr, "  %u admitted, %u refused (%u for a deadline within the blackout)\n",
		nr_admitted, nr_refused, nr_blackout);
	CU_ASSERT(nr_admitted > 400 && nr_refused > 200 && nr_blackout > 10);
}

/* The lowest level 1..cap at which the oracle's test holds for one pCPU. */
static unsigned int oracle_level(const struct host_model *h, const struct res_model *r,
				 unsigned int n)
{
	int where[MAX_RES] = { 0 };

	for (unsigned int lvl = 1; lvl <= h->cap[0]; lvl++) {
		long double load = oracle_load(h, r, where, n, 0, lvl);

		if (load >= 0 && load <= oracle_room(lvl))
			return lvl;
	}
	return 0;
}

/*
 * A reserved pCPU keeps the lowest level at which the test holds (one
 * level of rounding above at most), higher than the density alone would
 * need, and no clamp on the entities there and no guest request lowers it.
 */
static void test_dl_supply_level_kept(void)
{
	struct host_model h = { .nr_cpus = 1, .cap = { 1024 }, .window = 4 * MS,
				.latency = 1 * MS };
	struct sched_config cfg = { .dl_supply_window_ns = 4 * MS, .dl_supply_latency_ns = 1 * MS };
	struct res_model r[2] = { { 2 * MS, 10 * MS, 10 * MS, -1 }, { 1 * MS, 8 * MS, 16 * MS, -1 } };
	struct sched *s = mk_sched(1, 1024, 0, 0, &cfg);
	struct sched_cluster_stats cs;
	unsigned int want, density_level;
	int a, b, busy;
	uint64_t now = 0;

	a = add_res(s, &r[0], NULL, 0);
	b = add_res(s, &r[1], NULL, 0);
	CU_ASSERT_FATAL(a >= 0 && b >= 0);
	want = oracle_level(&h, r, 2);
	density_level = (unsigned int)((2.0L / 10 + 1.0L / 8) * 1024 / LIMIT) + 1;
	CU_ASSERT(want > density_level + 100);
	/* Asleep, nothing else there: exactly what the reservations need. */
	CU_ASSERT_EQUAL(sched_block(s, a, 0), 0);
	CU_ASSERT_EQUAL(sched_block(s, b, 0), 0);
	run_until(s, &now, 100 * MS, MS);
	CU_ASSERT_EQUAL(sched_cluster_stats(s, 0, &cs), 0);
	CU_ASSERT(cs.level >= want && cs.level <= want + 1);
	fprintf(stderr, "\n  level %u (oracle %u, density alone %u)\n", cs.level, want,
		density_level);
	/* Running, beside a busy one, everything clamped low and asking for less. */
	CU_ASSERT_EQUAL(sched_wakeup(s, a, now), 0);
	CU_ASSERT_EQUAL(sched_wakeup(s, b, now), 0);
	busy = add_ent(s, "busy", 1024, true, now);
	CU_ASSERT_EQUAL(sched_set_uclamp(s, busy, 0, 64, now, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_set_uclamp(s, a, 0, 32, now, NULL, 0), 0);
	CU_ASSERT(sched_set_perf_request(s, a, 16, now) >= 0);
	CU_ASSERT(sched_set_perf_request(s, busy, 8, now) >= 0);
	for (int step = 0; step < 50; step++) {
		run_until(s, &now, now + 10 * MS, MS);
		CU_ASSERT_EQUAL(sched_cluster_stats(s, 0, &cs), 0);
		CU_ASSERT(cs.level >= want);
	}
	sched_destroy(s);
}

/* A deadline within a little pCPU's blackout is refused there with the numbers. */
static void test_dl_supply_blackout_refused(void)
{
	struct sched_config cfg = { .dl_supply_window_ns = 4 * MS,
				    .dl_supply_latency_ns = 1200 * US };
	struct sched *s = mk_sched(1, 1024, 1, 512, &cfg);
	struct res_model big_one = { 500 * US, 3 * MS, 3 * MS, -1 };
	struct res_model little_one = { 500 * US, 3 * MS, 3 * MS, 1 };
	uint64_t blackout_us = (4000 - 4000 * 512 / 1024) + 1200;
	char err[512], want[64];
	int id;

	CU_ASSERT_EQUAL(add_res(s, &little_one, err, sizeof(err)), -SCHED_E_CAPACITY_FIT);
	snprintf(want, sizeof(want), "not above its blackout %llu us",
		 (unsigned long long)blackout_us);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "window 4000 us"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "latency 1200 us"));
	id = add_res(s, &big_one, err, sizeof(err));
	CU_ASSERT_FATAL(id >= 0);
	CU_ASSERT_EQUAL(sched_ent(s, id)->dl_cpu, 0);	/* the little pCPU cannot hold it */
	sched_destroy(s);
}

/* Where on-parts are known, a budget lasts until that much work was delivered. */
static uint64_t delivered_by_scan(uint64_t window, uint64_t offset, uint64_t on, uint64_t work)
{
	uint64_t t = 0, got = 0;

	for (; got < work; t += US)
		got += (t % window >= offset && t % window < offset + on) ? US : 0;
	return t;
}

/*
 * One little pCPU with a single perf level (512: on half of each window),
 * charged by delivered work, holding one 3 ms / 20 ms reservation (*id).
 */
static struct sched *mk_charged_little(const struct sched_config *cfg, int *id)
{
	struct sched_topology t = { .nr_clusters = 1 };
	struct sched *s;
	char err[256];

	snprintf(t.clusters[0].name, SCHED_NAME_MAX, "little");
	t.clusters[0].nr_cpus = 1;
	t.clusters[0].capacity = 512;
	t.clusters[0].nr_levels = 1;
	t.clusters[0].levels[0] = 512;
	s = sched_create(&t, cfg, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	*id = add_res(s, &(struct res_model){ 3 * MS, 20 * MS, 20 * MS, -1 }, NULL, 0);
	CU_ASSERT_FATAL(*id >= 0);
	return s;
}

static void test_dl_supply_charges_delivered(void)
{
	struct sched_config cfg = { .dl_supply_window_ns = 4 * MS, .dl_supply_charge = true };
	struct sched_entity_info info;
	struct sched *s;
	uint64_t end, now = 0;
	int id;

	cfg.dl_supply_offset_ns[0] = 1500 * US;
	s = mk_charged_little(&cfg, &id);
	/* 2 ms on-parts at 1.5-3.5 ms of each 4 ms: 3 ms of work by 9.5 ms, not by 6 ms. */
	end = delivered_by_scan(4 * MS, 1500 * US, 2 * MS, 3 * MS);
	CU_ASSERT_EQUAL(sched_next_event(s, 0), end);
	run_until(s, &now, end - 100 * US, 100 * US);
	sched_entity_info(s, id, &info);
	CU_ASSERT_EQUAL(info.state, SCHED_RUNNING);
	run_until(s, &now, end, 100 * US);
	sched_entity_info(s, id, &info);
	CU_ASSERT_EQUAL(info.state, SCHED_THROTTLED);
	sched_destroy(s);
}

/* A restarted window moves the on-parts, and with them the end of a budget. */
static void test_dl_supply_offset_moves(void)
{
	struct sched_config cfg = { .dl_supply_window_ns = 4 * MS, .dl_supply_charge = true };
	struct sched *s;
	uint64_t now = 0;
	int id;

	s = mk_charged_little(&cfg, &id);
	/* On-parts at 0-2 ms of each window: 3 ms delivered by 5 ms. */
	CU_ASSERT_EQUAL(sched_next_event(s, 0), delivered_by_scan(4 * MS, 0, 2 * MS, 3 * MS));
	run_until(s, &now, 3 * MS, 100 * US);
	/*
	 * 2 ms delivered; from 3 ms on the on-parts start at 3 ms (mod 4) and
	 * cross the window boundary: 3-5 ms, so the last 1 ms ends at 4 ms.
	 * With offset 7 ms (mod 4: 3 ms) the same.
	 */
	CU_ASSERT_EQUAL(sched_set_supply_offset(s, 0, 7 * MS, now), 0);
	CU_ASSERT_EQUAL(sched_next_event(s, 0), 4 * MS);
	run_until(s, &now, 3900 * US, 100 * US);
	/* Now at 3.9 ms, 0.1 ms left: windows at 1 ms (mod 4) deliver it at 5.1 ms. */
	CU_ASSERT_EQUAL(sched_set_supply_offset(s, 0, 1 * MS, now), 0);
	CU_ASSERT_EQUAL(sched_next_event(s, 0), 5100 * US);
	CU_ASSERT_EQUAL(sched_set_supply_offset(s, 1, 0, now), -SCHED_E_NOENT);
	sched_destroy(s);
}

UNIT_SUITE(sched_dl_supply, NULL, NULL,
	   UNIT_TEST(test_dl_supply_charges_delivered),
	   UNIT_TEST(test_dl_supply_offset_moves),
	   UNIT_TEST(test_dl_supply_random_vs_oracle),
	   UNIT_TEST(test_dl_supply_level_kept),
	   UNIT_TEST(test_dl_supply_blackout_refused))
