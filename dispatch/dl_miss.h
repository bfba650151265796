/* SPDX-License-Identifier: MIT */
/*
 * Whose a reservation's deadline miss was: the engine's, or the host
 * kernel's. The engine charges a reservation the wall time it has it
 * current, so a vCPU thread the host keeps off its CPU uses up its runtime
 * and misses nothing. What makes it miss is the engine acting late: a
 * period's replenishment, a wakeup or a switch happens only when a thread
 * drives the engine, chiefly the dispatcher thread at the tick it planned.
 * When the host kernel kept the dispatcher thread runnable but off every
 * CPU for at least the reservation's slack (deadline - runtime) inside a
 * period, no schedule of the engine's could have met that deadline.
 *
 * The dispatcher thread reads its own run_delay (second field of
 * /proc/thread-self/schedstat) on each of its passes: what it grew by
 * since the last pass was one stretch ending now (the thread sleeps in
 * between, and is runnable from its wakeup until it runs). Each period
 * (deadline - relative deadline .. deadline, as the engine says at its
 * REPLENISH) adds up the parts of those stretches inside it; a miss is the
 * host kernel's when that sum reaches the slack, judged at the pass after
 * the miss (whose stretch may still end inside the period). A miss nobody
 * measured (no period seen, run_delay unreadable) is the engine's.
 * Pure: no clock, no file; the caller reads and locks.
 */
#ifndef CAPVISOR_DL_MISS_H
#define CAPVISOR_DL_MISS_H

#include <stdbool.h>
#include <stdint.h>

#define DL_MISS_DELAY_UNKNOWN	UINT64_MAX

struct dl_miss_window {
	bool valid;
	uint64_t start_ns, end_ns;	/* a period: its deadline - D .. its deadline */
	uint64_t withheld_ns;		/* run_delay inside it so far */
};

struct dl_miss_watch {
	struct dl_miss_window cur;	/* the current period */
	struct dl_miss_window missed;	/* a missed one, judged at the next stretch */
	bool pending;
	uint64_t miss_slack_ns;
	uint64_t host;			/* misses the host kernel withheld the slack in */
	uint64_t engine;		/* all others: the engine's */
	uint64_t withheld_max_ns;	/* the most withheld in any missed period */
};

/* A period began (the engine's REPLENISH): absolute deadline, relative deadline. */
void dl_miss_period(struct dl_miss_watch *w, uint64_t deadline_ns, uint64_t rel_deadline_ns);
/* The engine missed this absolute deadline of a reservation with slack_ns of slack. */
void dl_miss_missed(struct dl_miss_watch *w, uint64_t deadline_ns, uint64_t slack_ns);
/*
 * The dispatcher thread was runnable, not running, over [from_ns, to_ns]
 * (from == to: nothing, or run_delay unknown); judges a pending miss.
 */
void dl_miss_stretch(struct dl_miss_watch *w, uint64_t from_ns, uint64_t to_ns);
/*
 * The stretch a new run_delay reading ends: [now - growth, now], the
 * growth since *last (updated) at most the time since last_ns.
 */
void dl_miss_stretch_of(uint64_t *last_delay, uint64_t last_ns, uint64_t delay_ns, uint64_t now,
			uint64_t *from_ns);
/* run_delay from the text of a schedstat file, DL_MISS_DELAY_UNKNOWN if malformed. */
uint64_t dl_miss_schedstat_delay(const char *text);

#endif
