/*
 * test_simd.c - the SIMD literal search, rarebyte, at each dispatch level
 * (rarebyte_avx512, _avx2, _sse2, _scalar), and "auto"; and the SIMD set
 * search, teddy, at each level against its scalar twin (teddy_scalar) and
 * the reference, through blocks of every size:
 *   - which bytes the filter picks (the rarest, not the common prefix);
 *   - one-, two- and three-byte patterns, patterns longer than a vector and
 *     than 256 bytes;
 *   - a match planted at every offset of data of 0 to 200 bytes, at every
 *     alignment, the data in an allocation of exactly its size, so any
 *     read past it is caught by AddressSanitizer; and across block ends of
 *     many sizes;
 *   - TS_IGNORECASE with every pair of bytes, ISO-8859-1 corners included,
 *     in the filter and in the (vectorised) verification;
 *   - what "auto" resolves to, and that the name is reserved;
 *   - blocks of every size from 1 to 130 bytes, with matches straddling
 *     many of them, TS_IGNORECASE and TS_OVERLAP, and the linear
 *     fall-back taken from the short-block loop;
 *   - stream offsets near UINT_MAX.
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

/* the filter's choice is a header of its own, so it is checked directly */
#include "../src/algo/rarebyte_choose.h"
#include "../src/algo/teddy_group.h"

/* Each level pinned, then the dispatched name and "auto" (the heavier
 * tests run only the first N_PINNED). */
static const char *const levels[] = {
	"rarebyte_avx512", "rarebyte_avx2", "rarebyte_sse2",
	"rarebyte_scalar", "rarebyte",	    "auto",
};
#define N_LEVELS (sizeof(levels) / sizeof(levels[0]))
#define N_PINNED 4

static struct ts_config *prep(const char *algo, const void *pat,
			      unsigned int len, bool icase)
{
	struct ts_config *conf = textsearch_prepare(algo, pat, len, GFP_KERNEL,
						    icase ? TS_IGNORECASE : 0);

	if (IS_ERR(conf))
		fail_msg("%s: prepare failed: %s", algo,
			 textsearch_last_error());
	return conf;
}

/* Describe a failure well enough to reproduce it. */
static void dump(const char *algo, const char *what, const u8 *pat,
		 unsigned int plen, unsigned int dlen, bool icase,
		 unsigned int got, unsigned int want)
{
	unsigned int i;

	fprintf(stderr,
		"%s: %s: got %u, want %u (data %u bytes, icase %d)\n"
		"pattern (%u):",
		algo, what, got, want, dlen, icase, plen);
	for (i = 0; i < plen && i < 64; i++)
		fprintf(stderr, " %02x", pat[i]);
	fprintf(stderr, "\n");
}

/*
 * Every match of @pat in @data through find/next, contiguous (data as
 * given) and through @b if not NULL, against the reference; then UINT_MAX.
 * Returns the number of matches, or fails the test.
 */
static unsigned int check_seq(const char *algo, struct ts_config *conf,
			      const u8 *pat, unsigned int plen, const u8 *data,
			      unsigned int dlen, struct blocks *b, bool icase)
{
	struct ts_state st_lin, st_blk;
	unsigned int want, got_lin, got_blk, n = 0;

	want = ref_find(pat, plen, data, dlen, 0, icase);
	got_lin = textsearch_find_continuous(conf, &st_lin, data, dlen);
	got_blk = b ? blocks_find(conf, &st_blk, b) : want;
	for (;;) {
		if (got_lin != want || got_blk != want) {
			dump(algo, got_lin != want ? "contiguous" : "blocks",
			     pat, plen, dlen, icase,
			     got_lin != want ? got_lin : got_blk, want);
			fail();
		}
		if (want == UINT_MAX)
			break;
		n++;
		want = ref_find(pat, plen, data, dlen, want + plen, icase);
		got_lin = textsearch_next(conf, &st_lin);
		got_blk = b ? textsearch_next(conf, &st_blk) : want;
	}
	assert_int_equal(textsearch_next(conf, &st_lin), UINT_MAX);
	if (b) {
		assert_int_equal(textsearch_next(conf, &st_blk), UINT_MAX);
		assert_true(blocks_ok(b));
	}
	return n;
}

/* Blocks of @size bytes (the last one shorter). */
static struct blocks *even_blocks(const u8 *data, unsigned int len,
				  unsigned int size)
{
	unsigned int cuts[4096], n = 0, at;

	for (at = size; at < len && n < 4096; at += size)
		cuts[n++] = at;
	return blocks_new(data, len, cuts, n);
}

/* ---- the filter's choice ---------------------------------------------- */

static void choose(const char *pat, bool icase, unsigned int *i1,
		   unsigned int *i2)
{
	u8 folded[512];
	unsigned int i, m = (unsigned int)strlen(pat);

	for (i = 0; i < m; i++)
		folded[i] = icase ? ref_fold((u8)pat[i]) : (u8)pat[i];
	rb_choose_positions(folded, m, icase, i1, i2);
}

