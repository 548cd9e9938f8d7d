/*
 * test_tspkt_reasm.c - tspkt's TCP reassembly of one direction.  A text
 * with several occurrences of a needle, cut at every byte position into 2
 * to 8 segments, arrives in order, reversed, shuffled, and shuffled with
 * duplicate and partly overlapping retransmissions, with an ISN that puts
 * the sequence-number wrap anywhere in it: the bytes delivered are the
 * text, and a push-mode stream fed by reasm_feed finds every occurrence
 * once at its offset.  Then the overlap policies (a table written by hand
 * from Suricata's matrix), gaps (no match spans one, offsets stay true,
 * past 2^32 too), the memcap shared by directions, the depth, FIN and RST,
 * and a consumer that frees the direction from its callback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reasm.h"
#include "testsupport.h"
#include "textsearch_stream.h"

static const char needle[] = "NEEDLE";
#define NEEDLE_LEN ((unsigned int)sizeof(needle) - 1)

/* ---- a consumer that records everything, and feeds a stream ---- */

#define MAX_OUT 4096
#define MAX_EV 64

struct sink {
	uint8_t out[MAX_OUT]; /* delivered bytes at their offsets */
	uint8_t seen[MAX_OUT];
	uint64_t next;	    /* where the next run or gap must start */
	uint64_t delivered; /* bytes */
	unsigned int runs, ngaps, ends;
	uint64_t gap_off[MAX_EV], gap_len[MAX_EV];
	uint64_t end_off;
	uint64_t mstart[MAX_EV], mend[MAX_EV];
	unsigned int nmatches;
	bool bad_offset;
	struct reasm_feed feed; /* when stream is set */
	struct reasm_consumer fc;
	bool stream;
	/* stop (return 1) at the Nth data call, freeing @free_dir first */
	unsigned int stop_at;
	struct reasm_ctx *free_ctx;
	struct reasm_dir *free_dir;
};

static int on_match(void *opaque, const struct ts_match *m)
{
	struct sink *k = opaque;

	if (k->nmatches < MAX_EV) {
		k->mstart[k->nmatches] = m->start;
		k->mend[k->nmatches] = m->end;
	}
	k->nmatches++;
	return 0;
}

static int on_data(void *opaque, uint64_t off, const uint8_t *p, size_t len)
{
	struct sink *k = opaque;

	if (off != k->next || len == 0)
		k->bad_offset = true;
	for (size_t i = 0; i < len; i++) {
		if (off + i < MAX_OUT) {
			k->out[off + i] = p[i];
			k->seen[off + i]++;
		}
	}
	k->next = off + len;
	k->delivered += len;
	k->runs++;
	if (k->stop_at && k->runs == k->stop_at) {
		if (k->free_dir) {
			reasm_dir_free(k->free_ctx, k->free_dir);
			free(k->free_dir);
			k->free_dir = NULL;
		}
		return 1;
	}
	if (k->stream)
		return reasm_feed_data(&k->feed, off, p, len);
	return 0;
}

static int on_gap(void *opaque, uint64_t off, uint64_t len)
{
	struct sink *k = opaque;

	if (off != k->next || len == 0)
		k->bad_offset = true;
	if (k->ngaps < MAX_EV) {
		k->gap_off[k->ngaps] = off;
		k->gap_len[k->ngaps] = len;
	}
	k->ngaps++;
	k->next = off + len;
	if (k->stream)
		return reasm_feed_gap(&k->feed, off, len);
	return 0;
}

static int on_end(void *opaque, uint64_t off)
{
	struct sink *k = opaque;

	if (off != k->next)
		k->bad_offset = true;
	k->ends++;
	k->end_off = off;
	if (k->stream)
		return reasm_feed_end(&k->feed, off);
	return 0;
}

static struct ts_config *needle_conf(void)
{
	struct ts_config *conf =
		textsearch_prepare("kmp", needle, NEEDLE_LEN, GFP_KERNEL, 0);

	assert_false(IS_ERR(conf));
	return conf;
}

/* @conf NULL: record only. */
static void sink_init(struct sink *k, struct reasm_consumer *c,
		      struct ts_config *conf)
{
	memset(k, 0, sizeof(*k));
	c->data = on_data;
	c->gap = on_gap;
	c->end = on_end;
	c->opaque = k;
	if (conf) {
		struct ts_stream *s = textsearch_stream_open(conf, GFP_KERNEL);

		assert_false(IS_ERR(s));
		reasm_feed_init(&k->feed, &k->fc, s, on_match, k);
		k->stream = true;
	}
}

static void sink_done(struct sink *k)
{
	if (k->stream)
		textsearch_stream_free(k->feed.s);
}

/* ---- split, reorder, retransmit ---- */

struct seg {
	uint32_t off, len;
};

static void shuffle(struct seg *v, unsigned int n, struct rng *r)
{
	for (unsigned int i = n; i > 1; i--) {
		unsigned int j = rng_below(r, i);
		struct seg t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Occurrences of the needle in @text, by start. */
static unsigned int occurrences(const char *text, unsigned int n,
				uint64_t *starts)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i + NEEDLE_LEN <= n; i++)
		if (memcmp(text + i, needle, NEEDLE_LEN) == 0)
			starts[k++] = i;
	return k;
}

