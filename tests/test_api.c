/*
 * test_api.c - every entry point and error code of textsearch.h, the
 * article's example with every algorithm and every way of searching, and
 * the rules all algorithms share: non-overlapping next, UINT_MAX sticks,
 * finish once per call, zero-width fsm matches move on, TS_IGNORECASE folds
 * ASCII and ISO-8859-1 alike, and searching never writes to the config.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsm_reference.h"
#include "testsupport.h"
#include "textsearch.h"
#include "textsearch_fsm.h"

/* Every literal algorithm: built in (rarebyte at each dispatch level, and
 * "auto"), then the plugin. */
static const char *const literal_algos[] = {
	"kmp",
	"bm",
	"rarebyte",
	"rarebyte_avx512",
	"rarebyte_avx2",
	"rarebyte_sse2",
	"rarebyte_scalar",
	"auto",
	"shiftor",
};
#define N_LITERAL (sizeof(literal_algos) / sizeof(literal_algos[0]))
static const char *const all_algos[] = {
	"kmp",
	"bm",
	"rarebyte",
	"rarebyte_avx512",
	"rarebyte_avx2",
	"rarebyte_sse2",
	"rarebyte_scalar",
	"auto",
	"shiftor",
	"fsm",
};
#define N_ALL (sizeof(all_algos) / sizeof(all_algos[0]))

static const char article[] = "We dance the funky chicken";
#define ARTICLE_LEN ((unsigned int)sizeof(article) - 1)
#define CHICKEN_AT 19u

#define TOK(type, recur, value)                        \
	{                                              \
		TS_FSM_##type, TS_FSM_##recur, (value) \
	}

/* The article's search as fsm tokens: skip anything, then the letters. */
static const struct ts_fsm_token chicken_tokens[] = {
	TOK(WILDCARD, HEAD_IGNORE, 0), TOK(SPECIFIC, SINGLE, 'c'),
	TOK(SPECIFIC, SINGLE, 'h'),    TOK(SPECIFIC, SINGLE, 'i'),
	TOK(SPECIFIC, SINGLE, 'c'),    TOK(SPECIFIC, SINGLE, 'k'),
	TOK(SPECIFIC, SINGLE, 'e'),    TOK(SPECIFIC, SINGLE, 'n'),
};

/* What the current check is about, for failure messages. */
static char ctx[160];

#define SET_CTX(...) snprintf(ctx, sizeof(ctx), __VA_ARGS__)

#define EXPECT_POS(got, want) expect_pos((got), (want), __LINE__)
static void expect_pos(unsigned int got, unsigned int want, int line)
{
	if (got != want)
		fail_msg("line %d: %s: got %u, want %u", line, ctx, got, want);
}

static bool is_fsm(const char *algo)
{
	return strcmp(algo, "fsm") == 0;
}

/* Prepare or fail the test, saying why.  TS_AUTOLOAD reaches the plugin
 * and is harmless for built-in algorithms. */
static struct ts_config *must_prepare(const char *algo, const void *pat,
				      unsigned int len, int flags)
{
	struct ts_config *conf;

	conf = textsearch_prepare(algo, pat, len, GFP_KERNEL,
				  flags | TS_AUTOLOAD);
	if (IS_ERR_OR_NULL(conf))
		fail_msg("prepare %s: %s (%s)", algo,
			 textsearch_strerror((int)PTR_ERR(conf)),
			 textsearch_last_error());
	return conf;
}

static struct ts_config *prepare_chicken(const char *algo)
{
	if (is_fsm(algo))
		return must_prepare(algo, chicken_tokens,
				    sizeof(chicken_tokens), 0);
	return must_prepare(algo, "chicken", 7, 0);
}

/* "aa" as every algorithm spells it (fsm: skip anything, then a, a). */
static const struct ts_fsm_token aa_tokens[] = {
	TOK(WILDCARD, HEAD_IGNORE, 0),
	TOK(SPECIFIC, SINGLE, 'a'),
	TOK(SPECIFIC, SINGLE, 'a'),
};

static struct ts_config *prepare_aa(const char *algo)
{
	if (is_fsm(algo))
		return must_prepare(algo, aa_tokens, sizeof(aa_tokens), 0);
	return must_prepare(algo, "aa", 2, 0);
}

/*
 * The error of a prepare that must fail: checks errno and that
 * textsearch_last_error() explains it.  Returns 0 if it succeeded.
 */
static long prepare_err(const char *algo, const void *pat, unsigned int len,
			gfp_t gfp, int flags)
{
	struct ts_config *conf;

	errno = 0;
	conf = textsearch_prepare(algo, pat, len, gfp, flags);
	assert_non_null(conf);
	if (!IS_ERR(conf)) {
		textsearch_destroy(conf);
		return 0;
	}
	assert_int_equal(errno, -PTR_ERR(conf));
	assert_true(textsearch_last_error()[0] != '\0');
	return PTR_ERR(conf);
}

/* Find, then next until UINT_MAX; store up to @max results; check that
 * next keeps returning UINT_MAX.  Returns the number of matches. */
static unsigned int collect(struct ts_config *conf, struct ts_state *st,
			    unsigned int first, unsigned int *out,
			    unsigned int max)
{
	unsigned int n = 0, pos = first;

	while (pos != UINT_MAX) {
		if (n == max)
			fail_msg("%s: more than %u matches", ctx, max);
		if (n && pos <= out[n - 1])
			fail_msg("%s: match %u at %u after one at %u", ctx, n,
				 pos, out[n - 1]);
		out[n++] = pos;
		pos = textsearch_next(conf, st);
	}
	EXPECT_POS(textsearch_next(conf, st), UINT_MAX);
	EXPECT_POS(textsearch_next(conf, st), UINT_MAX);
	return n;
}

static void expect_seq(const unsigned int *got, unsigned int ngot,
		       const unsigned int *want, unsigned int nwant)
{
	unsigned int i;

	for (i = 0; i < ngot && i < nwant; i++)
		if (got[i] != want[i])
			fail_msg("%s: match %u at %u, want %u", ctx, i, got[i],
				 want[i]);
	if (ngot != nwant)
		fail_msg("%s: %u matches, want %u", ctx, ngot, nwant);
}

/* The reference's non-overlapping matches of a literal pattern. */
static unsigned int ref_seq(const u8 *pat, unsigned int plen, const u8 *data,
			    unsigned int dlen, bool icase, unsigned int *out,
			    unsigned int max)
{
	unsigned int n = 0, pos = ref_find(pat, plen, data, dlen, 0, icase);

	while (pos != UINT_MAX && n < max) {
		out[n++] = pos;
		pos = ref_find(pat, plen, data, dlen, pos + plen, icase);
	}
	return n;
}

/* The reference's fsm matches; a zero-width match moves on by one. */
static unsigned int ref_fsm_seq(const struct ts_fsm_token *t, unsigned int ntok,
				const u8 *data, unsigned int dlen,
				unsigned int *out, unsigned int max)
{
	unsigned int n = 0, from = 0, pos, end;

	while (from <= dlen && n < max) {
		pos = ref_fsm_find(t, ntok, data, dlen, from, &end);
		if (pos == UINT_MAX)
			break;
		out[n++] = pos;
		from = end > pos ? end : pos + 1;
	}
	return n;
}