static void test_choice(void **unused)
{
	static const char *const common_prefix[] = {
		"pthread_mutex_lock", "pthread_mutex_unlock",
		"pthread_cond_wait",  "#include <stdio.h>",
		"return -EINVAL;",    "static const char",
	};
	struct rng r = { 77 };
	unsigned int i1, i2, i, j, k;

	(void)unused;
	/* "pthread_mutex_lock": 'k' and 'x', the two rarest in C source,
	 * not the 'p' every "pthread_" shares */
	choose("pthread_mutex_lock", false, &i1, &i2);
	assert_int_equal(i1, 17);
	assert_int_equal(i2, 12);
	for (i = 0; i < sizeof(common_prefix) / sizeof(common_prefix[0]); i++) {
		const char *p = common_prefix[i];
		unsigned int m = (unsigned int)strlen(p);

		choose(p, false, &i1, &i2);
		/* the rarest byte, and the rarest of another value */
		for (j = 0; j < m; j++) {
			assert_true(rb_rank[(u8)p[i1]] <= rb_rank[(u8)p[j]]);
			if (p[j] != p[i1])
				assert_true(rb_rank[(u8)p[i2]] <=
					    rb_rank[(u8)p[j]]);
		}
		assert_true(p[i1] != p[i2]);
		assert_true(rb_rank[(u8)p[i1]] < rb_rank['p']);
	}
	/* one byte: the same position twice; two: both; one value
	 * repeated: two different positions */
	choose("q", false, &i1, &i2);
	assert_int_equal(i1, 0);
	assert_int_equal(i2, 0);
	choose("e ", false, &i1, &i2);
	assert_int_equal(i1 + i2, 1);
	choose("zz", false, &i1, &i2);
	assert_int_equal(i1 + i2, 1);
	choose("aaaaaaa", false, &i1, &i2);
	assert_true(i1 != i2 && i1 < 7 && i2 < 7);
	/* TS_IGNORECASE: a letter costs as much as its commoner case; 'E'
	 * alone is rarer than 'e', but folded it stands for both */
	choose("eeEq", true, &i1, &i2);
	assert_int_equal(i1, 3);
	/* random patterns: always two distinct valid positions */
	for (k = 0; k < 20000; k++) {
		char p[300];
		unsigned int m = 1 + rng_below(&r, 299);

		for (j = 0; j < m; j++)
			p[j] = (char)(1 +
				      rng_below(&r, 1 + rng_below(&r, 255)));
		p[m] = 0;
		m = (unsigned int)strlen(p);
		choose(p, k & 1, &i1, &i2);
		assert_true(i1 < m && i2 < m);
		assert_true(m == 1 || i1 != i2);
		if (!(k & 1)) {
			/* the streams' other picks: the first is i1, each
			 * of a value none before has, rarest first */
			unsigned int first[4] = { 0 }, n;

			n = rb_choose_firsts((const u8 *)p, m, false, first, 4);
			assert_true(n >= 1 && n <= 4);
			assert_int_equal(first[0], i1);
			for (i = 1; i < n; i++) {
				assert_true(first[i] < m);
				assert_true(rb_rank[(u8)p[first[i - 1]]] <=
					    rb_rank[(u8)p[first[i]]]);
				for (j = 0; j < i; j++)
					assert_true(p[first[j]] != p[first[i]]);
			}
			/* fewer than 4 only where no other value is left */
			for (j = 0; n < 4 && j < m; j++) {
				for (i = 0; i < n; i++)
					if (p[first[i]] == p[j])
						break;
				assert_true(i < n);
			}
		}
		if (m >= 3) {
			unsigned int i3 = rb_choose_third((const u8 *)p, m,
							  false, i1, i2);

			assert_true(i3 < m && i3 != i1 && i3 != i2);
		}
	}
	/* the picks of "pthread_mutex_lock": 'k', 'x', then two other
	 * values; of "aaa" one */
	{
		unsigned int first[4] = { 0 };

		assert_int_equal(
			rb_choose_firsts((const u8 *)"pthread_mutex_lock", 18,
					 false, first, 4),
			4);
		assert_int_equal(first[0], 17);
		assert_int_equal(first[1], 12);
		for (i = 2; i < 4; i++)
			assert_true(first[i] != 17 && first[i] != 12);
		assert_int_equal(rb_choose_firsts((const u8 *)"aaa", 3, false,
						  first, 4),
				 1);
	}
	/* the third filter: for three bytes the one left; else the rarest
	 * other position, of a value the first two do not have if any */
	assert_int_equal(rb_choose_third((const u8 *)"abc", 3, false, 0, 2), 1);
	choose("pthread_mutex_lock", false, &i1, &i2);
	i = rb_choose_third((const u8 *)"pthread_mutex_lock", 18, false, i1,
			    i2);
	for (j = 0; j < 18; j++)
		if (j != i1 && j != i2 && j != i)
			assert_true(rb_rank[(u8) "pthread_mutex_lock"[i]] <=
				    rb_rank[(u8) "pthread_mutex_lock"[j]]);
	/* no third value: the rarest remaining byte ('k' ranks below 'x') */
	assert_true(rb_rank['k'] < rb_rank['x']);
	assert_int_equal(
		rb_choose_third((const u8 *)"xkxkxkxx", 8, false, 1, 0), 3);
}

/* ---- names, levels and "auto" ------------------------------------------ */

static struct ts_config *stub_init(const void *pattern, unsigned int len,
				   gfp_t gfp_mask, int flags)
{
	(void)pattern;
	(void)len;
	(void)flags;
	return alloc_ts_config(0, gfp_mask);
}

static unsigned int stub_find(struct ts_config *conf, struct ts_state *state)
{
	(void)conf;
	(void)state;
	return UINT_MAX;
}

static void *stub_pattern(struct ts_config *conf)
{
	(void)conf;
	return NULL;
}

static unsigned int stub_pattern_len(struct ts_config *conf)
{
	(void)conf;
	return 0;
}

static void test_names(void **unused)
{
	static struct ts_ops fake = {
		.name = "auto",
		.init = stub_init,
		.find = stub_find,
		.get_pattern = stub_pattern,
		.get_pattern_len = stub_pattern_len,
	};
	struct ts_config *conf;
	size_t i;

	(void)unused;
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	printf("# simd: this CPU: avx512bw %d, avx2 %d, sse2 %d (a pinned "
	       "level the CPU lacks runs the best one below it)\n",
	       __builtin_cpu_supports("avx512bw") != 0,
	       __builtin_cpu_supports("avx2") != 0,
	       __builtin_cpu_supports("sse2") != 0);
#endif
	for (i = 0; i < N_LEVELS; i++) {
		conf = prep(levels[i], "chicken", 7, false);
		/* "auto" is resolved before lookup: the config is rarebyte's */
		assert_string_equal(conf->ops->name,
				    strcmp(levels[i], "auto") == 0 ?
					    "rarebyte" :
					    levels[i]);
		textsearch_destroy(conf);
	}
	/* auto with TS_IGNORECASE, TS_AUTOLOAD and GFP_ATOMIC alike */
	conf = textsearch_prepare("auto", "x", 1, GFP_ATOMIC,
				  TS_IGNORECASE | TS_AUTOLOAD);
	assert_false(IS_ERR(conf));
	assert_string_equal(conf->ops->name, "rarebyte");
	textsearch_destroy(conf);
	/* a zero length is still -EINVAL first */
	conf = textsearch_prepare("auto", "x", 0, GFP_KERNEL, 0);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
	/* the others keep their names */
	conf = prep("kmp", "x", 1, false);
	assert_string_equal(conf->ops->name, "kmp");
	textsearch_destroy(conf);
	conf = prep("bm", "x", 1, false);
	assert_string_equal(conf->ops->name, "bm");
	textsearch_destroy(conf);
	/* nobody may take the name "auto" */
	assert_int_equal(textsearch_register(&fake), -EEXIST);
	assert_non_null(strstr(textsearch_last_error(), "reserved"));
	assert_int_equal(textsearch_unregister(&fake), -ENOENT);
	/* a rarebyte config pins its algorithm like any other */
	conf = prep("auto", "x", 1, false);
	assert_int_equal(textsearch_unregister(conf->ops), -EBUSY);
	textsearch_destroy(conf);
}

/* ---- short and long patterns ---------------------------------------------- */

/* Random data over @alpha with copies of @pat planted, then every level,
 * contiguous and in blocks of several sizes. */
