// SPDX-License-Identifier: MIT
/*
 * Groups, the weights and the ideal (docs/sched.md "Groups and group
 * caps"): the run weights of fair entities in groups, and the
 * hierarchical ideal the fluid balance (fairlag.c) moves entities to.
 *
 * Between balances an entity in a group runs with its flattened weight,
 * its own weight x the product along its path of group weight / the
 * weights of that group's members that want to run. At every balance
 * group_solve() solves the hierarchical max-min ideal of the entities
 * runnable since the last one, and they run with weights in the ratio of
 * their ideal rates (which is where flattened weights go wrong: what a
 * bounded member cannot use goes to its siblings). A binding group cap
 * becomes a share of its quota for each member, any other cap a share of
 * its room.
 */
#include "sched/internal.h"

/* ------------------------------------------------------------------ weights */

/* Which groups have entities that want to run, and their members' weights. */
static void count_active(struct sched *s)
{
	for (int g = 0; g < SCHED_MAX_GROUPS; g++) {
		s->grp[g].act_weight = 0;
		s->grp[g].active = false;
	}
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];
		int gid;

		if (!se || se->group == SCHED_NONE || dl_entity(se) || !wants_cpu(se))
			continue;
		gid = se->group;
		s->grp[gid].act_weight += se->own_weight;
		while (!s->grp[gid].active) {
			s->grp[gid].active = true;
			if (s->grp[gid].parent == SCHED_NONE)
				break;
			s->grp[s->grp[gid].parent].act_weight += s->grp[gid].weight;
			gid = s->grp[gid].parent;
		}
	}
}

/*
 * se's flattened weight: own weight x group weight / members' weights at
 * every level, counting se (and the groups above it) as wanting to run
 * when they do not, so that it wakes with the weight it will have.
 */
/*
 * Run weights, the flattened and the ideal ones, are scaled by
 * s->grp_scale (16.16 fixed point), root entities' own weights too: a
 * share of a share of a light group is far below weight 1, and only the
 * ratios matter. group_solve() keeps the largest weight near SCALE_TARGET.
 */
#define SCALE_ONE	(1ull << 16)
#define SCALE_TARGET	(1ull << 18)
#define SCALE_MIN	(SCALE_ONE >> 4)
#define SCALE_MAX	(SCALE_ONE << 12)

static uint64_t grp_scale(const struct sched *s)
{
	return s->grp_scale ? s->grp_scale : SCALE_ONE;
}

/* x / 2^shift, rounded, as a run weight. */
static uint32_t clamp_weight(unsigned __int128 x, unsigned int shift)
{
	x = (x + ((unsigned __int128)1 << (shift - 1))) >> shift;
	return x < SCHED_WEIGHT_MIN ? SCHED_WEIGHT_MIN : x > SCHED_WEIGHT_MAX ? SCHED_WEIGHT_MAX :
	       (uint32_t)x;
}

static uint32_t root_weight(const struct sched *s, const struct sched_entity *se)
{
	return clamp_weight((unsigned __int128)se->own_weight * grp_scale(s), 16);
}

static uint32_t flat_weight(const struct sched *s, const struct sched_entity *se)
{
	uint64_t x = (uint64_t)se->own_weight << 16, member = se->own_weight;
	bool counted = wants_cpu(se);

	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent) {
		const struct sched_group *g = &s->grp[gid];
		uint64_t w = g->act_weight + (counted ? 0 : member);

		x = x * g->weight / w;
		counted = g->active;
		member = g->weight;
	}
	return clamp_weight((unsigned __int128)x * grp_scale(s), 32);
}

static void set_run_weight(struct sched *s, struct sched_entity *se, uint32_t w, uint64_t now)
{
	struct sched_rq *rq = se->on_rq ? &s->rq[se->cpu] : NULL;

	if (rq)
		update_rq_clock(s, rq, now);
	reweight_fair(s, rq, se, w);
	s->lag_order_dirty = true;
}

