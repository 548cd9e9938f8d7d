/*
 * test_bm.c - Boyer-Moore edge cases the random differential test may miss:
 * one-byte and very long patterns, patterns longer than the data, periodic
 * patterns, matches on block boundaries, long patterns over one-byte blocks,
 * the ISO-8859-1 folding corners, one request per block, and stream
 * offsets near UINT_MAX.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testsupport.h"
#include "vstream.h"

static struct ts_config *prep(const void *pat, unsigned int len, int flags)
{
	struct ts_config *conf =
		textsearch_prepare("bm", pat, len, GFP_KERNEL, flags);

	assert_false(IS_ERR(conf));
	return conf;
}

/*
 * Every match of @pat in @data, in order, must come out of find/next both
 * contiguous and through @b; then UINT_MAX, twice.  Returns the number of
 * matches.
 */
static unsigned int check_all(struct ts_config *conf, const u8 *pat,
			      unsigned int plen, const u8 *data,
			      unsigned int dlen, struct blocks *b, bool icase)
{
	struct ts_state st_lin, st_blk;
	unsigned int want, got_lin, got_blk, n = 0;

	want = ref_find(pat, plen, data, dlen, 0, icase);
	got_lin = textsearch_find_continuous(conf, &st_lin, data, dlen);
	got_blk = b ? blocks_find(conf, &st_blk, b) : want;
	for (;;) {
		assert_int_equal(got_lin, want);
		assert_int_equal(got_blk, want);
		if (want == UINT_MAX)
			break;
		n++;
		want = ref_find(pat, plen, data, dlen, want + plen, icase);
		got_lin = textsearch_next(conf, &st_lin);
		got_blk = b ? textsearch_next(conf, &st_blk) : want;
	}
	assert_int_equal(textsearch_next(conf, &st_lin), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &st_lin), UINT_MAX);
	if (b) {
		assert_int_equal(textsearch_next(conf, &st_blk), UINT_MAX);
		assert_true(blocks_ok(b));
	}
	return n;
}

/* check_all() with no cuts, every byte cut, and random cuts. */
static unsigned int check_all_splits(const u8 *pat, unsigned int plen,
				     const u8 *data, unsigned int dlen,
				     bool icase, struct rng *r)
{
	struct ts_config *conf = prep(pat, plen, icase ? TS_IGNORECASE : 0);
	unsigned int n = 0;
	int mode;

	for (mode = 0; mode < 3; mode++) {
		struct blocks *b = blocks_random(data, dlen, r, mode);

		n = check_all(conf, pat, plen, data, dlen, b, icase);
		blocks_free(b);
	}
	textsearch_destroy(conf);
	return n;
}

static void one_byte_pattern(void **unused)
{
	struct rng r = { 1 };
	const u8 data[] = "xaxxaax";
	unsigned int dlen = sizeof(data) - 1;

	(void)unused;
	assert_int_equal(
		check_all_splits((const u8 *)"a", 1, data, dlen, false, &r), 3);
	assert_int_equal(
		check_all_splits((const u8 *)"x", 1, data, dlen, false, &r), 4);
	assert_int_equal(
		check_all_splits((const u8 *)"z", 1, data, dlen, false, &r), 0);
	assert_int_equal(
		check_all_splits((const u8 *)"A", 1, data, dlen, true, &r), 3);
	/* a single byte of data */
	assert_int_equal(check_all_splits((const u8 *)"a", 1, (const u8 *)"a",
					  1, false, &r),
			 1);
}

static void pattern_longer_than_data(void **unused)
{
	struct rng r = { 2 };
	const u8 *pat = (const u8 *)"abcabcabc";
	unsigned int cut = 1;
	struct ts_config *conf = prep(pat, 9, 0);
	struct blocks *b = blocks_new(pat, 8, &cut, 1);
	struct ts_state st;

	(void)unused;
	/* the data is the pattern minus its last byte */
	assert_int_equal(check_all_splits(pat, 9, pat, 8, false, &r), 0);
	assert_int_equal(check_all_splits(pat, 9, pat + 1, 8, false, &r), 0);
	assert_int_equal(blocks_find(conf, &st, b), UINT_MAX);
	assert_int_equal(textsearch_find_continuous(conf, &st, pat, 0),
			 UINT_MAX);
	assert_int_equal(textsearch_find_continuous(conf, &st, NULL, 0),
			 UINT_MAX);
	blocks_free(b);
	textsearch_destroy(conf);
}