enum order { IN_ORDER, REVERSED, SHUFFLED, RETRANSMITTED, NORDERS };

static void run_split(struct ts_config *conf, const char *text, unsigned int n,
		      const uint32_t *cuts, unsigned int ncuts,
		      enum order order, uint32_t isn, struct rng *r)
{
	struct seg segs[64];
	unsigned int nseg = 0, i;
	uint64_t expect[MAX_EV];
	unsigned int nexpect = occurrences(text, n, expect);
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct reasm_consumer c;
	struct sink k;

	for (i = 0; i <= ncuts; i++) {
		uint32_t a = i ? cuts[i - 1] : 0, b = i < ncuts ? cuts[i] : n;

		segs[nseg++] = (struct seg){ a, b - a };
	}
	if (order == REVERSED) {
		for (i = 0; i < nseg / 2; i++) {
			struct seg t = segs[i];

			segs[i] = segs[nseg - 1 - i];
			segs[nseg - 1 - i] = t;
		}
	} else if (order >= SHUFFLED) {
		shuffle(segs, nseg, r);
	}
	if (order == RETRANSMITTED) {
		unsigned int orig = nseg;

		/* duplicates of some segments, and ranges straddling cuts */
		for (i = 0; i < orig && nseg < 60; i++) {
			if (rng_below(r, 2))
				segs[nseg++] = segs[i];
			uint32_t a = rng_below(r, n),
				 b = a + 1 + rng_below(r, n - a);

			segs[nseg++] = (struct seg){ a, b - a };
		}
		shuffle(segs, nseg, r);
	}

	reasm_ctx_init(&ctx, NULL);
	reasm_dir_init(&d);
	sink_init(&k, &c, conf);
	assert_int_equal(reasm_add(&ctx, &d, &c, isn, NULL, 0, REASM_SYN), 0);
	for (i = 0; i < nseg; i++)
		assert_int_equal(reasm_add(&ctx, &d, &c, isn + 1 + segs[i].off,
					   (const uint8_t *)text + segs[i].off,
					   segs[i].len, 0),
				 0);
	assert_int_equal(k.delivered, n);
	assert_int_equal(k.ends, 0);
	assert_int_equal(
		reasm_add(&ctx, &d, &c, isn + 1 + n, NULL, 0, REASM_FIN), 0);

	assert_false(k.bad_offset);
	assert_memory_equal(k.out, text, n);
	for (i = 0; i < n; i++)
		assert_int_equal(k.seen[i], 1);
	assert_int_equal(k.ngaps, 0);
	assert_int_equal(k.ends, 1);
	assert_int_equal(k.end_off, n);
	assert_int_equal(k.nmatches, nexpect);
	for (i = 0; i < nexpect; i++) {
		assert_int_equal(k.mstart[i], expect[i]);
		assert_int_equal(k.mend[i], expect[i] + NEEDLE_LEN);
	}
	assert_int_equal(ctx.stats.overlaps_diff, 0);
	assert_int_equal(ctx.stats.gaps, 0);
	if (order == IN_ORDER) {
		assert_int_equal(ctx.stats.in_order, ncuts + 1);
		assert_int_equal(ctx.stats.out_of_order, 0);
	}
	if (order == REVERSED) {
		assert_int_equal(ctx.stats.in_order, 1);
		assert_int_equal(ctx.stats.out_of_order, ncuts);
	}
	if (order != RETRANSMITTED) {
		assert_int_equal(ctx.stats.duplicates, 0);
		assert_int_equal(ctx.stats.overlaps, 0);
	}
	assert_null(d.held);
	assert_null(d.tail);
	assert_int_equal(ctx.mem_used, 0);
	reasm_dir_free(&ctx, &d);
	sink_done(&k);
}

static void test_split_every_position(void **state)
{
	static const char text[] = "NEEDLE in a hay NEEDLENEEDLE stack NEEDL"
				   "E, NEEDLE";
	const unsigned int n = sizeof(text) - 1;
	struct ts_config *conf = needle_conf();
	struct rng r = { test_seed("reasm split", 13) };
	unsigned int runs = 0;

	(void)state;
	for (unsigned int nseg = 2; nseg <= 8; nseg++) {
		for (uint32_t pos = 1; pos < n; pos++) {
			uint32_t cuts[8];
			unsigned int ncuts = 0;

			/* @pos, and nseg - 2 other cuts, all distinct */
			cuts[ncuts++] = pos;
			while (ncuts < nseg - 1) {
				uint32_t x = 1 + rng_below(&r, n - 1);
				bool dup = false;

				for (unsigned int j = 0; j < ncuts; j++)
					dup |= cuts[j] == x;
				if (!dup)
					cuts[ncuts++] = x;
			}
			qsort(cuts, ncuts, sizeof(cuts[0]), cmp_u32);
			for (int o = 0; o < NORDERS; o++) {
				/* the wrap anywhere in the text, or nowhere */
				uint32_t isns[2] = {
					0xffffffffu - rng_below(&r, n + 1),
					rng_below(&r, 1u << 30),
				};

				for (int w = 0; w < 2; w++, runs++)
					run_split(conf, text, n, cuts, ncuts,
						  (enum order)o, isns[w], &r);
			}
		}
	}
	printf("# %u reassemblies\n", runs);
	textsearch_destroy(conf);
}

