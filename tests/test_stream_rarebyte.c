/*
 * test_stream_rarebyte.c - the native stream engine of "rarebyte"
 * (src/algo/literal_stream.c), against the naive reference over the
 * concatenation of the writes:
 *   - patterns of 1 to 70 bytes (over 64 the generic engine takes over),
 *     periodic ones on periodic data (the verify budget's fall-back to the
 *     shift-and automaton), TS_IGNORECASE with ISO-8859-1 letters,
 *     TS_OVERLAP, bytes 0 among the data, writes of 0 to 30,000 bytes cut
 *     anywhere, streams reset and searched again;
 *   - every write ends where a PROT_NONE page begins, so a vector load
 *     past the write faults, masked or not;
 *   - each match is yielded by the next() calls right after the write
 *     that completed it;
 *   - short writes over letters with the pattern across their ends;
 *   - one write of each length up to 300 bytes with the pattern at each
 *     of its starts;
 *   - data where the bytes the table ranks rarest are common, which
 *     moves a stream's long writes to another pair of filter bytes;
 *   - offsets past 4 GiB, over a stream of 4.1 GiB of writes;
 *   - both bulks of the scan (TEXTSEARCH_LITERAL_BULK), whatever the CPU.
 * Where the CPU lacks AVX-512 VBMI, the same checks run the generic
 * engine, which must give the same matches.
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

#define MAXDATA 30000u
#define GUARD_SPAN (8u * 4096u) /* the longest write */

static u8 *guard_end; /* one past the last readable byte */

static int setup(void **unused)
{
	(void)unused;
	guard_end = test_guard_end(GUARD_SPAN);
	return guard_end ? 0 : -1;
}

struct expect {
	uint64_t start;
};

/* The reference's matches of @pat in @data, in order. */
static size_t reference(const u8 *pat, unsigned int m, const u8 *data,
			unsigned int n, int flags, struct expect *out)
{
	size_t count = 0;
	unsigned int from = 0, pos;

	while ((pos = ref_find(pat, m, data, n, from, flags & TS_IGNORECASE)) !=
	       UINT_MAX) {
		out[count++].start = pos;
		from = pos + ((flags & TS_OVERLAP) ? 1 : m);
	}
	return count;
}

/* with NULs too: a masked load reads 0 past its mask, which a filter
 * byte may be */
static const struct {
	const char *s;
	unsigned int len;
} alphabets[] = {
	{ "ab", 2 },
	{ "abc", 3 },
	{ "aB", 2 },
	{ "xyzXYZ\xe0\xc0\xd7\xf7", 10 },
	{ "abcdefghijklmnopqrstuvwxyz ", 27 },
	{ "\0a", 2 },
	{ "\0\0\0\x01\xff", 5 },
};
#define NALPHABETS (sizeof(alphabets) / sizeof(alphabets[0]))

/* Cuts of the writes: @mode 0 to 3 as test_differential() draws them;
 * 4 mostly past LIT_FAST_MAX (768), the writes that lit_next_long()
 * takes and lit_repick() learns from; 5 mostly of 10 to 64 bytes, which
 * lit_next() takes in one vector where no match begun earlier runs into
 * them. */
static unsigned int draw_cut(struct rng *r, unsigned int mode)
{
	switch (mode) {
	case 0:
		return rng_below(r, 3);
	case 1:
		return rng_below(r, 100);
	case 2:
		return rng_below(r, 2000);
	case 3:
		return rng_below(r, 2) ? rng_below(r, 20) :
					 rng_below(r, MAXDATA);
	case 4:
		return rng_below(r, 8) ? 769 + rng_below(r, 5000) :
					 rng_below(r, 100);
	default:
		return rng_below(r, 8) ? 10 + rng_below(r, 55) :
					 rng_below(r, 81);
	}
}

/* @data (@n bytes) written to @s in cuts by @mode, each write at the
 * guard page; every match against @ref (@nref of them, @m bytes each) as
 * soon as it is decided.  Returns the matches compared. */
