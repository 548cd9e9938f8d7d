/*
 * test_tspkt_flow.c - tspkt's flow table (tools/tspkt/flow.c): both
 * directions of a 5-tuple are one flow, eviction takes the flow idle
 * longest, each state's time-out fires on the timer wheel neither early
 * nor late by more than its level's granularity, a RST or the second FIN
 * ends a flow once and keeps it closed for its time-out, and closing a
 * flow from inside its own expiry takes try_to_del_timer_sync()'s -1 path
 * (the expiry frees it, once).  A million idle flows fit in 256 MB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

#define MAX_ENDS 64

struct ended {
	struct flow_key key;
	enum flow_end why;
	unsigned long at; /* jiffies */
	uint64_t packets;
};

struct world {
	struct timer_base *base;
	struct flow_table *t;
	struct ended ends[MAX_ENDS];
	unsigned int nends;
	/* the -n test: end every flow from inside the first end */
	bool end_all_from_end;
	unsigned long end_count;
};

static void on_end(struct flow *f, enum flow_end why, void *arg)
{
	struct world *w = arg;

	w->end_count++;
	if (w->nends < MAX_ENDS) {
		struct ended *e = &w->ends[w->nends++];

		e->key = f->key;
		e->why = why;
		e->at = jiffies;
		e->packets = f->packets;
	}
	if (w->end_all_from_end) {
		w->end_all_from_end = false;
		flow_table_end_all(w->t, FLOW_END_CAPTURE);
	}
}

static const struct flow_ops ops = { .end = on_end };

static struct world *world_new(unsigned int hz, size_t max_flows)
{
	struct world *w = calloc(1, sizeof(*w));
	struct flow_timeouts to = FLOW_TIMEOUTS_DEFAULT;

	assert_non_null(w);
	w->base = timer_base_create(hz);
	assert_false(IS_ERR(w->base));
	timer_base_bind(w->base);
	w->t = flow_table_new(max_flows, w->base, &to, &ops, w);
	assert_non_null(w->t);
	return w;
}

static void world_free(struct world *w)
{
	flow_table_free(w->t);
	timer_base_destroy(w->base);
	free(w);
}

static void addr4(uint8_t *a, const char *s)
{
	memset(a, 0, 16);
	assert_int_equal(inet_pton(AF_INET, s, a), 1);
}

static struct flow *get4(struct world *w, const char *src, const char *dst,
			 uint16_t sport, uint16_t dport, uint8_t proto,
			 int *dir)
{
	uint8_t s[16], d[16];
	struct flow *f;

	addr4(s, src);
	addr4(d, dst);
	f = flow_lookup(w->t, 4, proto, s, d, sport, dport, dir);
	assert_non_null(f);
	return f;
}

/* Advance the clock by @secs seconds, a jiffy at a time near the end so
 * that the moment of each expiry is seen. */
static void run_for(struct world *w, unsigned long secs)
{
	timer_base_run(w->base, jiffies + secs * HZ);
}

static void both_directions_one_flow(void **unused)
{
	struct world *w = world_new(250, 100);
	int d1, d2, d3;
	struct flow *a =
		get4(w, "10.0.0.1", "10.0.0.2", 1234, 80, IPPROTO_TCP, &d1);
	struct flow *b =
		get4(w, "10.0.0.2", "10.0.0.1", 80, 1234, IPPROTO_TCP, &d2);
	struct flow *c =
		get4(w, "10.0.0.2", "10.0.0.1", 80, 1234, IPPROTO_UDP, &d3);
	uint8_t s6[16], d6[16];
	struct flow *v6a, *v6b;

	(void)unused;
	assert_ptr_equal(a, b);
	assert_int_not_equal(d1, d2);
	assert_ptr_not_equal(a, c); /* another protocol, another flow */
	/* same addresses, ports swapped between directions only */
	assert_ptr_not_equal(a, get4(w, "10.0.0.1", "10.0.0.2", 1235, 80,
				     IPPROTO_TCP, &d3));
	/* one host talking to itself: the ports tell the directions */
	v6a = get4(w, "10.0.0.9", "10.0.0.9", 5000, 6000, IPPROTO_TCP, &d1);
	v6b = get4(w, "10.0.0.9", "10.0.0.9", 6000, 5000, IPPROTO_TCP, &d2);
	assert_ptr_equal(v6a, v6b);
	assert_int_not_equal(d1, d2);
	inet_pton(AF_INET6, "fd00::1", s6);
	inet_pton(AF_INET6, "fd00::2", d6);
	v6a = flow_lookup(w->t, 6, IPPROTO_TCP, s6, d6, 1, 2, &d1);
	v6b = flow_lookup(w->t, 6, IPPROTO_TCP, d6, s6, 2, 1, &d2);
	assert_non_null(v6a);
	assert_ptr_equal(v6a, v6b);
	assert_int_not_equal(d1, d2);
	assert_int_equal(flow_table_stats(w->t)->active, 5);
	world_free(w);
}

