// SPDX-License-Identifier: MIT
/*
 * Sleepers in the fluid-ideal balance (docs/sched.md, "What fair means":
 * sleepers get their demand or their fair share, whichever is smaller).
 *
 * The balance (fairlag.c) used to take what the sleepers used off the
 * pool the busy entities share. That is the oracle's answer only while
 * every sleeper uses less than its share: a sleeper that takes more (a
 * light one on a pCPU whose runnable weight drops while the others
 * sleep, or one that wakes on an idle pCPU and forgets its negative EEVDF
 * lag) took it from the busy ones, and the balance, whose ideal already
 * left it out, could not see that. So:
 *
 * 1. every fair entity keeps a 1/8 EWMA of what it used per balance
 *    interval (its demand, as a rate), and the sleepers enter the solve
 *    as entities capped at that demand, as the oracle has them: one that
 *    uses less than its share takes what it uses, one that uses more
 *    gets its share, and the busy ones' ideal rates count the rest as
 *    theirs (owed to all of them, not to those beside the sleeper);
 * 2. a sleeper whose demand is above its share is held: its run weight
 *    is its own times a factor that shrinks while it is over and grows
 *    back (to 1) once it is not, so that what it took goes back to the
 *    busy ones, whose lags and payback (fair_payback.c) then share it out;
 * 3. an entity that woke within the last SLEEPER_MEMORY balances stays a
 *    sleeper through intervals it never blocked in (fair_sleeper_recent());
 * 4. the solve caps a sleeper at its demand over seconds (an average of
 *    weight 1/2^LONG_SHIFT per balance), not the 1/8 EWMA: see
 *    fair_sleeper_use();
 * 5. a sleeper that progresses below its busy rate while runnable is
 *    starved (sleeper_starved()), and wakes where it gets that rate
 *    (fair_wake.c);
 * 6. one backlogged beyond the sleeper memory is tracked, but still
 *    solved at its demand for a while (fair_backlog_limit()).
 *
 * Not with groups (group_ideal.c solves those hierarchically and sets the
 * run weights itself). O(n) per balance besides the solve's passes;
 * nothing on the per-decision paths.
 */
#include "sched/internal.h"

#define DEMAND_SHIFT	3			/* EWMA of the use: 1/8 per balance */
#define LONG_SHIFT	7			/* the solve's: 1/128 per balance */
#define HOLD_ONE	(1u << 16)		/* hold factor 1 in 16.16 */
#define HOLD_MIN	(HOLD_ONE / 4)		/* at most this much held */
#define HOLD_STEP	(HOLD_ONE / 8)		/* change per balance */
#define HOLD_OVER_SHIFT	3			/* over: demand above share + 1/8 */
#define SLEEPER_MEMORY	32			/* balances a wakeup marks a sleeper */
#define STARVED_SHIFT	4			/* its average: 1/16 per balance */
#define STARVED_SLACK	3			/* runnable time not counted: 1/8 */
#define SLEEPER_MEMORY_GROUPS 8			/* ... with groups: no sleeper solve there */
#define BACKLOG_ROUNDS	96			/* balances a backlogged sleeper is held */

/* se's time runnable but not running so far (st.wait_ns and a wait in progress). */
static uint64_t entity_waited(const struct sched *s, const struct sched_entity *se)
{
	bool waiting = se->on_rq && !(se->cpu >= 0 && s->rq[se->cpu].curr == se);

	return se->st.wait_ns + (waiting && s->now > se->wait_start ? s->now - se->wait_start : 0);
}

/*
 * Note what se did over the interval of dt ns since the last balance: the
 * work it used, and the time it was runnable (ran or waited) beyond a
 * slice per wakeup (what EEVDF lets any wakeup wait) and 1/2^STARVED_SLACK
 * of the interval: fair_sleepers_done() compares the two with its busy
 * rate. O(1).
 */
void fair_sleeper_waits(const struct sched *s, struct sched_entity *se, uint64_t used_ns,
			uint64_t dt)
{
	uint64_t waited = entity_waited(s, se), cpu = se->st.cpu_time_ns + se->run_ns;
	uint64_t runnable = (waited - se->sl_waited) + (cpu - se->sl_cpu_time);
	uint64_t allowed = (se->st.nr_wakeups - se->lag_wakeups) * s->cfg.slice_ns +
			   (dt >> STARVED_SLACK);

	se->sl_used = used_ns;
	se->sl_active = runnable > allowed ? runnable - allowed : 0;
	se->sl_starved = false;
	se->sl_waited = waited;
	se->sl_cpu_time = cpu;
}

