// SPDX-License-Identifier: MIT
/* Engine core: topology validation, entities, events, queries and stats. */
#include "tests/unit/test_sched_util.h"

static struct sched_topology topo1(unsigned int cap, unsigned int ncpu)
{
	struct sched_topology t;

	memset(&t, 0, sizeof(t));
	t.nr_clusters = 1;
	snprintf(t.clusters[0].name, SCHED_NAME_MAX, "c0");
	t.clusters[0].capacity = cap;
	t.clusters[0].nr_cpus = ncpu;
	return t;
}

static void expect_create_error(struct sched_topology *t, const char *field)
{
	char err[256] = "";

	CU_ASSERT_PTR_NULL(sched_create(t, NULL, err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, field));
}

static void test_topology_validation(void)
{
	struct sched_topology t = topo1(0, 1);
	struct sched *s;

	expect_create_error(&t, "clusters[0].capacity");
	t = topo1(1025, 1);
	expect_create_error(&t, "clusters[0].capacity");
	t = topo1(512, 0);
	expect_create_error(&t, "clusters[0].cpus");
	t = topo1(512, 1);
	t.nr_clusters = 0;
	expect_create_error(&t, "clusters");
	t = topo1(512, 1);
	t.clusters[0].nr_levels = 2;
	t.clusters[0].levels[0] = 300;
	t.clusters[0].levels[1] = 200;
	expect_create_error(&t, "clusters[0].levels[1]");
	t.clusters[0].levels[1] = 400;
	expect_create_error(&t, "clusters[0].levels");	/* top != capacity */
	t.clusters[0].levels[1] = 512;
	t.nr_clusters = 2;
	t.clusters[1] = t.clusters[0];
	expect_create_error(&t, "clusters[1].name");	/* duplicate */
	snprintf(t.clusters[1].name, SCHED_NAME_MAX, "c1");
	t.clusters[1].nr_cpus = 3;
	s = sched_create(&t, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(sched_nr_cpus(s), 4);
	CU_ASSERT_EQUAL(sched_nr_clusters(s), 2);
	CU_ASSERT_EQUAL(sched_cpu_cluster(s, 0), 0);
	CU_ASSERT_EQUAL(sched_cpu_cluster(s, 3), 1);
	CU_ASSERT_EQUAL(sched_cpu_cluster(s, 4), -SCHED_E_NOENT);
	CU_ASSERT_EQUAL(sched_cluster_find(s, "c1"), 1);
	CU_ASSERT_EQUAL(sched_cluster_find(s, "zz"), -SCHED_E_NOENT);
	CU_ASSERT_EQUAL(sched_cluster_desc(s, 1)->nr_cpus, 3);
	sched_destroy(s);
}

static void test_entity_validation(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	struct sched_entity_params p;
	char err[256];

	sched_entity_params_init(&p, "e");
	p.nice = 25;
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nice"));
	sched_entity_params_init(&p, "e");
	p.weight = SCHED_WEIGHT_MAX + 1;
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "weight"));
	sched_entity_params_init(&p, "e");
	p.uclamp_min = 600;
	p.uclamp_max = 500;
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "uclamp"));
	sched_entity_params_init(&p, "e");
	sched_cpumask_set(&p.affinity, 7);	/* no such pCPU */
	CU_ASSERT_EQUAL(sched_entity_add(s, &p, 0, err, sizeof(err)), -SCHED_E_AFFINITY);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "affinity"));
	CU_ASSERT_FALSE(sched_uclamp_enabled(s));	/* rejected adds change nothing */
	CU_ASSERT_EQUAL(sched_wakeup(s, 0, 0), -SCHED_E_NOENT);
	CU_ASSERT_EQUAL(sched_block(s, -1, 0), -SCHED_E_NOENT);
	sched_destroy(s);
}

