/*
 * test_stream_teddy.c - the native stream engine of "teddy" (tds_* in
 * src/algo/teddy.c), at every level, against the naive set reference over
 * the concatenation of the writes:
 *   - sets of 1 to 70 literals of 1 to 33 bytes (8 and 16 buckets), data
 *     made of pieces of the patterns, close together or (sparse) far apart
 *     in other bytes, TS_IGNORECASE, TS_OVERLAP, writes of
 *     0 to 3000 bytes (short ones appended to the carried bytes, long ones
 *     scanned in place), streams reset and searched again;
 *   - every write ends where a PROT_NONE page begins, so a load past the
 *     write faults;
 *   - each match is yielded neither before the write that decides it nor,
 *     for sets of up to 8 literals of up to 8 bytes (where keep's work
 *     budget never gives up), after it: decided at stream length T when it
 *     ends by T and starts before T - k (at T - k with TS_OVERLAP), k being
 *     the longest suffix of the bytes from the last match's end (start,
 *     with TS_OVERLAP) that is a proper prefix of a pattern.
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
#include "textsearch_stream.h"

#define MAXDATA 12400u /* test_write_edges(): 3 writes of 4097, and 40 */
#define DIFF_MAXDATA 6000u
#define MAXPATS 70u
#define MAXLEN 33u
#define GUARD_SPAN 4097u

static u8 *guard_end; /* one past the last readable byte */

static int setup(void **unused)
{
	(void)unused;
	guard_end = test_guard_end(GUARD_SPAN);
	return guard_end ? 0 : -1;
}

static u8 pats[MAXPATS][MAXLEN];
static unsigned int lens[MAXPATS], npats, longest;
static u8 data[MAXDATA];

static bool eq(u8 a, u8 b, bool icase)
{
	return icase ? ref_fold(a) == ref_fold(b) : a == b;
}

/* The longest suffix of data[lb, t), under longest bytes, that is a proper
 * prefix of a pattern. */
static unsigned int keep_at(unsigned int t, unsigned int lb, bool icase)
{
	unsigned int max = longest - 1 < t - lb ? longest - 1 : t - lb;

	for (unsigned int n = max; n; n--)
		for (unsigned int j = 0; j < npats; j++) {
			unsigned int i = 0;

			if (lens[j] <= n)
				continue;
			while (i < n && eq(data[t - n + i], pats[j][i], icase))
				i++;
			if (i == n)
				return n;
		}
	return 0;
}

static const char *const algos[] = { "teddy",	     "teddy_vbmi",
				     "teddy_avx512", "teddy_avx2",
				     "teddy_ssse3",  "teddy_scalar" };

