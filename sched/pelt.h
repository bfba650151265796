/* SPDX-License-Identifier: MIT */
/*
 * PELT arithmetic (kernel/sched/pelt.c, rules 21-23), inline: every tick
 * updates each busy pCPU and its running entity, so this is the engine's
 * hottest code. Included by sched/internal.h only; not part of the API.
 *
 * Time is cut in 1024-us periods (1024 ns units inside a period); a
 * contribution made n periods ago weighs y^n with y^32 = 0.5, so the
 * geometric series saturates at LOAD_AVG_MAX = 47742.
 *
 * Invariance (rule 22): running and runnable contributions are scaled by
 * the pCPU's performance level / 1024 (which is capacity x frequency
 * scale in the kernel's cap_scale(cap_scale(delta, cap), freq) terms), so
 * a workload shows the same util on a big pCPU and on a slow one as long
 * as it is not saturating it. load_avg is not scaled: it is weighted
 * runnable time, and balancing normalizes it by capacity itself.
 */
#ifndef CAPVISOR_SCHED_PELT_H
#define CAPVISOR_SCHED_PELT_H

#include <stdbool.h>
#include <stdint.h>

struct sched_pelt {
	uint64_t last_update;	/* ns, multiple of 1024 ns */
	uint64_t load_sum;
	uint64_t runnable_sum;
	uint64_t util_sum;
	uint32_t period_contrib;	/* 1024-ns units into the current period */
	/*
	 * The averages move only when a period boundary is crossed (as in
	 * the kernel). util_avg, which placement and performance selection
	 * read all the time, is computed then; load and runnable, which
	 * mostly only statistics read, keep their sums and divider of that
	 * moment and are divided when read (pelt_load_avg(),
	 * pelt_runnable_avg()): the same values, two divisions fewer per
	 * update of an entity.
	 */
	uint32_t avg_contrib;
	uint64_t load_at_avg, runnable_at_avg;
	unsigned long util_avg;
};

#define LOAD_AVG_PERIOD	32
#define LOAD_AVG_MAX	47742
#define PELT_DIVIDER(contrib)	(LOAD_AVG_MAX - 1024 + (contrib))

/* pelt.c: y^n x 2^32 for n = 0..31, and 2^64 / PELT_DIVIDER(c) for c = 0..1023. */
extern const uint32_t pelt_y_inv[LOAD_AVG_PERIOD];
extern const uint64_t pelt_recip[1024];

/* y^periods (periods >= 1) as a shift and a 32-bit fixed-point factor. */
struct pelt_decay_factor {
	unsigned int shift;	/* 64: everything decays to zero */
	uint32_t mul;
};

static inline struct pelt_decay_factor pelt_decay_for(uint64_t periods)
{
	struct pelt_decay_factor d = { 64, 0 };

	if (periods <= LOAD_AVG_PERIOD * 63) {
		d.shift = (unsigned int)(periods / LOAD_AVG_PERIOD);
		d.mul = pelt_y_inv[periods % LOAD_AVG_PERIOD];
	}
	return d;
}

/* One 64x64->128 multiply: exact for every val, no branch on its size. */
static inline uint64_t pelt_decay_apply(uint64_t val, struct pelt_decay_factor d)
{
	if (d.shift >= 64)
		return 0;
	return (uint64_t)(((unsigned __int128)(val >> d.shift) * d.mul) >> 32);
}

/*
 * x / PELT_DIVIDER(c) with the reciprocal table: the 128-bit product
 * underestimates the quotient by at most one (the reciprocal is short of
 * 2^64 / d by less than one, so the error is below x (1 + 1/d) / 2^64 < 1
 * for any x < 2^64 - 2^49, far above any PELT sum), fixed up with the
 * 64-bit remainder, without a branch.
 */
static inline uint64_t pelt_div(uint64_t x, uint32_t c)
{
	uint64_t d = PELT_DIVIDER(c);
	uint64_t q = (uint64_t)(((unsigned __int128)x * pelt_recip[c]) >> 64);

	return q + (x - q * d >= d);
}

/*
 * The contribution of a segment that finishes the current period (d1),
 * spans periods - 1 full ones and starts a new one (d3), all decayed to
 * now by d = y^periods: d1 y^p + 1024 (y + ... + y^(p-1)) + d3.
 */
static inline __attribute__((always_inline)) uint64_t
pelt_span_contrib(struct pelt_decay_factor d, uint32_t d1, uint32_t d3)
{
	return pelt_decay_apply(d1, d) + (LOAD_AVG_MAX - pelt_decay_apply(LOAD_AVG_MAX, d) - 1024) +
	       d3;
}

/* The three sums of *sa decayed by d. */
static inline __attribute__((always_inline)) void
pelt_decay_sums(struct sched_pelt *sa, struct pelt_decay_factor d)
{
	sa->load_sum = pelt_decay_apply(sa->load_sum, d);
	sa->runnable_sum = pelt_decay_apply(sa->runnable_sum, d);
	sa->util_sum = pelt_decay_apply(sa->util_sum, d);
}

/*
 * A period boundary was crossed and contrib 1024-ns units of the new one
 * are in the sums: util_avg now, load and runnable when read (see struct
 * sched_pelt).
 */
static inline __attribute__((always_inline)) void
pelt_move_avgs(struct sched_pelt *sa, uint32_t contrib)
{
	sa->avg_contrib = contrib;
	sa->load_at_avg = sa->load_sum;
	sa->runnable_at_avg = sa->runnable_sum;
	sa->util_avg = (unsigned long)pelt_div(sa->util_sum, contrib);
}