/* ---- prepare ---------------------------------------------------------- */

/* Runs first: the plugin must not be loaded yet. */
static void test_autoload_and_gfp_atomic(void **unused)
{
	struct ts_config *conf;
	struct ts_state st;

	(void)unused;
	assert_int_equal(prepare_err("shiftor", "x", 1, GFP_KERNEL, 0),
			 -ENOENT);
	/* GFP_ATOMIC must not block, so it never loads a plugin */
	assert_int_equal(prepare_err("shiftor", "x", 1, GFP_ATOMIC,
				     TS_AUTOLOAD),
			 -ENOENT);
	conf = textsearch_prepare("shiftor", "chicken", 7, GFP_KERNEL,
				  TS_AUTOLOAD);
	if (IS_ERR(conf))
		fail_msg("autoload shiftor: %s (%s)",
			 textsearch_strerror((int)PTR_ERR(conf)),
			 textsearch_last_error());
	SET_CTX("shiftor, autoloaded");
	EXPECT_POS(textsearch_find_continuous(conf, &st, article, ARTICLE_LEN),
		   CHICKEN_AT);
	textsearch_destroy(conf);
	/* loaded now: found without TS_AUTOLOAD, and with GFP_ATOMIC */
	assert_int_equal(prepare_err("shiftor", "x", 1, GFP_KERNEL, 0), 0);
	assert_int_equal(prepare_err("shiftor", "x", 1, GFP_ATOMIC, 0), 0);
}

static void test_prepare_errors(void **unused)
{
	static const char *const bad_names[] = {
		"",
		"a-b",
		"../kmp",
		"ts/kmp",
		"kmp ",
		" kmp",
		"k\xe9",
		"kmp.so",
		"a1234567890123456",
		"0123456789abcdef",
		"kmp\n",
	};
	struct ts_fsm_token bad_tok;
	size_t i;

	(void)unused;
	/* a zero length is -EINVAL before the name is even looked up */
	assert_int_equal(prepare_err("kmp", "x", 0, GFP_KERNEL, 0), -EINVAL);
	assert_int_equal(prepare_err("nosuchalgo", "x", 0, GFP_KERNEL, 0),
			 -EINVAL);
	assert_int_equal(prepare_err("nosuchalgo", "x", 0, GFP_KERNEL,
				     TS_AUTOLOAD),
			 -EINVAL);
	assert_int_equal(prepare_err("bad name", "x", 0, GFP_KERNEL, 0),
			 -EINVAL);
	assert_int_equal(prepare_err("kmp", NULL, 0, GFP_KERNEL, 0), -EINVAL);

	/* NULL arguments */
	assert_int_equal(prepare_err("kmp", NULL, 1, GFP_KERNEL, 0), -EINVAL);
	assert_int_equal(prepare_err(NULL, "x", 1, GFP_KERNEL, 0), -EINVAL);
	assert_int_equal(prepare_err(NULL, "x", 1, GFP_KERNEL, TS_AUTOLOAD),
			 -EINVAL);

	/* flags: only TS_AUTOLOAD, TS_IGNORECASE, TS_OVERLAP and TS_UTF8 */
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL, 16), -EINVAL);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL, TS_UTF8), 0);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL, TS_OVERLAP), 0);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL, 0x100),
			 -EINVAL);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL, INT_MIN),
			 -EINVAL);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL, -1), -EINVAL);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL,
				     TS_AUTOLOAD | TS_IGNORECASE),
			 0);

	/* gfp_mask: GFP_KERNEL or GFP_ATOMIC */
	assert_int_equal(prepare_err("kmp", "x", 1, 0, 0), -EINVAL);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_KERNEL | GFP_ATOMIC, 0),
			 -EINVAL);
	assert_int_equal(prepare_err("kmp", "x", 1, (gfp_t)~0u, 0), -EINVAL);
	assert_int_equal(prepare_err("kmp", "x", 1, GFP_ATOMIC, 0), 0);

	/* names that could never be an algorithm, let alone a path */
	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		SET_CTX("name '%s'", bad_names[i]);
		assert_int_equal(prepare_err(bad_names[i], "x", 1, GFP_KERNEL,
					     0),
				 -EINVAL);
		assert_int_equal(prepare_err(bad_names[i], "x", 1, GFP_KERNEL,
					     TS_AUTOLOAD),
				 -EINVAL);
	}

	/* well-formed but unknown, with and without a plugin search */
	assert_int_equal(prepare_err("nosuchalgo", "x", 1, GFP_KERNEL, 0),
			 -ENOENT);
	assert_int_equal(prepare_err("nosuchalgo", "x", 1, GFP_KERNEL,
				     TS_AUTOLOAD),
			 -ENOENT);
	assert_int_equal(prepare_err("abcdefghijklmno", "x", 1, GFP_KERNEL,
				     TS_AUTOLOAD),
			 -ENOENT);
	assert_int_equal(prepare_err("KMP", "x", 1, GFP_KERNEL, 0), -ENOENT);

	/* the algorithm's own -EINVAL passes through */
	assert_int_equal(prepare_err("fsm", chicken_tokens,
				     sizeof(chicken_tokens), GFP_KERNEL,
				     TS_IGNORECASE),
			 -EINVAL);
	assert_int_equal(prepare_err("fsm", chicken_tokens,
				     sizeof(chicken_tokens) - 1, GFP_KERNEL, 0),
			 -EINVAL);
	bad_tok = (struct ts_fsm_token)TOK(SPECIFIC, SINGLE, 'x');
	bad_tok.type = TS_FSM_TYPE_MAX + 1;
	assert_int_equal(prepare_err("fsm", &bad_tok, sizeof(bad_tok),
				     GFP_KERNEL, 0),
			 -EINVAL);
	bad_tok = (struct ts_fsm_token)TOK(SPECIFIC, SINGLE, 'x');
	bad_tok.recur = TS_FSM_RECUR_MAX + 1;
	assert_int_equal(prepare_err("fsm", &bad_tok, sizeof(bad_tok),
				     GFP_KERNEL, 0),
			 -EINVAL);
	/* HEAD_IGNORE alone */
	assert_int_equal(prepare_err("fsm", chicken_tokens,
				     sizeof(chicken_tokens[0]), GFP_KERNEL, 0),
			 -EINVAL);
	/* HEAD_IGNORE and one more token is fine */
	assert_int_equal(prepare_err("fsm", chicken_tokens,
				     sizeof(chicken_tokens[0]) * 2, GFP_KERNEL,
				     0),
			 0);
	{
		/* HEAD_IGNORE not first */
		const struct ts_fsm_token misplaced[] = {
			TOK(SPECIFIC, SINGLE, 'a'),
			TOK(WILDCARD, HEAD_IGNORE, 0),
		};

		assert_int_equal(prepare_err("fsm", misplaced,
					     sizeof(misplaced), GFP_KERNEL, 0),
				 -EINVAL);
	}
	/* every literal algorithm accepts any byte, one or many */
	for (i = 0; i < N_LITERAL; i++) {
		SET_CTX("%s", literal_algos[i]);
		assert_int_equal(prepare_err(literal_algos[i], "\0", 1,
					     GFP_KERNEL, TS_AUTOLOAD),
				 0);
		assert_int_equal(prepare_err(literal_algos[i], article,
					     ARTICLE_LEN, GFP_ATOMIC,
					     TS_IGNORECASE),
				 0);
	}
}

