// SPDX-License-Identifier: MIT
/*
 * Deadline admission: partitioned EDF. Every admitted reservation is
 * assigned to one pCPU and stays there; a pCPU's reserved density (the sum
 * of runtime/deadline of its reservations, x 1024/capacity) stays within
 * the limit (cfg.dl_limit_permille). EDF on one processor meets every
 * deadline of constant-bandwidth servers whose densities sum to at most 1
 * of its speed, and perf.c keeps each pCPU's level high enough that the
 * sum is at most the limit of the capacity it delivers (docs/sched/reservations.md).
 *
 * A new or changed reservation first tries the pCPUs of its affinity in
 * the placement order (its current pCPU, then capacity ascending, then
 * id), everything else staying put. If none has room, every reservation of
 * the host is re-packed: pinned ones first, then by density, a greedy pass
 * that keeps each where it still fits (else best fit), then worst fit by
 * density descending, then a depth-first search, exact within
 * DL_REPACK_MAX_WORK; only then is the request refused. Nothing changes until the caller commits the plan.
 */
#include "sched/internal.h"

#include <stdlib.h>

/*
 * pCPUs the re-packing search may look at (candidates scanned plus
 * placements tried) before it gives up: 1-3 ms on the development hosts
 * (bench/bench_dl_admit.c), which bounds how long an admission holds the
 * dispatcher's lock.
 */
#define DL_REPACK_MAX_WORK	1000000

enum { REPACK_NONE = 1, REPACK_GAVE_UP = 2 };	/* repack() results besides 0 and errors */

struct dl_item {
	struct sched_entity *se;	/* NULL: the reservation being admitted */
	const struct sched_cpumask *allowed;
	uint64_t density;		/* the least of dens[]: a bound for pruning */
	uint64_t dens[SCHED_MAX_CLUSTERS];	/* supply density per cluster, or DL_NO_FIT */
	int cur;			/* pCPU it holds now, -1 if none */
	int cpu;			/* pCPU in the plan */
};

struct dl_pack {
	struct dl_item *item;
	unsigned int nr;
	unsigned int order[SCHED_MAX_CPUS], nr_order;
	unsigned int cls[SCHED_MAX_CPUS];	/* first pCPU interchangeable with this one */
	unsigned int cl[SCHED_MAX_CPUS];	/* cluster of each pCPU */
	uint64_t blackout[SCHED_MAX_CLUSTERS];	/* at the cluster's top level */
	uint64_t room[SCHED_MAX_CPUS], load[SCHED_MAX_CPUS];
	uint64_t free_total;			/* sum of room - load */
	uint64_t *rest;				/* rest[i]: density of items i.. */
	uint64_t *empty_tried;			/* per item: classes tried while empty */
	uint16_t *cand;				/* per item: its candidate pCPUs */
	unsigned long work;			/* towards DL_REPACK_MAX_WORK */
};

/* What a reservation needs of each cluster's pCPUs at their top level (dl_supply.c). */
static void item_fill(const struct sched *s, const struct dl_pack *p, struct dl_item *it,
		      const struct sched_dl_params *dl)
{
	it->density = DL_NO_FIT;
	for (unsigned int ci = 0; ci < s->nr_clusters; ci++) {
		it->dens[ci] = dl_supply_density(dl, p->blackout[ci]);
		if (it->dens[ci] < it->density)
			it->density = it->dens[ci];
	}
}

static inline uint64_t dens_on(const struct dl_pack *p, const struct dl_item *it,
			       unsigned int cpu)
{
	return it->dens[p->cl[cpu]];
}

/* Item it fits on cpu besides what the plan has there. */
static inline bool fits_on(const struct dl_pack *p, const struct dl_item *it, unsigned int cpu)
{
	uint64_t d = dens_on(p, it, cpu);

	return d != DL_NO_FIT && p->load[cpu] <= p->room[cpu] && d <= p->room[cpu] - p->load[cpu];
}

static bool supply_continuous(const struct sched *s)
{
	return !s->cfg.dl_supply_window_ns && !s->cfg.dl_supply_latency_ns;
}

static void fmt_bw(char *buf, size_t len, uint64_t bw)
{
	uint64_t milli = (bw * 1000 + BW_UNIT / 2) >> BW_SHIFT;

	snprintf(buf, len, "%llu.%03llu", (unsigned long long)(milli / 1000),
		 (unsigned long long)(milli % 1000));
}