/* Every fair entity's run weight from the groups' current members. */
void group_update_weights(struct sched *s, uint64_t now)
{
	if (!s->grp)
		return;
	count_active(s);
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];
		uint32_t w;

		if (!se || dl_entity(se))
			continue;
		w = se->group == SCHED_NONE ? root_weight(s, se) : flat_weight(s, se);
		if (w != se->weight)
			set_run_weight(s, se, w, now);
	}
}

/* ------------------------------------------------------ hierarchical ideal */

/*
 * One member of a group (or of the root) in the water-filling: an entity
 * (ref = its index in the balance's lag_ents) or a group (ref = -1 - gid).
 */
struct grp_member {
	uint64_t w, bound, alloc;
	int ref;
};

static bool ensure_scratch(struct sched *s)
{
	unsigned int need = s->nr_ent_slots + SCHED_MAX_GROUPS;
	struct grp_member *m;

	if (s->nr_grp_scratch >= need)
		return true;
	m = realloc(s->grp_scratch, need * sizeof(*m));
	if (!m)
		return false;
	s->grp_scratch = m;
	s->nr_grp_scratch = need;
	return true;
}

static int cmp_bound_per_weight(const void *a, const void *b)
{
	const struct grp_member *x = a, *y = b;
	unsigned __int128 l = (unsigned __int128)x->bound * y->w, r = (unsigned __int128)y->bound * x->w;

	if (l != r)
		return l < r ? -1 : 1;
	return x->ref - y->ref;
}

/*
 * Max-min water-filling of `amount` among m[0..n) by weight, none above
 * its bound: the members that are bound first (smallest bound per weight)
 * get their bound, and what they leave is shared by the rest.
 */
static void water_fill_members(struct grp_member *m, unsigned int n, uint64_t amount)
{
	uint64_t w_rest = 0;

	for (unsigned int k = 0; k < n; k++)
		w_rest += m[k].w;
	qsort(m, n, sizeof(*m), cmp_bound_per_weight);
	for (unsigned int k = 0; k < n; k++) {
		uint64_t share = w_rest ? (uint64_t)((unsigned __int128)amount * m[k].w / w_rest) : 0;

		m[k].alloc = share < m[k].bound ? share : m[k].bound;
		amount -= m[k].alloc;
		w_rest -= m[k].w;
	}
}

/*
 * The members of group gid (SCHED_NONE: the root) into m[], share
 * `amount` among them, then each group's share among its own members,
 * using the scratch beyond them.
 */
static void share_group(struct sched *s, struct lag_ent *e, int gid, uint64_t amount,
			struct grp_member *m, int root_ents, int root_grps)
{
	int head_e = gid == SCHED_NONE ? root_ents : s->grp[gid].head_ent;
	int head_g = gid == SCHED_NONE ? root_grps : s->grp[gid].head_grp;
	unsigned int n = 0;

	for (int k = head_e; k >= 0; k = e[k].next)
		m[n++] = (struct grp_member){ e[k].se->own_weight, e[k].pred, 0, k };
	for (int g = head_g; g >= 0; g = s->grp[g].next_grp)
		m[n++] = (struct grp_member){ s->grp[g].weight, s->grp[g].bound, 0, -1 - g };
	water_fill_members(m, n, amount);
	for (unsigned int k = 0; gid == SCHED_NONE && k < n; k++) {
		if (m[k].alloc < m[k].bound) {	/* the root's water level: alloc per weight */
			s->grp_level_alloc = m[k].alloc;
			s->grp_level_weight = m[k].w;
			break;
		}
	}
	for (unsigned int k = 0; k < n; k++) {
		struct sched_group *g = m[k].ref < 0 ? &s->grp[-1 - m[k].ref] : NULL;

		if (!g) {
			e[m[k].ref].rate = m[k].alloc;
			continue;
		}
		g->binding = g->limited && m[k].alloc >= g->bound;	/* its cap is what it gets */
		g->alloc = m[k].alloc;
		share_group(s, e, -1 - m[k].ref, m[k].alloc, m + n, -1, -1);
	}
}

