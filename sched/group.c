// SPDX-License-Identifier: MIT
/*
 * Groups: weights and caps above the entities (cgroup v2 cpu.weight and
 * cpu.max, Xen domain weights; docs/sched.md "Groups and group caps").
 *
 * A group's share is divided among its runnable members by weight. The
 * per-pCPU EEVDF runs every fair entity with a flattened weight, its own
 * weight x the product along its path of group weight / the weights of
 * that group's members that want to run (Linux's per-CPU group shares,
 * taken over the whole host): recomputed at every fluid balance and at
 * every change of groups, never on the per-decision paths. Where the
 * flattened weights are not the ideal (a member that cannot use its
 * share), the fluid balance moves entities to the hierarchical ideal that
 * group_solve() gives it.
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

/* Is group `gid` on the path of se (its own group or above)? */
static bool in_subtree(const struct sched *s, const struct sched_entity *se, int gid)
{
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent)
		if (g == gid)
			return true;
	return false;
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

		if (se && se != skip && dl_entity(se) && se->dl_cpu >= 0 && in_subtree(s, se, gid))
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

	if (!quota)
		return 0;
	if (period < SCHED_CAP_PERIOD_MIN_NS || period > SCHED_CAP_PERIOD_MAX_NS)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "group cap period: %llu ns out of range %llu..%llu ns",
				  (unsigned long long)period,
				  (unsigned long long)SCHED_CAP_PERIOD_MIN_NS,
				  (unsigned long long)SCHED_CAP_PERIOD_MAX_NS);
	if (quota < SCHED_CAP_QUOTA_MIN_NS || quota > period * s->nr_cpus)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "group cap quota: %llu ns out of range %llu ns..%u x the period "
				  "(%llu ns, one per pCPU)", (unsigned long long)quota,
				  (unsigned long long)SCHED_CAP_QUOTA_MIN_NS, s->nr_cpus,
				  (unsigned long long)period);
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
	g->cap.index = g->cap.period ? now / g->cap.period : 0;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++)	/* the next balance shares it */
		if (s->ent[id] && in_subtree(s, s->ent[id], gid))
			s->ent[id]->grp_share.period = 0;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++)
		if (s->ent[id] && s->ent[id]->group != SCHED_NONE)
			update_capped(s, s->ent[id]);
	release_throttled(s, now);
	return 0;
}

/* se joins group gid (SCHED_NONE: the root): counts and cap flag only. */
void group_entity_join(struct sched *s, struct sched_entity *se, int gid)
{
	se->group = gid;
	if (gid == SCHED_NONE)
		return;
	s->grp[gid].nr_members++;
	for (int g = gid; g != SCHED_NONE; g = s->grp[g].parent)
		s->grp[g].nr_entities++;
	update_capped(s, se);
}

void group_entity_leave(struct sched *s, struct sched_entity *se)
{
	if (se->group == SCHED_NONE)
		return;
	s->grp[se->group].nr_members--;
	for (int g = se->group; g != SCHED_NONE; g = s->grp[g].parent)
		s->grp[g].nr_entities--;
	se->group = SCHED_NONE;
	se->grp_capped = false;
	se->grp_share.period = 0;
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
	group_update_weights(s, now);
	release_throttled(s, now);
	return 0;
}

/* -------------------------------------------------------------- accounting */

/* Run time charged to period `index` (cap.c's rule: an overrun is paid in the next). */
static uint64_t acct_used_in(const struct cap_acct *a, uint64_t index)
{
	if (index == a->index)
		return a->used;
	if (index == a->index + 1 && a->used > a->quota)
		return a->used - a->quota;
	return 0;
}

static bool acct_exhausted(const struct cap_acct *a, uint64_t now)
{
	return a->period && a->index == now / a->period && a->used >= a->quota;
}

static uint64_t acct_end(const struct cap_acct *a)
{
	return (a->index + 1) * a->period;
}

/* delta ns of run time ending at now; true when the quota is used up. */
static bool acct_charge(struct cap_acct *a, uint64_t delta, uint64_t now)
{
	uint64_t index = now / a->period;

	if (index != a->index) {
		uint64_t into = now - index * a->period;

		a->used = acct_used_in(a, index) + (delta < into ? delta : into);
		a->index = index;
	} else {
		a->used += delta;
	}
	return a->used >= a->quota;
}