/* ---- overlap policies ---- */

/*
 * Old segment: 10 'O' at [10, 20), held out of order.  New: 'N' over
 * [ns, ne).  Then 'x' fills [0, min(ns, 10)) and everything is delivered.
 * wins[]: the overlapped bytes' winner per policy, in the order first, last,
 * bsd, linux, windows, solaris, written by hand from Suricata's matrix.
 */
struct overlap_case {
	const char *what;
	uint32_t ns, ne;
	const char *wins;
};

static const struct overlap_case overlap_cases[] = {
	{ "before, ends inside", 5, 15, "ONNNNO" },
	{ "before, ends at its end", 5, 20, "ONNNNN" },
	{ "before, ends after", 5, 25, "ONNNNN" },
	{ "at, ends inside", 10, 15, "ONOOOO" },
	{ "at, ends at its end", 10, 20, "ONOOON" },
	{ "at, ends after", 10, 25, "ONONON" },
	{ "inside, ends inside", 12, 18, "ONOOOO" },
	{ "inside, ends at its end", 15, 20, "ONOOOO" },
	{ "inside, ends after", 15, 25, "ONOOON" },
	/* in order: delivered up to the old segment, the rest overlaps */
	{ "in order, ends inside", 0, 15, "ONNNNO" },
};

static const enum reasm_policy policy_order[6] = {
	REASM_POLICY_FIRST, REASM_POLICY_LAST,	  REASM_POLICY_BSD,
	REASM_POLICY_LINUX, REASM_POLICY_WINDOWS, REASM_POLICY_SOLARIS,
};

static void test_overlap_table(void **state)
{
	const uint32_t isn = 0xfffffff8u; /* and across the wrap */
	uint8_t O[10], N[32], x[16];

	(void)state;
	memset(O, 'O', sizeof(O));
	memset(N, 'N', sizeof(N));
	memset(x, 'x', sizeof(x));
	for (size_t ci = 0;
	     ci < sizeof(overlap_cases) / sizeof(overlap_cases[0]); ci++) {
		const struct overlap_case *oc = &overlap_cases[ci];

		for (int pi = 0; pi < 6; pi++) {
			struct reasm_config cfg = { .policy = policy_order[pi],
						    .depth = 0 };
			struct reasm_ctx ctx;
			struct reasm_dir d;
			struct reasm_consumer c;
			struct sink k;
			char expect[32];
			uint32_t fill = oc->ns < 10 ? oc->ns : 10;
			uint32_t total = oc->ne > 20 ? oc->ne : 20;

			for (uint32_t i = 0; i < total; i++) {
				bool in_new = i >= oc->ns && i < oc->ne;
				bool in_old = i >= 10 && i < 20;

				if (in_new && in_old)
					expect[i] = oc->wins[pi] == 'N' ? 'N' :
									  'O';
				else if (in_new)
					expect[i] = 'N';
				else if (in_old)
					expect[i] = 'O';
				else
					expect[i] = 'x';
			}
			reasm_ctx_init(&ctx, &cfg);
			reasm_dir_init(&d);
			sink_init(&k, &c, NULL);
			reasm_add(&ctx, &d, &c, isn, NULL, 0, REASM_SYN);
			reasm_add(&ctx, &d, &c, isn + 1 + 10, O, 10, 0);
			reasm_add(&ctx, &d, &c, isn + 1 + oc->ns, N,
				  oc->ne - oc->ns, 0);
			if (fill)
				reasm_add(&ctx, &d, &c, isn + 1, x, fill, 0);
			if (k.delivered != total ||
			    memcmp(k.out, expect, total) != 0)
				fail_msg("%s, %s: got %.*s, expected %.*s",
					 oc->what,
					 reasm_policy_name(policy_order[pi]),
					 (int)k.delivered, k.out, (int)total,
					 expect);
			assert_false(k.bad_offset);
			assert_int_equal(ctx.stats.overlaps, 1);
			assert_int_equal(ctx.stats.overlaps_diff, 1);
			assert_int_equal(ctx.stats.duplicates, 0);
			assert_int_equal(ctx.mem_used, 0);
			reasm_dir_free(&ctx, &d);
		}
	}
}

/*
 * Random overlapping segments with random bytes, every policy, against a
 * model kept byte by byte: a byte past the next expected one is held with
 * the range of the segment that brought it first; a later segment's
 * different byte replaces it when the policy prefers the later segment.
 */
#define MODEL_LEN 160

static bool model_wins(enum reasm_policy pol, uint32_t ns, uint32_t ne,
		       uint32_t os, uint32_t oe)
{
	switch (pol) {
	case REASM_POLICY_FIRST:
		return false;
	case REASM_POLICY_LAST:
		return true;
	case REASM_POLICY_SOLARIS:
		if (ns < os || ns == os)
			return ne >= oe;
		return ne > oe;
	case REASM_POLICY_LINUX:
		if (ns == os)
			return ne > oe;
		return ns < os;
	default:
		return ns < os;
	}
}