/* Capacity ascending, then id: small pCPUs first keeps big ones for what only they can hold. */
static void build_order(const struct sched *s, unsigned int *order, unsigned int *nr)
{
	unsigned int n = 0;

	for (unsigned int ci = 0; ci < s->nr_clusters; ci++)
		for (unsigned int k = 0; k < s->cluster[ci].desc.nr_cpus; k++)
			order[n++] = s->cluster[ci].first_cpu + k;
	for (unsigned int i = 1; i < n; i++) {
		unsigned int c = order[i], j = i;

		while (j && (s->rq[order[j - 1]].capacity > s->rq[c].capacity ||
			     (s->rq[order[j - 1]].capacity == s->rq[c].capacity && order[j - 1] > c))) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = c;
	}
	*nr = n;
}

/* Supply density already held on each pCPU, without `skip` (the entity being changed). */
static void current_loads(const struct sched *s, const struct sched_entity *skip, uint64_t *load)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		load[cpu] = s->rq[cpu].dl_supply_load;
	if (skip && dl_entity(skip) && skip->dl_cpu >= 0) {
		const struct sched_rq *rq = &s->rq[skip->dl_cpu];

		load[skip->dl_cpu] = dl_rq_supply_load(s, rq, skip, rq->capacity);
	}
}

/* ------------------------------------------------------------ first fit */

static int first_fit(const struct dl_pack *p, const struct dl_item *it, int cur)
{
	if (cur >= 0 && sched_cpumask_test(it->allowed, (unsigned int)cur) &&
	    fits_on(p, it, (unsigned int)cur))
		return cur;
	for (unsigned int i = 0; i < p->nr_order; i++) {
		unsigned int cpu = p->order[i];

		if (sched_cpumask_test(it->allowed, cpu) && fits_on(p, it, cpu))
			return (int)cpu;
	}
	return -1;
}

/* ------------------------------------------------------------ re-packing */

static unsigned int mask_weight(const struct sched_cpumask *m)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < SCHED_MAX_CPUS / 64; i++)
		n += (unsigned int)__builtin_popcountll(m->bits[i]);
	return n;
}

/* Pinned first (fewest allowed pCPUs), then largest density: the hardest to place first. */
static int cmp_items(const void *a, const void *b)
{
	const struct dl_item *x = a, *y = b;
	unsigned int nx = mask_weight(x->allowed), ny = mask_weight(y->allowed);

	if (nx != ny)
		return nx < ny ? -1 : 1;
	if (x->density != y->density)
		return x->density > y->density ? -1 : 1;
	if (!x->se || !y->se)
		return x->se ? 1 : -1;
	return x->se->id - y->se->id;
}

/* pCPUs a and b are interchangeable: same capacity, and every item may use both or neither. */
static bool same_class(const struct sched *s, const struct dl_pack *p, unsigned int a,
		       unsigned int b)
{
	if (s->rq[a].capacity != s->rq[b].capacity || p->cl[a] != p->cl[b])
		return false;
	for (unsigned int i = 0; i < p->nr; i++)
		if (sched_cpumask_test(p->item[i].allowed, a) !=
		    sched_cpumask_test(p->item[i].allowed, b))
			return false;
	return true;
}

static void build_classes(const struct sched *s, struct dl_pack *p)
{
	for (unsigned int i = 0; i < p->nr_order; i++) {
		unsigned int c = p->order[i];

		p->cls[c] = c;
		for (unsigned int j = 0; j < i; j++) {
			unsigned int d = p->order[j];

			if (p->cls[d] == d && same_class(s, p, c, d)) {
				p->cls[c] = d;
				break;
			}
		}
	}
}

/* Item it on cpu: its density is added to that pCPU's load and taken off what is free. */
static void item_put(struct dl_pack *p, struct dl_item *it, unsigned int cpu)
{
	uint64_t d = dens_on(p, it, cpu);

	p->load[cpu] += d;
	p->free_total -= d;
	it->cpu = (int)cpu;
}

/* Undo item_put(). */
static void item_take(struct dl_pack *p, struct dl_item *it)
{
	uint64_t d = dens_on(p, it, (unsigned int)it->cpu);

	p->load[it->cpu] -= d;
	p->free_total += d;
	it->cpu = -1;
}

