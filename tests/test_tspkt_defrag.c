/*
 * test_tspkt_defrag.c - tspkt's IP reassembly.  IPv4 and IPv6 datagrams cut
 * into 2..N fragments arrive in every order (all permutations for small N,
 * random shuffles for large N) with duplicates; the reassembled buffer
 * must read as the original datagram, and a pattern cut by a fragment
 * boundary must be found by skb_find_text (kmp and bm).  Then the hostile
 * cases: overlaps, endless fragments, floods of ids, timeouts, datagrams
 * past 65535 bytes, contradictions; memory stays within its bound and
 * every buffer is freed (ASan's leak checker runs in the sanitizer build).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <netinet/in.h>
#include <pcap/dlt.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "defrag.h"
#include "pcapgen.h"
#include "testsupport.h"

#define ETH_HLEN 14u
#define SEC 1000000000LL
#define MAX_FRAGS_TEST 80u

static const struct pg_flow udp4 = { 4,	   "10.1.2.3", "10.4.5.6", IPPROTO_UDP,
				     1000, 2000,       0,	   0 };
static const struct pg_flow tcp6 = { 6,	   "fd00::a", "fd00::b", IPPROTO_TCP,
				     3000, 4000,      99,	 0 };

static const char needle[] = "CROSS-THE-BOUNDARY";
#define NEEDLE_LEN ((unsigned int)sizeof(needle) - 1)

static unsigned int ip_hlen(const struct pg_flow *flow)
{
	return flow->family == 4 ? 20u : 40u;
}

static unsigned int l4_hlen(const struct pg_flow *flow)
{
	return flow->proto == IPPROTO_TCP ? 20u : 8u;
}

/* A fragment's header length in its buffer (IPv6: with the Fragment
 * header), which is where the reassembled payload starts. */
static unsigned int frag_hlen(const struct pg_flow *flow)
{
	return flow->family == 4 ? 20u : 48u;
}

static struct sk_buff *decode_frame(const struct pg_frame *f, int64_t ts,
				    struct pkt_meta *meta,
				    struct ip_frag_info *frag)
{
	const char *why = NULL;
	struct sk_buff *skb = pkt_decode_frame(DLT_EN10MB, f->bytes, f->len, ts,
					       meta, frag, &why);

	if (!skb)
		fail_msg("decode: %s", why ? why : "not IP");
	return skb;
}

static enum defrag_result feed(struct defrag *d, const struct pg_frame *f,
			       int64_t ts, struct sk_buff **out,
			       struct pkt_meta *meta)
{
	struct pkt_meta m;
	struct ip_frag_info frag;
	struct sk_buff *skb = decode_frame(f, ts, meta ? meta : &m, &frag);

	return defrag_add(d, skb, meta ? meta : &m, &frag, out);
}

/* The datagram a test cuts up: the whole frame, and its fragments. */
struct datagram {
	const struct pg_flow *flow;
	uint8_t *payload;
	unsigned int payload_len;
	unsigned int needle_at; /* in payload */
	struct pg_frame whole;
	struct pg_frame *frags;
	unsigned int nfrags;
};

/* Random lowercase payload with the needle across the first cut. */
static void datagram_build(struct datagram *dg, const struct pg_flow *flow,
			   unsigned int payload_len, const unsigned int *cuts,
			   unsigned int ncuts, uint32_t id, struct rng *rng)
{
	unsigned int i, hl = l4_hlen(flow);

	dg->flow = flow;
	dg->payload_len = payload_len;
	dg->payload = malloc(payload_len);
	assert_non_null(dg->payload);
	for (i = 0; i < payload_len; i++)
		dg->payload[i] = (uint8_t)('a' + rng_below(rng, 26));
	assert_true(ncuts > 0 && cuts[0] >= hl + NEEDLE_LEN / 2);
	dg->needle_at = cuts[0] - hl - NEEDLE_LEN / 2;
	assert_true(dg->needle_at + NEEDLE_LEN <= payload_len);
	memcpy(dg->payload + dg->needle_at, needle, NEEDLE_LEN);
	pg_build(&dg->whole, flow, dg->payload, payload_len);
	dg->frags = malloc((ncuts + 1) * sizeof(*dg->frags));
	assert_non_null(dg->frags);
	dg->nfrags = pg_build_fragments(dg->frags, flow, dg->payload,
					payload_len, cuts, ncuts, id);
	assert_int_equal(dg->nfrags, ncuts + 1);
}