static void test_random_against_model(void **state)
{
	struct rng r = { test_seed("reasm model", 1982) };

	(void)state;
	for (int round = 0; round < 3000; round++) {
		enum reasm_policy pol = policy_order[round % 6];
		struct reasm_config cfg = { .policy = pol };
		uint8_t byte[MODEL_LEN], held[MODEL_LEN], expect[MODEL_LEN];
		uint32_t os[MODEL_LEN], oe[MODEL_LEN], next = 0;
		uint32_t isn = (uint32_t)rng_next(&r);
		unsigned int nseg = 1 + rng_below(&r, 12);
		struct reasm_ctx ctx;
		struct reasm_dir d;
		struct reasm_consumer c;
		struct sink k;

		memset(held, 0, sizeof(held));
		reasm_ctx_init(&ctx, &cfg);
		reasm_dir_init(&d);
		sink_init(&k, &c, NULL);
		reasm_add(&ctx, &d, &c, isn, NULL, 0, REASM_SYN);
		for (unsigned int i = 0; i < nseg; i++) {
			uint32_t s = rng_below(&r, MODEL_LEN - 1);
			uint32_t e = s + 1 + rng_below(&r, MODEL_LEN - s);
			uint8_t data[MODEL_LEN];

			if (e - s > 40)
				e = s + 1 + rng_below(&r, 40);
			for (uint32_t j = s; j < e; j++)
				data[j - s] = (uint8_t)('a' + rng_below(&r, 3));
			for (uint32_t j = s; j < e; j++) {
				uint8_t b = data[j - s];

				if (j < next)
					continue;
				if (!held[j]) {
					held[j] = 1;
					byte[j] = b;
					os[j] = s;
					oe[j] = e;
				} else if (byte[j] != b &&
					   model_wins(pol, s, e, os[j],
						      oe[j])) {
					byte[j] = b;
				}
			}
			while (next < MODEL_LEN && held[next])
				expect[next] = byte[next], next++;
			assert_int_equal(reasm_add(&ctx, &d, &c, isn + 1 + s,
						   data, e - s, 0),
					 0);
			assert_int_equal(k.next, next);
		}
		assert_int_equal(reasm_close(&ctx, &d, &c), 0);
		for (uint32_t j = next; j < MODEL_LEN; j++)
			if (held[j])
				expect[j] = byte[j];
		assert_false(k.bad_offset);
		assert_int_equal(k.ends, 1);
		for (uint32_t j = 0; j < MODEL_LEN; j++) {
			assert_int_equal(k.seen[j], held[j]);
			if (held[j] && k.out[j] != expect[j])
				fail_msg("round %d (%s): byte %u is %c, not %c",
					 round, reasm_policy_name(pol), j,
					 k.out[j], expect[j]);
		}
		assert_int_equal(ctx.mem_used, 0);
	}
}

/* The table's first row spelled out, and what policies change nothing. */
static void test_overlap_literal(void **state)
{
	struct reasm_config cfg = { .policy = REASM_POLICY_BSD };
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct reasm_consumer c;
	struct sink k;

	(void)state;
	for (int pol = 0; pol < 2; pol++) {
		cfg.policy = pol ? REASM_POLICY_FIRST : REASM_POLICY_BSD;
		reasm_ctx_init(&ctx, &cfg);
		reasm_dir_init(&d);
		sink_init(&k, &c, NULL);
		reasm_add(&ctx, &d, &c, 100, NULL, 0, REASM_SYN);
		reasm_add(&ctx, &d, &c, 111, (const uint8_t *)"0123456789", 10,
			  0);
		reasm_add(&ctx, &d, &c, 106, (const uint8_t *)"abcdefghij", 10,
			  0);
		reasm_add(&ctx, &d, &c, 101, (const uint8_t *)"ABCDE", 5, 0);
		assert_int_equal(k.delivered, 20);
		assert_memory_equal(k.out,
				    pol ? "ABCDEabcde0123456789" :
					  "ABCDEabcdefghij56789",
				    20);
		reasm_dir_free(&ctx, &d);
	}

	/* the same bytes again: an overlap, not a different one; an exact
	 * copy of held data: a duplicate; data already delivered: too */
	reasm_ctx_init(&ctx, NULL);
	reasm_dir_init(&d);
	sink_init(&k, &c, NULL);
	reasm_add(&ctx, &d, &c, 100, NULL, 0, REASM_SYN);
	reasm_add(&ctx, &d, &c, 111, (const uint8_t *)"0123456789", 10, 0);
	reasm_add(&ctx, &d, &c, 116, (const uint8_t *)"56789XY", 7, 0);
	assert_int_equal(ctx.stats.overlaps, 1);
	assert_int_equal(ctx.stats.overlaps_diff, 0);
	reasm_add(&ctx, &d, &c, 111, (const uint8_t *)"0123456789", 10, 0);
	assert_int_equal(ctx.stats.duplicates, 1);
	assert_int_equal(ctx.stats.out_of_order, 2);
	reasm_add(&ctx, &d, &c, 101, (const uint8_t *)"ABCDEFGHIJ", 10, 0);
	assert_int_equal(k.delivered, 22);
	assert_memory_equal(k.out, "ABCDEFGHIJ0123456789XY", 22);
	reasm_add(&ctx, &d, &c, 105, (const uint8_t *)"EFG", 3, 0);
	assert_int_equal(ctx.stats.duplicates, 2);
	/* partly delivered, partly new: an overlap, delivered from the end */
	reasm_add(&ctx, &d, &c, 120, (const uint8_t *)"9XYZW", 5, 0);
	assert_int_equal(ctx.stats.overlaps, 2);
	assert_int_equal(k.delivered, 24);
	assert_memory_equal(k.out + 20, "XYZW", 4);
	assert_int_equal(ctx.stats.in_order, 2);
	assert_int_equal(ctx.mem_used, 0);
	reasm_dir_free(&ctx, &d);
}

