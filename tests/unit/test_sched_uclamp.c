// SPDX-License-Identifier: MIT
/* uclamp (rules 16-20) and PELT (rules 21-23). */
#include "tests/unit/test_sched_util.h"

static void test_buckets(void)
{
	CU_ASSERT_EQUAL(uclamp_bucket_id(0), 0);
	CU_ASSERT_EQUAL(uclamp_bucket_id(204), 0);
	CU_ASSERT_EQUAL(uclamp_bucket_id(205), 1);
	CU_ASSERT_EQUAL(uclamp_bucket_id(819), 3);
	CU_ASSERT_EQUAL(uclamp_bucket_id(820), 4);
	CU_ASSERT_EQUAL(uclamp_bucket_id(1024), 4);
}

static unsigned int bucket_tasks(const struct sched_rq *rq)
{
	unsigned int n = 0;

	for (int id = 0; id < UCLAMP_CNT; id++)
		for (int b = 0; b < UCLAMP_BUCKETS; b++)
			n += rq->bucket[id][b].tasks;
	return n;
}

/* Seed 001: no clamp work at all until the first clamp is set. */
static void test_fast_path_key(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int a, b;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, true, 0);
	run_until(s, &now, 10 * MS, MS);
	sched_block(s, b, now);
	sched_wakeup(s, b, now + 1);
	CU_ASSERT_FALSE(sched_uclamp_enabled(s));
	CU_ASSERT_EQUAL(bucket_tasks(&s->rq[0]), 0);
	CU_ASSERT_FALSE(sched_ent(s, a)->uc_active);
	/* The first clamp flips the key for good; later enqueues count. */
	CU_ASSERT_EQUAL(sched_set_uclamp(s, a, 100, 600, now, NULL, 0), 0);
	CU_ASSERT_TRUE(sched_uclamp_enabled(s));
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 600);
	sched_block(s, b, now + 2);	/* b was queued before the flip: balanced */
	sched_wakeup(s, b, now + 3);
	CU_ASSERT_TRUE(sched_ent(s, b)->uc_active);
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 1024);	/* b: no cap */
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MIN], 100);
	CU_ASSERT_EQUAL(sched_set_uclamp(s, a, 700, 600, now, NULL, 0), -SCHED_E_INVAL);
	CU_ASSERT_EQUAL(sched_ent(s, a)->uc_req[UCLAMP_MIN], 100);	/* unchanged */
	sched_destroy(s);
}

/* Max aggregation; dequeue recomputes when a bucket empties (rule 17). */
static void test_max_aggregation(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity_params p;
	int a, b, c;

	sched_entity_params_init(&p, "a");
	p.uclamp_max = 300;
	p.runnable = true;
	a = sched_entity_add(s, &p, 0, NULL, 0);
	p.uclamp_max = 600;
	p.uclamp_min = 250;
	b = sched_entity_add(s, &p, 0, NULL, 0);
	p.uclamp_max = 350;	/* same bucket as a (1): raises the bucket value */
	p.uclamp_min = 0;
	c = sched_entity_add(s, &p, 0, NULL, 0);
	CU_ASSERT_TRUE(sched_uclamp_enabled(s));
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 600);
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MIN], 250);
	sched_block(s, b, 1);
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 350);
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MIN], 0);
	sched_block(s, c, 2);	/* bucket 1 keeps its value while a remains */
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 350);
	sched_block(s, a, 3);	/* empty: no cap */
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 1024);
	sched_destroy(s);
}