static void datagram_free(struct datagram *dg)
{
	free(dg->payload);
	free(dg->frags);
}

/* The reassembled buffer reads as the first fragment's header followed by
 * the whole datagram's IP payload, through copy_bits and seq_read alike;
 * the transport header and the needle are found in it. */
static void check_reassembled(struct sk_buff *skb, const struct datagram *dg)
{
	const struct pg_flow *flow = dg->flow;
	unsigned int fh = frag_hlen(flow);
	unsigned int ip_payload_len = l4_hlen(flow) + dg->payload_len;
	const uint8_t *want = dg->whole.bytes + ETH_HLEN + ip_hlen(flow);
	uint8_t *got;
	struct skb_seq_state st;
	const u8 *block;
	unsigned int consumed = 0, n, want_pos;
	struct pkt_meta meta;
	struct ts_config *conf;
	const char *algos[2] = { "kmp", "bm" };
	int a;

	assert_int_equal(skb->len, fh + ip_payload_len);
	assert_true(skb_is_nonlinear(skb) || dg->nfrags == 1);
	assert_int_equal(skb_network_offset(skb), 0);
	assert_int_equal(skb->network_header, ETH_HLEN);

	got = malloc(skb->len);
	assert_non_null(got);
	assert_int_equal(skb_copy_bits(skb, 0, got, (int)skb->len), 0);
	assert_memory_equal(got, dg->frags[0].bytes + ETH_HLEN, fh);
	assert_memory_equal(got + fh, want, ip_payload_len);

	skb_prepare_seq_read(skb, 0, skb->len, &st);
	while ((n = skb_seq_read(consumed, &block, &st)) != 0) {
		assert_true(consumed + n <= skb->len);
		assert_memory_equal(block, got + consumed, n);
		consumed += n;
	}
	assert_int_equal(consumed, skb->len);
	free(got);

	memset(&meta, 0, sizeof(meta));
	meta.family = flow->family;
	pkt_decode_transport(skb, &meta);
	assert_true(meta.has_transport);
	assert_int_equal(meta.l4proto, flow->proto);
	assert_int_equal(meta.sport, flow->sport);
	assert_int_equal(meta.dport, flow->dport);
	assert_int_equal(meta.payload_off, fh + l4_hlen(flow));

	want_pos = meta.payload_off + dg->needle_at;
	for (a = 0; a < 2; a++) {
		conf = textsearch_prepare(algos[a], needle, NEEDLE_LEN,
					  GFP_KERNEL, 0);
		assert_false(IS_ERR(conf));
		assert_int_equal(skb_find_text(skb, 0, skb->len, conf),
				 want_pos);
		/* from the transport payload on, as a classifier searches */
		assert_int_equal(skb_find_text(skb, meta.payload_off, skb->len,
					       conf),
				 dg->needle_at);
		textsearch_destroy(conf);
	}
}

/*
 * Deliver the fragments in @order (indices, possibly repeated), expecting
 * the datagram to complete exactly with the last one.
 */
static void deliver(struct defrag *d, const struct datagram *dg,
		    const unsigned int *order, unsigned int n)
{
	struct sk_buff *out = NULL;
	enum defrag_result res = DEFRAG_DROPPED;
	struct defrag_stats before, after;
	unsigned int i;

	defrag_get_stats(d, &before);
	for (i = 0; i < n; i++) {
		res = feed(d, &dg->frags[order[i]], SEC + i, &out, NULL);
		if (i + 1 < n) {
			assert_int_equal(res, DEFRAG_HELD);
			assert_null(out);
			assert_true(defrag_bytes_held(d) > 0);
		}
	}
	assert_int_equal(res, DEFRAG_DONE);
	assert_non_null(out);
	/* as the kernel: stamped with its latest fragment's capture time */
	assert_true(out->tstamp_ns == SEC + (int64_t)n - 1);
	check_reassembled(out, dg);
	kfree_skb(out);
	assert_int_equal(defrag_bytes_held(d), 0);
	defrag_get_stats(d, &after);
	assert_int_equal(after.reassembled, before.reassembled + 1);
	assert_int_equal(after.fragments, before.fragments + n);
	assert_int_equal(after.overlaps + after.evicted + after.oversize +
				 after.invalid + after.timeouts,
			 0);
}

