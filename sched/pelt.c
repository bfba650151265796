// SPDX-License-Identifier: MIT
/*
 * Per-entity load tracking (kernel/sched/pelt.c, rules 21-23).
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
#include "sched/internal.h"

/* y^n x 2^32 for n = 0..31, y = 2^(-1/32). */
static const uint32_t pelt_y_inv[LOAD_AVG_PERIOD] = {
	0xffffffff, 0xfa83b2db, 0xf5257d15, 0xefe4b99b, 0xeac0c6e7, 0xe5b906e7, 0xe0ccdeec,
	0xdbfbb797, 0xd744fcca, 0xd2a81d91, 0xce248c15, 0xc9b9bd86, 0xc5672a11, 0xc12c4cca,
	0xbd08a39f, 0xb8fbaf47, 0xb504f333, 0xb123f581, 0xad583eea, 0xa9a15ab4, 0xa5fed6a9,
	0xa2704303, 0x9ef53260, 0x9b8d39b9, 0x9837f051, 0x94f4efa8, 0x91c3d373, 0x8ea4398b,
	0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
};

/* y^periods as a shift and a 32-bit fixed-point factor, applied to many sums. */
struct decay {
	unsigned int shift;	/* 64: everything decays to zero */
	uint32_t mul;
};

static inline struct decay decay_for(uint64_t periods)
{
	struct decay d = { 0, UINT32_MAX };

	if (periods > LOAD_AVG_PERIOD * 63) {
		d.shift = 64;
	} else if (periods) {
		d.shift = (unsigned int)(periods / LOAD_AVG_PERIOD);
		d.mul = pelt_y_inv[periods % LOAD_AVG_PERIOD];
	}
	return d;
}

static inline uint64_t decay_apply(uint64_t val, struct decay d)
{
	if (d.shift >= 64)
		return 0;
	val >>= d.shift;
	if (d.mul == UINT32_MAX && !d.shift)
		return val;	/* no period elapsed */
	if (val <= UINT32_MAX)	/* the usual case: a 64-bit product is enough */
		return (val * d.mul) >> 32;
	return (uint64_t)(((unsigned __int128)val * d.mul) >> 32);
}

/* val x y^periods. */
uint64_t pelt_decay(uint64_t val, uint64_t periods)
{
	return periods ? decay_apply(val, decay_for(periods)) : val;
}

/*
 * Contribution of a segment that finishes the current period (d1), spans
 * `periods - 1` full periods, and starts a new one (d3), all decayed to
 * now: d1 y^p + 1024 (y + ... + y^(p-1)) + d3.
 */
static uint64_t accumulate_segments(struct decay d, uint32_t d1, uint32_t d3)
{
	uint64_t c1 = decay_apply(d1, d);
	uint64_t c2 = LOAD_AVG_MAX - decay_apply(LOAD_AVG_MAX, d) - 1024;

	return c1 + c2 + d3;
}

/*
 * 2^64 / divider for each divider LOAD_AVG_MAX - 1024 + period_contrib
 * (period_contrib 0..1023), computed by the compiler: the averages need
 * no division at run time.
 */
#define PELT_DIV(i)	(LOAD_AVG_MAX - 1024 + (i))
#define RECIP1(i)	(UINT64_MAX / PELT_DIV(i))
#define RECIP4(i)	RECIP1(i), RECIP1((i) + 1), RECIP1((i) + 2), RECIP1((i) + 3)
#define RECIP16(i)	RECIP4(i), RECIP4((i) + 4), RECIP4((i) + 8), RECIP4((i) + 12)
#define RECIP64(i)	RECIP16(i), RECIP16((i) + 16), RECIP16((i) + 32), RECIP16((i) + 48)
#define RECIP256(i)	RECIP64(i), RECIP64((i) + 64), RECIP64((i) + 128), RECIP64((i) + 192)

static const uint64_t pelt_recip[1024] = {
	RECIP256(0), RECIP256(256), RECIP256(512), RECIP256(768),
};

/*
 * x / d with the reciprocal above: the 128-bit product underestimates the
 * quotient by at most one (q x d <= x always), fixed up with the 64-bit
 * remainder.
 */
static inline uint64_t div_recip(uint64_t x, uint64_t d, uint64_t recip)
{
	uint64_t q = (uint64_t)(((unsigned __int128)x * recip) >> 64);
	uint64_t r = x - q * d;

	while (r >= d) {
		q++;
		r -= d;
	}
	return q;
}

void __pelt_update(struct sched_pelt *sa, uint64_t now, unsigned long load,
		 unsigned long runnable, bool running, unsigned int level)
{
	uint64_t delta, periods, contrib, scaled, divider, recip;

	if ((int64_t)(now - sa->last_update) < 0) {
		sa->last_update = now;
		return;
	}
	delta = (now - sa->last_update) >> 10;
	if (!delta)
		return;
	sa->last_update += delta << 10;

	contrib = delta;
	delta += sa->period_contrib;
	periods = delta / 1024;
	if (periods) {
		struct decay d = decay_for(periods);

		sa->load_sum = decay_apply(sa->load_sum, d);
		sa->runnable_sum = decay_apply(sa->runnable_sum, d);
		sa->util_sum = decay_apply(sa->util_sum, d);
		delta %= 1024;
		if (load || runnable || running)
			contrib = accumulate_segments(d, 1024 - sa->period_contrib, (uint32_t)delta);
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
	if (!periods)
		return;
	divider = PELT_DIV(sa->period_contrib);
	recip = pelt_recip[sa->period_contrib];
	sa->load_avg = (unsigned long)div_recip(sa->load_sum, divider, recip);
	sa->runnable_avg = (unsigned long)div_recip(sa->runnable_sum, divider, recip);
	sa->util_avg = (unsigned long)div_recip(sa->util_sum, divider, recip);
}
