// SPDX-License-Identifier: MIT
/* Caps: quota of run time per period on a fair entity (sched/cap.c). */
#include "tests/unit/test_sched_util.h"

/*
 * Drive one pCPU the way the dispatcher and the simulator do: wake at the
 * next tick or at the engine's next event, whichever comes first.
 */
static void run_events(struct sched *s, uint64_t *now, uint64_t until)
{
	while (*now < until) {
		uint64_t tick = (*now / MS + 1) * MS, ev = sched_next_event(s, 0);
		uint64_t next = ev > *now && ev < tick ? ev : tick;

		*now = next < until ? next : until;
		if (*now == tick)
			sched_tick(s, *now);
		else
			sched_tick_cpu(s, 0, *now);
	}
}

/* Bad caps and cap + reservation are refused, naming the field; nothing changes. */
static void test_cap_params(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_dl_params dl = { 1 * MS, 10 * MS, 10 * MS };
	struct sched_entity_info info;
	char err[256];
	int f, d;

	f = add_ent(s, "f", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2 * MS, 500 * US, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cap period"));
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2 * MS, 2000 * MS, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cap period"));
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 11 * MS, 10 * MS, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cap quota"));
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 100 * US, 10 * MS, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cap quota"));
	CU_ASSERT_EQUAL(sched_set_cap(s, 99, 2 * MS, 10 * MS, 0, err, sizeof(err)), -SCHED_E_NOENT);
	sched_entity_info(s, f, &info);
	CU_ASSERT_EQUAL(info.cap_period_ns, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2 * MS, 10 * MS, 0, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(sched_set_reservation(s, f, &dl, 0, err, sizeof(err)), -SCHED_E_CLASS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cap"));
	sched_entity_info(s, f, &info);
	CU_ASSERT_FALSE(info.deadline);
	CU_ASSERT_EQUAL(info.cap_quota_ns, 2 * MS);
	CU_ASSERT_EQUAL(info.cap_period_ns, 10 * MS);
	d = add_dl(s, "d", 1 * MS, 10 * MS, 10 * MS, true, 0);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, d, 2 * MS, 10 * MS, 0, err, sizeof(err)), -SCHED_E_CLASS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "reservation"));
	sched_entity_info(s, d, &info);
	CU_ASSERT_EQUAL(info.cap_period_ns, 0);
	sched_destroy(s);
}

/* Alone on a pCPU, a busy capped entity gets its quota every period, no more. */
static void check_alone(uint64_t quota, uint64_t period, bool defer)
{
	struct sched_config cfg = { .no_tick_defer = !defer };
	struct sched *s = mk_sched(1, 1024, 0, 0, &cfg);
	struct sched_entity_stats st;
	uint64_t now = 0, total = 1000 * MS, periods = total / period, rest = total % period;
	uint64_t expect = periods * quota + (rest < quota ? rest : quota);
	uint64_t throttles = quota < period ? periods + (rest >= quota) : 0;
	int f;

	f = add_ent(s, "f", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, quota, period, 0, NULL, 0), 0);
	run_events(s, &now, total);
	sched_entity_stats(s, f, &st);
	CU_ASSERT_EQUAL(st.cpu_time_ns, expect);
	CU_ASSERT_EQUAL(st.nr_throttles, throttles);
	CU_ASSERT_EQUAL(st.throttled_ns + st.cpu_time_ns, total);
	sched_destroy(s);
}

static void test_cap_alone(void)
{
	check_alone(2 * MS, 10 * MS, true);
	check_alone(2 * MS, 10 * MS, false);
	check_alone(2500 * US, 7 * MS, true);	/* quota ends between ticks */
	check_alone(100 * MS, 100 * MS, true);	/* quota = period: never throttled */
}

/*
 * Driven by 1 ms ticks only (a caller that does not wake for the engine's
 * events), the throttling comes up to a tick late; the overrun is paid in
 * the next period, so over the run the cap still holds to within a tick.
 */
