/*
 * test_fsm.c - the "fsm" algorithm: random token lists against the
 * backtracking reference (tests/support/fsm_reference.c) in contiguous data
 * and in random blocks down to one byte, whole find/next sequences with
 * zero-width matches; then the rejected patterns, the pattern getters, every
 * class on all 256 bytes, the classic examples, and the kernel bugs that are
 * repaired here.  Then push-mode streams: random cases written in random
 * cuts against the pull search of the whole data, with and without
 * TS_OVERLAP; each match yielded right after the write that decided it
 * (checked by extending what was written before); matches that wait on
 * later bytes; offsets past 4 GiB; more undecided starts than a stream has
 * room for.
 *
 * TS_TEST_CASES sets the number of random cases (default 300000);
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

#include "fsm_reference.h"
#include "testsupport.h"
#include "textsearch_fsm.h"
#include "textsearch_stream.h"

#include <errno.h>

#define TOK(type, recur, value)                       \
	{                                             \
		(u16)(type), (u8)(recur), (u8)(value) \
	}
#define CH(c) TOK(TS_FSM_SPECIFIC, TS_FSM_SINGLE, c)
#define HEAD(type) TOK(type, TS_FSM_HEAD_IGNORE, 0)
#define NTOK(a) ((unsigned int)(sizeof(a) / sizeof((a)[0])))

static unsigned long case_count(void)
{
	const char *env = getenv("TS_TEST_CASES");

	return env ? strtoul(env, NULL, 0) : 300000ul;
}

static struct ts_config *prepare(const struct ts_fsm_token *t, unsigned int n)
{
	struct ts_config *conf = textsearch_prepare(
		"fsm", t, n * (unsigned int)sizeof(*t), GFP_KERNEL, 0);

	if (IS_ERR(conf))
		fail_msg("prepare failed: %s", textsearch_last_error());
	return conf;
}

/* First match in @s (contiguous), its end in *end. */
static unsigned int find_in(const struct ts_fsm_token *t, unsigned int n,
			    const char *s, unsigned int *end)
{
	struct ts_config *conf = prepare(t, n);
	struct ts_state st;
	unsigned int pos;

	pos = textsearch_find_continuous(conf, &st, s, (unsigned int)strlen(s));
	*end = st.offset;
	textsearch_destroy(conf);
	return pos;
}

/* The same, checked against the reference and against 1-byte blocks. */
static unsigned int find_checked(const struct ts_fsm_token *t, unsigned int n,
				 const char *s, unsigned int *end)
{
	unsigned int len = (unsigned int)strlen(s), ref_end = 0, ref, pos;
	struct ts_config *conf;
	struct ts_state st;
	struct blocks *b;
	struct rng r = { 1 };

	pos = find_in(t, n, s, end);
	ref = ref_fsm_find(t, n, (const u8 *)s, len, 0, &ref_end);
	assert_int_equal(pos, ref);
	if (ref != UINT_MAX)
		assert_int_equal(*end, ref_end > ref ? ref_end : ref + 1);

	conf = prepare(t, n);
	b = blocks_random((const u8 *)s, len, &r, 1);
	assert_int_equal(blocks_find(conf, &st, b), pos);
	if (pos != UINT_MAX)
		assert_int_equal(st.offset, *end);
	assert_true(blocks_ok(b));
	blocks_free(b);
	textsearch_destroy(conf);
	return pos;
}

/* ---- random differential test ------------------------------------------ */

static const u8 pool_digits[] = "0123456789";
static const u8 pool_letters[] = "abfgzABFGZ";
static const u8 pool_spaces[] = { ' ', '\t', '\n', '\v', '\f', '\r', 0xA0 };
static const u8 pool_punct[] = "!./:@[`{~-";
static const u8 pool_latin1[] = { 0x80, 0x9F, 0xA0, 0xA1, 0xBF, 0xC0, 0xD6,
				  0xD7, 0xD8, 0xDE, 0xDF, 0xE9, 0xF7, 0xFF };
static const u8 pool_cntrl[] = {
	0x00, 0x01, 0x08, 0x0E, 0x1F, 0x7F, '\t', '\r'
};

static const struct {
	const u8 *bytes;
	unsigned int n;
} pools[] = {
	{ pool_digits, 10 },
	{ pool_letters, 10 },
	{ pool_spaces, sizeof(pool_spaces) },
	{ pool_punct, 10 },
	{ pool_latin1, sizeof(pool_latin1) },
	{ pool_cntrl, sizeof(pool_cntrl) },
};
#define N_POOLS (sizeof(pools) / sizeof(pools[0]))

struct fcase {
	struct ts_fsm_token t[6];
	unsigned int nt;
	u8 alpha[6];
	unsigned int nalpha;
	u8 data[160];
	unsigned int dlen;
};

static u8 pick(struct rng *r, const struct fcase *c)
{
	return c->alpha[rng_below(r, c->nalpha)];
}

static void random_token(struct rng *r, const struct fcase *c,
			 struct ts_fsm_token *t, unsigned int recur)
{
	/* SPECIFIC half the time, else any class */
	t->type = rng_below(r, 2) ? TS_FSM_SPECIFIC :
				    (u16)(1 + rng_below(r, TS_FSM_TYPE_MAX));
	t->recur = (u8)recur;
	t->value = rng_below(r, 10) ? pick(r, c) : (u8)rng_below(r, 256);
}

static void make_case(struct rng *r, struct fcase *c)
{
	unsigned int i, npools = 1 + rng_below(r, 3), first = 0, chosen[3];

	for (i = 0; i < 3; i++)
		chosen[i] = rng_below(r, N_POOLS);
	/* a small alphabet drawn from one to three kinds of bytes */
	c->nalpha = 1 + rng_below(r, 6);
	for (i = 0; i < c->nalpha; i++) {
		unsigned int p = chosen[rng_below(r, npools)];

		c->alpha[i] = pools[p].bytes[rng_below(r, pools[p].n)];
	}

	c->nt = 1 + rng_below(r, 6);
	if (c->nt >= 2 && rng_below(r, 3) == 0) {
		if (rng_below(r, 5) < 2) {
			struct ts_fsm_token h = HEAD(TS_FSM_WILDCARD);

			c->t[0] = h;
		} else {
			random_token(r, c, &c->t[0], TS_FSM_HEAD_IGNORE);
		}
		first = 1;
	}
	for (i = first; i < c->nt; i++)
		random_token(r, c, &c->t[i], rng_below(r, 4));

	if (rng_below(r, 8) == 0)
		c->dlen = rng_below(r, 4);
	else if (rng_below(r, 10) == 0)
		c->dlen = rng_below(r, sizeof(c->data) + 1);
	else
		c->dlen = rng_below(r, 41);
	for (i = 0; i < c->dlen; i++)
		c->data[i] = pick(r, c);
}

static void report(const struct fcase *c, const char *what, unsigned int step,
		   unsigned int got, unsigned int got_off, unsigned int want,
		   unsigned int want_off)
{
	static const char *const recurs[] = { "1", "?", "*", "+", "head" };
	unsigned int i;

	fprintf(stderr,
		"fsm: %s, result %u: got %u (offset %u), want %u "
		"(offset %u)\ntokens (%u):",
		what, step, got, got_off, want, want_off, c->nt);
	for (i = 0; i < c->nt; i++)
		fprintf(stderr, " [type %u %s 0x%02x]", c->t[i].type,
			recurs[c->t[i].recur], c->t[i].value);
	fprintf(stderr, "\ndata (%u):", c->dlen);
	for (i = 0; i < c->dlen; i++)
		fprintf(stderr, " %02x", c->data[i]);
	fprintf(stderr, "\n");
}

/* Run one case contiguous and in blocks; the number of results compared,
 * or -1 after reporting a failure. */
