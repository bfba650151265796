// SPDX-License-Identifier: MIT
/*
 * The simulator's event queue: a tournament (winner) tree over the vCPUs,
 * keyed by (next_event, index). Leaf i holds vCPU i's next event; every
 * inner node holds the earlier of its two children (the smaller index on a
 * tie: both are in the packed word, see sim.h). The root is the next event
 * in O(1).
 *
 * An update walks from the leaf to the root, one compare per level:
 * log2(n) steps, no branch on which child wins (a coin toss), and no stale
 * entries to settle later. Most updates are a vCPU losing or getting a
 * pCPU, so this is the simulator's hottest structure after the engine
 * itself; a heap paid for the same with several sifts per event.
 */
#include "sim/sim.h"

#include <stdlib.h>

/* Longest time the key keeps (2^48 ns, 3.2 days: scenarios last at most one). */
#define EVQ_KEY_CAP	((1ull << (64 - EVQ_IDX_BITS)) - 1)

static uint64_t evq_pack(uint64_t key, unsigned int idx)
{
	if (key == SIM_NO_EVENT)
		return SIM_NO_EVENT;
	return (key < EVQ_KEY_CAP ? key : EVQ_KEY_CAP) << EVQ_IDX_BITS | idx;
}

int evq_init(struct sim *sim, unsigned int n)
{
	unsigned int leaves = 1;

	if (n > EVQ_IDX_MASK)
		return -1;
	while (leaves < n)
		leaves <<= 1;
	sim->evq = calloc(2 * (size_t)leaves, sizeof(*sim->evq));
	if (!sim->evq)
		return -1;
	sim->evq_leaves = leaves;
	for (unsigned int p = 1; p < 2 * leaves; p++)
		sim->evq[p] = SIM_NO_EVENT;
	for (unsigned int i = 0; i < n; i++)
		sim->vcpu[i].next_event = SIM_NO_EVENT;
	return 0;
}

void evq_free(struct sim *sim)
{
	free(sim->evq);
	sim->evq = NULL;
	sim->evq_leaves = 0;
}

/*
 * vCPU idx changed its next_event: replay its matches up to the root, a
 * minimum per level (a conditional move: which child wins is a coin toss)
 * and a fixed trip count, so no branch to mispredict.
 */
void evq_update(struct sim *sim, unsigned int idx)
{
	uint64_t *t = sim->evq, v = evq_pack(sim->vcpu[idx].next_event, idx);
	unsigned int p = sim->evq_leaves + idx;

	t[p] = v;
	for (; p > 1; p >>= 1) {
		uint64_t sibling = t[p ^ 1];

		v = sibling < v ? sibling : v;
		t[p >> 1] = v;
	}
}