/* uclamp_rq_util_with() (rule 18) and util_fits_cpu() (rule 19). */
static void test_util_with_and_fits(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_rq *rq = &s->rq[0];
	struct sched_entity se;

	CU_ASSERT_EQUAL(uclamp_rq_util_with(s, rq, 700, NULL), 700);	/* key off */
	uclamp_enable(s);
	rq->uc_value[UCLAMP_MIN] = 200;
	rq->uc_value[UCLAMP_MAX] = 500;
	rq->bucket_tasks = 1;
	CU_ASSERT_EQUAL(uclamp_rq_util_with(s, rq, 700, NULL), 500);
	CU_ASSERT_EQUAL(uclamp_rq_util_with(s, rq, 100, NULL), 200);
	CU_ASSERT_EQUAL(uclamp_rq_util_with(s, rq, 300, NULL), 300);
	memset(&se, 0, sizeof(se));
	se.uc_eff[UCLAMP_MIN] = 800;
	se.uc_eff[UCLAMP_MAX] = 900;
	/* lo = max(200, 800) >= hi? no: hi = max(500, 900) = 900. */
	CU_ASSERT_EQUAL(uclamp_rq_util_with(s, rq, 100, &se), 800);
	se.uc_eff[UCLAMP_MIN] = 600;
	se.uc_eff[UCLAMP_MAX] = 400;	/* inverted aggregate: lo wins */
	CU_ASSERT_EQUAL(uclamp_rq_util_with(s, rq, 100, &se), 600);

	CU_ASSERT_TRUE(util_fits_cpu(300, 0, 1024, 512));
	CU_ASSERT_FALSE(util_fits_cpu(410, 0, 1024, 512));	/* 410 x 1.25 > 512 */
	CU_ASSERT_TRUE(util_fits_cpu(409, 0, 1024, 512));
	CU_ASSERT_FALSE(util_fits_cpu(100, 800, 1024, 512));	/* min above capacity */
	CU_ASSERT_TRUE(util_fits_cpu(100, 800, 1024, 1024));
	CU_ASSERT_TRUE(util_fits_cpu(900, 0, 300, 512));	/* capped on purpose */
	CU_ASSERT_TRUE(util_fits_cpu(1024, 0, 1024, 1024));	/* the biggest always fits */
	sched_destroy(s);
}

/* A guest request is bounded by the clamps and acts as [r, r]. */
static void test_perf_request(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	int a = add_ent(s, "a", 1024, true, 0);

	CU_ASSERT_EQUAL(sched_set_uclamp(s, a, 100, 600, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_set_perf_request(s, a, 900, 0), 600);
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MIN], 600);
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 600);
	CU_ASSERT_EQUAL(sched_set_perf_request(s, a, 50, 0), 100);
	CU_ASSERT_EQUAL(sched_set_perf_request(s, a, 0, 0), 0);
	CU_ASSERT_EQUAL(s->rq[0].uc_value[UCLAMP_MAX], 600);
	CU_ASSERT_EQUAL(sched_set_perf_request(s, a, 2000, 0), -SCHED_E_INVAL);
	sched_destroy(s);
}

/* PELT decay: y^32 = 1/2, sums saturate at LOAD_AVG_MAX (rule 21). */
static void test_pelt_decay(void)
{
	CU_ASSERT_EQUAL(pelt_decay(1000, 0), 1000);
	CU_ASSERT(pelt_decay(1 << 20, 32) >= (1 << 19) - 1 && pelt_decay(1 << 20, 32) <= 1 << 19);
	CU_ASSERT(pelt_decay(1 << 20, 64) >= (1 << 18) - 1 && pelt_decay(1 << 20, 64) <= 1 << 18);
	CU_ASSERT_EQUAL(pelt_decay(12345, 63 * 32 + 1), 0);
	for (int n = 0; n < 40; n++)
		CU_ASSERT(pelt_decay(1 << 20, (uint64_t)n + 1) < pelt_decay(1 << 20, (uint64_t)n));
}

static void run_pattern(struct sched_pelt *p, uint64_t *now, uint64_t run, uint64_t sleep,
			unsigned int level, int reps)
{
	for (int i = 0; i < reps; i++) {
		*now += run;
		pelt_update(p, *now, 1024, 1, true, level);
		*now += sleep;
		pelt_update(p, *now, 0, 0, false, level);
	}
}

