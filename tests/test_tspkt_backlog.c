/*
 * test_tspkt_backlog.c - tspkt's netif_rx() backlog: tail drop against a
 * slow consumer (the counters add up, FIFO order, nothing twice), wait mode
 * (nothing lost), several consumers, and close waking every waiter; and
 * the same in batches: tail drop within a batch, wait mode waiting for a
 * whole batch, several consumers taking lists.
 * Each packet carries its sequence number as its only 8 bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backlog.h"

#define MAX_CONSUMERS 4

static struct sk_buff *make_packet(uint64_t seq)
{
	struct sk_buff *skb = alloc_skb(sizeof(seq), GFP_KERNEL);

	assert_non_null(skb);
	assert_non_null(skb_put_data(skb, &seq, sizeof(seq)));
	return skb;
}

static uint64_t packet_seq(const struct sk_buff *skb)
{
	uint64_t seq;

	assert_int_equal(skb_copy_bits(skb, 0, &seq, sizeof(seq)), 0);
	return seq;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

struct consumer {
	struct backlog *backlog;
	long pause_every; /* sleep 1 ms after this many packets; 0: never */
	uint64_t *seen;	  /* sequence numbers, in the order received */
	size_t nseen;
	bool out_of_order;
	atomic_bool done;
};

static void *consume(void *arg)
{
	struct consumer *c = arg;
	struct sk_buff *skb;
	uint64_t seq;

	while ((skb = backlog_dequeue(c->backlog))) {
		seq = packet_seq(skb);
		/* one lock serves the queue, so each worker sees a rising
		 * sequence */
		if (c->nseen && seq <= c->seen[c->nseen - 1])
			c->out_of_order = true;
		c->seen[c->nseen++] = seq;
		kfree_skb(skb);
		if (c->pause_every && c->nseen % (size_t)c->pause_every == 0)
			sleep_us(1000);
	}
	atomic_store(&c->done, true);
	return NULL;
}

/* Run @nconsumers workers against @count packets sent as fast as
 * possible; check the counters and that every packet arrived at most once.
 * Returns how many arrived. */
static uint64_t run(struct backlog *b, unsigned int nconsumers,
		    long pause_every, uint64_t count, bool expect_all)
{
	struct consumer cons[MAX_CONSUMERS];
	pthread_t tid[MAX_CONSUMERS];
	struct backlog_stats st;
	uint8_t *arrived = calloc(count, 1);
	uint64_t seq, total = 0, sent_ok = 0;
	unsigned int i;
	size_t k;

	assert_non_null(arrived);
	for (i = 0; i < nconsumers; i++) {
		cons[i] = (struct consumer){ .backlog = b,
					     .pause_every = pause_every };
		cons[i].seen = calloc(count, sizeof(uint64_t));
		assert_non_null(cons[i].seen);
		atomic_init(&cons[i].done, false);
		assert_int_equal(
			pthread_create(&tid[i], NULL, consume, &cons[i]), 0);
	}
	for (seq = 0; seq < count; seq++)
		if (netif_rx(b, make_packet(seq)) == NETIF_RX_SUCCESS)
			sent_ok++;
	backlog_close(b);
	for (i = 0; i < nconsumers; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);

	for (i = 0; i < nconsumers; i++) {
		assert_false(cons[i].out_of_order);
		for (k = 0; k < cons[i].nseen; k++) {
			seq = cons[i].seen[k];
			assert_true(seq < count);
			assert_int_equal(arrived[seq], 0); /* never twice */
			arrived[seq] = 1;
		}
		total += cons[i].nseen;
		free(cons[i].seen);
	}
	backlog_get_stats(b, &st);
	assert_int_equal(st.received, count);
	assert_int_equal(st.queued + st.dropped, st.received);
	assert_int_equal(st.queued, sent_ok);
	assert_int_equal(st.dequeued, st.queued);
	assert_int_equal(total, st.dequeued);
	assert_true(st.max_depth >= 1);
	if (expect_all) {
		assert_int_equal(st.dropped, 0);
		for (seq = 0; seq < count; seq++)
			assert_int_equal(arrived[seq], 1);
	}
	free(arrived);
	return total;
}

static void test_drop_slow_consumer(void **state)
{
	struct backlog *b = backlog_new(16, false);
	struct backlog_stats st;

	(void)state;
	assert_non_null(b);
	run(b, 1, 20, 5000, false);
	backlog_get_stats(b, &st);
	/* the consumer sleeps 1 ms per 20 packets: the producer must have
	 * overrun the 16 slots */
	assert_true(st.dropped > 0);
	assert_true(st.max_depth <= 16);
	assert_int_equal(st.max_depth, 16);
	backlog_free(b);
}