static void test_err_ptr_helpers(void **unused)
{
	int x;
	void *p = ERR_PTR(-EINVAL);

	(void)unused;
	assert_true(IS_ERR(p));
	assert_int_equal(PTR_ERR(p), -EINVAL);
	assert_true(IS_ERR_OR_NULL(p));
	assert_true(IS_ERR(ERR_PTR(-1)));
	assert_true(IS_ERR(ERR_PTR(-MAX_ERRNO)));
	assert_int_equal(PTR_ERR(ERR_PTR(-MAX_ERRNO)), -MAX_ERRNO);
	assert_false(IS_ERR((void *)((uintptr_t)-MAX_ERRNO - 1)));
	assert_false(IS_ERR(NULL));
	assert_true(IS_ERR_OR_NULL(NULL));
	assert_false(IS_ERR(&x));
	assert_false(IS_ERR_OR_NULL(&x));
	assert_int_equal(PTR_ERR(ERR_PTR(-ENOENT)), -ENOENT);
}

/* ---- a custom algorithm, written as a kernel module writes one ---------- */

#define NAIVE_MAX 64

struct naive {
	unsigned int len;
	u8 pat[];
};

static int naive_init_error;	    /* make init fail with this */
static unsigned int naive_destroys; /* destroy calls */

static struct ts_config *naive_init(const void *pattern, unsigned int len,
				    gfp_t gfp_mask, int flags)
{
	struct ts_config *conf;
	struct naive *n;

	(void)flags;
	if (naive_init_error == 1)
		return NULL;
	if (naive_init_error)
		return ERR_PTR(naive_init_error);
	if (len > NAIVE_MAX)
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(sizeof(*n) + len, gfp_mask);
	if (IS_ERR(conf))
		return conf;
	n = ts_config_priv(conf);
	n->len = len;
	memcpy(n->pat, pattern, len);
	return conf;
}

/* Streams forwards through conf->get_next_block, keeping the last len
 * bytes in a window on the stack. */
static unsigned int naive_find(struct ts_config *conf, struct ts_state *state)
{
	const struct naive *n = ts_config_priv(conf);
	unsigned int consumed = state->offset, have = 0, i, got;
	u8 win[NAIVE_MAX];
	const u8 *blk;

	while ((got = conf->get_next_block(consumed, &blk, conf, state))) {
		for (i = 0; i < got; i++) {
			if (have == n->len) {
				memmove(win, win + 1, n->len - 1);
				have--;
			}
			win[have++] = blk[i];
			if (have == n->len && !memcmp(win, n->pat, n->len)) {
				state->offset = consumed + i + 1;
				return state->offset - n->len;
			}
		}
		consumed += got;
	}
	return UINT_MAX;
}

static void naive_destroy(struct ts_config *conf)
{
	(void)conf;
	naive_destroys++;
}

static void *naive_get_pattern(struct ts_config *conf)
{
	return ((struct naive *)ts_config_priv(conf))->pat;
}

static unsigned int naive_get_pattern_len(struct ts_config *conf)
{
	return ((struct naive *)ts_config_priv(conf))->len;
}

static struct ts_ops naive_ops_template = {
	.name = "naive_test",
	.init = naive_init,
	.find = naive_find,
	.destroy = naive_destroy,
	.get_pattern = naive_get_pattern,
	.get_pattern_len = naive_get_pattern_len,
	.owner = THIS_MODULE,
};

static void test_register_errors(void **unused)
{
	struct ts_ops ops;

	(void)unused;
	assert_int_equal(textsearch_register(NULL), -EINVAL);
	assert_true(textsearch_last_error()[0] != '\0');
	assert_int_equal(textsearch_unregister(NULL), -EINVAL);

#define REJECTED(field, value)                                        \
	do {                                                          \
		ops = naive_ops_template;                             \
		ops.field = value;                                    \
		assert_int_equal(textsearch_register(&ops), -EINVAL); \
		assert_true(textsearch_last_error()[0] != '\0');      \
	} while (0)
	REJECTED(init, NULL);
	REJECTED(find, NULL);
	REJECTED(get_pattern, NULL);
	REJECTED(get_pattern_len, NULL);
	REJECTED(name, NULL);
	REJECTED(name, "");
	REJECTED(name, "with space");
	REJECTED(name, "dot.ted");
	REJECTED(name, "sl/ash");
	REJECTED(name, "sixteen_chars_xx");
#undef REJECTED

	/* destroy is optional; a name of 15 characters is fine */
	ops = naive_ops_template;
	ops.destroy = NULL;
	ops.name = "fifteen_chars_x";
	assert_int_equal(textsearch_register(&ops), 0);
	assert_int_equal(textsearch_unregister(&ops), 0);

	/* names already taken, by a built-in or by the same ops */
	ops = naive_ops_template;
	ops.name = "kmp";
	assert_int_equal(textsearch_register(&ops), -EEXIST);
	assert_true(textsearch_last_error()[0] != '\0');
	ops.name = "fsm";
	assert_int_equal(textsearch_register(&ops), -EEXIST);
	ops.name = "bm";
	assert_int_equal(textsearch_register(&ops), -EEXIST);

	/* never registered */
	ops = naive_ops_template;
	assert_int_equal(textsearch_unregister(&ops), -ENOENT);
	assert_true(textsearch_last_error()[0] != '\0');
}

static void test_register_lifecycle(void **unused)
{
	struct ts_ops ops = naive_ops_template, twin = naive_ops_template;
	struct ts_config *a, *b;
	struct ts_state st;
	unsigned int destroys = naive_destroys;
	u8 long_pat[NAIVE_MAX + 1];

	(void)unused;
	assert_int_equal(prepare_err("naive_test", "x", 1, GFP_KERNEL,
				     TS_AUTOLOAD),
			 -ENOENT);
	assert_int_equal(textsearch_register(&ops), 0);
	assert_int_equal(textsearch_register(&ops), -EEXIST);
	assert_int_equal(textsearch_register(&twin), -EEXIST);
	assert_int_equal(textsearch_unregister(&twin), -ENOENT);

	a = must_prepare("naive_test", "chicken", 7, 0);
	b = must_prepare("naive_test", "dance", 5, 0);
	assert_ptr_equal(a->ops, &ops);
	SET_CTX("custom algorithm");
	EXPECT_POS(textsearch_find_continuous(a, &st, article, ARTICLE_LEN),
		   CHICKEN_AT);
	EXPECT_POS(textsearch_next(a, &st), UINT_MAX);
	EXPECT_POS(textsearch_find_continuous(b, &st, article, ARTICLE_LEN), 3);
	assert_int_equal(textsearch_get_pattern_len(a), 7);
	assert_memory_equal(textsearch_get_pattern(a), "chicken", 7);

	/* busy while any config made with it lives */
	assert_int_equal(textsearch_unregister(&ops), -EBUSY);
	assert_true(textsearch_last_error()[0] != '\0');
	textsearch_destroy(a);
	assert_int_equal(naive_destroys, destroys + 1);
	assert_int_equal(textsearch_unregister(&ops), -EBUSY);
	textsearch_destroy(b);
	assert_int_equal(naive_destroys, destroys + 2);
	assert_int_equal(textsearch_unregister(&ops), 0);
	assert_int_equal(textsearch_unregister(&ops), -ENOENT);
	assert_int_equal(prepare_err("naive_test", "x", 1, GFP_KERNEL, 0),
			 -ENOENT);

	/* the algorithm's errors pass through, and leave no reference
	 * behind that would keep it busy */
	assert_int_equal(textsearch_register(&ops), 0);
	memset(long_pat, 'x', sizeof(long_pat));
	assert_int_equal(prepare_err("naive_test", long_pat, sizeof(long_pat),
				     GFP_KERNEL, 0),
			 -EINVAL);
	naive_init_error = -ENOMEM;
	assert_int_equal(prepare_err("naive_test", "x", 1, GFP_KERNEL, 0),
			 -ENOMEM);
	naive_init_error = -EINVAL;
	assert_int_equal(prepare_err("naive_test", "x", 1, GFP_KERNEL, 0),
			 -EINVAL);
	naive_init_error = 1; /* a NULL config */
	assert_int_equal(prepare_err("naive_test", "x", 1, GFP_KERNEL, 0),
			 -ENOMEM);
	naive_init_error = 0;
	assert_int_equal(naive_destroys, destroys + 2);
	assert_int_equal(textsearch_unregister(&ops), 0);
}

