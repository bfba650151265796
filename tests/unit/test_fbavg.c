// SPDX-License-Identifier: MIT
/*
 * The averaged activity account against a model of a duty-cycled vCPU: an
 * always-busy vCPU runs the first `on` of every window and waits the rest;
 * its guest ticks every 4 ms of wall time, and a tick due in an off-part
 * fires when the next on-part begins (the guest runs only then). Each tick's
 * reading must be the level, whatever the window, the level and the phase;
 * raw, the same ticks read up to 1.0 and down to a fraction of the level.
 * Random monotone accounts check the bounds fbavg.h promises.
 */
#include "tests/unit/harness.h"
#include "devices/fbavg.h"
#include "tests/lib/xorshift.h"

#include <stdio.h>

#define MS	1000000ull
#define TICK_NS	(4 * MS)

static uint64_t rng;

static uint64_t next_rand(void)
{
	return xorshift64(&rng);
}

struct duty {
	uint64_t window, on, phase;
};

static uint64_t on_time_to(const struct duty *d, uint64_t u)
{
	uint64_t r = u % d->window;

	return u / d->window * d->on + (r < d->on ? r : d->on);
}

/* The vCPU's run time after t of wall time (all of it current, none halted). */
static uint64_t duty_act(const struct duty *d, uint64_t t)
{
	return on_time_to(d, t + d->phase) - on_time_to(d, d->phase);
}

/* When the guest sees a tick due at t: at once in an on-part, else at the next. */
static uint64_t tick_seen(const struct duty *d, uint64_t t)
{
	uint64_t r = (t + d->phase) % d->window;

	return r < d->on ? t : t + d->window - r;
}

/* The worst distance of one tick's reading from the level, after one span. */
static double worst_tick_error(const struct duty *d, uint64_t span)
{
	struct fbavg f;
	uint64_t last_t = 0, last_a = 0, due;
	double level = (double)d->on / (double)d->window, worst = 0;

	fbavg_init(&f, span);
	for (due = TICK_NS; due < 2000 * MS; due += TICK_NS + next_rand() % (MS / 4)) {
		uint64_t t = tick_seen(d, due), a;

		if (t <= last_t)
			continue;
		a = fbavg_update(&f, t, duty_act(d, t));
		if (last_t > 2 * span + d->window) {
			double r = (double)(a - last_a) / (double)(t - last_t);

			if (r - level > worst || level - r > worst)
				worst = r > level ? r - level : level - r;
		}
		last_t = t;
		last_a = a;
	}
	return worst;
}

static struct duty random_duty(void)
{
	struct duty d;

	d.window = MS / 2 + next_rand() % (20 * MS);
	d.on = d.window * (128 + next_rand() % 897) / 1024;
	d.phase = next_rand() % d.window;
	return d;
}

static void test_every_tick_reads_the_level(void)
{
	uint64_t seed = 0xfba7e5eedull;
	double worst = 0, worst_raw = 0;

	rng = seed;
	fprintf(stderr, "fbavg seed %#llx (300 duty cycles)\n", (unsigned long long)seed);
	for (int i = 0; i < 300; i++) {
		struct duty d = random_duty();
		uint64_t span = 4 * d.window;
		double e = worst_tick_error(&d, span > 16 * MS ? span : 16 * MS);
		double raw = worst_tick_error(&d, 0);

		if (e > worst)
			worst = e;
		if (raw > worst_raw)
			worst_raw = raw;
		if (e > 0.07)
			fprintf(stderr, "window %llu us on %llu us phase %llu us: a tick off by %.3f\n",
				(unsigned long long)d.window / 1000, (unsigned long long)d.on / 1000,
				(unsigned long long)d.phase / 1000, e);
	}
	fprintf(stderr, "worst tick error %.4f averaged, %.4f raw\n", worst, worst_raw);
	CU_ASSERT(worst <= 0.07);
	CU_ASSERT(worst_raw > 0.2);	/* the model does show what the average removes */
}

/* act(r - span) <= A(r) <= act(r) for any monotone account, read at any pace. */
static void test_never_ahead_never_a_span_behind(void)
{
	enum { N = 4000 };
	static uint64_t refs[N], acts[N];
	uint64_t seed = 0xb0b5eedull;

	rng = seed;
	for (int run = 0; run < 50; run++) {
		uint64_t span = MS + next_rand() % (50 * MS), ref = 0, act = 0;
		struct fbavg f;
		int j = 0;

		fbavg_init(&f, span);
		for (int i = 0; i < N; i++) {
			uint64_t dref = (next_rand() & 1) ? next_rand() % (span / 4) : next_rand() % 1000;
			uint64_t a;

			ref += dref;
			act += dref * (next_rand() % 1025) / 1024;
			refs[i] = ref;
			acts[i] = act;
			a = fbavg_update(&f, ref, act);
			while (j + 1 < i && refs[j + 1] + span <= ref)
				j++;
			CU_ASSERT(a <= act);
			/* Behind by at most what ran since the sample before r - span. */
			if (ref >= span && refs[j] + span <= ref && a + 1 < acts[j]) {
				fprintf(stderr, "seed %#llx run %d read %d: %llu below %llu\n",
					(unsigned long long)seed, run, i, (unsigned long long)a,
					(unsigned long long)acts[j]);
				CU_FAIL("served activity more than a span behind");
				return;
			}
		}
	}
}

/* A new level shows within one span: from 0.25 to the top. */
static void test_new_level_within_a_span(void)
{
	struct duty slow = { 4 * MS, MS, 0 };
	uint64_t span = 16 * MS, t, base_act, a, last_a = 0, last_t = 0;
	struct fbavg f;

	fbavg_init(&f, span);
	for (t = MS; t <= 200 * MS; t += MS)
		last_a = fbavg_update(&f, t, duty_act(&slow, t));
	last_t = 200 * MS;
	base_act = duty_act(&slow, last_t);
	for (t = last_t + TICK_NS; t <= last_t + span + 3 * TICK_NS; t += TICK_NS) {
		a = fbavg_update(&f, t, base_act + (t - 200 * MS));
		if (t > 200 * MS + span + TICK_NS)
			CU_ASSERT((double)(a - last_a) / (double)TICK_NS > 0.99);
		last_a = a;
	}
}

/* Span 0 serves the raw account. */
static void test_span_zero_is_raw(void)
{
	struct fbavg f;

	fbavg_init(&f, 0);
	CU_ASSERT_EQUAL(fbavg_update(&f, 1000, 300), 300);
	CU_ASSERT_EQUAL(fbavg_update(&f, 2000, 1900), 1900);
}

UNIT_SUITE(fbavg, NULL, NULL,
	   UNIT_TEST(test_every_tick_reads_the_level),
	   UNIT_TEST(test_never_ahead_never_a_span_behind),
	   UNIT_TEST(test_new_level_within_a_span),
	   UNIT_TEST(test_span_zero_is_raw));