/* Undo the placement of items 0..n-1 (a greedy pass that failed at n). */
static void take_first(struct dl_pack *p, unsigned int n)
{
	while (n-- > 0)
		item_take(p, &p->item[n]);
}

static bool try_place(const struct sched *s, struct dl_pack *p, unsigned int i);

/* Put item i on cpu and go on with the next; undo if that fails. */
static bool place_on(const struct sched *s, struct dl_pack *p, unsigned int i, unsigned int cpu)
{
	p->work++;
	item_put(p, &p->item[i], cpu);
	if (try_place(s, p, i + 1))
		return true;
	item_take(p, &p->item[i]);
	return false;
}

/* An empty pCPU of a class already tried empty at this node leads to the same subtree. */
static bool tried_empty(struct dl_pack *p, unsigned int i, unsigned int cpu)
{
	uint64_t *bits = &p->empty_tried[(size_t)i * (SCHED_MAX_CPUS / 64)];
	unsigned int c = p->cls[cpu];

	if (p->load[cpu])
		return false;
	if (bits[c / 64] & (1ull << (c % 64)))
		return true;
	bits[c / 64] |= 1ull << (c % 64);
	return false;
}

/*
 * The pCPUs item i fits on now, tightest first (best fit: least room left
 * after it), ties in the placement order. Returns how many.
 */
static unsigned int best_fit_candidates(const struct dl_pack *p, unsigned int i, uint16_t *cand)
{
	const struct dl_item *it = &p->item[i];
	unsigned int n = 0;

	for (unsigned int k = 0; k < p->nr_order; k++) {
		unsigned int cpu = p->order[k], j = n;
		uint64_t left;

		if (!sched_cpumask_test(it->allowed, cpu) || !fits_on(p, it, cpu))
			continue;
		left = p->room[cpu] - p->load[cpu] - dens_on(p, it, cpu);
		while (j && p->room[cand[j - 1]] - p->load[cand[j - 1]] -
			    dens_on(p, it, cand[j - 1]) > left) {
			cand[j] = cand[j - 1];
			j--;
		}
		cand[j] = (uint16_t)cpu;
		n++;
	}
	return n;
}

static bool try_place(const struct sched *s, struct dl_pack *p, unsigned int i)
{
	uint16_t *cand = &p->cand[(size_t)i * SCHED_MAX_CPUS];
	unsigned int n;

	if (i == p->nr)
		return true;
	if (p->rest[i] > p->free_total || p->work >= DL_REPACK_MAX_WORK)
		return false;
	p->work += p->nr_order;
	memset(&p->empty_tried[(size_t)i * (SCHED_MAX_CPUS / 64)], 0, SCHED_MAX_CPUS / 8);
	n = best_fit_candidates(p, i, cand);
	for (unsigned int k = 0; k < n; k++) {
		if (tried_empty(p, i, cand[k]))
			continue;
		if (place_on(s, p, i, cand[k]))
			return true;
		if (p->work >= DL_REPACK_MAX_WORK)
			return false;
	}
	return false;
}

/*
 * Every item in order on the pCPU choose() gives it (-1: none). On failure
 * the items placed so far are taken back, so p is as it was.
 */
static bool place_each(struct dl_pack *p, int (*choose)(const struct dl_pack *, unsigned int))
{
	unsigned int i;

	for (i = 0; i < p->nr; i++) {
		int cpu = choose(p, i);

		if (cpu < 0)
			break;
		item_put(p, &p->item[i], (unsigned int)cpu);
	}
	if (i == p->nr)
		return true;
	take_first(p, i);
	return false;
}

/* The pCPU item i holds if it still fits there (no move), else best fit, or -1. */
static int keep_or_best_fit(const struct dl_pack *p, unsigned int i)
{
	const struct dl_item *it = &p->item[i];
	int cpu = it->cur;

	if (cpu >= 0 && sched_cpumask_test(it->allowed, (unsigned int)cpu) &&
	    fits_on(p, it, (unsigned int)cpu))
		return cpu;
	return best_fit_candidates(p, i, p->cand) ? p->cand[0] : -1;
}

/* The cheap pass first: items in order, kept where they fit, else best fit. */
static bool place_keeping(struct dl_pack *p)
{
	return place_each(p, keep_or_best_fit);
}