static bool mask_equal(const struct sched_cpumask *a, const struct sched_cpumask *b)
{
	for (unsigned int w = 0; w < SCHED_MAX_CPUS / 64; w++)
		if (a->bits[w] != b->bits[w])
			return false;
	return true;
}

/*
 * The most an entity can use: its fastest allowed pCPU's left capacity
 * (max_all: of all pCPUs), its cap.
 */
static uint64_t entity_bound(const struct sched *s, const struct sched_entity *se,
			     const uint64_t *left, uint64_t max_all)
{
	uint64_t b = 0;

	if (mask_equal(&se->allowed, &s->all_cpus))
		b = max_all;
	else
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			if (sched_cpumask_test(&se->allowed, cpu) && left[cpu] > b)
				b = left[cpu];
	if (se->cap_period && fair_cap_rate(s, se) < b)
		b = fair_cap_rate(s, se);
	return b;
}

/* Link the tracked entities to their groups; returns the root's list. */
static int link_entities(struct sched *s, struct lag_ent *e, unsigned int n, const uint64_t *left)
{
	uint64_t max_all = 0;
	int root = -1;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (left[cpu] > max_all)
			max_all = left[cpu];
	for (int g = 0; g < SCHED_MAX_GROUPS; g++) {
		struct sched_group *sg = &s->grp[g];

		sg->head_ent = sg->head_grp = sg->next_grp = -1;
		sg->bound_sum = sg->cap_sum = 0;
		sg->nr_on = 0;
		sg->active = sg->limited = sg->binding = false;
		sg->alloc = sg->cap_rate = 0;
	}
	for (int k = (int)n - 1; k >= 0; k--) {
		struct sched_entity *se = e[k].se;
		struct sched_group *g;

		if (e[k].comp < 0)
			continue;
		e[k].pred = entity_bound(s, se, left, max_all);	/* scratch until fair_lag_balance() */
		if (se->group == SCHED_NONE) {
			e[k].next = root;
			root = k;
			continue;
		}
		g = &s->grp[se->group];
		e[k].next = g->head_ent;
		g->head_ent = k;
		g->bound_sum += e[k].pred;
		g->cap_sum += s->rq[se->cpu].capacity;
		g->nr_on++;
		g->active = true;
	}
	return root;
}

/*
 * A group's bound: what its members can use, within its cap (time, so
 * work at the mean capacity of the pCPUs its members are on). Deepest
 * groups first, each adding its bound to its parent; returns the root's
 * list of active groups.
 */
static int bound_groups(struct sched *s)
{
	int root = -1;

	for (int depth = SCHED_GROUP_DEPTH_MAX; depth >= 1; depth--) {
		for (int gid = SCHED_MAX_GROUPS - 1; gid >= 0; gid--) {
			struct sched_group *g = &s->grp[gid];
			int *head;

			if (!g->used || (int)g->depth != depth || !g->active)
				continue;
			g->bound = g->bound_sum;
			if (g->cap.period && g->nr_on) {
				uint64_t frac = (uint64_t)(((unsigned __int128)g->cap.quota << RATE_SHIFT) /
							   g->cap.period);
				uint64_t cap = frac * (g->cap_sum / g->nr_on) >> 10;

				g->cap_rate = cap;
				g->limited = cap < g->bound;
				if (g->limited)
					g->bound = cap;
			}
			if (g->parent == SCHED_NONE) {
				head = &root;
			} else {
				struct sched_group *p = &s->grp[g->parent];

				p->bound_sum += g->bound;
				p->cap_sum += g->cap_sum;
				p->nr_on += g->nr_on;
				p->active = true;
				head = &p->head_grp;
			}
			g->next_grp = *head;
			*head = gid;
		}
	}
	return root;
}

/* The innermost group above se whose cap binds in the ideal, or SCHED_NONE. */
static int limited_group(const struct sched *s, const struct sched_entity *se)
{
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent)
		if (s->grp[g].binding)
			return g;
	return SCHED_NONE;
}

