// SPDX-License-Identifier: MIT
/*
 * The simulator's event queue: an indexed min-heap of vCPUs keyed
 * by (next_event, index), so the next workload event is found in O(1) and
 * updated in O(log n) instead of scanning every vCPU at every step.
 *
 * Only vCPUs with an event are in the heap: one whose event is gone (a
 * busy vCPU, a burst cut short by preemption) leaves it when its stale
 * entry reaches the top, so the heap stays as small as the number of
 * pending events. The true keys are mirrored in a compact array (key[])
 * so that checking the top does not touch the vCPU structures.
 */
#include "sim/sim.h"

#include <stdlib.h>

#define NO_EVENT	UINT64_MAX

/*
 * A 4-ary heap: half the depth of a binary one, and the smallest of four
 * siblings (adjacent in memory) is picked without branches, as which one
 * it is is a coin toss. Keys live in the heap array itself: sifting
 * touches no vCPU state.
 */
#define EVQ_ARITY	4

/* (time, index): equal times are rare, so the index test is a predictable branch. */
static inline bool before(const struct sim_evq_slot *a, const struct sim_evq_slot *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	return a->idx < b->idx;
}

static void place(struct sim *sim, unsigned int slot, struct sim_evq_slot e)
{
	sim->heap[slot] = e;
	sim->heap_pos[e.idx] = (int)slot;
}

static void sift_up(struct sim *sim, unsigned int slot)
{
	struct sim_evq_slot e = sim->heap[slot];

	while (slot) {
		unsigned int parent = (slot - 1) / EVQ_ARITY;

		if (!before(&e, &sim->heap[parent]))
			break;
		place(sim, slot, sim->heap[parent]);
		slot = parent;
	}
	place(sim, slot, e);
}

static void sift_down(struct sim *sim, unsigned int slot)
{
	struct sim_evq_slot *h = sim->heap, e = h[slot];
	unsigned int n = sim->heap_len, first;

	while ((first = EVQ_ARITY * slot + 1) < n) {
		unsigned int last = first + EVQ_ARITY < n ? first + EVQ_ARITY : n, m = first;

		for (unsigned int c = first + 1; c < last; c++)
			m = before(&h[c], &h[m]) ? c : m;
		if (!before(&h[m], &e))
			break;
		place(sim, slot, h[m]);
		slot = m;
	}
	place(sim, slot, e);
}

int evq_init(struct sim *sim, unsigned int n)
{
	sim->heap = calloc(n ? n : 1, sizeof(*sim->heap));
	sim->heap_pos = calloc(n ? n : 1, sizeof(*sim->heap_pos));
	sim->evq_key = calloc(n ? n : 1, sizeof(*sim->evq_key));
	if (!sim->heap || !sim->heap_pos || !sim->evq_key)
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		sim->heap_pos[i] = -1;
		sim->evq_key[i] = NO_EVENT;
	}
	sim->heap_len = 0;
	return 0;
}

void evq_free(struct sim *sim)
{
	free(sim->heap);
	free(sim->heap_pos);
	free(sim->evq_key);
	sim->heap = NULL;
	sim->heap_pos = NULL;
	sim->evq_key = NULL;
}

/*
 * vCPU idx changed its next_event. An earlier event moves up at once; a
 * later one is left in place with its old key, a lower bound, and fixed
 * when it reaches the top (lazy: most changes postpone an event, e.g. a
 * vCPU losing its pCPU, and most of those are moved again before then).
 */
void evq_update(struct sim *sim, unsigned int idx)
{
	int pos = sim->heap_pos[idx];
	struct sim_evq_slot e = { sim->vcpu[idx].next_event, idx };

	sim->evq_key[idx] = e.key;
	if (pos >= 0 && e.key >= sim->heap[pos].key)
		return;
	if (pos < 0) {
		if (e.key == NO_EVENT)
			return;
		pos = (int)sim->heap_len++;
	}
	place(sim, (unsigned int)pos, e);
	sift_up(sim, (unsigned int)pos);
}

/* Take the top out of the heap: its vCPU has no event any more. */
static void remove_top(struct sim *sim)
{
	sim->heap_pos[sim->heap[0].idx] = -1;
	if (--sim->heap_len) {
		place(sim, 0, sim->heap[sim->heap_len]);
		sift_down(sim, 0);
	}
}

/* The vCPU with the earliest event, or -1 if no vCPU has one. */
int evq_first(struct sim *sim)
{
	while (sim->heap_len) {
		struct sim_evq_slot *top = &sim->heap[0];
		uint64_t key = sim->evq_key[top->idx];

		if (top->key == key)
			return (int)top->idx;
		if (key == NO_EVENT) {
			remove_top(sim);
			continue;
		}
		top->key = key;	/* stale lower bound: settle it */
		sift_down(sim, 0);
	}
	return -1;
}