static bool next_permutation(unsigned int *a, unsigned int n)
{
	unsigned int i, j, t;

	if (n < 2)
		return false;
	for (i = n - 1; i > 0 && a[i - 1] >= a[i]; i--)
		;
	if (i == 0)
		return false;
	for (j = n - 1; a[j] <= a[i - 1]; j--)
		;
	t = a[i - 1], a[i - 1] = a[j], a[j] = t;
	for (j = n - 1; i < j; i++, j--)
		t = a[i], a[i] = a[j], a[j] = t;
	return true;
}

static void test_every_order_small(void **state)
{
	const struct pg_flow *flows[2] = { &udp4, &tcp6 };
	struct rng rng = { test_seed("tspkt defrag orders", 7) };
	unsigned int cuts[4], perm[5], order[6], n, i, f, k, dup, at, runs = 0;
	struct datagram dg;
	struct defrag *d = defrag_new(NULL);

	(void)state;
	assert_non_null(d);
	for (f = 0; f < 2; f++) {
		for (n = 2; n <= 5; n++) {
			/* fragments of 40..64 bytes, the last one shorter */
			for (i = 0; i + 1 < n; i++)
				cuts[i] = (i + 1) * 48 + (i == 0 ? 8 : 0);
			datagram_build(&dg, flows[f],
				       cuts[n - 2] + 17 - l4_hlen(flows[f]),
				       cuts, n - 1, 0xbeef + n, &rng);
			for (i = 0; i < n; i++)
				perm[i] = i;
			do {
				deliver(d, &dg, perm, n);
				/* again with one fragment (not the last)
				 * sent twice before the datagram is whole */
				dup = perm[rng_below(&rng, n - 1)];
				at = rng_below(&rng, n);
				for (i = 0, k = 0; i < n; i++) {
					if (i == at)
						order[k++] = dup;
					order[k++] = perm[i];
				}
				deliver(d, &dg, order, n + 1);
				runs += 2;
			} while (next_permutation(perm, n));
			datagram_free(&dg);
		}
	}
	assert_int_equal(runs, 2 * 2 * (2 + 6 + 24 + 120));
	defrag_free(d);
}

static void test_random_orders_large(void **state)
{
	const struct pg_flow *flows[2] = { &udp4, &tcp6 };
	struct rng rng = { test_seed("tspkt defrag shuffles", 11) };
	unsigned int cuts[MAX_FRAGS_TEST], order[2 * MAX_FRAGS_TEST];
	unsigned int iter, n, i, j, t, pos, len, ndup;
	struct datagram dg;
	struct defrag_limits lim = { 0, MAX_FRAGS_TEST, 0 };
	struct defrag *d = defrag_new(&lim);

	(void)state;
	assert_non_null(d);
	for (iter = 0; iter < 200; iter++) {
		const struct pg_flow *flow = flows[iter % 2];

		/* 6..MAX_FRAGS_TEST-1 fragments of 8..200 bytes */
		n = 6 + rng_below(&rng, MAX_FRAGS_TEST - 6);
		for (i = 0, pos = 0; i + 1 < n; i++) {
			pos += 8 * (1 + rng_below(&rng, 25));
			if (i == 0 && pos < 40)
				pos = 40; /* room for the needle before it */
			cuts[i] = pos;
		}
		len = pos + 1 + rng_below(&rng, 300) - l4_hlen(flow);
		datagram_build(&dg, flow, len, cuts, n - 1, iter * 977u, &rng);
		for (i = 0; i < n; i++)
			order[i] = i;
		for (i = n - 1; i > 0; i--) {
			j = rng_below(&rng, i + 1);
			t = order[i], order[i] = order[j], order[j] = t;
		}
		/* duplicates of fragments already sent, before the last */
		ndup = rng_below(&rng, 5);
		for (i = 0; i < ndup; i++) {
			pos = 1 + rng_below(&rng, n - 1);
			memmove(order + pos + 1, order + pos,
				(n + i - pos) * sizeof(*order));
			order[pos] = order[rng_below(&rng, pos)];
		}
		deliver(d, &dg, order, n + ndup);
		datagram_free(&dg);
	}
	defrag_free(d);
}