/* Largest density first, whatever the affinity; ties as cmp_items(). */
static int cmp_density_desc(const void *a, const void *b)
{
	const struct dl_item *x = a, *y = b;

	if (x->density != y->density)
		return x->density > y->density ? -1 : 1;
	return cmp_items(a, b);
}

/* The pCPU item i fits on with the most room left after it, or -1 (ties: placement order). */
static int worst_fit(const struct dl_pack *p, unsigned int i)
{
	const struct dl_item *it = &p->item[i];
	uint64_t best_left = 0;
	int best = -1;

	for (unsigned int k = 0; k < p->nr_order; k++) {
		unsigned int cpu = p->order[k];
		uint64_t left;

		if (!sched_cpumask_test(it->allowed, cpu) || !fits_on(p, it, cpu))
			continue;
		left = p->room[cpu] - p->load[cpu] - dens_on(p, it, cpu);
		if (best < 0 || left > best_left) {
			best = (int)cpu;
			best_left = left;
		}
	}
	return best;
}

/*
 * The second cheap pass: worst fit, largest density first. Sets that fill
 * every pCPU nearly evenly (what a known placement with slack gives) are
 * placed by it where best fit and the search's bound fail. On failure p
 * is as it was, items back in cmp_items() order (rest[] stays valid).
 */
static bool place_worst_fit_decreasing(struct dl_pack *p)
{
	qsort(p->item, p->nr, sizeof(*p->item), cmp_density_desc);
	if (place_each(p, worst_fit))
		return true;
	qsort(p->item, p->nr, sizeof(*p->item), cmp_items);
	return false;
}

static int collect_items(const struct sched *s, struct dl_pack *p, const struct sched_entity *se,
			 const struct dl_item *req)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->nr_ent_slots; i++)
		n += s->ent[i] && s->ent[i] != se && dl_entity(s->ent[i]);
	p->item = calloc(n + 1, sizeof(*p->item));
	p->rest = calloc(n + 2, sizeof(*p->rest));
	p->empty_tried = calloc((size_t)(n + 1) * (SCHED_MAX_CPUS / 64), sizeof(uint64_t));
	p->cand = calloc((size_t)(n + 1) * SCHED_MAX_CPUS, sizeof(uint16_t));
	if (!p->item || !p->rest || !p->empty_tried || !p->cand)
		return -SCHED_E_NOMEM;
	for (unsigned int i = 0; i < s->nr_ent_slots; i++) {
		struct sched_entity *e = s->ent[i];

		if (!e || e == se || !dl_entity(e))
			continue;
		p->item[p->nr] = (struct dl_item){ .se = e, .allowed = &e->allowed,
						   .cur = e->dl_cpu, .cpu = -1 };
		item_fill(s, p, &p->item[p->nr++], &e->dl);
	}
	p->item[p->nr++] = *req;
	qsort(p->item, p->nr, sizeof(*p->item), cmp_items);
	for (unsigned int i = p->nr; i-- > 0;)
		p->rest[i] = p->rest[i + 1] + p->item[i].density;
	return 0;
}

/* Search a placement of every reservation; fills plan on success, else REPACK_*. */
static int repack(const struct sched *s, struct dl_pack *p, const struct sched_entity *se,
		  const struct dl_item *req, struct dl_plan *plan)
{
	int ret = collect_items(s, p, se, req);
	unsigned int nr_moves = 0;

	if (ret)
		return ret;
	p->free_total = 0;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		p->load[cpu] = 0;
		p->free_total += p->room[cpu];
	}
	build_classes(s, p);
	if (!place_keeping(p) && !place_worst_fit_decreasing(p) && !try_place(s, p, 0))
		return p->work >= DL_REPACK_MAX_WORK ? REPACK_GAVE_UP : REPACK_NONE;
	for (unsigned int i = 0; i < p->nr; i++)
		nr_moves += p->item[i].se && p->item[i].cpu != p->item[i].cur;
	plan->moves = calloc(nr_moves ? nr_moves : 1, sizeof(*plan->moves));
	if (!plan->moves)
		return -SCHED_E_NOMEM;
	for (unsigned int i = 0; i < p->nr; i++) {
		const struct dl_item *it = &p->item[i];

		if (!it->se)
			plan->cpu = it->cpu;
		else if (it->cpu != it->cur)
			plan->moves[plan->nr_moves++] = (struct dl_move){ it->se, (unsigned int)it->cpu };
	}
	return 0;
}