static unsigned long run_planted(struct rng *r, const u8 *pat,
				 unsigned int plen, unsigned int dlen,
				 const u8 *alpha, unsigned int nalpha,
				 bool icase)
{
	static const unsigned int sizes[] = { 1,  2,  3,  15,  31,  32,	 33,
					      63, 64, 65, 100, 257, 1000 };
	u8 *data = malloc(dlen ? dlen : 1);
	unsigned long found = 0;
	unsigned int i, k;
	size_t l, s;

	assert_non_null(data);
	for (i = 0; i < dlen; i++)
		data[i] = alpha[rng_below(r, nalpha)];
	for (k = 0; plen <= dlen && k < 1 + dlen / (4 * plen + 8); k++) {
		unsigned int at = rng_below(r, dlen - plen + 1);

		for (i = 0; i < plen; i++) {
			u8 c = pat[i];

			if (icase && rng_below(r, 2) &&
			    ref_fold((u8)(c ^ 0x20)) == ref_fold(c))
				c ^= 0x20;
			data[at + i] = c;
		}
	}
	for (l = 0; l < N_PINNED; l++) {
		struct ts_config *conf = prep(levels[l], pat, plen, icase);

		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			struct blocks *b = even_blocks(data, dlen, sizes[s]);

			found += check_seq(levels[l], conf, pat, plen, data,
					   dlen, b, icase);
			blocks_free(b);
		}
		textsearch_destroy(conf);
	}
	free(data);
	return found;
}

static void test_lengths(void **unused)
{
	static const unsigned int lens[] = { 1,	  2,   3,   4,	 5,   7,   8,
					     15,  16,  17,  31,	 32,  33,  63,
					     64,  65,  66,  100, 127, 128, 129,
					     255, 256, 257, 300, 513, 1000 };
	static const u8 text[] = "pthread_mutex_lock(&m); x = y; // e ";
	static const u8 ab[] = { 'a', 'b' };
	static const u8 latin[] = { 'a',  'A',	0xC0, 0xE0, 0xD7,
				    0xF7, 0xDF, 0xFF, 0xDE, 0xFE };
	struct rng r = { 4242 };
	unsigned long found = 0;
	size_t i;
	int round;

	(void)unused;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (round = 0; round < 6; round++) {
			u8 pat[1000];
			const u8 *alpha = round < 2 ? ab :
					  round < 4 ? latin :
						      text;
			unsigned int nalpha = round < 2 ? 2 :
					      round < 4 ? sizeof(latin) :
							  sizeof(text) - 1;
			unsigned int j, plen = lens[i];

			for (j = 0; j < plen; j++)
				pat[j] = alpha[rng_below(&r, nalpha)];
			found += run_planted(&r, pat, plen,
					     rng_below(&r, 4 * plen + 300),
					     alpha, nalpha, round & 1);
		}
	}
	printf("# simd: pattern lengths 1 to 1000: %lu matches checked\n",
	       found);
	assert_true(found > 0);
}

/* ---- every offset, every alignment, exact-size data -------------------- */

/*
 * For data lengths 0 to 200, each start alignment 0 to 63 and patterns of
 * 1, 2, 3, 4, 17, 33 and 65 bytes: the pattern planted at one offset of a
 * filler that shares its bytes but never matches, the data at the end of
 * an allocation of exactly its size.  The offset walks over every start
 * near a 16/32/64-byte vector boundary and near the end.
 */
static void test_offsets(void **unused)
{
	static const unsigned int plens[] = { 1, 2, 3, 4, 17, 33, 65 };
	unsigned long searches = 0;
	size_t l, pi;

	(void)unused;
	for (pi = 0; pi < sizeof(plens) / sizeof(plens[0]); pi++) {
		const unsigned int plen = plens[pi];
		u8 pat[65];
		unsigned int i;

		/* "xyz...q": the filler is the pattern shifted, so partial
		 * matches are everywhere but whole ones only where planted */
		for (i = 0; i < plen; i++)
			pat[i] = (u8)('b' + i % 23);
		pat[plen - 1] = 'Z';
		for (l = 0; l < N_PINNED; l++) {
			struct ts_config *conf[2];
			unsigned int dlen, align, at;

			conf[0] = prep(levels[l], pat, plen, false);
			conf[1] = prep(levels[l], pat, plen, true);
			for (dlen = 0; dlen <= 200; dlen++) {
				for (align = 0; align < 64; align++) {
					void *mem;
					u8 *data;

					/* exactly align + dlen bytes: the
					 * data ends where the allocation does */
					if (posix_memalign(&mem, 64,
							   align + dlen ?
								   align + dlen :
								   1))
						fail();
					data = (u8 *)mem + align;
					for (i = 0; i < dlen; i++)
						data[i] = (u8)('b' +
							       (i + 1) % 23);
					/* plant at a few offsets for each
					 * alignment, all offsets over all */
					for (at = align % 16; at + plen <= dlen;
					     at += 16) {
						struct ts_state st;
						unsigned int got, c = at & 1;

						memcpy(data + at, pat, plen);
						if (c)
							data[at + plen - 1] =
								'z';
						got = textsearch_find_continuous(
							conf[c], &st, data,
							dlen);
						if (got != at) {
							dump(levels[l],
							     "offset", pat,
							     plen, dlen, c, got,
							     at);
							fail();
						}
						for (i = 0; i < plen; i++)
							data[at + i] =
								(u8)('b' +
								     (at + i +
								      1) % 23);
						searches++;
					}
					/* nothing planted: nothing found */
					{
						struct ts_state st;

						assert_int_equal(
							textsearch_find_continuous(
								conf[align & 1],
								&st, data,
								dlen),
							UINT_MAX);
					}
					free(mem);
				}
			}
			textsearch_destroy(conf[0]);
			textsearch_destroy(conf[1]);
		}
	}
	printf("# simd: %lu planted matches at every offset and alignment\n",
	       searches);
}

/* A match that ends on, starts on or straddles each block end, for block
 * sizes around the vector widths. */
static void test_block_ends(void **unused)
{
	static const unsigned int sizes[] = { 1,  2,  3,  16, 31,  32,
					      33, 63, 64, 65, 127, 128 };
	static const unsigned int plens[] = { 1, 2, 3, 5, 16, 40, 64, 70 };
	unsigned long checked = 0;
	size_t l, si, pi;

	(void)unused;
	for (l = 0; l < N_PINNED; l++) {
		for (pi = 0; pi < sizeof(plens) / sizeof(plens[0]); pi++) {
			const unsigned int plen = plens[pi];
			u8 pat[70], data[400];
			struct ts_config *conf;
			unsigned int i, at;

			for (i = 0; i < plen; i++)
				pat[i] = (u8)("sxk"[i % 3]);
			conf = prep(levels[l], pat, plen, false);
			for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]);
			     si++) {
				for (at = 0; at + plen <= sizeof(data);
				     at += 1 + (at % 5 == 0 ? 0 : 2)) {
					struct blocks *b;

					memset(data, 'k', sizeof(data));
					memcpy(data + at, pat, plen);
					b = even_blocks(data, sizeof(data),
							sizes[si]);
					checked += check_seq(levels[l], conf,
							     pat, plen, data,
							     sizeof(data), b,
							     false);
					blocks_free(b);
				}
			}
			textsearch_destroy(conf);
		}
	}
	printf("# simd: %lu matches across block ends\n", checked);
}