static void periodic_patterns(void **unused)
{
	struct rng r = { 3 };
	const u8 *d = (const u8 *)"abababababab";

	(void)unused;
	/* non-overlapping: 0, then only 4 bytes are left */
	assert_int_equal(check_all_splits((const u8 *)"abababab", 8, d, 12,
					  false, &r),
			 1);
	assert_int_equal(
		check_all_splits((const u8 *)"abab", 4, d, 12, false, &r), 3);
	assert_int_equal(check_all_splits((const u8 *)"aa", 2,
					  (const u8 *)"aaaa", 4, false, &r),
			 2);
	assert_int_equal(check_all_splits((const u8 *)"aaab", 4,
					  (const u8 *)"aaaaaaabaaab", 12, false,
					  &r),
			 2);
	assert_int_equal(check_all_splits((const u8 *)"abaab", 5,
					  (const u8 *)"abaabaabaababaab", 16,
					  false, &r),
			 3);
}

static void explicit_next_sequence(void **unused)
{
	struct ts_config *conf = prep("aa", 2, 0);
	struct ts_state st;

	(void)unused;
	assert_int_equal(textsearch_find_continuous(conf, &st, "aaaa", 4), 0);
	assert_int_equal(st.offset, 2);
	assert_int_equal(textsearch_next(conf, &st), 2);
	assert_int_equal(st.offset, 4);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	/* find starts over */
	assert_int_equal(textsearch_find_continuous(conf, &st, "xaaa", 4), 1);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	textsearch_destroy(conf);
}

/* A match at every position, with one cut at every position. */
static void matches_on_block_boundaries(void **unused)
{
	const u8 *pat = (const u8 *)"needle";
	const unsigned int plen = 6, dlen = 24;
	struct ts_config *conf = prep(pat, plen, 0);
	unsigned int at, cut, cuts[2];

	(void)unused;
	for (at = 0; at + plen <= dlen; at++) {
		u8 data[24];

		memset(data, 'e', sizeof(data));
		memcpy(data + at, pat, plen);
		for (cut = 1; cut < dlen; cut++) {
			struct blocks *b = blocks_new(data, dlen, &cut, 1);

			check_all(conf, pat, plen, data, dlen, b, false);
			blocks_free(b);
			/* and a one-byte block in the middle of the match */
			cuts[0] = cut;
			cuts[1] = cut + 1;
			b = blocks_new(data, dlen, cuts, 2);
			check_all(conf, pat, plen, data, dlen, b, false);
			blocks_free(b);
		}
	}
	textsearch_destroy(conf);
}

/* Two matches back to back, across a cut between them and inside them. */
static void adjacent_matches_across_blocks(void **unused)
{
	const u8 *data = (const u8 *)"xyzxyzxyz";
	struct ts_config *conf = prep("xyz", 3, 0);
	unsigned int cut;

	(void)unused;
	for (cut = 1; cut < 9; cut++) {
		struct blocks *b = blocks_new(data, 9, &cut, 1);

		assert_int_equal(check_all(conf, (const u8 *)"xyz", 3, data, 9,
					   b, false),
				 3);
		blocks_free(b);
	}
	textsearch_destroy(conf);
}

