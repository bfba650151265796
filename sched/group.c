// SPDX-License-Identifier: MIT
/*
 * Groups: weights and caps above the entities (cgroup v2 cpu.weight and
 * cpu.max, Xen domain weights; docs/sched/groups.md "Groups and group caps").
 *
 * A group's share is divided among its runnable members by weight: the
 * run weights and the hierarchical ideal the fluid balance moves entities
 * to are group_ideal.c's. This file holds the API, membership, the caps'
 * accounting and the statistics.
 *
 * A group cap is accounted like an entity's (cap.c) over the run time of
 * everything below it; when the quota is used up its fair entities are
 * throttled on their runqueues' cap lists until the period ends.
 * Deadline entities are charged but never throttled (their reservation is
 * kept), so a cap must leave room for them (group_check_dl()).
 */
#include "sched/internal.h"

static struct sched_group *grp(const struct sched *s, int gid)
{
	if (gid < 0 || gid >= SCHED_MAX_GROUPS || !s->grp || !s->grp[gid].used)
		return NULL;
	return &s->grp[gid];
}

int sched_group_find(const struct sched *s, const char *name)
{
	for (int g = 0; name && s->grp && g < SCHED_MAX_GROUPS; g++)
		if (s->grp[g].used && !strcmp(s->grp[g].name, name))
			return g;
	return -SCHED_E_NOENT;
}

static int check_group_weight(uint32_t weight, char *err, size_t errlen)
{
	if (weight < SCHED_WEIGHT_MIN || weight > SCHED_WEIGHT_MAX)
		return sched_errf(err, errlen, SCHED_E_INVAL, "group weight: %u out of range %u..%u",
				  weight, SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
	return 0;
}

static int check_new_group(const struct sched *s, const char *name, int parent, uint32_t weight,
			   char *err, size_t errlen)
{
	const struct sched_group *p = grp(s, parent);

	if (!name || !name[0] || strlen(name) >= SCHED_NAME_MAX)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "group name: expected 1..%d characters", SCHED_NAME_MAX - 1);
	if (sched_group_find(s, name) >= 0)
		return sched_errf(err, errlen, SCHED_E_EXIST, "group name: '%s' exists", name);
	if (parent != SCHED_NONE && !p)
		return sched_errf(err, errlen, SCHED_E_NOENT, "group parent: no group %d", parent);
	if (p && p->depth >= SCHED_GROUP_DEPTH_MAX)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "group parent: '%s' is %u deep already, at most %d levels of groups",
				  p->name, p->depth, SCHED_GROUP_DEPTH_MAX);
	if (s->grp && s->nr_groups >= SCHED_MAX_GROUPS)
		return sched_errf(err, errlen, SCHED_E_NOMEM, "group: all %d groups in use",
				  SCHED_MAX_GROUPS);
	return check_group_weight(weight, err, errlen);
}

int sched_group_add(struct sched *s, const char *name, int parent, uint32_t weight, uint64_t now,
		    char *err, size_t errlen)
{
	struct sched_group *g;
	int gid = 0, ret = check_new_group(s, name, parent, weight, err, errlen);

	if (ret)
		return ret;
	if (!s->grp) {
		s->grp = calloc(SCHED_MAX_GROUPS, sizeof(*s->grp));
		if (!s->grp)
			return sched_errf(err, errlen, SCHED_E_NOMEM, "group: out of memory");
	}
	(void)engine_now(s, now);
	while (s->grp[gid].used)
		gid++;
	g = &s->grp[gid];
	memset(g, 0, sizeof(*g));
	g->used = true;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->parent = parent;
	g->depth = parent == SCHED_NONE ? 1 : s->grp[parent].depth + 1;
	g->weight = weight;
	if (parent != SCHED_NONE)
		s->grp[parent].nr_groups++;
	s->nr_groups++;
	return gid;
}

int sched_group_remove(struct sched *s, int gid, uint64_t now)
{
	struct sched_group *g = grp(s, gid);

	if (!g)
		return -SCHED_E_NOENT;
	if (g->nr_members || g->nr_groups)
		return -SCHED_E_BUSY;
	(void)engine_now(s, now);
	if (g->parent != SCHED_NONE)
		s->grp[g->parent].nr_groups--;
	g->used = false;
	s->nr_groups--;
	return 0;
}