static void eviction_takes_the_idle_longest(void **unused)
{
	struct world *w = world_new(1000, 3);
	int dir;
	struct flow *f[4];

	(void)unused;
	f[0] = get4(w, "10.0.0.1", "10.0.1.1", 1, 1, IPPROTO_UDP, &dir);
	flow_packet(w->t, f[0], dir, 100, 0);
	f[1] = get4(w, "10.0.0.1", "10.0.1.2", 1, 1, IPPROTO_UDP, &dir);
	flow_packet(w->t, f[1], dir, 100, 0);
	f[2] = get4(w, "10.0.0.1", "10.0.1.3", 1, 1, IPPROTO_UDP, &dir);
	flow_packet(w->t, f[2], dir, 100, 0);
	/* a packet on the first, seconds later, makes the second the idle
	 * longest (the order is kept to the second) */
	run_for(w, 2);
	flow_packet(w->t, f[0], dir, 100, 0);
	f[3] = get4(w, "10.0.0.1", "10.0.1.4", 1, 1, IPPROTO_UDP, &dir);
	assert_int_equal(w->nends, 1);
	assert_int_equal(w->ends[0].why, FLOW_END_EVICTED);
	assert_int_equal(w->ends[0].key.proto, IPPROTO_UDP);
	assert_int_equal(flow_table_stats(w->t)->ended[FLOW_END_EVICTED], 1);
	assert_int_equal(flow_table_stats(w->t)->active, 3);
	assert_int_equal(flow_table_stats(w->t)->del_removed, 1);
	/* the evicted one was 10.0.1.2 */
	{
		uint8_t want[16];

		addr4(want, "10.0.1.2");
		assert_true(!memcmp(w->ends[0].key.addr[0], want, 4) ||
			    !memcmp(w->ends[0].key.addr[1], want, 4));
	}
	world_free(w);
}

/* Each state's time-out, at several HZ: never early, late by at most
 * the granularity of the wheel level the time-out falls in (1/8 of it
 * is a safe upper bound for a non-cascading wheel with 8x levels). */
static void timeouts_per_state(void **unused)
{
	static const unsigned int hzs[] = { 100, 250, 300, 1000 };

	(void)unused;
	for (unsigned int h = 0; h < 4; h++) {
		struct world *w = world_new(hzs[h], 100);
		struct flow_timeouts to = FLOW_TIMEOUTS_DEFAULT;
		int dir, back;
		struct flow *udp_new, *udp_est, *tcp_new, *tcp_est;
		unsigned long t0 = jiffies, want[4];

		udp_new = get4(w, "10.0.0.1", "10.0.0.2", 1, 2, IPPROTO_UDP,
			       &dir);
		flow_packet(w->t, udp_new, dir, 10, 0);
		udp_est = get4(w, "10.0.0.1", "10.0.0.3", 1, 2, IPPROTO_UDP,
			       &dir);
		flow_packet(w->t, udp_est, dir, 10, 0);
		get4(w, "10.0.0.3", "10.0.0.1", 2, 1, IPPROTO_UDP, &back);
		assert_int_equal(flow_packet(w->t, udp_est, back, 10, 0),
				 FLOW_ESTABLISHED);
		tcp_new = get4(w, "10.0.0.1", "10.0.0.4", 1, 2, IPPROTO_TCP,
			       &dir);
		assert_int_equal(flow_packet(w->t, tcp_new, dir, 40, TH_SYN),
				 FLOW_NEW);
		tcp_est = get4(w, "10.0.0.1", "10.0.0.5", 1, 2, IPPROTO_TCP,
			       &dir);
		flow_packet(w->t, tcp_est, dir, 40, TH_SYN);
		assert_int_equal(flow_packet(w->t, tcp_est, !dir, 40,
					     TH_SYN | TH_ACK),
				 FLOW_ESTABLISHED);
		want[0] = t0 + to.udp_new * HZ;
		want[1] = t0 + to.udp_established * HZ;
		want[2] = t0 + to.tcp_new * HZ;
		want[3] = t0 + to.tcp_established * HZ;
		/* an hour and a quarter, in steps of a second */
		for (unsigned int s = 0; s < 4500; s++)
			run_for(w, 1);
		assert_int_equal(w->nends, 4);
		for (unsigned int i = 0; i < 4; i++) {
			const struct ended *e = &w->ends[i];
			unsigned int which = e->key.addr[1][3] == 2 ? 0 :
					     e->key.addr[1][3] == 3 ? 1 :
					     e->key.addr[1][3] == 4 ? 2 :
								      3;
			unsigned long late = e->at - want[which];

			assert_int_equal(e->why, FLOW_END_TIMEOUT);
			assert_true(time_after_eq(e->at, want[which]));
			/* one run step (a second) plus the level's slack */
			assert_true(late <= HZ + (want[which] - t0) / 8 + 1);
		}
		assert_int_equal(flow_table_stats(w->t)->active, 0);
		/* the two flows that became established fired once early,
		 * at their first time-out, and moved themselves */
		assert_int_equal(flow_table_stats(w->t)->timers_fired, 6);
		assert_int_equal(flow_table_stats(w->t)->timers_armed, 6);
		world_free(w);
	}
}