/* Ids are dense and reused lowest-first; removal works in every state. */
static void test_add_remove(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	int ids[40];

	for (int i = 0; i < 40; i++) {
		ids[i] = add_ent(s, "e", 1024, i % 2, 0);
		CU_ASSERT_EQUAL(ids[i], i);
	}
	CU_ASSERT_EQUAL(sched_entity_remove(s, ids[3], 0), 0);
	CU_ASSERT_EQUAL(sched_entity_remove(s, curr_of(s, 0), 0), 0);
	CU_ASSERT_EQUAL(sched_entity_remove(s, ids[3], 0), -SCHED_E_NOENT);
	CU_ASSERT_EQUAL(add_ent(s, "again", 1024, true, 0), 1);	/* curr was id 1 */
	CU_ASSERT_EQUAL(add_ent(s, "again", 1024, true, 0), 3);
	CU_ASSERT_EQUAL(s->rq[0].nr_running, 20);
	sched_destroy(s);
}

struct ev_log {
	int switches, migrations, perf;
	int last_prev, last_next;
};

static void log_event(void *opaque, const struct sched_event *ev)
{
	struct ev_log *l = opaque;

	if (ev->type == SCHED_EV_SWITCH) {
		l->switches++;
		l->last_prev = ev->prev;
		l->last_next = ev->next;
	} else if (ev->type == SCHED_EV_MIGRATE) {
		l->migrations++;
	} else if (ev->type == SCHED_EV_PERF) {
		l->perf++;
	}
}

/* The generation counter and the event hook report every switch. */
static void test_gen_and_events(void)
{
	struct ev_log log = { 0 };
	struct sched_config cfg = { 0 };
	struct sched_cpu_state st;
	struct sched *s;
	uint64_t g0, now = 0;
	int a, b;

	cfg.event = log_event;
	cfg.event_opaque = &log;
	s = mk_sched(1, 1024, 0, 0, &cfg);
	g0 = sched_cpu_gen(s, 0);
	a = add_ent(s, "a", 1024, true, 0);
	CU_ASSERT(sched_cpu_gen(s, 0) > g0);
	CU_ASSERT_EQUAL(log.switches, 1);
	CU_ASSERT_EQUAL(log.last_prev, SCHED_NONE);
	CU_ASSERT_EQUAL(log.last_next, a);
	b = add_ent(s, "b", 1024, true, 0);
	g0 = sched_cpu_gen(s, 0);
	sched_block(s, a, 10);
	CU_ASSERT(sched_cpu_gen(s, 0) > g0);
	CU_ASSERT_EQUAL(log.last_prev, a);
	CU_ASSERT_EQUAL(log.last_next, b);
	CU_ASSERT_EQUAL(sched_cpu_curr(s, 0, &st), 0);
	CU_ASSERT_EQUAL(st.curr, b);
	CU_ASSERT_EQUAL(st.capacity, 1024);
	CU_ASSERT_EQUAL(st.gen, sched_cpu_gen(s, 0));
	CU_ASSERT_EQUAL(sched_cpu_curr(s, 5, &st), -SCHED_E_NOENT);
	run_until(s, &now, 100 * MS, MS);
	CU_ASSERT(log.perf >= 1);	/* a lone busy entity: the level moves */
	sched_destroy(s);
}

/* Wait time, wakeup latency histogram and per-cluster CPU time. */
static void test_stats(void)
{
	struct sched *s = mk_sched(1, 1024, 1, 512, NULL);
	struct sched_entity_stats st;
	struct sched_cpu_stats cs;
	struct sched_cpumask big;
	uint64_t now = 0;
	int a, b;

	sched_cluster_mask(s, 0, &big);
	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, false, 0);
	sched_set_affinity(s, a, &big, 0, NULL, 0);
	sched_set_affinity(s, b, &big, 0, NULL, 0);
	run_until(s, &now, 10 * MS, MS);
	/* b wakes behind a with zero lag: waits until a's slice ends. */
	sched_wakeup(s, b, now);
	run_until(s, &now, 100 * MS, MS);
	sched_entity_stats(s, b, &st);
	CU_ASSERT_EQUAL(st.nr_wakeups, 1);
	CU_ASSERT_EQUAL(st.lat_count, 1);
	CU_ASSERT(st.lat_max_ns <= s->cfg.slice_ns);
	CU_ASSERT_EQUAL(sched_lat_percentile(&st, 50), st.lat_max_ns);
	CU_ASSERT(st.wait_ns > 30 * MS && st.wait_ns < 60 * MS);
	CU_ASSERT_EQUAL(st.cpu_time_by_cluster_ns[0], st.cpu_time_ns);
	CU_ASSERT_EQUAL(st.cpu_time_by_cluster_ns[1], 0);
	sched_cpu_stats(s, 0, &cs);
	CU_ASSERT_EQUAL(cs.busy_ns, 100 * MS);
	CU_ASSERT_EQUAL(cs.nr_running, 2);
	sched_cpu_stats(s, 1, &cs);
	CU_ASSERT_EQUAL(cs.idle_ns, 100 * MS);
	sched_destroy(s);
}