static void update_capped(const struct sched *s, struct sched_entity *se)
{
	se->grp_capped = false;
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent)
		se->grp_capped |= s->grp[g].cap.period != 0;
}

/*
 * Entities throttled only by a group cap that no longer binds (changed,
 * removed, or they moved out) run again now.
 */
static void release_throttled(struct sched *s, uint64_t now)
{
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];
		struct sched_rq *rq;

		if (!se || !se->cap_throttled || cap_exhausted(s, se, now))
			continue;
		rq = &s->rq[se->cpu];
		cap_unthrottle(s, se, now);
		if (rq->need_resched)
			schedule_rq(s, rq, now);
	}
}

int sched_group_set_weight(struct sched *s, int gid, uint32_t weight, uint64_t now, char *err,
			   size_t errlen)
{
	struct sched_group *g = grp(s, gid);
	int ret;

	if (!g)
		return sched_errf(err, errlen, SCHED_E_NOENT, "group: no group %d", gid);
	ret = check_group_weight(weight, err, errlen);
	if (ret)
		return ret;
	now = engine_now(s, now);
	g->weight = weight;
	group_update_weights(s, now);
	return 0;
}

/*
 * Time per period (BW_SHIFT fixed point, 1 = one pCPU) the reservations
 * below group gid need, with `skip` left out: runtime/period at the
 * capacity of the pCPU each is admitted on.
 */
static uint64_t dl_time_bw(const struct sched_dl_params *dl, unsigned int capacity)
{
	uint64_t bw = (uint64_t)(((unsigned __int128)dl->runtime_ns << BW_SHIFT) / dl->period_ns);

	return bw * SCHED_CAPACITY_SCALE / (capacity ? capacity : 1);
}

static uint64_t dl_need_below(const struct sched *s, int gid, const struct sched_entity *skip)
{
	uint64_t need = 0;

	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		const struct sched_entity *se = s->ent[id];

		if (se && se != skip && dl_entity(se) && se->dl_cpu >= 0 && group_contains(s, se, gid))
			need += dl_time_bw(&se->dl, s->rq[se->dl_cpu].capacity);
	}
	return need;
}

static int dl_room_error(const struct sched_group *g, uint64_t quota, uint64_t period,
			 uint64_t need, char *err, size_t errlen)
{
	return sched_errf(err, errlen, SCHED_E_BANDWIDTH,
			  "group '%s' cap %llu/%llu ns: the reservations below it need %.3f pCPUs "
			  "of time per period, the quota gives %.3f",
			  g->name, (unsigned long long)quota, (unsigned long long)period,
			  (double)need / BW_UNIT, (double)quota / (double)period);
}

/*
 * Would a reservation dl admitted on pCPU cpu for an entity (skip: its
 * current reservation, if any) fit every capped group from gid up?
 */
int group_check_dl(const struct sched *s, int gid, const struct sched_entity *skip,
		   const struct sched_dl_params *dl, unsigned int cpu, char *err, size_t errlen)
{
	for (int g = gid; g != SCHED_NONE; g = s->grp[g].parent) {
		const struct sched_group *sg = &s->grp[g];
		uint64_t need;

		if (!sg->cap.period)
			continue;
		need = dl_need_below(s, g, skip) + dl_time_bw(dl, s->rq[cpu].capacity);
		if (need > (uint64_t)(((unsigned __int128)sg->cap.quota << BW_SHIFT) / sg->cap.period))
			return dl_room_error(sg, sg->cap.quota, sg->cap.period, need, err, errlen);
	}
	return 0;
}

static int check_group_cap(const struct sched *s, const struct sched_group *g, int gid,
			   uint64_t quota, uint64_t period, char *err, size_t errlen)
{
	uint64_t need;
	int ret = cap_check_range(s, true, quota, period, err, errlen);

	if (ret || !quota)
		return ret;
	need = dl_need_below(s, gid, NULL);
	if (need > (uint64_t)(((unsigned __int128)quota << BW_SHIFT) / period))
		return dl_room_error(g, quota, period, need, err, errlen);
	return 0;
}

/* Bring the run time of every running member up to now, under the old cap. */
static void account_running(struct sched *s, uint64_t now)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (s->rq[cpu].curr && s->rq[cpu].curr->group != SCHED_NONE)
			update_rq_clock(s, &s->rq[cpu], now);
}

