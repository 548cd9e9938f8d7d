/*
 * test_skb.c - packet buffers (textsearch_skb.h): skb_find_text() and
 * textsearch_next() on random buffer layouts against a naive search of the
 * flat bytes, skb_seq_read() itself, the kernel's xt_string selftest
 * layout, the buffer operations and their errors, and threads sharing one
 * config and one buffer.
 *
 * Random layouts mix empty and non-empty linear parts (some with a pulled
 * header or a trimmed tail), 0 to MAX_SKB_FRAGS fragments (empty ones too,
 * each in an allocation of exactly its size so AddressSanitizer catches a
 * read past it), and frag_list members that have fragments and sometimes a
 * frag_list of their own.
 *
 * TS_TEST_CASES sets the number of random layouts (default 12000);
 * TS_TEST_SEED repeats a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testsupport.h"
#include "textsearch_fsm.h"
#include "textsearch_skb.h"

static unsigned long layouts_to_test(void)
{
	const char *env = getenv("TS_TEST_CASES");
	unsigned long n = env ? strtoul(env, NULL, 0) : 12000ul;

	return n ? n : 1;
}

/* ---- fragments: copies that count their releases ---- */

/* Only the building thread adds and frees fragments. */
static unsigned long frags_added, frags_released;

static void release_copy(void *cookie)
{
	free(cookie);
	frags_released++;
}

/* Add @size bytes of @src as a fragment in its own allocation of exactly
 * that size (an empty one sometimes with a NULL pointer). */
static void add_frag_copy(struct sk_buff *skb, const u8 *src, unsigned int size,
			  bool null_if_empty)
{
	u8 *copy = NULL;

	if (size || !null_if_empty) {
		copy = malloc(size ? size : 1);
		assert_non_null(copy);
		if (size)
			memcpy(copy, src, size);
	}
	assert_int_equal(skb_add_frag(skb, copy, size, release_copy, copy), 0);
	frags_added++;
}

/* ---- random layouts ---- */

#define FLAT_MAX 420u

/* The bytes a layout is cut from, in stream order. */
struct flat {
	u8 bytes[FLAT_MAX];
	unsigned int len;  /* bytes available */
	unsigned int used; /* bytes the buffer took */
};

static unsigned int piece_size(struct rng *r, unsigned int left)
{
	unsigned int kind = rng_below(r, 5), size;

	if (kind == 0)
		size = 0;
	else if (kind == 1)
		size = 1 + rng_below(r, 3);
	else
		size = 1 + rng_below(r, 60);
	return size < left ? size : left;
}

/* One buffer of the layout: a linear part (after a pulled header and
 * before a trimmed tail of junk, sometimes), fragments, then members
 * built the same way, @depth levels deep at most. */
static struct sk_buff *build_random(struct rng *r, struct flat *f,
				    unsigned int depth)
{
	unsigned int head = piece_size(r, f->len - f->used);
	unsigned int reserve = rng_below(r, 3) ? 0 : rng_below(r, 16);
	unsigned int junk_front = rng_below(r, 4) ? 0 : 1 + rng_below(r, 28);
	unsigned int junk_back = rng_below(r, 6) ? 0 : 1 + rng_below(r, 9);
	unsigned int nfrags, members, i;
	struct sk_buff *skb;

	skb = alloc_skb(reserve + junk_front + head + junk_back, GFP_KERNEL);
	assert_non_null(skb);
	skb_reserve(skb, reserve);
	memset(skb_put(skb, junk_front), '#', junk_front);
	skb_put_data(skb, f->bytes + f->used, head);
	memset(skb_put(skb, junk_back), '#', junk_back);
	assert_non_null(skb_pull(skb, junk_front));
	assert_int_equal(skb_trim_len(skb, head), 0);
	f->used += head;

	nfrags = rng_below(r, 4) ? rng_below(r, 4) :
				   rng_below(r, MAX_SKB_FRAGS + 1);
	for (i = 0; i < nfrags; i++) {
		unsigned int size = piece_size(r, f->len - f->used);

		add_frag_copy(skb, f->bytes + f->used, size, rng_below(r, 2));
		f->used += size;
	}
	members = depth ? rng_below(r, depth == 3 ? 6 : 3) : 0;
	for (i = 0; i < members; i++) {
		struct sk_buff *m = build_random(r, f, depth - 1);

		assert_int_equal(skb_append_frag_list(skb, m), 0);
	}
	return skb;
}

/* Bytes to draw from: tiny alphabets make matches common; both cases of
 * ASCII and ISO-8859-1 letters exercise TS_IGNORECASE. */
static const u8 alphabets[][8] = {
	{ 'a', 'b' },
	{ 'a', 'b', 'c' },
	{ 'a', 'A', 'b', 'B' },
	{ 0xC9, 0xE9, 'e', 'E', 0x00, 0xFF },
};
static const unsigned int alphabet_sizes[] = { 2, 3, 4, 6 };

struct scase {
	struct flat f;
	u8 pat[40];
	unsigned int plen;
	bool icase;
};

