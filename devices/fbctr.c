// SPDX-License-Identifier: MIT
/*
 * Feedback counters that advance between any two guest reads: see fbctr.h
 * for why and for the bounds each step keeps.
 */
#include "devices/fbctr.h"

/* Move the pair up to the host's account, at least one tick. */
static void step(struct fbctr_pair *p, uint64_t raw_act, uint64_t raw_ref)
{
	uint64_t dref = raw_ref > p->ref ? raw_ref - p->ref : 0;
	uint64_t dact = raw_act > p->act ? raw_act - p->act : 0, cap;

	if (!dref)
		dref = 1;
	cap = (uint64_t)((unsigned __int128)dref * (p->max_ratio ? p->max_ratio : 1024) / 1024);
	/* A lead of the served activity over the host's is paid back here. */
	if (dact < dref / FBCTR_MIN_RATIO)
		dact = dref / FBCTR_MIN_RATIO;
	if (dact > cap)
		dact = cap;
	if (!dact)
		dact = 1;
	p->act += dact;
	p->ref += dref;
}

uint64_t fbctr_read(struct fbctr_pair *p, enum fbctr_which which, uint64_t raw_act,
		    uint64_t raw_ref)
{
	/*
	 * Every activity read samples the pair (only the very first, with no
	 * progress yet, reads the zeros); the reference read returns that
	 * sample. A reference read again moves it by one tick each, so a stray
	 * reference reader never shifts the sample the next activity read takes.
	 */
	if (which == FBCTR_ACT && (p->read || raw_ref > p->ref)) {
		step(p, raw_act, raw_ref);
		p->read = 0;
	} else if (p->read & which) {
		step(p, 0, 0);
		p->read = 0;
	}
	p->read |= which;
	return which == FBCTR_ACT ? p->act : p->ref;
}