/* ---- hostile fragments ---------------------------------------------------- */

static void raw_frag(struct pg_frame *f, const struct pg_flow *flow,
		     uint32_t id, unsigned int offset, int more,
		     unsigned int len)
{
	static const uint8_t filler[65536];

	pg_build_raw_fragment(f, flow, id, offset, more, filler, len);
}

static void test_overlap_drops_datagram(void **state)
{
	const struct pg_flow *flows[2] = { &udp4, &tcp6 };
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(NULL);
	struct defrag_stats st;
	struct sk_buff *out;
	unsigned int i;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	for (i = 0; i < 2; i++) {
		raw_frag(f, flows[i], 5, 0, 1, 24);
		assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
		raw_frag(f, flows[i], 5, 48, 0, 10);
		assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
		raw_frag(f, flows[i], 5, 16, 1,
			 32); /* [16,48) overlaps [0,24) */
		assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
		assert_null(out);
		assert_int_equal(defrag_bytes_held(d), 0);

		/* same offset, other length: an overlap, not a duplicate */
		raw_frag(f, flows[i], 6, 0, 1, 24);
		assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
		raw_frag(f, flows[i], 6, 0, 1, 16);
		assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
		assert_int_equal(defrag_bytes_held(d), 0);
	}
	defrag_get_stats(d, &st);
	assert_int_equal(st.overlaps, 4);
	assert_int_equal(st.frags_dropped, 2 * (3 + 2));
	assert_int_equal(st.reassembled, 0);
	defrag_free(d);
	free(f);
}

static void test_endless_fragments(void **state)
{
	struct defrag_limits lim = { 256u << 10, 64, 30 * SEC };
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(&lim);
	struct defrag_stats st;
	struct sk_buff *out;
	unsigned int i;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	/* one id, never a last fragment */
	for (i = 0; i < 5000; i++) {
		raw_frag(f, i % 2 ? &udp4 : &tcp6, 77, (i % 8000) * 8, 1, 8);
		feed(d, f, SEC, &out, NULL);
		assert_null(out);
		assert_true(defrag_bytes_held(d) <= lim.max_bytes);
	}
	defrag_get_stats(d, &st);
	assert_true(st.oversize > 0); /* past max_frags per datagram */
	assert_int_equal(st.reassembled, 0);

	/* a flood of ids, 1 KiB each: the oldest are evicted */
	for (i = 0; i < 5000; i++) {
		raw_frag(f, i % 2 ? &udp4 : &tcp6, 1000 + i, 0, 1, 1024);
		feed(d, f, SEC + i, &out, NULL);
		assert_null(out);
		assert_true(defrag_bytes_held(d) <= lim.max_bytes);
	}
	defrag_get_stats(d, &st);
	assert_true(st.evicted > 0);
	assert_true(defrag_bytes_held(d) > lim.max_bytes / 2);
	assert_int_equal(st.fragments, 10000);

	/* the newest survive the flood: complete one */
	raw_frag(f, &udp4, 1000 + 4999, 1024, 0, 8);
	assert_int_equal(feed(d, f, SEC + 5000, &out, NULL), DEFRAG_DONE);
	assert_non_null(out);
	assert_int_equal(out->len, 20 + 1024 + 8);
	kfree_skb(out);
	/* the oldest did not */
	raw_frag(f, &tcp6, 1000, 1024, 0, 8);
	assert_int_equal(feed(d, f, SEC + 5001, &out, NULL), DEFRAG_HELD);
	defrag_free(d); /* frees all still held */
	free(f);
}