/*
 * CPU time per cluster across a migration, read while the entity runs (the
 * current stint is kept aside until switch-out) and after it blocked.
 */
static void test_stats_run_time_by_cluster(void)
{
	struct sched *s = mk_sched(1, 1024, 1, 512, NULL);
	struct sched_entity_stats st;
	struct sched_cpumask big, little;
	uint64_t now = 0;
	int a;

	sched_cluster_mask(s, 0, &big);
	sched_cluster_mask(s, 1, &little);
	a = add_ent(s, "a", 1024, true, 0);
	sched_set_affinity(s, a, &big, 0, NULL, 0);
	run_until(s, &now, 20 * MS, MS);
	sched_entity_stats(s, a, &st);
	CU_ASSERT_EQUAL(st.cpu_time_ns, 20 * MS);
	CU_ASSERT_EQUAL(st.cpu_time_by_cluster_ns[0], 20 * MS);
	CU_ASSERT(st.work_ns > 0 && st.work_ns <= 20 * MS);
	sched_set_affinity(s, a, &little, now, NULL, 0);	/* moves it */
	run_until(s, &now, 50 * MS, MS);
	sched_entity_stats(s, a, &st);
	CU_ASSERT_EQUAL(st.cpu_time_ns, 50 * MS);
	CU_ASSERT_EQUAL(st.cpu_time_by_cluster_ns[0], 20 * MS);
	CU_ASSERT_EQUAL(st.cpu_time_by_cluster_ns[1], 30 * MS);
	sched_block(s, a, now);
	run_until(s, &now, 60 * MS, MS);
	sched_entity_stats(s, a, &st);
	CU_ASSERT_EQUAL(st.cpu_time_ns, 50 * MS);
	CU_ASSERT_EQUAL(st.cpu_time_by_cluster_ns[1], 30 * MS);
	CU_ASSERT(st.work_ns <= 20 * MS + 30 * MS / 2);	/* little runs at <= 512 */
	sched_destroy(s);
}

/* The latency histogram: exact below 8 ns, then within 12.5%. */
static void test_latency_histogram(void)
{
	struct sched_entity_stats st;
	uint64_t vals[] = { 0, 5, 8, 9, 100, 1000, 123456, 1000000, 5000000000ull };

	for (unsigned int i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		unsigned int b = lat_bucket(vals[i]);

		CU_ASSERT(lat_bucket_upper(b) >= vals[i]);
		CU_ASSERT(lat_bucket_upper(b) <= vals[i] + vals[i] / 8 + 1);
		if (b)
			CU_ASSERT(lat_bucket_upper(b - 1) < vals[i]);
	}
	memset(&st, 0, sizeof(st));
	for (uint64_t v = 1; v <= 100; v++)
		stats_lat_record(&st, v * 1000);
	CU_ASSERT(sched_lat_percentile(&st, 50) >= 50000 && sched_lat_percentile(&st, 50) <= 57000);
	CU_ASSERT(sched_lat_percentile(&st, 99) >= 99000);
	CU_ASSERT_EQUAL(sched_lat_percentile(&st, 100), 100000);
}