/*
 * Was the sleeper se, whose rate were every entity busy is busy_rate, kept
 * below that rate while it was runnable, beyond a slice per wakeup and
 * some slack (fairgen's floor: a sleeper progresses at least at that rate
 * while runnable, with a slice of wait per burst)? Averaged over about
 * 2^STARVED_SHIFT balances: one interval holds a burst or two, and a
 * light sleeper that waited through one had got nothing yet. Then the
 * pCPU it waits on is too crowded for it, and its next wakeup goes
 * elsewhere (fair_wake.c).
 */
static bool sleeper_starved(struct sched_entity *se, uint64_t busy_rate)
{
	uint64_t owed = (uint64_t)(((unsigned __int128)busy_rate * se->sl_active) >> RATE_SHIFT);

	se->sl_got = se->sl_got - (se->sl_got >> STARVED_SHIFT) + (se->sl_used >> STARVED_SHIFT);
	se->sl_owed = se->sl_owed - (se->sl_owed >> STARVED_SHIFT) + (owed >> STARVED_SHIFT);
	return se->sl_got < se->sl_owed;
}

/*
 * Update se's demand with its use over the interval of dt ns. Returns
 * whether this was its first interval (no demand before).
 *
 * Two figures. sl_demand, a 1/8 EWMA, says whether a sleeper is over its
 * share now (the hold) and whether it fits an idle pCPU (fair_wake.c).
 * sl_long, the running mean of its first 2^LONG_SHIFT intervals and then
 * an average of weight 1/2^LONG_SHIFT per interval (about 2 s), is what
 * the solve caps it at. The
 * ideal is defined with each sleeper at its demand over the run, and the
 * ideal rates are not linear in the demands (an entity's rate stops at its
 * whole pCPU, and the levels of the water-filling move): solved at each
 * interval's EWMA, the busy entities' ideal averaged below the ideal at the
 * average demand. Seed 1 #32 of the fair corpus: v51's solved rate
 * averaged 0.906 of a 1024 pCPU over the run, the same solve at the
 * sleepers' mean demands gives 0.934 (the oracle 0.931); its lag said it
 * was on track while it fell 264 ms behind, and newidle left pCPUs idle
 * beside it as if it were ahead. The first interval is left out of the
 * mean: measured from the engine's start over a short dt it put every
 * sleeper near a whole pCPU, which a long mean takes seconds to forget.
 */
bool fair_sleeper_use(struct sched_entity *se, uint64_t used_ns, uint64_t dt)
{
	bool first = !se->sl_init;
	uint64_t r;

	if (!dt)
		return first;
	r = (uint64_t)(((unsigned __int128)used_ns << RATE_SHIFT) / dt);
	if (!se->sl_init) {
		se->sl_demand = r;
	} else {
		se->sl_demand = se->sl_demand - (se->sl_demand >> DEMAND_SHIFT) +
				(r >> DEMAND_SHIFT);
		if (se->sl_count < (1u << LONG_SHIFT))
			se->sl_count++;
		se->sl_long = (uint64_t)((int64_t)se->sl_long +
					 ((int64_t)r - (int64_t)se->sl_long) / se->sl_count);
	}
	se->sl_init = true;
	return first;
}

/*
 * Was se runnable all through the interval since the last balance? On a
 * runqueue at that balance and not woken since; or, where entities have
 * caps (`starts`), new: no balance saw it runnable, at most its first
 * wakeup since, and runnable now. Solved only at the second balance
 * after it started (32 ms), a capped entity that started alone on its
 * pCPU was throttled within a few ms, and the entity newidle pulled into
 * the hole had the pCPU to itself until then (seed 1 #10 of the caps
 * corpus: a light entity 42 ms over its ideal within the first 100 ms).
 * Only with caps, where a hole is what the early solve fixes: for every
 * entity it cost the fair corpus 4959 -> 4952 of 5000 (docs/sched/caps.md,
 * "Solved from the start").
 */
