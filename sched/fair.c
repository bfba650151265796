// SPDX-License-Identifier: MIT
/*
 * Fair class: EEVDF (Linux 6.6+, kernel/sched/fair.c).
 *
 * Each runqueue keeps its waiting entities in a tree ordered by virtual
 * deadline and augmented with the minimum vruntime of every subtree, so
 * pick_eevdf() finds the eligible entity with the earliest deadline in
 * O(log n). The running entity is out of the tree (set_next_entity) and
 * accounted separately in the weighted average, as in the kernel.
 *
 *   vruntime += delta * 1024 / w          (calc_delta_fair, rule 2)
 *   V = sum(w_i v_i) / sum(w_i)           (avg_vruntime, rule 3)
 *   eligible: w_i (V - v_i) >= 0          (entity_eligible, no division)
 *   deadline = vruntime + slice * 1024/w  (update_deadline, rule 4)
 *   lag kept across sleep and migration, placement scaled by (W+w)/W
 *   (update_entity_lag, place_entity, rule 5).
 */
#include "sched/internal.h"

#include <stdlib.h>

static inline int64_t entity_key(const struct sched_rq *rq, uint64_t vruntime)
{
	return (int64_t)(vruntime - rq->zero_vruntime);
}

static inline struct sched_entity *node_se(struct tnode *n)
{
	return n ? slist_entry(n, struct sched_entity, run_node) : NULL;
}

static inline struct sched_entity *fair_curr(const struct sched_rq *rq)
{
	struct sched_entity *c = rq->curr;

	return c && c->on_rq && !dl_entity(c) && c->cpu == (int)rq->cpu ? c : NULL;
}

static void avg_vruntime_add(struct sched_rq *rq, struct sched_entity *se)
{
	rq->avg_vruntime += entity_key(rq, se->vruntime) * (int64_t)se->weight;
	rq->avg_load += se->weight;
}

static void avg_vruntime_sub(struct sched_rq *rq, struct sched_entity *se)
{
	rq->avg_vruntime -= entity_key(rq, se->vruntime) * (int64_t)se->weight;
	rq->avg_load -= se->weight;
}

/* Sum and load of the weighted average including the running entity. */
static void avg_parts(const struct sched_rq *rq, int64_t *avg, int64_t *load)
{
	struct sched_entity *curr = fair_curr(rq);

	*avg = rq->avg_vruntime;
	*load = (int64_t)rq->avg_load;
	if (curr) {
		*avg += entity_key(rq, curr->vruntime) * (int64_t)curr->weight;
		*load += curr->weight;
	}
}

uint64_t avg_vruntime(const struct sched_rq *rq)
{
	int64_t avg, load;

	avg_parts(rq, &avg, &load);
	if (load) {
		if (avg < 0)	/* floor, so that V is never ahead of the true mean */
			avg -= load - 1;
		avg /= load;
	}
	return rq->zero_vruntime + (uint64_t)avg;
}

/* Keep keys small: move the base to V (the kernel's update_zero_vruntime). */
static void update_zero_vruntime(struct sched_rq *rq)
{
	uint64_t v = avg_vruntime(rq);
	int64_t delta = (int64_t)(v - rq->zero_vruntime);

	rq->avg_vruntime -= (int64_t)rq->avg_load * delta;
	rq->zero_vruntime = v;
}

/* w (V - v) >= 0 without dividing, given avg_parts() of the rq. */
static inline bool eligible_with(const struct sched_rq *rq, int64_t avg, int64_t load,
				 uint64_t vruntime)
{
	return (__int128)avg >= (__int128)entity_key(rq, vruntime) * load;
}

static bool vruntime_eligible(const struct sched_rq *rq, uint64_t vruntime)
{
	int64_t avg, load;

	avg_parts(rq, &avg, &load);
	return eligible_with(rq, avg, load, vruntime);
}

bool entity_eligible(const struct sched_rq *rq, const struct sched_entity *se)
{
	return vruntime_eligible(rq, se->vruntime);
}

static void enqueue_tree(struct sched_rq *rq, struct sched_entity *se)
{
	se->run_node.key = se->deadline;
	se->run_node.aux = se->vruntime;
	avg_vruntime_add(rq, se);
	fq_insert(&rq->cfs, &se->run_node);
}

static void dequeue_tree(struct sched_rq *rq, struct sched_entity *se)
{
	fq_erase(&rq->cfs, &se->run_node);
	avg_vruntime_sub(rq, se);
}

/*
 * pick_eevdf(): the eligible entity with the earliest virtual deadline. The
 * rq does not change meanwhile, so the weighted average is summed once. A
 * queued node's aux is its entity's vruntime (enqueue_tree() sets it and
 * the fair class requeues around every change), so the walk reads nodes
 * only.
 */
