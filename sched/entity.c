// SPDX-License-Identifier: MIT
/*
 * Entities: creation, removal and the live setters (weight, clamps,
 * reservation, affinity, guest performance request). Every setter
 * validates first and changes nothing on error.
 */
#include "sched/internal.h"

#include <stdlib.h>

/* sched_prio_to_weight: nice -20..19, about x1.25 per step (rule 1). */
static const uint32_t prio_to_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
	1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
	110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};

uint32_t sched_nice_to_weight(int nice)
{
	if (nice < -20 || nice > 19)
		return 0;
	return prio_to_weight[nice + 20];
}

void sched_entity_params_init(struct sched_entity_params *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	if (name)
		snprintf(p->name, sizeof(p->name), "%s", name);
	p->uclamp_max = SCHED_CAPACITY_SCALE;
	p->group = SCHED_NONE;
}

static int check_weight(uint32_t w, char *err, size_t errlen)
{
	if (w < SCHED_WEIGHT_MIN || w > SCHED_WEIGHT_MAX)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "weight: %u out of range %u..%u", w, SCHED_WEIGHT_MIN,
				  SCHED_WEIGHT_MAX);
	return 0;
}

static int check_uclamp(unsigned int min, unsigned int max, char *err, size_t errlen)
{
	if (max > SCHED_CAPACITY_SCALE)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "uclamp.max: %u out of range 0..1024", max);
	if (min > max)
		return sched_errf(err, errlen, SCHED_E_INVAL,
				  "uclamp.min: %u above uclamp.max %u", min, max);
	return 0;
}

static int make_allowed(const struct sched *s, const struct sched_cpumask *mask,
			struct sched_cpumask *allowed, char *err, size_t errlen)
{
	if (!mask || sched_cpumask_empty(mask)) {
		*allowed = s->all_cpus;
		return 0;
	}
	for (unsigned int i = 0; i < SCHED_MAX_CPUS / 64; i++)
		allowed->bits[i] = mask->bits[i] & s->all_cpus.bits[i];
	if (sched_cpumask_empty(allowed))
		return sched_errf(err, errlen, SCHED_E_AFFINITY,
				  "affinity: selects none of the %u pCPUs", s->nr_cpus);
	return 0;
}

/* The group of a new entity exists and has room for its reservation. */
static int check_group(const struct sched *s, const struct sched_entity_params *p,
		       const struct dl_plan *plan, char *err, size_t errlen)
{
	struct sched_group_stats st;

	if (p->group == SCHED_NONE)
		return 0;
	if (sched_group_stats(s, p->group, &st))
		return sched_errf(err, errlen, SCHED_E_NOENT, "group: no group %d", p->group);
	if (p->dl.runtime_ns)
		return group_check_dl(s, p->group, NULL, &p->dl, (unsigned int)plan->cpu, err,
				      errlen);
	return 0;
}

static int alloc_slot(struct sched *s)
{
	struct sched_entity **n;
	struct lag_ent *scratch;
	int *order;
	unsigned int nr, old = s->nr_ent_slots;

	for (unsigned int i = 0; i < s->nr_ent_slots; i++)
		if (!s->ent[i])
			return (int)i;
	nr = s->nr_ent_slots ? 2 * s->nr_ent_slots : 16;
	n = realloc(s->ent, nr * sizeof(*n));
	if (!n)
		return -SCHED_E_NOMEM;
	memset(n + s->nr_ent_slots, 0, (nr - s->nr_ent_slots) * sizeof(*n));
	s->ent = n;
	scratch = realloc(s->lag_ents, nr * fair_lag_scratch_size());
	if (!scratch)
		return -SCHED_E_NOMEM;	/* the larger ent[] is harmless */
	s->lag_ents = scratch;
	order = realloc(s->lag_order, nr * sizeof(*order));
	if (!order)
		return -SCHED_E_NOMEM;
	s->lag_order = order;
	s->nr_ent_slots = nr;
	return (int)old;
}