static void make_scase(struct rng *r, struct scase *c)
{
	unsigned int a = rng_below(r, 4), i;

	c->icase = rng_below(r, 3) == 0;
	c->plen = rng_below(r, 4) ? 1 + rng_below(r, 6) : 1 + rng_below(r, 40);
	for (i = 0; i < c->plen; i++)
		c->pat[i] = alphabets[a][rng_below(r, alphabet_sizes[a])];
	c->f.len = rng_below(r, 5) ? rng_below(r, FLAT_MAX + 1) :
				     rng_below(r, 12);
	c->f.used = 0;
	for (i = 0; i < c->f.len; i++)
		c->f.bytes[i] = alphabets[a][rng_below(r, alphabet_sizes[a])];
	/* plant copies, case flipped sometimes, to make long matches */
	while (c->plen <= c->f.len && rng_below(r, 3)) {
		unsigned int at = rng_below(r, c->f.len - c->plen + 1);

		for (i = 0; i < c->plen; i++) {
			u8 b = c->pat[i];

			if (c->icase && rng_below(r, 2) && ref_fold(b) != b)
				b = ref_fold(b);
			c->f.bytes[at + i] = b;
		}
	}
}

/* A window [from, to) that is sometimes reversed or out of range. */
static void random_window(struct rng *r, unsigned int len, unsigned int *from,
			  unsigned int *to)
{
	switch (rng_below(r, 8)) {
	case 0:
		*from = 0;
		*to = UINT_MAX;
		break;
	case 1:
		*from = rng_below(r, len + 8);
		*to = *from + rng_below(r, 4); /* tiny, maybe past the end */
		break;
	default:
		*from = rng_below(r, len + 3);
		*to = rng_below(r, len + 6); /* sometimes before from */
		break;
	}
}

static void clamp_window(unsigned int len, unsigned int *from, unsigned int *to)
{
	if (*to > len)
		*to = len;
	if (*from > *to)
		*from = *to;
}

/* ---- 1. differential ---- */

static const char *const diff_algos[] = { "kmp", "bm", "rarebyte", "auto",
					  "fsm" };
#define N_DIFF_ALGOS (sizeof(diff_algos) / sizeof(diff_algos[0]))

static struct ts_config *prepare_case(const char *algo, const struct scase *c)
{
	struct ts_config *conf;

	if (!strcmp(algo, "fsm")) {
		/* anything, then the literal as SPECIFIC SINGLE tokens: the
		 * same matches as a literal search */
		struct ts_fsm_token tok[41] = {
			{ TS_FSM_WILDCARD, TS_FSM_HEAD_IGNORE, 0 },
		};
		unsigned int i;

		for (i = 0; i < c->plen; i++) {
			tok[i + 1].type = TS_FSM_SPECIFIC;
			tok[i + 1].recur = TS_FSM_SINGLE;
			tok[i + 1].value = c->pat[i];
		}
		conf = textsearch_prepare("fsm", tok,
					  (c->plen + 1) *
						  (unsigned int)sizeof(tok[0]),
					  GFP_KERNEL, 0);
	} else {
		conf = textsearch_prepare(algo, c->pat, c->plen, GFP_KERNEL,
					  c->icase ? TS_IGNORECASE : 0);
	}
	if (IS_ERR(conf))
		fprintf(stderr, "%s: prepare: %s\n", algo,
			textsearch_strerror((int)PTR_ERR(conf)));
	assert_false(IS_ERR(conf));
	return conf;
}

static void report(const char *algo, const struct scase *c, unsigned int from,
		   unsigned int to, const char *what, unsigned int got,
		   unsigned int want)
{
	unsigned int i;

	fprintf(stderr,
		"%s: %s: window [%u, %u) of %u: got %u, want %u, "
		"icase %d\npattern:",
		algo, what, from, to, c->f.used, got, want, c->icase);
	for (i = 0; i < c->plen; i++)
		fprintf(stderr, " %02x", c->pat[i]);
	fprintf(stderr, "\n");
}

/* Search one window; return the results compared, or -1 on a mismatch. */
static long diff_window(const char *algo, struct ts_config *conf,
			const struct scase *c, struct sk_buff *skb,
			unsigned int from, unsigned int to)
{
	unsigned int lo = from, hi = to, want, got, first;
	bool icase = c->icase && strcmp(algo, "fsm") != 0;
	struct ts_state st;
	long compared = 0;

	clamp_window(c->f.used, &lo, &hi);
	want = ref_find(c->pat, c->plen, c->f.bytes + lo, hi - lo, 0, icase);
	first = skb_find_text(skb, from, to, conf);
	if (first != want) {
		report(algo, c, from, to, "skb_find_text", first, want);
		return -1;
	}
	got = skb_find_text_state(skb, from, to, conf, &st);
	for (;;) {
		if (got != want) {
			report(algo, c, from, to, "find_text_state/next", got,
			       want);
			return -1;
		}
		compared++;
		if (want == UINT_MAX)
			break;
		want = ref_find(c->pat, c->plen, c->f.bytes + lo, hi - lo,
				want + c->plen, icase);
		got = textsearch_next(conf, &st);
	}
	if (textsearch_next(conf, &st) != UINT_MAX) {
		report(algo, c, from, to, "next after the end", 0, UINT_MAX);
		return -1;
	}
	return compared + 1;
}