static long run_case(struct rng *r, const struct fcase *c)
{
	struct ts_config *conf;
	struct ts_state st_lin, st_blk;
	struct blocks *b;
	unsigned int from = 0, step, want, end = 0, want_off, got_lin, got_blk;
	unsigned int calls = 0, k;
	bool kernel_style = rng_below(r, 8) == 0;
	long compared = 0;

	conf = textsearch_prepare("fsm", c->t,
				  c->nt * (unsigned int)sizeof(c->t[0]),
				  GFP_KERNEL, 0);
	if (IS_ERR(conf)) {
		report(c, "prepare failed", 0, 0, 0, 0, 0);
		return -1;
	}
	b = blocks_random(c->data, c->dlen, r, (int)rng_below(r, 3));
	for (step = 0;; step++) {
		want = ref_fsm_find(c->t, c->nt, c->data, c->dlen, from, &end);
		/* a zero-width match moves the next search on by one */
		want_off = want == UINT_MAX ? 0 : end > want ? end : want + 1;
		if (step == 0) {
			got_lin = textsearch_find_continuous(conf, &st_lin,
							     c->data, c->dlen);
			got_blk = kernel_style ?
					  blocks_find_kernel_style(conf,
								   &st_blk, b) :
					  blocks_find(conf, &st_blk, b);
		} else {
			got_lin = textsearch_next(conf, &st_lin);
			got_blk = textsearch_next(conf, &st_blk);
		}
		calls++;
		if (got_lin != want ||
		    (want != UINT_MAX && st_lin.offset != want_off)) {
			report(c, "contiguous", step, got_lin, st_lin.offset,
			       want, want_off);
			compared = -1;
			break;
		}
		if (got_blk != want ||
		    (want != UINT_MAX && st_blk.offset != want_off)) {
			report(c,
			       kernel_style ? "blocks (kernel style)" :
					      "blocks",
			       step, got_blk, st_blk.offset, want, want_off);
			compared = -1;
			break;
		}
		compared++;
		if (want == UINT_MAX)
			break;
		from = want_off;
	}
	for (k = 0; compared >= 0 && k < 2; k++) {
		got_lin = textsearch_next(conf, &st_lin);
		got_blk = textsearch_next(conf, &st_blk);
		calls++;
		if (got_lin != UINT_MAX || got_blk != UINT_MAX) {
			report(c, "next after the end", k,
			       got_lin != UINT_MAX ? got_lin : got_blk, 0,
			       UINT_MAX, 0);
			compared = -1;
		}
	}
	if (compared >= 0 && (!blocks_ok(b) || blocks_finishes(b) != calls)) {
		report(c, "provider contract (backwards or finish count)", 0,
		       blocks_finishes(b), 0, calls, 0);
		compared = -1;
	}
	blocks_free(b);
	textsearch_destroy(conf);
	return compared;
}

static void differential(void **unused)
{
	unsigned long n = case_count(), i, results = 0, matched = 0;
	struct rng r = { test_seed("fsm differential", 20261204) };

	(void)unused;
	for (i = 0; i < n; i++) {
		struct fcase c;
		long m;

		make_case(&r, &c);
		m = run_case(&r, &c);
		assert_true(m >= 0);
		results += (unsigned long)m;
		matched += m > 1;
	}
	printf("# fsm differential: %lu cases (%lu with a match), %lu results "
	       "compared, 0 failures\n",
	       n, matched, results);
}

/* ---- rejected patterns ----------------------------------------------------- */

static void expect_einval(const void *pattern, unsigned int len, int flags)
{
	struct ts_config *conf;

	errno = 0;
	conf = textsearch_prepare("fsm", pattern, len, GFP_KERNEL, flags);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static void expect_ok(const void *pattern, unsigned int len, int flags)
{
	struct ts_config *conf;

	conf = textsearch_prepare("fsm", pattern, len, GFP_KERNEL, flags);
	assert_false(IS_ERR(conf));
	textsearch_destroy(conf);
}

static void invalid_patterns(void **unused)
{
	const struct ts_fsm_token good[3] = { CH('a'), CH('b'), CH('c') };
	struct ts_fsm_token t[3];
	const unsigned int sz = (unsigned int)sizeof(struct ts_fsm_token);
	unsigned int len, i;

	(void)unused;
	/* not a whole number of tokens, or none */
	for (len = 0; len <= 3 * sz; len++)
		if (len % sz)
			expect_einval(good, len, 0);
	expect_einval(good, 0, 0);
	expect_ok(good, 3 * sz, 0);

	/* unknown type or recurrence, in any position */
	for (i = 0; i < 3; i++) {
		const u16 types[] = { TS_FSM_TYPE_MAX + 1, 0x100, 0xFFFF };
		const u8 recurs[] = { TS_FSM_RECUR_MAX + 1, 0x80, 0xFF };
		unsigned int k;

		for (k = 0; k < 3; k++) {
			memcpy(t, good, sizeof(t));
			t[i].type = types[k];
			expect_einval(t, sizeof(t), 0);
			memcpy(t, good, sizeof(t));
			t[i].recur = recurs[k];
			expect_einval(t, sizeof(t), 0);
		}
		memcpy(t, good, sizeof(t));
		t[i].type = TS_FSM_TYPE_MAX;
		expect_ok(t, sizeof(t), 0);
	}

	/* HEAD_IGNORE: only first, never alone */
	memcpy(t, good, sizeof(t));
	t[0].recur = TS_FSM_HEAD_IGNORE;
	expect_ok(t, sizeof(t), 0);
	expect_ok(t, 2 * sz, 0);
	expect_einval(t, sz, 0);
	t[1].recur = TS_FSM_HEAD_IGNORE;
	expect_einval(t, sizeof(t), 0);
	memcpy(t, good, sizeof(t));
	t[1].recur = TS_FSM_HEAD_IGNORE;
	expect_einval(t, sizeof(t), 0);
	memcpy(t, good, sizeof(t));
	t[2].recur = TS_FSM_HEAD_IGNORE;
	expect_einval(t, sizeof(t), 0);

	/* classes have no case */
	expect_einval(good, sizeof(good), TS_IGNORECASE);
	expect_einval(good, sizeof(good), TS_IGNORECASE | TS_AUTOLOAD);
	expect_ok(good, sizeof(good), TS_AUTOLOAD);
}

/* A pattern need not be aligned. */
static void unaligned_pattern(void **unused)
{
	const struct ts_fsm_token t[] = { HEAD(TS_FSM_WILDCARD),
					  TOK(TS_FSM_DIGIT, TS_FSM_MULTI, 0),
					  CH('x') };
	unsigned char buf[sizeof(t) + 1];
	struct ts_config *conf;
	struct ts_state st;

	(void)unused;
	memcpy(buf + 1, t, sizeof(t));
	conf = textsearch_prepare("fsm", buf + 1, sizeof(t), GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_int_equal(textsearch_find_continuous(conf, &st, "ab12x", 5), 2);
	assert_int_equal(st.offset, 5);
	assert_int_equal(textsearch_get_pattern_len(conf), sizeof(t));
	assert_memory_equal(textsearch_get_pattern(conf), t, sizeof(t));
	textsearch_destroy(conf);
}

/* ---- pattern getters --------------------------------------------------------- */

static void pattern_roundtrip(void **unused)
{
	struct ts_fsm_token t[] = {
		HEAD(TS_FSM_SPACE),
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 0xFF),
		TOK(TS_FSM_PRINT, TS_FSM_ANY, 0x5A), /* value unused */
		TOK(TS_FSM_SPACE, TS_FSM_MULTI, 0),
		CH(0),
	};
	struct ts_fsm_token copy[NTOK(t)];
	struct ts_config *conf;
	void *got;

	(void)unused;
	memcpy(copy, t, sizeof(t));
	conf = prepare(t, NTOK(t));
	memset(t, 0x55, sizeof(t)); /* the config keeps its own copy */
	got = textsearch_get_pattern(conf);
	assert_non_null(got);
	assert_ptr_not_equal(got, (void *)t);
	assert_int_equal(textsearch_get_pattern_len(conf), sizeof(copy));
	/* as given, not converted (the kernel returned class masks) */
	assert_memory_equal(got, copy, sizeof(copy));
	textsearch_destroy(conf);
}

/* ---- classes ----------------------------------------------------------------- */

struct range {
	u8 lo, hi;
};

/* The kernel's ISO-8859-1 table, as inclusive ranges per class. */
static const struct range r_digit[] = { { 0x30, 0x39 } };
static const struct range r_xdigit[] = { { 0x30, 0x39 },
					 { 0x41, 0x46 },
					 { 0x61, 0x66 } };
static const struct range r_upper[] = { { 0x41, 0x5A },
					{ 0xC0, 0xD6 },
					{ 0xD8, 0xDE } };
static const struct range r_lower[] = { { 0x61, 0x7A },
					{ 0xDF, 0xF6 },
					{ 0xF8, 0xFF } };
static const struct range r_alpha[] = { { 0x41, 0x5A },
					{ 0x61, 0x7A },
					{ 0xC0, 0xD6 },
					{ 0xD8, 0xF6 },
					{ 0xF8, 0xFF } };
static const struct range r_alnum[] = { { 0x30, 0x39 }, { 0x41, 0x5A },
					{ 0x61, 0x7A }, { 0xC0, 0xD6 },
					{ 0xD8, 0xF6 }, { 0xF8, 0xFF } };
static const struct range r_punct[] = { { 0x21, 0x2F }, { 0x3A, 0x40 },
					{ 0x5B, 0x60 }, { 0x7B, 0x7E },
					{ 0xA1, 0xBF }, { 0xD7, 0xD7 },
					{ 0xF7, 0xF7 } };
static const struct range r_space[] = { { 0x09, 0x0D },
					{ 0x20, 0x20 },
					{ 0xA0, 0xA0 } };
/* 0x80-0x9F have no class in lib/ctype.c, not even CNTRL */
static const struct range r_cntrl[] = { { 0x00, 0x1F }, { 0x7F, 0x7F } };
static const struct range r_ascii[] = { { 0x00, 0x7F } };
static const struct range r_wild[] = { { 0x00, 0xFF } };
static const struct range r_graph[] = { { 0x21, 0x7E }, { 0xA1, 0xFF } };
static const struct range r_print[] = { { 0x20, 0x7E }, { 0xA0, 0xFF } };

#define RANGES(type, r)                                  \
	{                                                \
		type, #type, r, sizeof(r) / sizeof(r[0]) \
	}
static const struct {
	unsigned int type;
	const char *name;
	const struct range *r;
	unsigned int n;
} class_table[] = {
	RANGES(TS_FSM_WILDCARD, r_wild), RANGES(TS_FSM_DIGIT, r_digit),
	RANGES(TS_FSM_XDIGIT, r_xdigit), RANGES(TS_FSM_PRINT, r_print),
	RANGES(TS_FSM_ALPHA, r_alpha),	 RANGES(TS_FSM_ALNUM, r_alnum),
	RANGES(TS_FSM_ASCII, r_ascii),	 RANGES(TS_FSM_CNTRL, r_cntrl),
	RANGES(TS_FSM_GRAPH, r_graph),	 RANGES(TS_FSM_LOWER, r_lower),
	RANGES(TS_FSM_UPPER, r_upper),	 RANGES(TS_FSM_PUNCT, r_punct),
	RANGES(TS_FSM_SPACE, r_space),
};

static bool in_ranges(const struct range *r, unsigned int n, unsigned int c)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (c >= r[i].lo && c <= r[i].hi)
			return true;
	return false;
}

