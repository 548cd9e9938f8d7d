/*
 * test_tspkt_pool.c - tspkt's packet slots (tools/tspkt/pool.c): a slot is
 * never handed out twice while in flight, slots released on another
 * thread come back to the taker instead of the pool growing, lent
 * datagrams are counted back to their lender, and a flush returns all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

/* Slots taken at once in the one-thread test: five slabs, all their
 * slots, so that taking as many again can only find the same ones. */
#define MANY (5 * POOL_BATCH)
/* Datagrams passed from the taker to the releaser in the two-thread test,
 * and how many may be in flight between them at once. */
#define PASSED 200000u
#define IN_FLIGHT 300u
/* A slot's first bytes while it is in flight */
#define MARK 0x9e3779b97f4a7c15ull

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a;
	uintptr_t y = (uintptr_t) * (void *const *)b;

	return (x > y) - (x < y);
}

/* What pkt_pool_get() promises of a slot's buffer. */
static void check_fresh(struct sk_buff *skb)
{
	struct pkt_cb *cb = pkt_cb(skb);

	assert_non_null(skb);
	assert_ptr_equal(skb->end, skb->head + POOL_SLOT_BYTES);
	assert_int_equal(cb->owner, PKT_POOL);
	assert_non_null(cb->info);
	/* the info lies in the slot, past the skb */
	assert_true((uintptr_t)cb->info > (uintptr_t)skb);
	assert_true((uintptr_t)cb->info < (uintptr_t)skb->head);
}

static void test_one_thread(void **state)
{
	struct pkt_pool *pool = pkt_pool_new();
	struct pkt_cache c = { 0 };
	struct sk_buff *first[MANY], *again[MANY];
	unsigned int i;

	(void)state;
	assert_non_null(pool);
	c.pool = pool;
	for (i = 0; i < MANY; i++) {
		first[i] = pkt_pool_get(&c);
		check_fresh(first[i]);
		/* all of the slot's room is the caller's */
		memset(first[i]->head, 0xA5, POOL_SLOT_BYTES);
	}
	for (i = 0; i < MANY; i++)
		pkt_release(&c, first[i]);
	for (i = 0; i < MANY; i++) {
		again[i] = pkt_pool_get(&c);
		check_fresh(again[i]);
	}
	/* distinct, and the same slots: nothing new was allocated */
	qsort(first, MANY, sizeof(first[0]), cmp_ptr);
	qsort(again, MANY, sizeof(again[0]), cmp_ptr);
	for (i = 1; i < MANY; i++)
		assert_true(first[i - 1] != first[i]);
	for (i = 0; i < MANY; i++)
		assert_ptr_equal(first[i], again[i]);
	for (i = 0; i < MANY; i++)
		pkt_release(&c, again[i]);
	pkt_cache_flush(&c);
	assert_int_equal(c.n, 0);
	pkt_pool_free(pool);
}

static uint64_t get_mark(const struct sk_buff *skb)
{
	uint64_t m;

	memcpy(&m, skb->head, sizeof(m));
	return m;
}

static void set_mark(struct sk_buff *skb, uint64_t m)
{
	memcpy(skb->head, &m, sizeof(m));
}

/* The taker passes datagrams to the releaser through a bounded ring. */
struct relay {
	struct pkt_pool *pool;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sk_buff *ring[IN_FLIGHT];
	unsigned int head, count;
	bool done;
	struct pkt_lender lender;
	bool reused_in_flight;
};

static void *releaser(void *arg)
{
	struct relay *r = arg;
	struct pkt_cache c = { .pool = r->pool };
	unsigned int got = 0;

	for (;;) {
		struct sk_buff *skb;

		pthread_mutex_lock(&r->lock);
		while (!r->count && !r->done)
			pthread_cond_wait(&r->cond, &r->lock);
		if (!r->count) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		skb = r->ring[r->head];
		r->head = (r->head + 1) % IN_FLIGHT;
		r->count--;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		/* the taker marked it in flight; clear the mark, then let go */
		if (get_mark(skb) != MARK)
			r->reused_in_flight = true;
		set_mark(skb, 0);
		pkt_release(&c, skb);
		if (++got % 64 == 0)
			pkt_cache_settle(&c);
	}
	pkt_cache_flush(&c);
	return NULL;
}

static void test_two_threads(void **state)
{
	static struct relay r;
	struct pkt_cache c = { 0 };
	struct sk_buff **seen = calloc(PASSED, sizeof(*seen));
	size_t distinct = 1;
	pthread_t th;
	unsigned int i;

	(void)state;
	assert_non_null(seen);
	memset(&r, 0, sizeof(r));
	r.pool = pkt_pool_new();
	assert_non_null(r.pool);
	c.pool = r.pool;
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	assert_int_equal(pthread_create(&th, NULL, releaser, &r), 0);
	for (i = 0; i < PASSED; i++) {
		/* every other datagram lent, as the file reader's are */
		struct sk_buff *skb = i % 2 ? pkt_pool_get_lent(&c, &r.lender) :
					      pkt_pool_get(&c);

		check_fresh(skb);
		if (get_mark(skb) == MARK)
			r.reused_in_flight = true;
		set_mark(skb, MARK);
		seen[i] = skb;
		pthread_mutex_lock(&r.lock);
		while (r.count == IN_FLIGHT)
			pthread_cond_wait(&r.cond, &r.lock);
		r.ring[(r.head + r.count) % IN_FLIGHT] = skb;
		r.count++;
		pthread_cond_broadcast(&r.cond);
		pthread_mutex_unlock(&r.lock);
	}
	pthread_mutex_lock(&r.lock);
	r.done = true;
	pthread_cond_broadcast(&r.cond);
	pthread_mutex_unlock(&r.lock);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(r.reused_in_flight);
	/* every lent datagram counted back once the releaser settled */
	assert_int_equal(r.lender.lent, PASSED / 2);
	assert_false(pkt_lender_busy(&r.lender));
	/* the slots went round: bounded by what can be in flight and in
	 * the two caches, not by the datagrams passed */
	qsort(seen, PASSED, sizeof(seen[0]), cmp_ptr);
	for (i = 1; i < PASSED; i++)
		distinct += seen[i] != seen[i - 1];
	assert_true(distinct <= IN_FLIGHT + 6 * POOL_BATCH);
	pkt_cache_flush(&c);
	pkt_pool_free(r.pool);
	pthread_cond_destroy(&r.cond);
	pthread_mutex_destroy(&r.lock);
	free(seen);
}

/* A buffer that is not the pool's goes back as its owner says. */
static void test_release_other_owners(void **state)
{
	struct pkt_pool *pool = pkt_pool_new();
	struct pkt_cache c = { .pool = pool };
	struct sk_buff *heap = alloc_skb(64, GFP_KERNEL);
	struct sk_buff borrowed = { 0 };

	(void)state;
	assert_non_null(pool);
	assert_non_null(heap);
	pkt_cb(heap)->owner = PKT_HEAP;
	pkt_release(&c, heap); /* freed: ASan would see a leak otherwise */
	pkt_cb(&borrowed)->owner = PKT_BORROWED;
	pkt_release(&c, &borrowed);
	pkt_release(&c, NULL);
	assert_int_equal(c.n, 0);
	pkt_cache_flush(&c);
	pkt_pool_free(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_thread),
		cmocka_unit_test(test_two_threads),
		cmocka_unit_test(test_release_other_owners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