static void test_differential(void **unused)
{
	unsigned long n = layouts_to_test(), i, cases[N_DIFF_ALGOS] = { 0 };
	unsigned long results[N_DIFF_ALGOS] = { 0 }, total_cases = 0;
	struct rng r = { test_seed("skb differential", 20261203) };
	size_t a;

	(void)unused;
	for (i = 0; i < n; i++) {
		struct scase c;
		struct sk_buff *skb;
		unsigned long added_before = frags_added;
		unsigned long released_before = frags_released;

		make_scase(&r, &c);
		skb = build_random(&r, &c.f, 1 + rng_below(&r, 3));
		assert_int_equal(skb->len, c.f.used);
		for (a = 0; a < N_DIFF_ALGOS; a++) {
			struct ts_config *conf;
			unsigned int w;

			if (!strcmp(diff_algos[a], "fsm") && c.icase)
				continue; /* fsm takes no TS_IGNORECASE */
			conf = prepare_case(diff_algos[a], &c);
			for (w = 0; w < 3; w++) {
				unsigned int from, to;
				long m;

				random_window(&r, c.f.used, &from, &to);
				m = diff_window(diff_algos[a], conf, &c, skb,
						from, to);
				assert_true(m >= 0);
				cases[a]++;
				results[a] += (unsigned long)m;
			}
			textsearch_destroy(conf);
		}
		kfree_skb(skb);
		assert_int_equal(frags_released - released_before,
				 frags_added - added_before);
	}
	for (a = 0; a < N_DIFF_ALGOS; a++) {
		printf("# skb differential: %s: %lu cases, %lu results "
		       "compared, 0 failures\n",
		       diff_algos[a], cases[a], results[a]);
		total_cases += cases[a];
	}
	printf("# skb differential: %lu layouts, %lu cases in all\n", n,
	       total_cases);
}

/* ---- 2. skb_seq_read ---- */

/* Read [from, to) block by block; every block must hold exactly the flat
 * bytes at its offset and end by to. */
static void check_block(const struct flat *f, unsigned int lo, unsigned int hi,
			unsigned int consumed, const u8 *block, unsigned int n)
{
	assert_true(n > 0);
	assert_true(consumed < hi - lo);
	assert_true(n <= hi - lo - consumed);
	assert_memory_equal(block, f->bytes + lo + consumed, n);
}

static void test_seq_read(void **unused)
{
	unsigned long n = layouts_to_test() / 4 + 1, i, blocks = 0, jumps = 0;
	unsigned long backs = 0;
	struct rng r = { test_seed("skb seq_read", 4242) };

	(void)unused;
	for (i = 0; i < n; i++) {
		struct scase c;
		struct sk_buff *skb;
		struct skb_seq_state st;
		unsigned int from, to, lo, hi, consumed, got, k;
		const u8 *block;

		make_scase(&r, &c);
		skb = build_random(&r, &c.f, 1 + rng_below(&r, 3));
		if (i & 1) {
			random_window(&r, c.f.used, &from, &to);
		} else {
			from = 0;
			to = c.f.used;
		}
		lo = from;
		hi = to;
		clamp_window(c.f.used, &lo, &hi);

		/* the whole range, block after block */
		skb_prepare_seq_read(skb, from, to, &st);
		consumed = 0;
		while ((got = skb_seq_read(consumed, &block, &st)) != 0) {
			check_block(&c.f, lo, hi, consumed, block, got);
			consumed += got;
			blocks++;
		}
		assert_int_equal(consumed, hi - lo);
		assert_int_equal(skb_seq_read(consumed + 5, &block, &st), 0);
		skb_abort_seq_read(&st);

		/* jumps forward into the middle of blocks and back again */
		skb_prepare_seq_read(skb, from, to, &st);
		consumed = 0;
		for (k = 0; k < 24 && hi > lo; k++) {
			got = skb_seq_read(consumed, &block, &st);
			check_block(&c.f, lo, hi, consumed, block, got);
			if (rng_below(&r, 4) == 0) {
				consumed = rng_below(&r, hi - lo);
				backs++;
			} else {
				consumed += rng_below(&r, got + 8);
				jumps++;
				if (consumed >= hi - lo) {
					assert_int_equal(skb_seq_read(consumed,
								      &block,
								      &st),
							 0);
					break;
				}
			}
			if (rng_below(&r, 8) == 0)
				skb_abort_seq_read(&st); /* then read on */
		}
		kfree_skb(skb);
	}
	printf("# skb seq_read: %lu layouts, %lu blocks, %lu jumps forward, "
	       "%lu moves anywhere, 0 failures\n",
	       n, blocks, jumps, backs);
}

/* ---- 3. the kernel's xt_string selftest ---- */

/*
 * The layout of tools/testing/selftests/net/netfilter/xt_string.sh: one
 * UDP datagram whose payload is spaces then the 11-byte pattern, placed so
 * that it starts at @at (offsets from the IPv4 header, 28 bytes of IPv4 and
 * UDP header first).  A 1500-byte MTU splits it after 1500 bytes: the head
 * buffer holds the first 1500, a frag_list member pulled past its own IPv4
 * header the rest, as IP reassembly chains them.  Four string rules:
 * bm and kmp, each with --from 1000 --to 1500 and --from 1400 --to 1600.
 */
#define XT_PATTERN "foo bar baz"
#define XT_PATLEN 11u
#define XT_HDRLEN 28u
#define XT_SPLIT 1500u