/* ---- TS_IGNORECASE -------------------------------------------------------- */

/*
 * Every pattern byte against every data byte, in the filter (one, two and
 * three bytes) and in the verification (a pattern of 70 bytes, longer than
 * any vector, with the byte in the middle, where the filter is elsewhere).
 * 0xC0 and 0xE0 fold together; 0xD7 and 0xF7 do not; 0xDF and 0xFF match
 * only themselves.
 */
static void test_icase_latin1(void **unused)
{
	u8 data[200], pat[70];
	size_t l;
	unsigned int x, y, i;

	(void)unused;
	for (l = 0; l < N_PINNED; l++) {
		for (y = 0; y < 256; y++) {
			struct ts_config *one, *three, *longp;

			pat[0] = (u8)y;
			one = prep(levels[l], pat, 1, true);
			pat[0] = 'j';
			pat[1] = (u8)y;
			pat[2] = 'j';
			three = prep(levels[l], pat, 3, true);
			for (i = 0; i < 70; i++)
				pat[i] = 'j';
			pat[35] = (u8)y;
			longp = prep(levels[l], pat, 70, true);
			for (x = 0; x < 256; x++) {
				const unsigned int at = 1 + (x % 64);
				struct ts_state st;
				u8 p1 = (u8)y, p3[3] = { 'j', (u8)y, 'j' };

				/* pat: 'j' * 70 but y at 35 */
				memset(data, 'j', sizeof(data));
				data[at + 35] = (u8)x;
				assert_int_equal(
					textsearch_find_continuous(
						longp, &st, data, sizeof(data)),
					ref_find(pat, 70, data, sizeof(data), 0,
						 true));
				memset(data, 0, sizeof(data));
				data[at + 1] = (u8)x;
				data[at] = data[at + 2] = 'J';
				assert_int_equal(
					textsearch_find_continuous(
						three, &st, data, sizeof(data)),
					ref_find(p3, 3, data, sizeof(data), 0,
						 true));
				memset(data, x == 0 ? 1 : 0, sizeof(data));
				data[at + 70] = (u8)x;
				assert_int_equal(
					textsearch_find_continuous(
						one, &st, data, sizeof(data)),
					ref_find(&p1, 1, data, sizeof(data), 0,
						 true));
				/* and the answer is the folding rule's */
				if (ref_fold((u8)x) == ref_fold((u8)y))
					assert_int_equal(
						textsearch_find_continuous(
							one, &st, data + 1,
							sizeof(data) - 1),
						at + 69);
			}
			textsearch_destroy(one);
			textsearch_destroy(three);
			textsearch_destroy(longp);
		}
	}
	/* the corners by name */
	for (l = 0; l < N_PINNED; l++) {
		static const struct {
			u8 p, d;
			bool match;
		} corners[] = {
			{ 0xC0, 0xE0, true },  { 0xE0, 0xC0, true },
			{ 0xDE, 0xFE, true },  { 0xD7, 0xF7, false },
			{ 0xF7, 0xD7, false }, { 0xDF, 0xFF, false },
			{ 0xFF, 0xDF, false }, { 0xDF, 0xDF, true },
			{ 0xFF, 0xFF, true },  { '@', '`', false },
			{ '[', '{', false },   { 'Z', 'z', true },
		};
		for (i = 0; i < sizeof(corners) / sizeof(corners[0]); i++) {
			u8 p2[2] = { corners[i].p, 'k' };
			struct ts_config *conf = prep(levels[l], p2, 2, true);
			struct ts_state st;

			memset(data, 'k', sizeof(data));
			data[100] = corners[i].d;
			assert_int_equal(textsearch_find_continuous(
						 conf, &st, data, sizeof(data)),
					 corners[i].match ? 100 : UINT_MAX);
			textsearch_destroy(conf);
		}
	}
}

/* Random cases over data of 0 to 200 bytes, every level against the
 * reference, contiguous at every alignment and in random blocks. */
static void test_random_short(void **unused)
{
	static const u8 alpha[] = { 'a',  'b',	'A',  'B',  0xC0, 0xE0,
				    0xD7, 0xF7, 0xDF, 0xFF, 0 };
	struct rng r = { test_seed("simd", 99) };
	unsigned long cases = 0, found = 0;
	unsigned int k;

	(void)unused;
	for (k = 0; k < 3000; k++) {
		u8 pat[80], buf[64 + 200];
		unsigned int plen = 1 + rng_below(&r, k % 3 ? 4 : 80);
		unsigned int dlen = rng_below(&r, 201), align = k % 64, i;
		unsigned int nalpha = 2 + rng_below(&r, sizeof(alpha) - 1);
		bool icase = rng_below(&r, 2);
		u8 *data = buf + align;
		size_t l;

		for (i = 0; i < plen; i++)
			pat[i] = alpha[rng_below(&r, nalpha)];
		for (i = 0; i < dlen; i++)
			data[i] = alpha[rng_below(&r, nalpha)];
		if (plen <= dlen && rng_below(&r, 2))
			memcpy(data + rng_below(&r, dlen - plen + 1), pat,
			       plen);
		for (l = 0; l < N_LEVELS; l++) {
			struct ts_config *conf =
				prep(levels[l], pat, plen, icase);
			struct blocks *b = blocks_random(data, dlen, &r,
							 (int)rng_below(&r, 3));

			found += check_seq(levels[l], conf, pat, plen, data,
					   dlen, b, icase);
			blocks_free(b);
			textsearch_destroy(conf);
			cases++;
		}
	}
	printf("# simd: %lu random short cases, %lu matches\n", cases, found);
}

/* ---- periodic data: the linear fallback ------------------------------ */

/*
 * "xkxk...xkxx" in "xkxkxk...": every other start passes the filter and
 * verifies almost to the end, the case that makes a filter-and-verify
 * search O(n * patlen).  rarebyte hands such a call over to its linear
 * search once the verifies cost too much; the matches must stay exactly
 * kmp's, contiguous and in blocks (including blocks that end inside the
 * carry, where the hand-over takes the carried bytes along).
 */
