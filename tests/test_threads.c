/*
 * test_threads.c - one config per algorithm shared by eight threads, each
 * with its own ts_state and its own providers, every result checked against
 * the reference; meanwhile the same threads prepare, destroy, register and
 * unregister.  Meant to run under ThreadSanitizer (SANITIZE=thread) too.
 *
 * cmocka is not thread-safe: worker threads only count and describe
 * failures, and the main thread asserts.  TS_THREAD_ITERS sets the number
 * of searches per thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsm_reference.h"
#include "testsupport.h"
#include "textsearch.h"
#include "textsearch_fsm.h"

#define NTHREADS 8

static const char article[] = "We dance the funky chicken";
#define ARTICLE_LEN ((unsigned int)sizeof(article) - 1)

/* Failures, counted by any thread; the first one is described. */
static atomic_uint failures;
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_msg[512];

static void failure(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&failures, 1) != 0)
		return;
	pthread_mutex_lock(&msg_lock);
	va_start(ap, fmt);
	vsnprintf(first_msg, sizeof(first_msg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&msg_lock);
}

/* Called once the threads are joined.  The message is copied out first:
 * fail_msg() leaves the test by longjmp, which must not skip the unlock
 * (the next test would wait on the lock for ever). */
static void expect_no_failures(void)
{
	unsigned int n = atomic_exchange(&failures, 0);
	char msg[sizeof(first_msg)];

	pthread_mutex_lock(&msg_lock);
	memcpy(msg, first_msg, sizeof(msg));
	pthread_mutex_unlock(&msg_lock);
	if (n)
		fail_msg("%u failure(s); first: %s", n, msg);
}

static void run_threads(void *(*fn)(void *), void *args, size_t argsize)
{
	pthread_t t[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, fn,
						(char *)args + i * argsize),
				 0);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
}

/* ---- concurrent TS_AUTOLOAD (first: nothing has loaded the plugin) ---- */

static pthread_barrier_t start_line;

struct autoload_arg {
	int id;
};

static void *autoload_worker(void *p)
{
	const struct autoload_arg *a = p;
	struct ts_config *conf;
	struct ts_state st;
	char name[16];
	unsigned int pos;

	pthread_barrier_wait(&start_line);
	conf = textsearch_prepare("shiftor", "chicken", 7, GFP_KERNEL,
				  TS_AUTOLOAD);
	if (IS_ERR(conf)) {
		failure("thread %d: autoload shiftor: %s (%s)", a->id,
			textsearch_strerror((int)PTR_ERR(conf)),
			textsearch_last_error());
		return NULL;
	}
	pos = textsearch_find_continuous(conf, &st, article, ARTICLE_LEN);
	if (pos != 19)
		failure("thread %d: shiftor found %u", a->id, pos);
	textsearch_destroy(conf);

	/* the error text is per thread: each sees its own name in it */
	snprintf(name, sizeof(name), "nosuch_%d", a->id);
	conf = textsearch_prepare(name, "x", 1, GFP_KERNEL, TS_AUTOLOAD);
	if (!IS_ERR(conf) || PTR_ERR(conf) != -ENOENT)
		failure("thread %d: %s did not give -ENOENT", a->id, name);
	else if (!strstr(textsearch_last_error(), name))
		failure("thread %d: last error '%s' is not about %s", a->id,
			textsearch_last_error(), name);
	return NULL;
}

static void test_concurrent_autoload(void **unused)
{
	struct autoload_arg args[NTHREADS];
	struct ts_config *conf;
	int i;

	(void)unused;
	conf = textsearch_prepare("shiftor", "x", 1, GFP_KERNEL, 0);
	assert_true(IS_ERR(conf));
	assert_int_equal(PTR_ERR(conf), -ENOENT);
	for (i = 0; i < NTHREADS; i++)
		args[i].id = i;
	assert_int_equal(pthread_barrier_init(&start_line, NULL, NTHREADS), 0);
	run_threads(autoload_worker, args, sizeof(args[0]));
	pthread_barrier_destroy(&start_line);
	expect_no_failures();
	/* loaded once, and registered */
	conf = textsearch_prepare("shiftor", "x", 1, GFP_ATOMIC, 0);
	assert_false(IS_ERR(conf));
	textsearch_destroy(conf);
}

/* ---- concurrent register / unregister ----------------------------------- */

struct plain {
	unsigned int len;
	u8 pat[8];
};