static size_t check_pass(struct ts_stream *s, struct rng *r, unsigned int mode,
			 const u8 *data, unsigned int n,
			 const struct expect *ref, size_t nref, unsigned int m)
{
	unsigned int off = 0;
	size_t got = 0, due = 0;
	struct ts_match mt;

	while (off < n) {
		unsigned int cut = draw_cut(r, mode);
		u8 *w;

		if (cut > n - off)
			cut = n - off;
		if (cut > GUARD_SPAN)
			cut = GUARD_SPAN;
		w = guard_end - cut;
		memcpy(w, data + off, cut);
		assert_int_equal(textsearch_stream_write(s, w, cut), 0);
		off += cut;
		while (textsearch_stream_next(s, &mt) > 0) {
			assert_true(got < nref);
			assert_int_equal(mt.start, ref[got].start);
			assert_int_equal(mt.end, ref[got].start + m);
			assert_int_equal(mt.id, 0);
			got++;
		}
		/* decided as soon as written: every match that ends within
		 * what was written is out (for a literal, the search of that
		 * prefix finds just those) */
		while (due < nref && ref[due].start + m <= off)
			due++;
		assert_int_equal(got, due);
		memset(w, '#', cut);
	}
	assert_int_equal(textsearch_stream_end(s), 0);
	assert_int_equal(textsearch_stream_next(s, &mt), 0);
	assert_int_equal(got, nref);
	return got;
}

/* @data (@n bytes) searched for @pat (@m bytes, @flags) by a rarebyte
 * stream twice, the second time after a reset, in writes cut by @mode:
 * the results compared with the reference's. */
static size_t check_streams(struct rng *r, unsigned int mode, const u8 *pat,
			    unsigned int m, int flags, const u8 *data,
			    unsigned int n)
{
	static struct expect ref[MAXDATA + 1];
	const size_t nref = reference(pat, m, data, n, flags, ref);
	struct ts_config *conf;
	struct ts_stream *s;
	size_t compared = 0;

	conf = textsearch_prepare("rarebyte", pat, m, GFP_KERNEL, flags);
	assert_false(IS_ERR(conf));
	s = textsearch_stream_open(conf, GFP_KERNEL);
	assert_false(IS_ERR(s));
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			textsearch_stream_reset(s);
		compared += check_pass(s, r, mode, data, n, ref, nref, m);
	}
	textsearch_stream_free(s);
	textsearch_destroy(conf);
	return compared;
}

static void test_differential(void **unused)
{
	struct rng r = { test_seed("stream rarebyte", 2026) };
	static u8 data[MAXDATA];
	unsigned long compared = 0;

	(void)unused;
	for (int it = 0; it < 1500; it++) {
		int flags = (rng_below(&r, 2) ? TS_IGNORECASE : 0) |
			    (rng_below(&r, 2) ? TS_OVERLAP : 0);
		unsigned int ai = rng_below(&r, NALPHABETS);
		const char *alpha = alphabets[ai].s;
		unsigned int al = alphabets[ai].len;
		unsigned int n =
			1 + rng_below(&r, rng_below(&r, 4) ? 3000 : MAXDATA);
		unsigned int m = rng_below(&r, 3) ? 1 + rng_below(&r, 70) :
						    1 + rng_below(&r, 8);
		bool periodic = rng_below(&r, 3) == 0;
		unsigned int period = 1 + rng_below(&r, 4);
		u8 pat[80];

		for (unsigned int i = 0; i < m; i++)
			pat[i] = (u8)(periodic ? alpha[i % period % al] :
						 alpha[rng_below(&r, al)]);
		for (unsigned int i = 0; i < n; i++)
			data[i] = (u8)(periodic && rng_below(&r, 50) ?
					       alpha[i % period % al] :
					       alpha[rng_below(&r, al)]);
		for (int k = (int)rng_below(&r, 5); k > 0; k--) {
			unsigned int at = rng_below(&r, n);

			if (at + m <= n)
				memcpy(data + at, pat, m);
		}
		/* both bulks of the engine's scan, whatever the CPU */
		assert_int_equal(setenv("TEXTSEARCH_LITERAL_BULK",
					it & 1 ? "permute" : "split", 1),
				 0);
		compared += check_streams(&r, rng_below(&r, 4), pat, m, flags,
					  data, n);
	}
	printf("# stream rarebyte: %lu results compared\n", compared);
	assert_true(compared > 100000);
}

/*
 * Data where the bytes the table ranks rarest are the common ones: 'j',
 * 'q' and 'z' throughout, 'e' (ranked among the most common) in a few
 * places and in the pattern, which holds all four.  A stream's long
 * writes then move its scan to the pick whose first byte is 'e'
 * (lit_repick()), whose matches must be the same; a pattern without
 * 'e' has no pick that most blocks lack, and the scan then compares both
 * filter bytes everywhere (by byte permutes on AMD, which the tests take
 * on any CPU).  Patterns of 4 to 64 bytes, 'e' anywhere in them,
 * TS_IGNORECASE (with 'E' in the data) and TS_OVERLAP, writes mostly of
 * more than 768 bytes.
 */
