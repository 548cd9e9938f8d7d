/*
 * test_plugins.c - TS_AUTOLOAD: loading the shipped shiftor plugin and a
 * good test plugin, names that must never become paths, GFP_ATOMIC, and
 * every kind of broken plugin refused with -ELIBBAD and a message that
 * names the file and the reason, the process surviving all of them.
 *
 * tests/run-tests.sh sets TEXTSEARCH_PLUGIN_PATH to
 * $BUILD/plugins:$BUILD/test-plugins.  The tests run in order in one
 * process and some rely on what earlier ones loaded (each says so).
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testsupport.h"

/* How many objects named ts_<name>.so are mapped in this process. */
struct count_arg {
	char suffix[64];
	int n;
};

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct count_arg *a = data;
	size_t len = strlen(info->dlpi_name), slen = strlen(a->suffix);

	(void)size;
	if (len >= slen && strcmp(info->dlpi_name + len - slen, a->suffix) == 0)
		a->n++;
	return 0;
}

static int loaded(const char *name)
{
	struct count_arg a = { .n = 0 };

	snprintf(a.suffix, sizeof(a.suffix), "/ts_%s.so", name);
	dl_iterate_phdr(count_cb, &a);
	return a.n;
}

/* Prepare and return the error (0 on success, the config then destroyed
 * unless @keep). */
static int prepare_err(const char *algo, int flags, gfp_t gfp,
		       struct ts_config **keep)
{
	struct ts_config *conf;
	int err;

	errno = 0;
	conf = textsearch_prepare(algo, "chicken", 7, gfp, flags);
	if (IS_ERR(conf)) {
		err = (int)PTR_ERR(conf);
		assert_int_equal(errno, -err); /* errno set as well */
		return err;
	}
	if (keep)
		*keep = conf;
	else
		textsearch_destroy(conf);
	return 0;
}

static const char article[] = "We dance the funky chicken";

/* ---- shiftor: loaded once, even by threads racing to load it ---- */

#define RACERS 8
static pthread_barrier_t race_barrier;

static void *race_prepare(void *arg)
{
	struct ts_config *conf;
	struct ts_state st;
	unsigned int *pos = arg;

	pthread_barrier_wait(&race_barrier);
	conf = textsearch_prepare("shiftor", "chicken", 7, GFP_KERNEL,
				  TS_AUTOLOAD);
	if (IS_ERR(conf)) {
		*pos = 0;
		return NULL;
	}
	*pos = textsearch_find_continuous(conf, &st, article,
					  sizeof(article) - 1);
	textsearch_destroy(conf);
	return NULL;
}

/* Runs first: nothing has loaded shiftor yet. */
static void test_autoload_race(void **unused)
{
	pthread_t t[RACERS];
	unsigned int pos[RACERS];
	int i;

	(void)unused;
	assert_int_equal(loaded("shiftor"), 0);
	assert_int_equal(prepare_err("shiftor", 0, GFP_KERNEL, NULL),
			 -ENOENT);
	pthread_barrier_init(&race_barrier, NULL, RACERS);
	for (i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race_prepare,
						&pos[i]), 0);
	for (i = 0; i < RACERS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(pos[i], 19);
	}
	pthread_barrier_destroy(&race_barrier);
	assert_int_equal(loaded("shiftor"), 1);
}