static void test_periodic(void **unused)
{
	static const unsigned int halves[] = { 2, 9, 40, 130, 700 };
	struct rng r = { test_seed("simd-periodic", 7) };
	const unsigned int dlen = 256 * 1024;
	u8 *data = malloc(dlen);
	unsigned long cases = 0, found = 0;
	size_t h, l;

	(void)unused;
	assert_non_null(data);
	for (h = 0; h < sizeof(halves) / sizeof(*halves); h++) {
		unsigned int half = halves[h], plen = 2 * half + 2, i, k;
		u8 pat[2 * 700 + 2];
		bool icase = h % 2;

		for (i = 0; i < 2 * half; i++)
			pat[i] = i % 2 ? 'k' : 'x';
		pat[2 * half] = pat[2 * half + 1] = 'x';
		for (i = 0; i < dlen; i++)
			data[i] = i % 2 ? 'k' : 'x';
		/* a few real matches, some in another case */
		for (k = 0; k < 6; k++) {
			unsigned int at = rng_below(&r, dlen - plen);

			for (i = 0; i < plen; i++)
				data[at + i] = (u8)(icase && k % 2 ?
							    pat[i] - 0x20 :
							    pat[i]);
		}
		struct ts_config *kmp = prep("kmp", pat, plen, icase);

		for (l = 0; l < N_LEVELS; l++) {
			struct ts_config *conf =
				prep(levels[l], pat, plen, icase);
			for (int mode = 0; mode < 4; mode++) {
				struct blocks *b =
					mode == 0 ?
						NULL :
					mode == 1 ?
						even_blocks(data, dlen, 1500) :
					mode == 2 ? blocks_random(data, dlen,
								  &r, 2) :
						    even_blocks(data, dlen,
								plen / 3 + 1);
				struct ts_state sk, sc;
				unsigned int want = textsearch_find_continuous(
					kmp, &sk, data, dlen);
				unsigned int got =
					b ? blocks_find(conf, &sc, b) :
					    textsearch_find_continuous(
						    conf, &sc, data, dlen);

				for (;;) {
					if (got != want) {
						dump(levels[l], "periodic", pat,
						     plen, dlen, icase, got,
						     want);
						fail();
					}
					if (want == UINT_MAX)
						break;
					found++;
					want = textsearch_next(kmp, &sk);
					got = textsearch_next(conf, &sc);
				}
				if (b) {
					assert_true(blocks_ok(b));
					blocks_free(b);
				}
				cases++;
			}
			textsearch_destroy(conf);
		}
		textsearch_destroy(kmp);
	}
	free(data);
	printf("# simd: periodic data, %lu searches of 256 KiB against kmp, "
	       "%lu matches\n",
	       cases, found);
}

/* ---- teddy: each level against its scalar twin and the reference --------- */

static const char *const teddy_levels[] = {
	"teddy_scalar", "teddy_ssse3", "teddy_avx2",
	"teddy_avx512", "teddy_vbmi",  "teddy",
};
#define N_TEDDY (sizeof(teddy_levels) / sizeof(teddy_levels[0]))

/* One find/next sequence of @conf through @b (or contiguous if NULL):
 * start, id and length of each match, UINT_MAX last; their number. */
static unsigned int teddy_run(struct ts_config *conf, const u8 *data,
			      unsigned int dlen, struct blocks *b,
			      unsigned int *out, unsigned int max)
{
	struct ts_state st;
	unsigned int pos, n = 0;

	pos = b ? blocks_find(conf, &st, b) :
		  textsearch_find_continuous(conf, &st, data, dlen);
	for (; pos != UINT_MAX; pos = textsearch_next(conf, &st)) {
		assert_true(n + 3 <= max);
		out[n++] = pos;
		out[n++] = textsearch_match_id(&st);
		out[n++] = textsearch_match_len(conf, &st);
	}
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	return n;
}

/*
 * The set @pats on @data at every level, with and without TS_IGNORECASE
 * and TS_OVERLAP, contiguous and through blocks of every size from 1 to
 * 70 bytes: each must give the reference's sequence.  The sequences
 * checked.
 */
static unsigned int check_teddy_levels(u8 *const *pats,
				       const unsigned int *lens,
				       unsigned int count, const u8 *data,
				       unsigned int dlen, unsigned int round)
{
	unsigned int *want, *got, checked = 0, i, l, f;

	for (f = 0; f < 4; f++) {
		int flags = (f & 1 ? TS_IGNORECASE : 0) |
			    (f & 2 ? TS_OVERLAP : 0);
		unsigned int nref, nwant;
		struct ref_match *ref;
		struct ts_config *conf;

		ref = ref_set_matches((const u8 *const *)pats, lens, count,
				      f & 1, data, dlen, f & 2, &nref);
		want = malloc((3 * nref + 3) * sizeof(*want));
		got = malloc((3 * nref + 3) * sizeof(*got));
		assert_true(want && got);
		for (i = 0; i < nref; i++) {
			want[3 * i] = ref[i].start;
			want[3 * i + 1] = ref[i].id;
			want[3 * i + 2] = ref[i].end - ref[i].start;
		}
		nwant = 3 * nref;
		free(ref);
		for (l = 0; l < N_TEDDY; l++) {
			unsigned int bs, n;

			conf = textsearch_prepare_set(teddy_levels[l],
						      (const void *const *)pats,
						      lens, count, GFP_KERNEL,
						      flags);
			if (IS_ERR(conf))
				fail_msg("%s: %s", teddy_levels[l],
					 textsearch_last_error());
			for (bs = 0; bs <= 70; bs++) {
				unsigned int cuts[301], nc = 0;
				struct blocks *b = NULL;

				if (bs) {
					for (i = bs; i < dlen; i += bs)
						cuts[nc++] = i;
					b = blocks_new(data, dlen, cuts, nc);
				}
				n = teddy_run(conf, data, dlen, b, got,
					      nwant + 3);
				if (n != nwant ||
				    memcmp(got, want, n * sizeof(*got))) {
					fprintf(stderr,
						"%s: flags %d, blocks %u, "
						"round %u: %u results, want "
						"%u\n",
						teddy_levels[l], flags, bs,
						round, n / 3, nwant / 3);
					fail();
				}
				if (b) {
					assert_true(blocks_ok(b));
					blocks_free(b);
				}
				checked++;
			}
			textsearch_destroy(conf);
		}
		free(want);
		free(got);
	}
	return checked;
}

/*
 * Random sets of 1 to 40 patterns of 1 to 70 bytes (past the 8-byte
 * prefix compare and past a vector) from small alphabets, the ISO-8859-1
 * letters among them; data of 0 to 300 bytes in an allocation of exactly
 * its size, with patterns planted; check_teddy_levels().
 */