/* A flow with a packet every second (and a 25 s pause now and then)
 * lives on past its first time-out (the timer moves itself), and ends a
 * time-out after its last packet, never before. */
static void busy_flow_lives_on(void **unused)
{
	struct world *w = world_new(1000, 100);
	int dir;
	struct flow *f =
		get4(w, "10.0.0.1", "10.0.0.2", 5, 6, IPPROTO_UDP, &dir);
	unsigned long last;

	(void)unused;
	flow_packet(w->t, f, dir, 10, 0);
	for (int i = 0; i < 300; i++) {
		run_for(w, i % 20 ? 1 : 25); /* idle 25 s now and then */
		assert_int_equal(w->nends, 0);
		flow_packet(w->t, f, dir, 10, 0); /* new: 30 s */
	}
	last = jiffies;
	for (int s = 0; s < 40; s++)
		run_for(w, 1);
	assert_int_equal(w->nends, 1);
	assert_int_equal(w->ends[0].why, FLOW_END_TIMEOUT);
	assert_true(time_after_eq(w->ends[0].at, last + 30 * HZ));
	assert_true(w->ends[0].at - (last + 30 * HZ) <= 1 + 2 * HZ);
	/* re-armed about once per time-out, not per packet */
	assert_true(flow_table_stats(w->t)->timers_armed < 60);
	world_free(w);
}

static void rst_and_fin_end_once_and_stay_closed(void **unused)
{
	struct world *w = world_new(250, 100);
	int dir;
	struct flow *f =
		get4(w, "10.0.0.1", "10.0.0.2", 1, 2, IPPROTO_TCP, &dir);
	struct flow *g;

	(void)unused;
	flow_packet(w->t, f, dir, 40, TH_SYN);
	flow_packet(w->t, f, !dir, 40, TH_SYN | TH_ACK);
	assert_int_equal(flow_packet(w->t, f, dir, 40, TH_RST), FLOW_CLOSED);
	assert_int_equal(w->nends, 1);
	assert_int_equal(w->ends[0].why, FLOW_END_RST);
	/* late segments: the same flow, counted, not ended again */
	g = get4(w, "10.0.0.2", "10.0.0.1", 2, 1, IPPROTO_TCP, &dir);
	assert_ptr_equal(f, g);
	assert_int_equal(flow_packet(w->t, g, dir, 40, TH_ACK), FLOW_CLOSED);
	assert_int_equal(g->packets, 4);
	run_for(w, 60);
	assert_int_equal(flow_table_stats(w->t)->active, 1);
	run_for(w, 120); /* the closed time-out: freed without a second end */
	assert_int_equal(flow_table_stats(w->t)->active, 0);
	assert_int_equal(w->nends, 1);

	/* FIN from one side: still open; from the other: ended */
	f = get4(w, "10.0.0.1", "10.0.0.3", 1, 2, IPPROTO_TCP, &dir);
	flow_packet(w->t, f, dir, 40, TH_SYN);
	flow_packet(w->t, f, !dir, 40, TH_SYN | TH_ACK);
	assert_int_equal(flow_packet(w->t, f, dir, 40, TH_FIN | TH_ACK),
			 FLOW_ESTABLISHED);
	assert_int_equal(flow_packet(w->t, f, dir, 40, TH_FIN | TH_ACK),
			 FLOW_ESTABLISHED); /* a retransmitted FIN */
	assert_int_equal(w->nends, 1);
	assert_int_equal(flow_packet(w->t, f, !dir, 40, TH_FIN | TH_ACK),
			 FLOW_CLOSED);
	assert_int_equal(w->nends, 2);
	assert_int_equal(w->ends[1].why, FLOW_END_FIN);
	world_free(w); /* a closed flow is not ended again at the end */
	(void)0;
}

/* The end of the capture ends the rest, oldest first, and only those not
 * ended already. */
