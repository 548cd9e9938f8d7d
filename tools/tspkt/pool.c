/*
 * pool.c - slots for packets in flight, recycled through per-thread caches
 * and a shared free array (pool.h says why).
 */
#define _DEFAULT_SOURCE /* madvise() */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pool.h"

struct pkt_slot {
	struct sk_buff skb; /* first: a pooled skb is its slot */
	struct pkt_info info;
	struct pkt_lender *lender; /* whose bytes skb wraps, or NULL */
	uint8_t *data;		   /* POOL_SLOT_BYTES in its slab */
};

/* The slots side by side and their bytes after them: a slot that wraps
 * lent bytes never touches its own, so their pages are never faulted in,
 * and the slots in flight share pages (a slot with its bytes took a page
 * of its own, 45 page faults a slab). */
struct slab {
	struct pkt_slot slots[POOL_BATCH];
	uint8_t data[POOL_BATCH][POOL_SLOT_BYTES];
};

/* Slabs are carved from arenas of one huge page each, after a line that
 * links the arenas. */
struct arena {
	struct arena *next;
};
#define ARENA_HEAD 64u
#define SLABS_PER_ARENA ((PKT_HUGE_PAGE - ARENA_HEAD) / sizeof(struct slab))
_Static_assert(SLABS_PER_ARENA >= 1, "a slab fits an arena");

struct pkt_pool {
	pthread_mutex_t lock;
	struct pkt_slot **free; /* [0, nfree) */
	size_t nfree, room;	/* room: every slab's slots */
	struct arena *arenas;	/* the newest first */
	size_t carved;		/* slabs taken from the newest */
};

void *pkt_huge_alloc(size_t bytes)
{
	size_t size = (bytes + PKT_HUGE_PAGE - 1) & ~(PKT_HUGE_PAGE - 1);
	void *p;

	if (size < bytes || posix_memalign(&p, PKT_HUGE_PAGE, size))
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, size, MADV_HUGEPAGE); /* only a hint */
#endif
	return p;
}

struct pkt_pool *pkt_pool_new(void)
{
	struct pkt_pool *pool = calloc(1, sizeof(*pool));

	if (pool && pthread_mutex_init(&pool->lock, NULL)) {
		free(pool);
		pool = NULL;
	}
	return pool;
}

void pkt_pool_free(struct pkt_pool *pool)
{
	struct arena *a, *next;

	if (!pool)
		return;
	for (a = pool->arenas; a; a = next) {
		next = a->next;
		free(a);
	}
	free(pool->free);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

/* A new slab, with room in the free array for its slots to come back
 * (under the lock); NULL when out of memory. */
static struct slab *grow(struct pkt_pool *pool)
{
	struct pkt_slot **free_slots;

	if (!pool->arenas || pool->carved == SLABS_PER_ARENA) {
		struct arena *a = pkt_huge_alloc(PKT_HUGE_PAGE);

		if (!a)
			return NULL;
		a->next = pool->arenas;
		pool->arenas = a;
		pool->carved = 0;
	}
	free_slots = realloc(pool->free,
			     (pool->room + POOL_BATCH) * sizeof(*free_slots));
	if (!free_slots)
		return NULL;
	pool->free = free_slots;
	pool->room += POOL_BATCH;
	return (struct slab *)((char *)pool->arenas + ARENA_HEAD) +
	       pool->carved++;
}

/* Fill an empty cache: a batch from the free array, or a new slab. */
static void refill(struct pkt_cache *c)
{
	struct pkt_pool *pool = c->pool;
	unsigned int n, i;

	pthread_mutex_lock(&pool->lock);
	n = pool->nfree < POOL_BATCH ? (unsigned int)pool->nfree : POOL_BATCH;
	if (n) {
		pool->nfree -= n;
		memcpy(c->slot, pool->free + pool->nfree,
		       n * sizeof(c->slot[0]));
	} else {
		struct slab *s = grow(pool);

		for (i = 0; s && i < POOL_BATCH; i++) {
			s->slots[i].data = s->data[i];
			c->slot[n++] = &s->slots[i];
		}
	}
	c->n = n;
	pthread_mutex_unlock(&pool->lock);
}

/* The lines of a slot that taking it and pkt_skb_wrap() touch: the skb's
 * first two (pointers, lengths, headers, cb, nr_frags), and all from
 * frag_list through the pkt_info to the slot's end. */
static void prefetch_slot(struct pkt_slot *slot)
{
	const char *p = (const char *)&slot->skb.shinfo.frag_list;
	const char *end = (const char *)(slot + 1);

	__builtin_prefetch(&slot->skb, 1);
	__builtin_prefetch((const char *)&slot->skb + 64, 1);
	for (; p < end; p += 64)
		__builtin_prefetch(p, 1);
	__builtin_prefetch(end - 1, 1);
}

struct sk_buff *pkt_pool_get(struct pkt_cache *c)
{
	struct pkt_slot *slot;
	struct pkt_cb *cb;

	if (!c->n)
		refill(c);
	if (!c->n)
		return NULL;
	slot = c->slot[--c->n];
	/* a slot released by another thread has its lines there: the one
	 * two gets ahead is fetched while this one is filled */
	if (c->n >= 2)
		prefetch_slot(c->slot[c->n - 2]);
	slot->lender = NULL;
	slot->skb.head = slot->data;
	slot->skb.end = slot->data + POOL_SLOT_BYTES;
	cb = pkt_cb(&slot->skb);
	memset(cb, 0, sizeof(*cb));
	cb->info = &slot->info;
	cb->owner = PKT_POOL;
	return &slot->skb;
}

struct sk_buff *pkt_pool_get_lent(struct pkt_cache *c, struct pkt_lender *l)
{
	struct sk_buff *skb = pkt_pool_get(c);

	if (skb) {
		((struct pkt_slot *)(void *)skb)->lender = l;
		l->lent++;
	}
	return skb;
}

void pkt_cache_settle(struct pkt_cache *c)
{
	if (!c->back_n)
		return;
	/* release: the lender reuses the bytes only after our reads */
	atomic_fetch_add_explicit(&c->back_to->returned, c->back_n,
				  memory_order_release);
	c->back_to = NULL;
	c->back_n = 0;
}

/* Give the pool back all but @keep: one lock per batch. */
static void give_back(struct pkt_cache *c, unsigned int keep)
{
	struct pkt_pool *pool = c->pool;
	unsigned int n;

	if (c->n <= keep)
		return;
	n = c->n - keep;
	pthread_mutex_lock(&pool->lock);
	/* room for every slot of every slab: never full */
	memcpy(pool->free + pool->nfree, c->slot + keep,
	       n * sizeof(c->slot[0]));
	pool->nfree += n;
	pthread_mutex_unlock(&pool->lock);
	c->n = keep;
}

void pkt_release(struct pkt_cache *c, struct sk_buff *skb)
{
	struct pkt_slot *slot;

	if (!skb)
		return;
	if (pkt_cb(skb)->owner != PKT_POOL) {
		if (pkt_cb(skb)->owner == PKT_HEAP)
			kfree_skb(skb);
		return;
	}
	slot = (struct pkt_slot *)(void *)skb;
	if (slot->lender) {
		if (slot->lender != c->back_to) {
			pkt_cache_settle(c);
			c->back_to = slot->lender;
		}
		c->back_n++;
		slot->lender = NULL;
	}
	c->slot[c->n++] = slot;
	if (c->n == 2 * POOL_BATCH)
		give_back(c, POOL_BATCH);
}

void pkt_cache_flush(struct pkt_cache *c)
{
	pkt_cache_settle(c);
	if (c->pool)
		give_back(c, 0);
}