static int check_params(struct sched *s, const struct sched_entity_params *p, uint32_t *weight,
			struct sched_cpumask *allowed, struct dl_plan *plan, char *err,
			size_t errlen)
{
	int ret;

	if (!memchr(p->name, '\0', sizeof(p->name)))
		return sched_errf(err, errlen, SCHED_E_INVAL, "name: longer than %d characters",
				  SCHED_NAME_MAX - 1);
	if (p->weight) {
		*weight = p->weight;
	} else {
		*weight = sched_nice_to_weight(p->nice);
		if (!*weight)
			return sched_errf(err, errlen, SCHED_E_INVAL,
					  "nice: %d out of range -20..19", p->nice);
	}
	ret = check_weight(*weight, err, errlen);
	if (!ret)
		ret = check_uclamp(p->uclamp_min, p->uclamp_max, err, errlen);
	if (!ret)
		ret = make_allowed(s, &p->affinity, allowed, err, errlen);
	if (!ret && p->dl.runtime_ns) {
		ret = dl_check_params(&p->dl, err, errlen);
		if (!ret)
			ret = dl_admit(s, NULL, &p->dl, allowed, plan, err, errlen);
	}
	return ret;
}

int sched_entity_add(struct sched *s, const struct sched_entity_params *p, uint64_t now,
		     char *err, size_t errlen)
{
	struct dl_plan plan = { -1, 0, NULL };
	struct sched_cpumask allowed;
	struct sched_entity *se;
	uint32_t weight = 0;
	int id, ret;

	if (!p)
		return sched_errf(err, errlen, SCHED_E_INVAL, "params: missing");
	now = engine_now(s, now);
	ret = check_params(s, p, &weight, &allowed, &plan, err, errlen);
	if (!ret)
		ret = check_group(s, p, &plan, err, errlen);
	if (ret) {
		dl_plan_free(&plan);
		return ret;
	}
	id = alloc_slot(s);
	se = id < 0 ? NULL : sched_zalloc_aligned(sizeof(*se));
	if (!se) {
		dl_plan_free(&plan);
		return sched_errf(err, errlen, SCHED_E_NOMEM, "out of memory");
	}
	se->id = id;
	memcpy(se->name, p->name, sizeof(se->name));
	se->class = &fair_sched_class;
	se->state = SCHED_BLOCKED;
	se->cpu = -1;
	se->dl_cpu = -1;
	se->weight = weight;
	se->own_weight = weight;
	se->group = SCHED_NONE;
	se->affinity = p->affinity;
	se->allowed = allowed;
	se->new_entity = true;
	se->slice = s->cfg.slice_ns;
	slist_init(&se->rq_link);
	slist_init(&se->dl_link);
	slist_init(&se->cap_link);
	slist_init(&se->capped_link);
	tnode_init(&se->run_node, (uint32_t)id);
	tnode_init(&se->dl_node, (uint32_t)id);
	se->uc_req[UCLAMP_MIN] = p->uclamp_min;
	se->uc_req[UCLAMP_MAX] = p->uclamp_max;
	uclamp_update_eff(se);
	if (p->uclamp_min || p->uclamp_max != SCHED_CAPACITY_SCALE)
		uclamp_enable(s);
	se->pelt.last_update = now;
	s->ent[id] = se;
	s->lag_order_dirty = true;
	if (p->dl.runtime_ns) {
		dl_plan_commit(s, &plan, now);
		dl_set_params(s, se, &p->dl, (unsigned int)plan.cpu);
	}
	if (p->group != SCHED_NONE)
		group_entity_join(s, se, p->group);
	if (p->runnable) {
		se->wake_time = now;
		se->wake_pending = true;
		sched_activate(s, se, ENQ_INITIAL, now);
	}
	if (s->grp)
		group_update_weights(s, now);	/* its share, its siblings', the scale */
	perf_kick(s, now);
	return id;
}

/*
 * Take se off its runqueue (or out of throttling) before a class or
 * placement change. Returns whether it wanted to run.
 */
static bool take_off(struct sched *s, struct sched_entity *se, uint64_t now)
{
	struct sched_rq *rq;

	if (se->state == SCHED_THROTTLED || se->dl_throttled || se->cap_throttled) {
		bool wanted = se->state == SCHED_THROTTLED;

		se->st.throttled_ns += now - se->throttle_start;
		se->dl_throttled = false;
		if (se->cap_throttled)
			slist_del(&se->cap_link);
		se->cap_throttled = false;
		se->state = SCHED_BLOCKED;
		return wanted;
	}
	if (!se->on_rq)
		return false;
	rq = &s->rq[se->cpu];
	update_rq_clock(s, rq, now);
	dequeue_entity(s, rq, se, DEQ_MIGRATE, now);
	se->state = SCHED_BLOCKED;
	if (rq->curr == se)
		schedule_rq(s, rq, now);
	return true;
}