/* Enumerate with find/next the bytes a pattern matches in all 256. */
static void expect_matches(const struct ts_fsm_token *t, unsigned int n,
			   const u8 *all, const bool want[256],
			   const char *name)
{
	struct ts_config *conf = prepare(t, n);
	struct ts_state st;
	unsigned int c, pos = textsearch_find_continuous(conf, &st, all, 256);

	for (c = 0; c < 256; c++) {
		if (!want[c])
			continue;
		if (pos != c)
			fail_msg("%s: next match %u, want byte 0x%02x", name,
				 pos, c);
		assert_int_equal(st.offset, c + 1);
		pos = textsearch_next(conf, &st);
	}
	if (pos != UINT_MAX)
		fail_msg("%s: matches byte 0x%02x too", name, pos);
	textsearch_destroy(conf);
}

/* A strict one-token pattern, on each byte alone. */
static void expect_each(const struct ts_fsm_token *t, const u8 *all,
			const bool want[256], const char *name)
{
	struct ts_config *conf = prepare(t, 1);
	struct ts_state st;
	unsigned int c, pos;

	for (c = 0; c < 256; c++) {
		pos = textsearch_find_continuous(conf, &st, all + c, 1);
		if (pos != (want[c] ? 0 : UINT_MAX))
			fail_msg("%s: byte 0x%02x: got %u", name, c, pos);
	}
	textsearch_destroy(conf);
}

static void classes(void **unused)
{
	u8 all[256];
	bool want[256];
	unsigned int k, c;

	(void)unused;
	for (c = 0; c < 256; c++)
		all[c] = (u8)c;
	assert_int_equal(NTOK(class_table), TS_FSM_TYPE_MAX);
	for (k = 0; k < NTOK(class_table); k++) {
		unsigned int type = class_table[k].type;
		const struct ts_fsm_token single[] = { TOK(type, TS_FSM_SINGLE,
							   0) };
		const struct ts_fsm_token headed[] = {
			HEAD(TS_FSM_WILDCARD), TOK(type, TS_FSM_SINGLE, 'a')
		};

		for (c = 0; c < 256; c++) {
			want[c] = in_ranges(class_table[k].r, class_table[k].n,
					    c);
			if (ts_fsm_class_match(type, (u8)c) != want[c])
				fail_msg("ts_fsm_class_match(%s, 0x%02x) = %d",
					 class_table[k].name, c, !want[c]);
			if (ref_fsm_accepts(type, 'a', (u8)c) != want[c])
				fail_msg("reference: %s, 0x%02x = %d",
					 class_table[k].name, c, !want[c]);
		}
		expect_each(single, all, want, class_table[k].name);
		expect_matches(headed, 2, all, want, class_table[k].name);
	}
	/* SPECIFIC is no class; unknown types match nothing */
	for (c = 0; c < 256; c++) {
		assert_false(ts_fsm_class_match(TS_FSM_SPECIFIC, (u8)c));
		assert_false(ts_fsm_class_match(TS_FSM_TYPE_MAX + 1, (u8)c));
		assert_false(ts_fsm_class_match(UINT_MAX, (u8)c));
	}
	for (k = 0; k < 256; k += 51) {
		const struct ts_fsm_token specific[] = { CH(k) };

		for (c = 0; c < 256; c++)
			want[c] = c == k;
		expect_each(specific, all, want, "SPECIFIC");
	}
}

/* ---- examples ---------------------------------------------------------------- */

static void chicken(void **unused)
{
	/* the kernel's textsearch example, as a token list */
	const struct ts_fsm_token t[] = {
		HEAD(TS_FSM_WILDCARD),
		CH('c'),
		CH('h'),
		CH('i'),
		CH('c'),
		CH('k'),
		CH('e'),
		CH('n'),
	};
	unsigned int end;

	(void)unused;
	assert_int_equal(find_checked(t, NTOK(t), "We dance the funky chicken",
				      &end),
			 19);
	assert_int_equal(end, 26);
}

