/* SPDX-License-Identifier: MIT */
/*
 * The engine's containers: the ordered tree of the runqueues (tree.c), the
 * small sorted queue in front of it, intrusive lists and cache-line aligned
 * allocation. No scheduling policy here; internal.h builds on them.
 */
#ifndef CAPVISOR_SCHED_QUEUE_H
#define CAPVISOR_SCHED_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- treap */

/*
 * An ordered tree for the runqueues: a treap (random-priority BST with a
 * deterministic priority derived from the entity id) ordered by (key, id)
 * and augmented with the minimum `aux` of each subtree. Fair runqueues key
 * by virtual deadline and aggregate vruntime (what pick_eevdf() needs);
 * deadline runqueues key by absolute deadline. All operations O(log n)
 * expected.
 */
struct tnode {
	struct tnode *l, *r;
	uint64_t key, aux, min_aux;
	uint32_t prio, id;
};

struct treap {
	struct tnode *root;
	struct tnode *first;	/* cached leftmost, NULL when unknown */
	unsigned int nr;
};

void treap_insert(struct treap *t, struct tnode *n);
void treap_erase(struct treap *t, struct tnode *n);
struct tnode *treap_first(struct treap *t);
void tnode_init(struct tnode *n, uint32_t id);

/*
 * The fair runqueue's waiting entities in (key, id) order. A vCPU host has
 * a few of them per pCPU, where the treap's recursion and its coin-toss
 * branches cost more than they save: up to FQ_SMALL they sit in a sorted
 * array, beyond that in the treap, and back in the array once no more than
 * FQ_SMALL / 2 are left. Either way the same (key, id) order, so the pick
 * is the same; min_aux is kept in treap mode only. Nodes must not change
 * key or aux while queued (the fair class dequeues and enqueues around
 * such changes).
 */
#define FQ_SMALL	8		/* a power of two: the array is a ring */

struct fair_queue {
	unsigned int nr;
	unsigned int head;		/* array mode: a ring, the first at small[head] */
	bool big;			/* in the treap, else in small[] */
	struct treap tree;
	struct tnode *small[FQ_SMALL];
};

/* Array mode: the k-th node in order (the ring makes taking the first O(1)). */
static inline struct tnode *fq_at(const struct fair_queue *q, unsigned int k)
{
	return q->small[(q->head + k) & (FQ_SMALL - 1)];
}

void fq_insert(struct fair_queue *q, struct tnode *n);
void fq_erase(struct fair_queue *q, struct tnode *n);

static inline struct tnode *fq_first(struct fair_queue *q)
{
	if (q->big)
		return treap_first(&q->tree);
	return q->nr ? fq_at(q, 0) : NULL;
}

/* Wrap-safe ordering of u64 virtual times. */
static inline bool time_before64(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

/* --------------------------------------------------------------- lists */

struct slist {
	struct slist *prev, *next;
};

static inline void slist_init(struct slist *h)
{
	h->prev = h->next = h;
}

static inline bool slist_empty(const struct slist *h)
{
	return h->next == h;
}

static inline void slist_add_tail(struct slist *n, struct slist *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void slist_del(struct slist *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#define slist_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/*
 * Zeroed memory aligned to a cache line: the hot fields at the start of
 * entities and runqueues then take the fewest lines (malloc only aligns to
 * 16 bytes). Released with free().
 */
#define SCHED_CACHELINE	64

static inline void *sched_zalloc_aligned(size_t size)
{
	size_t rounded = (size + SCHED_CACHELINE - 1) & ~(size_t)(SCHED_CACHELINE - 1);
	void *p = aligned_alloc(SCHED_CACHELINE, rounded ? rounded : SCHED_CACHELINE);

	if (p)
		memset(p, 0, rounded);
	return p;
}

#endif /* CAPVISOR_SCHED_QUEUE_H */