/*
 * Bring *sa up to `now`: during [last_update, now) the thing was running
 * (`running`), runnable with `runnable` entities, with load weight `load`,
 * on a pCPU at performance `level` (contributions scaled by level/1024,
 * rule 22). Always inlined: the hot callers pass constants (a running
 * entity: load = weight, runnable = 1, running) and the tests on them
 * vanish.
 */
static inline __attribute__((always_inline)) void
pelt_update(struct sched_pelt *sa, uint64_t now, unsigned long load, unsigned long runnable,
	    bool running, unsigned int level)
{
	uint64_t delta, periods, contrib, scaled;

	if (now - sa->last_update < 1024)	/* most calls: nothing to do */
		return;
	if ((int64_t)(now - sa->last_update) < 0) {
		sa->last_update = now;
		return;
	}
	delta = (now - sa->last_update) >> 10;
	sa->last_update += delta << 10;

	contrib = delta;
	delta += sa->period_contrib;
	periods = delta / 1024;
	if (periods) {
		uint32_t d1 = 1024 - sa->period_contrib;

		struct pelt_decay_factor d = pelt_decay_for(periods);

		delta %= 1024;
		pelt_decay_sums(sa, d);
		/* Used below only when something is added. */
		contrib = pelt_span_contrib(d, d1, (uint32_t)delta);
	}
	sa->period_contrib = (uint32_t)delta;

	/* (contrib << SCHED_CAPACITY_SHIFT) x level / 1024, without rounding loss. */
	scaled = contrib * level;
	if (load)
		sa->load_sum += (uint64_t)load * contrib;
	if (runnable)
		sa->runnable_sum += (uint64_t)runnable * scaled;
	if (running)
		sa->util_sum += scaled;

	/* Averages move only when a period boundary was crossed (as in the kernel). */
	if (periods)
		pelt_move_avgs(sa, (uint32_t)delta);
}

/*
 * The tick's two updates of a busy pCPU, its own series `a` (load a_load,
 * a_runnable runnable) and its running entity's `b` (load b_load, one
 * runnable), both running, when they were last updated at the same point
 * (same last_update and period_contrib, the common case): exactly what
 * pelt_update() does to each, with the period arithmetic done once.
 */
static inline __attribute__((always_inline)) void
pelt_update_running_pair(struct sched_pelt *a, unsigned long a_load, unsigned long a_runnable,
			 struct sched_pelt *b, unsigned long b_load, uint64_t now, unsigned int level)
{
	uint64_t delta, periods, contrib, scaled;

	if (now - a->last_update < 1024)
		return;
	if ((int64_t)(now - a->last_update) < 0) {
		a->last_update = b->last_update = now;
		return;
	}
	delta = (now - a->last_update) >> 10;
	a->last_update += delta << 10;
	b->last_update = a->last_update;

	contrib = delta;
	delta += a->period_contrib;
	periods = delta / 1024;
	if (periods) {
		struct pelt_decay_factor d = pelt_decay_for(periods);
		uint32_t d1 = 1024 - a->period_contrib;

		delta %= 1024;
		pelt_decay_sums(a, d);
		pelt_decay_sums(b, d);
		contrib = pelt_span_contrib(d, d1, (uint32_t)delta);
	}
	a->period_contrib = b->period_contrib = (uint32_t)delta;

	scaled = contrib * level;
	a->load_sum += (uint64_t)a_load * contrib;
	a->runnable_sum += (uint64_t)a_runnable * scaled;
	a->util_sum += scaled;
	b->load_sum += (uint64_t)b_load * contrib;
	b->runnable_sum += scaled;
	b->util_sum += scaled;

	if (periods) {
		pelt_move_avgs(a, (uint32_t)delta);
		pelt_move_avgs(b, (uint32_t)delta);
	}
}

/* load_avg and runnable_avg as of the last period boundary (see struct sched_pelt). */
static inline unsigned long pelt_load_avg(const struct sched_pelt *sa)
{
	return (unsigned long)pelt_div(sa->load_at_avg, sa->avg_contrib);
}

static inline unsigned long pelt_runnable_avg(const struct sched_pelt *sa)
{
	return (unsigned long)pelt_div(sa->runnable_at_avg, sa->avg_contrib);
}

/*
 * util_avg of *sa as pelt_update() would leave it at `now`, without
 * changing *sa: only the util series is carried (1 decay and 1 division
 * instead of 3 each, no copy). `running` and `level` as for pelt_update().
 */
static inline unsigned long pelt_util_at(const struct sched_pelt *sa, uint64_t now, bool running,
					 unsigned int level)
{
	struct pelt_decay_factor d;
	uint64_t delta, periods, sum;

	if (now - sa->last_update < 1024 || (int64_t)(now - sa->last_update) < 0)
		return sa->util_avg;
	delta = ((now - sa->last_update) >> 10) + sa->period_contrib;
	periods = delta / 1024;
	if (!periods)
		return sa->util_avg;	/* averages move only at period boundaries */
	delta %= 1024;
	d = pelt_decay_for(periods);
	sum = pelt_decay_apply(sa->util_sum, d);
	if (running)
		sum += pelt_span_contrib(d, 1024 - sa->period_contrib, (uint32_t)delta) * level;
	return (unsigned long)pelt_div(sum, (uint32_t)delta);
}

/* val x y^periods. */
static inline uint64_t pelt_decay(uint64_t val, uint64_t periods)
{
	return periods ? pelt_decay_apply(val, pelt_decay_for(periods)) : val;
}

#endif