static void long_pattern(void **unused)
{
	enum { PLEN = 5000, DLEN = 30000 };
	struct rng r = { test_seed("bm long pattern", 77) };
	u8 *pat = malloc(PLEN), *data = malloc(DLEN);
	const unsigned int at[] = { 0, 5000, 12345, DLEN - PLEN };
	unsigned int i, round;

	(void)unused;
	assert_non_null(pat);
	assert_non_null(data);
	for (round = 0; round < 4; round++) {
		/* small alphabets make partial matches long and frequent */
		unsigned int alpha = 2 + round;
		bool icase = round & 1;

		for (i = 0; i < PLEN; i++)
			pat[i] = (u8)('a' + rng_below(&r, alpha));
		if (round == 3) /* periodic with a twist at the end */
			for (i = 0; i < PLEN; i++)
				pat[i] = i == PLEN - 1 ? 'b' : 'a';
		for (i = 0; i < DLEN; i++)
			data[i] = (u8)('a' + rng_below(&r, alpha));
		for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
			memcpy(data + at[i], pat, PLEN);
		if (icase)
			for (i = 0; i < DLEN; i += 3)
				data[i] = (u8)(data[i] - 0x20);
		/* 0, 5000 and DLEN - PLEN are sure matches; 12345 is a
		 * planted one that 5000's copy may have overlapped */
		assert_true(check_all_splits(pat, PLEN, data, DLEN, icase,
					     &r) >= 3);
	}
	free(pat);
	free(data);
}

static void long_pattern_random_blocks(void **unused)
{
	enum { PLEN = 5000, DLEN = 12000 };
	struct rng r = { test_seed("bm long pattern blocks", 78) };
	u8 *pat = malloc(PLEN), *data = malloc(DLEN);
	struct ts_config *conf;
	unsigned int i, round;

	(void)unused;
	assert_non_null(pat);
	assert_non_null(data);
	for (i = 0; i < PLEN; i++)
		pat[i] = (u8)rng_below(&r, 256);
	conf = prep(pat, PLEN, 0);
	for (round = 0; round < 20; round++) {
		unsigned int where = rng_below(&r, DLEN - PLEN + 1);
		struct blocks *b;

		for (i = 0; i < DLEN; i++)
			data[i] = (u8)rng_below(&r, 256);
		memcpy(data + where, pat, PLEN);
		b = blocks_random(data, DLEN, &r, 1 + (int)(round & 1));
		assert_int_equal(
			check_all(conf, pat, PLEN, data, DLEN, b, false), 1);
		blocks_free(b);
	}
	textsearch_destroy(conf);
	free(pat);
	free(data);
}

static void ignorecase_latin1(void **unused)
{
	struct rng r = { 4 };
	const u8 upper[] = { 0xC0, 'A', 0xDE };
	const u8 lower[] = { 0xE0, 'a', 0xFE };
	const u8 times[] = { 0xD7 }, divide[] = { 0xF7 };
	const u8 sz[] = { 0xDF }, yuml[] = { 0xFF };
	struct ts_config *conf;
	struct ts_state st;

	(void)unused;
	assert_int_equal(check_all_splits(upper, 3, lower, 3, true, &r), 1);
	assert_int_equal(check_all_splits(lower, 3, upper, 3, true, &r), 1);
	assert_int_equal(check_all_splits(upper, 3, lower, 3, false, &r), 0);
	/* 0xD7 and 0xF7 are not letters */
	assert_int_equal(check_all_splits(times, 1, divide, 1, true, &r), 0);
	assert_int_equal(check_all_splits(divide, 1, times, 1, true, &r), 0);
	/* 0xDF and 0xFF fold to themselves */
	assert_int_equal(check_all_splits(sz, 1, yuml, 1, true, &r), 0);
	assert_int_equal(check_all_splits(yuml, 1, sz, 1, true, &r), 0);
	assert_int_equal(check_all_splits(sz, 1, sz, 1, true, &r), 1);
	assert_int_equal(check_all_splits(yuml, 1, yuml, 1, true, &r), 1);
	/* 0xBF, 0xDF - 0x20, must not be taken for 0xDF either */
	conf = prep(sz, 1, TS_IGNORECASE);
	assert_int_equal(
		textsearch_find_continuous(conf, &st, "\xbf\xff\xdf", 3), 2);
	textsearch_destroy(conf);

	/* get_pattern returns the pattern unfolded */
	conf = prep(upper, 3, TS_IGNORECASE);
	assert_int_equal(textsearch_get_pattern_len(conf), 3);
	assert_memory_equal(textsearch_get_pattern(conf), upper, 3);
	textsearch_destroy(conf);
}

