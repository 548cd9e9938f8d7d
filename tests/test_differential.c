/*
 * test_differential.c - every literal algorithm against the naive reference
 * on random cases: small alphabets, periodic patterns, patterns longer than
 * the data, TS_IGNORECASE with ASCII and ISO-8859-1 letters, random block
 * splits down to one byte, and whole find/next sequences, a quarter of
 * them with TS_OVERLAP (every occurrence, one byte after the last).
 *
 * rarebyte runs at each of its dispatch levels (each name pins one; the
 * machine must have it for the level to be really exercised, see
 * test_simd), and through "auto".
 *
 * TS_TEST_CASES sets the number of cases per algorithm (default 160000,
 * 1.28 million in all); TS_TEST_SEED repeats a run.
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

/* Every literal algorithm, built in or plugin. */
static const char *const literal_algos[] = {
	"kmp",
	"bm",
	"shiftor",
	"rarebyte_scalar",
	"rarebyte_sse2",
	"rarebyte_avx2",
	"rarebyte_avx512",
	"auto",
	"ac", /* set algorithms, given one pattern */
	"teddy",
	"teddy_scalar",
};
#define N_ALGOS (sizeof(literal_algos) / sizeof(literal_algos[0]))

static unsigned long cases_per_algo(void)
{
	const char *env = getenv("TS_TEST_CASES");

	return env ? strtoul(env, NULL, 0) : 160000ul;
}

/* Bytes to draw from: tiny alphabets make matches and near-misses common;
 * letters in both cases (ASCII and ISO-8859-1) exercise TS_IGNORECASE. */
static const u8 alphabets[][12] = {
	{ 'a' },
	{ 'a', 'b' },
	{ 'a', 'b', 'c' },
	{ 'a', 'A', 'b', 'B' },
	{ 0xC0, 0xE0, 0xD7, 0xF7, 0xDF, 0xFF, 'x' },
	{ 0xC9, 0xE9, 'e', 'E', 0xDE, 0xFE, 0x00, 0x80 },
};
static const unsigned int alphabet_sizes[] = { 1, 2, 3, 4, 7, 8 };

static u8 random_byte(struct rng *r, int alpha)
{
	if (alpha < 0)
		return (u8)rng_below(r, 256);
	return alphabets[alpha][rng_below(r, alphabet_sizes[alpha])];
}

struct tcase {
	u8 pat[300];
	unsigned int plen;
	u8 data[400];
	unsigned int dlen;
	bool icase;
	bool overlap; /* TS_OVERLAP: every occurrence, one byte apart */
};

static void make_case(struct rng *r, struct tcase *c)
{
	int alpha = (int)rng_below(r, 7) - 1;
	unsigned int i, shape = rng_below(r, 10);

	c->icase = rng_below(r, 3) == 0;
	c->overlap = rng_below(r, 4) == 0;
	c->dlen = rng_below(r, 4) == 0 ? rng_below(r, 8) : rng_below(r, 300);
	if (shape < 5)
		c->plen = 1 + rng_below(r, 8);
	else if (shape < 8)
		c->plen = 1 + rng_below(r, 40);
	else
		c->plen = 1 + rng_below(r, 299); /* often longer than data */

	if (rng_below(r, 3) == 0) {
		/* periodic: a unit repeated, then maybe one different byte,
		 * like "aaab" and "abab" */
		unsigned int unit = 1 + rng_below(r, 3);

		for (i = 0; i < unit && i < c->plen; i++)
			c->pat[i] = random_byte(r, alpha);
		for (; i < c->plen; i++)
			c->pat[i] = c->pat[i - unit];
		if (rng_below(r, 2))
			c->pat[c->plen - 1] = random_byte(r, alpha);
	} else {
		for (i = 0; i < c->plen; i++)
			c->pat[i] = random_byte(r, alpha);
	}
	for (i = 0; i < c->dlen; i++)
		c->data[i] = random_byte(r, alpha);
	/* plant copies of the pattern, with their case flipped sometimes */
	while (c->plen <= c->dlen && rng_below(r, 2)) {
		unsigned int at = rng_below(r, c->dlen - c->plen + 1);

		for (i = 0; i < c->plen; i++) {
			u8 b = c->pat[i];

			if (c->icase && rng_below(r, 2))
				b = b != ref_fold(b) ? ref_fold(b) :
						       (u8)(b ^ 0x20);
			c->data[at + i] = ref_fold(b) == ref_fold(c->pat[i]) ?
						  b :
						  c->pat[i];
		}
	}
}