struct sched_entity *pick_eevdf(struct sched_rq *rq)
{
	struct sched_entity *curr = fair_curr(rq), *best = NULL, *first;
	struct tnode *node;
	int64_t avg, load;

	avg_parts(rq, &avg, &load);
	if (curr && !eligible_with(rq, avg, load, curr->vruntime))
		curr = NULL;
	if (rq->nr_fair == 1)
		return curr ? curr : node_se(fq_first(&rq->cfs));
	/* RUN_TO_PARITY: run until the deadline set when picked. */
	if (curr && curr->protect && curr->deadline == curr->prot_deadline)
		return curr;
	first = node_se(fq_first(&rq->cfs));
	if (first && eligible_with(rq, avg, load, first->vruntime)) {
		best = first;
		goto found;
	}
	if (!rq->cfs.big) {
		/* The array is in deadline order: the first eligible one. */
		for (unsigned int i = 1; i < rq->cfs.nr; i++) {
			struct tnode *n = fq_at(&rq->cfs, i);

			if (eligible_with(rq, avg, load, n->aux)) {	/* aux: its vruntime */
				best = node_se(n);
				break;
			}
		}
		goto found;
	}
	/* Heap search for the leftmost deadline among eligible subtrees. */
	node = rq->cfs.tree.root;
	while (node) {
		struct tnode *left = node->l;

		if (left && eligible_with(rq, avg, load, left->min_aux)) {
			node = left;
			continue;
		}
		if (eligible_with(rq, avg, load, node->aux)) {
			best = node_se(node);
			break;
		}
		node = node->r;
	}
found:
	if (!best || (curr && time_before64(curr->deadline, best->deadline)))
		best = curr;
	if (!best)	/* rounding: never leave the CPU idle with work queued */
		best = first ? first : fair_curr(rq);
	return best;
}

static struct sched_entity *pick_fair(struct sched *s, struct sched_rq *rq)
{
	struct sched_entity *buddy = rq->next_buddy;

	(void)s;
	if (!rq->nr_fair)
		return NULL;
	/* PICK_BUDDY (6.14+): a yield_to target goes first if eligible. */
	if (buddy && buddy->on_rq && buddy->cpu == (int)rq->cpu && entity_eligible(rq, buddy))
		return buddy;
	/* a capped one whose quota would not fit after the slice (fair_capped.c) */
	if (rq->nr_capped)
		return fair_cap_urgent(s, rq, pick_eevdf(rq));
	return pick_eevdf(rq);
}

/*
 * lag x num / den, truncated like the 128-bit division it stands for; the
 * product nearly always fits 64 bits, and a 64-bit division is several
 * times cheaper than __divti3.
 */
static int64_t scale_lag(int64_t lag, int64_t num, int64_t den)
{
	int64_t prod;

	if (!__builtin_mul_overflow(lag, num, &prod))
		return prod / den;
	return (int64_t)((__int128)lag * num / den);
}

/*
 * An entity the fluid balance moves (fairlag.c) asks on its new pCPU for
 * a slice times its weight over the heaviest fair entity's there, at
 * least a tick: every entity then asks for as much virtual time as the
 * heaviest one, whose slice is whole. It arrives at lag 0, eligible as
 * soon as the entity there has run, and with a whole slice a light one
 * took 3 ms at every balance that brought one, from a heavy entity whose
 * pCPU the rotation and the lag moves passed light ones through (seed 9
 * #348 of the fair corpus, every vCPU busy: one light arrival per 16 ms
 * took 13% of the pCPU, and the heavy one ended 3.4% short). Relative to
 * the heaviest there, not to the pCPU: entities of equal weight keep
 * whole slices and dispatch as often as before (asking for its rate's
 * share of the pCPU, the simulator benchmark's all-busy mix ran 1.8x as
 * many slices); not to the mean weight there either (CFS's
 * sched_slice()): a middle one beside a heavy one and light ones then
 * kept most of a slice, and the lag moves moved 2.3x as often to correct
 * what that left (the 19-pCPU scenario of tests/sim/fair_rules.json).
 * It lasts until the entity is next placed (a wakeup or a move). Only for
 * moved entities: for every tracked one the rate's share cost the fair
 * corpus 3 of 5000 scenarios. O(entities queued there), once per move:
 * within the balance's own O(entities).
 */
static uint64_t moved_request(const struct sched *s, const struct sched_rq *rq,
			      const struct sched_entity *se)
{
	uint64_t heaviest = se->weight, r;

	for (const struct slist *pos = rq->queued.next; pos != &rq->queued; pos = pos->next) {
		const struct sched_entity *o = slist_entry(pos, struct sched_entity, rq_link);

		if (!dl_entity(o) && o->weight > heaviest)
			heaviest = o->weight;
	}
	r = (uint64_t)((unsigned __int128)s->cfg.slice_ns * se->weight / heaviest);
	return r > s->cfg.tick_ns ? r : s->cfg.tick_ns;
}