/* util_avg values, the half-life, and invariance (rules 21-22). */
static void test_pelt_values_and_invariance(void)
{
	struct sched_pelt p, q;
	uint64_t now = 0, t2 = 0;

	memset(&p, 0, sizeof(p));
	pelt_update(&p, 32 * 1024 * 1024, 1024, 1, true, 1024);	/* 32 periods running */
	CU_ASSERT(p.util_avg >= 500 && p.util_avg <= 520);		/* 1 - y^32 = 1/2 */
	pelt_update(&p, 64 * 1024 * 1024, 0, 0, false, 1024);		/* 32 periods idle */
	CU_ASSERT(p.util_avg >= 245 && p.util_avg <= 262);
	pelt_update(&p, 2000ull * 1024 * 1024, 1024, 1, true, 1024);
	CU_ASSERT(p.util_avg >= 1000);
	CU_ASSERT(pelt_load_avg(&p) >= 1000 && pelt_runnable_avg(&p) >= 1000);
	/* Waiting counts in runnable and load, not in util. */
	memset(&p, 0, sizeof(p));
	pelt_update(&p, 500ull * 1024 * 1024, 1024, 1, false, 1024);
	CU_ASSERT(p.util_avg == 0 && pelt_runnable_avg(&p) >= 1000 && pelt_load_avg(&p) >= 1000);

	/* 1 ms of work every 8 ms: at level 1024 it runs 1 ms, at 512 it runs 2 ms. */
	memset(&p, 0, sizeof(p));
	memset(&q, 0, sizeof(q));
	run_pattern(&p, &now, 1 * MS, 7 * MS, 1024, 200);
	run_pattern(&q, &t2, 2 * MS, 6 * MS, 512, 200);
	CU_ASSERT(p.util_avg > 80 && p.util_avg < 180);
	CU_ASSERT(q.util_avg + 12 >= p.util_avg && q.util_avg <= p.util_avg + 12);
	/* Busy at level 512: util saturates at the level (full-capacity units). */
	memset(&q, 0, sizeof(q));
	pelt_update(&q, 2000ull * 1024 * 1024, 1024, 1, true, 512);
	CU_ASSERT(q.util_avg >= 500 && q.util_avg <= 512);
}

/*
 * The averages are sum / (LOAD_AVG_MAX - 1024 + period_contrib) exactly
 * (pelt.c divides with a table of reciprocals), after updates of every
 * length, state and level, including sums far above 32 bits.
 */
static void test_pelt_avg_exact(void)
{
	struct sched_pelt p, old;
	uint64_t now = 0, x = 12345, max_sum = 0;
	unsigned int checked = 0;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 20000; i++) {
		uint64_t div, units;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		now += (x >> 33) % (3 * MS) + 1;
		old = p;
		pelt_update(&p, now, (x >> 20) % 4 ? 1024 + (unsigned long)(x % 90000) : 0,
			    (unsigned long)((x >> 8) % 1000), (x >> 12) & 1,
			    1 + (unsigned int)((x >> 40) % 1024));
		CU_ASSERT(now - p.last_update < 1024);
		/* The averages move only when a period boundary was crossed. */
		units = (p.last_update - old.last_update) >> 10;
		if (old.period_contrib + units < 1024)
			continue;
		div = LOAD_AVG_MAX - 1024 + p.period_contrib;
		checked++;
		CU_ASSERT_EQUAL(pelt_load_avg(&p), p.load_sum / div);
		CU_ASSERT_EQUAL(pelt_runnable_avg(&p), p.runnable_sum / div);
		CU_ASSERT_EQUAL(p.util_avg, p.util_sum / div);
		if (p.runnable_sum > max_sum)
			max_sum = p.runnable_sum;
	}
	CU_ASSERT(checked > 10000);
	CU_ASSERT(max_sum > UINT32_MAX);	/* the 128-bit product path ran */

	/* Sums that decay onto exact multiples of the divider, small and large. */
	for (uint64_t base = 1000; base < (1ull << 40); base <<= 30) {
		for (uint64_t sum = base; sum < base + 120000; sum++) {
			memset(&p, 0, sizeof(p));
			p.util_sum = p.runnable_sum = p.load_sum = sum;
			pelt_update(&p, 1024 * 1024, 0, 0, false, 1024);	/* one period */
			if (p.util_avg != p.util_sum / (LOAD_AVG_MAX - 1024) ||
			    pelt_load_avg(&p) != p.load_sum / (LOAD_AVG_MAX - 1024)) {
				CU_FAIL("average differs from sum / divider");
				break;
			}
		}
	}
}