static void test_repick(void **unused)
{
	struct rng r = { test_seed("stream rarebyte repick", 2026) };
	static u8 data[MAXDATA];
	static const char common[] = "jqz";
	unsigned long compared = 0;

	(void)unused;
	for (int it = 0; it < 600; it++) {
		int flags = (rng_below(&r, 2) ? TS_IGNORECASE : 0) |
			    (rng_below(&r, 2) ? TS_OVERLAP : 0);
		unsigned int n = 16000 + rng_below(&r, MAXDATA - 16000);
		unsigned int m = 4 + rng_below(&r, 61);
		unsigned int e = rng_below(&r, 4);
		u8 pat[64];

		for (unsigned int i = 0; i < m; i++)
			pat[i] = (u8)common[i % 3];
		for (unsigned int i = 0; i < e; i++)
			pat[rng_below(&r, m)] = 'e';
		for (unsigned int i = 0; i < n; i++)
			data[i] = (u8)(rng_below(&r, 2000) ?
					       common[rng_below(&r, 3)] :
					       "eE"[rng_below(&r, 2)]);
		for (int k = 5 + (int)rng_below(&r, 15); k > 0; k--) {
			unsigned int at = rng_below(&r, n - m);

			memcpy(data + at, pat, m);
		}
		/* both bulks of the dense scan, whatever the CPU */
		assert_int_equal(setenv("TEXTSEARCH_LITERAL_BULK",
					it & 1 ? "permute" : "split", 1),
				 0);
		compared += check_streams(&r, 4, pat, m, flags, data, n);
	}
	printf("# stream rarebyte repick: %lu results compared\n", compared);
	assert_true(compared > 10000);
}

/*
 * Short writes (draw_cut()'s mode 5) over letters, where few starts pass
 * the filter, with the pattern put across the writes' boundaries: a
 * write in which no match begins leaves the state of its last bytes,
 * which must carry each of those matches into the next write.  Patterns
 * of 2 to 64 bytes, TS_IGNORECASE (the data in both cases) and
 * TS_OVERLAP.
 */
static void test_across_short_writes(void **unused)
{
	struct rng r = { test_seed("stream rarebyte short writes", 2026) };
	static u8 data[MAXDATA];
	unsigned long compared = 0, across = 0;

	(void)unused;
	assert_int_equal(setenv("TEXTSEARCH_LITERAL_BULK", "split", 1), 0);
	for (int it = 0; it < 1500; it++) {
		int flags = (rng_below(&r, 2) ? TS_IGNORECASE : 0) |
			    (rng_below(&r, 2) ? TS_OVERLAP : 0);
		unsigned int n = 2000 + rng_below(&r, 4000);
		unsigned int m = 2 + rng_below(&r, 63), off = 0;
		u8 pat[64], upper = flags & TS_IGNORECASE ? 0x20 : 0;
		struct rng cuts;

		for (unsigned int i = 0; i < m; i++)
			pat[i] = (u8)('a' + rng_below(&r, 26));
		for (unsigned int i = 0; i < n; i++)
			data[i] = (u8)('a' + rng_below(&r, 26)) &
				  (u8) ~(rng_below(&r, 2) ? upper : 0);
		/* the first pass's cuts, as check_pass() will draw them */
		cuts = r;
		while (off < n) {
			unsigned int cut = draw_cut(&cuts, 5), k;

			off += cut < n - off ? cut : n - off;
			k = 1 + rng_below(&cuts, m - 1);
			if (off < n && off >= k && off - k + m <= n &&
			    rng_below(&cuts, 2)) {
				for (unsigned int i = 0; i < m; i++)
					data[off - k + i] =
						pat[i] &
						(u8) ~(rng_below(&cuts, 2) ?
							       upper :
							       0);
				across++;
			}
		}
		compared += check_streams(&r, 5, pat, m, flags, data, n);
	}
	printf("# stream rarebyte short writes: %lu results compared, "
	       "%lu patterns put across a write's end\n",
	       compared, across);
	assert_true(across > 50000);
}

/*
 * One write on a fresh stream, of every length from m to 300 bytes, with
 * the pattern at each of its starts and bytes the pattern lacks around
 * it: the match found at once, at its start.  The writes of up to 64
 * bytes take one vector, those up to LIT_FAST_MAX (256) the filter's
 * loop over 128 starts at a time, the rest the scan; a match at the last
 * start of a block or of the write is each path's edge, which random
 * cuts reach too seldom.  Patterns of 2 to 64 bytes, TS_IGNORECASE.
 */