static void test_teddy_levels(void **unused)
{
	static const u8 alpha[][6] = {
		{ 'a', 'b' },
		{ 'a', 'b', 'c', 'A' },
		{ 0xC0, 0xE0, 0xD7, 0xF7, 'x', 'X' },
		{ 'e', 't', 'h', 'q', 'z', ' ' },
	};
	static const unsigned int asize[] = { 2, 4, 6, 6 };
	struct rng r = { test_seed("teddy", 4242) };
	unsigned int round, checked = 0;

	(void)unused;
	for (round = 0; round < 150; round++) {
		unsigned int count = 1 + rng_below(&r, 40), i, j;
		unsigned int maxlen = rng_below(&r, 3) ? 6 : 70, a;
		unsigned int dlen = rng_below(&r, 301);
		u8 *pats[40], *data = malloc(dlen ? dlen : 1);
		unsigned int lens[40];

		a = rng_below(&r, 4);
		assert_non_null(data);
		for (i = 0; i < count; i++) {
			lens[i] = 1 + rng_below(&r, maxlen);
			pats[i] = malloc(lens[i]);
			assert_non_null(pats[i]);
			for (j = 0; j < lens[i]; j++)
				pats[i][j] = alpha[a][rng_below(&r, asize[a])];
		}
		for (i = 0; i < dlen; i++)
			data[i] = alpha[a][rng_below(&r, asize[a])];
		while (rng_below(&r, 4)) {
			i = rng_below(&r, count);
			if (lens[i] <= dlen)
				memcpy(data + rng_below(&r, dlen - lens[i] + 1),
				       pats[i], lens[i]);
			else
				break;
		}
		checked += check_teddy_levels(pats, lens, count, data, dlen,
					      round);
		for (i = 0; i < count; i++)
			free(pats[i]);
		free(data);
	}
	printf("# simd: teddy: %u sequences checked against the reference "
	       "at %zu levels\n",
	       checked, N_TEDDY);
}

/*
 * Keys away from the start of the patterns: sets of up to 8 patterns cut
 * from text begin with common bytes, and their keys move to where the
 * bytes are rare (tg_key_offset()).  The model's choice, then sets of a
 * common head, a rare middle and a common tail on text of common bytes,
 * with whole patterns, heads alone and middles alone planted (those
 * pass the filter and fail the verify), near the ends too:
 * check_teddy_levels().
 */
static void test_teddy_key_offset(void **unused)
{
	static const u8 common[] = { 'e', 't', ' ', 'h' };
	static const u8 rare[] = { 'q', 'z', 'Q', '~', '#', 0xE9 };
	const u8 *text[2] = { (const u8 *)"unlock(&bon",
			      (const u8 *)"deaplalcuck tr" };
	const u8 *rare_head[2] = { (const u8 *)"Q~zthe e",
				   (const u8 *)"#qz e th" };
	const u8 *flat[1] = { (const u8 *)"eeeeeeeeee" };
	struct rng r = { test_seed("teddy key offset", 99) };
	struct tg_model m;
	unsigned int round, checked = 0, o;

	(void)unused;
	tg_model_init(&m, 3, false, false);
	o = tg_key_offset(&m, text, 2, 8);
	assert_true(o > 0 && o <= 8);
	assert_int_equal(tg_key_offset(&m, text, 2, 0), 0);
	assert_int_equal(tg_key_offset(&m, rare_head, 2, 5), 0);
	assert_int_equal(tg_key_offset(&m, flat, 1, 7), 0);
	/* "the " before "Q~z" moves the key by 4 */
	{
		const u8 *one[1] = { (const u8 *)"the Q~z" };

		assert_int_equal(tg_key_offset(&m, one, 1, 4), 4);
	}

	for (round = 0; round < 60; round++) {
		unsigned int count = 1 + rng_below(&r, 8), i, j;
		unsigned int dlen = rng_below(&r, 301);
		u8 *pats[8], *data = malloc(dlen ? dlen : 1);
		unsigned int lens[8], head[8], mid[8];

		assert_non_null(data);
		for (i = 0; i < count; i++) {
			head[i] = 1 + rng_below(&r, 12);
			mid[i] = 3 + rng_below(&r, 4);
			lens[i] = head[i] + mid[i] + rng_below(&r, 20);
			pats[i] = malloc(lens[i]);
			assert_non_null(pats[i]);
			for (j = 0; j < lens[i]; j++)
				pats[i][j] =
					j >= head[i] && j < head[i] + mid[i] ?
						rare[rng_below(&r,
							       sizeof(rare))] :
						common[rng_below(
							&r, sizeof(common))];
		}
		for (i = 0; i < dlen; i++)
			data[i] =
				rng_below(&r, 40) ?
					common[rng_below(&r, sizeof(common))] :
					rare[rng_below(&r, sizeof(rare))];
		for (j = rng_below(&r, 12); j; j--) {
			unsigned int from, len, at;

			i = rng_below(&r, count);
			switch (rng_below(&r, 3)) {
			case 0: /* the pattern */
				from = 0, len = lens[i];
				break;
			case 1: /* its head and key, not the rest */
				from = 0, len = head[i] + mid[i] - 1;
				break;
			default: /* its key alone */
				from = head[i], len = mid[i];
				break;
			}
			if (len > dlen)
				continue;
			/* at either end now and then */
			at = rng_below(&r, 3) ? rng_below(&r, dlen - len + 1) :
			     rng_below(&r, 2) ? 0 :
						dlen - len;
			memcpy(data + at, pats[i] + from, len);
		}
		checked += check_teddy_levels(pats, lens, count, data, dlen,
					      round);
		for (i = 0; i < count; i++)
			free(pats[i]);
		free(data);
	}
	printf("# simd: teddy, keys moved: %u sequences checked against the "
	       "reference at %zu levels\n",
	       checked, N_TEDDY);
}

/* ---- stream offsets near UINT_MAX ---------------------------------------- */

/* ---- short blocks: the register carry ----------------------------------- */

/* Every occurrence, overlapping ones included (TS_OVERLAP), through @b
 * against the reference. */
static unsigned int check_overlap(const char *algo, struct ts_config *conf,
				  const u8 *pat, unsigned int plen,
				  const u8 *data, unsigned int dlen,
				  struct blocks *b)
{
	struct ts_state st;
	unsigned int want = ref_find(pat, plen, data, dlen, 0, false);
	unsigned int got = blocks_find(conf, &st, b), n = 0;

	for (;;) {
		if (got != want) {
			dump(algo, "overlap", pat, plen, dlen, false, got,
			     want);
			fail();
		}
		if (want == UINT_MAX)
			break;
		n++;
		want = ref_find(pat, plen, data, dlen, want + 1, false);
		got = textsearch_next(conf, &st);
	}
	assert_true(blocks_ok(b));
	return n;
}

/*
 * Blocks of every size from 1 to 130 bytes (around one AVX-512 vector and
 * two), and random sizes, with patterns of 1 to 65 bytes planted densely,
 * so that matches straddle many blocks and start or end at every offset
 * of one: for AVX-512 with VBMI the carry between blocks lives in a
 * register (rarebyte_avx512 and auto), elsewhere the short blocks are
 * staged in the carry buffer.  Then TS_OVERLAP, in runs of one byte.
 */