/* Quota left at `now`, shared by `par` entities running at once. */
static uint64_t acct_left(const struct cap_acct *a, uint64_t now, unsigned int par)
{
	uint64_t used = acct_used_in(a, now / a->period);
	uint64_t left = used < a->quota ? a->quota - used : 0;

	return (left + par - 1) / (par ? par : 1);
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
			out |= acct_charge(&g->cap, delta, now);
	}
	if (se->grp_share.period && se->on_rq)
		out |= acct_charge(&se->grp_share, delta, now);
	if (out && !dl_entity(se))
		resched_rq(rq);
}

/* End of the latest period among the exhausted quotas above se (and its share), or 0. */
uint64_t group_exhausted_until(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	uint64_t until = 0;

	if (!se->grp_capped || dl_entity(se))
		return 0;
	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent) {
		const struct sched_group *g = &s->grp[gid];

		if (acct_exhausted(&g->cap, now) && acct_end(&g->cap) > until)
			until = acct_end(&g->cap);
	}
	if (acct_exhausted(&se->grp_share, now) && acct_end(&se->grp_share) > until)
		until = acct_end(&se->grp_share);
	return until;
}

/*
 * Is se throttled at now by a quota that is its ideal: its share of a
 * binding group cap, or a group cap that bound at the last balance?
 */
bool group_throttle_binds(const struct sched *s, const struct sched_entity *se, uint64_t now)
{
	if (acct_exhausted(&se->grp_share, now))
		return true;
	for (int gid = se->group; gid != SCHED_NONE; gid = s->grp[gid].parent)
		if (acct_exhausted(&s->grp[gid].cap, now) && s->grp[gid].binding)
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
		if (acct_exhausted(&s->grp[gid].cap, now))
			note_group_throttle(&s->grp[gid], now, acct_end(&s->grp[gid].cap));
	if (acct_exhausted(&se->grp_share, now) && in_subtree(s, se, se->share_gid))
		note_group_throttle(&s->grp[se->share_gid], now, acct_end(&se->grp_share));
}

/*
 * Run time of group gid's running members not yet charged at `now` (their
 * pCPUs account at their next event): the quota left is less by that.
 */
static uint64_t unaccounted(const struct sched *s, int gid, uint64_t now)
{
	uint64_t sum = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		const struct sched_rq *rq = &s->rq[cpu];

		if (rq->curr && rq->curr->on_rq && now > rq->clock && in_subtree(s, rq->curr, gid))
			sum += now - rq->clock;
	}
	return sum;
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
		uint64_t left;

		if (!g->cap.period)
			continue;
		left = acct_left(&g->cap, now, 1);
		left -= left < unaccounted(s, gid, now) ? left : unaccounted(s, gid, now);
		left = (left + par - 1) / par;
		if (now + left < next)
			next = now + left;
	}
	if (curr->grp_share.period && rq->clock + acct_left(&curr->grp_share, rq->clock, 1) < next)
		next = rq->clock + acct_left(&curr->grp_share, rq->clock, 1);
	return next;
}

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
 * se's share of group gid's binding cap: its ideal rate as run time per
 * period of the group, at the capacity of its pCPU. Members on different
 * pCPUs would otherwise split the quota by how fast they use it, not by
 * weight (each running alone at full speed until the group's quota is
 * gone). Kept across balances within the same period length, so a period
 * is charged once.
 */
static void set_share(struct sched *s, struct sched_entity *se, int gid, uint64_t rate)
{
	const struct cap_acct *g = &s->grp[gid].cap;
	uint64_t full = (uint64_t)s->rq[se->cpu].capacity << (RATE_SHIFT - 10);
	uint64_t q = (uint64_t)((unsigned __int128)rate * g->period / full);

	if (se->grp_share.period != g->period) {
		se->grp_share.period = g->period;
		se->grp_share.used = 0;
		se->grp_share.index = s->now / g->period;
	}
	se->grp_share.quota = q < NSEC_PER_USEC ? NSEC_PER_USEC : q > g->period ? g->period : q;
	se->share_round = s->lag_round;
	se->share_gid = gid;
}

