/*
 * test_differential_utf8.c - TS_UTF8 against the naive reference of
 * tests/support/utf8_reference.c, built independently of the library (it
 * reads CaseFolding.txt at run time, asks towupper(), decodes by itself).
 *
 * Random UTF-8 text in several scripts with invalid bytes mixed in;
 * patterns cut from it (often through a character) or made of case
 * variants of its characters; single patterns with every literal
 * algorithm and sets with the set algorithms, with and without
 * TS_IGNORECASE (alone or with TS_FOLD_LIBC, whose reference is the C
 * library's towupper() asked at run time) and TS_OVERLAP, searched
 * contiguously, in random blocks and as push-mode streams written in
 * random pieces.
 *
 * UNICODE_CASEFOLDING names the file (default
 * /usr/share/unicode/CaseFolding.txt, Debian's unicode-data);
 * TS_TEST_CASES the cases per algorithm, TS_TEST_SEED repeats a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testsupport.h"
#include "utf8_reference.h"
#include "textsearch_stream.h"

/* ---- cases ---------------------------------------------------------------- */

/* Characters the text is made of: case variants in several scripts, and
 * pieces that are not UTF-8. */
static const char *const pieces[] = {
	"a",
	"A",
	"k",
	"K",
	"s",
	"S",
	"i",
	"I",
	"e",
	"E",
	" ",
	"-",
	"\xc3\xa9",	    /* é */
	"\xc3\x89",	    /* É */
	"\xc3\x9f",	    /* ß */
	"\xe1\xba\x9e",	    /* ẞ */
	"\xe2\x84\xaa",	    /* Kelvin sign */
	"\xc5\xbf",	    /* long s */
	"\xc4\xb1",	    /* dotless i */
	"\xc4\xb0",	    /* I with dot */
	"\xcf\x83",	    /* σ */
	"\xce\xa3",	    /* Σ */
	"\xcf\x82",	    /* ς */
	"\xce\xb8",	    /* θ */
	"\xcf\x91",	    /* ϑ */
	"\xce\x98",	    /* Θ */
	"\xcf\xb4",	    /* ϴ */
	"\xd0\xbc",	    /* м */
	"\xd0\x9c",	    /* М */
	"\xe2\x84\xab",	    /* Angstrom sign */
	"\xc3\x85",	    /* Å */
	"\xe2\x84\xa6",	    /* Ohm sign */
	"\xcf\x89",	    /* ω */
	"\xd0\xb2",	    /* в */
	"\xe1\xb2\x80",	    /* its old form, towupper() В */
	"\xe3\xa9\x80",	    /* U+3A40, holds the bytes of é's fold */
	"\xe6\x97\xa5",	    /* 日 */
	"\xf0\x9f\x98\x80", /* emoji */
	"\xf0\x90\x90\x80", /* Deseret capital, folds outside the BMP */
	"\xf0\x90\x90\xa8", /* its small letter */
	"\x80",		    /* lone continuation */
	"\xa9",
	"\xc3",	    /* truncated lead */
	"\xe3\xa9", /* truncated sequence */
	"\xff",
	"\xc0\xaf",	/* overlong */
	"\xed\xa0\x80", /* surrogate */
};
#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

struct ucase {
	u8 data[600];
	unsigned int dlen;
	u8 pats[4][80];
	unsigned int plens[4];
	unsigned int count;
	int icase; /* as ref_key() */
	bool overlap;
};

static unsigned int add_text(struct rng *r, u8 *out, unsigned int room,
			     unsigned int npieces, unsigned int palette)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < npieces; i++) {
		const char *p = pieces[rng_below(r, palette)];
		size_t l = strlen(p);

		if (n + l > room)
			break;
		memcpy(out + n, p, l);
		n += (unsigned int)l;
	}
	return n;
}

/* A pattern: cut from the data at any bytes, or made of pieces. */
static void make_pattern(struct rng *r, struct ucase *c, unsigned int i,
			 unsigned int palette)
{
	unsigned int len;

	if (c->dlen && rng_below(r, 2)) {
		unsigned int at = rng_below(r, c->dlen);

		len = 1 + rng_below(r, 12);
		if (len > c->dlen - at)
			len = c->dlen - at;
		memcpy(c->pats[i], c->data + at, len);
	} else {
		len = add_text(r, c->pats[i], 60, 1 + rng_below(r, 6), palette);
		if (!len) {
			c->pats[i][0] = 'a';
			len = 1;
		}
	}
	c->plens[i] = len;
}