static void test_shiftor_basics(void **unused)
{
	struct ts_config *conf;
	struct ts_state st;
	unsigned int cuts[] = { 15, 22 };
	struct blocks *b;

	(void)unused;
	/* loaded by the previous test: no TS_AUTOLOAD needed any more, and
	 * GFP_ATOMIC is fine since nothing has to be loaded */
	conf = textsearch_prepare("shiftor", "chicken", 7, GFP_ATOMIC, 0);
	assert_false(IS_ERR(conf));
	assert_string_equal(textsearch_last_error(), "");
	assert_int_equal(textsearch_get_pattern_len(conf), 7);
	assert_memory_equal(textsearch_get_pattern(conf), "chicken", 7);
	assert_int_equal(textsearch_find_continuous(conf, &st, article,
						    sizeof(article) - 1),
			 19);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	/* across the article's three fragments */
	b = blocks_new((const u8 *)article, sizeof(article) - 1, cuts, 2);
	assert_int_equal(blocks_find(conf, &st, b), 19);
	assert_true(blocks_ok(b));
	blocks_free(b);
	textsearch_destroy(conf);

	/* non-overlapping */
	conf = textsearch_prepare("shiftor", "aa", 2, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_int_equal(textsearch_find_continuous(conf, &st, "aaaa", 4), 0);
	assert_int_equal(textsearch_next(conf, &st), 2);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	textsearch_destroy(conf);

	/* case folding, ASCII and ISO-8859-1, through textsearch_fold() */
	conf = textsearch_prepare("shiftor", "Caf\xc9", 4, GFP_KERNEL,
				  TS_IGNORECASE);
	assert_false(IS_ERR(conf));
	assert_int_equal(textsearch_find_continuous(conf, &st,
						    "un cAF\xe9 noir", 12),
			 3);
	assert_memory_equal(textsearch_get_pattern(conf), "Caf\xc9", 4);
	textsearch_destroy(conf);
	conf = textsearch_prepare("shiftor", "\xdf\xff", 2, GFP_KERNEL,
				  TS_IGNORECASE);
	assert_false(IS_ERR(conf));
	/* 0xDF and 0xFF fold only to themselves */
	assert_int_equal(textsearch_find_continuous(conf, &st,
						    "\xff\xdf\xdf\xff", 4),
			 2);
	textsearch_destroy(conf);
}

/* Every length around the word boundaries and the stack limit, against the
 * reference, contiguous and in random blocks, with and without folding. */
static void test_shiftor_lengths(void **unused)
{
	static const unsigned int lens[] = { 1,    2,    31,   63,   64,
					     65,   127,  128,  129,  1000,
					     2047, 2048, 2049, 4097, 20000 };
	struct rng r = { test_seed("shiftor lengths", 77) };
	unsigned int li, round, i;
	unsigned long compared = 0;

	(void)unused;
	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (round = 0; round < 6; round++) {
			unsigned int plen = lens[li];
			unsigned int dlen = plen * 3 + rng_below(&r, 200);
			bool icase = round & 1;
			u8 *pat = malloc(plen), *data = malloc(dlen);
			struct ts_config *conf;
			struct ts_state s1, s2;
			struct blocks *b;
			unsigned int want, got1, got2;
			u8 before[64];

			assert_non_null(pat);
			assert_non_null(data);
			for (i = 0; i < plen; i++)
				pat[i] = "abAB"[rng_below(&r, icase ? 4 : 2)];
			for (i = 0; i < dlen; i++)
				data[i] = "abAB"[rng_below(&r, icase ? 4 : 2)];
			/* plant the pattern a few times, sometimes touching */
			for (i = 0; i < 3; i++) {
				unsigned int at = rng_below(&r, dlen - plen + 1);

				memcpy(data + at, pat, plen);
				if (round >= 4 && at + 2 * plen <= dlen)
					memcpy(data + at + plen, pat, plen);
			}
			if (icase)
				for (i = 0; i < dlen; i++)
					if (rng_below(&r, 2))
						data[i] ^= 0x20;

			conf = textsearch_prepare("shiftor", pat, plen,
						  GFP_KERNEL,
						  icase ? TS_IGNORECASE : 0);
			assert_false(IS_ERR(conf));
			/* the config is read-only while searching */
			memcpy(before, conf, sizeof(*conf));
			b = blocks_random(data, dlen, &r,
					  (int)rng_below(&r, 3));
			want = ref_find(pat, plen, data, dlen, 0, icase);
			got1 = textsearch_find_continuous(conf, &s1, data,
							  dlen);
			got2 = blocks_find(conf, &s2, b);
			for (;;) {
				assert_int_equal(got1, want);
				assert_int_equal(got2, want);
				compared++;
				if (want == UINT_MAX)
					break;
				want = ref_find(pat, plen, data, dlen,
						want + plen, icase);
				got1 = textsearch_next(conf, &s1);
				got2 = textsearch_next(conf, &s2);
			}
			assert_true(blocks_ok(b));
			assert_memory_equal(before, conf, sizeof(*conf));
			blocks_free(b);
			textsearch_destroy(conf);
			free(pat);
			free(data);
		}
	}
	printf("# shiftor lengths: %lu results compared\n", compared);
}

