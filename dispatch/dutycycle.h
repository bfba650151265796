/* SPDX-License-Identifier: MIT */
/*
 * Emulated capacity and performance by duty cycle, without burning CPU.
 *
 * A pCPU of capacity C at performance level P delivers P/1024 of a host CPU.
 * Time is cut into windows of W ns on one shared epoch. Each pCPU owns a slot
 * of C*W/1024 ns in every window on its host CPU; pCPUs that share a host CPU
 * get disjoint slots (their capacities add up to at most 1024, see
 * host_spec_place()), so they never compete for it. Within its slot the
 * pCPU's current vCPU runs for the first P*W/1024 ns and waits outside
 * KVM_RUN for the rest.
 *
 * --host big=1:1024,little=2:512 with W = 4 ms, one column per 0.25 ms;
 * '#' an on-part (the vCPU may be in KVM_RUN), '.' off (it waits outside):
 *
 *   time (ms)              0   1   2   3   4   5   6   7   8
 *   windows                [ window 0     )[ window 1     )
 *   host CPU 0
 *     big    C=1024 P=768  ############....############....   slot [0,4)
 *   host CPU 1
 *     little C=512  P=384  ######..........######..........   slot [0,2)
 *     little C=512  P=512  ........########........########   slot [2,4)
 *
 * The first little's on-part may run past 1.5 ms up to its room (2 ms, the
 * next slot) to make up time the host took from earlier on-parts; the
 * second's room ends with the window.
 */
#ifndef CAPVISOR_DUTYCYCLE_H
#define CAPVISOR_DUTYCYCLE_H

#include <stdbool.h>
#include <stdint.h>

#define DUTY_ALWAYS UINT64_MAX

/* --window-us: the one home of its default and range (plain numbers: help texts print them). */
#define DUTY_DEFAULT_WINDOW_US	4000
#define DUTY_MIN_WINDOW_US	500
#define DUTY_MAX_WINDOW_US	100000
#define DUTY_DEFAULT_WINDOW_NS	(DUTY_DEFAULT_WINDOW_US * 1000ull)
#define DUTY_MIN_WINDOW_NS	(DUTY_MIN_WINDOW_US * 1000ull)
#define DUTY_MAX_WINDOW_NS	(DUTY_MAX_WINDOW_US * 1000ull)

/*
 * The shortest on-part in which a vCPU still runs. The vCPU thread is woken
 * for its on-part by a timer and must reach KVM_RUN before the on-part's
 * own timer ends it; a kick takes 70-150 us on our PVM hosts. Measured there
 * with the embedded guest: on-parts of 31-47 us never ran it (the thread woke
 * after its on-part had ended, every window), 62 us booted in 3 s with a
 * 4 ms window and not in 30 s with a 16 ms one, 100 us and more booted in
 * under 2 s. Twice the slowest kick leaves room for a loaded host.
 */
#define DUTY_MIN_ON_US		200
#define DUTY_MIN_ON_NS		(DUTY_MIN_ON_US * 1000ull)

/*
 * The most over-run (CPU time an on-part's thread ran past its end) a pCPU
 * owes and pays back by skipping on-parts. Over-runs are guest time really
 * run, so a level is only kept if they are all paid: a thread inside a
 * nested guest under TCG was measured leaving on-parts up to 1.25 s late
 * (onpart_late_max_ns), and forgiving all but one window of that gave a
 * vCPU clamped at 320 a delivered 384 over its run. The bound only stops a
 * host that keeps a thread for minutes from stopping its vCPU for longer.
 */
#define DUTY_MAX_OVERRUN_DEBT_NS	(4000ull * 1000 * 1000)

/* The lowest level (1..1024) whose on-part in a window is at least DUTY_MIN_ON_NS. */
unsigned int duty_min_level(uint64_t window_ns);
/* The shortest window (ns) in which level gets an on-part of DUTY_MIN_ON_NS. */
uint64_t duty_min_window_ns(unsigned int level);

struct duty_slot {
	uint64_t offset_ns;	/* start of the slot within each window */
	uint64_t len_ns;	/* C * W / 1024 */
	/*
	 * Longest on-part: up to the next slot on the same host CPU, or to the
	 * window's end after the last one. An on-part longer than the slot
	 * makes up CPU time the host took from earlier ones (the pCPU's
	 * debt); the time past the last slot is nobody's.
	 */
	uint64_t room_ns;
};

/* Lay out the slots of nr_pcpus pCPUs (capacity[p] on host_cpu[p]). */
void duty_plan(const unsigned int *capacity, const unsigned int *host_cpu, unsigned int nr_pcpus,
	       uint64_t window_ns, struct duty_slot *slots);

/* On-time of a pCPU at level (1..1024) in one window, before any correction. */
uint64_t duty_on_ns(uint64_t window_ns, unsigned int level);

/* A configured window (dispatch_config.window_ns) or, for 0, the default: its one resolver. */
static inline uint64_t duty_window_ns(uint64_t configured_ns)
{
	return configured_ns ? configured_ns : DUTY_DEFAULT_WINDOW_NS;
}

/*
 * May the vCPU run at `now` (epoch-relative ns)? on_ns is its on-time in
 * this window (duty_on_ns(), possibly corrected, at most slot->room_ns).
 * Returns true with *until = end of the current on-part (DUTY_ALWAYS when it
 * never ends), or false with *until = start of the next on-part.
 */
bool duty_may_run(const struct duty_slot *slot, uint64_t window_ns, uint64_t on_ns, uint64_t now,
		  uint64_t *until);

#endif