static struct ts_config *plain_init(const void *pattern, unsigned int len,
				    gfp_t gfp_mask, int flags)
{
	struct ts_config *conf;
	struct plain *p;

	(void)flags;
	if (len > sizeof(p->pat))
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(sizeof(*p), gfp_mask);
	if (IS_ERR(conf))
		return conf;
	p = ts_config_priv(conf);
	p->len = len;
	memcpy(p->pat, pattern, len);
	return conf;
}

/* Matches only at the search offset: enough to see it is used. */
static unsigned int plain_find(struct ts_config *conf, struct ts_state *st)
{
	const struct plain *p = ts_config_priv(conf);
	unsigned int have = 0, n, take;
	const u8 *blk;

	while (have < p->len &&
	       (n = conf->get_next_block(st->offset + have, &blk, conf, st))) {
		take = n < p->len - have ? n : p->len - have;
		if (memcmp(blk, p->pat + have, take))
			return UINT_MAX;
		have += take;
	}
	if (have < p->len)
		return UINT_MAX;
	st->offset += p->len;
	return st->offset - p->len;
}

static void *plain_get_pattern(struct ts_config *conf)
{
	return ((struct plain *)ts_config_priv(conf))->pat;
}

static unsigned int plain_get_pattern_len(struct ts_config *conf)
{
	return ((struct plain *)ts_config_priv(conf))->len;
}

struct reg_arg {
	int id;
	struct ts_ops same; /* all threads: name "racer" */
	struct ts_ops own;  /* name of its own */
	char own_name[16];
	int same_result;
};

static void *register_worker(void *p)
{
	struct reg_arg *a = p;
	struct ts_config *conf;
	struct ts_state st;
	int round, err;

	pthread_barrier_wait(&start_line);
	a->same_result = textsearch_register(&a->same);
	for (round = 0; round < 50; round++) {
		err = textsearch_register(&a->own);
		if (err) {
			failure("thread %d: register %s: %d", a->id,
				a->own_name, err);
			return NULL;
		}
		conf = textsearch_prepare(a->own_name, "We", 2, GFP_KERNEL, 0);
		if (IS_ERR(conf)) {
			failure("thread %d: prepare %s: %ld", a->id,
				a->own_name, PTR_ERR(conf));
			return NULL;
		}
		if (textsearch_unregister(&a->own) != -EBUSY)
			failure("thread %d: unregister while in use", a->id);
		if (textsearch_find_continuous(conf, &st, article,
					       ARTICLE_LEN) != 0)
			failure("thread %d: %s did not match", a->id,
				a->own_name);
		textsearch_destroy(conf);
		err = textsearch_unregister(&a->own);
		if (err)
			failure("thread %d: unregister %s: %d", a->id,
				a->own_name, err);
	}
	return NULL;
}

static void test_concurrent_register(void **unused)
{
	static struct reg_arg args[NTHREADS];
	const struct ts_ops base = {
		.init = plain_init,
		.find = plain_find,
		.get_pattern = plain_get_pattern,
		.get_pattern_len = plain_get_pattern_len,
	};
	int i, winners = 0;

	(void)unused;
	for (i = 0; i < NTHREADS; i++) {
		args[i].id = i;
		args[i].same = base;
		args[i].same.name = "racer";
		args[i].own = base;
		snprintf(args[i].own_name, sizeof(args[i].own_name), "plain_%d",
			 i);
		args[i].own.name = args[i].own_name;
	}
	assert_int_equal(pthread_barrier_init(&start_line, NULL, NTHREADS), 0);
	run_threads(register_worker, args, sizeof(args[0]));
	pthread_barrier_destroy(&start_line);
	expect_no_failures();
	/* exactly one "racer" won; the others saw -EEXIST */
	for (i = 0; i < NTHREADS; i++) {
		if (args[i].same_result == 0) {
			winners++;
			assert_int_equal(textsearch_unregister(&args[i].same),
					 0);
		} else {
			assert_int_equal(args[i].same_result, -EEXIST);
			assert_int_equal(textsearch_unregister(&args[i].same),
					 -ENOENT);
		}
	}
	assert_int_equal(winners, 1);
}

/* ---- shared configs ----------------------------------------------------- */

enum {
	A_KMP,
	A_BM,
	A_SHIFTOR,
	A_RB_AVX512,
	A_RB_AVX2,
	A_RB_SSE2,
	A_RB_SCALAR,
	A_TEDDY,
	A_TEDDY_SCALAR,
	A_FSM,
	N_ALGOS
};