static void test_cap_ticks_only(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity_stats st;
	uint64_t now = 0;
	int f;

	f = add_ent(s, "f", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2500 * US, 10 * MS, 0, NULL, 0), 0);
	run_until(s, &now, 1000 * MS, MS);
	sched_entity_stats(s, f, &st);
	CU_ASSERT(st.cpu_time_ns <= 250 * MS + MS);
	CU_ASSERT(st.cpu_time_ns >= 250 * MS - MS);
	sched_destroy(s);
}

/* The capped entity's unused share goes to the other one on its pCPU. */
static void test_cap_work_conserving(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity_stats a, b;
	uint64_t now = 0;
	int capped, other;

	capped = add_ent(s, "capped", 1024, true, 0);
	other = add_ent(s, "other", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, capped, 2 * MS, 10 * MS, 0, NULL, 0), 0);
	run_events(s, &now, 1000 * MS);
	sched_entity_stats(s, capped, &a);
	sched_entity_stats(s, other, &b);
	CU_ASSERT(a.cpu_time_ns <= 200 * MS);
	CU_ASSERT(a.cpu_time_ns >= 195 * MS);
	CU_ASSERT_EQUAL(a.cpu_time_ns + b.cpu_time_ns, 1000 * MS);
	sched_destroy(s);
}

/* Live changes: removing the cap of a throttled entity runs it at once. */
static void test_cap_live_change(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity_stats st;
	uint64_t now = 0, before;
	int f;

	f = add_ent(s, "f", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2 * MS, 10 * MS, 0, NULL, 0), 0);
	run_events(s, &now, 5 * MS);
	CU_ASSERT_EQUAL(sched_ent(s, f)->state, SCHED_THROTTLED);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 0, 0, now, NULL, 0), 0);
	CU_ASSERT_EQUAL(curr_of(s, 0), f);
	sched_entity_stats(s, f, &st);
	CU_ASSERT_EQUAL(st.throttled_ns, 3 * MS);
	before = st.cpu_time_ns;
	run_events(s, &now, 105 * MS);
	sched_entity_stats(s, f, &st);
	CU_ASSERT_EQUAL(st.cpu_time_ns - before, 100 * MS);
	/*
	 * A new cap counts from the time it is set: 5 ms in what is left of
	 * the period 100..110 ms, 5 in each of 110..200, 5 in 200..205.
	 */
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 5 * MS, 10 * MS, now, NULL, 0), 0);
	before = st.cpu_time_ns;
	run_events(s, &now, 205 * MS);
	sched_entity_stats(s, f, &st);
	CU_ASSERT_EQUAL(st.cpu_time_ns - before, 55 * MS);
	sched_destroy(s);
}

/* Blocking while throttled, and waking with the quota used up. */
static void test_cap_block_wake(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	uint64_t now = 0;
	int f;

	f = add_ent(s, "f", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2 * MS, 10 * MS, 0, NULL, 0), 0);
	run_events(s, &now, 3 * MS);
	CU_ASSERT_EQUAL(sched_ent(s, f)->state, SCHED_THROTTLED);
	CU_ASSERT_EQUAL(sched_block(s, f, now), 0);
	run_events(s, &now, 12 * MS);		/* the period ends while it sleeps */
	CU_ASSERT_EQUAL(sched_ent(s, f)->state, SCHED_BLOCKED);
	CU_ASSERT_EQUAL(sched_wakeup(s, f, now), 0);
	CU_ASSERT_EQUAL(curr_of(s, 0), f);
	run_events(s, &now, 14 * MS);		/* quota of the second period used */
	CU_ASSERT_EQUAL(sched_ent(s, f)->state, SCHED_THROTTLED);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2 * MS, 10 * MS, now, NULL, 0), 0);
	run_events(s, &now, 16 * MS);		/* the new cap's quota, from 14 ms */
	CU_ASSERT_EQUAL(sched_block(s, f, now), 0);
	CU_ASSERT_EQUAL(sched_wakeup(s, f, now + 1 * MS), 0);	/* same period: held */
	CU_ASSERT_EQUAL(sched_ent(s, f)->state, SCHED_THROTTLED);
	CU_ASSERT_EQUAL(curr_of(s, 0), SCHED_NONE);
	now += MS;
	run_events(s, &now, 20 * MS);
	CU_ASSERT_EQUAL(curr_of(s, 0), f);
	sched_destroy(s);
}