int sched_group_set_cap(struct sched *s, int gid, uint64_t quota_ns, uint64_t period_ns,
			uint64_t now, char *err, size_t errlen)
{
	struct sched_group *g = grp(s, gid);
	int ret;

	if (!g)
		return sched_errf(err, errlen, SCHED_E_NOENT, "group cap: no group %d", gid);
	ret = check_group_cap(s, g, gid, quota_ns, period_ns, err, errlen);
	if (ret)
		return ret;
	now = engine_now(s, now);
	account_running(s, now);
	if (g->thr_active) {	/* the throttling ends here */
		g->throttled_ns += (now < g->thr_until ? now : g->thr_until) - g->thr_start;
		g->thr_active = false;
	}
	g->cap.quota = quota_ns;
	g->cap.period = quota_ns ? period_ns : 0;
	g->cap.used = 0;	/* the new quota counts from now */
	g->cap.prev = 0;
	g->cap.index = g->cap.period ? now / g->cap.period : 0;
	group_share_soon(s);
	for (unsigned int id = 0; id < s->nr_ent_slots; id++)	/* the next balance shares it */
		if (s->ent[id] && group_contains(s, s->ent[id], gid))
			s->ent[id]->grp_share.period = s->ent[id]->grp_outer.period = 0;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++)
		if (s->ent[id] && s->ent[id]->group != SCHED_NONE)
			update_capped(s, s->ent[id]);
	release_throttled(s, now);
	return 0;
}

/*
 * Mark pCPU cpu, whose curr se is or was, in (or out of) the running mask
 * of every group on se's path: group_unaccounted() visits those pCPUs only.
 */
static void mark_running(struct sched *s, const struct sched_entity *se, unsigned int cpu, bool on)
{
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent) {
		uint64_t *w = &s->grp[g].running.bits[cpu / 64];

		*w = on ? *w | 1ull << (cpu % 64) : *w & ~(1ull << (cpu % 64));
	}
}

/* rq's curr becomes next (schedule_rq(), where there are groups). */
void group_switch_curr(struct sched *s, struct sched_rq *rq, struct sched_entity *next)
{
	if (rq->curr)
		mark_running(s, rq->curr, rq->cpu, false);
	if (next)
		mark_running(s, next, rq->cpu, true);
}

/* Is se the curr of its pCPU (its groups' running masks have that pCPU)? */
static bool is_curr(const struct sched *s, const struct sched_entity *se)
{
	return se->cpu >= 0 && s->rq[se->cpu].curr == se;
}

/* se joins group gid (SCHED_NONE: the root): counts, cap flag, running masks. */
void group_entity_join(struct sched *s, struct sched_entity *se, int gid)
{
	se->group = gid;
	if (gid == SCHED_NONE)
		return;
	s->grp[gid].nr_members++;
	for (int g = gid; g != SCHED_NONE; g = s->grp[g].parent)
		s->grp[g].nr_entities++;
	update_capped(s, se);
	if (is_curr(s, se))
		mark_running(s, se, (unsigned int)se->cpu, true);
}

void group_entity_leave(struct sched *s, struct sched_entity *se)
{
	if (se->group == SCHED_NONE)
		return;
	if (is_curr(s, se))
		mark_running(s, se, (unsigned int)se->cpu, false);
	s->grp[se->group].nr_members--;
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent)
		s->grp[g].nr_entities--;
	se->group = SCHED_NONE;
	se->grp_capped = false;
	se->grp_share.period = se->grp_outer.period = 0;
}

int sched_set_group(struct sched *s, int id, int gid, uint64_t now, char *err, size_t errlen)
{
	struct sched_entity *se = sched_ent(s, id);
	int ret;

	if (!se)
		return sched_errf(err, errlen, SCHED_E_NOENT, "group: no entity %d", id);
	if (gid != SCHED_NONE && !grp(s, gid))
		return sched_errf(err, errlen, SCHED_E_NOENT, "group: no group %d", gid);
	if (dl_entity(se) && se->dl_cpu >= 0) {
		ret = group_check_dl(s, gid, se, &se->dl, (unsigned int)se->dl_cpu, err, errlen);
		if (ret)
			return ret;
	}
	if (gid == se->group)
		return 0;
	now = engine_now(s, now);
	if (se->on_rq && s->rq[se->cpu].curr == se)
		update_rq_clock(s, &s->rq[se->cpu], now);	/* charged to the old group */
	group_entity_leave(s, se);
	group_entity_join(s, se, gid);
	if (se->grp_capped)
		group_share_soon(s);
	group_update_weights(s, now);
	release_throttled(s, now);
	return 0;
}