/* ------------------------------------------------------------ errors */

/* ", needs X" of the request on cluster ci, when the supply is not continuous. */
static size_t fmt_need(const struct sched *s, const struct dl_pack *p, const struct dl_item *req,
		       unsigned int ci, char *buf, size_t len)
{
	char n[16];

	if (supply_continuous(s))
		return 0;
	if (req->dens[ci] == DL_NO_FIT)
		return (size_t)snprintf(buf, len, ", deadline not above its blackout %llu us",
					(unsigned long long)(p->blackout[ci] / NSEC_PER_USEC));
	fmt_bw(n, sizeof(n), req->dens[ci]);
	return (size_t)snprintf(buf, len, ", blackout %llu us, needs %s",
				(unsigned long long)(p->blackout[ci] / NSEC_PER_USEC), n);
}

/* One entry per cluster of the affinity: its pCPUs, the most free room, the room. */
static void describe_affinity(const struct sched *s, const struct dl_pack *p,
			      const struct dl_item *req, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int ci = 0; ci < s->nr_clusters && off < len; ci++) {
		const struct sched_cluster *c = &s->cluster[ci];
		uint64_t best = 0;
		bool any = false;
		char f[16], r[16];

		for (unsigned int k = 0; k < c->desc.nr_cpus; k++) {
			unsigned int cpu = c->first_cpu + k;
			uint64_t free = p->room[cpu] > p->load[cpu] ? p->room[cpu] - p->load[cpu] : 0;

			if (!sched_cpumask_test(req->allowed, cpu))
				continue;
			if (!any || free > best)
				best = free;
			any = true;
		}
		if (!any)
			continue;
		fmt_bw(f, sizeof(f), best);
		fmt_bw(r, sizeof(r), p->room[c->first_cpu]);
		off += (size_t)snprintf(buf + off, len - off, "%s%s pCPUs %u-%u cap %u: %s free of %s",
					off ? "; " : "", c->desc.name,
					c->first_cpu, c->first_cpu + c->desc.nr_cpus - 1,
					c->desc.capacity, f, r);
		if (off < len)
			off += fmt_need(s, p, req, ci, buf + off, len - off);
	}
}

static int fit_error(const struct sched *s, const struct dl_pack *p, const struct dl_item *req,
		     const struct sched_dl_params *dl, char *err, size_t errlen)
{
	unsigned int best = 0;
	unsigned __int128 need = (unsigned __int128)req->density * SCHED_CAPACITY_SCALE * 1000;
	char d[16], where[400];

	if (!supply_continuous(s)) {
		describe_affinity(s, p, req, where, sizeof(where));
		return sched_errf(err, errlen, SCHED_E_CAPACITY_FIT,
				  "reservation: runtime/deadline %llu/%llu us fits no pCPU of its "
				  "affinity even alone: runtime/(deadline - blackout) must be within "
				  "%u/1000 of capacity, blackout = window %llu us - on-part + latency "
				  "%llu us (%s)",
				  (unsigned long long)(dl->runtime_ns / NSEC_PER_USEC),
				  (unsigned long long)(dl->deadline_ns / NSEC_PER_USEC),
				  s->cfg.dl_limit_permille,
				  (unsigned long long)(s->cfg.dl_supply_window_ns / NSEC_PER_USEC),
				  (unsigned long long)(s->cfg.dl_supply_latency_ns / NSEC_PER_USEC),
				  where);
	}
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_cpumask_test(req->allowed, cpu) && s->rq[cpu].capacity > best)
			best = s->rq[cpu].capacity;
	fmt_bw(d, sizeof(d), req->density);
	return sched_errf(err, errlen, SCHED_E_CAPACITY_FIT,
			  "reservation: density runtime/deadline %llu/%llu us = %s needs a pCPU of "
			  "capacity >= %llu (density x 1024 / limit %u/1000), the largest in its "
			  "affinity has %u",
			  (unsigned long long)(dl->runtime_ns / NSEC_PER_USEC),
			  (unsigned long long)(dl->deadline_ns / NSEC_PER_USEC), d,
			  (unsigned long long)((need + ((unsigned __int128)s->cfg.dl_limit_permille
							<< BW_SHIFT) - 1) /
					       ((unsigned __int128)s->cfg.dl_limit_permille << BW_SHIFT)),
			  s->cfg.dl_limit_permille, best);
}

