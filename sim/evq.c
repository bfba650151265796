// SPDX-License-Identifier: MIT
/*
 * The simulator's event queue: a tournament (winner) tree over the vCPUs,
 * keyed by (next_event, index). Leaf i holds vCPU i's next event; every
 * inner node holds the earlier of its two children, the left one on a tie,
 * and since the leaves are in index order that is the smaller index. The
 * root is the next event in O(1).
 *
 * An update walks from the leaf to the root, one compare per level, and
 * stops as soon as a node comes out unchanged (its ancestors cannot change
 * then): log2(n) steps at most, no branch on which child wins (a coin
 * toss), and no stale entries to settle later. Most updates are a vCPU
 * losing or getting a pCPU, so this is the simulator's hottest structure
 * after the engine itself; a heap paid for the same with several sifts per
 * event.
 */
#include "sim/sim.h"

#include <stdlib.h>

int evq_init(struct sim *sim, unsigned int n)
{
	unsigned int leaves = 1;

	while (leaves < n)
		leaves <<= 1;
	sim->evq = calloc(2 * (size_t)leaves, sizeof(*sim->evq));
	if (!sim->evq)
		return -1;
	sim->evq_leaves = leaves;
	for (unsigned int i = 0; i < leaves; i++) {
		sim->evq[leaves + i].key = SIM_NO_EVENT;
		sim->evq[leaves + i].idx = i;
	}
	for (unsigned int p = leaves - 1; p >= 1; p--)
		sim->evq[p] = sim->evq[2 * p];	/* all keys equal: the left child */
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

/* vCPU idx changed its next_event: replay its matches up to the root. */
void evq_update(struct sim *sim, unsigned int idx)
{
	struct sim_evq_slot *t = sim->evq;
	unsigned int p = sim->evq_leaves + idx;

	t[p].key = sim->vcpu[idx].next_event;
	for (p >>= 1; p; p >>= 1) {
		const struct sim_evq_slot *l = &t[2 * p], *r = l + 1;
		struct sim_evq_slot w = r->key < l->key ? *r : *l;

		if (w.key == t[p].key && w.idx == t[p].idx)
			break;
		t[p] = w;
	}
}