static void http(void **unused)
{
	/* a status line anywhere: "HTTP/" digit "." digit spaces 3 digits */
	const struct ts_fsm_token status[] = {
		HEAD(TS_FSM_WILDCARD),
		CH('H'),
		CH('T'),
		CH('T'),
		CH('P'),
		CH('/'),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0),
		CH('.'),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0),
		TOK(TS_FSM_SPACE, TS_FSM_MULTI, 0),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0),
	};
	/* a request line at the start: "GET" spaces "/" path " HTTP/" */
	const struct ts_fsm_token get[] = {
		CH('G'), CH('E'),
		CH('T'), TOK(TS_FSM_SPACE, TS_FSM_MULTI, 0),
		CH('/'), TOK(TS_FSM_GRAPH, TS_FSM_ANY, 0),
		CH(' '), CH('H'),
		CH('T'), CH('T'),
		CH('P'), CH('/'),
	};
	unsigned int end;

	(void)unused;
	assert_int_equal(find_checked(status, NTOK(status),
				      "xx\r\nHTTP/1.1  404 Not Found\r\n",
				      &end),
			 4);
	assert_int_equal(end, 17);
	assert_int_equal(find_checked(status, NTOK(status),
				      "HTTP/1.x 200 HTTP/1.0 301", &end),
			 13);
	assert_int_equal(end, 25);
	assert_int_equal(find_checked(get, NTOK(get),
				      "GET /index.html HTTP/1.0\r\n", &end),
			 0);
	assert_int_equal(end, 21);
	assert_int_equal(find_checked(get, NTOK(get), "GET \t/ HTTP/1.1", &end),
			 0);
	assert_int_equal(end, 12);
	/* the path cannot hold a space; strict: no later start */
	assert_int_equal(find_checked(get, NTOK(get), "GET /a b HTTP/1.0",
				      &end),
			 UINT_MAX);
	assert_int_equal(find_checked(get, NTOK(get), " GET / HTTP/1.0", &end),
			 UINT_MAX);
}

/* ---- the kernel's bugs, repaired ------------------------------------------ */

static void repaired_bugs(void **unused)
{
	/* a match need not reach the end of the data */
	const struct ts_fsm_token ab[] = { CH('a'), CH('b') };
	/* after a failed attempt, the next candidate is one byte on */
	const struct ts_fsm_token aab[] = { HEAD(TS_FSM_WILDCARD), CH('a'),
					    CH('a'), CH('b') };
	/* PERHAPS gives its byte back when the rest needs it */
	const struct ts_fsm_token bb[] = {
		HEAD(TS_FSM_WILDCARD),
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 'b'),
		CH('b'),
	};
	/* ANY does not stop for good at the first byte the next token
	 * takes (the kernel's ANY ended at the 'b' of "abx" and failed) */
	const struct ts_fsm_token lazy_any[] = {
		HEAD(TS_FSM_WILDCARD),
		CH('a'),
		TOK(TS_FSM_WILDCARD, TS_FSM_ANY, 0),
		CH('b'),
		CH('c'),
	};
	unsigned int end;

	(void)unused;
	assert_int_equal(find_checked(ab, NTOK(ab), "abc", &end), 0);
	assert_int_equal(end, 2);
	assert_int_equal(find_checked(aab, NTOK(aab), "aaab", &end), 1);
	assert_int_equal(end, 4);
	assert_int_equal(find_checked(aab, NTOK(aab), "aaaaaab!", &end), 4);
	assert_int_equal(find_checked(bb, NTOK(bb), "ab", &end), 1);
	assert_int_equal(end, 2);
	assert_int_equal(find_checked(bb + 1, 2, "b", &end), 0);
	assert_int_equal(end, 1);
	assert_int_equal(find_checked(bb + 1, 2, "bbb", &end), 0);
	assert_int_equal(end, 2);
	assert_int_equal(
		find_checked(lazy_any, NTOK(lazy_any), "zabxbcbc", &end), 1);
	assert_int_equal(end, 6); /* and as few bytes as possible */
}

/* ---- semantics in detail ------------------------------------------------------- */

static void semantics(void **unused)
{
	const struct ts_fsm_token any_x[] = {
		TOK(TS_FSM_SPECIFIC, TS_FSM_ANY, 'x'),
	};
	const struct ts_fsm_token a[] = { CH('a') };
	const struct ts_fsm_token space_ab[] = { HEAD(TS_FSM_SPACE), CH('a'),
						 CH('b') };
	const struct ts_fsm_token a_maybe_b[] = {
		CH('a'),
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 'b'),
	};
	const struct ts_fsm_token lazy_multi[] = {
		TOK(TS_FSM_WILDCARD, TS_FSM_MULTI, 0),
		CH('a'),
	};
	/* every byte an ANY or MULTI token takes is of its class */
	const struct ts_fsm_token a_digits_b[] = {
		HEAD(TS_FSM_WILDCARD),
		CH('a'),
		TOK(TS_FSM_DIGIT, TS_FSM_ANY, 0),
		CH('b'),
	};
	const struct ts_fsm_token x_digits[] = {
		HEAD(TS_FSM_WILDCARD),
		CH('x'),
		TOK(TS_FSM_DIGIT, TS_FSM_MULTI, 0),
	};
	const struct ts_fsm_token give_back[] = {
		TOK(TS_FSM_DIGIT, TS_FSM_PERHAPS, 0),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0),
		CH('x'),
	};
	struct ts_config *conf;
	struct ts_state st;
	unsigned int end;

	(void)unused;
	/* zero-width matches move on by one; none at the end of the data */
	conf = prepare(any_x, 1);
	assert_int_equal(textsearch_find_continuous(conf, &st, "ab", 2), 0);
	assert_int_equal(st.offset, 1);
	assert_int_equal(textsearch_next(conf, &st), 1);
	assert_int_equal(st.offset, 2);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(textsearch_find_continuous(conf, &st, "xxa", 3), 0);
	assert_int_equal(st.offset, 1); /* lazy: takes no x */
	assert_int_equal(textsearch_find_continuous(conf, &st, "", 0),
			 UINT_MAX);
	textsearch_destroy(conf);

	/* strict: each search starts exactly where the last one ended */
	conf = prepare(a, 1);
	assert_int_equal(textsearch_find_continuous(conf, &st, "aaba", 4), 0);
	assert_int_equal(textsearch_next(conf, &st), 1);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(textsearch_find_continuous(conf, &st, "ba", 2),
			 UINT_MAX);
	textsearch_destroy(conf);

	/* a head skips only bytes of its class */
	assert_int_equal(find_checked(space_ab, 3, "  \t ab", &end), 4);
	assert_int_equal(find_checked(space_ab, 3, " x ab", &end), UINT_MAX);
	assert_int_equal(find_checked(space_ab, 3, "ab", &end), 0);

	assert_int_equal(find_checked(a_maybe_b, 2, "abb", &end), 0);
	assert_int_equal(end, 2); /* PERHAPS is greedy */
	assert_int_equal(find_checked(lazy_multi, 2, "xaaa", &end), 0);
	assert_int_equal(end, 2); /* MULTI is lazy */
	assert_int_equal(find_checked(a_digits_b, NTOK(a_digits_b), "a1xb a12b",
				      &end),
			 5);
	assert_int_equal(end, 9);
	assert_int_equal(find_checked(x_digits, NTOK(x_digits), "xax5", &end),
			 2);
	assert_int_equal(end, 4); /* MULTI is lazy, even last */
	assert_int_equal(find_checked(give_back, 3, "1x", &end), 0);
	assert_int_equal(end, 2);
	assert_int_equal(find_checked(give_back, 3, "12x", &end), 0);
	assert_int_equal(end, 3);
	assert_int_equal(find_checked(give_back, 3, "123x", &end), UINT_MAX);
}

/* ---- patterns too big for the stack ------------------------------------------ */

