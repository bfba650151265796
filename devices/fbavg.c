// SPDX-License-Identifier: MIT
/*
 * The activity account averaged over the last span of reference time: see
 * fbavg.h for why a guest needs it and for the bounds it keeps.
 */
#include "devices/fbavg.h"

static struct fbavg_sample *at(struct fbavg *f, unsigned int i)
{
	return &f->s[(f->first + i) % FBAVG_SAMPLES];
}

void fbavg_init(struct fbavg *f, uint64_t span)
{
	*f = (struct fbavg){ .span = span, .n = 1 };
}

/* The integral up to (ref, act), act linear from sample p. */
static unsigned __int128 area_to(const struct fbavg_sample *p, uint64_t ref, uint64_t act)
{
	return p->area + (unsigned __int128)(ref - p->ref) * ((unsigned __int128)p->act + act) / 2;
}

/* The integral up to x, p->ref <= x <= q->ref, act linear between them. */
static unsigned __int128 area_at(const struct fbavg_sample *p, const struct fbavg_sample *q,
				 uint64_t x)
{
	uint64_t t = x - p->ref, len = q->ref - p->ref;
	unsigned __int128 a = p->area + (unsigned __int128)t * p->act;

	/* t x (dact / len) <= t: act grows no faster than ref, so no overflow. */
	if (len)
		a += (unsigned __int128)t * (q->act - p->act) / len * t / 2;
	return a;
}

/* Keep the new sample and only the old ones the next mean can reach. */
static void push(struct fbavg *f, const struct fbavg_sample *s)
{
	if (f->n == FBAVG_SAMPLES) {
		f->first = (f->first + 1) % FBAVG_SAMPLES;
		f->n--;
	}
	*at(f, f->n++) = *s;
	while (f->n > 2 && s->ref >= f->span && at(f, 1)->ref <= s->ref - f->span) {
		f->first = (f->first + 1) % FBAVG_SAMPLES;
		f->n--;
	}
}

/* The mean of act over [live->ref - span, live->ref]; before 0 act was 0. */
static uint64_t mean(struct fbavg *f, const struct fbavg_sample *live)
{
	unsigned __int128 from = 0, m;
	unsigned int i;

	if (live->ref > f->span) {
		uint64_t x = live->ref - f->span;

		for (i = 0; i + 1 < f->n && at(f, i + 1)->ref <= x; i++)
			;
		if (at(f, i)->ref <= x)
			from = area_at(at(f, i), i + 1 < f->n ? at(f, i + 1) : live, x);
	}
	m = from < live->area ? (live->area - from) / f->span : 0;
	return m < live->act ? (uint64_t)m : live->act;
}

uint64_t fbavg_update(struct fbavg *f, uint64_t ref, uint64_t act)
{
	struct fbavg_sample *last = at(f, f->n - 1), live;

	if (!f->span)
		return act;
	if (ref < last->ref)
		ref = last->ref;
	if (act < last->act)
		act = last->act;
	live = (struct fbavg_sample){ ref, act, area_to(last, ref, act) };
	if (ref - last->ref >= f->span / FBAVG_STEP_DIV && ref > last->ref)
		push(f, &live);
	return mean(f, &live);
}
