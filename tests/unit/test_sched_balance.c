// SPDX-License-Identifier: MIT
/* Placement, misfit, load balance, newidle cost (rules 19, 25-26) and perf (23-24). */
#include "tests/unit/test_sched_util.h"

/* Wakeup placement: an idle pCPU the entity fits (uclamp min 800 -> big). */
static void test_placement_fits(void)
{
	struct sched *s = mk_sched(1, 1024, 3, 512, NULL);
	struct sched_entity_params p;
	int id;

	sched_entity_params_init(&p, "boost");
	p.uclamp_min = 800;
	p.runnable = true;
	id = sched_entity_add(s, &p, 0, NULL, 0);
	CU_ASSERT_EQUAL(sched_ent(s, id)->cpu, 0);
	/* Others spread over idle pCPUs first. */
	for (int i = 0; i < 3; i++)
		add_ent(s, "x", 1024, true, 0);
	for (unsigned int c = 0; c < 4; c++)
		CU_ASSERT_EQUAL(s->rq[c].nr_running, 1);
	sched_destroy(s);
}

/* A busy entity on a little pCPU becomes misfit and moves to an idle big one. */
static void test_misfit_migration(void)
{
	struct sched *s = mk_sched(1, 1024, 1, 512, NULL);
	struct sched_cpumask little;
	struct sched_cpu_stats cs;
	uint64_t now = 0;
	int a;

	a = add_ent(s, "a", 1024, true, 0);
	sched_cluster_mask(s, 1, &little);
	CU_ASSERT_EQUAL(sched_set_affinity(s, a, &little, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_ent(s, a)->cpu, 1);
	run_until(s, &now, 300 * MS, MS);
	CU_ASSERT_EQUAL(sched_ent(s, a)->cpu, 1);	/* pinned: stays */
	CU_ASSERT_EQUAL(sched_set_affinity(s, a, NULL, now, NULL, 0), 0);
	run_until(s, &now, 320 * MS, MS);
	CU_ASSERT_EQUAL(sched_ent(s, a)->cpu, 0);
	sched_cpu_stats(s, 1, &cs);
	CU_ASSERT_EQUAL(cs.nr_misfit_migrations, 1);
	sched_destroy(s);
}

/* Periodic balance spreads weight over pCPUs in proportion to capacity. */
static void test_load_balance(void)
{
	struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
	struct sched_cpumask m0;
	uint64_t now = 0;
	int id[4];

	sched_cpumask_clear(&m0);
	sched_cpumask_set(&m0, 0);
	for (int i = 0; i < 4; i++) {
		id[i] = add_ent(s, "b", 1024, false, 0);
		sched_set_affinity(s, id[i], &m0, 0, NULL, 0);
		sched_wakeup(s, id[i], 0);
	}
	CU_ASSERT_EQUAL(s->rq[0].nr_running, 4);
	for (int i = 0; i < 4; i++)
		sched_set_affinity(s, id[i], NULL, 0, NULL, 0);
	run_until(s, &now, 20 * MS, MS);
	CU_ASSERT_EQUAL(s->rq[0].nr_running, 2);
	CU_ASSERT_EQUAL(s->rq[1].nr_running, 2);
	sched_destroy(s);
}

/*
 * Where does the periodic balance move one of three entities waiting on
 * pCPU 0, when pCPU 1 (weight 1024) is the least loaded and pCPU 2 (1536)
 * the next, and pCPU 1 is or is not a pCPU of a tight level (lag_tight)?
 * The lag balance is kept out (its interval has not passed).
 */
static int periodic_balance_target(bool tight)
{
	static const uint32_t weight[5] = { 1024, 1024, 1024, 1024, 1536 };
	static const unsigned int on[5] = { 0, 0, 0, 1, 2 };
	struct sched *s = mk_sched(3, 1024, 0, 0, NULL);
	struct sched_cpumask m;
	int id[5], to = -1;

	for (int i = 0; i < 5; i++) {
		id[i] = add_ent(s, "b", weight[i], false, 0);
		sched_cpumask_clear(&m);
		sched_cpumask_set(&m, on[i]);
		CU_ASSERT_FATAL(sched_set_affinity(s, id[i], &m, 0, NULL, 0) == 0);
		sched_wakeup(s, id[i], 0);
	}
	for (int i = 0; i < 3; i++)
		CU_ASSERT_FATAL(sched_set_affinity(s, id[i], NULL, 0, NULL, 0) == 0);
	CU_ASSERT_FATAL(s->rq[0].nr_running == 3);
	s->rq[1].lag_tight = tight;
	s->lag_last = 2 * MS;
	sched_balance(s, 3 * MS);		/* pCPU 0's first balance above the mean */
	sched_balance(s, 4 * MS);		/* the second: it gives one away */
	for (int i = 0; i < 3; i++)
		if (s->ent[id[i]]->cpu != 0)
			to = s->ent[id[i]]->cpu;
	sched_destroy(s);
	return to;
}

/*
 * The periodic balance moves nothing onto a pCPU of a tight level of the
 * ideal (its entities' rates add up to all of its pCPUs), as onto a full
 * one: the level needs all of it. Its lightly loaded pCPU drew the
 * sleepers from the slow pCPUs by weight (seed 1 #110 of the fair corpus:
 * the tight level 0.53 s short, the sleepers 0.84 s on fast pCPUs).
 */
static void test_balance_leaves_a_tight_level(void)
{
	CU_ASSERT_EQUAL(periodic_balance_target(false), 1);
	CU_ASSERT_EQUAL(periodic_balance_target(true), 2);
}

/* Three busy entities on pCPU 0 and one on each of pCPUs 1 and 2: none is idle. */
static uint64_t busy_host_lb_migrations(const struct sched_config *cfg, uint64_t until)
{
	struct sched *s = mk_sched(3, 1024, 0, 0, cfg);
	struct sched_cpumask m;
	struct sched_cpu_stats cs;
	uint64_t now = 0, moved = 0;
	int id[5];

	for (int i = 0; i < 5; i++) {
		id[i] = add_ent(s, "b", 1024, false, 0);
		sched_cpumask_clear(&m);
		sched_cpumask_set(&m, i < 3 ? 0 : (unsigned int)i - 2);
		sched_set_affinity(s, id[i], &m, 0, NULL, 0);
		sched_wakeup(s, id[i], 0);
	}
	for (int i = 0; i < 3; i++)
		sched_set_affinity(s, id[i], NULL, 0, NULL, 0);
	CU_ASSERT_EQUAL(s->rq[0].nr_running, 3);
	run_until(s, &now, until, MS);
	for (unsigned int c = 0; c < 3; c++) {
		CU_ASSERT_FALSE(s->rq[c].idle);
		sched_cpu_stats(s, c, &cs);
		moved += cs.nr_lb_migrations;
	}
	sched_destroy(s);
	return moved;
}

/*
 * With no idle pCPU the periodic balance runs busy_factor times less
 * often: pCPU 0's surplus (two balances in a row above the mean) moves
 * after 2 x 4 ms with busy_factor 1, after 2 x 16 ms by default.
 */
static void test_busy_balance_interval(void)
{
	struct sched_config cfg = { 0 };

	cfg.busy_factor = 1;
	CU_ASSERT_EQUAL(busy_host_lb_migrations(&cfg, 9 * MS), 1);
	CU_ASSERT_EQUAL(busy_host_lb_migrations(NULL, 30 * MS), 0);
	CU_ASSERT_EQUAL(busy_host_lb_migrations(NULL, 33 * MS), 1);
}

/* update_newidle_cost(): raise, else decay by 253/256 after 1 s (rule 25). */
static void test_newidle_cost_decay(void)
{
	struct sched_domain_cost sd;

	memset(&sd, 0, sizeof(sd));
	CU_ASSERT_FALSE(update_newidle_cost(&sd, 1000, 5));
	CU_ASSERT_EQUAL(sd.max_newidle_lb_cost, 1000);
	CU_ASSERT_FALSE(update_newidle_cost(&sd, 400, 5 + NSEC_PER_SEC / 2));
	CU_ASSERT_EQUAL(sd.max_newidle_lb_cost, 1000);	/* recent: no decay */
	CU_ASSERT_TRUE(update_newidle_cost(&sd, 400, 6 + NSEC_PER_SEC));
	CU_ASSERT_EQUAL(sd.max_newidle_lb_cost, 1000 * 253 / 256);
	CU_ASSERT_FALSE(update_newidle_cost(&sd, 0, 7 + NSEC_PER_SEC));
	CU_ASSERT_EQUAL(sd.max_newidle_lb_cost, 988);
	CU_ASSERT_FALSE(update_newidle_cost(&sd, 5000, 8 + NSEC_PER_SEC));
	CU_ASSERT_EQUAL(sd.max_newidle_lb_cost, 5000);
}

/*
 * The periodic balance decays every domain's cost once its last decay is
 * more than 1 s old, and not before, also when domains were raised at
 * different times (the balance skips its walk until the oldest is due).
 */
static void test_newidle_cost_periodic_decay(void)
{
	struct sched *s = mk_sched(2, 1024, 2, 512, NULL);
	uint64_t now = 0;

	for (unsigned int cpu = 0; cpu < 4; cpu++)
		for (int d = 0; d < SCHED_DOMAINS; d++)
			CU_ASSERT_TRUE(s->rq[cpu].sd[d].valid);
	run_until(s, &now, 100 * MS, MS);
	/* pCPU 1's cluster domain raised at 100 ms, the others stay at 0. */
	CU_ASSERT_FALSE(update_newidle_cost(&s->rq[1].sd[0], 8000, now));
	run_until(s, &now, 1100 * MS, MS);
	CU_ASSERT_EQUAL(s->rq[1].sd[0].max_newidle_lb_cost, 8000);	/* 1 s old exactly */
	CU_ASSERT_EQUAL(s->rq[1].sd[0].last_decay_max_lb_cost, 100 * MS);
	run_until(s, &now, 1104 * MS, MS);				/* the next balance */
	CU_ASSERT_EQUAL(s->rq[1].sd[0].max_newidle_lb_cost, 8000 * 253 / 256);
	CU_ASSERT_EQUAL(s->rq[1].sd[0].last_decay_max_lb_cost, 1104 * MS);
	/* Decayed again only a second later. */
	run_until(s, &now, 2104 * MS, MS);
	CU_ASSERT_EQUAL(s->rq[1].sd[0].max_newidle_lb_cost, 8000 * 253 / 256);
	run_until(s, &now, 2108 * MS, MS);
	CU_ASSERT_EQUAL(s->rq[1].sd[0].max_newidle_lb_cost, 8000 * 253 / 256 * 253 / 256);
	sched_destroy(s);
}

static uint64_t fake_clock_ns;
static uint64_t fake_clock_step;

static uint64_t fake_clock(void *opaque)
{
	(void)opaque;
	fake_clock_ns += fake_clock_step;
	return fake_clock_ns;
}

/*
 * Newidle: a pCPU going idle pulls a waiting entity, with the cost measured
 * by the caller's clock; once the measured cost exceeds avg_idle, newidle
 * is skipped (rule 26).
 */
static void test_newidle_pull_and_skip(void)
{
	struct sched_config cfg = { 0 };
	struct sched_cpu_stats cs;
	struct sched *s;
	uint64_t now = 0;
	int a, b, c;

	cfg.clock = fake_clock;
	cfg.balance_interval_ns = 1000 * MS;	/* keep the periodic balance out */
	fake_clock_step = 1000;			/* 1 us per clock read */
	s = mk_sched(2, 1024, 0, 0, &cfg);
	a = add_ent(s, "a", 1024, true, 0);	/* cpu 0 */
	b = add_ent(s, "b", 1024, true, 0);	/* cpu 1 */
	c = add_ent(s, "c", 1024, true, 0);	/* queued behind one of them */
	CU_ASSERT_EQUAL(s->nr_overloaded, 1);
	now = 2 * MS;
	sched_tick(s, now);
	/* The pCPU without the waiting entity goes idle: it pulls c. */
	{
		int lonely = s->rq[0].nr_running == 1 ? 0 : 1;

		sched_block(s, curr_of(s, (unsigned int)lonely), now);
		CU_ASSERT_EQUAL(s->rq[lonely].nr_running, 1);
		sched_cpu_stats(s, (unsigned int)lonely, &cs);
		CU_ASSERT_EQUAL(cs.nr_newidle_pulled, 1);
		CU_ASSERT_EQUAL(s->rq[lonely].sd[0].max_newidle_lb_cost, 1000);
	}
	/* Costs far above avg_idle: newidle is skipped. */
	for (unsigned int cpu = 0; cpu < 2; cpu++)
		s->rq[cpu].sd[0].max_newidle_lb_cost = 100 * MS;
	sched_wakeup(s, a, now);
	sched_wakeup(s, b, now);
	{
		int lonely = s->rq[0].nr_running == 1 ? 0 : 1;
		uint64_t skipped;

		sched_cpu_stats(s, (unsigned int)lonely, &cs);
		skipped = cs.nr_newidle_skipped;
		sched_block(s, curr_of(s, (unsigned int)lonely), now + 1);
		sched_cpu_stats(s, (unsigned int)lonely, &cs);
		CU_ASSERT_EQUAL(cs.nr_newidle_skipped, skipped + 1);
		CU_ASSERT_EQUAL(s->rq[lonely].nr_running, 0);
	}
	(void)c;
	sched_destroy(s);
}

/*
 * Does a pCPU going idle pull the waiting entity when its fluid lag (work
 * ahead of its ideal: negative) is `lag`?
 */
static bool newidle_pulls_with_lag(int64_t lag)
{
	struct sched_config cfg = { 0 };
	struct sched_cpu_stats cs;
	struct sched *s;
	uint64_t now = 2 * MS;
	int lonely, id[3];

	cfg.balance_interval_ns = 1000 * MS;	/* keep the periodic balance out */
	s = mk_sched(2, 1024, 0, 0, &cfg);
	id[0] = add_ent(s, "a", 1024, true, 0);
	id[1] = add_ent(s, "b", 1024, true, 0);
	id[2] = add_ent(s, "c", 1024, true, 0);	/* one of the three waits */
	sched_tick(s, now);			/* the fluid balance's first round */
	for (int i = 0; i < 3; i++) {		/* as a later round leaves them */
		s->ent[id[i]]->lag_tracked = true;
		s->ent[id[i]]->lag = lag;
	}
	lonely = s->rq[0].nr_running == 1 ? 0 : 1;
	sched_block(s, curr_of(s, (unsigned int)lonely), now);
	sched_cpu_stats(s, (unsigned int)lonely, &cs);
	sched_destroy(s);
	return cs.nr_newidle_pulled == 1;
}

/*
 * Newidle does not pull an entity already ahead of its fluid ideal by a
 * move's worth (the idle time would put it further ahead); short of that
 * it does.
 */
static void test_newidle_skips_entity_ahead(void)
{
	CU_ASSERT_TRUE(newidle_pulls_with_lag(0));
	CU_ASSERT_TRUE(newidle_pulls_with_lag(-(int64_t)FAIR_LAG_MOVE_NS + (int64_t)MS));
	CU_ASSERT_FALSE(newidle_pulls_with_lag(-(int64_t)FAIR_LAG_MOVE_NS - (int64_t)MS));
}

/*
 * Does the little pCPU (256), going idle, pull the entity that waits on
 * the big one when that entity's ideal rate (fairlag.c) is `rate` (1 << 20
 * = one 1024 pCPU)?
 */
static bool newidle_pulls_to_little(uint64_t rate)
{
	struct sched_config cfg = { 0 };
	struct sched_cpu_stats cs;
	struct sched *s;
	uint64_t now = 2 * MS;
	struct sched_entity *waiting;
	int a, c;

	cfg.balance_interval_ns = 1000 * MS;	/* keep the periodic balance out */
	s = mk_sched(1, 1024, 1, 256, &cfg);
	a = add_ent(s, "a", 1024, true, 0);	/* big */
	add_ent(s, "b", 1024, true, 0);		/* little */
	c = add_ent(s, "c", 1024, true, 0);	/* big too: a or c waits */
	sched_tick(s, now);
	waiting = s->ent[curr_of(s, 0) == a ? c : a];
	CU_ASSERT_FATAL(waiting->cpu == 0 && s->rq[1].nr_running == 1);
	waiting->lag_tracked = true;		/* as a round of the balance leaves it */
	waiting->lag = 0;
	waiting->lag_rate = rate;
	sched_block(s, curr_of(s, 1), now);
	sched_cpu_stats(s, 1, &cs);
	sched_destroy(s);
	return cs.nr_newidle_pulled == 1;
}

/*
 * Newidle pulls a waiting entity only if its share is what the idle pCPU
 * can give, even when no other waits: one whose share is more waited a
 * moment on its fast pCPU, and ran on the slow one until the misfit
 * balance took it back (seed 10 #289 of the fair corpus).
 */
static void test_newidle_only_where_share_fits(void)
{
	CU_ASSERT_TRUE(newidle_pulls_to_little((256ull << 10) - 1));
	CU_ASSERT_FALSE(newidle_pulls_to_little((256ull << 10) + (1u << 14)));
}

/*
 * Where does sleeper S wake, with a demand of `demand` (1 << 20 = one 1024
 * pCPU), when it last ran on the big pCPU beside a busy entity and the
 * little one (256) is idle but too small for its util_avg?
 */
static int sleeper_wakes_on(uint64_t demand)
{
	struct sched *s = mk_sched(1, 1024, 1, 256, NULL);
	struct sched_cpumask big;
	struct sched_entity *z;
	uint64_t now = MS;
	int cpu;

	add_ent(s, "busy", 1024, true, 0);	/* big */
	z = s->ent[add_ent(s, "sleeper", 1024, false, 0)];
	sched_cpumask_clear(&big);
	sched_cpumask_set(&big, 0);
	CU_ASSERT_FATAL(sched_set_affinity(s, z->id, &big, now, NULL, 0) == 0);
	sched_wakeup(s, z->id, now);
	sched_block(s, z->id, now + US);
	CU_ASSERT_FATAL(sched_set_affinity(s, z->id, NULL, now + US, NULL, 0) == 0);
	CU_ASSERT_FATAL(z->cpu == 0 && s->rq[1].nr_running == 0);
	z->pelt.util_avg = 600;			/* more than 80% of 256 */
	z->sl_init = true;
	z->sl_demand = demand;
	sched_wakeup(s, z->id, now + 2 * US);
	cpu = z->cpu;
	sched_destroy(s);
	return cpu;
}

/*
 * A sleeper whose demand the idle little pCPU covers wakes there rather
 * than beside the busy entity on its previous, big, pCPU (time it takes
 * there is that entity's); one whose demand it does not cover stays.
 */
static void test_wakeup_idle_pcpu_that_covers_demand(void)
{
	CU_ASSERT_EQUAL(sleeper_wakes_on((1u << 20) / 10), 1);
	CU_ASSERT_EQUAL(sleeper_wakes_on((1u << 20) / 4), 0);
}

/*
 * Walking the domains stops once avg_idle < cost so far + the next
 * domain's max cost (rule 26): the cluster domain is tried, the host
 * domain is not, and nothing is pulled from the other cluster.
 */
static void test_newidle_abort(void)
{
	struct sched_config cfg = { 0 };
	struct sched_cpu_stats cs;
	struct sched *s;
	int a, b, c;

	cfg.balance_interval_ns = 1000 * MS;
	s = mk_sched(2, 1024, 1, 512, &cfg);
	a = add_ent(s, "a", 1024, true, 0);		/* cpu 0 */
	b = add_ent(s, "b", 1024, true, 0);		/* cpu 1 */
	c = add_ent(s, "c", 1024, true, 0);		/* cpu 2 (little) */
	{
		/* d waits on the little pCPU, free to run anywhere. */
		struct sched_cpumask m;
		int d = add_ent(s, "d", 1024, false, 0);

		sched_cpumask_clear(&m);
		sched_cpumask_set(&m, 2);
		sched_set_affinity(s, d, &m, 0, NULL, 0);
		sched_wakeup(s, d, 0);
		sched_set_affinity(s, d, NULL, 0, NULL, 0);
	}
	CU_ASSERT_EQUAL(s->nr_overloaded, 1);
	CU_ASSERT_EQUAL_FATAL(s->rq[2].nr_running, 2);
	s->rq[0].avg_idle = 100 * US;
	s->rq[0].sd[0].max_newidle_lb_cost = 10 * US;	/* cluster: tried */
	s->rq[0].sd[1].max_newidle_lb_cost = 95 * US;	/* host: 50 + 95 > 100 */
	s->cfg.newidle_model_ns_per_cpu = 25 * US;	/* the cluster try costs 50 us */
	sched_block(s, curr_of(s, 0), MS);
	sched_cpu_stats(s, 0, &cs);
	CU_ASSERT_EQUAL(cs.nr_newidle, 1);
	CU_ASSERT_EQUAL(cs.nr_newidle_aborted, 1);
	CU_ASSERT_EQUAL(cs.nr_newidle_pulled, 0);
	CU_ASSERT_EQUAL(s->rq[0].nr_running, 0);
	CU_ASSERT_EQUAL(s->rq[0].sd[0].max_newidle_lb_cost, 50 * US);	/* raised */
	(void)a;
	(void)b;
	(void)c;
	sched_destroy(s);
}

/* avg_idle is a 1/8 EWMA of idle periods (rule 26). */
static void test_avg_idle(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	int a = add_ent(s, "a", 1024, false, 0);
	uint64_t before = s->rq[0].avg_idle;

	sched_wakeup(s, a, 200 * US);	/* idle 0..200 us */
	CU_ASSERT_EQUAL(s->rq[0].avg_idle, before - (before - 200 * US) / 8);
	sched_destroy(s);
}

/* Level rounding: up to the next level, down if that crosses the clamp. */
static void test_perf_round(void)
{
	struct sched_cluster_desc d;

	memset(&d, 0, sizeof(d));
	d.capacity = 1024;
	d.nr_levels = 4;
	d.levels[0] = 256;
	d.levels[1] = 512;
	d.levels[2] = 768;
	d.levels[3] = 1024;
	CU_ASSERT_EQUAL(perf_round_level(&d, 300, 1024), 512);
	CU_ASSERT_EQUAL(perf_round_level(&d, 512, 1024), 512);
	CU_ASSERT_EQUAL(perf_round_level(&d, 2000, 1024), 1024);
	CU_ASSERT_EQUAL(perf_round_level(&d, 300, 300), 256);	/* clamp is a promise */
	CU_ASSERT_EQUAL(perf_round_level(&d, 0, 1024), 256);
	d.nr_levels = 0;	/* continuous */
	CU_ASSERT_EQUAL(perf_round_level(&d, 300, 1024), 300);
	CU_ASSERT_EQUAL(perf_round_level(&d, 300, 200), 200);
}

/* schedutil: 1.25 x util for a light load; max under over-utilization (rule 24). */
static void test_perf_selection(void)
{
	struct sched *s = mk_sched(1, 1024, 1, 512, NULL);
	struct sched_cluster_stats cs;
	struct sched_cpumask little;
	uint64_t now = 0, t;
	int light, busy;

	sched_cluster_mask(s, 1, &little);
	light = add_ent(s, "light", 1024, false, 0);
	busy = add_ent(s, "busy", 1024, true, 0);
	sched_set_affinity(s, busy, &little, 0, NULL, 0);
	/*
	 * light: 2 ms of full-capacity work every 10 ms on big (it runs
	 * longer at a lower level). Invariant util ~ 0.2 x 1024, so the level
	 * settles near 1.25 x 205 = 256, busy about 80% of the time.
	 */
	for (t = 0; t < 2000 * MS; t += 10 * MS) {
		struct sched_entity_stats st;
		uint64_t work0;

		run_until(s, &now, t, 100 * US);
		sched_entity_stats(s, light, &st);
		work0 = st.work_ns;
		sched_wakeup(s, light, now);
		do {
			now += 100 * US;
			sched_tick(s, now);
			sched_entity_stats(s, light, &st);
		} while (st.work_ns < work0 + 2 * MS);
		sched_block(s, light, now);
	}
	sched_cluster_stats(s, 0, &cs);
	CU_ASSERT(cs.level >= 220 && cs.level <= 400);
	CU_ASSERT_FALSE(cs.overutilized);
	sched_cluster_stats(s, 1, &cs);
	CU_ASSERT_EQUAL(cs.level, 512);	/* always busy: the maximum */
	CU_ASSERT(cs.nr_perf_changes >= 1);
	/* A clamp caps it, and the level follows at the next evaluation. */
	sched_set_uclamp(s, busy, 0, 256, now, NULL, 0);
	run_until(s, &now, now + 2 * MS, MS);
	sched_cluster_stats(s, 1, &cs);
	CU_ASSERT_EQUAL(cs.level, 256);
	sched_destroy(s);
}

/*
 * Over-utilization (seed 002): a pCPU busy without a break asks for its
 * maximum at once instead of creeping up 1.25x per PELT ramp; a clamp
 * still caps it.
 */
static void test_overutilized_max(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	struct sched_cluster_stats cs;
	uint64_t now = 0;
	int a;

	s->cluster[0].level = 64;
	a = add_ent(s, "busy", 1024, true, 0);
	run_until(s, &now, 20 * MS, MS);
	sched_cluster_stats(s, 0, &cs);
	CU_ASSERT_TRUE(cs.overutilized);
	CU_ASSERT_EQUAL(cs.level, 1024);
	sched_set_uclamp(s, a, 0, 500, now, NULL, 0);
	run_until(s, &now, 40 * MS, MS);
	sched_cluster_stats(s, 0, &cs);
	CU_ASSERT_EQUAL(cs.level, 500);
	sched_destroy(s);
}

UNIT_SUITE(sched_balance_perf, NULL, NULL,
	   UNIT_TEST(test_overutilized_max),
	   UNIT_TEST(test_placement_fits),
	   UNIT_TEST(test_misfit_migration),
	   UNIT_TEST(test_load_balance),
	   UNIT_TEST(test_balance_leaves_a_tight_level),
	   UNIT_TEST(test_busy_balance_interval),
	   UNIT_TEST(test_newidle_cost_decay),
	   UNIT_TEST(test_newidle_cost_periodic_decay),
	   UNIT_TEST(test_newidle_pull_and_skip),
	   UNIT_TEST(test_newidle_skips_entity_ahead),
	   UNIT_TEST(test_newidle_only_where_share_fits),
	   UNIT_TEST(test_wakeup_idle_pcpu_that_covers_demand),
	   UNIT_TEST(test_newidle_abort),
	   UNIT_TEST(test_avg_idle),
	   UNIT_TEST(test_perf_round),
	   UNIT_TEST(test_perf_selection))