/* The custom algorithm through every provider. */
static void test_custom_algorithm_providers(void **unused)
{
	struct ts_ops ops = naive_ops_template;
	static const unsigned int cuts[] = { 15, 22 };
	struct ts_config *conf;
	struct ts_state st;
	struct blocks *b;

	(void)unused;
	assert_int_equal(textsearch_register(&ops), 0);
	conf = must_prepare("naive_test", "chicken", 7, 0);
	SET_CTX("custom algorithm, blocks");
	b = blocks_new((const u8 *)article, ARTICLE_LEN, cuts, 2);
	EXPECT_POS(blocks_find(conf, &st, b), CHICKEN_AT);
	EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
	assert_true(blocks_ok(b));
	assert_int_equal(blocks_finishes(b), 2);
	blocks_free(b);
	SET_CTX("custom algorithm, kernel style");
	b = blocks_new((const u8 *)article, ARTICLE_LEN, cuts, 2);
	EXPECT_POS(blocks_find_kernel_style(conf, &st, b), CHICKEN_AT);
	EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(blocks_finishes(b), 2);
	blocks_free(b);
	textsearch_destroy(conf);
	assert_int_equal(textsearch_unregister(&ops), 0);
}

/* ---- allocation, destroy, getters, messages ----------------------------- */

static void test_alloc_ts_config(void **unused)
{
	static const size_t sizes[] = { 0, 1, 7, 16, 100, 4096, 100000 };
	struct ts_config *conf;
	size_t i, j;

	(void)unused;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const u8 *priv;

		conf = alloc_ts_config(sizes[i],
				       i % 2 ? GFP_ATOMIC : GFP_KERNEL);
		assert_false(IS_ERR_OR_NULL(conf));
		assert_null(conf->ops);
		assert_int_equal(conf->flags, 0);
		assert_null(conf->get_next_block);
		assert_null(conf->finish);
		priv = ts_config_priv(conf);
		assert_non_null(priv);
		assert_int_equal((uintptr_t)priv % alignof(max_align_t), 0);
		/* a cache line: vector tables there are never split */
		assert_int_equal(TS_CONFIG_ALIGN, 64);
		assert_int_equal((uintptr_t)priv % TS_CONFIG_ALIGN, 0);
		for (j = 0; j < sizes[i]; j++)
			if (priv[j])
				fail_msg("payload of %zu: byte %zu is %u",
					 sizes[i], j, priv[j]);
		/* the payload is writable in full, and after the config */
		memset(ts_config_priv(conf), 0xa5, sizes[i]);
		assert_null(conf->ops);
		textsearch_destroy(conf); /* a config with no ops is freed */
	}
	/* sizes whose total would overflow are -EINVAL, not a short block */
	conf = alloc_ts_config(SIZE_MAX, GFP_KERNEL);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
	conf = alloc_ts_config(SIZE_MAX - sizeof(struct ts_config) + 1,
			       GFP_KERNEL);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
	conf = alloc_ts_config(SIZE_MAX - 8, GFP_KERNEL);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -EINVAL);
}

static void test_destroy_null_and_errors(void **unused)
{
	(void)unused;
	textsearch_destroy(NULL);
	textsearch_destroy(ERR_PTR(-EINVAL));
	textsearch_destroy(ERR_PTR(-ENOENT));
	textsearch_destroy(ERR_PTR(-ENOMEM));
	textsearch_destroy(ERR_PTR(-MAX_ERRNO));
	textsearch_destroy(ERR_PTR(-1));
	/* a failed prepare's result can go straight to destroy */
	textsearch_destroy(
		textsearch_prepare("nosuchalgo", "x", 1, GFP_KERNEL, 0));
}

static void test_pattern_getters(void **unused)
{
	static const u8 binary[] = { 0, 0xff, 'A', 0xc0, 0, 0x80 };
	struct ts_config *conf;
	size_t i;

	(void)unused;
	for (i = 0; i < N_LITERAL; i++) {
		SET_CTX("%s", literal_algos[i]);
		/* as the caller gave it, not folded */
		conf = must_prepare(literal_algos[i], "ChIcKeN", 7,
				    TS_IGNORECASE);
		assert_int_equal(textsearch_get_pattern_len(conf), 7);
		assert_memory_equal(textsearch_get_pattern(conf), "ChIcKeN", 7);
		assert_int_equal(conf->flags & TS_IGNORECASE, TS_IGNORECASE);
		textsearch_destroy(conf);
		conf = must_prepare(literal_algos[i], binary, sizeof(binary),
				    0);
		assert_int_equal(textsearch_get_pattern_len(conf),
				 sizeof(binary));
		assert_memory_equal(textsearch_get_pattern(conf), binary,
				    sizeof(binary));
		textsearch_destroy(conf);
	}
	conf = must_prepare("fsm", chicken_tokens, sizeof(chicken_tokens), 0);
	assert_int_equal(textsearch_get_pattern_len(conf),
			 sizeof(chicken_tokens));
	assert_memory_equal(textsearch_get_pattern(conf), chicken_tokens,
			    sizeof(chicken_tokens));
	assert_string_equal(conf->ops->name, "fsm");
	textsearch_destroy(conf);
}

static void test_strerror_and_last_error(void **unused)
{
	static const int codes[] = { EINVAL, ENOENT,  EEXIST,
				     EBUSY,  ELIBBAD, ENOMEM };
	size_t i, j;

	(void)unused;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *m = textsearch_strerror(-codes[i]);

		assert_non_null(m);
		assert_true(m[0] != '\0');
		assert_string_equal(m, textsearch_strerror(codes[i]));
		for (j = 0; j < i; j++)
			assert_string_not_equal(m,
						textsearch_strerror(-codes[j]));
	}
	assert_non_null(textsearch_strerror(0));
	assert_non_null(textsearch_strerror(-12345));
	assert_true(textsearch_strerror(-12345)[0] != '\0');
	assert_non_null(textsearch_strerror(INT_MIN));

	assert_non_null(textsearch_last_error());
	assert_int_equal(prepare_err("nosuchalgo", "x", 1, GFP_KERNEL, 0),
			 -ENOENT);
	assert_non_null(strstr(textsearch_last_error(), "nosuchalgo"));
	assert_int_equal(prepare_err("kmp", "x", 0, GFP_KERNEL, 0), -EINVAL);
	assert_true(textsearch_last_error()[0] != '\0');
}

