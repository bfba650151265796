// SPDX-License-Identifier: MIT
/*
 * The supply a pCPU really delivers to its reservations, and the EDF test
 * admission and the performance selection apply to it (docs/sched.md,
 * "Reservations that are kept", "The supply of a duty-cycled pCPU").
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