static void test_timeout(void **state)
{
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(NULL);
	struct defrag_stats st;
	struct sk_buff *out;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	raw_frag(f, &udp4, 1, 0, 1, 16);
	assert_int_equal(feed(d, f, 100 * SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &tcp6, 2, 0, 1, 16);
	assert_int_equal(feed(d, f, 110 * SEC, &out, NULL), DEFRAG_HELD);

	defrag_expire(d, 130 * SEC); /* exactly 30 s: not yet */
	defrag_get_stats(d, &st);
	assert_int_equal(st.timeouts, 0);
	defrag_expire(d, 131 * SEC);
	defrag_get_stats(d, &st);
	assert_int_equal(st.timeouts, 1);
	assert_true(defrag_bytes_held(d) > 0);

	/* the rest of datagram 1 comes too late: it starts over, held */
	raw_frag(f, &udp4, 1, 16, 0, 8);
	assert_int_equal(feed(d, f, 132 * SEC, &out, NULL), DEFRAG_HELD);
	/* a fragment 40 s later expires both queues */
	raw_frag(f, &udp4, 3, 0, 1, 16);
	assert_int_equal(feed(d, f, 180 * SEC, &out, NULL), DEFRAG_HELD);
	defrag_get_stats(d, &st);
	assert_int_equal(st.timeouts, 3);
	assert_int_equal(st.frags_dropped, 3);
	defrag_free(d);
	free(f);
}

static void test_oversize(void **state)
{
	const struct pg_flow *flows[2] = { &udp4, &tcp6 };
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(NULL);
	struct defrag_stats st;
	struct sk_buff *out;
	unsigned int i;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	for (i = 0; i < 2; i++) {
		raw_frag(f, flows[i], 9, 0, 1, 64);
		assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
		/* ends past 65535: the datagram goes */
		raw_frag(f, flows[i], 9, 65528, 0, 16);
		assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
		assert_int_equal(defrag_bytes_held(d), 0);
	}
	/* the largest legal end is accepted: IPv4 20 + 65515 */
	raw_frag(f, &udp4, 10, 65512, 0, 3);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &udp4, 11, 65512, 0, 4);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
	/* IPv6: a payload of 65535 after the Fragment header, as the kernel */
	raw_frag(f, &tcp6, 12, 65528, 0, 7);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &tcp6, 13, 65528, 0, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
	defrag_get_stats(d, &st);
	assert_int_equal(st.oversize, 4);
	defrag_free(d);
	free(f);
}

static void test_contradictions(void **state)
{
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(NULL);
	struct defrag_stats st;
	struct sk_buff *out;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	/* a non-final fragment not a multiple of 8 */
	raw_frag(f, &udp4, 20, 0, 1, 12);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
	/* two different ends */
	raw_frag(f, &udp4, 21, 16, 0, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &udp4, 21, 32, 0, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
	/* data past the known end */
	raw_frag(f, &tcp6, 22, 16, 0, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &tcp6, 22, 32, 1, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
	/* an end before data already held */
	raw_frag(f, &tcp6, 23, 32, 1, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &tcp6, 23, 8, 0, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DROPPED);
	assert_int_equal(defrag_bytes_held(d), 0);
	defrag_get_stats(d, &st);
	assert_int_equal(st.invalid, 4);
	assert_int_equal(st.overlaps + st.oversize + st.evicted, 0);
	defrag_free(d);
	free(f);
}

/* IPv4 datagrams differing only in protocol, and IPv6 ones only in id,
 * are reassembled apart. */
static void test_keys_apart(void **state)
{
	struct pg_flow tcp4 = udp4;
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(NULL);
	struct sk_buff *out;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	tcp4.proto = IPPROTO_TCP;
	raw_frag(f, &udp4, 30, 0, 1, 16);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &tcp4, 30, 0, 1, 16);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &tcp4, 30, 16, 0, 4);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DONE);
	assert_int_equal(out->len, 20 + 20);
	kfree_skb(out);
	raw_frag(f, &tcp6, 0x10030, 0, 1, 16);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &tcp6, 0x20030, 16, 0, 4);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	raw_frag(f, &udp4, 30, 16, 0, 1);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_DONE);
	assert_int_equal(out->len, 20 + 17);
	kfree_skb(out);
	defrag_free(d);
	free(f);
}