int sched_entity_remove(struct sched *s, int id, uint64_t now)
{
	struct sched_entity *se = sched_ent(s, id);

	if (!se)
		return -SCHED_E_NOENT;
	now = engine_now(s, now);
	take_off(s, se, now);
	dl_clear_params(s, se);
	s->ent[id] = NULL;
	if (se->group != SCHED_NONE) {
		group_entity_leave(s, se);
		group_update_weights(s, now);	/* its siblings' shares grow */
	}
	s->lag_order_dirty = true;
	free(se);
	return 0;
}

int sched_set_weight(struct sched *s, int id, uint32_t weight, uint64_t now)
{
	struct sched_entity *se = sched_ent(s, id);
	struct sched_rq *rq;

	if (!se)
		return -SCHED_E_NOENT;
	if (check_weight(weight, NULL, 0))
		return -SCHED_E_INVAL;
	now = engine_now(s, now);
	s->lag_order_dirty = true;
	se->own_weight = weight;
	if (s->grp) {	/* its share of its group changes, and its siblings'; the scale */
		group_update_weights(s, now);
		return 0;
	}
	if (!se->on_rq || dl_entity(se)) {
		if (!dl_entity(se))
			reweight_fair(s, NULL, se, weight);
		se->weight = weight;
		return 0;
	}
	rq = &s->rq[se->cpu];
	update_rq_clock(s, rq, now);
	reweight_fair(s, rq, se, weight);
	resched_rq(rq);
	schedule_rq(s, rq, now);
	return 0;
}

/* Re-count se in its rq's buckets after its effective clamps changed. */
static void uclamp_requeue(struct sched *s, struct sched_entity *se, uint64_t now)
{
	struct sched_rq *rq;

	if (!se->on_rq) {
		uclamp_update_eff(se);
		return;
	}
	rq = &s->rq[se->cpu];
	update_rq_clock(s, rq, now);
	if (se->uc_active)
		uclamp_rq_dec(s, rq, se);
	uclamp_update_eff(se);
	if (uclamp_is_used(s))
		uclamp_rq_inc(s, rq, se);
	update_misfit(s, rq);
	perf_kick(s, now);
}

int sched_set_uclamp(struct sched *s, int id, unsigned int min, unsigned int max, uint64_t now,
		     char *err, size_t errlen)
{
	struct sched_entity *se = sched_ent(s, id);
	int ret;

	if (!se)
		return sched_errf(err, errlen, SCHED_E_NOENT, "entity %d: no such entity", id);
	ret = check_uclamp(min, max, err, errlen);
	if (ret)
		return ret;
	now = engine_now(s, now);
	uclamp_enable(s);
	se->uc_req[UCLAMP_MIN] = min;
	se->uc_req[UCLAMP_MAX] = max;
	uclamp_requeue(s, se, now);
	return 0;
}

int sched_set_perf_request(struct sched *s, int id, unsigned int level, uint64_t now)
{
	struct sched_entity *se = sched_ent(s, id);

	if (!se)
		return -SCHED_E_NOENT;
	if (level > SCHED_CAPACITY_SCALE)
		return -SCHED_E_INVAL;
	now = engine_now(s, now);
	uclamp_enable(s);
	se->perf_request = level;
	uclamp_requeue(s, se, now);
	return level ? (int)se->uc_eff[UCLAMP_MIN] : 0;
}