bool fair_runnable_throughout(const struct sched_entity *se, bool starts)
{
	bool started = starts && !se->sl_was_runnable && se->st.nr_wakeups <= 1;

	return wants_cpu(se) &&
	       (started || (se->lag_on_rq && se->lag_wakeups == se->st.nr_wakeups));
}

/* Has any fair entity a cap? O(n), once per balance. */
bool fair_any_capped(const struct sched *s)
{
	for (unsigned int id = 0; id < s->nr_ent_slots; id++)
		if (s->ent[id] && s->ent[id]->cap_period)
			return true;
	return false;
}

/*
 * Did se wake from a sleep within the last SLEEPER_MEMORY balances? Then
 * it is a sleeper even through an interval it was runnable all along (a
 * light one queued behind heavier ones): solved as busy there, it got a
 * busy entity's share beyond its demand, taken from the busy ones' ideal,
 * and their lags then said they were ahead when they were not (newidle
 * left them waiting beside idle pCPUs). The first wakeup of an entity no
 * balance saw runnable before is its start, not the end of a sleep.
 *
 * 32 balances (512 ms), not 8: a sleeper whose bursts queue behind heavy
 * entities stays runnable for longer than 128 ms often enough. Seed 1 #32
 * of the fair corpus (before the long mean): v22 and v13 (periodic,
 * weights 29 and 19, demand 0.19 and 0.16 of a pCPU) were solved as busy
 * at 42 and 35 of 567 balances, at 0.45 and 0.29 of a pCPU on average,
 * and v51's ideal averaged 0.853 of a pCPU at those balances, 0.913 at the
 * others; seed 3 #43: the light busy v3's ideal fell from 0.347 to 0.25
 * at about 50 balances, and it ended 75 ms behind while its lag said it
 * was ahead.
 * With groups 8, as before: there is no sleeper solve there (group_ideal.c
 * solves the tracked members), so a longer memory only kept a woken
 * member out of its group's solve for longer (`make test`'s
 * test_host_enforce, a VM of weight 7168 beside a rogue one of 1024 that
 * ignores its kicks: 0.60-0.79 of the pCPU in two CI runs of three, at
 * least 0.79 expected).
 */
bool fair_sleeper_recent(const struct sched *s, struct sched_entity *se)
{
	if (se->lag_wakeups != se->st.nr_wakeups && se->sl_was_runnable)
		se->sl_woke_round = s->lag_round;
	se->sl_was_runnable |= wants_cpu(se);
	return se->sl_woke_round &&
	       s->lag_round - se->sl_woke_round < (s->nr_groups ? SLEEPER_MEMORY_GROUPS : SLEEPER_MEMORY);
}

/*
 * The limit of the tracked entity se in the solve (UINT64_MAX: none). A
 * sleeper backlogged on a crowded pCPU is runnable throughout, and after
 * the sleeper memory it was solved as busy: at up to a whole pCPU where
 * the oracle has it at its demand, and the busy entities' ideal dropped
 * by the difference (seed 369258 #114 of the fair corpus: v5, a periodic
 * sleeper of 0.54 of a pCPU backlogged beside a heavier one, solved as
 * busy at 105 of 576 balances; the busy v0's ideal integrated to 1886 ms
 * against the oracle's 2043, so its lag said it was ahead and newidle
 * left pCPUs idle beside it: 564 ms while it waited, 2.18x). Solved as a
 * sleeper instead it starved (4.37x): nothing moves a sleeper off the
 * pCPU it is backlogged on. So it stays tracked (the lag moves take it
 * where it gets its rate) and is limited at its demand over seconds and
 * 1/8, for BACKLOG_ROUNDS balances after the memory: long enough for a
 * periodic one to catch up and block (v5 was tracked for spells of 13 to
 * 136 balances; #114 1.11x held for 48, 1.01x for 64, 0.86x for 96, and
 * seed 369258 #461 2.82x -> 1.00x), and bounded for a vCPU that truly
 * turned busy, which the sleeper memory already takes at its demand for
 * 32 balances: solved at its busy share 2 s after its last wakeup at most
 * (branch h35's limit, dropped, rose back to the busy share within 24
 * balances, as fast for a backlogged sleeper catching up: it gets all it
 * is given, like a busy vCPU). Not with groups (no sleeper solve). O(1).
 */