static void test_version(void **unused)
{
	char want[32];

	(void)unused;
	assert_int_equal(textsearch_version_number(),
			 TEXTSEARCH_VERSION_NUMBER);
	snprintf(want, sizeof(want), "%d.%d.%d", TEXTSEARCH_VERSION_MAJOR,
		 TEXTSEARCH_VERSION_MINOR, TEXTSEARCH_VERSION_PATCH);
	assert_string_equal(textsearch_version_string(), want);
	assert_int_equal(TEXTSEARCH_VERSION_NUMBER,
			 TEXTSEARCH_VERSION_MAJOR * 10000 +
				 TEXTSEARCH_VERSION_MINOR * 100 +
				 TEXTSEARCH_VERSION_PATCH);
}

/* ---- the article -------------------------------------------------------- */

/* The article's fragments: "We dance the fu" "nky chi" "cken". */
static const unsigned int article_cuts[] = { 15, 22 };

static void test_article_examples(void **unused)
{
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		const char *algo = all_algos[i];
		struct ts_config *conf = prepare_chicken(algo);
		struct ts_state st;
		struct blocks *b;

		SET_CTX("%s, contiguous", algo);
		EXPECT_POS(textsearch_find_continuous(conf, &st, article,
						      ARTICLE_LEN),
			   CHICKEN_AT);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);

		SET_CTX("%s, find_with", algo);
		b = blocks_new((const u8 *)article, ARTICLE_LEN, article_cuts,
			       2);
		EXPECT_POS(blocks_find(conf, &st, b), CHICKEN_AT);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_true(blocks_ok(b));
		assert_int_equal(blocks_finishes(b), 2);
		assert_true(blocks_calls(b) >= 3);
		blocks_free(b);

		/* the kernel's way: the caller sets the provider in the
		 * config, then textsearch_find() */
		SET_CTX("%s, kernel style", algo);
		b = blocks_new((const u8 *)article, ARTICLE_LEN, article_cuts,
			       2);
		EXPECT_POS(blocks_find_kernel_style(conf, &st, b), CHICKEN_AT);
		assert_non_null(conf->get_next_block);
		assert_non_null(conf->finish);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_true(blocks_ok(b));
		assert_int_equal(blocks_finishes(b), 3);
		/* and again, with the same provider still installed */
		EXPECT_POS(textsearch_find(conf, &st), CHICKEN_AT);
		assert_int_equal(blocks_finishes(b), 4);

		/* the config still serves the other kinds of search */
		SET_CTX("%s, contiguous after kernel style", algo);
		EXPECT_POS(textsearch_find_continuous(conf, &st, article,
						      ARTICLE_LEN),
			   CHICKEN_AT);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 4);
		blocks_free(b);
		SET_CTX("%s, find_with after kernel style", algo);
		b = blocks_new((const u8 *)article, ARTICLE_LEN, NULL, 0);
		EXPECT_POS(blocks_find(conf, &st, b), CHICKEN_AT);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 2);
		blocks_free(b);
		textsearch_destroy(conf);
	}
}

/*
 * A provider that records what it is asked: it serves the data in blocks
 * of at most @blk bytes cut at multiples of @blk, from wherever `consumed`
 * points, and checks that `consumed` never goes backwards within a call
 * nor points before where the call's search begins.
 */
struct recorder {
	const u8 *data;
	unsigned int len, blk;
	unsigned int floor; /* state->offset when the call began */
	unsigned int last;
	bool in_call, ok;
	unsigned int calls, finishes;
};

static struct recorder *recorder_of(struct ts_state *st)
{
	struct recorder *r;

	memcpy(&r, st->cb, sizeof(r));
	return r;
}

static unsigned int recorder_next(unsigned int consumed, const u8 **dst,
				  struct ts_config *conf, struct ts_state *st)
{
	struct recorder *r = recorder_of(st);
	unsigned int end;

	(void)conf;
	r->calls++;
	if (consumed < r->floor || (r->in_call && consumed < r->last))
		r->ok = false;
	r->in_call = true;
	r->last = consumed;
	if (consumed >= r->len)
		return 0;
	end = (consumed / r->blk + 1) * r->blk;
	if (end > r->len)
		end = r->len;
	*dst = r->data + consumed;
	return end - consumed;
}

static void recorder_finish(struct ts_config *conf, struct ts_state *st)
{
	struct recorder *r = recorder_of(st);

	(void)conf;
	r->finishes++;
	r->in_call = false;
}

static void test_get_next_block_semantics(void **unused)
{
	static const char text[] = "chicken We dance the funky chicken "
				   "chickenchicken chicke";
	static const unsigned int want[] = { 0, 27, 35, 42 };
	unsigned int blk;
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_chicken(all_algos[i]);

		for (blk = 1; blk <= sizeof(text); blk++) {
			struct recorder r = { (const u8 *)text,
					      sizeof(text) - 1,
					      blk,
					      0,
					      0,
					      false,
					      true,
					      0,
					      0 };
			struct recorder *rp = &r;
			struct ts_state st;
			unsigned int pos, n = 0;

			SET_CTX("%s, blocks of %u", all_algos[i], blk);
			memcpy(st.cb, &rp, sizeof(rp));
			pos = textsearch_find_with(conf, &st, recorder_next,
						   recorder_finish);
			while (pos != UINT_MAX) {
				assert_true(n < 4);
				EXPECT_POS(pos, want[n]);
				assert_int_equal(st.offset, pos + 7);
				n++;
				r.floor = st.offset;
				pos = textsearch_next(conf, &st);
			}
			assert_int_equal(n, 4);
			if (!r.ok)
				fail_msg("%s: consumed went backwards or "
					 "before the search offset",
					 ctx);
			assert_int_equal(r.finishes, 5);
			assert_true(r.calls >= 5);
		}
		textsearch_destroy(conf);
	}
}