static void make_case(struct rng *r, struct ucase *c, bool set)
{
	/* a small palette makes matches common */
	unsigned int palette = 4 + rng_below(r, NPIECES - 3);

	c->icase = (int)rng_below(r, 4);
	c->icase = c->icase > 2 ? 1 : c->icase;
	c->overlap = rng_below(r, 4) == 0;
	c->dlen = add_text(r, c->data, sizeof(c->data),
			   rng_below(r, 5) == 0 ? rng_below(r, 6) :
						  rng_below(r, 200),
			   palette);
	c->count = set ? 1 + rng_below(r, 4) : 1;
	for (unsigned int i = 0; i < c->count; i++)
		make_pattern(r, c, i, palette);
}

/* ---- running -------------------------------------------------------------- */

static void dump(const char *what, const u8 *s, unsigned int n)
{
	fprintf(stderr, "%s (%u):", what, n);
	for (unsigned int i = 0; i < n; i++)
		fprintf(stderr, " %02x", s[i]);
	fprintf(stderr, "\n");
}

static bool mismatch(const char *algo, const struct ucase *c, const char *what,
		     unsigned int k, unsigned int got, unsigned int want)
{
	fprintf(stderr,
		"%s: %s: match %u: got %u, want %u; icase %d overlap %d\n",
		algo, what, k, got, want, c->icase, c->overlap);
	for (unsigned int i = 0; i < c->count; i++)
		dump("pattern", c->pats[i], c->plens[i]);
	dump("data", c->data, c->dlen);
	return false;
}

/* The whole find/next sequence of one search against the reference. */
static bool check_search(const char *algo, const struct ucase *c,
			 struct ts_config *conf, struct blocks *b,
			 const struct ref_match *want, unsigned int nwant)
{
	struct ts_state st;
	unsigned int k, pos;

	pos = b ? blocks_find(conf, &st, b) :
		  textsearch_find_continuous(conf, &st, c->data, c->dlen);
	for (k = 0;; k++) {
		unsigned int w = k < nwant ? want[k].start : UINT_MAX;

		if (pos != w)
			return mismatch(algo, c, b ? "blocks" : "contiguous", k,
					pos, w);
		if (pos == UINT_MAX)
			break;
		if (textsearch_match_len(conf, &st) !=
			    want[k].end - want[k].start ||
		    textsearch_match_id(&st) != want[k].id)
			return mismatch(algo, c, "length or id", k,
					textsearch_match_len(conf, &st) * 100 +
						textsearch_match_id(&st),
					(want[k].end - want[k].start) * 100 +
						want[k].id);
		pos = textsearch_next(conf, &st);
	}
	if (b && !blocks_ok(b))
		return mismatch(algo, c, "provider contract", k, 0, 0);
	return true;
}

/* The same as a stream written in random pieces. */
static bool check_stream(const char *algo, struct rng *r, const struct ucase *c,
			 struct ts_config *conf, const struct ref_match *want,
			 unsigned int nwant)
{
	struct ts_stream *s = textsearch_stream_open(conf, GFP_KERNEL);
	unsigned int k = 0, at = 0;
	struct ts_match m;
	bool ok = true;
	int ret;

	assert_false(IS_ERR(s));
	for (;;) {
		unsigned int piece =
			at < c->dlen ? 1 + rng_below(r, c->dlen - at) : 0;

		if (piece > 1 && rng_below(r, 2))
			piece = 1 + rng_below(r, 3 < piece ? 3 : piece);
		if (piece)
			assert_int_equal(
				textsearch_stream_write(s, c->data + at, piece),
				0);
		else
			assert_int_equal(textsearch_stream_end(s), 0);
		at += piece;
		while ((ret = textsearch_stream_next(s, &m)) > 0) {
			if (k >= nwant || m.start != want[k].start ||
			    m.end != want[k].end || m.id != want[k].id) {
				ok = mismatch(algo, c, "stream", k,
					      (unsigned int)m.start,
					      k < nwant ? want[k].start :
							  UINT_MAX);
				goto out;
			}
			k++;
		}
		assert_int_equal(ret, 0);
		if (!piece)
			break;
	}
	if (k != nwant)
		ok = mismatch(algo, c, "stream (missing)", k, UINT_MAX,
			      want[k].start);
out:
	textsearch_stream_free(s);
	return ok;
}

static const char *const single_algos[] = {
	"auto",
	"kmp",
	"bm",
	"rarebyte_scalar",
	"rarebyte_sse2",
	"rarebyte_avx2",
	"rarebyte_avx512",
	"ac",
	"teddy",
	"teddy_scalar",
};
static const char *const set_algos[] = { "auto", "ac", "teddy",
					 "teddy_scalar" };

static unsigned long cases_per_algo(void)
{
	const char *env = getenv("TS_TEST_CASES");

	return env ? strtoul(env, NULL, 0) / 4 : 20000ul;
}