static void report(const char *algo, const struct tcase *c, const char *what,
		   unsigned int got, unsigned int want)
{
	unsigned int i;

	fprintf(stderr,
		"%s: %s: got %u, want %u; icase %d overlap %d\npattern (%u):",
		algo, what, got, want, c->icase, c->overlap, c->plen);
	for (i = 0; i < c->plen; i++)
		fprintf(stderr, " %02x", c->pat[i]);
	fprintf(stderr, "\ndata (%u):", c->dlen);
	for (i = 0; i < c->dlen; i++)
		fprintf(stderr, " %02x", c->data[i]);
	fprintf(stderr, "\n");
}

/* Run one case through one algorithm, contiguous and in blocks; return the
 * number of matches compared, or -1 after reporting a failure. */
static long run_case(const char *algo, struct rng *r, const struct tcase *c)
{
	struct ts_config *conf;
	struct ts_state st_lin, st_blk;
	struct blocks *b;
	unsigned int want, got_lin, got_blk, calls = 0;
	long compared = 0;
	int flags = TS_AUTOLOAD | (c->icase ? TS_IGNORECASE : 0) |
		    (c->overlap ? TS_OVERLAP : 0);

	conf = textsearch_prepare(algo, c->pat, c->plen, GFP_KERNEL, flags);
	if (IS_ERR(conf)) {
		fprintf(stderr, "%s: prepare failed: %s (%s)\n", algo,
			textsearch_strerror((int)PTR_ERR(conf)),
			textsearch_last_error());
		return -1;
	}
	b = blocks_random(c->data, c->dlen, r, (int)rng_below(r, 3));
	want = ref_find(c->pat, c->plen, c->data, c->dlen, 0, c->icase);
	got_lin = textsearch_find_continuous(conf, &st_lin, c->data, c->dlen);
	got_blk = blocks_find(conf, &st_blk, b);
	calls++;
	for (;;) {
		if (got_lin != want || got_blk != want) {
			report(algo, c,
			       got_lin != want ? "contiguous" : "blocks",
			       got_lin != want ? got_lin : got_blk, want);
			compared = -1;
			break;
		}
		compared++;
		if (want == UINT_MAX)
			break;
		if (textsearch_match_id(&st_lin) != 0 ||
		    textsearch_match_len(conf, &st_blk) != c->plen) {
			report(algo, c, "match id or length",
			       textsearch_match_len(conf, &st_blk), c->plen);
			compared = -1;
			break;
		}
		want = ref_find(c->pat, c->plen, c->data, c->dlen,
				want + (c->overlap ? 1 : c->plen), c->icase);
		got_lin = textsearch_next(conf, &st_lin);
		got_blk = textsearch_next(conf, &st_blk);
		calls++;
	}
	if (compared >= 0 && textsearch_next(conf, &st_blk) != UINT_MAX) {
		report(algo, c, "next after the end", 0, UINT_MAX);
		compared = -1;
	}
	calls++;
	if (compared >= 0 && (!blocks_ok(b) || blocks_finishes(b) != calls)) {
		report(algo, c, "provider contract (backwards or finish count)",
		       blocks_finishes(b), calls);
		compared = -1;
	}
	blocks_free(b);
	textsearch_destroy(conf);
	return compared;
}

static void differential(void **unused)
{
	unsigned long n = cases_per_algo(), i, total = 0;
	struct rng r = { test_seed("differential", 20261203) };
	size_t a;

	(void)unused;
	for (a = 0; a < N_ALGOS; a++) {
		unsigned long matches = 0;

		for (i = 0; i < n; i++) {
			struct tcase c;
			long m;

			make_case(&r, &c);
			m = run_case(literal_algos[a], &r, &c);
			assert_true(m >= 0);
			matches += (unsigned long)m;
		}
		printf("# differential: %s: %lu cases, %lu results compared, "
		       "0 failures\n",
		       literal_algos[a], n, matches);
		total += n;
	}
	printf("# differential: %lu cases in all\n", total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(differential),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
