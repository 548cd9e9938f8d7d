/*
 * test_sets.c - pattern sets (textsearch_prepare_set()) and TS_OVERLAP.
 *
 * The differential test draws random sets of 1 to 5,000 patterns from
 * small alphabets (so that they overlap, nest and repeat; duplicates, and
 * sometimes 40 copies of one pattern, included), searches random data
 * with and without TS_OVERLAP and TS_IGNORECASE, contiguous and through
 * blocks (none, every byte, random sizes), and compares every match, its
 * id and its length with the naive reference of tests/support: all
 * occurrences enumerated, sorted by (start, end, id), and for the
 * leftmost-longest order picked one after the other.
 *
 * TS_TEST_SET_CASES sets the number of random sets (default 5000);
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
#include <unistd.h>

#include "testsupport.h"
#include "textsearch_fsm.h"
#include "textsearch_skb.h"

struct set {
	unsigned int count;
	u8 **pat;
	unsigned int *len;
	bool icase;
};

#define occ ref_match

/* The reference (tests/support): every occurrence enumerated and sorted,
 * and for the leftmost-longest order picked one after the other. */
static struct occ *reference(const struct set *s, const u8 *data,
			     unsigned int dlen, bool overlap, unsigned int *n)
{
	return ref_set_matches((const u8 *const *)s->pat, s->len, s->count,
			       s->icase, data, dlen, overlap, n);
}

/* ---- random sets ---- */