/* pelt_util_at() is util_avg after pelt_update() on a copy, in every case. */
static void test_pelt_util_at(void)
{
	struct sched_pelt p, q;
	uint64_t now = 0, x = 777;
	unsigned int mismatches = 0;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 50000; i++) {
		uint64_t probe;
		bool running;
		unsigned int level;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		running = (x >> 13) & 1;
		level = 1 + (unsigned int)((x >> 40) % 1024);
		now += (x >> 33) % (2 * MS);
		pelt_update(&p, now, running ? 1024 : 0, running, running, level);
		/* Probe up to 40 ms ahead, sometimes behind (a caller's older clock). */
		probe = (x >> 7) % 16 ? now + (x >> 20) % (40 * MS) : now - (x >> 20) % 5000;
		q = p;
		pelt_update(&q, probe, running ? 1024 : 0, running, running, level);
		if (pelt_util_at(&p, probe, running, level) != q.util_avg)
			mismatches++;
	}
	CU_ASSERT_EQUAL(mismatches, 0);
}

/*
 * pelt_update_running_pair() leaves both series exactly as two
 * pelt_update() calls would (the tick's fused update of a busy pCPU and its
 * running entity), for every step length, load and level.
 */
static void test_pelt_running_pair(void)
{
	struct sched_pelt a, b, ra, rb;
	uint64_t now = 0, x = 99;
	unsigned int mismatches = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ra = a;
	rb = b;
	for (int i = 0; i < 50000; i++) {
		unsigned long load, runnable, w;
		unsigned int level;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		now += (x >> 13) % 8 ? (x >> 33) % (3 * MS) : (x >> 33) % 4000000000ull;
		if (!((x >> 7) % 64))
			now -= 5000;	/* a caller's older clock */
		load = 1024 + (unsigned long)((x >> 20) % 200000);
		runnable = 1 + (unsigned long)((x >> 40) % 9);
		w = 1 + (unsigned long)((x >> 3) % 90000);
		level = 1 + (unsigned int)((x >> 50) % 1024);
		pelt_update_running_pair(&a, load, runnable, &b, w, now, level);
		pelt_update(&ra, now, load, runnable, true, level);
		pelt_update(&rb, now, w, 1, true, level);
		if (memcmp(&a, &ra, sizeof(a)) || memcmp(&b, &rb, sizeof(b)))
			mismatches++;
		a = ra;	/* keep going from the reference (one mismatch, one count) */
		b = rb;
	}
	CU_ASSERT_EQUAL(mismatches, 0);
}

/* Entity stats report PELT up to the latest time. */
static void test_entity_util(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	unsigned int u, r;
	int a = add_ent(s, "a", 1024, true, 0);

	s->cluster[0].level = 1024;
	for (now = 0; now < 400 * MS;) {
		now += MS;
		sched_tick_cpu(s, 0, now);
	}
	CU_ASSERT_EQUAL(sched_entity_util(s, a, &u, &r), 0);
	CU_ASSERT(u > 1000 && r > 1000);
	CU_ASSERT_EQUAL(sched_entity_util(s, 42, &u, &r), -SCHED_E_NOENT);
	sched_destroy(s);
}

UNIT_SUITE(sched_uclamp_pelt, NULL, NULL,
	   UNIT_TEST(test_buckets),
	   UNIT_TEST(test_fast_path_key),
	   UNIT_TEST(test_max_aggregation),
	   UNIT_TEST(test_util_with_and_fits),
	   UNIT_TEST(test_perf_request),
	   UNIT_TEST(test_pelt_decay),
	   UNIT_TEST(test_pelt_values_and_invariance),
	   UNIT_TEST(test_pelt_avg_exact),
	   UNIT_TEST(test_pelt_util_at),
	   UNIT_TEST(test_pelt_running_pair),
	   UNIT_TEST(test_entity_util))