/*
 * se's share of group gid's binding cap: its ideal rate (`rate`) as run
 * time per period of the group, at the capacity of its pCPU. Members on different
 * pCPUs would otherwise split the quota by how fast they use it, not by
 * weight (each running alone at full speed until the group's quota is
 * gone). Kept across balances within the same period length, so a period
 * is charged once; quota tokens come every period and are kept up to a
 * slice, so the share holds on average, not in every single period.
 */
static void fill_bucket(struct sched *s, const struct sched_entity *se, struct share_bucket *b,
			int gid, uint64_t rate)
{
	const struct cap_acct *g = &s->grp[gid].cap;
	uint64_t full = capacity_rate(s->rq[se->cpu].capacity);
	uint64_t q = (uint64_t)((unsigned __int128)rate * g->period / full);

	q = q < NSEC_PER_USEC ? NSEC_PER_USEC : q > g->period ? g->period : q;
	if (b->period != g->period) {
		b->period = g->period;
		b->tokens = (int64_t)q;
		b->index = s->now / g->period;
	}
	b->quota = q;
	/*
	 * One slice in reserve: a light member runs a slice now and then.
	 * Not in a share of a cap's room (the cap does not bind): a slice's
	 * burst there takes the room of the period from the others, and the
	 * quota, used up exactly (group_out()), stops a whole-pCPU member
	 * before the period ends; the smallest quota a cap may have instead.
	 */
	if (s->grp[gid].binding)
		b->depth = q > s->cfg.slice_ns ? q : s->cfg.slice_ns;
	else
		b->depth = q > SCHED_CAP_QUOTA_MIN_NS ? q : SCHED_CAP_QUOTA_MIN_NS;
}

static void set_share(struct sched *s, struct sched_entity *se, int gid, uint64_t rate)
{
	fill_bucket(s, se, &se->grp_share, gid, rate);
	se->share_round = s->lag_round;
	se->share_gid = gid;
	if (se->on_rq)
		fair_count_capped(&s->rq[se->cpu], se);
}

/*
 * The next group above gid whose cap binds too, at another period, or
 * SCHED_NONE.
 */
static int outer_binding(const struct sched *s, int gid)
{
	for (int g = s->grp[gid].parent; g != SCHED_NONE; g = s->grp[g].parent)
		if (s->grp[g].binding && s->grp[g].cap.period != s->grp[gid].cap.period)
			return g;
	return SCHED_NONE;
}

/*
 * A member below nested binding caps of different periods has a share
 * of the next binding cap above its own share's too, at that cap's
 * period, and is throttled when either is used up (group.c). Held to the
 * inner period only, it ran its inner share in a burst at the start of
 * each inner period, so the outer group's quota ran out early in the
 * outer periods that held those bursts, and a sibling whose share is its
 * whole pCPU lost the rest of each (seed 14 #72 of the groups corpus:
 * v5 9.40 s of 10). Two buckets of the same rate lose little to each
 * other: each carries what it has left to its period's end.
 */
static void set_outer_share(struct sched *s, struct sched_entity *se, int gid, uint64_t rate)
{
	int outer = outer_binding(s, gid);

	if (outer == SCHED_NONE) {
		se->grp_outer.period = 0;
		return;
	}
	fill_bucket(s, se, &se->grp_outer, outer, rate);
	se->outer_gid = outer;
}

/* The innermost capped group above se, whatever its cap does, or SCHED_NONE. */
static int capped_group(const struct sched *s, const struct sched_entity *se)
{
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent)
		if (s->grp[g].cap_rate && s->grp[g].alloc)
			return g;
	return SCHED_NONE;
}