static void test_a_match_at_every_start(void **unused)
{
	static const unsigned int lens[] = { 2, 3, 5, 8, 9, 16, 17, 33, 64 };
	struct rng r = { test_seed("stream rarebyte every start", 2026) };
	unsigned long streams = 0;

	(void)unused;
	for (unsigned int li = 0; li < 2 * sizeof(lens) / sizeof(lens[0]);
	     li++) {
		const unsigned int m = lens[li / 2];
		const int flags = li & 1 ? TS_IGNORECASE : 0;
		u8 pat[64], data[300];
		struct ts_config *conf;
		struct ts_stream *s;
		struct ts_match mt;

		/* the pattern from a-m, the rest of the data from n-z */
		for (unsigned int i = 0; i < m; i++)
			pat[i] = (u8)('a' + rng_below(&r, 13));
		conf = textsearch_prepare("rarebyte", pat, m, GFP_KERNEL,
					  flags);
		assert_false(IS_ERR(conf));
		s = textsearch_stream_open(conf, GFP_KERNEL);
		assert_false(IS_ERR(s));
		for (unsigned int n = m; n <= sizeof(data); n++) {
			for (unsigned int q = 0; q + m <= n; q++) {
				u8 *w = guard_end - n;

				for (unsigned int i = 0; i < n; i++)
					data[i] = (u8)('n' + rng_below(&r, 13));
				for (unsigned int i = 0; i < m; i++)
					data[q + i] =
						flags && rng_below(&r, 2) ?
							(u8)(pat[i] - 0x20) :
							pat[i];
				memcpy(w, data, n);
				textsearch_stream_reset(s);
				assert_int_equal(
					textsearch_stream_write(s, w, n), 0);
				assert_int_equal(textsearch_stream_next(s, &mt),
						 1);
				assert_int_equal(mt.start, q);
				assert_int_equal(mt.end, q + m);
				assert_int_equal(textsearch_stream_next(s, &mt),
						 0);
				assert_int_equal(textsearch_stream_end(s), 0);
				assert_int_equal(textsearch_stream_next(s, &mt),
						 0);
				streams++;
			}
		}
		textsearch_stream_free(s);
		textsearch_destroy(conf);
	}
	printf("# stream rarebyte, a match at every start: %lu streams\n",
	       streams);
	assert_true(streams > 500000);
}

/* 4.1 GiB of writes of one 1 MiB buffer holding the pattern at its end
 * and across its wrap: every offset exact past 4 GiB. */
static void test_offsets_past_4g(void **unused)
{
	static const char pat[] = "needle-in-haystack";
	const unsigned int m = sizeof(pat) - 1, split = 7;
	const size_t len = 1u << 20;
	u8 *buf = malloc(len);
	struct ts_config *conf;
	struct ts_stream *s;
	struct ts_match mt;
	uint64_t writes = (UINT64_C(4100) << 20) / len, off = 0, found = 0;

	(void)unused;
	assert_non_null(buf);
	memset(buf, 'h', len);
	memcpy(buf + len / 2, pat, m);
	/* the buffer's end and its start make a match across each write */
	memcpy(buf + len - split, pat, split);
	memcpy(buf, pat + split, m - split);
	conf = textsearch_prepare("rarebyte", pat, m, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	s = textsearch_stream_open(conf, GFP_KERNEL);
	assert_false(IS_ERR(s));
	for (uint64_t i = 0; i < writes; i++) {
		/* the match across the boundary (none before the first
		 * write), then the one in the middle */
		uint64_t want[2] = { off - split, off + len / 2 };
		unsigned int k = i ? 0 : 1;

		assert_int_equal(textsearch_stream_write(s, buf, len), 0);
		while (textsearch_stream_next(s, &mt) > 0) {
			assert_true(k < 2);
			assert_int_equal(mt.start, want[k]);
			assert_int_equal(mt.end, want[k] + m);
			k++;
			found++;
		}
		assert_int_equal(k, 2);
		off += len;
	}
	assert_int_equal(textsearch_stream_end(s), 0);
	assert_int_equal(textsearch_stream_next(s, &mt), 0);
	/* one in each write, one across each boundary */
	assert_int_equal(found, 2 * writes - 1);
	assert_true(off > (UINT64_C(1) << 32));
	textsearch_stream_free(s);
	textsearch_destroy(conf);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_repick),
		cmocka_unit_test(test_across_short_writes),
		cmocka_unit_test(test_a_match_at_every_start),
		cmocka_unit_test(test_offsets_past_4g),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