static struct sk_buff *xt_datagram(unsigned int at)
{
	unsigned int start = at > XT_HDRLEN ? at : XT_HDRLEN;
	unsigned int total = start + XT_PATLEN, i;
	u8 *flat = malloc(total);
	struct sk_buff *head, *rest;

	assert_non_null(flat);
	memset(flat, 0, XT_HDRLEN);
	flat[0] = 0x45; /* IPv4, 20-byte header */
	flat[9] = 17;	/* UDP */
	for (i = XT_HDRLEN; i < start; i++)
		flat[i] = ' ';
	memcpy(flat + start, XT_PATTERN, XT_PATLEN);

	head = alloc_skb(XT_SPLIT, GFP_KERNEL);
	assert_non_null(head);
	skb_reset_network_header(head);
	skb_put_data(head, flat, total < XT_SPLIT ? total : XT_SPLIT);
	if (total > XT_SPLIT) {
		rest = alloc_skb(20 + total - XT_SPLIT, GFP_KERNEL);
		assert_non_null(rest);
		memset(skb_put(rest, 20), 0x45, 20); /* its own IP header */
		skb_put_data(rest, flat + XT_SPLIT, total - XT_SPLIT);
		assert_non_null(skb_pull(rest, 20));
		assert_int_equal(skb_append_frag_list(head, rest), 0);
	}
	assert_int_equal(head->len, total);
	free(flat);
	return head;
}

struct xt_rule {
	const char *algo;
	unsigned int from, to;
};

static const struct xt_rule xt_rules[] = {
	{ "bm", 1000, 1500 },
	{ "bm", 1400, 1600 },
	{ "kmp", 1000, 1500 },
	{ "kmp", 1400, 1600 },
};

/* Per placement: which of xt_rules match here, and in the kernel (what the
 * selftest asserts; "send 0" puts the pattern right after the header). */
static const struct xt_send {
	unsigned int at;
	bool ours[4], kernel[4];
} xt_sends[] = {
	{ 0, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } },
	{ 1000 - XT_PATLEN, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } },
	{ 1000, { 1, 0, 1, 0 }, { 1, 0, 1, 0 } },
	{ 1400 - XT_PATLEN, { 1, 0, 1, 0 }, { 1, 0, 1, 0 } },
	{ 1500 - XT_PATLEN, { 1, 1, 1, 1 }, { 1, 1, 1, 1 } },
	/* straddles the split: the kernel's bm misses it */
	{ 1495, { 0, 1, 0, 1 }, { 0, 0, 0, 1 } },
	{ 1500, { 0, 1, 0, 1 }, { 0, 1, 0, 1 } },
	{ 1600 - XT_PATLEN, { 0, 1, 0, 1 }, { 0, 1, 0, 1 } },
	{ 1600 - XT_PATLEN + 1, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } },
	{ 1600, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } },
};

static void test_xt_string_selftest(void **unused)
{
	struct ts_config *conf[4];
	unsigned int s, k, checked = 0, differences = 0;

	(void)unused;
	for (k = 0; k < 4; k++) {
		conf[k] = textsearch_prepare(xt_rules[k].algo, XT_PATTERN,
					     XT_PATLEN, GFP_KERNEL, 0);
		assert_false(IS_ERR(conf[k]));
	}
	for (s = 0; s < sizeof(xt_sends) / sizeof(xt_sends[0]); s++) {
		const struct xt_send *x = &xt_sends[s];
		struct sk_buff *skb = xt_datagram(x->at);
		unsigned int at = x->at > XT_HDRLEN ? x->at : XT_HDRLEN;

		for (k = 0; k < 4; k++) {
			const struct xt_rule *rule = &xt_rules[k];
			unsigned int pos = skb_find_text(skb, rule->from,
							 rule->to, conf[k]);

			if (!x->ours[k]) {
				assert_int_equal(pos, UINT_MAX);
			} else {
				assert_int_equal(pos, at - rule->from);
			}
			checked++;
			if (x->ours[k] != x->kernel[k]) {
				differences++;
				printf("# xt_string: note: pattern at %u..%u "
				       "(across the %u-byte split), %s --from "
				       "%u --to %u: found here, missed by the "
				       "kernel's bm, which restarts at every "
				       "block (docs/differences-from-linux.md)"
				       "\n",
				       at, at + XT_PATLEN, XT_SPLIT, rule->algo,
				       rule->from, rule->to);
			}
		}
		kfree_skb(skb);
	}
	for (k = 0; k < 4; k++)
		textsearch_destroy(conf[k]);
	assert_int_equal(differences, 1);
	printf("# xt_string: %u placements x 4 rules = %u checks, %u known "
	       "difference from the kernel, 0 failures\n",
	       (unsigned int)(sizeof(xt_sends) / sizeof(xt_sends[0])), checked,
	       differences);
}

/* ---- 4. the buffer operations ---- */

static unsigned int cookie_calls;

static void count_release(void *cookie)
{
	(*(unsigned int *)cookie)++;
	cookie_calls++;
}