/*
 * A member of a capped group whose cap does not bind in the ideal has a
 * share too: its ideal rate scaled by the room the cap leaves (the cap's
 * rate / the group's ideal rate). Without one, members that ran in bursts
 * (a light one spending a slice's tokens, one with a cap of its own at its
 * own period) used up the group's quota before some periods ended, and a
 * member whose ideal is a whole pCPU lost the rest of each for good (seed
 * 2 #82 and seed 4 #164 of the groups corpus: 0.25 s and 0.11 s under).
 */
static void set_slack_share(struct sched *s, struct sched_entity *se, int gid, uint64_t rate)
{
	const struct sched_group *g = &s->grp[gid];

	set_share(s, se, gid, (uint64_t)((unsigned __int128)rate * g->cap_rate / g->alloc));
}

/*
 * Shares of group caps for the tracked entities (binding ones: a limit
 * too), none for the others.
 */
static void update_shares(struct sched *s, struct lag_ent *e, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		int gid;

		if (e[k].comp < 0)
			continue;
		if ((gid = limited_group(s, e[k].se)) == SCHED_NONE) {
			e[k].se->grp_outer.period = 0;
			if ((gid = capped_group(s, e[k].se)) != SCHED_NONE)
				set_slack_share(s, e[k].se, gid, e[k].rate);
			continue;
		}
		set_share(s, e[k].se, gid, e[k].rate);
		set_outer_share(s, e[k].se, gid, e[k].rate);
		if (e[k].rate < e[k].limit)
			e[k].limit = e[k].rate;
	}
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];

		if (se && se->grp_share.period && se->share_round != s->lag_round)
			se->grp_share.period = 0;
		if (se && !se->grp_share.period)
			se->grp_outer.period = 0;
	}
}

/*
 * A member's weight from its ideal rate: the weight a root entity at the
 * root's water level would need for that rate. Flattened weights alone
 * miss what a bounded member leaves to its siblings (their rates then
 * grow beyond their flattened weights); with these, EEVDF shares every
 * pCPU in the ratio of the ideal rates, so a placement whose rates add
 * up gives every entity its ideal. Without a level (every root member at
 * its bound), one pCPU is weight 1024.
 */
static uint64_t ideal_weight16(const struct sched *s, uint64_t rate)
{
	if (!s->grp_level_alloc)
		return rate << (16 - (RATE_SHIFT - 10));
	return (uint64_t)(((unsigned __int128)rate * s->grp_level_weight << 16) / s->grp_level_alloc);
}

/*
 * A member of a group whose cap binds runs with more weight than its
 * ideal rate's: at exactly its rate it would use its quota just as the
 * period ends, and lose what a slice's jitter leaves over. A quarter more
 * at least, and enough that beside the others on its pCPU it gets its
 * share of the quota a slice before the period ends; its share holds it
 * after that, the others taking the rest of the period (much faster would
 * make bursts that the others on its pCPUs lose to).
 */
static uint32_t quota_weight(const struct sched *s, const struct sched_entity *se, uint32_t w,
			     uint64_t quota, uint64_t period)
{
	const struct sched_rq *rq = &s->rq[se->cpu];
	uint64_t others = rq->fair_weight - (se->on_rq ? se->weight : 0);
	uint64_t room = period > s->cfg.slice_ns ? period - s->cfg.slice_ns : 0;
	uint64_t need = w + w / 4;

	if (room <= quota)
		return SCHED_WEIGHT_MAX;
	/* w / (w + others) >= quota / room */
	if ((unsigned __int128)others * quota / (room - quota) > need)
		need = (uint64_t)((unsigned __int128)others * quota / (room - quota));
	return need > SCHED_WEIGHT_MAX ? SCHED_WEIGHT_MAX : (uint32_t)need;
}

/* The run weight that gives `rate` at this balance's scale. */
static uint32_t rate_weight(const struct sched *s, uint64_t rate)
{
	return clamp_weight((unsigned __int128)ideal_weight16(s, rate) * grp_scale(s), 32);
}