/* ---- the good test plugin, and what must not load it ---- */

/* Runs before anything loads naive. */
static void test_no_autoload(void **unused)
{
	(void)unused;
	assert_int_equal(loaded("naive"), 0);
	assert_int_equal(prepare_err("naive", 0, GFP_KERNEL, NULL), -ENOENT);
	assert_non_null(strstr(textsearch_last_error(), "naive"));
	assert_int_equal(prepare_err("naive", TS_IGNORECASE, GFP_KERNEL,
				     NULL),
			 -ENOENT);
	assert_int_equal(loaded("naive"), 0);

	/* TS_AUTOLOAD and no such file anywhere */
	assert_int_equal(prepare_err("nosuchplugin", TS_AUTOLOAD, GFP_KERNEL,
				     NULL),
			 -ENOENT);
	assert_non_null(strstr(textsearch_last_error(), "ts_nosuchplugin.so"));
}

static void test_gfp_atomic_never_loads(void **unused)
{
	(void)unused;
	assert_int_equal(prepare_err("naive", TS_AUTOLOAD, GFP_ATOMIC, NULL),
			 -ENOENT);
	assert_non_null(strstr(textsearch_last_error(), "GFP_ATOMIC"));
	assert_int_equal(loaded("naive"), 0);
	/* nor a broken one: it is not even opened */
	assert_int_equal(prepare_err("garbage", TS_AUTOLOAD, GFP_ATOMIC,
				     NULL),
			 -ENOENT);
}

static void test_names_never_paths(void **unused)
{
	static const char *const bad[] = {
		"../x", "a/b", "", "abcdefghijklmnop", "/naive", "naive.so",
		"..", ".", "ts_naive.so", " naive", "naive ", "na-ive",
		"na\xefve", "../test-plugins/ts_naive", "x:y",
	};
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(prepare_err(bad[i], TS_AUTOLOAD, GFP_KERNEL,
					     NULL),
				 -EINVAL);
		assert_int_equal(prepare_err(bad[i], 0, GFP_KERNEL, NULL),
				 -EINVAL);
	}
	assert_int_equal(loaded("naive"), 0);
	/* 15 characters is a valid name (there is just no such plugin) */
	assert_int_equal(prepare_err("abcdefghijklmno", TS_AUTOLOAD,
				     GFP_KERNEL, NULL),
			 -ENOENT);
	/* the length is checked first */
	errno = 0;
	assert_int_equal(PTR_ERR(textsearch_prepare("../x", "x", 0,
						    GFP_KERNEL, TS_AUTOLOAD)),
			 -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static void test_naive_plugin(void **unused)
{
	struct ts_config *conf = NULL;
	struct ts_state st;

	(void)unused;
	assert_int_equal(prepare_err("naive", TS_AUTOLOAD, GFP_KERNEL,
				     &conf),
			 0);
	assert_int_equal(loaded("naive"), 1);
	assert_int_equal(textsearch_find_continuous(conf, &st, article,
						    sizeof(article) - 1),
			 19);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	/* while a config lives, the plugin's ops cannot go */
	assert_int_equal(textsearch_unregister(conf->ops), -EBUSY);
	textsearch_destroy(conf);
}

/* A second prepare after a load does not load again: with the path now
 * pointing at a directory whose ts_naive.so is garbage, a load would fail. */
static void test_load_once(void **unused)
{
	char dir[] = "/tmp/ts-plugins.XXXXXX", path[128];
	const char *orig = getenv("TEXTSEARCH_PLUGIN_PATH");
	char *saved = orig ? strdup(orig) : NULL;
	struct ts_config *conf = NULL;
	struct ts_ops *ops;
	FILE *f;

	(void)unused;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ts_naive.so", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not a plugin\n", f);
	fclose(f);
	setenv("TEXTSEARCH_PLUGIN_PATH", dir, 1);

	assert_int_equal(prepare_err("naive", TS_AUTOLOAD, GFP_KERNEL,
				     &conf),
			 0);
	assert_int_equal(loaded("naive"), 1);
	ops = conf->ops;
	textsearch_destroy(conf);

	/* unregistered, it is unknown again; TS_AUTOLOAD now finds the
	 * garbage file first and refuses it */
	assert_int_equal(textsearch_unregister(ops), 0);
	assert_int_equal(prepare_err("naive", 0, GFP_KERNEL, NULL), -ENOENT);
	assert_int_equal(prepare_err("naive", TS_AUTOLOAD, GFP_KERNEL, NULL),
			 -ELIBBAD);
	assert_non_null(strstr(textsearch_last_error(), path));

	/* back to the real path: the same object is registered again */
	if (saved)
		setenv("TEXTSEARCH_PLUGIN_PATH", saved, 1);
	else
		unsetenv("TEXTSEARCH_PLUGIN_PATH");
	assert_int_equal(prepare_err("naive", TS_AUTOLOAD, GFP_KERNEL, &conf),
			 0);
	assert_ptr_equal(conf->ops, ops);
	assert_int_equal(loaded("naive"), 1);
	textsearch_destroy(conf);

	unlink(path);
	rmdir(dir);
	free(saved);
}