/* -------------------------------------------------------------- accounting */

/* Run time charged to period `index` (cap.c's rule: an overrun is paid in the next). */
static uint64_t acct_used_in(const struct cap_acct *a, uint64_t index)
{
	return cap_charged_in(index, a->index, a->used, a->quota);
}

/* The end of the period of cap a that contains now. */
static uint64_t period_end(const struct cap_acct *a, uint64_t now)
{
	return (now / a->period + 1) * a->period;
}

static uint64_t over_quota(uint64_t used, uint64_t quota)
{
	return used > quota ? used - quota : 0;
}

/*
 * delta ns of run time ending at now; true when the quota is used up. The
 * part before a period boundary goes to the period before (only its
 * overrun carries into this one), also when another pCPU's charge at the
 * same instant began this period already: the pCPUs running a group's
 * members account at their own events, and at a boundary each charges
 * the tick that ended there. Counted in the new period, those ticks used
 * up its quota early on every pCPU at once, and the holes went to light
 * entities elsewhere (seed 7 #48 of the groups corpus: a group capped at
 * 3.33 pCPUs lost up to 1 ms of every 29 ms period, its two whole-pCPU
 * members 0.05 s under their ideals, a light member of another group
 * 0.09 s over).
 */
static bool acct_charge(struct cap_acct *a, uint64_t delta, uint64_t now)
{
	uint64_t index = now / a->period, into = now - index * a->period;
	uint64_t before = delta > into ? delta - into : 0;

	if (index != a->index) {
		a->prev = index == a->index + 1 ? a->used + before : before;
		a->used = over_quota(a->prev, a->quota);
		a->index = index;
	} else if (before) {
		uint64_t carried = over_quota(a->prev, a->quota);

		a->prev += before;
		a->used += over_quota(a->prev, a->quota) - carried;
	}
	a->used += delta - before;
	return a->used >= a->quota;
}

/* Quota left at `now`, shared by `par` entities running at once. */
static uint64_t acct_left(const struct cap_acct *a, uint64_t now, unsigned int par)
{
	uint64_t used = acct_used_in(a, now / a->period);
	uint64_t left = used < a->quota ? a->quota - used : 0;

	return (left + par - 1) / (par ? par : 1);
}

/* Tokens of a share at now (refilled by the periods begun since its index). */
static int64_t share_tokens(const struct share_bucket *b, uint64_t now)
{
	uint64_t periods = now / b->period - b->index;
	int64_t t = b->tokens + (int64_t)(periods < (1u << 20) ? periods * b->quota : b->depth);

	return t > (int64_t)b->depth ? (int64_t)b->depth : t;
}

static bool share_exhausted(const struct share_bucket *b, uint64_t now)
{
	return b->period && share_tokens(b, now) <= 0;
}

/* The next refill: the end of the period that contains now. */
static uint64_t share_end(const struct share_bucket *b, uint64_t now)
{
	return (now / b->period + 1) * b->period;
}

/*
 * delta ns of run time ending at now. The part before a period boundary
 * comes out of the tokens of the period it ran in, before the refill, as
 * acct_charge() splits it. Charged after the refill (capped at the
 * depth), it came out of the next period's tokens while the old period's
 * were forfeit: a member whose share is the whole period (its rate one
 * pCPU) was throttled before that period's end and lost a slice to
 * another entity after it (seed 1 #136 of the groups corpus: two such
 * members 0.33 and 0.35 s under their ideals, 0.22 and 0.30 s with this).
 */
static bool share_charge(struct share_bucket *b, uint64_t delta, uint64_t now)
{
	uint64_t index = now / b->period, into = now - index * b->period;

	if (index != b->index) {
		if (delta > into) {
			uint64_t last = now - into - 1;	/* the previous period's last ns */

			b->tokens = share_tokens(b, last) - (int64_t)(delta - into);
			b->index = index - 1;
			delta = into;
		}
		b->tokens = share_tokens(b, now);
		b->index = index;
	} else if (b->tokens > (int64_t)b->depth) {
		b->tokens = (int64_t)b->depth;	/* a smaller share since */
	}
	b->tokens -= (int64_t)delta;
	return b->tokens <= 0;
}