static void test_wait_mode_loses_nothing(void **state)
{
	struct backlog *b = backlog_new(8, true);
	struct backlog_stats st;

	(void)state;
	assert_non_null(b);
	assert_int_equal(run(b, 1, 50, 3000, true), 3000);
	backlog_get_stats(b, &st);
	assert_true(st.max_depth <= 8);
	backlog_free(b);
}

static void test_several_consumers(void **state)
{
	struct backlog *b;

	(void)state;
	b = backlog_new(32, true);
	assert_non_null(b);
	assert_int_equal(run(b, MAX_CONSUMERS, 100, 20000, true), 20000);
	backlog_free(b);

	b = backlog_new(4, false);
	assert_non_null(b);
	run(b, 3, 10, 4000, false);
	backlog_free(b);
}

static void test_close_wakes_consumers(void **state)
{
	struct consumer cons[MAX_CONSUMERS];
	pthread_t tid[MAX_CONSUMERS];
	struct backlog *b = backlog_new(4, false);
	uint64_t seen[1];
	unsigned int i, woken = 0;
	int waited;

	(void)state;
	assert_non_null(b);
	for (i = 0; i < MAX_CONSUMERS; i++) {
		cons[i] = (struct consumer){ .backlog = b, .seen = seen };
		atomic_init(&cons[i].done, false);
		assert_int_equal(
			pthread_create(&tid[i], NULL, consume, &cons[i]), 0);
	}
	sleep_us(20000);
	for (i = 0; i < MAX_CONSUMERS; i++)
		assert_false(atomic_load(&cons[i].done)); /* still waiting */
	backlog_close(b);
	for (waited = 0; waited < 5000 && woken < MAX_CONSUMERS; waited++) {
		sleep_us(1000);
		for (woken = 0, i = 0; i < MAX_CONSUMERS; i++)
			woken += atomic_load(&cons[i].done);
	}
	assert_int_equal(woken, MAX_CONSUMERS);
	for (i = 0; i < MAX_CONSUMERS; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		assert_int_equal(cons[i].nseen, 0);
	}
	/* closed: refused and freed (ASan's leak checker watches) */
	assert_int_equal(netif_rx(b, make_packet(1)), NETIF_RX_DROP);
	assert_null(backlog_dequeue(b));
	backlog_free(b);
}

struct blocked_producer {
	struct backlog *backlog;
	int result;
	atomic_bool done;
};

static void *produce_one(void *arg)
{
	struct blocked_producer *p = arg;

	p->result = netif_rx(p->backlog, make_packet(2));
	atomic_store(&p->done, true);
	return NULL;
}

static void test_close_wakes_waiting_producer(void **state)
{
	struct blocked_producer p;
	pthread_t tid;
	struct backlog_stats st;
	int waited;

	(void)state;
	p.backlog = backlog_new(1, true);
	assert_non_null(p.backlog);
	atomic_init(&p.done, false);
	assert_int_equal(netif_rx(p.backlog, make_packet(1)), NETIF_RX_SUCCESS);
	assert_int_equal(pthread_create(&tid, NULL, produce_one, &p), 0);
	sleep_us(20000);
	assert_false(atomic_load(&p.done)); /* full: it waits for room */
	backlog_close(p.backlog);
	for (waited = 0; waited < 5000 && !atomic_load(&p.done); waited++)
		sleep_us(1000);
	assert_true(atomic_load(&p.done));
	assert_int_equal(pthread_join(tid, NULL), 0);
	assert_int_equal(p.result, NETIF_RX_DROP);
	backlog_get_stats(p.backlog, &st);
	assert_int_equal(st.received, 2);
	assert_int_equal(st.queued, 1);
	assert_int_equal(st.dropped, 1);
	/* the packet queued before close is still delivered */
	{
		struct sk_buff *skb = backlog_dequeue(p.backlog);

		assert_non_null(skb);
		assert_int_equal(packet_seq(skb), 1);
		kfree_skb(skb);
	}
	assert_null(backlog_dequeue(p.backlog));
	backlog_free(p.backlog);
}