static void large_patterns(void **unused)
{
	struct rng r = { test_seed("fsm large patterns", 77) };
	struct ts_fsm_token *t;
	u8 *data;
	unsigned int i, n, k, dlen;

	(void)unused;
	t = calloc(2001, sizeof(*t));
	data = malloc(3000);
	assert_non_null(t);
	assert_non_null(data);
	for (k = 0; k < 300; k++) {
		struct ts_config *conf;
		struct ts_state st;
		unsigned int want, end = 0, got, from = 0;

		n = 50 + rng_below(&r, k < 290 ? 250 : 1950);
		dlen = rng_below(&r, n < 300 ? 2 * n + 100 : 600);
		i = 0;
		if (rng_below(&r, 2)) {
			struct ts_fsm_token h = HEAD(TS_FSM_WILDCARD);

			t[i++] = h;
		}
		for (; i < n; i++) {
			t[i].type = rng_below(&r, 4) ? TS_FSM_SPECIFIC :
						       TS_FSM_ALPHA;
			t[i].recur = (u8)(rng_below(&r, 3) ? TS_FSM_SINGLE :
							     rng_below(&r, 4));
			t[i].value = (u8)('a' + rng_below(&r, 2));
		}
		for (i = 0; i < dlen; i++)
			data[i] = (u8)('a' + rng_below(&r, 2 + (k & 1)));
		conf = prepare(t, n);
		got = textsearch_find_continuous(conf, &st, data, dlen);
		for (;;) {
			want = ref_fsm_find(t, n, data, dlen, from, &end);
			assert_int_equal(got, want);
			if (want == UINT_MAX)
				break;
			from = end > want ? end : want + 1;
			assert_int_equal(st.offset, from);
			got = textsearch_next(conf, &st);
		}
		textsearch_destroy(conf);
	}
	/* nothing but optional tokens: a match everywhere */
	for (i = 0; i < 1000; i++) {
		struct ts_fsm_token any = TOK(TS_FSM_SPECIFIC, TS_FSM_ANY, 'a');

		t[i] = any;
	}
	{
		struct ts_config *conf = prepare(t, 1000);
		struct ts_state st;

		assert_int_equal(textsearch_find_continuous(conf, &st, "ba", 2),
				 0);
		assert_int_equal(st.offset, 1);
		assert_int_equal(textsearch_next(conf, &st), 1);
		assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
		textsearch_destroy(conf);
	}
	free(t);
	free(data);
}

/* ---- stream offsets near UINT_MAX ------------------------------------------- */

/* "b" then 'a' forever, past UINT_MAX. */
static unsigned int endless(unsigned int consumed, const u8 **dst,
			    struct ts_config *conf, struct ts_state *state)
{
	static const u8 b[1] = { 'b' };
	static const u8 a[16] = { 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
				  'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a' };

	(void)conf;
	(void)state;
	*dst = consumed ? a : b;
	return consumed ? sizeof(a) : sizeof(b);
}

static void near_wrap(void **unused)
{
	const struct ts_fsm_token find_b[] = { HEAD(TS_FSM_WILDCARD), CH('b') };
	const struct ts_fsm_token b_a[] = {
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 'b'),
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 'a'),
		CH('a'),
	};
	struct ts_config *conf;
	struct ts_state st;

	(void)unused;
	/* the data ends where offsets would wrap */
	conf = prepare(find_b, 2);
	assert_int_equal(textsearch_find_with(conf, &st, endless, NULL), 0);
	st.offset = UINT_MAX - 40;
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	textsearch_destroy(conf);

	conf = prepare(b_a, 3);
	assert_int_equal(textsearch_find_with(conf, &st, endless, NULL), 0);
	assert_int_equal(st.offset, 3);
	st.offset = UINT_MAX - 3;
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX - 3);
	assert_int_equal(st.offset, UINT_MAX - 1);
	/* the last byte: PERHAPS gives it back */
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX - 1);
	assert_int_equal(st.offset, UINT_MAX);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	textsearch_destroy(conf);
}

/* ---- one config, many threads ------------------------------------------------ */

struct worker {
	struct ts_config *conf;
	const struct ts_fsm_token *t;
	unsigned int nt;
	uint64_t seed;
	bool ok;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct rng r = { w->seed };
	u8 data[200];
	unsigned int k, i;

	w->ok = true;
	for (k = 0; k < 2000 && w->ok; k++) {
		unsigned int dlen = rng_below(&r, sizeof(data)), end = 0, want;
		struct ts_state st;

		for (i = 0; i < dlen; i++)
			data[i] = (u8) "ab1 "[rng_below(&r, 4)];
		want = ref_fsm_find(w->t, w->nt, data, dlen, 0, &end);
		if (textsearch_find_continuous(w->conf, &st, data, dlen) !=
		    want)
			w->ok = false;
	}
	return NULL;
}

static void shared_config(void **unused)
{
	struct ts_fsm_token big[100];
	const struct ts_fsm_token small[] = {
		HEAD(TS_FSM_WILDCARD),
		TOK(TS_FSM_ALPHA, TS_FSM_MULTI, 0),
		TOK(TS_FSM_DIGIT, TS_FSM_PERHAPS, 0),
		CH(' '),
	};
	struct worker w[4];
	pthread_t th[4];
	unsigned int i;

	(void)unused;
	big[0] = small[0];
	for (i = 1; i < NTOK(big); i++)
		big[i] = small[1 + i % 3];
	for (i = 0; i < 4; i++) {
		w[i].t = i & 1 ? big : small;
		w[i].nt = i & 1 ? NTOK(big) : NTOK(small);
		w[i].seed = 1000 + i;
	}
	w[0].conf = w[2].conf = prepare(small, NTOK(small));
	w[1].conf = w[3].conf = prepare(big, NTOK(big));
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_true(w[i].ok);
	}
	textsearch_destroy(w[0].conf);
	textsearch_destroy(w[1].conf);
}

/* ---- push-mode streams ------------------------------------------------------ */

/*
 * A stream must yield exactly the matches of find/next over the
 * concatenation of its writes, as soon as each is decided.  The pull
 * search (checked against the reference above) is the model here.
 */

#define MAX_MATCHES 4096
#define LONG_DATA 3000 /* past the slots a stream has: the ring wraps */

struct m64 {
	uint64_t start, end;
};

/* Every match of one find/next search over @d. */
static unsigned int pull_all(struct ts_config *conf, const u8 *d,
			     unsigned int len, struct m64 *out)
{
	struct ts_state st;
	unsigned int n = 0, pos;

	for (pos = textsearch_find_continuous(conf, &st, d, len);
	     pos != UINT_MAX; pos = textsearch_next(conf, &st)) {
		if (n == MAX_MATCHES)
			fail_msg("more than %u matches", MAX_MATCHES);
		out[n].start = pos;
		out[n].end = pos + textsearch_match_len(conf, &st);
		n++;
	}
	return n;
}

/* When a stream yielded a match: bytes written before the write after
 * which it came, bytes written then, and whether only end() decided it. */
struct yielded {
	uint64_t before, after;
	bool at_end;
};

/* Drain @s into @out/@when; the number of matches so far, or -errno. */
static int drain(struct ts_stream *s, struct m64 *out, struct yielded *when,
		 unsigned int *n, uint64_t before, bool at_end)
{
	struct ts_match m;
	int ret;

	while ((ret = textsearch_stream_next(s, &m)) > 0) {
		if (*n == MAX_MATCHES)
			fail_msg("stream: more than %u matches", MAX_MATCHES);
		if (m.id != 0)
			fail_msg("stream: match id %u", m.id);
		out[*n].start = m.start;
		out[*n].end = m.end;
		if (when) {
			when[*n].before = before;
			when[*n].after = textsearch_stream_offset(s);
			when[*n].at_end = at_end;
		}
		++*n;
	}
	return ret;
}

/* Matches the last stream_all() yielded, even if it failed. */
static unsigned int stream_yielded;

/*
 * Write @d to a fresh stream of @conf in random cuts (0- and 1-byte writes
 * among them; always 1 byte if @bytewise), each from its own heap copy
 * freed once next() said 0, so a stream that kept a pointer to the data is
 * caught by ASan.  Returns the number of matches or -errno.
 */