static void set_ideal_weight(struct sched *s, struct sched_entity *se, uint64_t rate)
{
	uint32_t w = rate_weight(s, rate);

	/* the margin is for a quota that is its ideal, not for a cap's room */
	if (group_share_holds(s, se))
		w = quota_weight(s, se, w, se->grp_share.quota, se->grp_share.period);
	else	/* small lags paid back where they are (fair_payback.c) */
		w = fair_payback_weight(s, se, w, rate);

	se->ideal_round = s->lag_round;
	if (w != se->weight)
		set_run_weight(s, se, w, s->now);
}

/*
 * Is e held at or within 1/8 of a bound of its own: its cap, or its share
 * of a group cap (of a binding cap, or of the room of one that does not
 * bind)? Its shares are this balance's (update_shares()).
 */
static bool held_near_bound(const struct sched *s, const struct lag_ent *e)
{
	const struct sched_entity *se = e->se;
	unsigned int capacity = s->rq[se->cpu].capacity;
	const struct share_bucket *b = &se->grp_share;

	if (se->cap_period && e->rate * 8 >= 7 * cap_rate_at(se, capacity))
		return true;
	return b->period && se->share_round == s->lag_round &&
	       e->rate * 8 >= 7 * quota_rate_at(b->quota, b->period, capacity);
}

/*
 * s->grp_held[cpu]: the tracked entities on cpu held near a bound;
 * s->grp_room[cpu]: the least absence pushing a capped one there to its
 * cap, others filling it by rate (room / cap, times the pCPU). O(n + pCPUs).
 */
static void count_held(struct sched *s, const struct lag_ent *e, unsigned int n)
{
	memset(s->grp_held, 0, s->nr_cpus * sizeof(s->grp_held[0]));
	for (unsigned int c = 0; c < s->nr_cpus; c++)
		s->grp_room[c] = UINT64_MAX;
	for (unsigned int k = 0; k < n; k++) {
		const struct sched_entity *se = e[k].se;
		unsigned int capacity;
		uint64_t cap, room;

		if (e[k].comp < 0 || se->cpu < 0)
			continue;
		if (held_near_bound(s, &e[k])) {
			s->grp_held[se->cpu]++;
			continue;
		}
		if (!se->cap_period)
			continue;
		capacity = s->rq[se->cpu].capacity;
		cap = cap_rate_at(se, capacity);	/* above its rate: not held */
		room = (cap - e[k].rate) * capacity_rate(capacity) / cap;
		if (room < s->grp_room[se->cpu])
			s->grp_room[se->cpu] = room;
	}
}

/*
 * A root entity whose own cap binds (its ideal is its cap) beside another
 * entity held near a bound of its own runs with its rate's weight, with
 * the margin of a binding share (quota_weight()), not its own (scaled)
 * weight, whenever that is less. At its own weight it ran its quota in
 * one burst at the start of each period and left the other alone for
 * the rest, where that one's own bound stopped it: the pCPU was idle
 * while both were throttled, time lost for good where the ideal rates
 * add up (seed 942544 #57 of the groups corpus: v5, 0.623 of a pCPU at
 * its cap, at 4.3 times v1's weight for 1.7 times its rate, and v1, held
 * by its own cap 3% above its ideal, 138 ms under; seed 31415 #131: v1,
 * 0.161 at its cap, at twice the weight of v0, 0.839, whose share of
 * g0's room stopped it 5 ms before each of g0's periods ended, 107 ms
 * under). Beside light entities only, the own weight stays: there the
 * burst keeps them from taking more than the hole it leaves (seed 16
 * #193 and seed 1 #148: a root vCPU capped at 0.853 or 0.954 beside
 * light members, whose groups went 1.15 -> 2.04 and 0.99 -> 1.23 x the
 * bound with the rate's weight there too). So does one whose own cap
 * binds while se is away (grp_room below se's rate), else others fill
 * its holes (seed 173205 #31: v9, 0.676, capped at 0.780, beside v0 at
 * its cap of 0.302; g0 took v9's holes, v9 474 ms under).
 */