/* Shares of binding group caps for the tracked entities, none for the others. */
static void update_shares(struct sched *s, struct lag_ent *e, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		int gid;

		if (e[k].comp < 0 || (gid = limited_group(s, e[k].se)) == SCHED_NONE)
			continue;
		set_share(s, e[k].se, gid, e[k].rate);
		if (e[k].rate < e[k].limit)
			e[k].limit = e[k].rate;
	}
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];

		if (se && se->grp_share.period && se->share_round != s->lag_round)
			se->grp_share.period = 0;
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

static void set_ideal_weight(struct sched *s, struct sched_entity *se, uint64_t rate)
{
	uint32_t w = clamp_weight((unsigned __int128)ideal_weight16(s, rate) * grp_scale(s), 32);

	se->ideal_round = s->lag_round;
	if (w != se->weight)
		set_run_weight(s, se, w, s->now);
}

/*
 * The scale that brings the largest weight of an entity below its bound
 * near SCALE_TARGET, and no weight beyond SCHED_WEIGHT_MAX; changed only
 * by a factor of 2 or more, as every change reweights all.
 */
static void update_scale(struct sched *s, const struct lag_ent *e, unsigned int n)
{
	uint64_t top = 0, top_all = 0, scale;

	for (unsigned int k = 0; k < n; k++) {
		uint64_t w16;

		if (e[k].comp < 0)
			continue;
		w16 = e[k].se->group == SCHED_NONE ? (uint64_t)e[k].se->own_weight << 16 :
		      ideal_weight16(s, e[k].rate);
		if (w16 > top_all)
			top_all = w16;
		if (e[k].rate < e[k].pred && w16 > top)
			top = w16;
	}
	if (!top)
		return;
	scale = (uint64_t)(((unsigned __int128)SCALE_TARGET << 32) / top);
	/* ... and none beyond the largest weight: a clamped weight is a wrong ratio */
	if ((unsigned __int128)top_all * scale > (unsigned __int128)SCHED_WEIGHT_MAX << 32)
		scale = (uint64_t)(((unsigned __int128)SCHED_WEIGHT_MAX << 32) / top_all);
	scale = scale < SCALE_MIN ? SCALE_MIN : scale > SCALE_MAX ? SCALE_MAX : scale;
	if (scale < 2 * grp_scale(s) && 2 * scale > grp_scale(s))
		return;
	s->grp_scale = scale;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];

		if (se && !dl_entity(se) && se->group == SCHED_NONE && se->weight != root_weight(s, se))
			set_run_weight(s, se, root_weight(s, se), s->now);
	}
}

/* The others in groups (not runnable since the last balance): flattened weights. */
static void flat_weights_untracked(struct sched *s)
{
	count_active(s);
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		struct sched_entity *se = s->ent[id];
		uint32_t w;

		if (!se || se->group == SCHED_NONE || dl_entity(se) ||
		    se->ideal_round == s->lag_round)
			continue;
		w = flat_weight(s, se);
		if (w != se->weight)
			set_run_weight(s, se, w, s->now);
	}
}

/*
 * The hierarchical ideal of the tracked entities e[0..n) (those with
 * comp >= 0) on pCPUs with `left` capacity each (RATE_SHIFT): max-min
 * water-filling of the total from the root down, every member bounded by
 * what it can use (docs/sched.md "Groups and group caps"). The shares
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
	root_ents = link_entities(s, e, n, left);
	root_grps = bound_groups(s);
	s->grp_level_alloc = s->grp_level_weight = 0;
	share_group(s, e, SCHED_NONE, total, s->grp_scratch, root_ents, root_grps);
	update_shares(s, e, n);
	update_scale(s, e, n);
	for (unsigned int k = 0; k < n; k++) {
		if (e[k].comp < 0)
			continue;
		if (e[k].se->group != SCHED_NONE)
			set_ideal_weight(s, e[k].se, e[k].rate);
		e[k].w = e[k].rate ? e[k].rate : 1;
		e[k].rate = 0;
	}
	flat_weights_untracked(s);
	return true;
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

		if (rq->curr && s->now > rq->clock && in_subtree(s, rq->curr, gid)) {
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