static bool run_case(const char *algo, struct rng *r, const struct ucase *c,
		     bool set, unsigned long *matches)
{
	const u8 *pats[4];
	int flags = TS_UTF8 | (c->icase ? TS_IGNORECASE : 0) |
		    (c->icase == 2 ? TS_FOLD_LIBC : 0) |
		    (c->overlap ? TS_OVERLAP : 0);
	struct ts_config *conf;
	struct ref_match *want;
	struct blocks *b;
	unsigned int nwant;
	bool ok;

	for (unsigned int i = 0; i < c->count; i++)
		pats[i] = c->pats[i];
	conf = set ? textsearch_prepare_set(algo, (const void *const *)pats,
					    c->plens, c->count, GFP_KERNEL,
					    flags) :
		     textsearch_prepare(algo, pats[0], c->plens[0], GFP_KERNEL,
					flags);
	if (IS_ERR(conf)) {
		fprintf(stderr, "%s: prepare: %s\n", algo,
			textsearch_last_error());
		return mismatch(algo, c, "prepare", 0, 0, 0);
	}
	assert_int_equal(conf->flags, flags);
	want = ref_utf8_matches(pats, c->plens, c->count, c->icase,
				c->icase == REF_FOLD_LIBC, c->data, c->dlen,
				c->overlap, &nwant);
	b = blocks_random(c->data, c->dlen, r, (int)rng_below(r, 3));
	ok = check_search(algo, c, conf, NULL, want, nwant) &&
	     check_search(algo, c, conf, b, want, nwant) &&
	     check_stream(algo, r, c, conf, want, nwant);
	*matches += nwant;
	blocks_free(b);
	free(want);
	textsearch_destroy(conf);
	return ok;
}

static void differential_utf8(void **unused)
{
	struct rng r = { test_seed("differential_utf8", 20261204) };
	unsigned long n = cases_per_algo();

	(void)unused;
	for (int set = 0; set < 2; set++) {
		const char *const *algos = set ? set_algos : single_algos;
		size_t nalgos =
			set ? sizeof(set_algos) / sizeof(*set_algos) :
			      sizeof(single_algos) / sizeof(*single_algos);

		for (size_t a = 0; a < nalgos; a++) {
			unsigned long matches = 0;

			for (unsigned long i = 0; i < n; i++) {
				struct ucase c;

				make_case(&r, &c, set);
				assert_true(run_case(algos[a], &r, &c, set,
						     &matches));
			}
			printf("# differential_utf8: %s%s: %lu cases, %lu "
			       "matches compared, 0 failures\n",
			       algos[a], set ? " (sets)" : "", n, matches);
		}
	}
}

/* Matches of @conf in @data written to a stream in one piece. */
static unsigned int stream_count(struct ts_config *conf, const char *data)
{
	struct ts_stream *s = textsearch_stream_open(conf, GFP_KERNEL);
	struct ts_match m;
	unsigned int n = 0;

	assert_false(IS_ERR(s));
	assert_int_equal(textsearch_stream_write(s, data, strlen(data)), 0);
	while (textsearch_stream_next(s, &m) > 0)
		n++;
	/* end refuses (-EBUSY) while matches wait */
	assert_int_equal(textsearch_stream_end(s), 0);
	while (textsearch_stream_next(s, &m) > 0)
		n++;
	textsearch_stream_free(s);
	return n;
}

/* The examples of issue 15, by name, searched and streamed. */
static void known_cases(void **unused)
{
	static const struct {
		const char *pat, *data;
		unsigned int count;
	} t[] = {
		{ "\xcf\x83\xce\xbf\xcf\x86\xce\xaf\xce\xb1",
		  "\xce\xa3\xce\xbf\xcf\x86\xce\xaf\xce\xb1 "
		  "\xcf\x83\xce\xbf\xcf\x86\xce\xaf\xce\xb1",
		  2 }, /* σοφία in Σοφία σοφία */
		{ "\xd0\xbc\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
		  "\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0 "
		  "\xd0\xbc\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
		  2 }, /* москва */
		{ "caf\xc3\xa9", "caf\xc3\xa9 CAF\xc3\x89", 2 }, /* café */
		{ "\xc3\xa9", "\xe3\xa9\x80", 0 }, /* é not inside U+3A40 */
		{ "\xcf\x83", "\xcf\x82\xce\xa3", 2 }, /* final sigma */
		{ "k", "\xe2\x84\xaa", 1 },	       /* Kelvin sign */
		{ "\xc3\x9f", "\xe1\xba\x9e", 1 },     /* ß and ẞ */
		{ "i", "\xc4\xb1\xc4\xb0", 0 },	       /* Turkic i: simple
							   folding keeps them */
		{ "\xa9", "\xc3\xa9\xa9", 1 },	       /* invalid byte */
		/* 日 has no case variants (the plain algorithm, unfolded):
		 * not in Æ 0x97 0xa5, as rarebyte's stream engine once
		 * found it by the config's TS_IGNORECASE */
		{ "\xe6\x97\xa5", "\xc6\x97\xa5 \xe6\x97\xa5", 1 },
	};

	(void)unused;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ts_config *conf = textsearch_prepare(
			"auto", t[i].pat, (unsigned int)strlen(t[i].pat),
			GFP_KERNEL, TS_UTF8 | TS_IGNORECASE);
		struct ts_state st;
		unsigned int n = 0, pos;

		assert_false(IS_ERR(conf));
		for (pos = textsearch_find_continuous(
			     conf, &st, t[i].data,
			     (unsigned int)strlen(t[i].data));
		     pos != UINT_MAX; pos = textsearch_next(conf, &st))
			n++;
		if (n != t[i].count)
			fprintf(stderr, "case %zu: %u matches, want %u\n", i, n,
				t[i].count);
		assert_int_equal(n, t[i].count);
		assert_int_equal(stream_count(conf, t[i].data), t[i].count);
		textsearch_destroy(conf);
	}
}