/* A throttled entity whose affinity changes comes back where it may run. */
static void test_cap_affinity_while_throttled(void)
{
	struct sched *s = mk_sched(1, 1024, 1, 1024, NULL);
	struct sched_cpumask little;
	uint64_t now = 0;
	int f;

	f = add_ent(s, "f", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_set_cap(s, f, 2 * MS, 10 * MS, 0, NULL, 0), 0);
	run_until(s, &now, 3 * MS, MS);
	CU_ASSERT_EQUAL_FATAL(sched_ent(s, f)->state, SCHED_THROTTLED);
	sched_cluster_mask(s, (unsigned int)(1 - sched_cpu_cluster(s, (unsigned int)sched_ent(s, f)->cpu)),
			   &little);
	CU_ASSERT_EQUAL(sched_set_affinity(s, f, &little, now, NULL, 0), 0);
	run_until(s, &now, 11 * MS, MS);
	CU_ASSERT(sched_ent(s, f)->on_rq);
	CU_ASSERT(sched_cpumask_test(&little, (unsigned int)sched_ent(s, f)->cpu));
	sched_destroy(s);
}

/*
 * Seed 314159 #122 of the caps corpus (3.59 x the bound): three pCPUs of
 * 1024 and two of 371, every entity pinned to a cluster. On the two of
 * 371, v0 (33572) capped at 7.416 ms every 13 and v6 (63308) at 50.044
 * every 81, both held at their caps, v2 (15046) uncapped, and two light
 * ones: the ideal rates fill both pCPUs and no two of the three heavy
 * ones fit one. v2 sat alone on a pCPU, ahead of its ideal, while v0 and
 * v6 shared the other: without cap_ahead_share() the two held ones get
 * 2017 ms of work for an ideal of 2153 over 5 s, with it 2075.
 */
static void test_cap_ahead_pcpu_shared(void)
{
	static const uint32_t w[] = { 33572, 834, 15046, 257, 512, 105, 63308, 781, 25, 46,
				      57, 2491, 80, 419 };
	static const bool little_one[] = { 1, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0 };
	static const struct cap_of caps[] = {
		{ 0, 7416 * US, 13 * MS }, { 1, 29308 * US, 72 * MS }, { 3, 10275 * US, 81 * MS },
		{ 4, 49778 * US, 77 * MS }, { 5, 5185 * US, 27 * MS }, { 6, 50044 * US, 81 * MS },
		{ 8, 45541 * US, 86 * MS }, { 10, 43097 * US, 76 * MS } };
	struct sched *s = mk_sched(3, 1024, 2, 371, NULL);
	struct sched_cpumask big, little;
	uint64_t now = 0, dur = 5000 * MS;
	double ideal = (0.2067 + 0.2238) * (double)dur;	/* v0 and v6, the oracle's */
	int id[14];

	sched_cluster_mask(s, 0, &big);
	sched_cluster_mask(s, 1, &little);
	for (int i = 0; i < 14; i++) {
		id[i] = add_ent(s, "v", w[i], true, 0);
		CU_ASSERT_EQUAL(sched_set_affinity(s, id[i], little_one[i] ? &little : &big, 0,
						   NULL, 0), 0);
	}
	for (unsigned int c = 0; c < sizeof(caps) / sizeof(caps[0]); c++)
		CU_ASSERT_EQUAL(sched_set_cap(s, id[caps[c].i], caps[c].quota, caps[c].period, 0,
					      NULL, 0), 0);
	run_events_all(s, &now, dur);
	CU_ASSERT((double)(work_of(s, id[0]) + work_of(s, id[6])) >= 0.95 * ideal);
	sched_destroy(s);
}