/* The match straddles every possible block boundary, one or two cuts. */
static void test_block_splits(void **unused)
{
	unsigned int c1, c2;
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_chicken(all_algos[i]);
		struct ts_state st;
		struct blocks *b;

		for (c1 = 1; c1 < ARTICLE_LEN; c1++) {
			for (c2 = c1; c2 < ARTICLE_LEN; c2++) {
				unsigned int cuts[2] = { c1, c2 };

				SET_CTX("%s, cuts %u %u", all_algos[i], c1, c2);
				b = blocks_new((const u8 *)article, ARTICLE_LEN,
					       cuts, c2 == c1 ? 1 : 2);
				EXPECT_POS(blocks_find(conf, &st, b),
					   CHICKEN_AT);
				EXPECT_POS(textsearch_next(conf, &st),
					   UINT_MAX);
				assert_true(blocks_ok(b));
				assert_int_equal(blocks_finishes(b), 2);
				blocks_free(b);
			}
		}
		SET_CTX("%s, one byte per block", all_algos[i]);
		{
			unsigned int cuts[ARTICLE_LEN];

			for (c1 = 0; c1 < ARTICLE_LEN; c1++)
				cuts[c1] = c1 + 1;
			b = blocks_new((const u8 *)article, ARTICLE_LEN, cuts,
				       ARTICLE_LEN);
			EXPECT_POS(blocks_find(conf, &st, b), CHICKEN_AT);
			EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
			assert_true(blocks_ok(b));
			blocks_free(b);
		}
		/* a provider with no data at all */
		SET_CTX("%s, empty stream", all_algos[i]);
		b = blocks_new((const u8 *)article, 0, NULL, 0);
		EXPECT_POS(blocks_find(conf, &st, b), UINT_MAX);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 2);
		blocks_free(b);
		textsearch_destroy(conf);
	}
}

/* ---- rules every algorithm shares --------------------------------------- */

static void test_non_overlapping(void **unused)
{
	static const unsigned int want[] = { 0, 2 };
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_aa(all_algos[i]);
		unsigned int got[8], n, cuts[3] = { 1, 2, 3 };
		struct ts_state st;
		struct blocks *b;

		SET_CTX("%s: aa in aaaa, contiguous", all_algos[i]);
		n = collect(conf, &st,
			    textsearch_find_continuous(conf, &st, "aaaa", 4),
			    got, 8);
		expect_seq(got, n, want, 2);

		SET_CTX("%s: aa in aaaa, byte blocks", all_algos[i]);
		b = blocks_new((const u8 *)"aaaa", 4, cuts, 3);
		n = collect(conf, &st, blocks_find(conf, &st, b), got, 8);
		expect_seq(got, n, want, 2);
		assert_true(blocks_ok(b));
		blocks_free(b);

		SET_CTX("%s: aa in aaaaa, kernel style", all_algos[i]);
		b = blocks_new((const u8 *)"aaaaa", 5, cuts, 3);
		n = collect(conf, &st, blocks_find_kernel_style(conf, &st, b),
			    got, 8);
		expect_seq(got, n, want, 2);
		blocks_free(b);
		textsearch_destroy(conf);
	}
}

/* After UINT_MAX, next keeps returning UINT_MAX, even on data that would
 * match again further on (no wrap-around, no restart). */
static void test_end_sticks(void **unused)
{
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_chicken(all_algos[i]);
		struct ts_state st;
		int k;

		SET_CTX("%s: no match", all_algos[i]);
		EXPECT_POS(textsearch_find_continuous(conf, &st, "chicke", 6),
			   UINT_MAX);
		for (k = 0; k < 5; k++)
			EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		SET_CTX("%s: one match", all_algos[i]);
		EXPECT_POS(textsearch_find_continuous(conf, &st, article,
						      ARTICLE_LEN),
			   CHICKEN_AT);
		for (k = 0; k < 5; k++)
			EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		/* a new find starts afresh */
		EXPECT_POS(textsearch_find_continuous(conf, &st, article,
						      ARTICLE_LEN),
			   CHICKEN_AT);
		SET_CTX("%s: empty data", all_algos[i]);
		EXPECT_POS(textsearch_find_continuous(conf, &st, article, 0),
			   UINT_MAX);
		EXPECT_POS(textsearch_find_continuous(conf, &st, NULL, 0),
			   UINT_MAX);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		textsearch_destroy(conf);
	}
}

static unsigned int kernel_finishes;

static void count_finish(struct ts_config *conf, struct ts_state *st)
{
	(void)conf;
	(void)st;
	kernel_finishes++;
}

static void test_finish_once_per_call(void **unused)
{
	static const char text[] = "chicken chicken";
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_chicken(all_algos[i]);
		unsigned int cuts[] = { 3, 9, 10 };
		struct ts_state st;
		struct blocks *b;

		SET_CTX("%s: finish, find_with", all_algos[i]);
		b = blocks_new((const u8 *)text, 15, cuts, 3);
		EXPECT_POS(blocks_find(conf, &st, b), 0);
		assert_int_equal(blocks_finishes(b), 1);
		EXPECT_POS(textsearch_next(conf, &st), 8);
		assert_int_equal(blocks_finishes(b), 2);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 3);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 4);
		blocks_free(b);

		SET_CTX("%s: finish, no match", all_algos[i]);
		b = blocks_new((const u8 *)"hen", 3, NULL, 0);
		EXPECT_POS(blocks_find(conf, &st, b), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 1);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 2);
		blocks_free(b);

		SET_CTX("%s: finish, kernel style", all_algos[i]);
		b = blocks_new((const u8 *)text, 15, cuts, 3);
		EXPECT_POS(blocks_find_kernel_style(conf, &st, b), 0);
		EXPECT_POS(textsearch_next(conf, &st), 8);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(blocks_finishes(b), 3);
		blocks_free(b);

		/* find_with without a finish: nothing to call */
		SET_CTX("%s: find_with, no finish", all_algos[i]);
		{
			struct recorder r = {
				(const u8 *)text, 15, 4, 0, 0, false, true, 0, 0
			};
			struct recorder *rp = &r;

			memcpy(st.cb, &rp, sizeof(rp));
			EXPECT_POS(textsearch_find_with(conf, &st,
							recorder_next, NULL),
				   0);
			EXPECT_POS(textsearch_next(conf, &st), 8);
			EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
			assert_int_equal(r.finishes, 0);
		}
		textsearch_destroy(conf);
	}
}

/* textsearch_find on a config whose provider nobody set: no data, so no
 * match, and a finish the caller set still runs once per call. */
static void test_find_without_provider(void **unused)
{
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_chicken(all_algos[i]);
		struct ts_state st;

		SET_CTX("%s: textsearch_find, no provider", all_algos[i]);
		EXPECT_POS(textsearch_find(conf, &st), UINT_MAX);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		conf->finish = count_finish;
		kernel_finishes = 0;
		EXPECT_POS(textsearch_find(conf, &st), UINT_MAX);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		assert_int_equal(kernel_finishes, 2);
		textsearch_destroy(conf);
	}
}

static void fsm_case(const struct ts_fsm_token *t, unsigned int ntok,
		     const char *data, const unsigned int *want,
		     unsigned int nwant)
{
	struct ts_config *conf = must_prepare("fsm", t, ntok * sizeof(*t), 0);
	unsigned int dlen = (unsigned int)strlen(data), got[64], ref[64], n;
	unsigned int cuts[64], i;
	struct ts_state st;
	struct blocks *b;

	for (i = 0; i < dlen; i++)
		cuts[i] = i + 1;
	n = ref_fsm_seq(t, ntok, (const u8 *)data, dlen, ref, 64);
	SET_CTX("fsm on '%s': the reference", data);
	expect_seq(ref, n, want, nwant);
	SET_CTX("fsm on '%s', contiguous", data);
	n = collect(conf, &st,
		    textsearch_find_continuous(conf, &st, data, dlen), got, 64);
	expect_seq(got, n, want, nwant);
	SET_CTX("fsm on '%s', byte blocks", data);
	b = blocks_new((const u8 *)data, dlen, cuts, dlen);
	n = collect(conf, &st, blocks_find(conf, &st, b), got, 64);
	expect_seq(got, n, want, nwant);
	assert_true(blocks_ok(b));
	blocks_free(b);
	textsearch_destroy(conf);
}

