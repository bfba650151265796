/* SPDX-License-Identifier: MIT */
/*
 * The activity account behind a pair of feedback counters (APERF, CPPC
 * delivered), averaged over the last `span` of reference time.
 *
 * A vCPU on a duty-cycled pCPU runs in on-parts and waits in off-parts; its
 * raw activity account (the CPU time it really ran) grows in bursts while
 * its reference (the time it was current and not halted) grows steadily.
 * A guest samples the pair once a tick, and a tick is about as long as one
 * duty window: read raw, one tick finds 1.0 (an on-part), the next 0.2 (an
 * off-part), and which one a tick finds depends on when the guest woke, not
 * on the speed of the CPU. Linux scales each stretch of its PELT clock by
 * the last tick's reading, so a task that wakes into on-parts is counted
 * busier than it is (docs/dispatcher.md, "What the guest reads").
 *
 * A slow CPU is slow all the time: served activity is the mean of the raw
 * activity over the last `span` of reference, A(r) = (1/span) x integral of
 * act(x) dx over [r - span, r] (act linear between samples). Its slope at
 * r is (act(r) - act(r - span)) / span, the delivered ratio over the last
 * span: with span a multiple of the duty window, the ratio of the level
 * whatever the phase. It stays honest: act(r - span) <= A(r) <= act(r), so
 * served activity never runs ahead of what ran and lags it by at most one
 * span, and a new level shows within one span.
 */
#ifndef CAPVISOR_FBAVG_H
#define CAPVISOR_FBAVG_H

#include <stdint.h>

/*
 * Samples kept: one is stored per span/FBAVG_STEP_DIV of reference at most,
 * and only those reaching back to r - span are kept, so the ring never
 * holds more than FBAVG_STEP_DIV + 2.
 */
#define FBAVG_STEP_DIV	16u
#define FBAVG_SAMPLES	(FBAVG_STEP_DIV + 4u)

struct fbavg_sample {
	uint64_t ref, act;
	unsigned __int128 area;		/* integral of act d(ref) from 0 to ref */
};

struct fbavg {
	uint64_t span;			/* reference time averaged over; 0: raw */
	unsigned int first, n;		/* the ring, oldest first */
	struct fbavg_sample s[FBAVG_SAMPLES];
};

/* Start at (0, 0): before any sample the account was 0. */
void fbavg_init(struct fbavg *f, uint64_t span);

/*
 * The averaged activity for the raw account (ref, act) now; both monotonic
 * (a step back is taken as no progress), act <= ref expected.
 */
uint64_t fbavg_update(struct fbavg *f, uint64_t ref, uint64_t act);

#endif