static void one_case(struct rng *r, const char *algo, unsigned long *results)
{
	const bool icase = rng_below(r, 2), overlap = rng_below(r, 2);
	const int flags = (icase ? TS_IGNORECASE : 0) |
			  (overlap ? TS_OVERLAP : 0);
	const unsigned int alpha = 2 + rng_below(r, 4);
	const unsigned int n =
		1 + rng_below(r, rng_below(r, 4) ? 600 : DIFF_MAXDATA);
	const unsigned int maxl = rng_below(r, 2) ? 8 : MAXLEN;
	/* sparse: pieces of patterns far apart in bytes no pattern holds, so
	 * that a scan of a long write walks many vectors between matches */
	const bool sparse = !rng_below(r, 4);
	const u8 *pp[MAXPATS];
	struct ts_config *conf;
	struct ts_stream *s;
	struct ref_match *ref;
	unsigned int nref, got = 0, off = 0, mode = rng_below(r, 4);
	uint64_t *when;
	bool timely;

	npats = rng_below(r, 3) ? 1 + rng_below(r, 8) : 1 + rng_below(r, 70);
	longest = 0;
	for (unsigned int j = 0; j < npats; j++) {
		lens[j] = 1 + rng_below(r, maxl);
		for (unsigned int i = 0; i < lens[j]; i++)
			pats[j][i] = (u8) "abcdef"[rng_below(r, alpha)];
		if (lens[j] > longest)
			longest = lens[j];
		pp[j] = pats[j];
	}
	for (unsigned int i = 0; i < n;) {
		if (sparse ? !rng_below(r, 150) : !rng_below(r, 3)) {
			unsigned int j = rng_below(r, npats);
			unsigned int l = rng_below(r, lens[j] + 1);

			for (unsigned int k = 0; k < l && i < n; k++)
				data[i++] = pats[j][k];
		} else if (sparse) {
			data[i++] =
				(u8) "ghijklmnopqrstuvwxyz"[rng_below(r, 20)];
		} else {
			data[i++] = (u8) "abcdefAB"[rng_below(r, alpha + 2)];
		}
	}
	if (icase)
		for (unsigned int i = 0; i < n; i++)
			if (rng_below(r, 2) && data[i] >= 'a' && data[i] <= 'z')
				data[i] ^= 0x20;
	timely = npats <= 8 && longest <= 8;
	conf = textsearch_prepare_set(algo, (const void *const *)pp, lens,
				      npats, GFP_KERNEL, flags);
	assert_false(IS_ERR(conf));
	ref = ref_set_matches(pp, lens, npats, icase, data, n, overlap, &nref);
	when = malloc((nref + 1) * sizeof(*when));
	assert_non_null(when);
	/* the stream length at which each match is decided, n + 1 for end */
	for (unsigned int i = 0; i < nref; i++) {
		uint64_t t = ref[i].end, prev = i ? when[i - 1] : 0;
		unsigned int lb =
			i ? (overlap ? ref[i - 1].start : ref[i - 1].end) : 0;

		if (t < prev)
			t = prev;
		for (; t <= n; t++) {
			unsigned int k = (unsigned int)t -
					 keep_at((unsigned int)t, lb, icase);

			if (overlap ? ref[i].start <= k : ref[i].start < k)
				break;
		}
		when[i] = t;
	}
	s = textsearch_stream_open(conf, GFP_KERNEL);
	assert_false(IS_ERR(s));
	for (int pass = 0; pass < 2; pass++) {
		got = 0;
		off = 0;
		for (;;) {
			unsigned int cut = 0, before = off;
			struct ts_match m;
			bool end = off >= n;

			if (end) {
				assert_int_equal(textsearch_stream_end(s), 0);
			} else {
				switch (mode) {
				case 0:
					cut = rng_below(r, 3);
					break;
				case 1:
					cut = rng_below(r, 40);
					break;
				case 2:
					cut = rng_below(r, 300);
					break;
				default:
					cut = rng_below(
						r, rng_below(r, 2) ? 3 : 3000);
				}
				if (cut > n - off)
					cut = n - off;
				memcpy(guard_end - cut, data + off, cut);
				assert_int_equal(textsearch_stream_write(
							 s, guard_end - cut,
							 cut),
						 0);
				off += cut;
			}
			while (textsearch_stream_next(s, &m) > 0) {
				uint64_t at = end ? n + 1 : off;

				assert_true(got < nref);
				assert_int_equal(m.start, ref[got].start);
				assert_int_equal(m.end, ref[got].end);
				assert_int_equal(m.id, ref[got].id);
				/* not before it is decided */
				assert_true(when[got] <= at);
				if (timely && cut)
					assert_true(when[got] > before);
				got++;
			}
			memset(guard_end - cut, '#', cut);
			if (end)
				break;
		}
		assert_int_equal(got, nref);
		textsearch_stream_reset(s);
	}
	*results += nref;
	textsearch_stream_free(s);
	textsearch_destroy(conf);
	free(ref);
	free(when);
}

static void test_differential(void **unused)
{
	struct rng r = { test_seed("stream-teddy", 20261204) };
	unsigned long results = 0;

	(void)unused;
	for (unsigned int i = 0; i < 2500; i++)
		one_case(&r, algos[i % 5], &results);
	printf("# stream teddy: 2500 streams, %lu results compared twice\n",
	       results);
	assert_true(results > 10000);
}

/* One stream of @n bytes of data[] in writes of @ws against the reference,
 * matches taken after each write; the number compared. */
