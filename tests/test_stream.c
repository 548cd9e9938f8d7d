/*
 * test_stream.c - push-mode streams (textsearch_stream.h, spec §2) for
 * every algorithm but fsm (tests/test_fsm.c streams fsm).
 *
 * - differential: random patterns and sets from small alphabets (so that
 *   matches overlap, nest and repeat; duplicates and prefixes of each
 *   other), random data written in random cuts (0- and 1-byte writes, cuts
 *   inside matches, big writes), against the pull search of the same
 *   config over the concatenation: same matches, order, lengths and ids.
 *   Each write is a copy that is scribbled over and freed once next() has
 *   said 0, so a library that read data it may drop finds other matches
 *   (and AddressSanitizer catches the read).
 * - as soon as decided: after each write, the matches yielded so far are
 *   exactly those of the data so far that no continuation can change,
 *   found by brute force over every continuation.
 * - the interface: -EBUSY, -EINVAL, refused writes, end, reset, size,
 *   open's errors, many streams on one config.
 * - 64-bit offsets: 5 GiB of zero pages in one write and in a few, and a
 *   match across offset 2^32.
 * - threads: one config, a stream per thread (run under TSan too).
 *
 * TS_TEST_STREAM_CASES scales the random parts (default 100, the percent
 * of the full run); TS_TEST_SEED repeats a run.
 */
#define _GNU_SOURCE /* MAP_NORESERVE */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "testsupport.h"
#include "textsearch.h"
#include "textsearch_stream.h"

/* ---- the algorithms ---- */

struct algo {
	const char *name;
	bool set;      /* takes sets (else one pattern only) */
	int max_count; /* patterns it takes, 0 for any number */
	bool autoload; /* a plugin */
};

static const struct algo algos[] = {
	{ "kmp", false, 1, false },
	{ "bm", false, 1, false },
	{ "rarebyte", false, 1, false },
	{ "rarebyte_avx512", false, 1, false },
	{ "rarebyte_avx2", false, 1, false },
	{ "rarebyte_sse2", false, 1, false },
	{ "rarebyte_scalar", false, 1, false },
	/* no stream ops: the core's generic engine without keep */
	{ "shiftor", false, 1, true },
	{ "auto", true, 0, false },
	{ "ac", true, 0, false },
	{ "teddy", true, 128, false },
	{ "teddy_avx512", true, 128, false },
	{ "teddy_avx2", true, 128, false },
	{ "teddy_ssse3", true, 128, false },
	{ "teddy_scalar", true, 128, false },
};
#define N_ALGOS (sizeof(algos) / sizeof(algos[0]))

/* ---- patterns ---- */

struct pset {
	unsigned int count;
	const u8 *pat[5000];
	unsigned int len[5000];
	u8 bytes[5000 * 40];
	bool icase;
};