/* ---- gaps ---- */

static void add_str(struct reasm_ctx *ctx, struct reasm_dir *d,
		    const struct reasm_consumer *c, uint32_t seq, const char *s)
{
	assert_int_equal(
		reasm_add(ctx, d, c, seq, (const uint8_t *)s, strlen(s), 0), 0);
}

static void test_gap_hole_timeout(void **state)
{
	struct ts_config *conf = needle_conf();
	const uint32_t isn = 0xfffffffcu;
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct reasm_consumer c;
	struct sink k;

	(void)state;
	reasm_ctx_init(&ctx, NULL);
	reasm_dir_init(&d);
	sink_init(&k, &c, conf);
	reasm_add(&ctx, &d, &c, isn, NULL, 0, REASM_SYN);
	/* "NEE" before the hole and "DLE" after it must not match */
	add_str(&ctx, &d, &c, isn + 1, "abcNEE");
	add_str(&ctx, &d, &c, isn + 1 + 10, "DLExyz");
	add_str(&ctx, &d, &c, isn + 1 + 16, "NEEDLE--NEEDLE");
	assert_int_equal(k.delivered, 6);
	assert_int_equal(reasm_skip_hole(&ctx, &d, &c), 0);
	assert_int_equal(k.ngaps, 1);
	assert_int_equal(k.gap_off[0], 6);
	assert_int_equal(k.gap_len[0], 4);
	assert_int_equal(k.delivered, 26);
	assert_memory_equal(k.out + 10, "DLExyzNEEDLE--NEEDLE", 20);
	/* nothing held: no hole is known */
	assert_int_equal(reasm_skip_hole(&ctx, &d, &c), 0);
	assert_int_equal(k.ngaps, 1);
	/* a match right after a second gap */
	add_str(&ctx, &d, &c, isn + 1 + 40, "NEEDLE");
	assert_int_equal(reasm_skip_hole(&ctx, &d, &c), 0);
	assert_int_equal(reasm_close(&ctx, &d, &c), 0);
	assert_false(k.bad_offset);
	assert_int_equal(k.ngaps, 2);
	assert_int_equal(k.gap_off[1], 30);
	assert_int_equal(k.gap_len[1], 10);
	assert_int_equal(k.ends, 1);
	assert_int_equal(k.end_off, 46);
	assert_int_equal(k.nmatches, 3);
	assert_int_equal(k.mstart[0], 16);
	assert_int_equal(k.mstart[1], 24);
	assert_int_equal(k.mstart[2], 40);
	assert_int_equal(k.mend[2], 46);
	assert_int_equal(ctx.stats.gaps, 2);
	assert_int_equal(ctx.stats.gap_bytes, 14);
	assert_int_equal(ctx.mem_used, 0);
	sink_done(&k);
	textsearch_destroy(conf);
}

static void test_gap_window(void **state)
{
	struct reasm_config cfg = { .min_window = 32, .max_window = 64 };
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct reasm_consumer c;
	struct sink k;
	uint8_t buf[128];

	(void)state;
	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)('a' + i % 26);
	reasm_ctx_init(&ctx, &cfg);
	reasm_dir_init(&d);
	sink_init(&k, &c, NULL);
	reasm_add(&ctx, &d, &c, 1000, NULL, 0, REASM_SYN);
	reasm_add(&ctx, &d, &c, 1001, buf, 8, 0);
	/* [50, 60) ends past 8 + 32: [8, 28) must have been lost */
	reasm_add(&ctx, &d, &c, 1001 + 50, buf + 50, 10, 0);
	assert_int_equal(k.ngaps, 1);
	assert_int_equal(k.gap_off[0], 8);
	assert_int_equal(k.gap_len[0], 20);
	assert_int_equal(d.held_bytes, 10);
	/* a late copy of [28, 40) is still taken */
	reasm_add(&ctx, &d, &c, 1001 + 28, buf + 28, 12, 0);
	assert_int_equal(k.delivered, 20);
	assert_int_equal(reasm_skip_hole(&ctx, &d, &c), 0);
	assert_int_equal(k.ngaps, 2);
	assert_int_equal(k.gap_off[1], 40);
	assert_int_equal(k.gap_len[1], 10);
	assert_int_equal(k.delivered, 30);
	assert_memory_equal(k.out + 50, buf + 50, 10);
	/* a larger advertised window holds more */
	reasm_window(&d, 1000);
	reasm_add(&ctx, &d, &c, 1001 + 100, buf, 8, 0);
	assert_int_equal(k.ngaps, 2);
	/* but never more than max_window: [200, 208) needs the next byte at
	 * 144 at least: the hole before the held run and the one after it */
	reasm_add(&ctx, &d, &c, 1001 + 200, buf, 8, 0);
	assert_int_equal(k.ngaps, 4);
	assert_int_equal(k.gap_off[2], 60);
	assert_int_equal(k.gap_len[2], 40);
	assert_int_equal(k.gap_off[3], 108);
	assert_int_equal(k.gap_len[3], 36);
	assert_int_equal(k.delivered, 38);
	assert_false(k.bad_offset);
	assert_int_equal(ctx.stats.gap_bytes, 20 + 10 + 40 + 36);
	reasm_dir_free(&ctx, &d);
	assert_int_equal(ctx.mem_used, 0);
}