static void end_of_capture_in_order(void **unused)
{
	struct world *w = world_new(250, 100);
	int dir;
	struct flow *f;

	(void)unused;
	for (unsigned int i = 0; i < 5; i++) {
		char dst[32];

		snprintf(dst, sizeof(dst), "10.0.2.%u", i + 1);
		f = get4(w, "10.0.0.1", dst, 7, 7, IPPROTO_UDP, &dir);
		flow_packet(w->t, f, dir, 10, 0);
	}
	flow_table_end_all(w->t, FLOW_END_CAPTURE);
	assert_int_equal(w->nends, 5);
	for (unsigned int i = 0; i < 5; i++) {
		assert_int_equal(w->ends[i].why, FLOW_END_CAPTURE);
		assert_int_equal(w->ends[i].key.addr[1][3], i + 1);
	}
	assert_int_equal(flow_table_stats(w->t)->del_removed, 5);
	world_free(w);
}

/* An expiry whose end reaches -n, which closes every flow, this one too:
 * try_to_del_timer_sync() says -1 for it (its function is running), the
 * flow is marked dying and its expiry frees it; the others are removed
 * (1).  Each flow is ended once; ASan would see a double free. */
static void closing_from_its_own_expiry(void **unused)
{
	struct world *w = world_new(1000, 100);
	int dir;
	struct flow *a, *b;
	const struct flow_stats *st = flow_table_stats(w->t);

	(void)unused;
	a = get4(w, "10.0.0.1", "10.0.0.2", 1, 2, IPPROTO_UDP, &dir);
	flow_packet(w->t, a, dir, 10, 0); /* expires after 30 s */
	b = get4(w, "10.0.0.1", "10.0.0.3", 1, 2, IPPROTO_TCP, &dir);
	flow_packet(w->t, b, dir, 10, TH_SYN); /* after 60 s */
	w->end_all_from_end = true;
	run_for(w, 31);
	assert_int_equal(w->end_count, 2);
	assert_int_equal(w->ends[0].why, FLOW_END_TIMEOUT);
	assert_int_equal(w->ends[1].why, FLOW_END_CAPTURE);
	assert_int_equal(st->del_running, 1);
	assert_int_equal(st->del_removed, 1);
	assert_int_equal(st->timers_fired, 1);
	assert_int_equal(st->active, 0);
	run_for(w, 100);
	assert_int_equal(w->end_count, 2);
	world_free(w);
}

/* A RST whose end reaches -n: the flow is gone when flow_packet()
 * returns, and says so. */
static void closing_from_a_packets_end(void **unused)
{
	struct world *w = world_new(250, 100);
	int dir;
	struct flow *a =
		get4(w, "10.0.0.1", "10.0.0.2", 1, 2, IPPROTO_TCP, &dir);

	(void)unused;
	flow_packet(w->t, a, dir, 40, TH_SYN);
	w->end_all_from_end = true;
	assert_int_equal(flow_packet(w->t, a, dir, 40, TH_RST), FLOW_GONE);
	assert_int_equal(w->end_count, 1);
	assert_int_equal(w->ends[0].why, FLOW_END_RST);
	assert_int_equal(flow_table_stats(w->t)->active, 0);
	world_free(w);
}

/* A million idle flows (one packet each, their timers pending) within
 * 256 MB of heap, table included. */
static void a_million_idle_flows(void **unused)
{
	struct mallinfo2 before = mallinfo2(), after;
	struct world *w = world_new(250, 1000000);
	size_t used;

	(void)unused;
	for (uint32_t i = 0; i < 1000000; i++) {
		uint8_t s[16] = { 10, 0, 0, 1 }, d[16] = { 0 };
		int dir;
		struct flow *f;

		d[0] = 11;
		d[1] = (uint8_t)(i >> 16);
		d[2] = (uint8_t)(i >> 8);
		d[3] = (uint8_t)i;
		f = flow_lookup(w->t, 4, IPPROTO_TCP, s, d, 40000, 80, &dir);
		assert_non_null(f);
		flow_packet(w->t, f, dir, 40, TH_SYN);
	}
	after = mallinfo2();
	used = after.uordblks + after.hblkhd - before.uordblks - before.hblkhd;
	print_message("a million idle flows: %zu bytes (%zu per flow)\n", used,
		      used / 1000000);
	assert_int_equal(flow_table_stats(w->t)->active, 1000000);
	assert_true(used <= 256u << 20);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_directions_one_flow),
		cmocka_unit_test(eviction_takes_the_idle_longest),
		cmocka_unit_test(timeouts_per_state),
		cmocka_unit_test(busy_flow_lives_on),
		cmocka_unit_test(rst_and_fin_end_once_and_stay_closed),
		cmocka_unit_test(end_of_capture_in_order),
		cmocka_unit_test(closing_from_its_own_expiry),
		cmocka_unit_test(closing_from_a_packets_end),
		cmocka_unit_test(a_million_idle_flows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