/* ---- broken plugins ---- */

static void test_broken_plugins(void **unused)
{
	static const struct {
		const char *name, *reason;
	} broken[] = {
		{ "badabi", "plugin ABI 42" },
		{ "badsize", "struct ts_ops is" },
		{ "badname", "provides algorithm 'impostor'" },
		{ "nullops", "provides algorithm '(none)'" },
		{ "nofind", "lacks init, find" },
		{ "nodesc", "no 'textsearch_plugin' descriptor" },
		{ "smalldesc", "struct ts_plugin is" },
		{ "undefsym", "ts_test_no_such_function" },
		{ "garbage", "cannot load" },
	};
	size_t i;
	int round;

	(void)unused;
	for (i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		char file[64];

		snprintf(file, sizeof(file), "/ts_%s.so", broken[i].name);
		for (round = 0; round < 2; round++) {
			const char *msg;

			assert_int_equal(prepare_err(broken[i].name,
						     TS_AUTOLOAD, GFP_KERNEL,
						     NULL),
					 -ELIBBAD);
			msg = textsearch_last_error();
			if (round == 0)
				printf("# %s: %s\n", broken[i].name, msg);
			assert_non_null(strstr(msg, file));
			assert_non_null(strstr(msg, broken[i].reason));
		}
		/* refused objects are not left loaded, nor registered */
		assert_int_equal(loaded(broken[i].name), 0);
		assert_int_equal(prepare_err(broken[i].name, 0, GFP_KERNEL,
					     NULL),
				 -ENOENT);
	}
	assert_int_equal(textsearch_strerror(-ELIBBAD)[0] != '\0', 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_autoload_race),
		cmocka_unit_test(test_shiftor_basics),
		cmocka_unit_test(test_shiftor_lengths),
		cmocka_unit_test(test_no_autoload),
		cmocka_unit_test(test_gfp_atomic_never_loads),
		cmocka_unit_test(test_names_never_paths),
		cmocka_unit_test(test_naive_plugin),
		cmocka_unit_test(test_load_once),
		cmocka_unit_test(test_broken_plugins),
	};

	if (!getenv("TEXTSEARCH_PLUGIN_PATH")) {
		fprintf(stderr, "test_plugins: set TEXTSEARCH_PLUGIN_PATH "
				"(tests/run-tests.sh does)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
