/*
 * backlog.c - a bounded FIFO of packet buffers between one capture thread
 * and any number of workers: a ring of pointers under one mutex, with one
 * condition for "not empty" and one for "not full".
 */
#include "backlog.h"

#include <pthread.h>
#include <stdlib.h>

struct backlog {
	pthread_mutex_t lock;
	pthread_cond_t not_empty; /* workers wait here */
	pthread_cond_t not_full;  /* netif_rx() waits here (wait mode) */
	struct sk_buff **ring;
	unsigned int max_len;
	unsigned int head; /* oldest packet */
	unsigned int count;
	bool wait_when_full;
	bool closed;
	struct backlog_stats stats;
};

struct backlog *backlog_new(unsigned int max_len, bool wait_when_full)
{
	struct backlog *b;

	if (max_len == 0)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->ring = calloc(max_len, sizeof(*b->ring));
	if (!b->ring)
		goto fail_ring;
	if (pthread_mutex_init(&b->lock, NULL))
		goto fail_lock;
	if (pthread_cond_init(&b->not_empty, NULL))
		goto fail_not_empty;
	if (pthread_cond_init(&b->not_full, NULL))
		goto fail_not_full;
	b->max_len = max_len;
	b->wait_when_full = wait_when_full;
	return b;

fail_not_full:
	pthread_cond_destroy(&b->not_empty);
fail_not_empty:
	pthread_mutex_destroy(&b->lock);
fail_lock:
	free(b->ring);
fail_ring:
	free(b);
	return NULL;
}

void backlog_free(struct backlog *b)
{
	if (!b)
		return;
	while (b->count) {
		kfree_skb(b->ring[b->head]);
		b->head = (b->head + 1) % b->max_len;
		b->count--;
	}
	pthread_cond_destroy(&b->not_full);
	pthread_cond_destroy(&b->not_empty);
	pthread_mutex_destroy(&b->lock);
	free(b->ring);
	free(b);
}

int netif_rx(struct backlog *b, struct sk_buff *skb)
{
	pthread_mutex_lock(&b->lock);
	b->stats.received++;
	if (!skb) {
		/* NULL in the ring would read as "closed" to a worker */
		b->stats.dropped++;
		pthread_mutex_unlock(&b->lock);
		return NETIF_RX_DROP;
	}
	if (b->wait_when_full) {
		while (b->count == b->max_len && !b->closed)
			pthread_cond_wait(&b->not_full, &b->lock);
	}
	if (b->count == b->max_len || b->closed) {
		b->stats.dropped++;
		pthread_mutex_unlock(&b->lock);
		kfree_skb(skb);
		return NETIF_RX_DROP;
	}
	b->ring[(b->head + b->count) % b->max_len] = skb;
	b->count++;
	b->stats.queued++;
	if (b->count > b->stats.max_depth)
		b->stats.max_depth = b->count;
	pthread_cond_signal(&b->not_empty);
	pthread_mutex_unlock(&b->lock);
	return NETIF_RX_SUCCESS;
}

struct sk_buff *backlog_dequeue(struct backlog *b)
{
	struct sk_buff *skb = NULL;

	pthread_mutex_lock(&b->lock);
	while (b->count == 0 && !b->closed)
		pthread_cond_wait(&b->not_empty, &b->lock);
	if (b->count) {
		skb = b->ring[b->head];
		b->ring[b->head] = NULL;
		b->head = (b->head + 1) % b->max_len;
		b->count--;
		b->stats.dequeued++;
		pthread_cond_signal(&b->not_full);
	}
	pthread_mutex_unlock(&b->lock);
	return skb;
}

void backlog_close(struct backlog *b)
{
	pthread_mutex_lock(&b->lock);
	b->closed = true;
	/* workers drain what is queued, then see NULL; a producer waiting for
	 * room gives up and drops */
	pthread_cond_broadcast(&b->not_empty);
	pthread_cond_broadcast(&b->not_full);
	pthread_mutex_unlock(&b->lock);
}

void backlog_get_stats(struct backlog *b, struct backlog_stats *stats)
{
	pthread_mutex_lock(&b->lock);
	*stats = b->stats;
	pthread_mutex_unlock(&b->lock);
}