/*
 * A capped entity never runs longer than its quota at once: that is its
 * request, and the earlier deadline it gives lets it use the quota early
 * in the period instead of waiting for longer requests. So does a member
 * with a share of a binding group cap (group_ideal.c), down to the
 * smallest quota a cap may have: at a slice's deadline a member with a
 * fraction of a slice per period missed whole periods, and its group's
 * quota of those was lost for good (seed 1 #18 of the groups corpus).
 * With groups, a tracked entity asks for a slice by its weight relative to
 * the heaviest's (group_request()) wherever it is placed.
 */
static uint64_t request_slice(const struct sched *s, const struct sched_rq *rq,
			      const struct sched_entity *se)
{
	uint64_t slice = s->cfg.slice_ns, moved;

	if (se->lag_tracked && s->nr_groups)
		slice = group_request(s, se);	/* O(1): by the top weight */
	else if (se->lag_moving && se->lag_tracked && (moved = moved_request(s, rq, se)) < slice)
		slice = moved;	/* its scan of the pCPU's entities once */

	if (se->cap_period && se->cap_quota < slice)
		slice = se->cap_quota;
	if (se->grp_share.period && se->grp_share.quota < slice)
		slice = se->grp_share.quota > SCHED_CAP_QUOTA_MIN_NS ? se->grp_share.quota :
			SCHED_CAP_QUOTA_MIN_NS;
	return slice < s->cfg.slice_ns ? slice : s->cfg.slice_ns;
}

/*
 * Put se, queued on rq, at lag 0 there: eligible now, a request from V.
 * For an entity behind its ideal that the pCPU's own lag has past V
 * where a cap hole opens (cap.c, balance.c).
 */
void fair_place_at_v(struct sched_rq *rq, struct sched_entity *se)
{
	dequeue_tree(rq, se);
	se->vruntime = avg_vruntime(rq);	/* V without se: adding it there keeps V */
	se->deadline = se->vruntime + calc_delta_fair(se->slice, se->weight);
	enqueue_tree(rq, se);
}

/* place_entity(): position a (re)joining entity from its preserved lag. */
static void place_entity(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	uint64_t v = avg_vruntime(rq), vslice;
	int64_t lag = 0;

	se->slice = request_slice(s, rq, se);
	vslice = calc_delta_fair(se->slice, se->weight);
	/*
	 * Moved by the fluid-ideal balance, which keeps the lag across pCPUs
	 * itself: a credit earned on the old pCPU would be paid twice.
	 */
	if (se->lag_moving && se->vlag > 0)
		se->vlag = 0;
	/* a tight capped one ahead, wherever it comes from (fair_capped.c) */
	if (se->cap_period)
		se->vlag = fair_cap_tight_lag(s, se, se->vlag, rq->fair_weight);
	se->lag_moving = false;
	if (rq->nr_fair) {
		struct sched_entity *curr = fair_curr(rq);
		int64_t load = (int64_t)rq->avg_load + (curr ? curr->weight : 0);

		lag = se->vlag;
		/*
		 * Adding se moves V towards v_se; inflate the lag so that the
		 * lag measured after joining is the one it left with.
		 */
		if (load)
			lag = scale_lag(lag, load + se->weight, load);
	}
	se->vruntime = v - (uint64_t)lag;
	if (se->new_entity) {
		vslice /= 2;	/* a new entity starts with half a slice */
		se->new_entity = false;
		if (se->grp_capped)
			group_share_soon(s);
	}
	se->deadline = se->vruntime + vslice;
}

/* update_entity_lag(): remember V - v, bounded by a slice plus a tick. */
static void update_entity_lag(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	int64_t lag = (int64_t)(avg_vruntime(rq) - se->vruntime);
	int64_t limit = (int64_t)calc_delta_fair(se->slice + s->cfg.tick_ns, se->weight);

	if (lag > limit)
		lag = limit;
	if (lag < -limit)
		lag = -limit;
	se->vlag = lag;
}

static void enqueue_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags)
{
	(void)flags;
	update_zero_vruntime(rq);
	place_entity(s, rq, se);
	enqueue_tree(rq, se);
	rq->nr_fair++;
	rq->fair_weight += se->weight;
	fair_count_capped(rq, se);
}

static void dequeue_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se, int flags)
{
	(void)flags;
	update_entity_lag(s, rq, se);
	if (rq->curr != se)
		dequeue_tree(rq, se);
	rq->nr_fair--;
	rq->fair_weight -= se->weight;
	if (se->cap_counted) {
		rq->nr_capped--;
		slist_del(&se->capped_link);
		se->cap_counted = false;
	}
	se->protect = false;
}

