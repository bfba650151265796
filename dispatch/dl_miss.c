// SPDX-License-Identifier: MIT
/* Judging a reservation's deadline misses against the dispatcher thread's run_delay. */
#include "dispatch/dl_miss.h"
#include "dispatch/dispatch.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

void dl_miss_period(struct dl_miss_watch *w, uint64_t deadline_ns, uint64_t rel_deadline_ns)
{
	w->cur.valid = true;
	w->cur.start_ns = deadline_ns > rel_deadline_ns ? deadline_ns - rel_deadline_ns : 0;
	w->cur.end_ns = deadline_ns;
	w->cur.withheld_ns = 0;
}

static void judge(struct dl_miss_watch *w)
{
	uint64_t withheld = w->missed.valid ? w->missed.withheld_ns : 0;

	if (withheld > w->withheld_max_ns)
		w->withheld_max_ns = withheld;
	if (w->missed.valid && withheld >= w->miss_slack_ns)
		w->host++;
	else
		w->engine++;
	w->pending = false;
}

void dl_miss_missed(struct dl_miss_watch *w, uint64_t deadline_ns, uint64_t slack_ns)
{
	/* Two misses in one pass: the first has all it will get. */
	if (w->pending)
		judge(w);
	w->pending = true;
	w->missed = w->cur;
	w->missed.valid = w->cur.valid && w->cur.end_ns == deadline_ns;
	w->miss_slack_ns = slack_ns;
}

static void add_overlap(struct dl_miss_window *win, uint64_t from, uint64_t to)
{
	uint64_t a = from > win->start_ns ? from : win->start_ns;
	uint64_t b = to < win->end_ns ? to : win->end_ns;

	if (win->valid && b > a)
		win->withheld_ns += b - a;
}

void dl_miss_stretch(struct dl_miss_watch *w, uint64_t from_ns, uint64_t to_ns)
{
	add_overlap(&w->cur, from_ns, to_ns);
	if (!w->pending)
		return;
	add_overlap(&w->missed, from_ns, to_ns);
	judge(w);
}

void dl_miss_stretch_of(uint64_t *last_delay, uint64_t last_ns, uint64_t delay_ns, uint64_t now,
			uint64_t *from_ns)
{
	uint64_t grew = 0, span = now > last_ns ? now - last_ns : 0;

	if (delay_ns != DL_MISS_DELAY_UNKNOWN && *last_delay != DL_MISS_DELAY_UNKNOWN &&
	    delay_ns > *last_delay)
		grew = delay_ns - *last_delay;
	if (grew > span)
		grew = span;
	*from_ns = now - grew;
	*last_delay = delay_ns;
}

/* "sum_exec_runtime run_delay pcount": the second number. */
uint64_t dl_miss_schedstat_delay(const char *text)
{
	unsigned long long v;
	char *end;

	errno = 0;
	strtoull(text, &end, 10);
	if (errno || end == text || !isspace((unsigned char)*end))
		return DL_MISS_DELAY_UNKNOWN;
	text = end;
	v = strtoull(text, &end, 10);
	if (errno || end == text || v >= DL_MISS_DELAY_UNKNOWN)
		return DL_MISS_DELAY_UNKNOWN;
	return v;
}

/* The judged counts by their names, here with the judgement (no dispatcher state needed). */
void dispatch_miss_counts(const struct dispatch_vcpu_report *r,
			  struct dispatch_count out[DISPATCH_MISS_COUNTS])
{
	out[0] = (struct dispatch_count){ "deadline_misses_host", r->misses_host };
	out[1] = (struct dispatch_count){ "deadline_misses_engine", r->misses_engine };
	out[2] = (struct dispatch_count){ "miss_withheld_max_ns", r->miss_withheld_max_ns };
}
