// SPDX-License-Identifier: MIT
/*
 * The runqueue tree: a treap ordered by (key, id), augmented with the
 * minimum `aux` of each subtree (for pick_eevdf: min vruntime below a
 * node tells whether an eligible entity exists there).
 *
 * Priorities come from a hash of the entity id, so shapes are
 * deterministic; expected depth is O(log n) like an rbtree's worst case.
 */
#include "sched/internal.h"

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

void tnode_init(struct tnode *n, uint32_t id)
{
	n->l = n->r = NULL;
	n->key = n->aux = n->min_aux = 0;
	n->id = id;
	n->prio = hash32(id * 2654435761U + 0x9e3779b9U);
}

static bool node_before(const struct tnode *a, const struct tnode *b)
{
	if (a->key != b->key)
		return time_before64(a->key, b->key);
	return a->id < b->id;
}

static void node_update(struct tnode *n)
{
	uint64_t m = n->aux;

	if (n->l && time_before64(n->l->min_aux, m))
		m = n->l->min_aux;
	if (n->r && time_before64(n->r->min_aux, m))
		m = n->r->min_aux;
	n->min_aux = m;
}

/* Split t into nodes ordered before n (*l) and after it (*r). */
static void split(struct tnode *t, const struct tnode *n, struct tnode **l, struct tnode **r)
{
	if (!t) {
		*l = *r = NULL;
		return;
	}
	if (node_before(t, n)) {
		split(t->r, n, &t->r, r);
		*l = t;
	} else {
		split(t->l, n, l, &t->l);
		*r = t;
	}
	node_update(t);
}

static struct tnode *merge(struct tnode *l, struct tnode *r)
{
	if (!l)
		return r;
	if (!r)
		return l;
	if (l->prio > r->prio) {
		l->r = merge(l->r, r);
		node_update(l);
		return l;
	}
	r->l = merge(l, r->l);
	node_update(r);
	return r;
}

static struct tnode *insert(struct tnode *t, struct tnode *n)
{
	if (!t)
		return n;
	if (n->prio > t->prio) {
		split(t, n, &n->l, &n->r);
		node_update(n);
		return n;
	}
	if (node_before(n, t))
		t->l = insert(t->l, n);
	else
		t->r = insert(t->r, n);
	node_update(t);
	return t;
}

static struct tnode *erase(struct tnode *t, struct tnode *n)
{
	if (!t)
		return NULL;
	if (t == n) {
		struct tnode *m = merge(n->l, n->r);

		n->l = n->r = NULL;
		return m;
	}
	if (node_before(n, t))
		t->l = erase(t->l, n);
	else
		t->r = erase(t->r, n);
	node_update(t);
	return t;
}

void treap_insert(struct treap *t, struct tnode *n)
{
	n->l = n->r = NULL;
	n->min_aux = n->aux;
	t->root = insert(t->root, n);
	if (!t->nr++ || (t->first && node_before(n, t->first)))
		t->first = n;
}

void treap_erase(struct treap *t, struct tnode *n)
{
	t->root = erase(t->root, n);
	t->nr--;
	if (t->first == n)
		t->first = NULL;	/* found again on demand */
}

/* The leftmost node, cached (the pick asks for it at every decision). */
struct tnode *treap_first(struct treap *t)
{
	struct tnode *n = t->root;

	if (t->first || !n)
		return t->first;
	while (n->l)
		n = n->l;
	t->first = n;
	return n;
}

/* ---------------------------------------------------------------- fair queue */

static inline struct tnode **fq_slot(struct fair_queue *q, unsigned int k)
{
	return &q->small[(q->head + k) & (FQ_SMALL - 1)];
}

static void fq_to_tree(struct fair_queue *q)
{
	for (unsigned int i = 0; i < q->nr; i++)
		treap_insert(&q->tree, fq_at(q, i));
	q->big = true;
}

/* In-order walk of a treap of at most FQ_SMALL / 2 nodes into the array. */
static void fq_collect(struct tnode *n, struct fair_queue *q, unsigned int *i)
{
	if (!n)
		return;
	fq_collect(n->l, q, i);
	q->small[(*i)++] = n;
	fq_collect(n->r, q, i);
}

static void fq_to_small(struct fair_queue *q)
{
	unsigned int i = 0;

	fq_collect(q->tree.root, q, &i);
	for (unsigned int k = 0; k < i; k++)
		q->small[k]->l = q->small[k]->r = NULL;
	q->head = 0;
	q->tree.root = q->tree.first = NULL;
	q->tree.nr = 0;
	q->big = false;
}

void fq_insert(struct fair_queue *q, struct tnode *n)
{
	unsigned int i;

	if (!q->big && q->nr == FQ_SMALL)
		fq_to_tree(q);
	if (q->big) {
		treap_insert(&q->tree, n);
		q->nr++;
		return;
	}
	/* Insertion sort from the end: the search and the move in one loop. */
	for (i = q->nr; i > 0 && node_before(n, fq_at(q, i - 1)); i--)
		*fq_slot(q, i) = fq_at(q, i - 1);
	*fq_slot(q, i) = n;
	q->nr++;
}

void fq_erase(struct fair_queue *q, struct tnode *n)
{
	unsigned int j = 0;

	if (q->big) {
		treap_erase(&q->tree, n);
		if (--q->nr <= FQ_SMALL / 2)
			fq_to_small(q);
		return;
	}
	if (q->nr && fq_at(q, 0) == n) {	/* the pick's usual case: the first */
		q->head = (q->head + 1) & (FQ_SMALL - 1);
		q->nr--;
		return;
	}
	/*
	 * Keep every other entry, in order: one pass, no branch on where n
	 * is (a compiler would turn a plain shift loop into a memmove call).
	 */
	for (unsigned int i = 0; i < q->nr; i++) {
		struct tnode *e = fq_at(q, i);

		*fq_slot(q, j) = e;
		j += e != n;
	}
	q->nr = j;
}