static const char *const algo_names[N_ALGOS] = {
	"kmp",
	"bm",
	"shiftor",
	"rarebyte_avx512",
	"rarebyte_avx2",
	"rarebyte_sse2",
	"rarebyte_scalar",
	"teddy",
	"teddy_scalar",
	"fsm",
};

/* One pattern per algorithm, some folding case; rarebyte's longer ones
 * reach past a vector. */
static const char *const literal_pats[N_ALGOS] = {
	"abCa",
	"abcab",
	"BcA",
	"cabBAzcabBAzcabBAzcabBAzcabBAzcabBAzcabBAzcabBAzcabBAzcabBAzcabBAz",
	"abcabcabcabcabcabcabcabcabcabcabcabcz",
	"Ba",
	"bca",
	"cAbzcAbzcAbzcAbzcAbzcAbzcAbzcAbzcAbzcAbzcAbz",
	"zcab",
	NULL,
};
static const int literal_flags[N_ALGOS] = {
	TS_IGNORECASE,
	0,
	TS_IGNORECASE,
	TS_IGNORECASE,
	0,
	TS_IGNORECASE,
	0,
	TS_IGNORECASE,
	0,
	0,
};

/* fsm: skip anything, 'a', one or more lower-case letters, 'c' */
static const struct ts_fsm_token shared_tokens[] = {
	{ TS_FSM_WILDCARD, TS_FSM_HEAD_IGNORE, 0 },
	{ TS_FSM_SPECIFIC, TS_FSM_SINGLE, 'a' },
	{ TS_FSM_LOWER, TS_FSM_MULTI, 0 },
	{ TS_FSM_SPECIFIC, TS_FSM_SINGLE, 'c' },
};
#define N_SHARED_TOKENS \
	((unsigned int)(sizeof(shared_tokens) / sizeof(shared_tokens[0])))

static struct ts_config *shared[N_ALGOS];

static struct ts_config *prepare_algo(int a, gfp_t gfp)
{
	if (a == A_FSM)
		return textsearch_prepare("fsm", shared_tokens,
					  sizeof(shared_tokens), gfp, 0);
	return textsearch_prepare(algo_names[a], literal_pats[a],
				  (unsigned int)strlen(literal_pats[a]), gfp,
				  literal_flags[a] | TS_AUTOLOAD);
}

/* The reference's matches of algorithm @a's pattern. */
static unsigned int expected(int a, const u8 *data, unsigned int dlen,
			     unsigned int *out, unsigned int max)
{
	unsigned int n = 0, from = 0, pos, end;

	while (n < max && from <= dlen) {
		if (a == A_FSM) {
			pos = ref_fsm_find(shared_tokens, N_SHARED_TOKENS, data,
					   dlen, from, &end);
		} else {
			unsigned int plen =
				(unsigned int)strlen(literal_pats[a]);

			pos = ref_find((const u8 *)literal_pats[a], plen, data,
				       dlen, from,
				       literal_flags[a] & TS_IGNORECASE);
			end = pos + plen;
		}
		if (pos == UINT_MAX)
			break;
		out[n++] = pos;
		from = end > pos ? end : pos + 1;
	}
	return n;
}

enum { P_CONTINUOUS, P_BLOCKS, P_IOVEC, P_PRIVATE, N_PROVIDERS };

struct search_arg {
	int id;
	unsigned long iters;
	uint64_t seed;
	unsigned long searches, matches;
};

static void random_data(struct rng *r, int a, u8 *data, unsigned int len)
{
	static const u8 alpha[] = { 'a', 'b', 'c', 'A', 'B', 'C', 'z', ' ' };
	const char *plant = a == A_FSM ? "abzc" : literal_pats[a];
	unsigned int i, plen = (unsigned int)strlen(plant);

	for (i = 0; i < len; i++)
		data[i] = alpha[rng_below(r, sizeof(alpha))];
	while (len >= plen && rng_below(r, 3)) {
		unsigned int at = rng_below(r, len - plen + 1);

		memcpy(data + at, plant, plen);
	}
}