static int stream_all(struct ts_config *conf, const u8 *d, unsigned int len,
		      struct rng *r, bool bytewise, struct m64 *out,
		      struct yielded *when)
{
	struct ts_stream *s = textsearch_stream_open(conf, GFP_KERNEL);
	unsigned int off = 0, n = 0;
	int ret = 0;

	if (IS_ERR(s))
		fail_msg("stream open: %ld", PTR_ERR(s));
	while (off < len || (!bytewise && rng_below(r, 4) == 0)) {
		unsigned int k = len - off;
		uint64_t before = textsearch_stream_offset(s);
		u8 *copy;

		if (bytewise) {
			k = 1;
		} else {
			switch (rng_below(r, 5)) {
			case 0:
				k = 0;
				break;
			case 1:
				k = k ? 1 : 0;
				break;
			case 2:
				k = rng_below(r, k + 1);
				break;
			default:
				k = k < 6 ? k : rng_below(r, 6);
			}
		}
		copy = k ? malloc(k) : NULL;
		if (k) {
			assert_non_null(copy);
			memcpy(copy, d + off, k);
		}
		assert_int_equal(textsearch_stream_write(s, copy, k), 0);
		off += k;
		ret = drain(s, out, when, &n, before, false);
		free(copy);
		if (ret < 0)
			goto out;
	}
	assert_int_equal(textsearch_stream_end(s), 0);
	ret = drain(s, out, when, &n, len, true);
	if (ret == 0) {
		/* and nothing more, ever */
		struct ts_match m;

		assert_int_equal(textsearch_stream_next(s, &m), 0);
	}
out:
	textsearch_stream_free(s);
	stream_yielded = n;
	return ret < 0 ? ret : (int)n;
}

static void report_stream(const struct fcase *c, int flags, const char *what,
			  unsigned int i, const struct m64 *got, int ngot,
			  const struct m64 *want, unsigned int nwant)
{
	fprintf(stderr,
		"fsm stream%s: %s at match %u (%d yielded, %u wanted)\n",
		flags & TS_OVERLAP ? " (TS_OVERLAP)" : "", what, i, ngot,
		nwant);
	if (ngot >= 0 && i < (unsigned int)ngot)
		fprintf(stderr, "got [%llu, %llu)\n",
			(unsigned long long)got[i].start,
			(unsigned long long)got[i].end);
	if (i < nwant)
		fprintf(stderr, "want [%llu, %llu)\n",
			(unsigned long long)want[i].start,
			(unsigned long long)want[i].end);
	report(c, "stream", i, 0, 0, 0, 0);
}

static struct ts_config *prepare_flags(const struct fcase *c, int flags)
{
	struct ts_config *conf = textsearch_prepare(
		"fsm", c->t, c->nt * (unsigned int)sizeof(c->t[0]), GFP_KERNEL,
		flags);

	if (IS_ERR(conf))
		fail_msg("prepare failed: %s", textsearch_last_error());
	return conf;
}

/* One case, one flag setting: the number of results compared (the
 * matches and the end of them), or -1 after reporting a failure. */
static long stream_case(struct rng *r, const struct fcase *c, int flags,
			bool bytewise)
{
	static struct m64 want[MAX_MATCHES], got[MAX_MATCHES];
	struct ts_config *conf = prepare_flags(c, flags);
	unsigned int nwant = pull_all(conf, c->data, c->dlen, want), i;
	int ngot = stream_all(conf, c->data, c->dlen, r, bytewise, got, NULL);

	textsearch_destroy(conf);
	for (i = 0; i < nwant || (ngot >= 0 && i < (unsigned int)ngot); i++) {
		if (ngot < 0 || i >= nwant || i >= (unsigned int)ngot ||
		    got[i].start != want[i].start ||
		    got[i].end != want[i].end) {
			report_stream(c, flags, ngot < 0 ? "error" : "differs",
				      i, got, ngot, want, nwant);
			return -1;
		}
	}
	return (long)nwant + 1;
}

/*
 * A case with data of LONG_DATA bytes drawn from its alphabet.  With
 * TS_OVERLAP a stream may run out of slots for undecided starts: then it
 * must have yielded a prefix of the matches and say -ENOBUFS (*@overflow).
 */
static long stream_long_case(struct rng *r, struct fcase *c, int flags,
			     unsigned long *overflow)
{
	static struct m64 want[MAX_MATCHES], got[MAX_MATCHES];
	static u8 d[LONG_DATA];
	struct ts_config *conf = prepare_flags(c, flags);
	unsigned int nwant, i;
	int ngot;

	for (i = 0; i < LONG_DATA; i++)
		d[i] = pick(r, c);
	nwant = pull_all(conf, d, LONG_DATA, want);
	ngot = stream_all(conf, d, LONG_DATA, r, false, got, NULL);
	textsearch_destroy(conf);
	if (ngot == -ENOBUFS && (flags & TS_OVERLAP)) {
		++*overflow;
		ngot = (int)stream_yielded; /* a prefix of them */
		if (nwant > (unsigned int)ngot)
			nwant = (unsigned int)ngot;
	}
	for (i = 0; i < nwant || (ngot >= 0 && i < (unsigned int)ngot); i++) {
		if (ngot < 0 || i >= nwant || i >= (unsigned int)ngot ||
		    got[i].start != want[i].start ||
		    got[i].end != want[i].end) {
			c->dlen = 0;
			report_stream(c, flags,
				      ngot < 0 ? "error (long data)" :
						 "differs (long data)",
				      i, got, ngot, want, nwant);
			return -1;
		}
	}
	return (long)nwant + 1;
}

static void stream_differential(void **unused)
{
	unsigned long n = case_count() / 2, i, results = 0, longs = 0;
	unsigned long overflow = 0;
	struct rng r = { test_seed("fsm stream differential", 20261205) };

	(void)unused;
	for (i = 0; i < n; i++) {
		struct fcase c;
		long a, b;

		make_case(&r, &c);
		a = stream_case(&r, &c, 0, rng_below(&r, 8) == 0);
		b = stream_case(&r, &c, TS_OVERLAP, rng_below(&r, 8) == 0);
		assert_true(a >= 0 && b >= 0);
		results += (unsigned long)(a + b);
		if (i % 128 == 0) {
			a = stream_long_case(&r, &c, 0, &overflow);
			b = stream_long_case(&r, &c, TS_OVERLAP, &overflow);
			assert_true(a >= 0 && b >= 0);
			results += (unsigned long)(a + b);
			longs += 2;
		}
	}
	printf("# fsm stream differential: %lu cases (%lu with %u bytes of "
	       "data, %lu of them out of slots), %lu results compared, "
	       "0 failures\n",
	       n, longs, LONG_DATA, overflow, results);
	assert_true(n < 100000 || results >= 200000);
}

/* ---- when a match is yielded ---- */

/* Does the search over @d (@plen bytes of data, then the @xlen bytes of
 * @x) have match @i equal to @m? */
static bool same_match(struct ts_config *conf, const u8 *d, unsigned int plen,
		       const u8 *x, unsigned int xlen, unsigned int i,
		       const struct m64 *m)
{
	static struct m64 all[MAX_MATCHES];
	u8 buf[512];
	unsigned int n;

	assert_true(plen + xlen <= sizeof(buf));
	memcpy(buf, d, plen);
	if (xlen) /* x may be NULL */
		memcpy(buf + plen, x, xlen);
	n = pull_all(conf, buf, plen + xlen, all);
	return i < n && all[i].start == m->start && all[i].end == m->end;
}

/* A byte of token @t's class, preferably one of the case's alphabet. */
static u8 token_byte(struct rng *r, const struct fcase *c,
		     const struct ts_fsm_token *t)
{
	unsigned int k, b;

	if (t->type == TS_FSM_SPECIFIC)
		return t->value;
	for (k = 0; k < 8; k++) {
		b = c->alpha[rng_below(r, c->nalpha)];
		if (ref_fsm_accepts(t->type, t->value, (u8)b))
			return (u8)b;
	}
	for (;;) {
		b = rng_below(r, 256);
		if (ref_fsm_accepts(t->type, t->value, (u8)b))
			return (u8)b;
	}
}

