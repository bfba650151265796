// SPDX-License-Identifier: MIT
/*
 * Groups: light entities beside heavy ones (docs/sched.md "Groups and
 * group caps", "Light requests" and "Holes of light entities").
 */
#include "tests/unit/test_sched_util.h"

/*
 * One pCPU, group vm: a member of weight 88761 and one of 2000 (rates
 * 0.978 and 0.022 of the pCPU). Once a balance has tracked them, the light
 * one woken asks for a quarter tick (3 ms x 0.022 is less), the heavy one
 * for a whole slice (group_request()), and it runs no longer than that at
 * once (with a whole slice it ran longer).
 */
static void test_group_light_request(void)
{
	struct sched *s = mk_sched(1, 1024, 0, 0, NULL);
	int g = sched_group_add(s, "vm", SCHED_NONE, 1024, 0, NULL, 0);
	uint64_t now = 0, start = 0, ran = 0;
	int heavy, light;

	heavy = add_member(s, "heavy", 88761, g, 0);
	light = add_member(s, "light", 2000, g, 0);
	run_events_all(s, &now, 200 * MS);
	CU_ASSERT_FATAL(sched_ent(s, light)->lag_tracked);
	CU_ASSERT_EQUAL(sched_block(s, light, now), 0);
	run_events_all(s, &now, now + MS);
	CU_ASSERT_EQUAL(sched_wakeup(s, light, now), 0);
	CU_ASSERT_EQUAL(sched_ent(s, light)->slice, s->cfg.tick_ns / 4);
	CU_ASSERT_EQUAL(group_request(s, sched_ent(s, heavy)), s->cfg.slice_ns);
	/* its first run after the wakeup, in steps of 50 us */
	for (uint64_t end = now + 100 * MS; now < end; ) {
		bool running = curr_of(s, 0) == light;

		if (running && !start)
			start = now;
		if (!running && start) {
			ran = now - start;
			break;
		}
		run_events_all(s, &now, now + 50 * NSEC_PER_USEC);
	}
	CU_ASSERT(ran > 0);
	CU_ASSERT(ran <= s->cfg.tick_ns / 4 + 100 * NSEC_PER_USEC);
	sched_destroy(s);
}

/*
 * Two pCPUs, a group vm: a root entity capped at 2 ms every 100, L1 and
 * L2 (members) on one; B and C (members) allowed only on the other, then
 * C anywhere. With both L1 and L2 two slices of work ahead of their
 * ideals and C behind its own, the pCPU in the cap hole takes C at its
 * next tick: L1 and L2 would collect the hole between them (all_ahead()).
 * With L2 within a slice of its ideal it does not; nor with only L1 ahead
 * (the periodic balance is out of the way: every second).
 */
static void test_group_hole_shared_when_all_ahead(void)
{
	for (int both = 0; both <= 1; both++) {
		struct sched_config cfg = { .balance_interval_ns = 1000 * MS };
		struct sched *s = mk_sched(2, 1024, 0, 0, &cfg);
		int g = sched_group_add(s, "vm", SCHED_NONE, 1024, 0, NULL, 0);
		uint64_t now = 0;
		int capped, l1, l2, c;

		capped = add_ent(s, "capped", 1024, true, 0);
		CU_ASSERT_EQUAL(sched_set_cap(s, capped, 2 * MS, 100 * MS, 0, NULL, 0), 0);
		CU_ASSERT_EQUAL_FATAL(sched_ent(s, capped)->cpu, 0);
		l1 = add_pinned_in_group(s, "l1", g, 0);
		l2 = add_pinned_in_group(s, "l2", g, 0);
		add_pinned_in_group(s, "b", g, 1);
		c = add_pinned_in_group(s, "c", g, 1);
		run_until(s, &now, 10 * MS, MS);
		CU_ASSERT_EQUAL_FATAL(sched_ent(s, capped)->state, SCHED_THROTTLED);
		CU_ASSERT_EQUAL(sched_set_affinity(s, c, &s->all_cpus, now, NULL, 0), 0);
		set_lag(s, sched_ent(s, l1), -2 * (int64_t)s->cfg.slice_ns, now);
		set_lag(s, sched_ent(s, l2), (both ? -2 : 0) * (int64_t)s->cfg.slice_ns, now);
		set_lag(s, sched_ent(s, c), 10 * MS, now);
		run_until(s, &now, 20 * MS, MS);
		CU_ASSERT_EQUAL(sched_ent(s, c)->cpu, both ? 0 : 1);
		sched_destroy(s);
	}
}

/*
 * A heavy root entity B (its id in *b) and a light one L (returned), both
 * pinned to pCPU 1: L waits there, and newidle or a hole takes only a
 * waiting one.
 */
static struct sched_entity *heavy_and_light_on_1(struct sched *s, int *b)
{
	struct sched_cpumask one = { 0 };
	struct sched_entity *l;

	*b = add_ent(s, "b", 88761, true, 0);
	l = sched_ent(s, add_ent(s, "l", 15, true, 0));
	sched_cpumask_set(&one, 1);
	CU_ASSERT_EQUAL(sched_set_affinity(s, *b, &one, 0, NULL, 0), 0);
	CU_ASSERT_EQUAL(sched_set_affinity(s, l->id, &one, 0, NULL, 0), 0);
	return l;
}