static uint64_t share_left(const struct share_bucket *b, uint64_t now)
{
	int64_t t = share_tokens(b, now);

	return t > 0 ? (uint64_t)t : 0;
}

/* The earlier of next and the time b, if in use, runs out from clock. */
static uint64_t share_next(const struct share_bucket *b, uint64_t clock, uint64_t next)
{
	uint64_t end;

	if (!b->period)
		return next;
	end = clock + share_left(b, clock);
	return end < next ? end : next;
}

/*
 * May a member pulled by newidle (balance.c pick_movable()) run there for
 * less than its shortest request, REQUEST_TICK_DIV of a tick? Its group's
 * quota used up, or its share of it: queued again at its share's period
 * end with its debt unpaid, it is throttled before it runs where it
 * waits, but picked on the pCPU that pulled it it ran at once until its
 * next accounting (seed 1 #97 of the groups corpus: twelve members whose
 * ideals are 0-3 ms, 8-9 ms over each in 10 s, 0.09 s for 0.002 in all,
 * from a sibling with a real share). Nor with a few microseconds of a
 * share left: the pull buys a run of that long and a migration, and the
 * pCPU is idle again at once (on #97, light members whose share is the
 * 1 us floor per period were pulled for 1 us each: 2320 migrations
 * against 1182).
 */
/* Is the share bucket b in use and down to less than a light request? */
static bool share_short(const struct sched *s, const struct share_bucket *b, uint64_t now)
{
	return b->period && share_left(b, now) < s->cfg.tick_ns / REQUEST_TICK_DIV;
}

bool group_pull_short(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	if (!se->grp_capped)
		return false;
	if (cap_exhausted(s, se, now))
		return true;
	return share_short(s, &se->grp_outer, now) || share_short(s, &se->grp_share, now);
}

/*
 * The laxity of se's share of a binding group cap at now, for
 * fair_cap_urgent(): the time left in the share's period beyond its
 * tokens left. Only where tokens left at the period's end are lost (the
 * depth is the quota: a share of a slice or more); a lighter share keeps
 * up to a slice for later periods, and holding a slice back for it let
 * light members collect holes (docs/sched/caps.md, "Least laxity first").
 * INT64_MAX where there is nothing to lose.
 */
int64_t group_share_laxity(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	const struct share_bucket *b = &se->grp_share;
	uint64_t left;

	if (!group_share_holds(s, se) || b->depth > b->quota)
		return INT64_MAX;
	left = share_left(b, now);
	if (!left)
		return INT64_MAX;
	return (int64_t)(share_end(b, now) - now) - (int64_t)left;
}

/* The run time left in se's share of a group cap at now (0 without one). */
uint64_t group_share_left(const struct sched_entity *se, uint64_t now)
{
	return se->grp_share.period ? share_left(&se->grp_share, now) : 0;
}

/*
 * Run time of group gid's running members not yet charged at `now` (their
 * pCPUs account at their next event), but on `skip`: the quota left is
 * less by that. Only the pCPUs of its running mask (those whose curr is
 * below it, kept by group_switch_curr() and membership changes) can have
 * any: a word per 64 pCPUs and a step per member running rather than a
 * step per pCPU, on every charge of a member whose group's quota left is
 * within a tick per pCPU (nearly every charge on 64 pCPUs: summing over
 * all of them cost the groups' tick 2.1x) and on every group_cap_next().
 */
uint64_t group_unaccounted(const struct sched *s, int gid, uint64_t now,
			   const struct sched_rq *skip)
{
	const struct sched_cpumask *m = &s->grp[gid].running;
	uint64_t sum = 0;

	for (unsigned int w = 0; w * 64 < s->nr_cpus; w++)
		for (uint64_t bits = m->bits[w]; bits; bits &= bits - 1) {
			unsigned int cpu = w * 64 + (unsigned int)__builtin_ctzll(bits);
			const struct sched_rq *rq = &s->rq[cpu];

			if (rq != skip && rq->curr->on_rq && now > rq->clock)
				sum += now - rq->clock;
		}
	return sum;
}