/* Zero-width matches move the next search on by one byte: never the same
 * match twice, and no match at the very end of the data. */
static void test_zero_width_fsm(void **unused)
{
	static const struct ts_fsm_token any_a[] = {
		TOK(SPECIFIC, ANY, 'a'),
	};
	static const struct ts_fsm_token any_wild[] = {
		TOK(WILDCARD, ANY, 0),
	};
	static const struct ts_fsm_token head_any_a[] = {
		TOK(WILDCARD, HEAD_IGNORE, 0),
		TOK(SPECIFIC, ANY, 'a'),
	};
	static const struct ts_fsm_token perhaps_x[] = {
		TOK(WILDCARD, HEAD_IGNORE, 0),
		TOK(SPECIFIC, PERHAPS, 'x'),
	};
	static const unsigned int w012[] = { 0, 1, 2 };
	static const unsigned int wx[] = { 0, 1, 2, 3 };

	(void)unused;
	fsm_case(any_a, 1, "bbb", w012, 3);
	fsm_case(any_wild, 1, "bbb", w012, 3);
	fsm_case(head_any_a, 2, "bbb", w012, 3);
	fsm_case(any_a, 1, "", NULL, 0);
	fsm_case(head_any_a, 2, "", NULL, 0);
	/* PERHAPS prefers one: "x" is a real match, the rest zero-width */
	fsm_case(perhaps_x, 2, "axbb", wx, 4);
}

/* Searches only read the config: its allocation, config and payload, is
 * byte for byte the same afterwards, also when the caller replaced
 * conf->get_next_block the kernel's way (the library then searches through
 * a private copy). */
static void expect_unchanged(struct ts_config *conf, const u8 *before)
{
	if (!conf_unchanged(conf, before))
		fail_msg("%s: the search wrote to the config", ctx);
}

static void searches(struct ts_config *conf, const char *text)
{
	unsigned int len = (unsigned int)strlen(text), cuts[] = { 5, 20 };
	struct ts_state st;
	struct blocks *b;
	unsigned int got[16];

	collect(conf, &st, textsearch_find_continuous(conf, &st, text, len),
		got, 16);
	b = blocks_new((const u8 *)text, len, cuts, 2);
	collect(conf, &st, blocks_find(conf, &st, b), got, 16);
	blocks_free(b);
}

static void test_find_continuous_never_writes(void **unused)
{
	static const char text[] = "chicken dance chicken, chicken! chick";
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL + 1; i++) {
		struct ts_config *conf;
		struct blocks *b;
		struct ts_state st;
		u8 *before;

		if (i < N_ALL) {
			conf = prepare_chicken(all_algos[i]);
		} else {
			conf = must_prepare("kmp", "ChIcKeN", 7, TS_IGNORECASE);
		}
		SET_CTX("%s, prepared", conf->ops->name);
		before = conf_snapshot(conf);
		searches(conf, text);
		expect_unchanged(conf, before);
		free(before);

		SET_CTX("%s, kernel-style provider installed", conf->ops->name);
		b = blocks_new((const u8 *)article, ARTICLE_LEN, NULL, 0);
		EXPECT_POS(blocks_find_kernel_style(conf, &st, b), CHICKEN_AT);
		before = conf_snapshot(conf);
		searches(conf, text);
		expect_unchanged(conf, before);
		free(before);
		blocks_free(b);
		textsearch_destroy(conf);
	}
}

/* ---- TS_IGNORECASE ------------------------------------------------------ */

static void expect_icase(const char *algo, u8 p, u8 d, bool match)
{
	struct ts_config *conf = must_prepare(algo, &p, 1, TS_IGNORECASE);
	struct ts_state st;

	SET_CTX("%s: 0x%02x vs 0x%02x", algo, p, d);
	EXPECT_POS(textsearch_find_continuous(conf, &st, &d, 1),
		   match ? 0 : UINT_MAX);
	textsearch_destroy(conf);
}

static void test_ignorecase(void **unused)
{
	u8 data[256 * 3];
	unsigned int c, got[300], want[300], n, nw;
	size_t i;

	(void)unused;
	for (c = 0; c < 256; c++)
		assert_int_equal(textsearch_fold((u8)c), ref_fold((u8)c));
	for (c = 0; c < 256; c++) {
		data[3 * c] = '<';
		data[3 * c + 1] = (u8)c;
		data[3 * c + 2] = '>';
	}
	for (i = 0; i < N_LITERAL; i++) {
		const char *algo = literal_algos[i];
		struct ts_config *conf;
		struct ts_state st;

		expect_icase(algo, 0xC0, 0xE0, true);
		expect_icase(algo, 0xE0, 0xC0, true);
		expect_icase(algo, 0xDE, 0xFE, true);
		expect_icase(algo, 0xD7, 0xF7, false);
		expect_icase(algo, 0xF7, 0xD7, false);
		expect_icase(algo, 0xDF, 0xFF, false);
		expect_icase(algo, 0xFF, 0xDF, false);
		expect_icase(algo, 0xDF, 0xDF, true);
		expect_icase(algo, 0xFF, 0xFF, true);
		expect_icase(algo, 0xDF, 0xBF, false);
		expect_icase(algo, 'a', 'A', true);
		expect_icase(algo, 'Z', 'z', true);
		expect_icase(algo, '@', '`', false);
		expect_icase(algo, '[', '{', false);

		SET_CTX("%s: ChIcKeN", algo);
		conf = must_prepare(algo, "ChIcKeN", 7, TS_IGNORECASE);
		EXPECT_POS(textsearch_find_continuous(
				   conf, &st, "We dance the funky CHICKEN",
				   ARTICLE_LEN),
			   CHICKEN_AT);
		EXPECT_POS(textsearch_find_continuous(conf, &st, article,
						      ARTICLE_LEN),
			   CHICKEN_AT);
		textsearch_destroy(conf);
		conf = must_prepare(algo, "ChIcKeN", 7, 0);
		EXPECT_POS(textsearch_find_continuous(conf, &st, article,
						      ARTICLE_LEN),
			   UINT_MAX);
		textsearch_destroy(conf);

		/* each byte, alone and between two others, against every
		 * byte, with and without folding */
		for (c = 0; c < 256; c++) {
			u8 pat[3] = { '<', (u8)c, '>' };
			unsigned int plen;
			int icase;

			for (icase = 0; icase < 2; icase++) {
				for (plen = 1; plen <= 3; plen += 2) {
					const u8 *p = plen == 1 ? pat + 1 : pat;

					SET_CTX("%s: pattern 0x%02x, len %u, "
						"icase %d",
						algo, c, plen, icase);
					conf = must_prepare(
						algo, p, plen,
						icase ? TS_IGNORECASE : 0);
					n = collect(conf, &st,
						    textsearch_find_continuous(
							    conf, &st, data,
							    sizeof(data)),
						    got, 300);
					nw = ref_seq(p, plen, data,
						     sizeof(data), icase, want,
						     300);
					expect_seq(got, n, want, nw);
					textsearch_destroy(conf);
				}
			}
		}
	}
}