static unsigned int stream_in_writes(struct ts_config *conf, const u8 **pp,
				     unsigned int n, unsigned int ws,
				     bool overlap)
{
	struct ts_stream *s = textsearch_stream_open(conf, GFP_KERNEL);
	struct ref_match *ref;
	unsigned int nref, got = 0;
	struct ts_match m;

	assert_false(IS_ERR(s));
	ref = ref_set_matches(pp, lens, npats, false, data, n, overlap, &nref);
	for (unsigned int off = 0; off < n; off += ws) {
		unsigned int cut = n - off < ws ? n - off : ws;

		memcpy(guard_end - cut, data + off, cut);
		assert_int_equal(
			textsearch_stream_write(s, guard_end - cut, cut), 0);
		while (textsearch_stream_next(s, &m) > 0) {
			assert_true(got < nref);
			assert_int_equal(m.start, ref[got].start);
			assert_int_equal(m.end, ref[got].end);
			assert_int_equal(m.id, ref[got].id);
			got++;
		}
	}
	assert_int_equal(textsearch_stream_end(s), 0);
	while (textsearch_stream_next(s, &m) > 0) {
		assert_true(got < nref);
		assert_int_equal(m.start, ref[got].start);
		got++;
	}
	assert_int_equal(got, nref);
	textsearch_stream_free(s);
	free(ref);
	return nref;
}

/*
 * The writes after quiet ones, which the set's engine takes without its
 * automata (tds_filter_write(): VBMI, 8 buckets): one occurrence of a
 * pattern planted so that it ends anywhere from 70 bytes before the end
 * of the fifth write (the third past 1 KiB) to 20 after, in bytes no
 * pattern holds, for writes of 17 to 4096 bytes (and 4097, the first the
 * automata take again).  An occurrence ending where the write does, starting
 * where it does, or in the bytes carried between them must be found
 * there, and only once.
 */
static void test_write_edges(void **unused)
{
	static const unsigned int sizes[] = { 17,   31,	  63,	64,  65,  100,
					      128,  129,  255,	256, 511, 1024,
					      1025, 1500, 4096, 4097 };
	/* shortest and longest of each: the open starts (shortest - 1)
	 * and the carried ones (longest - 1) */
	static const unsigned int set_lens[][8] = {
		{ 9, 16, 11, 12, 13, 14, 15, 10 },
		{ 4, 7, 5, 0 },
		{ 1, 20, 0 },
	};
	static const char *const edge_algos[] = { "teddy", "teddy_vbmi",
						  "teddy_avx2" };
	struct rng r = { test_seed("stream-teddy-edges", 20261205) };
	unsigned long results = 0;

	(void)unused;
	for (unsigned int set = 0; set < 3; set++) {
		const u8 *pp[8];

		for (npats = 0; npats < 8 && set_lens[set][npats]; npats++) {
			lens[npats] = set_lens[set][npats];
			for (unsigned int i = 0; i < lens[npats]; i++)
				pats[npats][i] =
					(u8) "abcdef"[rng_below(&r, 6)];
			pp[npats] = pats[npats];
		}
		for (unsigned int a = 0; a < 3; a++)
			for (int overlap = 0; overlap < 2; overlap++) {
				struct ts_config *conf = textsearch_prepare_set(
					edge_algos[a], (const void *const *)pp,
					lens, npats, GFP_KERNEL,
					overlap ? TS_OVERLAP : 0);

				assert_false(IS_ERR(conf));
				for (unsigned int w = 0;
				     w < sizeof(sizes) / sizeof(sizes[0]);
				     w++) {
					const unsigned int ws = sizes[w],
							   at = (ws > 1024 ?
									 3 :
									 5) *
								ws,
							   n = at + 40;

					for (unsigned int j = 0; j < 2; j++) {
						for (unsigned int e = at - 70;
						     e <= at + 20; e++) {
							if (e < lens[j])
								continue;
							for (unsigned int i = 0;
							     i < n; i++)
								data[i] = (u8) "ghijklmnop"
									[i % 10];
							memcpy(data + e -
								       lens[j],
							       pats[j],
							       lens[j]);
							results +=
								stream_in_writes(
									conf,
									pp, n,
									ws,
									overlap);
						}
					}
				}
				textsearch_destroy(conf);
			}
	}
	printf("# stream teddy edges: %lu results\n", results);
	assert_true(results > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_write_edges),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