static uint32_t capped_root_weight(const struct sched *s, const struct sched_entity *se,
				   uint64_t rate, uint32_t w)
{
	uint32_t r;

	if (!se->cap_period || rate < cap_rate_at(se, s->rq[se->cpu].capacity) ||
	    (s->grp_held[se->cpu] < 2 &&	/* se itself is one */
	     s->grp_room[se->cpu] >= rate))
		return w;
	r = quota_weight(s, se, rate_weight(s, rate), se->cap_quota, se->cap_period);
	return r < root_weight(s, se) ? r : w;
}

/*
 * A tracked root entity: its own weight (as scaled), with the payback
 * factor of its lag as members have (fair_payback.c). Without it only a
 * move corrected a root entity's lag, and below a move's worth lags
 * added up (seed 1 #199 of the groups corpus: two root entities on two
 * pCPUs 0.52 s over and under their ideals, 5.6 x the bound).
 */
static void set_root_weight(struct sched *s, struct sched_entity *se, uint64_t rate)
{
	uint32_t w = fair_payback_weight(s, se, root_weight(s, se), rate);

	w = capped_root_weight(s, se, rate, w);
	se->ideal_round = s->lag_round;
	if (w != se->weight)
		set_run_weight(s, se, w, s->now);
}

/* Is e a root entity below its bound? Its own weight is its rate's then. */
static bool root_at_level(const struct lag_ent *e)
{
	return e->se->group == SCHED_NONE && e->rate < e->pred;
}

/*
 * The weight (16.16, unscaled) that e must keep within SCHED_WEIGHT_MAX
 * once scaled. A root entity at its bound (a whole pCPU, its cap) runs
 * with its own weight, beyond its rate's by any amount: bounding the
 * scale by it left the light members of light groups at run weight 1 or
 * a few, a slice every ~350 ms each for an ideal near 0. It bounds the
 * scale by its rate's weight with the headroom SCALE_TARGET leaves (4x)
 * instead, its own weight clamped to the limit: beside others it keeps
 * its own ratio, or at least 4 times its ideal one. With no headroom (the
 * rate's weight alone) a light entity the balance put beside a
 * whole-pCPU one took 6% of that pCPU for 2.6% (seed 3 #128).
 */
static uint64_t scale_weight16(const struct sched *s, const struct lag_ent *e)
{
	uint64_t own = (uint64_t)e->se->own_weight << 16, rate16;

	if (e->se->group != SCHED_NONE)
		return ideal_weight16(s, e->rate);
	if (root_at_level(e))
		return own;
	rate16 = ideal_weight16(s, e->rate) * (SCHED_WEIGHT_MAX / SCALE_TARGET);
	return rate16 < own ? rate16 : own;
}

/*
 * The scale that brings the largest weight of an entity below its bound
 * near SCALE_TARGET, and none of scale_weight16() beyond
 * SCHED_WEIGHT_MAX; changed only
 * by a factor of 2 or more, as every change reweights all.
 */
static void update_scale(struct sched *s, const struct lag_ent *e, unsigned int n)
{
	uint64_t top = 0, top_all = 0, scale;
	bool changed;

	for (unsigned int k = 0; k < n; k++) {
		uint64_t w16;

		if (e[k].comp < 0)
			continue;
		w16 = scale_weight16(s, &e[k]);
		if (w16 > top_all)
			top_all = w16;
		if (e[k].rate < e[k].pred && w16 > top)
			top = w16;
	}
	s->grp_top_weight = 0;
	if (!top)
		return;
	scale = (uint64_t)(((unsigned __int128)SCALE_TARGET << 32) / top);
	/* ... and none beyond the limit: a clamped weight is a wrong ratio */
	if ((unsigned __int128)top_all * scale > (unsigned __int128)SCHED_WEIGHT_MAX << 32)
		scale = (uint64_t)(((unsigned __int128)SCHED_WEIGHT_MAX << 32) / top_all);
	scale = scale < SCALE_MIN ? SCALE_MIN : scale > SCALE_MAX ? SCALE_MAX : scale;
	changed = scale >= 2 * grp_scale(s) || 2 * scale <= grp_scale(s);
	if (changed)
		s->grp_scale = scale;
	s->grp_top_weight = (uint64_t)(((unsigned __int128)top * grp_scale(s)) >> 32);
	if (!changed)
		return;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];

		if (se && !dl_entity(se) && se->group == SCHED_NONE && se->weight != root_weight(s, se))
			set_run_weight(s, se, root_weight(s, se), s->now);
	}
}