static void test_alloc_and_linear(void **unused)
{
	struct sk_buff *skb;
	u8 *p;

	(void)unused;
	errno = 0;
	assert_null(alloc_skb(65536, GFP_KERNEL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(alloc_skb(10, 0x1234));
	assert_int_equal(errno, EINVAL);
	skb = alloc_skb(0, GFP_ATOMIC);
	assert_non_null(skb);
	assert_int_equal(skb->len, 0);
	assert_null(skb_put(skb, 1));
	assert_non_null(skb_put(skb, 0));
	kfree_skb(skb);

	skb = alloc_skb(65535, GFP_KERNEL);
	assert_non_null(skb);
	assert_int_equal(skb_tailroom(skb), 65535);
	assert_int_equal(skb->mac_header, SKB_HEADER_UNSET);
	assert_int_equal(skb->network_header, SKB_HEADER_UNSET);
	assert_int_equal(skb->transport_header, SKB_HEADER_UNSET);
	skb_reserve(skb, 14);
	assert_int_equal(skb_headroom(skb), 14);
	assert_int_equal(skb_tailroom(skb), 65535 - 14);
	p = skb_put_data(skb, "0123456789", 10);
	assert_ptr_equal(p, skb->data);
	assert_int_equal(skb->len, 10);
	assert_int_equal(skb_headlen(skb), 10);
	/* reserve only in an empty buffer */
	errno = 0;
	skb_reserve(skb, 1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(skb_headroom(skb), 14);
	/* more than the tailroom */
	assert_null(skb_put(skb, 65535 - 14 - 10 + 1));
	assert_int_equal(skb->len, 10);

	skb_reset_network_header(skb);
	assert_int_equal(skb->network_header, 14);
	p = skb_pull(skb, 4);
	assert_ptr_equal(p, skb->data);
	assert_memory_equal(skb->data, "456789", 6);
	assert_int_equal(skb_network_offset(skb), -4);
	skb_set_transport_header(skb, 2);
	assert_int_equal(skb_transport_offset(skb), 2);
	assert_ptr_equal(skb_transport_header(skb), skb->data + 2);
	assert_null(skb_pull(skb, 7)); /* longer than the linear part */
	assert_int_equal(skb->len, 6);

	assert_int_equal(skb_trim_len(skb, 7), -EINVAL);
	assert_int_equal(skb_trim_len(skb, 3), 0);
	assert_int_equal(skb->len, 3);
	assert_ptr_equal(skb->tail, skb->data + 3);
	assert_int_equal(skb_trim_len(skb, 0), 0);
	assert_int_equal(skb->len, 0);
	kfree_skb(skb);
	kfree_skb(NULL);

	/* NULL buffers are errors, not crashes */
	assert_null(skb_put(NULL, 1));
	assert_null(skb_pull(NULL, 0));
	skb_reserve(NULL, 0);
	assert_int_equal(skb_trim_len(NULL, 0), -EINVAL);
	assert_int_equal(skb_add_frag(NULL, "x", 1, NULL, NULL), -EINVAL);
	assert_int_equal(skb_append_frag_list(NULL, NULL), -EINVAL);
	assert_int_equal(skb_copy_bits(NULL, 0, NULL, 0), -EFAULT);
	assert_null(skb_header_pointer(NULL, 0, 0, NULL));
}

static void test_frags_and_frag_list(void **unused)
{
	static const char bytes[] = "abcdefghijklmnopqrstuvwxyz";
	unsigned int released[MAX_SKB_FRAGS + 1] = { 0 }, i;
	struct sk_buff *skb, *child, *child2;

	(void)unused;
	cookie_calls = 0;
	skb = alloc_skb(4, GFP_KERNEL);
	assert_non_null(skb);
	skb_put_data(skb, "HEAD", 4);
	for (i = 0; i < MAX_SKB_FRAGS; i++)
		assert_int_equal(skb_add_frag(skb, bytes + i, 1, count_release,
					      &released[i]),
				 0);
	assert_int_equal(skb_shinfo(skb)->nr_frags, MAX_SKB_FRAGS);
	/* the 18th is refused and not taken: its release never runs */
	assert_int_equal(skb_add_frag(skb, "x", 1, count_release,
				      &released[MAX_SKB_FRAGS]),
			 -ENOSPC);
	assert_int_equal(skb->len, 4 + MAX_SKB_FRAGS);
	assert_int_equal(skb->data_len, MAX_SKB_FRAGS);
	assert_true(skb_is_nonlinear(skb));
	assert_null(skb_put(skb, 1)); /* linear only */
	/* bad fragment: bytes but no pointer */
	assert_int_equal(skb_add_frag(skb, NULL, 3, NULL, NULL), -EINVAL);

	child = alloc_skb(8, GFP_KERNEL);
	assert_non_null(child);
	skb_put_data(child, "CHILD", 5);
	assert_int_equal(skb_append_frag_list(skb, child), 0);
	assert_int_equal(skb->len, 4 + MAX_SKB_FRAGS + 5);
	/* the same child again would make a cycle */
	assert_int_equal(skb_append_frag_list(skb, child), -EINVAL);
	assert_int_equal(skb_append_frag_list(skb, skb), -EINVAL);

	/* fragments go before frag_list bytes: refused once it is set */
	{
		struct sk_buff *lin = alloc_skb(0, GFP_KERNEL);
		struct sk_buff *c2 = alloc_skb(1, GFP_KERNEL);
		unsigned int late = 0;

		assert_non_null(lin);
		assert_non_null(c2);
		assert_int_equal(skb_append_frag_list(lin, c2), 0);
		assert_int_equal(skb_add_frag(lin, "x", 1, count_release,
					      &late),
				 -EINVAL);
		kfree_skb(lin);
		assert_int_equal(late, 0);
	}

	/* a chained buffer with ->next set is refused (it is someone's) */
	child2 = alloc_skb(2, GFP_KERNEL);
	assert_non_null(child2);
	child2->next = child;
	assert_int_equal(skb_append_frag_list(skb, child2), -EINVAL);
	child2->next = NULL;
	skb_put_data(child2, "XY", 2);
	assert_int_equal(skb_append_frag_list(skb, child2), 0);

	/* length overflow: fragments are references, so a huge one costs
	 * nothing while it is not read */
	{
		struct sk_buff *big = alloc_skb(0, GFP_KERNEL);
		struct sk_buff *one = alloc_skb(1, GFP_KERNEL);

		assert_non_null(big);
		assert_non_null(one);
		assert_int_equal(
			skb_add_frag(big, bytes, UINT_MAX - 3, NULL, NULL), 0);
		assert_int_equal(skb_add_frag(big, bytes, 4, NULL, NULL),
				 -EINVAL);
		assert_int_equal(skb_add_frag(big, bytes, 3, NULL, NULL), 0);
		assert_int_equal(big->len, UINT_MAX);
		skb_put_data(one, "1", 1);
		assert_int_equal(skb_append_frag_list(big, one), -EINVAL);
		assert_int_equal(big->len, UINT_MAX);
		kfree_skb(one);
		/* a window far inside it reads the right bytes */
		{
			struct skb_seq_state st;
			const u8 *blk;

			skb_prepare_seq_read(big, UINT_MAX - 2, UINT_MAX, &st);
			assert_int_equal(skb_seq_read(0, &blk, &st), 2);
			assert_ptr_equal(blk, bytes + 1);
		}
		kfree_skb(big);
	}

	assert_int_equal(cookie_calls, 0);
	kfree_skb(skb);
	for (i = 0; i < MAX_SKB_FRAGS; i++)
		assert_int_equal(released[i], 1);
	assert_int_equal(released[MAX_SKB_FRAGS], 0);
	assert_int_equal(cookie_calls, MAX_SKB_FRAGS);
}

/* "0123456789" as head "012", frags "34" "" "5", then a member with head
 * "6" and frag "78", then a member with empty head and a nested member
 * "9". */
static struct sk_buff *build_ten(unsigned int *released)
{
	struct sk_buff *skb = alloc_skb(3, GFP_KERNEL);
	struct sk_buff *m1 = alloc_skb(1, GFP_KERNEL);
	struct sk_buff *m2 = alloc_skb(0, GFP_KERNEL);
	struct sk_buff *m3 = alloc_skb(1, GFP_KERNEL);

	assert_non_null(skb);
	assert_non_null(m1);
	assert_non_null(m2);
	assert_non_null(m3);
	skb_put_data(skb, "012", 3);
	assert_int_equal(skb_add_frag(skb, "34", 2, count_release, released),
			 0);
	assert_int_equal(skb_add_frag(skb, NULL, 0, count_release, released),
			 0);
	assert_int_equal(skb_add_frag(skb, "5", 1, count_release, released), 0);
	skb_put_data(m1, "6", 1);
	assert_int_equal(skb_add_frag(m1, "78", 2, count_release, released), 0);
	skb_put_data(m3, "9", 1);
	assert_int_equal(skb_append_frag_list(m2, m3), 0);
	assert_int_equal(skb_append_frag_list(skb, m1), 0);
	assert_int_equal(skb_append_frag_list(skb, m2), 0);
	assert_int_equal(skb->len, 10);
	assert_int_equal(skb->data_len, 7);
	return skb;
}

static void test_copy_bits_and_header_pointer(void **unused)
{
	static const char ten[] = "0123456789";
	unsigned int released = 0;
	struct sk_buff *skb = build_ten(&released);
	char buf[16];
	int off, len;

	(void)unused;
	for (off = 0; off <= 10; off++) {
		for (len = 0; off + len <= 10; len++) {
			const char *p;

			memset(buf, '?', sizeof(buf));
			assert_int_equal(skb_copy_bits(skb, off, buf, len), 0);
			assert_memory_equal(buf, &ten[off], (size_t)len);
			p = skb_header_pointer(skb, off, len, buf);
			assert_non_null(p);
			assert_memory_equal(p, &ten[off], (size_t)len);
			/* the linear part is served in place */
			if (off + len <= 3)
				assert_ptr_equal(p, skb->data + off);
			else
				assert_ptr_equal(p, buf);
		}
	}
	/* out of range */
	assert_int_equal(skb_copy_bits(skb, 0, buf, 11), -EFAULT);
	assert_int_equal(skb_copy_bits(skb, 10, buf, 1), -EFAULT);
	assert_int_equal(skb_copy_bits(skb, -1, buf, 2), -EFAULT);
	assert_int_equal(skb_copy_bits(skb, 2, buf, -1), -EFAULT);
	assert_int_equal(skb_copy_bits(skb, INT_MAX, buf, INT_MAX), -EFAULT);
	assert_int_equal(skb_copy_bits(skb, 1, NULL, 2), -EFAULT);
	assert_null(skb_header_pointer(skb, 8, 3, buf));
	assert_null(skb_header_pointer(skb, -1, 1, buf));
	assert_null(skb_header_pointer(skb, 2, 4, NULL));

	/* trimming releases what is cut, into nested members too */
	assert_int_equal(skb_trim_len(skb, 9), 0);
	assert_int_equal(skb->len, 9);
	assert_null(skb_shinfo(skb)->frag_list->next); /* m2 gone */
	assert_int_equal(released, 0);
	assert_int_equal(skb_trim_len(skb, 8), 0); /* into m1's frag */
	assert_int_equal(skb_shinfo(skb)->frag_list->len, 1 + 1);
	assert_int_equal(skb_copy_bits(skb, 0, buf, 8), 0);
	assert_memory_equal(buf, "01234567", 8);
	assert_int_equal(skb_trim_len(skb, 4), 0); /* into "34" */
	assert_null(skb_shinfo(skb)->frag_list);
	assert_int_equal(skb_shinfo(skb)->nr_frags, 1);
	assert_int_equal(released, 3); /* "", "5" and m1's "78" */
	assert_int_equal(skb->data_len, 1);
	assert_int_equal(skb_copy_bits(skb, 0, buf, 4), 0);
	assert_memory_equal(buf, "0123", 4);
	assert_int_equal(skb_trim_len(skb, 2), 0);
	assert_int_equal(released, 4);
	assert_false(skb_is_nonlinear(skb));
	kfree_skb(skb);
	assert_int_equal(released, 4);

	skb = build_ten(&released);
	released = 0;
	kfree_skb(skb);
	assert_int_equal(released, 4);
}

/* A long frag_list and a deep nesting free without recursion, and a
 * search still reads them (nesting deeper than the reader follows ends
 * the data there). */
static void test_long_chains(void **unused)
{
	struct sk_buff *skb = alloc_skb(1, GFP_KERNEL), *deep, *inner;
	struct ts_config *conf;
	unsigned int i;

	(void)unused;
	assert_non_null(skb);
	skb_put_data(skb, "x", 1);
	for (i = 0; i < 100000; i++) {
		struct sk_buff *m = alloc_skb(1, GFP_KERNEL);

		assert_non_null(m);
		skb_put_data(m, i == 0 ? "!" : "x", 1);
		/* appending walks the chain: build it by hand, the way
		 * a caller who keeps the tail would, then fix the lengths */
		m->next = skb_shinfo(skb)->frag_list;
		skb_shinfo(skb)->frag_list = m;
	}
	skb->len += 100000;
	skb->data_len += 100000;
	conf = textsearch_prepare("kmp", "x!", 2, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	/* the list was built backwards: "!" is the last member */
	assert_int_equal(skb_find_text(skb, 0, UINT_MAX, conf), 99999);
	kfree_skb(skb);

	/* 1000 levels, each an empty head and one member */
	deep = alloc_skb(1, GFP_KERNEL);
	assert_non_null(deep);
	skb_put_data(deep, "!", 1);
	for (i = 0; i < 1000; i++) {
		inner = deep;
		deep = alloc_skb(1, GFP_KERNEL);
		assert_non_null(deep);
		if (i == 999)
			skb_put_data(deep, "x", 1);
		assert_int_equal(skb_append_frag_list(deep, inner), 0);
	}
	assert_int_equal(deep->len, 2);
	/* "x" is in the root, "!" 1000 levels down: past what is read */
	assert_int_equal(skb_find_text(deep, 0, UINT_MAX, conf), UINT_MAX);
	kfree_skb(deep);
	textsearch_destroy(conf);
}

/* Bad arguments to the search functions give UINT_MAX, not a crash. */
static void test_find_text_edges(void **unused)
{
	unsigned int released = 0;
	struct sk_buff *skb = build_ten(&released);
	struct ts_config *conf =
		textsearch_prepare("bm", "456", 3, GFP_KERNEL, 0);
	struct skb_seq_state st;
	struct ts_state state;
	const u8 *blk;

	(void)unused;
	assert_false(IS_ERR(conf));
	assert_int_equal(skb_find_text(skb, 0, 10, conf), 4);
	assert_int_equal(skb_find_text(skb, 2, 10, conf), 2);
	assert_int_equal(skb_find_text(skb, 4, 7, conf), 0);
	assert_int_equal(skb_find_text(skb, 4, 6, conf), UINT_MAX); /* to */
	assert_int_equal(skb_find_text(skb, 5, 10, conf), UINT_MAX);
	assert_int_equal(skb_find_text(skb, 0, UINT_MAX, conf), 4);
	assert_int_equal(skb_find_text(skb, 7, 3, conf), UINT_MAX);
	assert_int_equal(skb_find_text(skb, 10, 10, conf), UINT_MAX);
	assert_int_equal(skb_find_text(skb, UINT_MAX, UINT_MAX, conf),
			 UINT_MAX);
	assert_int_equal(skb_find_text(NULL, 0, 10, conf), UINT_MAX);
	assert_int_equal(skb_find_text(skb, 0, 10, NULL), UINT_MAX);
	assert_int_equal(skb_find_text_state(skb, 0, 10, conf, NULL), UINT_MAX);
	assert_int_equal(skb_find_text_state(skb, 9, 2, conf, &state),
			 UINT_MAX);
	assert_int_equal(textsearch_next(conf, &state), UINT_MAX);

	skb_prepare_seq_read(NULL, 0, 10, &st);
	assert_int_equal(skb_seq_read(0, &blk, &st), 0);
	skb_prepare_seq_read(skb, 0, 10, &st);
	assert_int_equal(skb_seq_read(0, NULL, &st), 0);
	assert_int_equal(skb_seq_read(0, &blk, NULL), 0);
	skb_prepare_seq_read(skb, 0, 10, NULL);
	skb_abort_seq_read(NULL);
	textsearch_destroy(conf);
	kfree_skb(skb);
}

/* ---- 5. threads ---- */

#define SKB_THREADS 4
#define SHARED_SKBS 24

/* Built before the threads start and freed after they end: the threads
 * only read them, and the configs. */
static struct {
	struct sk_buff *skb[SHARED_SKBS];
	struct ts_config *conf[2];
	unsigned int from[SHARED_SKBS], to[SHARED_SKBS];
	unsigned int want[2][SHARED_SKBS];  /* first match */
	unsigned int count[2][SHARED_SKBS]; /* all matches */
} shared;

static pthread_barrier_t skb_start_line;

static void *search_shared(void *arg)
{
	unsigned long wrong = 0;
	unsigned int round, i, k;

	(void)arg;
	pthread_barrier_wait(&skb_start_line);
	for (round = 0; round < 40; round++) {
		for (i = 0; i < SHARED_SKBS; i++) {
			for (k = 0; k < 2; k++) {
				struct ts_state st;
				unsigned int n = 0, pos;

				if (skb_find_text(shared.skb[i], shared.from[i],
						  shared.to[i],
						  shared.conf[k]) !=
				    shared.want[k][i])
					wrong++;
				pos = skb_find_text_state(shared.skb[i],
							  shared.from[i],
							  shared.to[i],
							  shared.conf[k], &st);
				while (pos != UINT_MAX) {
					n++;
					pos = textsearch_next(shared.conf[k],
							      &st);
				}
				if (n != shared.count[k][i])
					wrong++;
			}
		}
	}
	return (void *)(uintptr_t)wrong;
}

static void test_threads_share_config_and_skbs(void **unused)
{
	struct rng r = { test_seed("skb threads", 77) };
	pthread_t t[SKB_THREADS];
	unsigned int i, k;
	unsigned long wrong = 0, matches = 0;
	struct scase c[SHARED_SKBS];
	static const char *const algos[2] = { "kmp", "bm" };

	(void)unused;
	make_scase(&r, &c[0]);
	c[0].icase = false;
	for (k = 0; k < 2; k++) {
		shared.conf[k] = textsearch_prepare(algos[k], c[0].pat,
						    c[0].plen, GFP_KERNEL, 0);
		assert_false(IS_ERR(shared.conf[k]));
	}
	for (i = 0; i < SHARED_SKBS; i++) {
		unsigned int lo, hi, pos;

		if (i) {
			make_scase(&r, &c[i]);
			memcpy(c[i].pat, c[0].pat, c[0].plen);
			c[i].plen = c[0].plen;
		}
		shared.skb[i] = build_random(&r, &c[i].f, 2);
		random_window(&r, c[i].f.used, &shared.from[i], &shared.to[i]);
		lo = shared.from[i];
		hi = shared.to[i];
		clamp_window(c[i].f.used, &lo, &hi);
		for (k = 0; k < 2; k++) {
			pos = ref_find(c[i].pat, c[i].plen, c[i].f.bytes + lo,
				       hi - lo, 0, false);
			shared.want[k][i] = pos;
			shared.count[k][i] = 0;
			while (pos != UINT_MAX) {
				shared.count[k][i]++;
				matches++;
				pos = ref_find(c[i].pat, c[i].plen,
					       c[i].f.bytes + lo, hi - lo,
					       pos + c[i].plen, false);
			}
		}
	}
	assert_int_equal(
		pthread_barrier_init(&skb_start_line, NULL, SKB_THREADS), 0);
	for (i = 0; i < SKB_THREADS; i++)
		assert_int_equal(
			pthread_create(&t[i], NULL, search_shared, NULL), 0);
	for (i = 0; i < SKB_THREADS; i++) {
		void *ret;

		assert_int_equal(pthread_join(t[i], &ret), 0);
		wrong += (unsigned long)(uintptr_t)ret;
	}
	pthread_barrier_destroy(&skb_start_line);
	for (i = 0; i < SHARED_SKBS; i++)
		kfree_skb(shared.skb[i]);
	for (k = 0; k < 2; k++)
		textsearch_destroy(shared.conf[k]);
	printf("# skb threads: %d threads x 40 rounds x %d buffers x 2 "
	       "shared configs (%lu matches a round), %lu wrong\n",
	       SKB_THREADS, SHARED_SKBS, matches, wrong);
	assert_int_equal(wrong, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_and_linear),
		cmocka_unit_test(test_frags_and_frag_list),
		cmocka_unit_test(test_copy_bits_and_header_pointer),
		cmocka_unit_test(test_long_chains),
		cmocka_unit_test(test_find_text_edges),
		cmocka_unit_test(test_seq_read),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_xt_string_selftest),
		cmocka_unit_test(test_threads_share_config_and_skbs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
