/* SPDX-License-Identifier: MIT */
/*
 * A pair of feedback counters as the guest reads them: an activity counter
 * (APERF, CPPC delivered) and its reference (MPERF, CPPC reference).
 *
 * The host's accounting behind them moves in steps (the dispatcher's tick,
 * a settled run), but a guest compares any two of its reads: Linux's
 * frequency invariance (arch/x86/kernel/cpu/aperfmperf.c, scale_freq_tick)
 * gives up for good ("went wobbly") on a zero reference delta, or on an
 * activity delta so small against it that the scale computes to 0 (below
 * about 1/1500 of the reference with an AMD max ratio).
 *
 * So the pair is sampled when the activity counter is read (Linux reads
 * APERF before MPERF, and CPPC's delivered before reference, everywhere;
 * so does our test guest): that read brings the pair up to the host's
 * account, and the reference read
 * that follows returns the same sample. Whenever the pair moves, the
 * activity moves by at least 1/FBCTR_MIN_RATIO of the reference step and
 * at most max_ratio of it, so the two deltas a guest computes between two
 * samples keep those bounds. And
 * a counter never reads the same value twice: a sample that finds no
 * progress moves the pair by one tick each. At each sample the served
 * reference is at or above the host's account and leads it by at most one
 * tick per such read; the next real progress absorbs the lead, and carried
 * activity is paid out within the bounds, so over time the ratio is the
 * host's.
 */
#ifndef CAPVISOR_FBCTR_H
#define CAPVISOR_FBCTR_H

#include <stdint.h>

/* The smallest activity/reference ratio one read may show: 1/128. */
#define FBCTR_MIN_RATIO		128u

enum fbctr_which { FBCTR_ACT = 1, FBCTR_REF = 2 };

struct fbctr_pair {
	uint64_t act, ref;	/* last values served */
	unsigned int read;	/* FBCTR_* bits: counters read at these values */
	/*
	 * The largest activity step per reference step, in 1/1024 (0: 1024,
	 * APERF never runs ahead of MPERF; CPPC: highest / reference perf).
	 * The host's account can jump (run time settled late), and a guest
	 * would read that jump as one tick far above its highest performance;
	 * the excess is carried to the next samples instead.
	 */
	unsigned int max_ratio;
};

/*
 * Serve one read of counter which, given the host's account now (raw_act <=
 * raw_ref expected, both monotonic): the value the guest gets.
 */
uint64_t fbctr_read(struct fbctr_pair *p, enum fbctr_which which, uint64_t raw_act,
		    uint64_t raw_ref);

#endif