/*
 * A random extension: a few random bytes, then tokens @from.. of the
 * pattern spelled out with small counts (token @from at least once), so
 * that a thread waiting there can complete; tokens == nt means none.
 */
static unsigned int make_extension(struct rng *r, const struct fcase *c,
				   unsigned int from, u8 *x)
{
	unsigned int n = 0, i, k, count;

	for (k = rng_below(r, 3); k; k--)
		x[n++] = rng_below(r, 2) ? pick(r, c) : (u8)rng_below(r, 256);
	for (i = from; i < c->nt; i++) {
		const struct ts_fsm_token *t = &c->t[i];

		switch (t->recur) {
		case TS_FSM_SINGLE:
			count = 1;
			break;
		case TS_FSM_PERHAPS:
			count = i == from ? 1 : rng_below(r, 2);
			break;
		case TS_FSM_HEAD_IGNORE:
			count = rng_below(r, 2);
			break;
		default: /* ANY, MULTI */
			count = (i == from || t->recur == TS_FSM_MULTI) +
				rng_below(r, 3);
		}
		while (count--)
			x[n++] = token_byte(r, c, t);
	}
	return n;
}

/* Is match @i (@m) of the data decided by its first @plen bytes, as far as
 * many extensions can tell?  @witness: stop at the first that changes it. */
static bool looks_decided(struct rng *r, struct ts_config *conf,
			  const struct fcase *c, unsigned int plen,
			  unsigned int i, const struct m64 *m)
{
	u8 x[64];
	unsigned int b, k, n;

	if (!same_match(conf, c->data, plen, NULL, 0, i, m))
		return false;
	for (b = 0; b < 256; b++) {
		x[0] = (u8)b;
		if (!same_match(conf, c->data, plen, x, 1, i, m))
			return false;
	}
	for (k = 0; k < 400; k++) {
		n = make_extension(r, c, rng_below(r, c->nt + 1), x);
		if (!same_match(conf, c->data, plen, x, n, i, m))
			return false;
	}
	/* the data's own continuation, cut anywhere */
	for (k = plen + 1; k <= c->dlen; k++)
		if (!same_match(conf, c->data, k, NULL, 0, i, m))
			return false;
	return true;
}

static void yielded_when_decided(void **unused)
{
	unsigned long n = case_count() / 200, i, checked = 0, waited = 0;
	struct rng r = { test_seed("fsm stream decided", 20261206) };
	static struct m64 got[MAX_MATCHES];
	static struct yielded when[MAX_MATCHES];

	(void)unused;
	for (i = 0; i < n; i++) {
		struct fcase c;
		int flags = rng_below(&r, 2) ? TS_OVERLAP : 0, ngot, k;
		struct ts_config *conf;

		make_case(&r, &c);
		if (c.dlen > 48)
			c.dlen = 48; /* extensions must fit */
		conf = prepare_flags(&c, flags);
		ngot = stream_all(conf, c.data, c.dlen, &r,
				  rng_below(&r, 4) != 0, got, when);
		assert_true(ngot >= 0);
		for (k = 0; k < ngot; k++) {
			const struct yielded *w = &when[k];
			bool late, early;

			/* not before: decided once the bytes it came after
			 * were written (or at end(), by no more bytes) */
			early = !w->at_end &&
				!looks_decided(&r, conf, &c,
					       (unsigned int)w->after,
					       (unsigned int)k, &got[k]);
			/* not later: some extension of what was written
			 * before the write it came after changes it */
			late = looks_decided(&r, conf, &c,
					     (unsigned int)w->before,
					     (unsigned int)k, &got[k]);
			if (early || late) {
				fprintf(stderr,
					"fsm stream%s: match %d [%llu, %llu) "
					"yielded %s: after %llu bytes%s, "
					"the write began at %llu\n",
					flags ? " (TS_OVERLAP)" : "", k,
					(unsigned long long)got[k].start,
					(unsigned long long)got[k].end,
					early ? "too early" : "too late",
					(unsigned long long)w->after,
					w->at_end ? " and end()" : "",
					(unsigned long long)w->before);
				report(&c, "decided", (unsigned int)k, 0, 0, 0,
				       0);
				fail();
			}
			checked++;
			waited += w->at_end || w->after > got[k].end;
		}
		textsearch_destroy(conf);
	}
	printf("# fsm stream decided: %lu matches checked, %lu of them "
	       "waited on later bytes or end()\n",
	       checked, waited);
}

/* ---- examples: matches that wait on later bytes ---- */

static struct ts_stream *open_stream(const struct ts_fsm_token *t,
				     unsigned int n, int flags,
				     struct ts_config **conf)
{
	struct ts_stream *s;

	*conf = textsearch_prepare("fsm", t, n * (unsigned int)sizeof(*t),
				   GFP_KERNEL, flags);
	if (IS_ERR(*conf))
		fail_msg("prepare failed: %s", textsearch_last_error());
	assert_true(textsearch_stream_size(*conf) > 0);
	s = textsearch_stream_open(*conf, GFP_KERNEL);
	assert_false(IS_ERR(s));
	return s;
}

/* Write @str; expect the matches "s-e s-e ..." listed in @want, then 0. */
static void expect_yield(struct ts_stream *s, const char *str, const char *want)
{
	char got[256] = "";
	struct ts_match m;
	size_t used = 0;
	int ret;

	if (str)
		assert_int_equal(textsearch_stream_write(s, str, strlen(str)),
				 0);
	else
		assert_int_equal(textsearch_stream_end(s), 0);
	while ((ret = textsearch_stream_next(s, &m)) > 0)
		used += (size_t)snprintf(got + used, sizeof(got) - used,
					 "%s%llu-%llu", used ? " " : "",
					 (unsigned long long)m.start,
					 (unsigned long long)m.end);
	assert_int_equal(ret, 0);
	assert_string_equal(got, want);
}

static void stream_waits(void **unused)
{
	/* greedy PERHAPS: "a" waits to see whether a 'b' follows */
	const struct ts_fsm_token a_maybe_b[] = {
		HEAD(TS_FSM_WILDCARD), CH('a'),
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 'b')
	};
	/* x?[0-9]*[a-z]: at "x", the match "x" (x taken by [a-z]) waits
	 * while digits keep the preferred path, x then digits, alive */
	const struct ts_fsm_token x_digits_alpha[] = {
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 'x'),
		TOK(TS_FSM_DIGIT, TS_FSM_ANY, 0),
		TOK(TS_FSM_LOWER, TS_FSM_SINGLE, 0),
	};
	/* an earlier start still alive: ".*?a[0-9]*b" with "ab" later */
	const struct ts_fsm_token a_digits_b[] = {
		HEAD(TS_FSM_WILDCARD), CH('a'),
		TOK(TS_FSM_DIGIT, TS_FSM_ANY, 0), CH('b')
	};
	/* lazy ANY: zero-width, once the byte of its start is there */
	const struct ts_fsm_token any_x[] = {
		TOK(TS_FSM_SPECIFIC, TS_FSM_ANY, 'x'),
	};
	struct ts_config *conf;
	struct ts_stream *s;

	(void)unused;
	s = open_stream(a_maybe_b, NTOK(a_maybe_b), 0, &conf);
	expect_yield(s, "xa", "");
	expect_yield(s, "", "");
	expect_yield(s, "b", "1-3");
	expect_yield(s, "a", "");
	expect_yield(s, "a", "3-4");
	expect_yield(s, NULL, "4-5");
	textsearch_stream_free(s);
	textsearch_destroy(conf);

	s = open_stream(x_digits_alpha, NTOK(x_digits_alpha), 0, &conf);
	expect_yield(s, "x", "");
	expect_yield(s, "123", "");
	expect_yield(s, "4", "");
	expect_yield(s, "!", "0-1"); /* the preferred path died */
	textsearch_stream_reset(s);
	expect_yield(s, "x12", "");
	expect_yield(s, "yz", "0-4 4-5");
	expect_yield(s, NULL, "");
	textsearch_stream_free(s);
	textsearch_destroy(conf);

	/* the same with TS_OVERLAP: one match per start */
	s = open_stream(x_digits_alpha, NTOK(x_digits_alpha), TS_OVERLAP,
			&conf);
	expect_yield(s, "x12", "");
	expect_yield(s, "y", "0-4 1-4 2-4 3-4");
	expect_yield(s, "!", "");
	expect_yield(s, "z", ""); /* start 4 ('!') failed: no more ever */
	expect_yield(s, NULL, "");
	textsearch_stream_free(s);
	textsearch_destroy(conf);

	s = open_stream(a_digits_b, NTOK(a_digits_b), 0, &conf);
	expect_yield(s, "a1a2", ""); /* start 0 died at the second 'a' */
	expect_yield(s, "2", "");
	expect_yield(s, "b", "2-6");
	textsearch_stream_reset(s);
	expect_yield(s, "a1a2", "");
	expect_yield(s, "xab", "5-7");
	textsearch_stream_free(s);
	textsearch_destroy(conf);

	s = open_stream(a_digits_b, NTOK(a_digits_b), TS_OVERLAP, &conf);
	expect_yield(s, "a1a2", "");
	expect_yield(s, "b", "2-5");
	expect_yield(s, NULL, "");
	textsearch_stream_free(s);
	textsearch_destroy(conf);

	s = open_stream(any_x, 1, 0, &conf);
	expect_yield(s, "", "");
	expect_yield(s, "x", "0-0"); /* lazy: nothing beats taking none */
	expect_yield(s, "a", "1-1");
	expect_yield(s, NULL, ""); /* no start at the end of the data */
	textsearch_stream_free(s);
	textsearch_destroy(conf);
}