/* Offsets past 2^32 (the sequence numbers wrap twice on the way). */
static void test_gap_64bit_offsets(void **state)
{
	struct reasm_config cfg = { .max_window = 1u << 30 };
	struct ts_config *conf = needle_conf();
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct reasm_consumer c;
	struct sink k;
	const uint32_t isn = 123456789;
	uint64_t off = 0;

	(void)state;
	reasm_ctx_init(&ctx, &cfg);
	reasm_dir_init(&d);
	sink_init(&k, &c, conf);
	reasm_window(&d, 1u << 30);
	reasm_add(&ctx, &d, &c, isn, NULL, 0, REASM_SYN);
	for (int i = 0; i < 10; i++) {
		off += (1u << 30) - 16;
		add_str(&ctx, &d, &c, isn + 1 + (uint32_t)off, "NEEDLE");
		assert_int_equal(reasm_skip_hole(&ctx, &d, &c), 0);
		off += 6;
	}
	assert_int_equal(reasm_close(&ctx, &d, &c), 0);
	assert_int_equal(k.nmatches, 10);
	assert_true(k.mstart[9] > (2ull << 32));
	assert_int_equal(k.mstart[9], off - 6);
	assert_int_equal(k.end_off, off);
	assert_int_equal(ctx.stats.gaps, 10);
	assert_int_equal(ctx.stats.gap_bytes, off - 60);
	sink_done(&k);
	textsearch_destroy(conf);
}

/* ---- memcap, depth, FIN, RST, stopping ---- */

static void test_memcap(void **state)
{
	struct reasm_config cfg = { .memcap = 300 };
	struct reasm_ctx ctx;
	struct reasm_dir a, b;
	struct reasm_consumer c;
	struct sink k;
	static uint8_t buf[2000];

	(void)state;
	memset(buf, 'm', sizeof(buf));
	reasm_ctx_init(&ctx, &cfg);
	reasm_dir_init(&a);
	reasm_dir_init(&b);
	sink_init(&k, &c, NULL);
	reasm_add(&ctx, &a, &c, 0, NULL, 0, REASM_SYN);
	reasm_add(&ctx, &b, &c, 5000, NULL, 0, REASM_SYN);
	reasm_add(&ctx, &a, &c, 1 + 10, buf, 400, 0);
	assert_int_equal(ctx.stats.memcap_drops, 1);
	assert_int_equal(ctx.mem_used, 0);
	assert_null(a.held);
	reasm_add(&ctx, &a, &c, 1 + 10, buf, 200, 0);
	assert_int_equal(ctx.stats.memcap_drops, 1);
	assert_true(ctx.mem_used > 200 && ctx.mem_used <= 300);
	/* the memcap is shared: the other direction cannot hold as much */
	reasm_add(&ctx, &b, &c, 5001 + 10, buf, 200, 0);
	assert_int_equal(ctx.stats.memcap_drops, 2);
	assert_null(b.held);
	/* in-order data is never held, so never dropped */
	reasm_add(&ctx, &b, &c, 5001, buf, 2000, 0);
	assert_int_equal(k.delivered, 2000);
	reasm_add(&ctx, &a, &c, 1, buf, 10, 0);
	assert_int_equal(k.delivered, 2210);
	assert_int_equal(ctx.mem_used, 0);
	assert_int_equal(ctx.stats.out_of_order, 1);
	assert_int_equal(ctx.stats.in_order, 2);
	reasm_dir_free(&ctx, &a);
	reasm_dir_free(&ctx, &b);
}

/* At most REASM_MAX_RUNS runs held (runs are never merged, so filling a
 * hole makes one): one more is a memcap drop.  Then holes filled in order,
 * each after the last insert (the finger), deliver every byte once. */