static const u8 alphabets[][8] = {
	{ 'a' },
	{ 'a', 'b' },
	{ 'a', 'b', 'c' },
	{ 'a', 'A', 'b', 'B' },
	{ 0xC0, 0xE0, 0xD7, 0xF7, 'x' },
	{ 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' },
};
static const unsigned int alphabet_sizes[] = { 1, 2, 3, 4, 5, 8 };

static void set_free(struct set *s)
{
	unsigned int i;

	for (i = 0; i < s->count; i++)
		free(s->pat[i]);
	free(s->pat);
	free(s->len);
}

static u8 flip_case(u8 b)
{
	if (ref_fold(b) != b)
		return ref_fold(b);
	return ref_fold((u8)(b ^ 0x20)) == b ? (u8)(b ^ 0x20) : b;
}

static void random_set(struct rng *r, struct set *s, int *alpha_out)
{
	unsigned int size = rng_below(r, 100), i, j, maxlen;
	int alpha;

	if (size < 50)
		s->count = 1 + rng_below(r, 8);
	else if (size < 88)
		s->count = 1 + rng_below(r, 100);
	else if (size < 98)
		s->count = 1 + rng_below(r, 1000);
	else
		s->count = 1 + rng_below(r, 5000);
	/* large sets from one letter would match everywhere, thousands of
	 * times per byte */
	alpha = (int)rng_below(r, 6);
	if (s->count > 100 && alpha < 2)
		alpha = 2 + (int)rng_below(r, 4);
	maxlen = rng_below(r, 4) ? 6 : 40;
	s->icase = rng_below(r, 3) == 0;
	s->pat = calloc(s->count, sizeof(*s->pat));
	s->len = calloc(s->count, sizeof(*s->len));
	assert_true(s->pat && s->len);
	for (i = 0; i < s->count; i++) {
		if (i && rng_below(r, 5) == 0) {
			/* a duplicate, its case flipped sometimes */
			unsigned int from = rng_below(r, i);

			s->len[i] = s->len[from];
			s->pat[i] = malloc(s->len[i]);
			assert_non_null(s->pat[i]);
			for (j = 0; j < s->len[i]; j++)
				s->pat[i][j] =
					s->icase && rng_below(r, 2) ?
						flip_case(s->pat[from][j]) :
						s->pat[from][j];
			continue;
		}
		s->len[i] = 1 + rng_below(r, maxlen);
		s->pat[i] = malloc(s->len[i]);
		assert_non_null(s->pat[i]);
		for (j = 0; j < s->len[i]; j++)
			s->pat[i][j] =
				alphabets[alpha]
					 [rng_below(r, alphabet_sizes[alpha])];
	}
	if (s->count > 40 && rng_below(r, 8) == 0) {
		/* 40 copies of one pattern */
		unsigned int from = rng_below(r, s->count);

		for (i = 0; i < 40; i++) {
			unsigned int to = rng_below(r, s->count);

			if (to == from)
				continue;
			free(s->pat[to]);
			s->len[to] = s->len[from];
			s->pat[to] = malloc(s->len[to]);
			assert_non_null(s->pat[to]);
			memcpy(s->pat[to], s->pat[from], s->len[to]);
		}
	}
	*alpha_out = alpha;
}

static unsigned int random_data(struct rng *r, const struct set *s, int alpha,
				u8 *data, unsigned int cap)
{
	unsigned int dlen = rng_below(r, 4) ? rng_below(r, cap) :
					      rng_below(r, 12);
	unsigned int i, j;

	for (i = 0; i < dlen; i++)
		data[i] = alphabets[alpha][rng_below(r, alphabet_sizes[alpha])];
	/* plant some patterns, case flipped sometimes */
	while (rng_below(r, 3)) {
		unsigned int id = rng_below(r, s->count), at;

		if (s->len[id] > dlen)
			break;
		at = rng_below(r, dlen - s->len[id] + 1);
		for (j = 0; j < s->len[id]; j++)
			data[at + j] = s->icase && rng_below(r, 2) ?
					       flip_case(s->pat[id][j]) :
					       s->pat[id][j];
	}
	return dlen;
}

/* ---- comparing ---- */

static void dump(const char *what, const struct set *s, const u8 *data,
		 unsigned int dlen, int flags, unsigned int k, unsigned int pos,
		 unsigned int id, unsigned int len, const struct occ *want)
{
	unsigned int i, j;

	fprintf(stderr,
		"%s: flags 0x%x, match %u: got %u id %u len %u, want %u id "
		"%u len %u\n",
		what, (unsigned int)flags, k, pos, id, len,
		want ? want->start : UINT_MAX, want ? want->id : 0,
		want ? want->end - want->start : 0);
	for (i = 0; i < s->count && i < 50; i++) {
		fprintf(stderr, "pattern %u:", i);
		for (j = 0; j < s->len[i]; j++)
			fprintf(stderr, " %02x", s->pat[i][j]);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "data (%u):", dlen);
	for (i = 0; i < dlen; i++)
		fprintf(stderr, " %02x", data[i]);
	fprintf(stderr, "\n");
}

/* Compare a find/next sequence that began with @pos; the number of
 * results compared. */
static unsigned long compare_run(const char *what, struct ts_config *conf,
				 struct ts_state *st, unsigned int pos,
				 const struct occ *want, unsigned int nwant,
				 const struct set *s, const u8 *data,
				 unsigned int dlen)
{
	unsigned int k;

	for (k = 0;; k++) {
		unsigned int id = textsearch_match_id(st);
		unsigned int len = textsearch_match_len(conf, st);

		if (k == nwant) {
			if (pos != UINT_MAX)
				dump(what, s, data, dlen, conf->flags, k, pos,
				     id, len, NULL);
			assert_int_equal(pos, UINT_MAX);
			break;
		}
		if (pos != want[k].start || id != want[k].id ||
		    len != want[k].end - want[k].start) {
			dump(what, s, data, dlen, conf->flags, k, pos, id, len,
			     &want[k]);
			fail();
		}
		pos = textsearch_next(conf, st);
	}
	assert_int_equal(textsearch_next(conf, st), UINT_MAX);
	return nwant + 1;
}

/* teddy at each level; a level the CPU lacks runs the best below it */
static const char *const teddy_levels[] = {
	"teddy",      "teddy_vbmi",  "teddy_avx512",
	"teddy_avx2", "teddy_ssse3", "teddy_scalar",
};
#define N_TEDDY (sizeof(teddy_levels) / sizeof(teddy_levels[0]))

static unsigned long set_cases(void)
{
	const char *env = getenv("TS_TEST_SET_CASES");

	return env ? strtoul(env, NULL, 0) : 5000ul;
}

static void differential_sets(void **unused)
{
	struct rng r = { test_seed("sets", 20261204) };
	unsigned long n = set_cases(), i, compared = 0, patterns = 0;
	static u8 data[400];

	(void)unused;
	for (i = 0; i < n; i++) {
		struct set s;
		unsigned int dlen, ov;
		int alpha;

		random_set(&r, &s, &alpha);
		patterns += s.count;
		dlen = random_data(&r, &s, alpha, data,
				   s.count > 1000 ? 120 : 400);
		for (ov = 0; ov < 2; ov++) {
			int flags = (ov ? TS_OVERLAP : 0) |
				    (s.icase ? TS_IGNORECASE : 0);
			struct occ *want;
			unsigned int nwant, a;

			want = reference(&s, data, dlen, ov, &nwant);
			/* ac or auto, then teddy at some level (it takes
			 * up to 128 patterns) */
			for (a = 0; a < 2; a++) {
				const char *algo =
					a == 0 ? (rng_below(&r, 4) ? "ac" :
								     "auto") :
						 teddy_levels[rng_below(
							 &r, N_TEDDY)];
				struct ts_config *conf;
				struct ts_state st;
				struct blocks *b;
				unsigned int calls;
				bool kernel;

				if (a == 1 && s.count > 128)
					break;
				conf = textsearch_prepare_set(
					algo, (const void *const *)s.pat, s.len,
					s.count, GFP_KERNEL, flags);
				if (IS_ERR(conf))
					fail_msg("%s: %s", algo,
						 textsearch_last_error());
				compared += compare_run(
					algo, conf, &st,
					textsearch_find_continuous(conf, &st,
								   data, dlen),
					want, nwant, &s, data, dlen);
				b = blocks_random(data, dlen, &r,
						  (int)rng_below(&r, 3));
				/* the provider per call, or the kernel's way */
				kernel = rng_below(&r, 4) == 0;
				compared += compare_run(
					kernel ? "kernel-style blocks" :
						 "blocks",
					conf, &st,
					kernel ? blocks_find_kernel_style(
							 conf, &st, b) :
						 blocks_find(conf, &st, b),
					want, nwant, &s, data, dlen);
				/* every find/next call ran finish once, the last
			 * two being the UINT_MAX ones */
				calls = nwant + 2;
				assert_true(blocks_ok(b));
				assert_int_equal(blocks_finishes(b), calls);
				blocks_free(b);
				textsearch_destroy(conf);
			}
			free(want);
		}
		set_free(&s);
	}
	printf("# sets: %lu sets (%lu patterns), %lu results compared, "
	       "0 failures\n",
	       n, patterns, compared);
	assert_true(n < 5000 || compared >= 1000000);
}

/* ---- the prefilter and the skip table of large sets ---- */

/* How large_sets() draws its sets and text. */
struct large_draw {
	const char *what;
	unsigned long seed;
	const u8 *letters; /* the patterns' first pa of them */
	unsigned int pa_min, pa_span;
	unsigned int minlen_min, minlen_span, maxlen_span;
	unsigned int count_span; /* 64 patterns and up to this many more */
	unsigned int data_letters;
};

/* Random sets of 64 patterns or more as @d says, with duplicates and
 * case flips (a 1-byte pattern among them now and then), in text with
 * patterns planted, every block split, searched by "ac" with and
 * without TS_OVERLAP against the reference. */
static void large_sets(const struct large_draw *d)
{
	struct rng r = { test_seed(d->what, d->seed) };
	static u8 data[3000];
	char contiguous[64], blocks[64];
	unsigned long compared = 0, cases = set_cases() / 20 + 10, i;

	snprintf(contiguous, sizeof(contiguous), "%s contiguous", d->what);
	snprintf(blocks, sizeof(blocks), "%s blocks", d->what);
	for (i = 0; i < cases; i++) {
		struct set s;
		unsigned int pa = d->pa_min + rng_below(&r, d->pa_span);
		unsigned int minlen =
			d->minlen_min + rng_below(&r, d->minlen_span);
		unsigned int maxlen = minlen + rng_below(&r, d->maxlen_span), j,
			     k, dlen, ov;
		bool one_byte = rng_below(&r, 8) == 0;

		s.count = 64 + rng_below(&r, d->count_span);
		s.icase = rng_below(&r, 3) == 0;
		s.pat = calloc(s.count, sizeof(*s.pat));
		s.len = calloc(s.count, sizeof(*s.len));
		assert_true(s.pat && s.len);
		for (j = 0; j < s.count; j++) {
			unsigned int from = j ? rng_below(&r, j) : 0;
			bool dup = j && rng_below(&r, 6) == 0;

			s.len[j] =
				dup ? s.len[from] :
				      minlen + rng_below(&r,
							 maxlen - minlen + 1);
			if (one_byte && j == s.count / 2)
				s.len[j] = 1;
			s.pat[j] = malloc(s.len[j]);
			assert_non_null(s.pat[j]);
			for (k = 0; k < s.len[j]; k++) {
				u8 b = dup && s.len[j] == s.len[from] ?
					       s.pat[from][k] :
					       d->letters[rng_below(&r, pa)];

				s.pat[j][k] = s.icase && rng_below(&r, 2) ?
						      flip_case(b) :
						      b;
			}
		}
		dlen = rng_below(&r, sizeof(data));
		for (j = 0; j < dlen; j++)
			data[j] = d->letters[rng_below(&r, d->data_letters)];
		for (k = rng_below(&r, 40); k > 0; k--) {
			unsigned int id = rng_below(&r, s.count), at;

			if (s.len[id] > dlen)
				continue;
			at = rng_below(&r, dlen - s.len[id] + 1);
			for (j = 0; j < s.len[id]; j++)
				data[at + j] = s.icase && rng_below(&r, 2) ?
						       flip_case(s.pat[id][j]) :
						       s.pat[id][j];
		}
		for (ov = 0; ov < 2; ov++) {
			int flags = (ov ? TS_OVERLAP : 0) |
				    (s.icase ? TS_IGNORECASE : 0);
			struct ts_config *conf;
			struct ts_state st;
			struct occ *want;
			unsigned int nwant;
			int mode;

			conf = textsearch_prepare_set(
				"ac", (const void *const *)s.pat, s.len,
				s.count, GFP_KERNEL, flags);
			assert_false(IS_ERR(conf));
			want = reference(&s, data, dlen, ov, &nwant);
			compared += compare_run(contiguous, conf, &st,
						textsearch_find_continuous(
							conf, &st, data, dlen),
						want, nwant, &s, data, dlen);
			for (mode = 1; mode < 3; mode++) {
				struct blocks *b =
					blocks_random(data, dlen, &r, mode);

				compared += compare_run(
					blocks, conf, &st,
					blocks_find(conf, &st, b), want, nwant,
					&s, data, dlen);
				assert_true(blocks_ok(b));
				blocks_free(b);
			}
			free(want);
			textsearch_destroy(conf);
		}
		set_free(&s);
	}
	printf("# %s: %lu sets, %lu results compared\n", d->what, cases,
	       compared);
	assert_true(compared > cases * 6);
}

/*
 * ac puts a filter of hashed pattern prefixes in front of the automaton
 * for sets of 64 patterns or more whose shortest pattern has 2 bytes or
 * more (up to 8 bytes hashed), and skips the text where no pattern can
 * start.  Here: such sets from 2 to 4 letters of "abcdefgh", in text from
 * all 8 (so that the filter rejects much of it and the automaton restarts
 * often).  A set with one 1-byte pattern among them (no filter) must
 * give the same matches too.
 */
static void prefilter_differential(void **unused)
{
	static const struct large_draw d = {
		.what = "prefilter",
		.seed = 20261205,
		.letters = (const u8 *)"abcdefgh",
		.pa_min = 2,
		.pa_span = 3,
		.minlen_min = 2,
		.minlen_span = 8,
		.maxlen_span = 12,
		.count_span = 1500,
		.data_letters = 8,
	};

	(void)unused;
	large_sets(&d);
}

/*
 * Where the shortest pattern has 10 bytes or more, ac also leaps over
 * the text by a table of trigrams (ac_shash()) where that pays, which is
 * where the patterns' trigrams are a small part of all: sets of 64 to
 * 563 patterns from 20 to 26 letters, the shortest of 6 to 35 bytes (so
 * that some sets go without the table) and the longest up to 64, in text
 * from 20 of those letters, so that leaps are long, windows with a skip
 * of 0 frequent enough to be probed, and searches that leap too little
 * (going on without the table) not rare.
 */
static void skip_differential(void **unused)
{
	static const struct large_draw d = {
		.what = "skip table",
		.seed = 20261206,
		.letters = (const u8 *)"abcdefghijklmnopqrstuvwxyz",
		.pa_min = 20,
		.pa_span = 7,
		.minlen_min = 6,
		.minlen_span = 30,
		.maxlen_span = 30,
		.count_span = 500,
		.data_letters = 20,
	};

	(void)unused;
	large_sets(&d);
}

/* ---- a big set ---- */

static const u8 *const *big_pat;
static const unsigned int *big_len;

static int big_cmp(const void *x, const void *y)
{
	unsigned int a = *(const unsigned int *)x, b = *(const unsigned int *)y;
	unsigned int la = big_len[a], lb = big_len[b];
	int c = memcmp(big_pat[a], big_pat[b], la < lb ? la : lb);

	if (c)
		return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * 200,000 patterns of 4 to 16 letters from 16, and 64 KiB of text from
 * the same letters with 2,000 of them planted: every occurrence, with
 * TS_OVERLAP, in (start, end, id) order, checked against the patterns
 * sorted (each substring of 4 to 16 bytes looked up by bisection).
 */
static void big_set(void **unused)
{
	enum { COUNT = 200000, DLEN = 65536 };
	struct rng r = { test_seed("big set", 20261206) };
	u8 **pat = malloc(COUNT * sizeof(*pat));
	unsigned int *len = malloc(COUNT * sizeof(*len));
	unsigned int *order = malloc(COUNT * sizeof(*order));
	u8 *data = malloc(DLEN);
	unsigned long found = 0;
	struct ts_config *conf;
	struct ts_state st;
	unsigned int i, j, at, pos;

	(void)unused;
	assert_true(pat && len && order && data);
	for (i = 0; i < COUNT; i++) {
		len[i] = 4 + rng_below(&r, 13);
		pat[i] = malloc(len[i]);
		assert_non_null(pat[i]);
		for (j = 0; j < len[i]; j++)
			pat[i][j] = (u8)('a' + rng_below(&r, 16));
		order[i] = i;
	}
	for (j = 0; j < DLEN; j++)
		data[j] = (u8)('a' + rng_below(&r, 16));
	for (i = 0; i < 2000; i++) {
		unsigned int id = rng_below(&r, COUNT);

		memcpy(data + rng_below(&r, DLEN - 16), pat[id], len[id]);
	}
	big_pat = (const u8 *const *)pat;
	big_len = len;
	qsort(order, COUNT, sizeof(*order), big_cmp);

	conf = textsearch_prepare_set("ac", (const void *const *)pat, len,
				      COUNT, GFP_KERNEL, TS_OVERLAP);
	assert_false(IS_ERR(conf));
	pos = textsearch_find_continuous(conf, &st, data, DLEN);
	for (at = 0; at < DLEN; at++) {
		unsigned int l;

		for (l = 4; l <= 16 && at + l <= DLEN; l++) {
			/* the first pattern equal to data[at, at + l) */
			unsigned int lo = 0, hi = COUNT;

			while (lo < hi) {
				unsigned int mid = lo + (hi - lo) / 2, o;
				int c;

				o = order[mid];
				c = memcmp(pat[o], data + at,
					   len[o] < l ? len[o] : l);
				if (!c)
					c = len[o] < l ? -1 : len[o] > l;
				if (c < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < COUNT && len[order[lo]] == l &&
			       !memcmp(pat[order[lo]], data + at, l);
			     lo++) {
				assert_int_equal(pos, at);
				assert_int_equal(textsearch_match_id(&st),
						 order[lo]);
				assert_int_equal(
					textsearch_match_len(conf, &st), l);
				found++;
				pos = textsearch_next(conf, &st);
			}
		}
	}
	assert_int_equal(pos, UINT_MAX);
	printf("# big set: %d patterns, %lu occurrences checked\n", COUNT,
	       found);
	assert_true(found >= 2000);
	textsearch_destroy(conf);
	for (i = 0; i < COUNT; i++)
		free(pat[i]);
	free(pat);
	free(len);
	free(order);
	free(data);
}

/* ---- the API ---- */

static void prepare_set_errors(void **unused)
{
	const void *p[] = { "ab", "c", NULL };
	unsigned int l[] = { 2, 1, 0 };
	const void *pn[] = { "ab", NULL };
	unsigned int l0[] = { 2, 0 };
	struct ts_config *conf;

	(void)unused;
	assert_int_equal(
		PTR_ERR(textsearch_prepare_set("ac", p, l, 0, GFP_KERNEL, 0)),
		-EINVAL);
	assert_int_equal(PTR_ERR(textsearch_prepare_set("ac", NULL, l, 2,
							GFP_KERNEL, 0)),
			 -EINVAL);
	assert_int_equal(PTR_ERR(textsearch_prepare_set("ac", p, NULL, 2,
							GFP_KERNEL, 0)),
			 -EINVAL);
	assert_int_equal(
		PTR_ERR(textsearch_prepare_set("ac", pn, l, 2, GFP_KERNEL, 0)),
		-EINVAL);
	assert_int_equal(
		PTR_ERR(textsearch_prepare_set("ac", p, l0, 2, GFP_KERNEL, 0)),
		-EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(
		PTR_ERR(textsearch_prepare_set("ac", p, l, 2, GFP_KERNEL, 16)),
		-EINVAL);
	assert_int_equal(PTR_ERR(textsearch_prepare_set("ac", p, l, 2, 0, 0)),
			 -EINVAL);
	assert_int_equal(
		PTR_ERR(textsearch_prepare_set(NULL, p, l, 2, GFP_KERNEL, 0)),
		-EINVAL);
	assert_int_equal(PTR_ERR(textsearch_prepare_set("no such", p, l, 2,
							GFP_KERNEL, 0)),
			 -EINVAL);
	assert_int_equal(PTR_ERR(textsearch_prepare_set("nosuch", p, l, 2,
							GFP_KERNEL, 0)),
			 -ENOENT);
	/* single-pattern algorithms, whatever the count */
	assert_int_equal(
		PTR_ERR(textsearch_prepare_set("kmp", p, l, 1, GFP_KERNEL, 0)),
		-EINVAL);
	assert_int_equal(PTR_ERR(textsearch_prepare_set("rarebyte", p, l, 2,
							GFP_KERNEL, 0)),
			 -EINVAL);
	assert_int_equal(
		PTR_ERR(textsearch_prepare_set("fsm", p, l, 2, GFP_KERNEL, 0)),
		-EINVAL);
	assert_int_equal(PTR_ERR(textsearch_prepare_set(
				 "shiftor", p, l, 2, GFP_KERNEL, TS_AUTOLOAD)),
			 -EINVAL);
	assert_true(strstr(textsearch_last_error(), "not a set") != NULL);

	/* "auto": one pattern goes to the single-pattern choice */
	conf = textsearch_prepare_set("auto", p, l, 1, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_null(conf->ops->init_set);
	textsearch_destroy(conf);
	conf = textsearch_prepare_set("auto", p, l, 2, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_string_equal(conf->ops->name, "teddy");
	assert_int_equal(textsearch_get_pattern_len(conf), 2);
	assert_memory_equal(textsearch_get_pattern(conf), "ab", 2);
	textsearch_destroy(conf);
	/* textsearch_prepare() takes TS_OVERLAP and TS_UTF8, nothing more */
	conf = textsearch_prepare("kmp", "a", 1, GFP_KERNEL, TS_OVERLAP);
	assert_false(IS_ERR(conf));
	textsearch_destroy(conf);
	assert_int_equal(
		PTR_ERR(textsearch_prepare("kmp", "a", 1, GFP_KERNEL, 16)),
		-EINVAL);
}

/* Which algorithm "auto" takes for a set of @count patterns, all @len
 * bytes but the last, which has @last. */
static const char *auto_choice(unsigned int count, unsigned int len,
			       unsigned int last, int flags)
{
	static const char bytes[] = "abcdefghijklmnopqrstuvwxyz";
	static char name[32];
	const void *p[200];
	unsigned int l[200], i;
	struct ts_config *conf;

	assert_true(count <= 200 && len <= 8 && last <= 8);
	for (i = 0; i < count; i++) {
		p[i] = bytes + i % 18;
		l[i] = i == count - 1 ? last : len;
	}
	conf = textsearch_prepare_set("auto", p, l, count, GFP_KERNEL, flags);
	assert_false(IS_ERR(conf));
	snprintf(name, sizeof(name), "%s", conf->ops->name);
	textsearch_destroy(conf);
	return name;
}

/* The thresholds registry.c documents (docs/performance.md measured
 * them): teddy up to 8 patterns, 32 from 2 bytes, 64 from 3, 128 from 4;
 * ac past. */
static void auto_set_choices(void **unused)
{
	(void)unused;
	assert_string_equal(auto_choice(2, 5, 5, 0), "teddy");
	assert_string_equal(auto_choice(8, 5, 1, 0), "teddy");
	assert_string_equal(auto_choice(8, 1, 1, TS_IGNORECASE), "teddy");
	assert_string_equal(auto_choice(9, 5, 1, 0), "ac");
	assert_string_equal(auto_choice(32, 5, 2, 0), "teddy");
	assert_string_equal(auto_choice(33, 5, 2, 0), "ac");
	assert_string_equal(auto_choice(64, 5, 3, TS_OVERLAP), "teddy");
	assert_string_equal(auto_choice(65, 5, 3, 0), "ac");
	assert_string_equal(auto_choice(64, 5, 2, 0), "ac");
	assert_string_equal(auto_choice(128, 8, 4, 0), "teddy");
	assert_string_equal(auto_choice(128, 8, 3, 0), "ac");
	assert_string_equal(auto_choice(129, 8, 8, 0), "ac");
	assert_string_equal(auto_choice(200, 8, 8, 0), "ac");
}

/* teddy refuses more than 128 patterns, saying why; 128 it takes. */
static void teddy_limit(void **unused)
{
	const void *p[129];
	unsigned int l[129], i;
	struct ts_config *conf;

	(void)unused;
	for (i = 0; i < 129; i++) {
		p[i] = "abcdefgh" + i % 8;
		l[i] = 1;
	}
	conf = textsearch_prepare_set("teddy_scalar", p, l, 129, GFP_KERNEL, 0);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
	assert_non_null(strstr(textsearch_last_error(), "at most 128"));
	conf = textsearch_prepare_set("teddy", p, l, 128, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_int_equal(textsearch_find_continuous(
				 conf, &(struct ts_state){ 0 }, "xxh", 3),
			 2);
	textsearch_destroy(conf);
}

static void match_id_len_single(void **unused)
{
	const char *text = "We dance the funky chicken";
	struct ts_config *conf;
	struct ts_state st;

	(void)unused;
	conf = textsearch_prepare("kmp", "chicken", 7, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_int_equal(textsearch_find_continuous(conf, &st, text, 26), 19);
	assert_int_equal(textsearch_match_id(&st), 0);
	assert_int_equal(textsearch_match_len(conf, &st), 7);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(textsearch_match_len(conf, &st), 0);
	textsearch_destroy(conf);
}

/* "aa" in "aaaa" with TS_OVERLAP: 0, 1, 2, for every algorithm, and
 * through blocks of one byte. */
static void overlap_single_every_algorithm(void **unused)
{
	static const char *const algos[] = {
		"kmp",
		"bm",
		"shiftor",
		"rarebyte",
		"rarebyte_scalar",
		"rarebyte_sse2",
		"rarebyte_avx2",
		"rarebyte_avx512",
		"auto",
		"ac",
		"teddy",
		"teddy_scalar",
	};
	const struct ts_fsm_token aa[] = {
		{ TS_FSM_SPECIFIC, TS_FSM_SINGLE, 'a' },
		{ TS_FSM_SPECIFIC, TS_FSM_SINGLE, 'a' },
	};
	size_t a;
	int round;

	(void)unused;
	for (a = 0; a <= sizeof(algos) / sizeof(*algos); a++) {
		bool fsm = a == sizeof(algos) / sizeof(*algos);
		struct ts_config *conf =
			fsm ? textsearch_prepare("fsm", aa, sizeof(aa),
						 GFP_KERNEL, TS_OVERLAP) :
			      textsearch_prepare(algos[a], "aa", 2, GFP_KERNEL,
						 TS_OVERLAP | TS_AUTOLOAD);

		assert_false(IS_ERR(conf));
		for (round = 0; round < 2; round++) {
			struct blocks *b = blocks_random((const u8 *)"aaaa", 4,
							 &(struct rng){ 1 }, 1);
			struct ts_state st;
			unsigned int pos, want;

			pos = round ? blocks_find(conf, &st, b) :
				      textsearch_find_continuous(conf, &st,
								 "aaaa", 4);
			for (want = 0; want < 3; want++) {
				if (pos != want)
					fprintf(stderr, "%s: got %u want %u\n",
						fsm ? "fsm" : algos[a], pos,
						want);
				assert_int_equal(pos, want);
				assert_int_equal(textsearch_match_id(&st), 0);
				assert_int_equal(
					textsearch_match_len(conf, &st), 2);
				pos = textsearch_next(conf, &st);
			}
			assert_int_equal(pos, UINT_MAX);
			assert_true(blocks_ok(b));
			blocks_free(b);
		}
		textsearch_destroy(conf);
	}
}

/* Patterns that use every byte value: no byte is left for the class of
 * bytes in no pattern. */
static void every_byte_value(void **unused)
{
	static u8 bytes[256], data[600];
	const void *p[258];
	unsigned int l[258], i, k, pos, nwant;
	struct set s = { 258, (u8 **)p, l, false };
	struct ts_config *conf;
	struct ts_state st;
	struct occ *want;
	struct rng r = { 3 };

	(void)unused;
	for (i = 0; i < 256; i++) {
		bytes[i] = (u8)i;
		p[i] = &bytes[i];
		l[i] = 1;
	}
	p[256] = "\xff\x00\x01";
	l[256] = 3;
	p[257] = "ab";
	l[257] = 2;
	for (i = 0; i < sizeof(data); i++)
		data[i] = (u8)rng_below(&r, 256);
	memcpy(data + 100, "\xff\x00\x01", 3);
	conf = textsearch_prepare_set("ac", p, l, 258, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	want = reference(&s, data, sizeof(data), false, &nwant);
	for (k = 0,
	    pos = textsearch_find_continuous(conf, &st, data, sizeof(data));
	     pos != UINT_MAX; pos = textsearch_next(conf, &st), k++) {
		assert_true(k < nwant);
		assert_int_equal(pos, want[k].start);
		assert_int_equal(textsearch_match_id(&st), want[k].id);
	}
	assert_int_equal(k, nwant);
	free(want);
	textsearch_destroy(conf);
}

/* A set of one and textsearch_prepare() give the same matches. */
static void set_of_one_is_single(void **unused)
{
	struct rng r = { 7 };
	u8 data[300], pat[6];
	unsigned int round, i, len = 0;

	(void)unused;
	for (round = 0; round < 2000; round++) {
		const void *p[1] = { pat };
		int flags = (round & 1 ? TS_OVERLAP : 0) |
			    (round & 2 ? TS_IGNORECASE : 0);
		struct ts_config *one, *set;
		struct ts_state s1, s2;
		unsigned int a, b;

		len = 1 + rng_below(&r, 5);
		for (i = 0; i < len; i++)
			pat[i] = "aAb"[rng_below(&r, 3)];
		for (i = 0; i < sizeof(data); i++)
			data[i] = "aAb"[rng_below(&r, 3)];
		one = textsearch_prepare("kmp", pat, len, GFP_KERNEL, flags);
		set = textsearch_prepare_set(round & 4 ? "teddy" : "ac", p,
					     &len, 1, GFP_KERNEL, flags);
		assert_false(IS_ERR(one) || IS_ERR(set));
		a = textsearch_find_continuous(one, &s1, data, sizeof(data));
		b = textsearch_find_continuous(set, &s2, data, sizeof(data));
		for (;;) {
			assert_int_equal(a, b);
			assert_int_equal(textsearch_match_len(one, &s1),
					 textsearch_match_len(set, &s2));
			if (a == UINT_MAX)
				break;
			a = textsearch_next(one, &s1);
			b = textsearch_next(set, &s2);
		}
		textsearch_destroy(one);
		textsearch_destroy(set);
	}
}

/* ---- threads, the reader, packets ---- */

#define THREADS 4

struct shared {
	struct ts_config *conf;
	const u8 *data;
	unsigned int dlen;
	const struct occ *want;
	unsigned int nwant;
	int bad; /* written by the threads, read after join */
};

static void *search_thread(void *arg)
{
	struct shared *sh = arg;
	int round, bad = 0;

	for (round = 0; round < 20; round++) {
		struct ts_state st;
		unsigned int k = 0, pos;

		for (pos = textsearch_find_continuous(sh->conf, &st, sh->data,
						      sh->dlen);
		     pos != UINT_MAX; pos = textsearch_next(sh->conf, &st), k++)
			if (k >= sh->nwant || pos != sh->want[k].start ||
			    textsearch_match_id(&st) != sh->want[k].id)
				bad = 1;
		if (k != sh->nwant)
			bad = 1;
	}
	return bad ? arg : NULL;
}

/* The set algorithms the tests below run each through. */
static const char *const set_algos[] = { "ac", "teddy", "teddy_scalar" };
#define N_SET_ALGOS (sizeof(set_algos) / sizeof(set_algos[0]))

static void threads_share_a_set(void **unused)
{
	static u8 data[4000];
	struct rng r = { 11 };
	struct set s = { 0 };
	pthread_t t[THREADS];
	struct shared sh;
	unsigned int i, j;
	unsigned int ov;

	(void)unused;
	s.count = 300;
	s.pat = calloc(s.count, sizeof(*s.pat));
	s.len = calloc(s.count, sizeof(*s.len));
	assert_true(s.pat && s.len);
	for (i = 0; i < s.count; i++) {
		s.len[i] = 1 + rng_below(&r, 6);
		s.pat[i] = malloc(s.len[i]);
		assert_non_null(s.pat[i]);
		for (j = 0; j < s.len[i]; j++)
			s.pat[i][j] = (u8)('a' + rng_below(&r, 4));
	}
	for (i = 0; i < sizeof(data); i++)
		data[i] = (u8)('a' + rng_below(&r, 5));
	for (ov = 0; ov < 2 * N_SET_ALGOS; ov++) {
		/* teddy takes up to 128: the first 100 */
		struct set sub = s;

		if (ov / 2)
			sub.count = 100;
		sh.conf = textsearch_prepare_set(set_algos[ov / 2],
						 (const void *const *)sub.pat,
						 sub.len, sub.count, GFP_KERNEL,
						 ov % 2 ? TS_OVERLAP : 0);
		assert_false(IS_ERR(sh.conf));
		sh.data = data;
		sh.dlen = sizeof(data);
		sh.want =
			reference(&sub, data, sizeof(data), ov % 2, &sh.nwant);
		assert_true(sh.nwant > 100);
		for (i = 0; i < THREADS; i++)
			assert_int_equal(pthread_create(&t[i], NULL,
							search_thread, &sh),
					 0);
		for (i = 0; i < THREADS; i++) {
			void *ret;

			assert_int_equal(pthread_join(t[i], &ret), 0);
			assert_null(ret);
		}
		free((void *)sh.want);
		textsearch_destroy(sh.conf);
	}
	set_free(&s);
}

struct pipe_feed {
	int fd;
	const u8 *data;
	size_t len;
};

static void *feed(void *arg)
{
	struct pipe_feed *f = arg;
	size_t done = 0;

	while (done < f->len) {
		ssize_t n = write(f->fd, f->data + done,
				  f->len - done < 777 ? f->len - done : 777);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(f->fd);
	return NULL;
}

/* A pipe cannot be read again: with TS_OVERLAP the reader must keep a
 * pattern longer than its default history (10,000 bytes) to go back to. */
static void reader_with_a_set(void **unused)
{
	enum { LONG = 10000, DLEN = 50000 };
	u8 *data = malloc(DLEN), *longp = malloc(LONG);
	struct rng r = { 5 };
	unsigned int i, ov;

	(void)unused;
	assert_true(data && longp);
	for (i = 0; i < LONG; i++)
		longp[i] = (u8)('a' + rng_below(&r, 2));
	for (i = 0; i < DLEN; i++)
		data[i] = (u8)('a' + rng_below(&r, 3));
	memcpy(data + 100, longp, LONG);
	memcpy(data + 30000, longp, LONG);
	for (ov = 0; ov < 2 * N_SET_ALGOS; ov++) {
		const void *p[] = { longp, "ab", "cab", longp + LONG - 3 };
		unsigned int l[] = { LONG, 2, 3, 3 };
		struct set s = { 4, (u8 **)p, l, false };
		struct ts_config *conf;
		struct ts_reader *rd;
		struct pipe_feed f;
		struct ts_state st;
		pthread_t t;
		struct occ *want;
		unsigned int nwant, k, pos;
		int fds[2];

		conf = textsearch_prepare_set(set_algos[ov / 2], p, l, 4,
					      GFP_KERNEL,
					      ov % 2 ? TS_OVERLAP : 0);
		assert_false(IS_ERR(conf));
		want = reference(&s, data, DLEN, ov % 2, &nwant);
		assert_int_equal(pipe(fds), 0);
		f = (struct pipe_feed){ fds[1], data, DLEN };
		assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
		rd = ts_reader_from_fd(fds[0], 64);
		assert_non_null(rd);
		for (k = 0, pos = textsearch_find_reader(conf, &st, rd);
		     pos != UINT_MAX; pos = textsearch_next(conf, &st), k++) {
			assert_true(k < nwant);
			assert_int_equal(pos, want[k].start);
			assert_int_equal(textsearch_match_id(&st), want[k].id);
		}
		assert_int_equal(k, nwant);
		assert_int_equal(ts_reader_error(rd), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		ts_reader_free(rd);
		close(fds[0]);
		free(want);
		textsearch_destroy(conf);
	}
	free(data);
	free(longp);
}

/* textsearch_find_iovec(): matches across buffers, empty ones between. */
static void iovec_with_a_set(void **unused)
{
	static const char text[] = "ushers his hers";
	const void *p[] = { "he", "she", "his", "hers" };
	unsigned int l[] = { 2, 3, 3, 4 }, ov;
	struct set s = { 4, (u8 **)p, l, false };
	struct iovec iov[] = {
		{ (void *)text, 2 },	   { NULL, 5 },
		{ (void *)(text + 2), 0 }, { (void *)(text + 2), 1 },
		{ (void *)(text + 3), 9 }, { (void *)(text + 12), 3 },
	};

	(void)unused;
	for (ov = 0; ov < 2 * N_SET_ALGOS; ov++) {
		struct ts_config *conf;
		struct ts_state st;
		struct occ *want;
		unsigned int nwant, k, pos;

		conf = textsearch_prepare_set(set_algos[ov / 2], p, l, 4,
					      GFP_KERNEL,
					      ov % 2 ? TS_OVERLAP : 0);
		assert_false(IS_ERR(conf));
		want = reference(&s, (const u8 *)text, sizeof(text) - 1, ov % 2,
				 &nwant);
		assert_int_equal(nwant, ov % 2 ? 6 : 3);
		for (k = 0, pos = textsearch_find_iovec(conf, &st, iov, 6);
		     pos != UINT_MAX; pos = textsearch_next(conf, &st), k++) {
			assert_true(k < nwant);
			assert_int_equal(pos, want[k].start);
			assert_int_equal(textsearch_match_id(&st), want[k].id);
			assert_int_equal(textsearch_match_len(conf, &st),
					 want[k].end - want[k].start);
		}
		assert_int_equal(k, nwant);
		free(want);
		textsearch_destroy(conf);
	}
}

static void release(void *cookie)
{
	free(cookie);
}

/* skb_find_text_state() then next() through a buffer of fragments. */
static void skb_with_a_set(void **unused)
{
	static const char text[] = "xxheyshehishersxx she";
	const void *p[] = { "he", "she", "his", "hers" };
	unsigned int l[] = { 2, 3, 3, 4 }, n = sizeof(text) - 1, i, ov;
	struct set s = { 4, (u8 **)p, l, false };

	(void)unused;
	for (ov = 0; ov < 2 * N_SET_ALGOS; ov++) {
		struct ts_config *conf;
		struct sk_buff *skb = alloc_skb(3, GFP_KERNEL);
		struct ts_state st;
		struct occ *want;
		unsigned int nwant, k, pos;

		assert_non_null(skb);
		skb_put_data(skb, text, 3);
		/* one byte a fragment */
		for (i = 3; i < n; i++) {
			u8 *b = malloc(1);

			assert_non_null(b);
			*b = (u8)text[i];
			assert_int_equal(skb_add_frag(skb, b, 1, release, b),
					 i - 3 < MAX_SKB_FRAGS ? 0 : -ENOSPC);
			if (i - 3 >= MAX_SKB_FRAGS)
				free(b);
		}
		if (n > 3 + MAX_SKB_FRAGS)
			n = 3 + MAX_SKB_FRAGS;
		conf = textsearch_prepare_set(set_algos[ov / 2], p, l, 4,
					      GFP_KERNEL,
					      ov % 2 ? TS_OVERLAP : 0);
		assert_false(IS_ERR(conf));
		want = reference(&s, (const u8 *)text, n, ov % 2, &nwant);
		assert_true(nwant >= 3);
		for (k = 0, pos = skb_find_text_state(skb, 0, n, conf, &st);
		     pos != UINT_MAX; pos = textsearch_next(conf, &st), k++) {
			assert_true(k < nwant);
			assert_int_equal(pos, want[k].start);
			assert_int_equal(textsearch_match_id(&st), want[k].id);
		}
		assert_int_equal(k, nwant);
		free(want);
		textsearch_destroy(conf);
		kfree_skb(skb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prepare_set_errors),
		cmocka_unit_test(match_id_len_single),
		cmocka_unit_test(auto_set_choices),
		cmocka_unit_test(teddy_limit),
		cmocka_unit_test(overlap_single_every_algorithm),
		cmocka_unit_test(set_of_one_is_single),
		cmocka_unit_test(every_byte_value),
		cmocka_unit_test(threads_share_a_set),
		cmocka_unit_test(reader_with_a_set),
		cmocka_unit_test(iovec_with_a_set),
		cmocka_unit_test(skb_with_a_set),
		cmocka_unit_test(differential_sets),
		cmocka_unit_test(prefilter_differential),
		cmocka_unit_test(skip_differential),
		cmocka_unit_test(big_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