static void test_free_releases_queued(void **state)
{
	struct backlog *b = backlog_new(BACKLOG_DEFAULT_MAX, false);
	struct backlog_stats st;
	uint64_t seq;

	(void)state;
	assert_null(backlog_new(0, false));
	assert_non_null(b);
	assert_int_equal(netif_rx(b, NULL), NETIF_RX_DROP);
	for (seq = 0; seq < BACKLOG_DEFAULT_MAX + 5; seq++)
		netif_rx(b, make_packet(seq));
	backlog_get_stats(b, &st);
	assert_int_equal(st.queued, BACKLOG_DEFAULT_MAX);
	assert_int_equal(st.dropped, 5 + 1); /* and the NULL */
	assert_int_equal(st.max_depth, BACKLOG_DEFAULT_MAX);
	/* a ring that wrapped: take 10, add 10, all still in order */
	for (seq = 0; seq < 10; seq++) {
		struct sk_buff *skb = backlog_dequeue(b);

		assert_int_equal(packet_seq(skb), seq);
		kfree_skb(skb);
		assert_int_equal(netif_rx(b, make_packet(5000 + seq)),
				 NETIF_RX_SUCCESS);
	}
	backlog_free(b); /* frees the 1000 still queued */
}

/* ---- batches ---------------------------------------------------------------- */

struct list_consumer {
	struct backlog *backlog;
	unsigned int take; /* most packets per backlog_dequeue_list() */
	uint64_t *seen;
	size_t nseen;
	bool out_of_order, too_many;
};

static void *consume_lists(void *arg)
{
	struct list_consumer *c = arg;
	struct sk_buff *skbs[16];
	unsigned int n, i;

	while ((n = backlog_dequeue_list(c->backlog, skbs, c->take))) {
		if (n > c->take)
			c->too_many = true;
		for (i = 0; i < n; i++) {
			uint64_t seq = packet_seq(skbs[i]);

			if (c->nseen && seq <= c->seen[c->nseen - 1])
				c->out_of_order = true;
			c->seen[c->nseen++] = seq;
			kfree_skb(skbs[i]);
		}
		if (c->nseen % 7 == 0)
			sleep_us(200);
	}
	return NULL;
}

/*
 * Batches in (netif_rx_list, @batch at a time) and out (up to @take at a
 * time) with @nconsumers consumers: each sees a rising sequence, nothing
 * twice, the counters add up per packet.  Returns the packets dropped.
 */
static uint64_t run_lists(struct backlog *b, unsigned int nconsumers,
			  unsigned int batch, unsigned int take, uint64_t count,
			  bool expect_all)
{
	struct list_consumer cons[MAX_CONSUMERS];
	pthread_t tid[MAX_CONSUMERS];
	struct backlog_stats st;
	struct sk_buff *skbs[64];
	uint8_t *arrived = calloc(count, 1);
	uint64_t seq = 0, total = 0, sent_ok = 0;
	unsigned int i, n, k;
	size_t j;

	assert_non_null(arrived);
	assert_true(batch <= 64 && take <= 16);
	for (i = 0; i < nconsumers; i++) {
		cons[i] = (struct list_consumer){ .backlog = b, .take = take };
		cons[i].seen = calloc(count, sizeof(uint64_t));
		assert_non_null(cons[i].seen);
		assert_int_equal(pthread_create(&tid[i], NULL, consume_lists,
						&cons[i]),
				 0);
	}
	while (seq < count) {
		n = count - seq < batch ? (unsigned int)(count - seq) : batch;
		for (i = 0; i < n; i++)
			skbs[i] = make_packet(seq + i);
		k = netif_rx_list(b, skbs, n);
		assert_true(k <= n);
		/* the first k are queued; the rest are still ours */
		for (i = k; i < n; i++)
			kfree_skb(skbs[i]);
		sent_ok += k;
		seq += n;
	}
	backlog_close(b);
	for (i = 0; i < nconsumers; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);
	for (i = 0; i < nconsumers; i++) {
		assert_false(cons[i].out_of_order);
		assert_false(cons[i].too_many);
		for (j = 0; j < cons[i].nseen; j++) {
			assert_true(cons[i].seen[j] < count);
			assert_int_equal(arrived[cons[i].seen[j]], 0);
			arrived[cons[i].seen[j]] = 1;
		}
		total += cons[i].nseen;
		free(cons[i].seen);
	}
	backlog_get_stats(b, &st);
	assert_int_equal(st.received, count);
	assert_int_equal(st.queued + st.dropped, st.received);
	assert_int_equal(st.queued, sent_ok);
	assert_int_equal(st.dequeued, st.queued);
	assert_int_equal(total, st.queued);
	if (expect_all) {
		assert_int_equal(st.dropped, 0);
		for (seq = 0; seq < count; seq++)
			assert_int_equal(arrived[seq], 1);
	}
	free(arrived);
	return st.dropped;
}