/*
 * Newidle into a cap hole takes no entity ahead of its ideal, with groups
 * (hole_pull_ahead()). Two pCPUs: a root entity capped at 1.5 ms every
 * 100 alone on pCPU 0; on pCPU 1 a member M of group vm and root entities B
 * (heavy) and L (light), L's affinity widened before the throttle (all
 * three pinned there till then). At the throttle (101.5 ms) pCPU 0
 * goes idle: newidle pulls L when it is behind its ideal, not when it is
 * 5 ms ahead (seed 5 #121 of the groups corpus: light members ahead took
 * whole holes, 3.7 ms at a time). Checked before the next tick, where
 * the hole's own filling (cap_hole_fill()) may still look.
 */
static void test_group_hole_not_pulled_ahead(void)
{
	for (int ahead = 0; ahead <= 1; ahead++) {
		struct sched *s = mk_sched(2, 1024, 0, 0, NULL);
		int g = sched_group_add(s, "vm", SCHED_NONE, 1024, 0, NULL, 0);
		struct sched_entity *l;
		uint64_t now = 0;
		int capped, b;

		capped = add_ent(s, "capped", 1024, true, 0);
		CU_ASSERT_EQUAL(sched_set_cap(s, capped, 1500 * NSEC_PER_USEC, 100 * MS, 0, NULL, 0), 0);
		CU_ASSERT_EQUAL_FATAL(sched_ent(s, capped)->cpu, 0);
		add_pinned_in_group(s, "m", g, 1);
		l = heavy_and_light_on_1(s, &b);
		run_events_all(s, &now, 101 * MS);
		CU_ASSERT_EQUAL(sched_set_affinity(s, l->id, &s->all_cpus, now, NULL, 0), 0);
		set_lag(s, l, (ahead ? -5 : 5) * (int64_t)MS, now);
		l->lag_rate = 0;	/* the lag stays where it was set */
		run_events_all(s, &now, 101 * MS + 900 * NSEC_PER_USEC);
		CU_ASSERT_EQUAL_FATAL(sched_ent(s, capped)->state, SCHED_THROTTLED);
		CU_ASSERT_EQUAL(curr_of(s, 1), b);
		CU_ASSERT_EQUAL(l->cpu, ahead ? 1 : 0);
		sched_destroy(s);
	}
}

/*
 * The hole's own filling at its ticks (cap_hole_fill()) takes no entity
 * more than a move's worth and a slice ahead of its ideal into a group's
 * hole (cap_hole_lead_ok()). Two pCPUs: on pCPU 0 either M, the one member of
 * group cg capped at 1.5 ms every 100, or a root entity with a cap of its
 * own of the same; on pCPU 1 a heavy root entity B and a light one L,
 * pinned there until 101 ms. At 101.5 ms pCPU 0 is in a hole; by 104 ms
 * (two ticks of it) L, waiting, is taken there when it is 5 ms ahead, and
 * when it is 20 ms ahead only into the hole of the entity's own cap
 * (seed 7 #48 of the groups corpus: v2, a light member far ahead, took
 * the holes of a capped group's members period after period).
 */
static void test_group_hole_fill_not_far_ahead(void)
{
	for (int own = 0; own <= 1; own++) {
		for (int far = 0; far <= 1; far++) {
			struct sched_config cfg = { .balance_interval_ns = 1000 * MS };
			struct sched *s = mk_sched(2, 1024, 0, 0, &cfg);
			int cg = sched_group_add(s, "cg", SCHED_NONE, 1024, 0, NULL, 0);
			struct sched_entity *l;
			uint64_t now = 0;
			int h, b;

			h = add_pinned_in_group(s, "h", own ? SCHED_NONE : cg, 0);
			CU_ASSERT_EQUAL(own ? sched_set_cap(s, h, 1500 * NSEC_PER_USEC, 100 * MS, 0,
							    NULL, 0) :
					      sched_group_set_cap(s, cg, 1500 * NSEC_PER_USEC, 100 * MS,
								  0, NULL, 0), 0);
			l = heavy_and_light_on_1(s, &b);
			run_events_all(s, &now, 101 * MS);
			CU_ASSERT_EQUAL(sched_set_affinity(s, l->id, &s->all_cpus, now, NULL, 0), 0);
			set_lag(s, l, -(far ? 20 : 5) * (int64_t)MS, now);
			l->lag_rate = 0;	/* the lag stays where it was set */
			run_events_all(s, &now, 104 * MS);
			CU_ASSERT_EQUAL_FATAL(sched_ent(s, h)->state, SCHED_THROTTLED);
			CU_ASSERT_EQUAL(l->cpu, far && !own ? 1 : 0);
			sched_destroy(s);
		}
	}
}

UNIT_SUITE(sched_group_light, NULL, NULL,
	   UNIT_TEST(test_group_light_request),
	   UNIT_TEST(test_group_hole_shared_when_all_ahead),
	   UNIT_TEST(test_group_hole_not_pulled_ahead),
	   UNIT_TEST(test_group_hole_fill_not_far_ahead))