static void test_small_blocks(void **unused)
{
	static const unsigned int plens[] = { 1,  2,  3,  4,  5,  8,  15, 16,
					      17, 31, 32, 33, 63, 64, 65 };
	static const char *const algos[] = { "rarebyte_avx512", "rarebyte_avx2",
					     "rarebyte_sse2", "auto" };
	struct rng r = { test_seed("simd-small", 11) };
	unsigned long found = 0, searches = 0;
	const unsigned int dlen = 400;
	u8 data[400], pat[65];
	size_t pi, a;
	unsigned int bs, i;

	(void)unused;
	for (pi = 0; pi < sizeof(plens) / sizeof(*plens); pi++) {
		const unsigned int plen = plens[pi];

		for (int icase = 0; icase < 2; icase++) {
			for (i = 0; i < plen; i++)
				pat[i] = (u8) "sxk"[rng_below(&r, 3)];
			for (i = 0; i < dlen; i++)
				data[i] = (u8) "sxkSXK"[rng_below(&r, 6)];
			/* copies every 40 to 100 bytes, some overlapping */
			for (i = rng_below(&r, 8); i + plen <= dlen;
			     i += plen / 2 + 40 + rng_below(&r, 60))
				for (unsigned int j = 0; j < plen; j++)
					data[i + j] =
						(u8)(icase && rng_below(&r, 2) ?
							     pat[j] - 0x20 :
							     pat[j]);
			for (a = 0; a < sizeof(algos) / sizeof(*algos); a++) {
				struct ts_config *conf =
					prep(algos[a], pat, plen, icase);

				for (bs = 1; bs <= 131; bs++) {
					struct blocks *b =
						bs <= 130 ?
							even_blocks(data, dlen,
								    bs) :
							blocks_random(data,
								      dlen, &r,
								      2);

					found += check_seq(algos[a], conf, pat,
							   plen, data, dlen, b,
							   icase);
					blocks_free(b);
					searches++;
				}
				textsearch_destroy(conf);
			}
		}
	}
	/* TS_OVERLAP: runs of 'x', every start of the pattern in them */
	for (i = 0; i < dlen; i++)
		data[i] = rng_below(&r, 9) ? 'x' : 'k';
	for (pi = 0; pi < sizeof(plens) / sizeof(*plens); pi++) {
		const unsigned int plen = plens[pi] < 10 ? plens[pi] : 10;

		memset(pat, 'x', plen);
		for (a = 0; a < sizeof(algos) / sizeof(*algos); a++) {
			struct ts_config *conf = textsearch_prepare(
				algos[a], pat, plen, GFP_KERNEL, TS_OVERLAP);

			assert_false(IS_ERR(conf));
			for (bs = 1; bs <= 130; bs += 1 + bs / 16) {
				struct blocks *b = even_blocks(data, dlen, bs);

				found += check_overlap(algos[a], conf, pat,
						       plen, data, dlen, b);
				blocks_free(b);
				searches++;
			}
			textsearch_destroy(conf);
		}
	}
	printf("# simd: %lu searches in blocks of 1 to 130 bytes, "
	       "%lu matches\n",
	       searches, found);
}

/*
 * The linear fall-back taken from the short-block loop: "xkxk...xx" in
 * "xkxk..." verifies at every other start until the budget is spent,
 * whether the block is shorter than a vector, one vector, or longer (its
 * first vector tested in registers, the rest scanned in place).
 */
static void test_small_blocks_giveup(void **unused)
{
	static const unsigned int halves[] = { 9, 20, 31 };
	static const unsigned int sizes[] = { 1, 5, 63, 64, 65, 100, 130, 0 };
	struct rng r = { test_seed("simd-small-giveup", 5) };
	const unsigned int dlen = 96 * 1024;
	u8 *data = malloc(dlen);
	unsigned long found = 0;
	size_t h, s;

	(void)unused;
	assert_non_null(data);
	for (h = 0; h < sizeof(halves) / sizeof(*halves); h++) {
		unsigned int half = halves[h], plen = 2 * half + 2, i, k;
		bool icase = h % 2;
		u8 pat[64];

		for (i = 0; i < 2 * half; i++)
			pat[i] = i % 2 ? 'k' : 'x';
		pat[2 * half] = pat[2 * half + 1] = 'x';
		for (i = 0; i < dlen; i++)
			data[i] = i % 2 ? 'k' : 'x';
		for (k = 0; k < 6; k++) {
			unsigned int at = rng_below(&r, dlen - plen);

			memcpy(data + at, pat, plen);
		}
		struct ts_config *kmp = prep("kmp", pat, plen, icase);
		struct ts_config *conf = prep("auto", pat, plen, icase);

		for (s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
			struct blocks *b =
				sizes[s] ? even_blocks(data, dlen, sizes[s]) :
					   blocks_random(data, dlen, &r, 2);
			struct ts_state sk, sc;
			unsigned int want = textsearch_find_continuous(
				kmp, &sk, data, dlen);
			unsigned int got = blocks_find(conf, &sc, b);

			for (;;) {
				if (got != want) {
					dump("auto", "giveup", pat, plen, dlen,
					     icase, got, want);
					fail();
				}
				if (want == UINT_MAX)
					break;
				found++;
				want = textsearch_next(kmp, &sk);
				got = textsearch_next(conf, &sc);
			}
			assert_true(blocks_ok(b));
			blocks_free(b);
		}
		textsearch_destroy(conf);
		textsearch_destroy(kmp);
	}
	free(data);
	printf("# simd: periodic data in short blocks, %lu matches\n", found);
}

/* The stream (tests/support/vstream.h) starts with a block of 'b's, so a
 * find matches at once and the next search is sent near UINT_MAX through
 * state->offset, without scanning 4 GB (slow under ThreadSanitizer). */
enum { VPAT = 300 };

/* A match of the VPAT-byte all-'b' pattern that @conf holds ends exactly at
 * UINT_MAX; one byte later it would end past it, which is no match even
 * when the provider claims more data. */
static void check_near_uint_max(struct ts_config *conf)
{
	struct ts_state st;
	struct vstream v;

	memset(&v, 0, sizeof(v));
	/* the last VPAT bytes before UINT_MAX: the match ends there */
	v.stream_end = UINT_MAX;
	v.b_from = UINT_MAX - VPAT;
	v.overlong = false;
	v.head_b = true;
	assert_int_equal(vstream_find(conf, &st, &v), 0);
	v.head_b = false;
	v.last = 0;
	st.offset = UINT_MAX - VPAT - 3 * VSTREAM_BLOCK - 17;
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX - VPAT);
	assert_int_equal(st.offset, UINT_MAX);
	assert_true(v.ok);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);

	v.b_from = UINT_MAX - VPAT + 1;
	v.stream_end = (uint64_t)UINT_MAX + VPAT;
	v.overlong = true;
	v.head_b = true;
	assert_int_equal(vstream_find(conf, &st, &v), 0);
	v.head_b = false;
	v.last = 0;
	st.offset = UINT_MAX - VPAT - 2 * VSTREAM_BLOCK - 5;
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_true(v.ok);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
}