/*
 * Is group gid's quota used up at now, counting what its members running
 * on other pCPUs (not `skip`, charged up to now) ran since their last
 * accounting? Those pCPUs account at their own events, which may come
 * after this one at the same instant: counting only what was charged, a
 * member went on running past the quota's end on one pCPU while the
 * others stopped, until its next tick or the period's end, and the group
 * ran more than its quotas over the run (seed 8 #17 of the groups
 * corpus: 1.99 pCPUs on 2, 0.17 ms over in the first period, then half
 * that in each of the next ones). The run time not yet charged is at
 * most a tick per pCPU (ticks are not deferred while a member of a
 * capped group runs), so it is only summed when the quota left is
 * within that, over the pCPUs running members only.
 */
static bool group_out(const struct sched *s, int gid, uint64_t now, const struct sched_rq *skip)
{
	const struct cap_acct *a = &s->grp[gid].cap;
	uint64_t used;

	if (!a->period)
		return false;
	used = acct_used_in(a, now / a->period);
	if (used >= a->quota)
		return true;
	if (a->quota - used > (uint64_t)s->nr_cpus * s->cfg.tick_ns)
		return false;
	return group_unaccounted(s, gid, now, skip) >= a->quota - used;
}

/*
 * delta ns at `level` ending at rq->clock + delta ran on rq for se: to the
 * statistics of every group above it, and to their quotas (and se's share
 * of one) while it is queued. A fair entity that used up a quota
 * reschedules its pCPU (other members see it at their next accounting).
 */
void group_charge(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint64_t delta,
		  unsigned int level)
{
	uint64_t now = rq->clock + delta;
	bool out = false;

	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent) {
		struct sched_group *g = &s->grp[gid];

		g->run_ns += delta;
		g->work_ns += (delta * level) >> 10;
		if (g->cap.period && se->on_rq)
			out |= acct_charge(&g->cap, delta, now) || group_out(s, gid, now, rq);
	}
	if (se->grp_share.period && se->on_rq)
		out |= share_charge(&se->grp_share, delta, now);
	if (se->grp_outer.period && se->on_rq)
		out |= share_charge(&se->grp_outer, delta, now);
	if (out && !dl_entity(se))
		resched_rq(rq);
}

/*
 * Is se's used-up share no reason to throttle it? Where the share is of
 * the room of a cap that does not bind in the ideal (set_slack_share()),
 * se is behind its ideal now, and every capped group above se has used
 * no more of its quota than its cap's pace (quota x the fraction of the
 * period gone). The slack share stops members that burst ahead from
 * using up the quota the others need before the period ends; within the
 * pace the quota left covers the rest of the period at the cap's rate,
 * which is more than the members' ideal rates ask, so one behind its
 * ideal takes nobody's time. Throttled anyway, its pCPU's time went to
 * whoever sat there, for the rest of the period (seed 5 #147 of the
 * groups corpus: g1, capped at 1.68 pCPUs for an ideal of 1.58, its
 * members throttled by their shares 521 times, 75 ms under in all; the
 * light v14 beside them, 179 ms for an ideal of 116, 152 of it in cap
 * holes). Only where a share is used up: O(depth).
 */
static bool share_room(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	if (s->grp[se->share_gid].binding || !se->lag_tracked || lag_now(s, se, now) <= 0)
		return false;
	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent) {
		const struct cap_acct *a = &s->grp[gid].cap;

		if (a->period && (unsigned __int128)acct_used_in(a, now / a->period) * a->period >
				 (unsigned __int128)a->quota * (now % a->period))
			return false;
	}
	return true;
}

/* End of the latest period among the exhausted quotas above se (and its share), or 0. */
uint64_t group_exhausted_until(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	uint64_t until = 0;

	if (!se->grp_capped || dl_entity(se))
		return 0;
	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent) {
		const struct sched_group *g = &s->grp[gid];

		if (group_out(s, gid, now, NULL) && period_end(&g->cap, now) > until)
			until = period_end(&g->cap, now);
	}
	if (share_exhausted(&se->grp_share, now) && share_end(&se->grp_share, now) > until &&
	    !share_room(s, se, now))
		until = share_end(&se->grp_share, now);
	if (share_exhausted(&se->grp_outer, now) && share_end(&se->grp_outer, now) > until)
		until = share_end(&se->grp_outer, now);
	return until;
}