static int pack_error(const struct sched *s, const struct dl_pack *p, int why,
		      const struct dl_item *req, const struct sched_dl_params *dl, char *err,
		      size_t errlen)
{
	char d[48], where[400];

	if (supply_continuous(s))
		fmt_bw(d, sizeof(d), req->density);
	else
		snprintf(d, sizeof(d), "%llu/%llu us",
			 (unsigned long long)(dl->runtime_ns / NSEC_PER_USEC),
			 (unsigned long long)(dl->deadline_ns / NSEC_PER_USEC));
	describe_affinity(s, p, req, where, sizeof(where));
	return sched_errf(err, errlen, SCHED_E_BANDWIDTH,
			  "reservation: bandwidth: %s%s fits no pCPU within %u/1000 of "
			  "capacity, even re-packing all %u reservations (%s): %s",
			  supply_continuous(s) ? "density " : "runtime/deadline ", d,
			  s->cfg.dl_limit_permille, p->nr,
			  why == REPACK_NONE ? "no solution" : "search bound reached", where);
}

/* ------------------------------------------------------------ entry points */

static bool fits_alone(const struct dl_pack *p, const struct dl_item *req, unsigned int nr_cpus)
{
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)
		if (sched_cpumask_test(req->allowed, cpu) && dens_on(p, req, cpu) <= p->room[cpu])
			return true;
	return false;
}

/* Room, cluster and top-level blackout of every pCPU; the loads held now. */
static void pack_init(const struct sched *s, struct dl_pack *p, const struct sched_entity *se)
{
	build_order(s, p->order, &p->nr_order);
	for (unsigned int ci = 0; ci < s->nr_clusters; ci++)
		p->blackout[ci] = dl_blackout_ns(s, s->cluster[ci].desc.capacity);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		p->room[cpu] = dl_level_room(s, s->rq[cpu].capacity);
		p->cl[cpu] = s->rq[cpu].cluster;
	}
	current_loads(s, se, p->load);
}

int dl_admit(const struct sched *s, const struct sched_entity *se,
	     const struct sched_dl_params *dl, const struct sched_cpumask *allowed,
	     struct dl_plan *plan, char *err, size_t errlen)
{
	struct dl_item req = { .allowed = allowed, .cpu = -1 };
	struct dl_pack *p;
	int ret;

	memset(plan, 0, sizeof(*plan));
	plan->cpu = -1;
	p = calloc(1, sizeof(*p));
	if (!p)
		return sched_errf(err, errlen, SCHED_E_NOMEM, "reservation: out of memory");
	pack_init(s, p, se);
	req.cur = se && dl_entity(se) ? se->dl_cpu : -1;
	item_fill(s, p, &req, dl);
	if (!fits_alone(p, &req, s->nr_cpus)) {
		ret = fit_error(s, p, &req, dl, err, errlen);
		goto out;
	}
	plan->cpu = first_fit(p, &req, req.cur);
	if (plan->cpu >= 0) {
		ret = 0;
		goto out;
	}
	ret = repack(s, p, se, &req, plan);
	if (ret == -SCHED_E_NOMEM)
		ret = sched_errf(err, errlen, SCHED_E_NOMEM, "reservation: out of memory");
	else if (ret) {
		current_loads(s, se, p->load);
		ret = pack_error(s, p, ret, &req, dl, err, errlen);
	}
out:
	if (ret)
		dl_plan_free(plan);
	free(p->item);
	free(p->rest);
	free(p->empty_tried);
	free(p->cand);
	free(p);
	return ret;
}

void dl_plan_free(struct dl_plan *plan)
{
	free(plan->moves);
	plan->moves = NULL;
	plan->nr_moves = 0;
}

/* Move the reservations the plan re-packs; the caller then places its own. */
void dl_plan_commit(struct sched *s, struct dl_plan *plan, uint64_t now)
{
	for (unsigned int i = 0; i < plan->nr_moves; i++)
		dl_move(s, plan->moves[i].se, plan->moves[i].cpu, now);
	dl_plan_free(plan);
}