static void test_runs_limit(void **state)
{
	struct reasm_ctx ctx;
	struct reasm_dir a;
	struct reasm_consumer c;
	struct sink k;
	static uint8_t bytes[MAX_OUT];
	const uint64_t first = 100, n = REASM_MAX_RUNS, m = 300;
	uint64_t i, end = first + 2 * n;

	(void)state;
	assert_true(end + 2 <= MAX_OUT);
	for (i = 0; i < MAX_OUT; i++)
		bytes[i] = (uint8_t)(i * 7 + 1);
	reasm_ctx_init(&ctx, NULL);
	reasm_dir_init(&a);
	sink_init(&k, &c, NULL);
	reasm_add(&ctx, &a, &c, 0, NULL, 0, REASM_SYN);
	/* runs at 100, 102, ... apart: as many as allowed, then one more */
	for (i = 0; i < n; i++)
		reasm_add(&ctx, &a, &c, 1 + (uint32_t)(first + 2 * i),
			  bytes + first + 2 * i, 1, 0);
	assert_int_equal(a.nruns, n);
	assert_int_equal(ctx.stats.memcap_drops, 0);
	reasm_add(&ctx, &a, &c, 1 + (uint32_t)end, bytes + end, 1, 0);
	assert_int_equal(ctx.stats.memcap_drops, 1);
	/* a hole filled needs a run too */
	reasm_add(&ctx, &a, &c, 1 + (uint32_t)first + 1, bytes + first + 1, 1,
		  0);
	assert_int_equal(ctx.stats.memcap_drops, 2);
	/* bytes within what is held need none: a duplicate */
	reasm_add(&ctx, &a, &c, 1 + (uint32_t)first, bytes + first, 1, 0);
	assert_int_equal(ctx.stats.memcap_drops, 2);
	assert_int_equal(a.nruns, n);
	assert_int_equal(k.delivered, 0);
	/* in-order bytes are never held: they go, and the runs after them */
	reasm_add(&ctx, &a, &c, 1, bytes, (size_t)first, 0);
	assert_int_equal(k.delivered, first + 1);
	assert_int_equal(a.nruns, n - 1);
	reasm_dir_free(&ctx, &a);
	assert_int_equal(ctx.mem_used, 0);

	/* m runs apart, their holes filled in order, then the first bytes */
	reasm_dir_init(&a);
	sink_init(&k, &c, NULL);
	end = first + 2 * m;
	reasm_add(&ctx, &a, &c, 0, NULL, 0, REASM_SYN);
	for (i = first; i < end; i += 2)
		reasm_add(&ctx, &a, &c, 1 + (uint32_t)i, bytes + i, 1, 0);
	for (i = first + 1; i < end; i += 2)
		reasm_add(&ctx, &a, &c, 1 + (uint32_t)i, bytes + i, 1, 0);
	assert_int_equal(a.nruns, 2 * m);
	assert_int_equal(k.delivered, 0);
	reasm_add(&ctx, &a, &c, 1, bytes, (size_t)first, 0);
	assert_int_equal(k.delivered, end);
	assert_int_equal(a.nruns, 0);
	assert_null(a.held);
	assert_int_equal(ctx.mem_used, 0);
	/* the finger went with its run: a new hole is placed from the head */
	reasm_add(&ctx, &a, &c, 1 + (uint32_t)end + 1, bytes + end + 1, 1, 0);
	reasm_add(&ctx, &a, &c, 1 + (uint32_t)end, bytes + end, 1, 0);
	assert_int_equal(k.delivered, end + 2);
	assert_false(k.bad_offset);
	assert_memory_equal(k.out, bytes, (size_t)(end + 2));
	for (i = 0; i < end + 2; i++)
		assert_int_equal(k.seen[i], 1);
	assert_int_equal(ctx.stats.memcap_drops, 2);
	reasm_dir_free(&ctx, &a);
}

static void test_depth(void **state)
{
	struct reasm_config cfg = { .depth = 9 };
	struct ts_config *conf = needle_conf();
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct reasm_consumer c;
	struct sink k;

	(void)state;
	reasm_ctx_init(&ctx, &cfg);
	reasm_dir_init(&d);
	sink_init(&k, &c, conf);
	reasm_add(&ctx, &d, &c, 7, NULL, 0, REASM_SYN);
	add_str(&ctx, &d, &c, 8 + 20, "held, then freed");
	assert_true(ctx.mem_used > 0);
	/* NEEDLE at [4, 10) crosses the depth: not delivered whole */
	add_str(&ctx, &d, &c, 8, "xxxxNEEDLExxxxxxxxxx");
	assert_int_equal(k.delivered, 9);
	assert_int_equal(k.ends, 1);
	assert_int_equal(k.end_off, 9);
	assert_int_equal(k.nmatches, 0);
	assert_int_equal(ctx.stats.depth_reached, 1);
	assert_int_equal(ctx.mem_used, 0);
	add_str(&ctx, &d, &c, 8 + 40, "NEEDLE");
	assert_int_equal(reasm_close(&ctx, &d, &c), 0);
	assert_int_equal(k.delivered, 9);
	assert_int_equal(k.ends, 1);
	assert_int_equal(ctx.stats.depth_reached, 1);
	assert_true(d.flags & REASM_F_DEPTH);
	sink_done(&k);

	/* depth 0: no limit; the default: 1 MiB */
	reasm_ctx_init(&ctx, NULL);
	assert_int_equal(ctx.cfg.depth, REASM_DEFAULT_DEPTH);
	assert_int_equal(ctx.cfg.memcap, REASM_DEFAULT_MEMCAP);
	textsearch_destroy(conf);
}