/*
 * Is se throttled at now by a quota that is its ideal: its share of a
 * binding group cap, or a group cap that bound at the last balance?
 */
bool group_throttle_binds(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	if (share_exhausted(&se->grp_share, now) && s->grp[se->share_gid].binding)
		return true;
	if (share_exhausted(&se->grp_outer, now))
		return true;
	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent)
		if (s->grp[gid].binding && group_out(s, gid, now, NULL))
			return true;
	return false;
}

/* g's cap throttles (some of) its members from now to end: counted once a period. */
static void note_group_throttle(struct sched_group *g, uint64_t now, uint64_t end)
{
	if (g->thr_active && g->thr_until == end)
		return;
	if (g->thr_active)
		g->throttled_ns += g->thr_until - g->thr_start;
	g->thr_active = true;
	g->thr_start = now;
	g->thr_until = end;
	g->nr_throttles++;
}

/*
 * se is being throttled at now: count the throttling of each exhausted
 * group, and of the group whose cap se's exhausted share is of.
 */
void group_note_throttle(struct sched *s, const struct sched_entity *se, uint64_t now)
{
	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent)
		if (group_out(s, gid, now, NULL))
			note_group_throttle(&s->grp[gid], now, period_end(&s->grp[gid].cap, now));
	if (share_exhausted(&se->grp_share, now) && group_contains(s, se, se->share_gid))
		note_group_throttle(&s->grp[se->share_gid], now, share_end(&se->grp_share, now));
	if (share_exhausted(&se->grp_outer, now) && group_contains(s, se, se->outer_gid))
		note_group_throttle(&s->grp[se->outer_gid], now, share_end(&se->grp_outer, now));
}

/*
 * When rq's running fair entity may use up a group quota: the quota left
 * shared by as many of the group's entities as could run at once, so the
 * event is never late (at worst early, and then nothing happens); and the
 * end of its own share.
 */
uint64_t group_cap_next(const struct sched *s, const struct sched_rq *rq)
{
	const struct sched_entity *curr = rq->curr;
	uint64_t next = UINT64_MAX, now = s->now > rq->clock ? s->now : rq->clock;

	if (!curr || !curr->on_rq || !curr->grp_capped || dl_entity(curr))
		return next;
	for (int gid = curr->group; gid != SCHED_NONE; gid = s->grp[gid].parent) {
		const struct sched_group *g = &s->grp[gid];
		unsigned int par = g->nr_entities < s->nr_cpus ? g->nr_entities : s->nr_cpus;
		uint64_t left, unacc;

		if (!g->cap.period)
			continue;
		left = acct_left(&g->cap, now, 1);
		unacc = group_unaccounted(s, gid, now, NULL);
		left -= left < unacc ? left : unacc;
		left = (left + par - 1) / par;
		if (now + left < next)
			next = now + left;
	}
	next = share_next(&curr->grp_share, rq->clock, next);
	return share_next(&curr->grp_outer, rq->clock, next);
}

/* -------------------------------------------------------------- statistics */

int sched_group_stats(const struct sched *s, int gid, struct sched_group_stats *st)
{
	const struct sched_group *g = grp(s, gid);

	if (!g || !st)
		return -SCHED_E_NOENT;
	memset(st, 0, sizeof(*st));
	memcpy(st->name, g->name, sizeof(st->name));
	st->parent = g->parent;
	st->weight = g->weight;
	st->cap_quota_ns = g->cap.quota;
	st->cap_period_ns = g->cap.period;
	st->nr_members = g->nr_members;
	st->nr_groups = g->nr_groups;
	st->run_ns = g->run_ns;
	st->work_ns = g->work_ns;
	/* what running members ran since their pCPU's last accounting */
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		const struct sched_rq *rq = &s->rq[cpu];

		if (rq->curr && s->now > rq->clock && group_contains(s, rq->curr, gid)) {
			st->run_ns += s->now - rq->clock;
			st->work_ns += ((s->now - rq->clock) * rq_level(s, rq)) >> 10;
		}
	}
	st->throttled_ns = g->throttled_ns;
	if (g->thr_active)
		st->throttled_ns += (s->now < g->thr_until ? s->now : g->thr_until) - g->thr_start;
	st->nr_throttles = g->nr_throttles;
	return 0;
}

void group_destroy(struct sched *s)
{
	free(s->grp);
	free(s->grp_scratch);
}