/* Where TS_UTF8 is refused. */
static void refused(void **unused)
{
	struct ts_config *conf;

	(void)unused;
	conf = textsearch_prepare("fsm", "a", 1, GFP_KERNEL, TS_UTF8);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
	conf = textsearch_prepare("nosuch", "a", 1, GFP_KERNEL, TS_UTF8);
	assert_true(IS_ERR(conf));
	/* TS_FOLD_LIBC means something only with TS_UTF8 */
	conf = textsearch_prepare("kmp", "a", 1, GFP_KERNEL,
				  TS_IGNORECASE | TS_FOLD_LIBC);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
	conf = textsearch_prepare_set("kmp", (const void *const[]){ "a", "b" },
				      (const unsigned int[]){ 1, 1 }, 2,
				      GFP_KERNEL, TS_UTF8);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
}

/* Through a reader on a pipe fed in small chunks, which keeps only a
 * bounded history: the engine's lookahead must stay within it. */
static void reader_pipe(void **unused)
{
	static const char *const pats[] = {
		"sk\xc3\xa9",
		"\xcf\x83\xce\xbf\xcf\x86\xce\xaf\xce\xb1 k",
		"\xc3\x89\xa9 kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
	};
	struct rng r = { test_seed("reader_pipe", 20261205) };
	size_t cap = 1 << 16, n = 0;
	u8 *data = malloc(cap);

	(void)unused;
	assert_non_null(data);
	while (n + 400 < cap) {
		n += add_text(&r, data + n, 64, 16, NPIECES);
		if (rng_below(&r, 8) == 0) {
			const char *p = pats[rng_below(&r, 3)];

			memcpy(data + n, p, strlen(p));
			n += strlen(p);
		}
	}
	for (size_t pi = 0; pi < 3; pi++) {
		const size_t chunks[] = { 1, 7, 4096, 0 };
		const u8 *pp[1] = { (const u8 *)pats[pi] };
		unsigned int plen = (unsigned int)strlen(pats[pi]), nwant;
		struct ts_config *conf =
			textsearch_prepare("auto", pats[pi], plen, GFP_KERNEL,
					   TS_UTF8 | TS_IGNORECASE);
		struct ref_match *want =
			ref_utf8_matches(pp, &plen, 1, REF_FOLD_UCS, false,
					 data, (unsigned int)n, false, &nwant);

		assert_false(IS_ERR(conf));
		assert_true(nwant > 0);
		for (size_t ci = 0; ci < 4; ci++) {
			int fds[2];
			pid_t pid;
			struct ts_reader *rd;
			struct ts_state st;
			unsigned int k = 0, pos;

			assert_int_equal(pipe(fds), 0);
			pid = fork();
			assert_true(pid >= 0);
			if (!pid) {
				size_t off = 0;

				close(fds[0]);
				while (off < n) {
					ssize_t w = write(fds[1], data + off,
							  n - off < 3000 ?
								  n - off :
								  3000);
					if (w <= 0)
						_exit(1);
					off += (size_t)w;
				}
				_exit(0);
			}
			close(fds[1]);
			rd = ts_reader_from_fd(fds[0], chunks[ci]);
			assert_non_null(rd);
			for (pos = textsearch_find_reader(conf, &st, rd);
			     pos != UINT_MAX;
			     pos = textsearch_next(conf, &st)) {
				assert_true(k < nwant);
				assert_int_equal(pos, want[k].start);
				k++;
			}
			assert_int_equal(ts_reader_error(rd), 0);
			assert_int_equal(k, nwant);
			ts_reader_free(rd);
			close(fds[0]);
			waitpid(pid, NULL, 0);
		}
		free(want);
		textsearch_destroy(conf);
	}
	free(data);
}

static int setup(void **unused)
{
	(void)unused;
	return ref_utf8_init() ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_cases),
		cmocka_unit_test(refused),
		cmocka_unit_test(reader_pipe),
		cmocka_unit_test(differential_utf8),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
