/*
 * pool.c - slots for packets in flight, recycled through per-thread caches
 * and a shared free list (pool.h says why).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

struct pkt_slot {
	struct sk_buff skb; /* first: a pooled skb is its slot */
	struct pkt_info info;
	struct pkt_slot *next;
	struct pkt_lender *lender; /* whose bytes skb wraps, or NULL */
	uint8_t data[POOL_SLOT_BYTES];
};

struct slab {
	struct slab *next;
	struct pkt_slot slots[POOL_BATCH];
};

struct pkt_pool {
	pthread_mutex_t lock;
	struct pkt_slot *free; /* linked through ->next */
	unsigned int nfree;
	struct slab *slabs;
};

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
	struct slab *s, *next;

	if (!pool)
		return;
	for (s = pool->slabs; s; s = next) {
		next = s->next;
		free(s);
	}
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

/* Fill an empty cache: a batch from the free list, or a new slab. */
static void refill(struct pkt_cache *c)
{
	struct pkt_pool *pool = c->pool;
	struct slab *s = NULL;
	unsigned int i;

	pthread_mutex_lock(&pool->lock);
	while (pool->free && c->n < POOL_BATCH) {
		struct pkt_slot *slot = pool->free;

		pool->free = slot->next;
		pool->nfree--;
		slot->next = c->list;
		c->list = slot;
		c->n++;
	}
	if (!c->n) {
		s = malloc(sizeof(*s));
		if (s) {
			s->next = pool->slabs;
			pool->slabs = s;
		}
	}
	pthread_mutex_unlock(&pool->lock);
	if (!s)
		return;
	for (i = 0; i < POOL_BATCH; i++) {
		s->slots[i].next = c->list;
		c->list = &s->slots[i];
		c->n++;
	}
}

struct sk_buff *pkt_pool_get(struct pkt_cache *c)
{
	struct pkt_slot *slot;
	struct pkt_cb *cb;

	if (!c->list)
		refill(c);
	slot = c->list;
	if (!slot)
		return NULL;
	c->list = slot->next;
	c->n--;
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

/* Give the pool back all but half a batch: one lock per batch. */
static void give_back(struct pkt_cache *c, unsigned int keep)
{
	struct pkt_pool *pool = c->pool;
	struct pkt_slot *first = c->list, *last = NULL;
	unsigned int n = 0;

	while (c->n > keep) {
		last = c->list;
		c->list = last->next;
		c->n--;
		n++;
	}
	if (!n)
		return;
	pthread_mutex_lock(&pool->lock);
	last->next = pool->free;
	pool->free = first;
	pool->nfree += n;
	pthread_mutex_unlock(&pool->lock);
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
	slot->next = c->list;
	c->list = slot;
	if (++c->n >= 2 * POOL_BATCH)
		give_back(c, POOL_BATCH);
}

void pkt_cache_flush(struct pkt_cache *c)
{
	pkt_cache_settle(c);
	if (c->pool)
		give_back(c, 0);
}