static void test_near_uint_max(void **unused)
{
	u8 pat[VPAT];
	size_t l;

	(void)unused;
	memset(pat, 'b', sizeof(pat));
	for (l = 0; l < N_PINNED; l++) {
		struct ts_config *conf = prep(levels[l], pat, VPAT, false);

		check_near_uint_max(conf);
		textsearch_destroy(conf);
	}
}

/* The same for teddy at each level, the long pattern in a set with a
 * short absent one. */
static void test_teddy_near_uint_max(void **unused)
{
	static u8 pat[VPAT];
	const void *p[2] = { pat, "ccccc" };
	unsigned int lens[2] = { VPAT, 5 };
	size_t l;

	(void)unused;
	memset(pat, 'b', sizeof(pat));
	for (l = 0; l < N_TEDDY; l++) {
		struct ts_config *conf = textsearch_prepare_set(
			teddy_levels[l], p, lens, 2, GFP_KERNEL, 0);

		assert_false(IS_ERR(conf));
		check_near_uint_max(conf);
		textsearch_destroy(conf);
	}
}

/* ---- teddy's buckets ---------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 4);
}

/* The summed cost of the grouping @group of @count 4-byte keys: the
 * fraction of starts that pass some bucket, as teddy_group.h models it. */
static double grouping_cost(const u8 (*keys)[4], unsigned int count,
			    const unsigned int *group, unsigned int ngroups)
{
	struct tg_model m;
	double sum = 0;

	tg_model_init(&m, 4, false, false);
	for (unsigned int g = 0; g < ngroups; g++) {
		double cost = 1;

		for (unsigned int j = 0; j < 4; j++) {
			bool seen[256] = { false };
			double w = 0;

			for (unsigned int i = 0; i < count; i++)
				if (group[i] == g && !seen[keys[i][j]]) {
					seen[keys[i][j]] = true;
					w += m.f[keys[i][j]];
				}
			cost *= w;
		}
		sum += cost;
	}
	return sum;
}

static unsigned int group_of(u8 (*keys)[4], unsigned int count,
			     unsigned int nbuckets, unsigned int *group)
{
	const u8 *ptr[128];
	struct tg_model m;

	qsort(keys, count, 4, key_cmp);
	for (unsigned int i = 0; i < count; i++)
		ptr[i] = keys[i];
	tg_model_init(&m, 4, false, false);
	return tg_group_keys(&m, ptr, count, nbuckets, group);
}

static void test_teddy_group(void **unused)
{
	u8 keys[128][4], mid[16];
	unsigned int group[128], sorted[128], n, i, k;

	(void)unused;
	/* 16 tails, each after 'a' and after 'b': sorted and cut evenly,
	 * a bucket pairs two tails; grouped, each tail's two keys share
	 * one, and a start passes only where a key's tail is.  The tails'
	 * bytes about as common as each other (ranks 160-175), or merging
	 * two keys of the rarest tails could cost less, verify and all,
	 * than pairing those of the commonest. */
	for (i = 0, k = 0; i < 256; i++)
		if (rb_rank[i] >= 160 && rb_rank[i] < 176)
			mid[k++] = (u8)i;
	assert_int_equal(k, 16);
	for (i = 0; i < 32; i++) {
		keys[i][0] = i < 16 ? 'a' : 'b';
		keys[i][1] = mid[i % 16];
		keys[i][2] = mid[(i + 5) % 16];
		keys[i][3] = mid[(i + 11) % 16];
	}
	n = group_of(keys, 32, 16, group);
	assert_int_equal(n, 16);
	for (i = 0; i < 32; i++)
		for (k = 0; k < 32; k++)
			assert_int_equal(group[i] == group[k],
					 !memcmp(keys[i] + 1, keys[k] + 1, 3));
	/* numbered in the order of their first keys */
	for (i = 0, k = 0; i < 32; i++) {
		assert_true(group[i] <= k);
		if (group[i] == k)
			k++;
	}

	/* equal keys share a group, with buckets to spare or not */
	for (i = 0; i < 12; i++)
		memcpy(keys[i], i % 3 ? "qrst" : "wxyz", 4);
	n = group_of(keys, 12, 8, group);
	assert_int_equal(n, 2);
	for (i = 0; i < 12; i++)
		assert_int_equal(group[i], keys[i][0] == 'w' ? 1u : 0u);

	/* by nibbles, a group passes every byte of one of its high nibbles
	 * and one of its low: 'b' (0x62) and 'q' (0x71) pass 'a' and 'r'
	 * as well, so "qzzz" goes with "rzz~" (both nibble pairs exact),
	 * where by bytes it would join "bzzz" (one byte apart) */
	{
		struct tg_model m;
		const u8 *three[3] = { (const u8 *)"bzzz", (const u8 *)"qzzz",
				       (const u8 *)"rzz~" };
		double w, w1;

		tg_model_init(&m, 4, false, true);
		w = m.f['a'] + m.f['b'] + m.f['q'] + m.f['r'];
		w1 = tg_nibble_weight(&m, 1u << 1 | 1u << 2, 1u << 6 | 1u << 7);
		assert_true(w1 > 0.999 * w && w1 < 1.001 * w);
		assert_int_equal(tg_group_keys(&m, three, 3, 2, group), 2);
		assert_int_not_equal(group[0], group[1]);
	}

	/* 128 random keys into 16 buckets: equal keys together, and far
	 * fewer starts let through than by the even cut */
	srand(7);
	for (i = 0; i < 128; i++)
		for (k = 0; k < 4; k++)
			keys[i][k] = (u8)(i % 9 ? 'a' + rand() % 26 : 'e');
	n = group_of(keys, 128, 16, group);
	assert_true(n >= 1 && n <= 16);
	for (i = 1; i < 128; i++)
		if (!memcmp(keys[i], keys[i - 1], 4))
			assert_int_equal(group[i], group[i - 1]);
	for (i = 0; i < 128; i++)
		sorted[i] = i * 16 / 128;
	assert_true(2 * grouping_cost((const u8(*)[4])keys, 128, group, n) <
		    grouping_cost((const u8(*)[4])keys, 128, sorted, 16));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_block_ends),
		cmocka_unit_test(test_icase_latin1),
		cmocka_unit_test(test_random_short),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_small_blocks),
		cmocka_unit_test(test_small_blocks_giveup),
		cmocka_unit_test(test_near_uint_max),
		cmocka_unit_test(test_teddy_levels),
		cmocka_unit_test(test_teddy_group),
		cmocka_unit_test(test_teddy_key_offset),
		cmocka_unit_test(test_teddy_near_uint_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