/* ---- struct ts_state ---------------------------------------------------- */

static unsigned int typed_cb_next(unsigned int consumed, const u8 **dst,
				  struct ts_config *conf, struct ts_state *st)
{
	/* the provider may keep typed values in cb: no memcpy needed */
	const u8 *data = *(const u8 *const *)(void *)st->cb;
	uint64_t len = *(uint64_t *)(void *)(st->cb + 8);

	(void)conf;
	*(uint64_t *)(void *)(st->cb + 40) += 1;
	if (consumed >= len)
		return 0;
	*dst = data + consumed;
	return (unsigned int)(len - consumed);
}

static void test_state_cb(void **unused)
{
	struct ts_state st, *heap;
	struct ts_config *conf;

	(void)unused;
	assert_true(TS_CB_SIZE >= 48);
	assert_true(sizeof(st.cb) >= 48);
	assert_int_equal(offsetof(struct ts_state, cb) % 16, 0);
	assert_true(alignof(struct ts_state) >= 16);
	assert_int_equal((uintptr_t)st.cb % 16, 0);
	heap = malloc(sizeof(*heap));
	assert_non_null(heap);
	assert_int_equal((uintptr_t)heap->cb % 16, 0);
	free(heap);

	conf = prepare_chicken("kmp");
	*(const u8 **)(void *)st.cb = (const u8 *)article;
	*(uint64_t *)(void *)(st.cb + 8) = ARTICLE_LEN;
	*(uint64_t *)(void *)(st.cb + 40) = 0;
	SET_CTX("typed values in cb");
	EXPECT_POS(textsearch_find_with(conf, &st, typed_cb_next, NULL),
		   CHICKEN_AT);
	assert_true(*(uint64_t *)(void *)(st.cb + 40) >= 1);
	/* the library never touches cb */
	assert_ptr_equal(*(const u8 **)(void *)st.cb, (const u8 *)article);
	assert_int_equal(*(uint64_t *)(void *)(st.cb + 8), ARTICLE_LEN);
	textsearch_destroy(conf);
}

/* ---- the providers the library ships ------------------------------------ */

static void test_iovec(void **unused)
{
	struct iovec iov[] = {
		{ (void *)"We dance ", 9 },
		{ NULL, 0 },
		{ (void *)"the funky chi", 13 },
		{ (void *)"", 0 },
		{ (void *)"c", 1 },
		{ (void *)"ken", 3 },
		{ (void *)" chicken", 8 },
	};
	size_t i;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_chicken(all_algos[i]);
		struct ts_state st;

		SET_CTX("%s: iovec", all_algos[i]);
		EXPECT_POS(textsearch_find_iovec(conf, &st, iov, 7),
			   CHICKEN_AT);
		EXPECT_POS(textsearch_next(conf, &st), 27);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		EXPECT_POS(textsearch_find_iovec(conf, &st, iov, 6),
			   CHICKEN_AT);
		EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
		EXPECT_POS(textsearch_find_iovec(conf, &st, iov, 5), UINT_MAX);
		EXPECT_POS(textsearch_find_iovec(conf, &st, iov, 0), UINT_MAX);
		EXPECT_POS(textsearch_find_iovec(conf, &st, iov + 1, 1),
			   UINT_MAX);
		textsearch_destroy(conf);
	}
}

/* A file with the article after @skip bytes of filler. */
static int article_file(unsigned int skip)
{
	char path[] = "/tmp/ts_test_api_XXXXXX";
	int fd = mkstemp(path);
	unsigned int i;

	assert_true(fd >= 0);
	unlink(path);
	for (i = 0; i < skip; i++)
		assert_int_equal(write(fd, "-", 1), 1);
	assert_int_equal(write(fd, article, ARTICLE_LEN), ARTICLE_LEN);
	assert_int_equal(write(fd, " chicken", 8), 8);
	return fd;
}

static void test_reader(void **unused)
{
	static const size_t chunks[] = { 0, 1, 2, 3, 7, 64, 1 << 20 };
	size_t i, c;

	(void)unused;
	for (i = 0; i < N_ALL; i++) {
		struct ts_config *conf = prepare_chicken(all_algos[i]);

		for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct ts_reader *rd;
			struct ts_state st;
			int fd = article_file(5);
			FILE *fp;

			/* stream offset 0 is where the descriptor stood */
			SET_CTX("%s: fd reader, chunk %zu", all_algos[i],
				chunks[c]);
			assert_int_equal(lseek(fd, 5, SEEK_SET), 5);
			rd = ts_reader_from_fd(fd, chunks[c]);
			assert_non_null(rd);
			EXPECT_POS(textsearch_find_reader(conf, &st, rd),
				   CHICKEN_AT);
			EXPECT_POS(textsearch_next(conf, &st), 27);
			EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
			EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
			assert_int_equal(ts_reader_error(rd), 0);
			ts_reader_free(rd);

			assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
			rd = ts_reader_from_fd(fd, chunks[c]);
			assert_non_null(rd);
			EXPECT_POS(textsearch_find_reader(conf, &st, rd),
				   CHICKEN_AT + 5);
			ts_reader_free(rd);

			SET_CTX("%s: FILE reader, chunk %zu", all_algos[i],
				chunks[c]);
			assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
			fp = fdopen(fd, "rb");
			assert_non_null(fp);
			assert_int_equal(fseek(fp, 2, SEEK_SET), 0);
			rd = ts_reader_from_file(fp, chunks[c]);
			assert_non_null(rd);
			EXPECT_POS(textsearch_find_reader(conf, &st, rd),
				   CHICKEN_AT + 3);
			EXPECT_POS(textsearch_next(conf, &st), 30);
			EXPECT_POS(textsearch_next(conf, &st), UINT_MAX);
			assert_int_equal(ts_reader_error(rd), 0);
			ts_reader_free(rd); /* never closes the stream */
			assert_int_equal(fclose(fp), 0);
		}
		textsearch_destroy(conf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_autoload_and_gfp_atomic),
		cmocka_unit_test(test_prepare_errors),
		cmocka_unit_test(test_err_ptr_helpers),
		cmocka_unit_test(test_register_errors),
		cmocka_unit_test(test_register_lifecycle),
		cmocka_unit_test(test_custom_algorithm_providers),
		cmocka_unit_test(test_alloc_ts_config),
		cmocka_unit_test(test_destroy_null_and_errors),
		cmocka_unit_test(test_pattern_getters),
		cmocka_unit_test(test_strerror_and_last_error),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_article_examples),
		cmocka_unit_test(test_get_next_block_semantics),
		cmocka_unit_test(test_block_splits),
		cmocka_unit_test(test_non_overlapping),
		cmocka_unit_test(test_end_sticks),
		cmocka_unit_test(test_finish_once_per_call),
		cmocka_unit_test(test_find_without_provider),
		cmocka_unit_test(test_zero_width_fsm),
		cmocka_unit_test(test_find_continuous_never_writes),
		cmocka_unit_test(test_ignorecase),
		cmocka_unit_test(test_state_cb),
		cmocka_unit_test(test_iovec),
		cmocka_unit_test(test_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