static void test_fin_rst_midstream(void **state)
{
	struct reasm_config cfg = { .no_midstream = true };
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct reasm_consumer c;
	struct sink k;

	(void)state;
	/* FIN before the first data; data past the FIN is cut off */
	reasm_ctx_init(&ctx, NULL);
	reasm_dir_init(&d);
	sink_init(&k, &c, NULL);
	reasm_add(&ctx, &d, &c, 50, NULL, 0, REASM_SYN);
	reasm_add(&ctx, &d, &c, 56, (const uint8_t *)"world", 5, REASM_FIN);
	reasm_add(&ctx, &d, &c, 59, (const uint8_t *)"ldXX", 4, 0);
	assert_int_equal(ctx.stats.beyond_fin, 1);
	assert_int_equal(ctx.stats.duplicates, 1);
	assert_int_equal(k.ends, 0);
	reasm_add(&ctx, &d, &c, 51, (const uint8_t *)"hello", 5, 0);
	assert_int_equal(k.ends, 1);
	assert_int_equal(k.end_off, 10);
	assert_int_equal(k.delivered, 10);
	assert_memory_equal(k.out, "helloworld", 10);
	reasm_add(&ctx, &d, &c, 61, (const uint8_t *)"more", 4, 0);
	assert_int_equal(k.delivered, 10);
	assert_int_equal(reasm_close(&ctx, &d, &c), 0);
	assert_int_equal(k.ends, 1);
	assert_false(k.bad_offset);

	/* midstream pickup (the default): offset 0 is the first byte seen;
	 * RST delivers what is held, holes as gaps, and ends */
	reasm_ctx_init(&ctx, NULL);
	reasm_dir_init(&d);
	sink_init(&k, &c, NULL);
	reasm_add(&ctx, &d, &c, 0xfffffffe, (const uint8_t *)"abcd", 4, 0);
	reasm_add(&ctx, &d, &c, 8, (const uint8_t *)"ijk", 3, 0);
	assert_true(d.flags & REASM_F_MIDSTREAM);
	reasm_add(&ctx, &d, &c, 11, NULL, 0, REASM_RST);
	assert_int_equal(k.ngaps, 1);
	assert_int_equal(k.gap_off[0], 4);
	assert_int_equal(k.gap_len[0], 6);
	assert_int_equal(k.ends, 1);
	assert_int_equal(k.end_off, 13);
	assert_memory_equal(k.out + 10, "ijk", 3);
	assert_int_equal(ctx.mem_used, 0);

	/* --no-midstream: a direction without its SYN is ignored */
	reasm_ctx_init(&ctx, &cfg);
	reasm_dir_init(&d);
	sink_init(&k, &c, NULL);
	reasm_add(&ctx, &d, &c, 1, (const uint8_t *)"abcd", 4, 0);
	reasm_add(&ctx, &d, &c, 0, NULL, 0, REASM_SYN);
	reasm_add(&ctx, &d, &c, 1, (const uint8_t *)"abcd", 4, 0);
	assert_int_equal(k.delivered, 0);
	assert_int_equal(ctx.stats.not_picked_up, 1);
	assert_int_equal(reasm_close(&ctx, &d, &c), 0);
	assert_int_equal(k.ends, 0);
}

/* A consumer that frees the direction and stops, as -n reached would. */
static void test_stop_frees_direction(void **state)
{
	struct reasm_ctx ctx;
	struct reasm_dir *d = calloc(1, sizeof(*d));
	struct reasm_consumer c;
	struct sink k;

	(void)state;
	assert_non_null(d);
	reasm_ctx_init(&ctx, NULL);
	sink_init(&k, &c, NULL);
	k.stop_at = 2;
	k.free_ctx = &ctx;
	k.free_dir = d;
	reasm_add(&ctx, d, &c, 0, NULL, 0, REASM_SYN);
	reasm_add(&ctx, d, &c, 1 + 3, (const uint8_t *)"def", 3, 0);
	reasm_add(&ctx, d, &c, 1 + 9, (const uint8_t *)"jkl", 3, 0);
	assert_true(ctx.mem_used > 0);
	/* "abc" delivered (run 1), "def" (run 2) stops: d is gone */
	assert_int_equal(reasm_add(&ctx, d, &c, 1, (const uint8_t *)"abc", 3,
				   0),
			 REASM_STOPPED);
	assert_null(k.free_dir);
	assert_int_equal(k.runs, 2);
	assert_int_equal(ctx.mem_used, 0);
}

static void test_policy_names(void **state)
{
	enum reasm_policy p;

	(void)state;
	assert_int_equal(reasm_policy_parse("solaris", &p), 0);
	assert_int_equal(p, REASM_POLICY_SOLARIS);
	assert_string_equal(reasm_policy_name(REASM_POLICY_BSD), "bsd");
	assert_int_equal(reasm_policy_parse("vista", &p), -1);
	assert_true(sizeof(struct reasm_dir) <= 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_every_position),
		cmocka_unit_test(test_overlap_table),
		cmocka_unit_test(test_overlap_literal),
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_gap_hole_timeout),
		cmocka_unit_test(test_gap_window),
		cmocka_unit_test(test_gap_64bit_offsets),
		cmocka_unit_test(test_memcap),
		cmocka_unit_test(test_runs_limit),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_fin_rst_midstream),
		cmocka_unit_test(test_stop_frees_direction),
		cmocka_unit_test(test_policy_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