/*
 * The request of a tracked fair entity in a scenario with groups: a slice
 * times its run weight over the largest run weight of an entity below its
 * bound (grp_top_weight, from the last balance), at least a quarter tick
 * (a slice's end is an event of its own), at most a slice. Every entity
 * then asks for about as much virtual time as the heaviest one sharing a
 * pCPU, as a moved entity does outside groups
 * (moved_request() in fair.c), but O(1): the weights are scaled to that
 * top at every balance anyway. With a whole slice, a light member (a
 * share of a share of a light group) ran 3 ms wherever it ran at all:
 * most of 41 light members a slice or two (2-4 ms of work) in 10 s for
 * ideals below 1 ms (seed 6 #89 of the groups corpus), in the holes a
 * capped entity left, which they then kept from that entity for the rest
 * of the slice when its period began again.
 */
uint64_t group_request(const struct sched *s, const struct sched_entity *se)
{
	uint64_t r, least = s->cfg.tick_ns / REQUEST_TICK_DIV;

	if (!s->grp_top_weight || se->weight >= s->grp_top_weight)
		return s->cfg.slice_ns;
	r = (uint64_t)((unsigned __int128)s->cfg.slice_ns * se->weight / s->grp_top_weight);
	return r > least ? r : least;
}

/*
 * The others (not runnable since the last balance): flattened weights,
 * own weights at the root.
 */
static void flat_weights_untracked(struct sched *s)
{
	count_active(s);
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];
		uint32_t w;

		if (!se || dl_entity(se) || se->ideal_round == s->lag_round)
			continue;
		w = se->group == SCHED_NONE ? root_weight(s, se) : flat_weight(s, se);
		if (w != se->weight)
			set_run_weight(s, se, w, s->now);
	}
}

/*
 * The hierarchical ideal of the tracked entities e[0..n) (those with
 * comp >= 0) on pCPUs with `left` capacity each (RATE_SHIFT): max-min
 * water-filling of the total from the root down, every member bounded by
 * what it can use (docs/sched/groups.md "Groups and group caps"). The shares
 * become the weights the per-component water-filling uses (e[].w), which
 * then only corrects for pCPU speeds and affinities, and a binding group
 * cap a limit (e[].limit). On uniform pCPUs without affinities its result
 * is the hierarchical ideal itself. Returns false (the flat solve stands)
 * without scratch memory.
 */
bool group_solve(struct sched *s, struct lag_ent *e, unsigned int n, const uint64_t *left)
{
	uint64_t total = 0;
	int root_ents, root_grps;

	if (!s->grp || !ensure_scratch(s))
		return false;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		total += left[cpu];
	count_active(s);	/* for the flattened weights below */
	root_ents = link_entities(s, e, n, left);
	root_grps = bound_groups(s);
	s->grp_level_alloc = s->grp_level_weight = 0;
	share_group(s, e, SCHED_NONE, total, s->grp_scratch, root_ents, root_grps);
	update_shares(s, e, n);
	update_scale(s, e, n);
	count_held(s, e, n);
	for (unsigned int k = 0; k < n; k++) {
		if (e[k].comp < 0)
			continue;
		if (e[k].se->group != SCHED_NONE)
			set_ideal_weight(s, e[k].se, e[k].rate);
		else
			set_root_weight(s, e[k].se, e[k].rate);
		e[k].w = e[k].rate ? e[k].rate : 1;
		e[k].rate = 0;
	}
	flat_weights_untracked(s);
	return true;
}