uint64_t fair_backlog_limit(const struct sched *s, struct sched_entity *se)
{
	uint64_t lim = se->sl_long + (se->sl_long >> HOLD_OVER_SHIFT);

	if (s->nr_groups || !se->sl_woke_round || !se->sl_count)
		return UINT64_MAX;
	if (se->sl_backlog_rounds >= BACKLOG_ROUNDS)
		return UINT64_MAX;
	se->sl_backlog_rounds++;
	return lim ? lim : 1;
}

/*
 * Enter the sleeper se into the solve as e (capped at its demand); false
 * when it does not need to be (no demand, or groups).
 */
bool fair_sleeper_collect(const struct sched *s, struct sched_entity *se, struct lag_ent *e)
{
	if (s->nr_groups || !se->sl_demand || se->cpu < 0)
		return false;
	e->se = se;
	e->w = fair_solver_weight(s, se);
	e->limit = se->sl_count ? se->sl_long : se->sl_demand;
	e->rate = 0;
	e->sleeper = true;
	return true;
}

/*
 * After the solve: note each sleeper's share, adjust its hold, and drop
 * the sleepers from the n entries of e (order kept). Returns how many
 * are left.
 */
unsigned int fair_sleepers_done(struct lag_ent *e, unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct sched_entity *se = e[i].se;
		uint32_t f;

		if (!e[i].sleeper) {
			e[k++] = e[i];
			continue;
		}
		f = se->sl_hold ? se->sl_hold : HOLD_ONE;
		se->sl_share = e[i].comp >= 0 ? e[i].rate : se->sl_demand;
		/*
		 * Capped at its long demand, its share is at least that, and
		 * its recent use above it does not make it over its share.
		 */
		if (e[i].capped && se->sl_share < se->sl_demand)
			se->sl_share = se->sl_demand;
		if (se->cap_period)
			f = HOLD_ONE;	/* its cap holds it (cap.c) */
		else if (se->sl_demand > se->sl_share + (se->sl_share >> HOLD_OVER_SHIFT))
			f = f > HOLD_MIN + HOLD_STEP ? f - HOLD_STEP : HOLD_MIN;
		else if (se->sl_demand <= se->sl_share)
			f = f + HOLD_STEP < HOLD_ONE ? f + HOLD_STEP : HOLD_ONE;
		se->sl_hold = f;
		se->sl_busy_rate = e[i].busy_rate;
		se->sl_starved = e[i].comp >= 0 && sleeper_starved(se, e[i].busy_rate);
	}
	return k;
}

/* The run weight of a sleeper (not tracked by the balance): held, or its own. */
uint64_t fair_sleeper_weight(const struct sched_entity *se, uint64_t w)
{
	if (!se->sl_hold || se->sl_hold >= HOLD_ONE)
		return w;
	w = (w * se->sl_hold) >> 16;
	return w < SCHED_WEIGHT_MIN ? SCHED_WEIGHT_MIN : w;
}

/*
 * Is the idle pCPU cpu one whose entity owed all of it (lag_full) has
 * blocked since the balance, and is a sleeper over seconds, its long
 * demand below half that rate? A periodic sleeper whose demand is more
 * than a slow pCPU is backlogged there (fair_wake_full_to_idle()), solved
 * as busy after the sleeper memory, and given a fast pCPU in exchange for
 * the entity there; once it has caught up it blocks, and that entity, its
 * ideal the slow pCPU's whole at that balance, stayed there while the
 * fast one idled until the next (seed 758796 #204 of the fair property
 * test: 13 ms every 590, 1.04x the bound). An entity that is busy over
 * seconds keeps its pCPU through a short block (misfit_ideal_fits()).
 * Not with groups (no sleeper solve there, fair_wake_full_to_idle()).
 * O(n), only where such a misfit entity has a bigger pCPU idle (the
 * misfit balance, balance.c).
 */
bool fair_full_owner_slept(const struct sched *s, unsigned int cpu)
{
	if (!s->rq[cpu].lag_full || s->nr_groups)
		return false;
	for (unsigned int id = 0; id < s->nr_ent_slots; id++) {
		const struct sched_entity *o = s->ent[id];

		if (o && o->cpu == (int)cpu && o->lag_tracked && !wants_cpu(o) &&
		    o->sl_long < o->lag_rate / 2)
			return true;
	}
	return false;
}