/* sched_next_event(): the slice end of the current entity. */
static void test_next_event(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	int a;

	CU_ASSERT_EQUAL(sched_next_event(s, 0), UINT64_MAX);
	a = add_ent(s, "a", 1024, true, 0);
	CU_ASSERT_EQUAL(sched_next_event(s, 0), UINT64_MAX);	/* alone: no slice end */
	add_ent(s, "b", 1024, true, 0);
	/* a started with half a slice. */
	CU_ASSERT_EQUAL(sched_next_event(s, 0), s->cfg.slice_ns / 2);
	sched_tick(s, s->cfg.slice_ns / 2);
	CU_ASSERT_NOT_EQUAL(curr_of(s, 0), a);
	sched_destroy(s);
}

/* Affinity changes move entities at once; setters reject bad input. */
static void test_affinity(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	struct sched_cpumask m;
	int a, b;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, true, 0);
	CU_ASSERT_NOT_EQUAL(sched_ent(s, a)->cpu, sched_ent(s, b)->cpu);
	sched_cpumask_clear(&m);
	sched_cpumask_set(&m, (unsigned int)sched_ent(s, a)->cpu);
	CU_ASSERT_EQUAL(sched_set_affinity(s, b, &m, 5, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_ent(s, b)->cpu, sched_ent(s, a)->cpu);
	sched_cpumask_clear(&m);
	sched_cpumask_set(&m, 9);
	CU_ASSERT_EQUAL(sched_set_affinity(s, b, &m, 6, NULL, 0), -SCHED_E_AFFINITY);
	CU_ASSERT_EQUAL(sched_ent(s, b)->cpu, sched_ent(s, a)->cpu);	/* unchanged */
	sched_destroy(s);
}

/* A call with an older `now` (another thread got the lock first) is harmless. */
static void test_time_never_backwards(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_entity_stats st;
	int a, b;

	a = add_ent(s, "a", 1024, true, 0);
	b = add_ent(s, "b", 1024, false, 0);
	sched_tick(s, 10 * MS);
	sched_wakeup(s, b, 9 * MS);	/* late report */
	sched_block(s, a, 8 * MS);
	sched_tick(s, 12 * MS);
	sched_entity_stats(s, b, &st);
	CU_ASSERT(st.wait_ns < 10 * MS && st.lat_max_ns < 10 * MS);
	CU_ASSERT_EQUAL(st.cpu_time_ns, 2 * MS);
	sched_entity_stats(s, a, &st);
	CU_ASSERT_EQUAL(st.cpu_time_ns, 10 * MS);
	sched_destroy(s);
}

/* for_each_class() walks deadline then fair, and only deadline is above fair. */
static void test_class_order(void)
{
	const struct sched_class *c, *seen[SCHED_NR_CLASSES];
	unsigned int n = 0;

	for_each_class(c)
		seen[n++] = c;
	CU_ASSERT_EQUAL(n, SCHED_NR_CLASSES);
	CU_ASSERT_PTR_EQUAL(seen[0], &dl_sched_class);
	CU_ASSERT_PTR_EQUAL(seen[1], &fair_sched_class);
	CU_ASSERT_TRUE(sched_class_above(&dl_sched_class, &fair_sched_class));
	CU_ASSERT_FALSE(sched_class_above(&fair_sched_class, &dl_sched_class));
	CU_ASSERT_FALSE(sched_class_above(&fair_sched_class, &fair_sched_class));
	CU_ASSERT_FALSE(sched_class_above(&dl_sched_class, &dl_sched_class));
}

UNIT_SUITE(sched_core, NULL, NULL,
	   UNIT_TEST(test_class_order),
	   UNIT_TEST(test_time_never_backwards),
	   UNIT_TEST(test_topology_validation),
	   UNIT_TEST(test_entity_validation),
	   UNIT_TEST(test_add_remove),
	   UNIT_TEST(test_gen_and_events),
	   UNIT_TEST(test_stats),
	   UNIT_TEST(test_stats_run_time_by_cluster),
	   UNIT_TEST(test_latency_histogram),
	   UNIT_TEST(test_next_event),
	   UNIT_TEST(test_affinity))