/* ---- 64-bit offsets ---- */

/* Write @total zero bytes in writes of the @chunk zeros at @zeros; no
 * match may come of them. */
static void write_zeros(struct ts_stream *s, const u8 *zeros, size_t chunk,
			uint64_t total)
{
	struct ts_match m;

	while (total) {
		size_t n = total < chunk ? (size_t)total : chunk;

		assert_int_equal(textsearch_stream_write(s, zeros, n), 0);
		assert_int_equal(textsearch_stream_next(s, &m), 0);
		total -= n;
	}
}

static void stream_past_4g(void **unused)
{
	const struct ts_fsm_token find_ab[] = { HEAD(TS_FSM_WILDCARD), CH('a'),
						CH('b') };
	const struct ts_fsm_token q_nul_a[] = {
		HEAD(TS_FSM_WILDCARD),
		CH('q'),
		TOK(TS_FSM_SPECIFIC, TS_FSM_ANY, 0),
		CH('a'),
	};
	const uint64_t four_g = (uint64_t)1 << 32, base = (uint64_t)5 << 30;
	/* 5 GiB in writes of 32 MiB of one buffer: mapping 5 GiB of zero
	 * pages for one write costs a page fault per 4 KiB, which some
	 * sandboxes make tens of seconds */
	const size_t chunk = (size_t)32 << 20;
	struct ts_config *conf;
	struct ts_stream *s;
	char want[128];
	u8 *zeros = calloc(1, chunk);
	int flags;

	(void)unused;
	assert_non_null(zeros);
	for (flags = 0; flags <= TS_OVERLAP; flags += TS_OVERLAP) {
		s = open_stream(find_ab, NTOK(find_ab), flags, &conf);
		expect_yield(s, "ab", "0-2");
		write_zeros(s, zeros, chunk, base);
		assert_true(textsearch_stream_offset(s) == base + 2);
		expect_yield(s, "xa", "");
		snprintf(want, sizeof(want), "%llu-%llu",
			 (unsigned long long)(base + 3),
			 (unsigned long long)(base + 5));
		expect_yield(s, "b", want);
		snprintf(want, sizeof(want), "%llu-%llu",
			 (unsigned long long)(base + 5),
			 (unsigned long long)(base + 7));
		expect_yield(s, "ab", want);
		expect_yield(s, NULL, "");
		textsearch_stream_free(s);
		textsearch_destroy(conf);
	}
	/* a match that begins before the 4 GiB line and ends after it: the
	 * zeros before it are passed over, those inside read one by one */
	s = open_stream(q_nul_a, NTOK(q_nul_a), 0, &conf);
	write_zeros(s, zeros, chunk, four_g - 3);
	expect_yield(s, "q", "");
	write_zeros(s, zeros, chunk, 16u << 20);
	snprintf(want, sizeof(want), "%llu-%llu",
		 (unsigned long long)(four_g - 3),
		 (unsigned long long)(four_g - 1 + (16u << 20)));
	expect_yield(s, "a", want);
	textsearch_stream_free(s);
	textsearch_destroy(conf);
	free(zeros);
}

/* ---- more undecided starts than a stream holds ---- */

static void stream_too_many_starts(void **unused)
{
	/* with TS_OVERLAP each 'a' starts a match that only a digit (or the
	 * end of the word) decides: the stream must remember every one */
	const struct ts_fsm_token a_alpha_digit[] = {
		HEAD(TS_FSM_WILDCARD), CH('a'),
		TOK(TS_FSM_ALPHA, TS_FSM_ANY, 0),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0)
	};
	static char many[2001];
	struct ts_config *conf;
	struct ts_stream *s;
	struct ts_match m;
	unsigned int k;
	int ret;

	(void)unused;
	memset(many, 'a', 2000);
	s = open_stream(a_alpha_digit, NTOK(a_alpha_digit), TS_OVERLAP, &conf);
	/* 100 fit */
	assert_int_equal(textsearch_stream_write(s, many, 100), 0);
	assert_int_equal(textsearch_stream_next(s, &m), 0);
	assert_int_equal(textsearch_stream_write(s, "1", 1), 0);
	for (k = 0; k < 100; k++) {
		assert_int_equal(textsearch_stream_next(s, &m), 1);
		assert_true(m.start == k && m.end == 101);
	}
	assert_int_equal(textsearch_stream_next(s, &m), 0);
	/* 2000 do not: an error, not a wrong answer, until reset */
	assert_int_equal(textsearch_stream_write(s, many, 2000), 0);
	ret = textsearch_stream_next(s, &m);
	assert_int_equal(ret, -ENOBUFS);
	assert_int_equal(textsearch_stream_write(s, "1", 1), 0);
	assert_int_equal(textsearch_stream_next(s, &m), -ENOBUFS);
	textsearch_stream_reset(s);
	expect_yield(s, "xaa1", "1-4 2-4");
	textsearch_stream_free(s);
	textsearch_destroy(conf);

	/* without TS_OVERLAP one search holds them all */
	s = open_stream(a_alpha_digit, NTOK(a_alpha_digit), 0, &conf);
	assert_int_equal(textsearch_stream_write(s, many, 2000), 0);
	assert_int_equal(textsearch_stream_next(s, &m), 0);
	expect_yield(s, "1", "0-2001");
	textsearch_stream_free(s);
	textsearch_destroy(conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(invalid_patterns),
		cmocka_unit_test(unaligned_pattern),
		cmocka_unit_test(pattern_roundtrip),
		cmocka_unit_test(classes),
		cmocka_unit_test(chicken),
		cmocka_unit_test(http),
		cmocka_unit_test(repaired_bugs),
		cmocka_unit_test(semantics),
		cmocka_unit_test(large_patterns),
		cmocka_unit_test(near_wrap),
		cmocka_unit_test(shared_config),
		cmocka_unit_test(differential),
		cmocka_unit_test(stream_waits),
		cmocka_unit_test(stream_past_4g),
		cmocka_unit_test(stream_too_many_starts),
		cmocka_unit_test(stream_differential),
		cmocka_unit_test(yielded_when_decided),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
