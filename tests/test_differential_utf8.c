/*
 * test_differential_utf8.c - TS_UTF8 against a reference built here,
 * independently of the library: the test reads the Unicode Character
 * Database's CaseFolding.txt itself at run time (the library uses the
 * table generated from it at build time) and cuts data into characters
 * with its own decoder (decode by the lead byte, then refuse what does not
 * encode back to the same bytes).
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
#include <locale.h>
#include <wctype.h>

#include "testsupport.h"
#include "textsearch_stream.h"

#define NCP 0x110000u

static uint32_t *fold_map; /* code point -> simple folding */

static void load_casefolding(void)
{
	const char *path = getenv("UNICODE_CASEFOLDING");
	char line[512];
	unsigned int n = 0;
	FILE *fp;

	if (!path)
		path = "/usr/share/unicode/CaseFolding.txt";
	fp = fopen(path, "r");
	if (!fp)
		fprintf(stderr, "cannot read %s: install unicode-data\n", path);
	assert_non_null(fp);
	fold_map = malloc(NCP * sizeof(*fold_map));
	assert_non_null(fold_map);
	for (uint32_t c = 0; c < NCP; c++)
		fold_map[c] = c;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long src, dst;
		char status;

		if (sscanf(line, "%lx; %c; %lx;", &src, &status, &dst) != 3)
			continue;
		if (status != 'C' && status != 'S')
			continue;
		assert_true(src < NCP && dst < NCP);
		fold_map[src] = (uint32_t)dst;
		n++;
	}
	fclose(fp);
	assert_true(n > 1000);
}

/* ---- reference ---------------------------------------------------------- */

static unsigned int ref_encode(uint32_t cp, u8 *out)
{
	if (cp < 0x80) {
		out[0] = (u8)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (u8)(0xC0 | cp >> 6);
		out[1] = (u8)(0x80 | (cp & 63));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (u8)(0xE0 | cp >> 12);
		out[1] = (u8)(0x80 | (cp >> 6 & 63));
		out[2] = (u8)(0x80 | (cp & 63));
		return 3;
	}
	out[0] = (u8)(0xF0 | cp >> 18);
	out[1] = (u8)(0x80 | (cp >> 12 & 63));
	out[2] = (u8)(0x80 | (cp >> 6 & 63));
	out[3] = (u8)(0x80 | (cp & 63));
	return 4;
}

/* A character of the data or pattern: its bytes and code point, or -1
 * for an invalid byte (then cp holds the byte). */
struct unit {
	unsigned int start, len;
	long cp;
};

/* Decode by the lead byte, then refuse a sequence that does not encode
 * back to itself (overlong), a surrogate or a value past U+10FFFF. */
static unsigned int ref_units(const u8 *s, unsigned int n, struct unit *u)
{
	unsigned int i = 0, k = 0;

	while (i < n) {
		u8 c = s[i];
		unsigned int len = c < 0x80		 ? 1 :
				   c >= 0xF0 && c < 0xF8 ? 4 :
				   c >= 0xE0 && c < 0xF0 ? 3 :
				   c >= 0xC0 && c < 0xE0 ? 2 :
							   0;
		uint32_t cp = len == 1 ? c :
			      len == 2 ? c & 0x1F :
			      len == 3 ? c & 0x0F :
					 c & 0x07;
		bool ok = len > 0 && i + len <= n;
		u8 back[4];

		for (unsigned int j = 1; ok && j < len; j++) {
			if ((s[i + j] & 0xC0) != 0x80)
				ok = false;
			cp = cp << 6 | (s[i + j] & 0x3F);
		}
		if (ok && (cp >= NCP || (cp >= 0xD800 && cp < 0xE000) ||
			   ref_encode(cp, back) != len))
			ok = false;
		u[k].start = i;
		if (ok) {
			u[k].len = len;
			u[k].cp = cp;
		} else {
			u[k].len = 1;
			u[k].cp = -1 - (long)c;
		}
		i += u[k++].len;
	}
	return k;
}

/* icase: 0 exact, 1 Unicode simple folding, 2 TS_FOLD_LIBC (the C
 * library's towupper() in C.UTF-8, asked here at run time) */
static long ref_key(long cp, int icase)
{
	if (cp < 0 || !icase)
		return cp;
	return icase == 2 ? (long)towupper((wint_t)cp) : (long)fold_map[cp];
}

/* Every match of the set in @data in find/next order (as ref_set_matches
 * in tests/support, but by characters). */
static struct ref_match *utf8_matches(const u8 *const *pats,
				      const unsigned int *lens,
				      unsigned int count, int icase,
				      const u8 *data, unsigned int dlen,
				      bool overlap, unsigned int *nout)
{
	struct unit *du = malloc((dlen + 1) * sizeof(*du));
	struct ref_match *all = NULL, *out;
	unsigned int nd, nall = 0, cap = 0, n = 0, next = 0;

	assert_non_null(du);
	nd = ref_units(data, dlen, du);
	for (unsigned int p = 0; p < count; p++) {
		struct unit pu[400];
		unsigned int np = ref_units(pats[p], lens[p], pu);

		for (unsigned int k = 0; k + np <= nd; k++) {
			unsigned int j;

			for (j = 0; j < np; j++)
				if (ref_key(du[k + j].cp, icase) !=
				    ref_key(pu[j].cp, icase))
					break;
			if (j < np)
				continue;
			if (nall == cap) {
				cap = cap ? 2 * cap : 16;
				all = realloc(all, cap * sizeof(*all));
				assert_non_null(all);
			}
			all[nall].start = du[k].start;
			all[nall].end = k + np < nd ? du[k + np].start : dlen;
			all[nall++].id = p;
		}
	}
	free(du);
	/* order by (start, end, id) */
	for (unsigned int i = 1; i < nall; i++)
		for (unsigned int j = i; j > 0; j--) {
			struct ref_match *a = &all[j - 1], *b = &all[j], t;

			if (a->start < b->start ||
			    (a->start == b->start &&
			     (a->end < b->end ||
			      (a->end == b->end && a->id < b->id))))
				break;
			t = *a;
			*a = *b;
			*b = t;
		}
	out = malloc((nall + 1) * sizeof(*out));
	assert_non_null(out);
	for (unsigned int i = 0; i < nall; i++) {
		if (overlap) {
			out[n++] = all[i];
			continue;
		}
		if (all[i].start < next)
			continue;
		/* leftmost-longest, then lowest id */
		unsigned int best = i;

		for (unsigned int j = i + 1;
		     j < nall && all[j].start == all[i].start; j++)
			if (all[j].end > all[best].end)
				best = j;
		out[n++] = all[best];
		next = all[best].end;
	}
	free(all);
	*nout = n;
	return out;
}

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
	want = utf8_matches(pats, c->plens, c->count, c->icase, c->data,
			    c->dlen, c->overlap, &nwant);
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
		struct ref_match *want = utf8_matches(pp, &plen, 1, true, data,
						      (unsigned int)n, false,
						      &nwant);

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
	load_casefolding();
	/* TS_FOLD_LIBC's reference: the C library itself */
	if (!setlocale(LC_ALL, "C.UTF-8") || towupper(0x3b1) != 0x391) {
		fprintf(stderr, "no C.UTF-8 locale for towupper()\n");
		return -1;
	}
	return 0;
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