static void test_ipv6_atomic_fragment(void **state)
{
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(NULL);
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb, *out;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	raw_frag(f, &tcp6, 40, 0, 0, 24);
	skb = decode_frame(f, SEC, &meta, &frag);
	assert_false(frag.is_fragment);
	assert_int_equal(defrag_add(d, skb, &meta, &frag, &out), DEFRAG_DONE);
	assert_ptr_equal(out, skb);
	assert_int_equal(defrag_bytes_held(d), 0);
	kfree_skb(out);
	defrag_free(d);
	free(f);
}

/*
 * Transport headers cut by a fragment boundary are read across buffers:
 * IPv4 with the TCP header split 8 | 12, IPv6 with a Destination Options
 * header alone in the first fragment (its fragmentable part) and the TCP
 * header in the second.
 */
static void test_transport_across_fragments(void **state)
{
	struct pg_frame *f = malloc(sizeof(*f));
	struct defrag *d = defrag_new(NULL);
	struct pkt_meta meta;
	struct sk_buff *out;
	uint8_t ip_payload[8 + 20 + 16];
	uint8_t got[16];
	struct pg_flow tcp4 = udp4;

	(void)state;
	assert_non_null(f);
	assert_non_null(d);
	/* TCP header: ports 3000 -> 4000, data offset 5, then 16 bytes */
	memset(ip_payload, 0, sizeof(ip_payload));
	ip_payload[0] = 3000 >> 8, ip_payload[1] = 3000 & 0xff;
	ip_payload[2] = 4000 >> 8, ip_payload[3] = 4000 & 0xff;
	ip_payload[12] = 0x50;
	memcpy(ip_payload + 20, "0123456789abcdef", 16);

	tcp4.proto = IPPROTO_TCP;
	pg_build_raw_fragment(f, &tcp4, 50, 0, 1, ip_payload, 8);
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	pg_build_raw_fragment(f, &tcp4, 50, 8, 0, ip_payload + 8, 28);
	assert_int_equal(feed(d, f, SEC, &out, &meta), DEFRAG_DONE);
	pkt_decode_transport(out, &meta);
	assert_true(meta.has_transport);
	assert_int_equal(meta.sport, 3000);
	assert_int_equal(meta.dport, 4000);
	assert_int_equal(meta.payload_off, 20 + 20);
	assert_int_equal(skb_copy_bits(out, (int)meta.payload_off, got, 16), 0);
	assert_memory_equal(got, "0123456789abcdef", 16);
	kfree_skb(out);

	/* Destination Options (next: TCP, 8 bytes with a PadN), then TCP */
	memmove(ip_payload + 8, ip_payload, 20 + 16);
	memset(ip_payload, 0, 8);
	ip_payload[0] = IPPROTO_TCP;
	ip_payload[2] = 1, ip_payload[3] = 4;
	pg_build_raw_fragment(f, &tcp6, 51, 0, 1, ip_payload, 8);
	f->bytes[ETH_HLEN + 40] = 60; /* the Fragment header's next header */
	assert_int_equal(feed(d, f, SEC, &out, NULL), DEFRAG_HELD);
	pg_build_raw_fragment(f, &tcp6, 51, 8, 0, ip_payload + 8, 36);
	f->bytes[ETH_HLEN + 40] = 60;
	assert_int_equal(feed(d, f, SEC, &out, &meta), DEFRAG_DONE);
	pkt_decode_transport(out, &meta);
	assert_true(meta.has_transport);
	assert_int_equal(meta.l4proto, IPPROTO_TCP);
	assert_int_equal(meta.sport, 3000);
	assert_int_equal(meta.payload_off, 48 + 8 + 20);
	assert_int_equal(skb_transport_offset(out), 48 + 8);
	assert_int_equal(skb_copy_bits(out, (int)meta.payload_off, got, 16), 0);
	assert_memory_equal(got, "0123456789abcdef", 16);
	kfree_skb(out);
	defrag_free(d);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_order_small),
		cmocka_unit_test(test_random_orders_large),
		cmocka_unit_test(test_overlap_drops_datagram),
		cmocka_unit_test(test_endless_fragments),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_contradictions),
		cmocka_unit_test(test_keys_apart),
		cmocka_unit_test(test_ipv6_atomic_fragment),
		cmocka_unit_test(test_transport_across_fragments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