/*
 * Seed 173205 #148 of the caps corpus: twelve pCPUs of 660 in clusters of
 * 3, 5 and 4, sixteen busy entities, eight of them owed a whole pCPU; v4
 * (weight 137) capped at 7.733 ms every 10 (tight) with an ideal of
 * 0.753 of its pCPU's time, 0.2 ms of quota to spare a period, beside
 * entities held by their caps (v6, v8, v12, v14) whose run weights are
 * far above its own. Least laxity first let their slices run inside its
 * laxity, since its cap does not bind in the ideal: v4 short in 167 of
 * 500 periods, 2304 ms of work for 2428 on the engine alone. Its laxity
 * counted against held picks (cap_all_but_holds()), within the bound.
 */
static void test_cap_all_but_held_urgent(void)
{
	static const uint32_t w[] = { 6468, 196, 31, 23884, 137, 2299, 35111, 730,
				      961, 41, 170, 21625, 3052, 4379, 217, 266 };
	static const struct cap_of caps[] = {
		{ 2, 4437 * US, 21 * MS }, { 4, 7733 * US, 10 * MS }, { 6, 3346 * US, 7 * MS },
		{ 8, 22248 * US, 38 * MS }, { 9, 25626 * US, 66 * MS }, { 12, 7328 * US, 14 * MS },
		{ 14, 21717 * US, 66 * MS } };
	static const unsigned int cpus[] = { 3, 5, 4 };
	struct sched_topology t;
	char err[256];
	struct sched *s;
	uint64_t now = 0, dur = 5000 * MS;
	double want = 2427.7 / 5000.0 * (double)dur;
	int id[16];

	memset(&t, 0, sizeof(t));
	t.nr_clusters = 3;
	for (unsigned int c = 0; c < 3; c++) {
		snprintf(t.clusters[c].name, SCHED_NAME_MAX, "c%u", c);
		t.clusters[c].nr_cpus = cpus[c];
		t.clusters[c].capacity = 660;
	}
	s = sched_create(&t, NULL, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	add_capped(s, id, w, 16, caps, (int)(sizeof(caps) / sizeof(caps[0])));
	run_events_all(s, &now, dur);
	CU_ASSERT((double)work_of(s, id[4]) >= 0.98 * want);	/* the corpus's bound */
	sched_destroy(s);
}

/*
 * The same against an uncapped pick: seed 13 #32 of the caps corpus, its
 * cluster of five pCPUs of 1024 alone. v3 (weight 47) capped at 11.103
 * ms every 14 (tight) has an ideal of 0.770 of a pCPU, 0.33 ms of quota
 * to spare a period. Going first by its laxity against any pick, it took
 * its cap's 0.793 from the uncapped light v9 beside it (2.38 x the bound
 * short in the corpus); only against a held pick, each within the bound.
 */
static void test_cap_all_but_held_not_against_uncapped(void)
{
	static const uint32_t w[] = { 14635, 59, 47, 555, 343, 18, 43 };
	static const struct cap_of caps[] = {
		{ 2, 11103 * US, 14 * MS }, { 3, 5032 * US, 19 * MS } };
	struct sched *s = mk_sched(5, 1024, 0, 0, NULL);
	uint64_t now = 0, dur = 5000 * MS;
	int id[7];

	add_capped(s, id, w, 7, caps, (int)(sizeof(caps) / sizeof(caps[0])));
	run_events_all(s, &now, dur);
	/* the corpus's bounds: 2% of the ideals, 3848.9 and 1474.0 ms */
	CU_ASSERT((double)work_of(s, id[5]) >= 0.98 * 1474.0 * MS);
	CU_ASSERT((double)work_of(s, id[2]) <= 1.02 * 3848.9 * MS);
	sched_destroy(s);
}

UNIT_SUITE(sched_cap, NULL, NULL,
	   UNIT_TEST(test_cap_all_but_held_not_against_uncapped),
	   UNIT_TEST(test_cap_all_but_held_urgent),
	   UNIT_TEST(test_cap_ahead_pcpu_shared),
	   UNIT_TEST(test_cap_affinity_while_throttled),
	   UNIT_TEST(test_cap_params),
	   UNIT_TEST(test_cap_alone),
	   UNIT_TEST(test_cap_ticks_only),
	   UNIT_TEST(test_cap_work_conserving),
	   UNIT_TEST(test_cap_live_change),
	   UNIT_TEST(test_cap_block_wake))