static void set_next_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	(void)s;
	dequeue_tree(rq, se);
	se->prot_deadline = se->deadline;
	se->protect = true;
	if (rq->next_buddy == se)
		rq->next_buddy = NULL;
}

static void put_prev_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	(void)s;
	se->protect = false;
	enqueue_tree(rq, se);
}

static void update_curr_fair(struct sched *s, struct sched_rq *rq, uint64_t delta, uint64_t now)
{
	(void)now;
	fair_update_curr(s, rq, delta);
}

static void tick_fair(struct sched *s, struct sched_rq *rq, uint64_t now)
{
	struct sched_entity *curr = fair_curr(rq);

	(void)now;
	/*
	 * Rebase the keys before they drift far from V (enqueue does it
	 * too): (v - zero) x w must stay well inside 64 bits.
	 */
	if (curr && (uint64_t)llabs(entity_key(rq, curr->vruntime)) > (1ull << 32))
		update_zero_vruntime(rq);
	/* A queued dl entity always wins; the slice expiry is in update_curr. */
	if (rq->nr_dl)
		resched_rq(rq);
	(void)s;
}

/* yield_task_fair(): give up the rest of the slice. */
static void yield_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	bool queued = rq->curr != se;

	if (rq->nr_fair <= 1)
		return;
	if (rq->next_buddy == se)
		rq->next_buddy = NULL;
	if (queued)
		dequeue_tree(rq, se);
	if (time_before64(se->vruntime, se->deadline))
		se->vruntime = se->deadline;
	se->deadline = se->vruntime + calc_delta_fair(s->cfg.slice_ns, se->weight);
	se->protect = false;
	if (queued)
		enqueue_tree(rq, se);
}

bool yield_to_fair(struct sched *s, struct sched_entity *se, struct sched_entity *target,
		   uint64_t now)
{
	struct sched_rq *rq = &s->rq[se->cpu], *trq = &s->rq[target->cpu];

	update_rq_clock(s, trq, now);
	update_rq_clock(s, rq, now);
	trq->next_buddy = target;
	yield_fair(s, rq, se);
	se->st.nr_yields++;
	resched_rq(rq);
	resched_rq(trq);
	schedule_rq(s, rq, now);
	if (trq != rq)
		schedule_rq(s, trq, now);
	return true;
}

/* check_preempt_wakeup_fair(): preempt if the woken entity is the pick. */
static bool wakeup_preempt_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se)
{
	(void)s;
	return pick_eevdf(rq) == se;
}

/* reweight_eevdf(): keep lag (w * (V - v)) and the deadline's distance. */
void reweight_fair(struct sched *s, struct sched_rq *rq, struct sched_entity *se, uint32_t w)
{
	uint32_t old = se->weight;
	bool in_tree = se->on_rq && rq && rq->curr != se;
	uint64_t v;

	(void)s;
	/* Every caller clamps; a 0 here would divide by zero below. */
	if (w < SCHED_WEIGHT_MIN)
		w = SCHED_WEIGHT_MIN;
	se->vrem = 0;	/* a fraction of a ns at the old weight */
	if (!se->on_rq || !rq) {
		se->vlag = (int64_t)((__int128)se->vlag * old / w);
		se->weight = w;
		return;
	}
	if (in_tree)
		dequeue_tree(rq, se);
	v = avg_vruntime(rq);
	se->vruntime = v - (uint64_t)((__int128)(int64_t)(v - se->vruntime) * old / w);
	se->deadline = v + (uint64_t)((__int128)(int64_t)(se->deadline - v) * old / w);
	rq->fair_weight += (uint64_t)w - old;
	se->weight = w;
	if (in_tree)
		enqueue_tree(rq, se);
	else
		se->prot_deadline = se->deadline;
}

static uint64_t next_event_fair(const struct sched *s, const struct sched_rq *rq)
{
	struct sched_entity *curr = fair_curr(rq);
	uint64_t vleft;

	(void)s;
	if (!curr || rq->nr_fair < 2)
		return UINT64_MAX;
	if (!time_before64(curr->vruntime, curr->deadline))
		return rq->clock;
	vleft = curr->deadline - curr->vruntime;
	return rq->clock + (uint64_t)(((unsigned __int128)vleft * curr->weight + 1023) >> 10);
}

const struct sched_class fair_sched_class = {
	.name = "fair",
	.enqueue = enqueue_fair,
	.dequeue = dequeue_fair,
	.pick = pick_fair,
	.put_prev = put_prev_fair,
	.set_next = set_next_fair,
	.update_curr = update_curr_fair,
	.tick = tick_fair,
	.yield = yield_fair,
	.wakeup_preempt = wakeup_preempt_fair,
	.select_cpu = select_cpu_fair,
	.next_event = next_event_fair,
};