int sched_set_reservation(struct sched *s, int id, const struct sched_dl_params *dl,
			  uint64_t now, char *err, size_t errlen)
{
	struct sched_entity *se = sched_ent(s, id);
	struct dl_plan plan = { -1, 0, NULL };
	bool wanted;
	int ret;

	if (!se)
		return sched_errf(err, errlen, SCHED_E_NOENT, "entity %d: no such entity", id);
	if (dl && dl->runtime_ns && se->cap_period)
		return sched_errf(err, errlen, SCHED_E_CLASS,
				  "reservation: entity %d has a cap; a reservation is bounded by its "
				  "runtime, remove the cap first", id);
	if (dl && dl->runtime_ns) {
		ret = dl_check_params(dl, err, errlen);
		if (!ret)
			ret = dl_admit(s, se, dl, &se->allowed, &plan, err, errlen);
		if (!ret && se->group != SCHED_NONE)
			ret = group_check_dl(s, se->group, se, dl, (unsigned int)plan.cpu, err,
					     errlen);
		if (ret) {
			dl_plan_free(&plan);
			return ret;
		}
	} else if (!dl_entity(se)) {
		return 0;
	}
	now = engine_now(s, now);
	wanted = take_off(s, se, now);
	if (dl && dl->runtime_ns) {
		dl_plan_commit(s, &plan, now);
		dl_set_params(s, se, dl, (unsigned int)plan.cpu);
	} else {
		dl_clear_params(s, se);
		se->vlag = 0;
	}
	if (wanted)
		sched_activate(s, se, ENQ_INITIAL, now);
	group_update_weights(s, now);	/* it joined or left its groups' fair shares */
	perf_kick(s, now);
	return 0;
}

int sched_set_affinity(struct sched *s, int id, const struct sched_cpumask *mask, uint64_t now,
		       char *err, size_t errlen)
{
	struct sched_entity *se = sched_ent(s, id);
	struct dl_plan plan = { -1, 0, NULL };
	struct sched_cpumask allowed;
	bool wanted;
	int ret;

	if (!se)
		return sched_errf(err, errlen, SCHED_E_NOENT, "entity %d: no such entity", id);
	ret = make_allowed(s, mask, &allowed, err, errlen);
	if (!ret && dl_entity(se))
		ret = dl_admit(s, se, &se->dl, &allowed, &plan, err, errlen);
	/* on a pCPU of another capacity it needs another share of a group cap */
	if (!ret && dl_entity(se) && se->group != SCHED_NONE)
		ret = group_check_dl(s, se->group, se, &se->dl, (unsigned int)plan.cpu, err, errlen);
	if (ret) {
		dl_plan_free(&plan);
		return ret;
	}
	now = engine_now(s, now);
	if (mask)
		se->affinity = *mask;
	else
		sched_cpumask_clear(&se->affinity);
	se->allowed = allowed;
	if (dl_entity(se)) {
		dl_plan_commit(s, &plan, now);
		dl_move(s, se, (unsigned int)plan.cpu, now);
		perf_kick(s, now);
		return 0;
	}
	/*
	 * Its fluid share was solved for the old pCPUs: none until the next
	 * balance solves it again (the misfit balance keeps an entity whose
	 * share is its whole pCPU where it is, and pinned to a little pCPU
	 * that was all of its share).
	 */
	se->lag_tracked = false;
	if (se->cpu < 0 || sched_cpumask_test(&allowed, (unsigned int)se->cpu))
		return 0;
	if (se->on_rq) {
		wanted = take_off(s, se, now);
		if (wanted)
			sched_activate(s, se, ENQ_MIGRATED, now);
	} else {
		unsigned int cpu = se->class->select_cpu(s, se);

		migrate_entity(s, se, cpu, SCHED_MIGRATE_AFFINITY, now);
	}
	return 0;
}

int sched_entity_info(const struct sched *s, int id, struct sched_entity_info *out)
{
	const struct sched_entity *se = sched_ent(s, id);

	if (!se || !out)
		return -SCHED_E_NOENT;
	memset(out, 0, sizeof(*out));
	memcpy(out->name, se->name, sizeof(out->name));
	out->state = se->state;
	out->cpu = se->cpu;
	out->deadline = dl_entity(se);
	out->dl_cpu = se->dl_cpu;
	out->weight = se->own_weight;
	out->eff_weight = se->weight;
	out->group = se->group;
	out->uclamp_min = se->uc_req[UCLAMP_MIN];
	out->uclamp_max = se->uc_req[UCLAMP_MAX];
	out->perf_request = se->perf_request;
	out->dl = se->dl;
	out->cap_quota_ns = se->cap_quota;
	out->cap_period_ns = se->cap_period;
	out->affinity = se->affinity;
	return 0;
}
