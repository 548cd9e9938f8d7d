/*
 * backlog.c - a bounded FIFO of packet buffers between one capture thread
 * and any number of workers: a ring of pointers under one mutex, with one
 * condition for "not empty" and one for "not full".  Batches go in and out
 * under one lock each, with one signal, so a batch of packets costs what
 * one packet cost.
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
	unsigned int waiting; /* workers waiting in not_empty */
	bool wait_when_full;
	bool closed;
	void (*release)(struct sk_buff *skb, void *arg);
	void *release_arg;
	struct backlog_stats stats;
};

static void release_kfree(struct sk_buff *skb, void *arg)
{
	(void)arg;
	kfree_skb(skb);
}

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
	b->release = release_kfree;
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

void backlog_set_release(struct backlog *b,
			 void (*release)(struct sk_buff *skb, void *arg),
			 void *arg)
{
	b->release = release ? release : release_kfree;
	b->release_arg = arg;
}

void backlog_free(struct backlog *b)
{
	if (!b)
		return;
	while (b->count) {
		b->release(b->ring[b->head], b->release_arg);
		b->head = (b->head + 1) % b->max_len;
		b->count--;
	}
	pthread_cond_destroy(&b->not_full);
	pthread_cond_destroy(&b->not_empty);
	pthread_mutex_destroy(&b->lock);
	free(b->ring);
	free(b);
}

/* Under the lock: append what fits of @skbs, wake a worker if one waits. */
static unsigned int enqueue_locked(struct backlog *b, struct sk_buff **skbs,
				   unsigned int n)
{
	unsigned int room = b->closed ? 0 : b->max_len - b->count;
	unsigned int k = n < room ? n : room, i, tail;

	b->stats.received += n;
	b->stats.dropped += n - k;
	tail = (b->head + b->count) % b->max_len;
	for (i = 0; i < k; i++) {
		b->ring[tail] = skbs[i];
		tail = tail + 1 == b->max_len ? 0 : tail + 1;
	}
	b->count += k;
	b->stats.queued += k;
	if (b->count > b->stats.max_depth)
		b->stats.max_depth = b->count;
	/* one wake-up per batch; more only if there is work for more */
	if (k && b->waiting) {
		if (k > 1 && b->waiting > 1)
			pthread_cond_broadcast(&b->not_empty);
		else
			pthread_cond_signal(&b->not_empty);
	}
	return k;
}

/* Under the lock, wait mode: until @n more fit (or all there is has
 * gone, for a batch longer than the backlog) or the backlog closes. */
static void wait_for_room(struct backlog *b, unsigned int n)
{
	while (b->count && b->max_len - b->count < n && !b->closed)
		pthread_cond_wait(&b->not_full, &b->lock);
}

int netif_rx(struct backlog *b, struct sk_buff *skb)
{
	unsigned int k;

	pthread_mutex_lock(&b->lock);
	if (!skb) {
		/* NULL in the ring would read as "closed" to a worker */
		b->stats.received++;
		b->stats.dropped++;
		pthread_mutex_unlock(&b->lock);
		return NETIF_RX_DROP;
	}
	if (b->wait_when_full)
		wait_for_room(b, 1);
	k = enqueue_locked(b, &skb, 1);
	pthread_mutex_unlock(&b->lock);
	if (k)
		return NETIF_RX_SUCCESS;
	b->release(skb, b->release_arg);
	return NETIF_RX_DROP;
}

unsigned int netif_rx_list(struct backlog *b, struct sk_buff **skbs,
			   unsigned int n)
{
	unsigned int k;

	if (!n)
		return 0;
	pthread_mutex_lock(&b->lock);
	if (b->wait_when_full)
		wait_for_room(b, n);
	k = enqueue_locked(b, skbs, n);
	pthread_mutex_unlock(&b->lock);
	return k;
}

unsigned int backlog_dequeue_list(struct backlog *b, struct sk_buff **skbs,
				  unsigned int max)
{
	unsigned int n = 0;

	pthread_mutex_lock(&b->lock);
	while (b->count == 0 && !b->closed) {
		b->waiting++;
		pthread_cond_wait(&b->not_empty, &b->lock);
		b->waiting--;
	}
	while (n < max && b->count) {
		skbs[n++] = b->ring[b->head];
		b->ring[b->head] = NULL;
		b->head = b->head + 1 == b->max_len ? 0 : b->head + 1;
		b->count--;
	}
	b->stats.dequeued += n;
	if (n)
		pthread_cond_signal(&b->not_full);
	pthread_mutex_unlock(&b->lock);
	return n;
}

struct sk_buff *backlog_dequeue(struct backlog *b)
{
	struct sk_buff *skb;

	return backlog_dequeue_list(b, &skb, 1) ? skb : NULL;
}

unsigned int backlog_depth(struct backlog *b)
{
	unsigned int n;

	pthread_mutex_lock(&b->lock);
	n = b->count;
	pthread_mutex_unlock(&b->lock);
	return n;
}

void backlog_count_direct(struct backlog *b, unsigned int n)
{
	pthread_mutex_lock(&b->lock);
	b->stats.received += n;
	b->stats.queued += n;
	b->stats.dequeued += n;
	if (n && b->stats.max_depth < 1)
		b->stats.max_depth = 1;
	pthread_mutex_unlock(&b->lock);
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