/* Check one search sequence: @pos is the result of the find. */
static bool check_sequence(struct search_arg *sa, int a, int prov,
			   struct ts_config *conf, struct ts_state *st,
			   unsigned int pos, const unsigned int *want,
			   unsigned int nwant)
{
	unsigned int i;

	for (i = 0; i <= nwant; i++) {
		unsigned int w = i < nwant ? want[i] : UINT_MAX;

		if (pos != w) {
			failure("thread %d: %s, provider %d: match %u at %u, "
				"want %u",
				sa->id, algo_names[a], prov, i, pos, w);
			return false;
		}
		sa->matches++;
		pos = textsearch_next(conf, st);
	}
	if (pos != UINT_MAX) {
		failure("thread %d: %s: next after the end gave %u", sa->id,
			algo_names[a], pos);
		return false;
	}
	return true;
}

/* Searches through one of the shared configs, or now and then through a
 * config of its own prepared and destroyed on the spot. */
static void *search_worker(void *p)
{
	struct search_arg *sa = p;
	struct rng r = { sa->seed };
	unsigned long it;
	u8 data[300];
	unsigned int want[310];

	for (it = 0; it < sa->iters; it++) {
		int a = (int)rng_below(&r, N_ALGOS);
		int prov = (int)rng_below(&r, N_PROVIDERS);
		unsigned int dlen = rng_below(&r, sizeof(data));
		struct ts_config *conf = shared[a];
		struct blocks *b = NULL;
		struct iovec iov[8];
		struct ts_state st;
		unsigned int nwant, pos, i, at;

		random_data(&r, a, data, dlen);
		nwant = expected(a, data, dlen, want, 310);
		switch (prov) {
		case P_CONTINUOUS:
			pos = textsearch_find_continuous(conf, &st, data, dlen);
			break;
		case P_BLOCKS:
			b = blocks_random(data, dlen, &r,
					  1 + (int)rng_below(&r, 2));
			pos = blocks_find(conf, &st, b);
			break;
		case P_IOVEC:
			for (i = 0, at = 0; i < 8; i++) {
				unsigned int n =
					i == 7 ? dlen - at :
						 rng_below(&r, dlen - at + 1);

				iov[i].iov_base = data + at;
				iov[i].iov_len = n;
				at += n;
			}
			pos = textsearch_find_iovec(conf, &st, iov, 8);
			break;
		default:
			/* same name as the shared one, made and gone here */
			conf = prepare_algo(a, rng_below(&r, 2) ? GFP_KERNEL :
								  GFP_ATOMIC);
			if (IS_ERR(conf)) {
				failure("thread %d: prepare %s: %ld", sa->id,
					algo_names[a], PTR_ERR(conf));
				return NULL;
			}
			pos = textsearch_find_continuous(conf, &st, data, dlen);
			break;
		}
		sa->searches++;
		if (!check_sequence(sa, a, prov, conf, &st, pos, want, nwant))
			return NULL;
		if (b && (!blocks_ok(b) || blocks_finishes(b) != nwant + 2)) {
			failure("thread %d: %s: provider contract broken",
				sa->id, algo_names[a]);
			return NULL;
		}
		blocks_free(b);
		if (prov == P_PRIVATE)
			textsearch_destroy(conf);
	}
	return NULL;
}

static unsigned long iterations(void)
{
	const char *env = getenv("TS_THREAD_ITERS");

	return env ? strtoul(env, NULL, 0) : 4000ul;
}

static void test_shared_configs(void **unused)
{
	struct search_arg args[NTHREADS];
	uint64_t seed = test_seed("threads", 424242);
	unsigned long searches = 0, matches = 0;
	int a, i;

	(void)unused;
	for (a = 0; a < N_ALGOS; a++) {
		shared[a] = prepare_algo(a, GFP_KERNEL);
		if (IS_ERR(shared[a]))
			fail_msg("prepare %s: %s (%s)", algo_names[a],
				 textsearch_strerror((int)PTR_ERR(shared[a])),
				 textsearch_last_error());
	}
	for (i = 0; i < NTHREADS; i++) {
		args[i] = (struct search_arg){ i, iterations(),
					       seed + (uint64_t)i * 7919, 0,
					       0 };
	}
	run_threads(search_worker, args, sizeof(args[0]));
	for (i = 0; i < NTHREADS; i++) {
		searches += args[i].searches;
		matches += args[i].matches;
	}
	printf("# threads: %d threads, %lu searches, %lu results checked\n",
	       NTHREADS, searches, matches);
	for (a = 0; a < N_ALGOS; a++)
		textsearch_destroy(shared[a]);
	expect_no_failures();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_autoload),
		cmocka_unit_test(test_concurrent_register),
		cmocka_unit_test(test_shared_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