static const u8 alphabets[][8] = {
	{ 'a' },
	{ 'a', 'b' },
	{ 'a', 'b', 'c' },
	{ 'a', 'A', 'b', 'B' },
	{ 0xC0, 0xE0, 0xD7, 'x' },
	{ 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' },
};
static const unsigned int alphabet_sizes[] = { 1, 2, 3, 4, 4, 8 };
#define N_ALPHA (sizeof(alphabet_sizes) / sizeof(alphabet_sizes[0]))

static u8 flip_case(u8 b)
{
	if (ref_fold(b) != b)
		return ref_fold(b);
	return ref_fold((u8)(b ^ 0x20)) == b ? (u8)(b ^ 0x20) : b;
}

static u8 letter(struct rng *r, int alpha)
{
	return alphabets[alpha][rng_below(r, alphabet_sizes[alpha])];
}

/*
 * @count patterns of 1 to @maxlen letters of @alpha: fresh ones,
 * duplicates (case flipped sometimes), prefixes and extensions of earlier
 * ones.
 */
static void random_set(struct rng *r, struct pset *s, unsigned int count,
		       unsigned int maxlen, int alpha)
{
	unsigned int i, j, used = 0;

	s->count = count;
	for (i = 0; i < count; i++) {
		unsigned int how = i ? rng_below(r, 6) : 0;
		unsigned int from = i ? rng_below(r, i) : 0;
		u8 *p = s->bytes + used;

		s->len[i] = 1 + rng_below(r, maxlen);
		if (how == 1) { /* duplicate */
			s->len[i] = s->len[from];
		} else if (how == 2) { /* a prefix of another */
			s->len[i] = 1 + rng_below(r, s->len[from]);
		} else if (how == 3 && s->len[from] < maxlen) { /* extension */
			s->len[i] = s->len[from] + 1 +
				    rng_below(r, maxlen - s->len[from]);
		} else {
			how = 0;
		}
		for (j = 0; j < s->len[i]; j++) {
			u8 b = how && j < s->len[from] ? s->pat[from][j] :
							 letter(r, alpha);

			p[j] = s->icase && rng_below(r, 4) == 0 ? flip_case(b) :
								  b;
		}
		s->pat[i] = p;
		used += s->len[i];
	}
}

static inline unsigned int longest(const struct pset *s)
{
	unsigned int i, l = 0;

	for (i = 0; i < s->count; i++)
		if (s->len[i] > l)
			l = s->len[i];
	return l;
}

static unsigned int random_data(struct rng *r, const struct pset *s, int alpha,
				u8 *data, unsigned int dlen)
{
	unsigned int i, j, plants = rng_below(r, dlen / 4 + 2);

	for (i = 0; i < dlen; i++)
		data[i] = letter(r, alpha);
	while (plants--) {
		unsigned int id = rng_below(r, s->count), at;

		if (s->len[id] > dlen)
			continue;
		at = rng_below(r, dlen - s->len[id] + 1);
		for (j = 0; j < s->len[id]; j++)
			data[at + j] = s->icase && rng_below(r, 2) ?
					       flip_case(s->pat[id][j]) :
					       s->pat[id][j];
	}
	return dlen;
}

/* The config of @a for @s (a single algorithm gets pattern 0). */
static struct ts_config *prepare(const struct algo *a, const struct pset *s,
				 int flags)
{
	struct ts_config *conf;

	if (a->autoload)
		flags |= TS_AUTOLOAD;
	if (a->set)
		conf = textsearch_prepare_set(a->name,
					      (const void *const *)s->pat,
					      s->len, s->count, GFP_KERNEL,
					      flags);
	else
		conf = textsearch_prepare(a->name, s->pat[0], s->len[0],
					  GFP_KERNEL, flags);
	if (IS_ERR(conf))
		fail_msg("prepare %s (%u patterns, flags 0x%x): %s", a->name,
			 s->count, (unsigned int)flags,
			 textsearch_last_error());
	return conf;
}

/* ---- the pull search ---- */

/* Every match of a find/next search of @data, in order; their number. */
static unsigned int pull(struct ts_config *conf, const u8 *data,
			 unsigned int dlen, struct ts_match *out,
			 unsigned int cap)
{
	struct ts_state st;
	unsigned int pos, n = 0;

	for (pos = textsearch_find_continuous(conf, &st, data, dlen);
	     pos != UINT_MAX; pos = textsearch_next(conf, &st)) {
		if (n == cap)
			fail_msg("more than %u matches", cap);
		out[n].start = pos;
		out[n].end = pos + textsearch_match_len(conf, &st);
		out[n].id = textsearch_match_id(&st);
		n++;
	}
	return n;
}

static bool same_match(const struct ts_match *a, const struct ts_match *b)
{
	return a->start == b->start && a->end == b->end && a->id == b->id;
}

/* ---- streaming ---- */

static void dump_case(const char *algo, const struct pset *s, int flags,
		      const u8 *data, unsigned int dlen,
		      const unsigned int *sizes, unsigned int nsizes)
{
	unsigned int i, j;

	fprintf(stderr, "%s, flags 0x%x, %u patterns:\n", algo,
		(unsigned int)flags, s->count);
	for (i = 0; i < s->count && i < 20; i++) {
		fprintf(stderr, "  pattern %u:", i);
		for (j = 0; j < s->len[i]; j++)
			fprintf(stderr, " %02x", s->pat[i][j]);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "  data (%u):", dlen);
	for (i = 0; i < dlen && i < 400; i++)
		fprintf(stderr, " %02x", data[i]);
	fprintf(stderr, "\n  writes:");
	for (i = 0; i < nsizes && i < 200; i++)
		fprintf(stderr, " %u", sizes[i]);
	fprintf(stderr, "\n");
}

/*
 * Write sizes for @dlen bytes (their number): mode 0 one write, 1 bytes
 * one by one with 0-byte writes between, 2 random sizes from 0 to big,
 * 3 cuts inside the matches of @want.
 */
static unsigned int random_sizes(struct rng *r, int mode, unsigned int dlen,
				 const struct ts_match *want,
				 unsigned int nwant, unsigned int *sizes,
				 unsigned int cap)
{
	unsigned int n = 0, at = 0, k = 0, size;

	while (at < dlen && n + 2 < cap) {
		switch (mode) {
		case 0:
			size = dlen;
			break;
		case 1:
			if (rng_below(r, 8) == 0)
				sizes[n++] = 0;
			size = 1;
			break;
		case 2: {
			unsigned int kind = rng_below(r, 10);

			size = kind < 2 ? 0 :
			       kind < 4 ? 1 :
			       kind < 8 ? 1 + rng_below(r, 16) :
					  rng_below(r, dlen - at + 1);
			break;
		}
		default: {
			uint64_t to;

			/* the next match past at, cut after 1 to len-1 of
			 * its bytes */
			while (k < nwant && want[k].start + 1 < at + 1)
				k++;
			if (k == nwant || want[k].end - want[k].start < 2) {
				size = k == nwant ?
					       dlen - at :
					       (unsigned int)(want[k].end - at);
				k++;
				break;
			}
			to = want[k].start + 1 +
			     rng_below(r, (unsigned int)(want[k].end -
							 want[k].start - 1));
			size = (unsigned int)(to - at);
			k++;
			break;
		}
		}
		if (size > dlen - at)
			size = dlen - at;
		sizes[n++] = size;
		at += size;
	}
	if (at < dlen)
		sizes[n++] = dlen - at;
	if (rng_below(r, 4) == 0)
		sizes[n++] = 0; /* a last empty write */
	return n;
}

/*
 * Stream @data through a new stream of @conf in writes of @sizes, each a
 * copy scribbled over with @junk once next() said 0, and compare every
 * match with @want; the number of results compared.
 */
static unsigned long
stream_compare(const char *algo, struct ts_config *conf, const struct pset *s,
	       const u8 *data, unsigned int dlen, const unsigned int *sizes,
	       unsigned int nsizes, const struct ts_match *want,
	       unsigned int nwant, u8 junk)
{
	struct ts_stream *st = textsearch_stream_open(conf, GFP_KERNEL);
	unsigned int i, k = 0, at = 0;
	struct ts_match m;
	int ret;

	assert_false(IS_ERR_OR_NULL(st));
	for (i = 0; i <= nsizes; i++) {
		u8 *copy = NULL;

		if (i < nsizes) {
			/* a 0-byte write may pass NULL */
			if (sizes[i] || (i & 1)) {
				copy = malloc(sizes[i] ? sizes[i] : 1);
				assert_non_null(copy);
				memcpy(copy, data + at, sizes[i]);
			}
			ret = textsearch_stream_write(st, copy, sizes[i]);
			at += sizes[i];
			assert_int_equal(textsearch_stream_offset(st), at);
		} else {
			ret = textsearch_stream_end(st);
		}
		assert_int_equal(ret, 0);
		while ((ret = textsearch_stream_next(st, &m)) == 1) {
			if (k >= nwant || !same_match(&m, &want[k])) {
				dump_case(algo, s, conf->flags, data, dlen,
					  sizes, nsizes);
				fail_msg("%s: stream match %u is [%llu, %llu) "
					 "id %u, pull says %s[%llu, %llu) id "
					 "%u",
					 algo, k, (unsigned long long)m.start,
					 (unsigned long long)m.end, m.id,
					 k < nwant ? "" : "none ",
					 k < nwant ? (unsigned long long)want[k]
							     .start :
						     0ull,
					 k < nwant ? (unsigned long long)want[k]
							     .end :
						     0ull,
					 k < nwant ? want[k].id : 0);
			}
			k++;
		}
		assert_int_equal(ret, 0);
		if (copy) {
			memset(copy, junk, sizes[i]);
			free(copy);
		}
	}
	if (k != nwant) {
		dump_case(algo, s, conf->flags, data, dlen, sizes, nsizes);
		fail_msg("%s: the stream gave %u matches, pull %u", algo, k,
			 nwant);
	}
	/* 0 for ever after the end */
	assert_int_equal(textsearch_stream_next(st, &m), 0);
	assert_int_equal(textsearch_stream_next(st, &m), 0);
	textsearch_stream_free(st);
	return nwant + 1;
}

static unsigned long scale(void)
{
	const char *env = getenv("TS_TEST_STREAM_CASES");

	return env ? strtoul(env, NULL, 0) : 100ul;
}

/* Sanitizers make the library many times slower: smaller runs. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED true
#endif
#endif
#ifndef SANITIZED
#define SANITIZED false
#endif

/* ---- 1. differential ---- */

static struct pset ps;
static u8 ddata[4096];
static struct ts_match dwant[4096 * 64];
static unsigned int dsizes[2 * 4096 + 8];

/* Every algorithm that takes @s, each flag combination, a few cuttings. */
static unsigned long differential_case(struct rng *r, int alpha,
				       unsigned int dlen, unsigned int cuttings)
{
	unsigned long compared = 0;
	unsigned int a, f, c;

	for (a = 0; a < N_ALGOS; a++) {
		const struct algo *al = &algos[a];

		if (ps.count > 1 && !al->set)
			continue;
		if (al->max_count && ps.count > (unsigned int)al->max_count)
			continue;
		for (f = 0; f < 4; f++) {
			int flags = (f & 1 ? TS_OVERLAP : 0) |
				    (f & 2 ? TS_IGNORECASE : 0);
			struct ts_config *conf;
			unsigned int nwant;

			if (!!(f & 2) != ps.icase)
				continue;
			conf = prepare(al, &ps, flags);
			nwant = pull(conf, ddata, dlen, dwant,
				     sizeof(dwant) / sizeof(dwant[0]));
			for (c = 0; c < cuttings; c++) {
				int mode = c < 4 ? (int)c :
						   (int)rng_below(r, 4);
				unsigned int n = random_sizes(
					r, mode, dlen, dwant, nwant, dsizes,
					sizeof(dsizes) / sizeof(dsizes[0]));

				compared += stream_compare(al->name, conf, &ps,
							   ddata, dlen, dsizes,
							   n, dwant, nwant,
							   letter(r, alpha));
			}
			textsearch_destroy(conf);
		}
	}
	return compared;
}

static void differential(void **unused)
{
	struct rng r = { test_seed("stream differential", 20261204) };
	unsigned long cases = 400 * scale() / 100, i, compared = 0;
	unsigned long patterns = 0;
	struct timespec t0, t1;

	(void)unused;
	if (SANITIZED)
		cases /= 8;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < cases; i++) {
		unsigned int size = rng_below(&r, 100), count, dlen;
		int alpha = (int)rng_below(&r, N_ALPHA);
		unsigned int maxlen = rng_below(&r, 4) ? 6 : 40;

		if (size < 40)
			count = 1;
		else if (size < 85)
			count = 1 + rng_below(&r, 12);
		else if (size < 97)
			count = 1 + rng_below(&r, 200);
		else
			count = 1 + rng_below(&r, 5000);
		/* many patterns of one letter would match thousands of
		 * times per byte */
		if (count > 50 && alpha < 2)
			alpha = 2 + (int)rng_below(&r, N_ALPHA - 2);
		ps.icase = rng_below(&r, 3) == 0;
		random_set(&r, &ps, count, maxlen, alpha);
		patterns += count;
		dlen = rng_below(&r, 8) ? rng_below(&r, 600) :
					  rng_below(&r, 4096);
		if (count > 200 && dlen > 300)
			dlen = 300;
		else if (count > 12 && dlen > 600)
			dlen = 600;
		random_data(&r, &ps, alpha, ddata, dlen);
		compared +=
			differential_case(&r, alpha, dlen, count > 200 ? 2 : 5);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# stream differential: %lu cases (%lu patterns), %lu results "
	       "compared in %.2f s, 0 failures\n",
	       cases, patterns, compared,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_true(cases < 400 || compared >= 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(differential),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