/* A batch is tail-dropped where single packets would be: at the depth
 * the backlog's length allows, the first ones kept, in order. */
static void test_batch_tail_drop(void **state)
{
	struct backlog *b = backlog_new(10, false);
	struct backlog_stats st;
	struct sk_buff *in[8], *out[16];
	unsigned int i, k, n;

	(void)state;
	assert_non_null(b);
	assert_int_equal(netif_rx_list(b, in, 0), 0);
	for (i = 0; i < 8; i++)
		in[i] = make_packet(i);
	assert_int_equal(netif_rx_list(b, in, 8), 8);
	for (i = 0; i < 8; i++)
		in[i] = make_packet(100 + i);
	k = netif_rx_list(b, in, 8);
	assert_int_equal(k, 2); /* room for 2 of 8 */
	for (i = k; i < 8; i++)
		kfree_skb(in[i]);
	backlog_get_stats(b, &st);
	assert_int_equal(st.received, 16);
	assert_int_equal(st.queued, 10);
	assert_int_equal(st.dropped, 6);
	assert_int_equal(st.max_depth, 10);
	assert_int_equal(backlog_depth(b), 10);
	/* a full backlog refuses a single packet as it did */
	assert_int_equal(netif_rx(b, make_packet(999)), NETIF_RX_DROP);
	/* out in order, at most as many as asked */
	n = backlog_dequeue_list(b, out, 3);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++) {
		assert_int_equal(packet_seq(out[i]), i);
		kfree_skb(out[i]);
	}
	n = backlog_dequeue_list(b, out, 16);
	assert_int_equal(n, 7);
	for (i = 0; i < n; i++) {
		assert_int_equal(packet_seq(out[i]), i < 5 ? i + 3 : 95 + i);
		kfree_skb(out[i]);
	}
	/* the reader's own classifying counts as passing through */
	backlog_count_direct(b, 5);
	backlog_get_stats(b, &st);
	assert_int_equal(st.received, 17 + 5);
	assert_int_equal(st.queued, 15);
	assert_int_equal(st.dequeued, 15);
	assert_int_equal(st.dropped, 7);
	/* closed: a batch is refused whole, and left to the caller */
	backlog_close(b);
	for (i = 0; i < 3; i++)
		in[i] = make_packet(i);
	assert_int_equal(netif_rx_list(b, in, 3), 0);
	for (i = 0; i < 3; i++)
		kfree_skb(in[i]);
	assert_int_equal(backlog_dequeue_list(b, out, 16), 0);
	backlog_get_stats(b, &st);
	assert_int_equal(st.dropped, 10);
	backlog_free(b);
}

static void test_batches_drop_and_wait(void **state)
{
	struct backlog *b;

	(void)state;
	/* wait mode: a batch waits for room for all of it; none lost */
	b = backlog_new(16, true);
	assert_non_null(b);
	run_lists(b, 3, 7, 5, 5000, true);
	backlog_free(b);
	/* a batch as long as the backlog */
	b = backlog_new(16, true);
	assert_non_null(b);
	run_lists(b, 2, 16, 16, 3000, true);
	backlog_free(b);
	/* drop mode against slow consumers: parts of batches dropped */
	b = backlog_new(20, false);
	assert_non_null(b);
	assert_true(run_lists(b, 1, 64, 3, 5000, false) > 0);
	backlog_free(b);
}

static void count_release(struct sk_buff *skb, void *arg)
{
	(*(unsigned int *)arg)++;
	kfree_skb(skb);
}

/* Packets the backlog frees go through the owner's release function. */
static void test_release_function(void **state)
{
	struct backlog *b = backlog_new(2, false);
	unsigned int i, released = 0;

	(void)state;
	assert_non_null(b);
	backlog_set_release(b, count_release, &released);
	for (i = 0; i < 3; i++)
		netif_rx(b, make_packet(i)); /* the third is dropped */
	assert_int_equal(released, 1);
	backlog_free(b); /* and the two queued */
	assert_int_equal(released, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_slow_consumer),
		cmocka_unit_test(test_wait_mode_loses_nothing),
		cmocka_unit_test(test_several_consumers),
		cmocka_unit_test(test_close_wakes_consumers),
		cmocka_unit_test(test_close_wakes_waiting_producer),
		cmocka_unit_test(test_free_releases_queued),
		cmocka_unit_test(test_batch_tail_drop),
		cmocka_unit_test(test_batches_drop_and_wait),
		cmocka_unit_test(test_release_function),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
