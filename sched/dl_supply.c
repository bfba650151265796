// SPDX-License-Identifier: MIT
/*
 * The supply a pCPU really delivers to its reservations, and the EDF test
 * admission and the performance selection apply to it (docs/sched/reservations.md,
 * "The supply of a duty-cycled pCPU").
 *
 * At level P a pCPU runs P x W/1024 (the on-part) at a fixed position in
 * every window of W (cfg.dl_supply_window_ns; the dispatcher's duty cycle),
 * and all it runs may come up to L late (cfg.dl_supply_latency_ns). Its
 * supply over any interval of length t is then at least
 * P/1024 x (t - B) with the blackout B = W - on-part + L: the longest time
 * it may deliver nothing. A reservation (runtime r, deadline D <= period)
 * demands at most r x (t - B)/(D - B) by any t >= D when D > B, so EDF on
 * the pCPU keeps every deadline when the sum of r/(D - B) is at most
 * limit x P/1024. With W = L = 0 that is the density test r/D.
 *
 * Where the phase of the on-parts is known (cfg.dl_supply_charge), a
 * reservation's budget is charged what the supply delivered while it was
 * current, not level/1024 of the time: EDF on the periodic resource, which
 * the test above is about.
 */
#include "sched/internal.h"

uint64_t dl_blackout_ns(const struct sched *s, unsigned int level)
{
	uint64_t w = s->cfg.dl_supply_window_ns, gap = 0;

	/* The on-part is rounded as the dispatcher rounds it (duty_on_ns()). */
	if (w && level < SCHED_CAPACITY_SCALE)
		gap = w - (uint64_t)((unsigned __int128)w * level / SCHED_CAPACITY_SCALE);
	return gap + s->cfg.dl_supply_latency_ns;
}

/* runtime/(deadline - blackout) << BW_SHIFT, rounded up; DL_NO_FIT if deadline <= blackout. */
uint64_t dl_supply_density(const struct sched_dl_params *dl, uint64_t blackout_ns)
{
	unsigned __int128 num = (unsigned __int128)dl->runtime_ns << BW_SHIFT, d;

	if (dl->deadline_ns <= blackout_ns)
		return DL_NO_FIT;
	d = dl->deadline_ns - blackout_ns;
	num = (num + d - 1) / d;
	return num >= DL_NO_FIT ? DL_NO_FIT : (uint64_t)num;
}

/* limit x level/1024 in density units, rounded down. */
uint64_t dl_level_room(const struct sched *s, unsigned int level)
{
	return (uint64_t)(((unsigned __int128)level * BW_UNIT * s->cfg.dl_limit_permille) /
			  (SCHED_CAPACITY_SCALE * 1000ull));
}

/* What the reservations admitted on rq, without skip, need of it at level. */
uint64_t dl_rq_supply_load(const struct sched *s, const struct sched_rq *rq,
			   const struct sched_entity *skip, unsigned int level)
{
	uint64_t blackout = dl_blackout_ns(s, level), sum = 0;

	for (const struct slist *n = rq->dl_assigned.next; n != &rq->dl_assigned; n = n->next) {
		const struct sched_entity *e = slist_entry(n, struct sched_entity, dl_link);
		uint64_t d;

		if (e == skip)
			continue;
		d = dl_supply_density(&e->dl, blackout);
		if (d == DL_NO_FIT || sum + d < sum)
			return DL_NO_FIT;
		sum += d;
	}
	return sum;
}

/*
 * The lowest level 1..capacity at which the test holds for rq's
 * reservations (0 if it has none). The load only falls and the room only
 * grows with the level, so a binary search finds it; admission made sure
 * the capacity passes.
 */
unsigned int dl_needed_level(const struct sched *s, const struct sched_rq *rq)
{
	unsigned int lo = 1, hi = rq->capacity;

	if (slist_empty(&rq->dl_assigned))
		return 0;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (dl_rq_supply_load(s, rq, NULL, mid) <= dl_level_room(s, mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* ------------------------------------------------------------ charging */

static uint64_t on_part_ns(const struct sched *s, unsigned int level)
{
	uint64_t w = s->cfg.dl_supply_window_ns;

	return level >= SCHED_CAPACITY_SCALE ? w :
	       (uint64_t)((unsigned __int128)w * level / SCHED_CAPACITY_SCALE);
}

/*
 * On-time of cpu's on-parts up to t, plus a constant: only differences
 * count. On-parts start at offset + k x W and may cross a multiple of W,
 * so time is shifted to put their starts on multiples of W.
 */
static uint64_t on_before(const struct sched *s, unsigned int cpu, uint64_t on, uint64_t t)
{
	uint64_t w = s->cfg.dl_supply_window_ns;
	uint64_t u = t + w - s->cfg.dl_supply_offset_ns[cpu] % w;

	return u / w * on + (u % w < on ? u % w : on);
}

static bool charge_supply(const struct sched *s)
{
	return s->cfg.dl_supply_charge && s->cfg.dl_supply_window_ns;
}

/* Work (full-capacity ns) rq delivers at level in [t0, t1). */
uint64_t dl_supply_delivered(const struct sched *s, const struct sched_rq *rq, unsigned int level,
			     uint64_t t0, uint64_t t1)
{
	uint64_t on;

	if (!charge_supply(s))
		return ((t1 - t0) * level) >> 10;
	on = on_part_ns(s, level);
	return on_before(s, (unsigned int)rq->cpu, on, t1) -
	       on_before(s, (unsigned int)rq->cpu, on, t0);
}

/* The first time from t0 by which rq has delivered work at level (UINT64_MAX: never). */
uint64_t dl_supply_until(const struct sched *s, const struct sched_rq *rq, unsigned int level,
			 uint64_t t0, uint64_t work)
{
	uint64_t w = s->cfg.dl_supply_window_ns, off, on, target, k, r;

	if (!charge_supply(s))
		return t0 + (work * 1024 + level - 1) / level;
	on = on_part_ns(s, level);
	if (!work)
		return t0;
	if (!on)
		return UINT64_MAX;
	off = s->cfg.dl_supply_offset_ns[rq->cpu] % w;
	target = on_before(s, (unsigned int)rq->cpu, on, t0) + work;
	k = target / on;
	r = target % on;
	/* Back from the shifted time of on_before(). */
	return (r ? k * w + r : (k - 1) * w + on) - (w - off);
}

int sched_set_supply_offset(struct sched *s, unsigned int cpu, uint64_t offset_ns, uint64_t now)
{
	if (cpu >= s->nr_cpus)
		return -SCHED_E_NOENT;
	if (!charge_supply(s))
		return 0;
	/* Only a current reservation's budget depends on the phase. */
	if (s->rq[cpu].curr && dl_entity(s->rq[cpu].curr))
		update_rq_clock(s, &s->rq[cpu], now);
	s->cfg.dl_supply_offset_ns[cpu] = offset_ns % s->cfg.dl_supply_window_ns;
	return 0;
}