/* Each block is asked for once: data already held is never fetched again,
 * and windows that run past a block go on into the next one. */
static void asks_each_block_once(void **unused)
{
	enum { DLEN = 10000, BLK = 10 };
	static u8 data[DLEN];
	u8 pat[100];
	unsigned int cuts[DLEN / BLK], i;
	struct ts_config *conf;
	struct blocks *b;
	struct ts_state st;

	(void)unused;
	memset(data, 'a', sizeof(data));
	memset(pat, 'x', sizeof(pat));
	for (i = 0; i < DLEN / BLK; i++)
		cuts[i] = (i + 1) * BLK;
	conf = prep(pat, sizeof(pat), 0);
	b = blocks_new(data, DLEN, cuts, DLEN / BLK);
	assert_int_equal(blocks_find(conf, &st, b), UINT_MAX);
	assert_true(blocks_ok(b));
	assert_true(blocks_calls(b) <= DLEN / BLK + 1);
	blocks_free(b);
	/* one block: one call for it, maybe one more for the end */
	b = blocks_new(data, DLEN, NULL, 0);
	assert_int_equal(blocks_find(conf, &st, b), UINT_MAX);
	assert_true(blocks_calls(b) <= 2);
	blocks_free(b);
	textsearch_destroy(conf);
}

/* The provider installed the kernel's way works too. */
static void kernel_style_provider(void **unused)
{
	const u8 *data = (const u8 *)"one two three two one";
	unsigned int cuts[] = { 5, 6, 7, 15 };
	struct blocks *b = blocks_new(data, 21, cuts, 4);
	struct ts_config *conf = prep("two", 3, 0);
	struct ts_state st;

	(void)unused;
	assert_int_equal(blocks_find_kernel_style(conf, &st, b), 4);
	assert_int_equal(textsearch_next(conf, &st), 14);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_true(blocks_ok(b));
	assert_int_equal(blocks_finishes(b), 3);
	blocks_free(b);
	textsearch_destroy(conf);
}

/* Long enough that a match spans several blocks of the stream. */
enum { VPAT = 4000 };

static void offsets_near_uint_max(void **unused)
{
	u8 pat[VPAT];
	struct ts_config *conf;
	struct ts_state st;
	struct vstream v;

	(void)unused;
	memset(&v, 0, sizeof(v));
	memset(pat, 'b', sizeof(pat));
	conf = prep(pat, VPAT, 0);

	/* the last VPAT bytes before UINT_MAX: the match ends at UINT_MAX */
	v.stream_end = UINT_MAX;
	v.b_from = UINT_MAX - VPAT;
	v.overlong = false;
	assert_int_equal(vstream_find(conf, &st, &v), UINT_MAX - VPAT);
	assert_int_equal(st.offset, UINT_MAX);
	assert_true(v.ok);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);

	/* one byte later the match would end past UINT_MAX: no match, even
	 * when the provider claims more data */
	v.b_from = UINT_MAX - VPAT + 1;
	v.stream_end = (uint64_t)UINT_MAX + VPAT;
	v.overlong = true;
	assert_int_equal(vstream_find(conf, &st, &v), UINT_MAX);
	assert_true(v.ok);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	textsearch_destroy(conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_byte_pattern),
		cmocka_unit_test(pattern_longer_than_data),
		cmocka_unit_test(periodic_patterns),
		cmocka_unit_test(explicit_next_sequence),
		cmocka_unit_test(matches_on_block_boundaries),
		cmocka_unit_test(adjacent_matches_across_blocks),
		cmocka_unit_test(long_pattern),
		cmocka_unit_test(long_pattern_random_blocks),
		cmocka_unit_test(ignorecase_latin1),
		cmocka_unit_test(asks_each_block_once),
		cmocka_unit_test(kernel_style_provider),
		cmocka_unit_test(offsets_near_uint_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
