/*
 * test_plugins.c - TS_AUTOLOAD: loading the shipped shiftor plugin and a
 * good test plugin, names that must never become paths, GFP_ATOMIC, and
 * every kind of broken plugin refused with -ELIBBAD and a message that
 * names the file and the reason, the process surviving all of them.
 *
 * tests/run-tests.sh sets TEXTSEARCH_PLUGIN_PATH to
 * $BUILD/plugins:$BUILD/test-plugins, made absolute.  The tests run in order
 * in one process and some rely on what earlier ones loaded (each says so).
 *
 * Plugins are code that runs on dlopen, so only trusted places are
 * searched: the ctor test plugin leaves a marker file when its constructor
 * runs, which shows that a refused plugin was never loaded at all.
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
#include <sys/stat.h>
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
	assert_int_equal(prepare_err("shiftor", 0, GFP_KERNEL, NULL), -ENOENT);
	pthread_barrier_init(&race_barrier, NULL, RACERS);
	for (i = 0; i < RACERS; i++)
		assert_int_equal(
			pthread_create(&t[i], NULL, race_prepare, &pos[i]), 0);
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
	static const unsigned int lens[] = { 1,	   2,	 31,   63,   64,
					     65,   127,	 128,  129,  1000,
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
			u8 *before;

			assert_non_null(pat);
			assert_non_null(data);
			for (i = 0; i < plen; i++)
				pat[i] = "abAB"[rng_below(&r, icase ? 4 : 2)];
			for (i = 0; i < dlen; i++)
				data[i] = "abAB"[rng_below(&r, icase ? 4 : 2)];
			/* plant the pattern a few times, sometimes touching */
			for (i = 0; i < 3; i++) {
				unsigned int at =
					rng_below(&r, dlen - plen + 1);

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
			before = conf_snapshot(conf);
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
			assert_true(conf_unchanged(conf, before));
			free(before);
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
	assert_int_equal(prepare_err("naive", TS_IGNORECASE, GFP_KERNEL, NULL),
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
	assert_int_equal(prepare_err("garbage", TS_AUTOLOAD, GFP_ATOMIC, NULL),
			 -ENOENT);
}

static void test_names_never_paths(void **unused)
{
	static const char *const bad[] = {
		"../x",
		"a/b",
		"",
		"abcdefghijklmnop",
		"/naive",
		"naive.so",
		"..",
		".",
		"ts_naive.so",
		" naive",
		"naive ",
		"na-ive",
		"na\xefve",
		"../test-plugins/ts_naive",
		"x:y",
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
	assert_int_equal(prepare_err("abcdefghijklmno", TS_AUTOLOAD, GFP_KERNEL,
				     NULL),
			 -ENOENT);
	/* the length is checked first */
	errno = 0;
	assert_int_equal(PTR_ERR(textsearch_prepare("../x", "x", 0, GFP_KERNEL,
						    TS_AUTOLOAD)),
			 -EINVAL);
	assert_int_equal(errno, EINVAL);
}

static void test_naive_plugin(void **unused)
{
	struct ts_config *conf = NULL;
	struct ts_state st;

	(void)unused;
	assert_int_equal(prepare_err("naive", TS_AUTOLOAD, GFP_KERNEL, &conf),
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

	assert_int_equal(prepare_err("naive", TS_AUTOLOAD, GFP_KERNEL, &conf),
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
		{ "badabi", "this library speaks ABI 3" },
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

/* ---- only trusted places: never even dlopen (constructors run) ---- */

static char ctor_so[4096]; /* the built ts_ctor.so, absolute */
static char marker_dir[] = "/tmp/ts-marker.XXXXXX";
static char marker[64]; /* TS_TEST_CTOR_MARKER: the constructor's file */

static bool constructor_ran(void)
{
	return access(marker, F_OK) == 0;
}

/* Copy ts_ctor.so to @dir/ts_ctor.so with @mode. */
static void put_ctor(const char *dir, mode_t mode)
{
	char path[256];
	size_t len;
	char *bin = test_read_file(ctor_so, &len);
	FILE *f;

	assert_non_null(bin);
	snprintf(path, sizeof(path), "%s/ts_ctor.so", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bin, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	free(bin);
}

/* A new directory under /tmp (from mkdtemp: ours, 0700) with ts_ctor.so
 * of mode @fmode, then given mode @dmode. */
static void make_place(char dir[32], mode_t dmode, mode_t fmode)
{
	strcpy(dir, "/tmp/ts-place.XXXXXX");
	assert_non_null(mkdtemp(dir));
	put_ctor(dir, fmode);
	assert_int_equal(chmod(dir, dmode), 0);
}

static void remove_place(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/ts_ctor.so", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* With TEXTSEARCH_PLUGIN_PATH=@path, TS_AUTOLOAD of ctor gives @err and a
 * message holding @want and @why, and the plugin was never loaded. */
static void expect_never_loaded(const char *path, int err, const char *want,
				const char *why)
{
	const char *orig = getenv("TEXTSEARCH_PLUGIN_PATH");
	char *saved = strdup(orig);
	const char *msg;

	assert_non_null(saved);
	setenv("TEXTSEARCH_PLUGIN_PATH", path, 1);
	assert_int_equal(prepare_err("ctor", TS_AUTOLOAD, GFP_KERNEL, NULL),
			 err);
	msg = textsearch_last_error();
	printf("# TEXTSEARCH_PLUGIN_PATH=%s: %s\n", path, msg);
	assert_non_null(strstr(msg, want));
	assert_non_null(strstr(msg, why));
	assert_false(constructor_ran());
	assert_int_equal(loaded("ctor"), 0);
	setenv("TEXTSEARCH_PLUGIN_PATH", saved, 1);
	free(saved);
}

/* Relative and empty entries name a place that depends on the current
 * directory: skipped, even with a good plugin there. */
static void test_relative_entries_skipped(void **unused)
{
	char dir[32], sub[64];
	int here = open(".", O_RDONLY | O_DIRECTORY);

	(void)unused;
	assert_true(here >= 0);
	strcpy(dir, "/tmp/ts-cwd.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	put_ctor(sub, 0755);

	assert_int_equal(chdir(dir), 0);
	expect_never_loaded("sub", -ENOENT, "ignored relative entry 'sub'",
			    "not an absolute path");
	expect_never_loaded("./sub", -ENOENT, "ignored relative entry './sub'",
			    "not an absolute path");
	assert_int_equal(chdir(sub), 0);
	expect_never_loaded(".", -ENOENT, "ignored relative entry '.'",
			    "not an absolute path");
	/* an empty entry, the current directory to many programs */
	expect_never_loaded("/nonexistent-ts-dir:", -ENOENT,
			    "ignored empty entry ''", "not an absolute path");
	expect_never_loaded(":/nonexistent-ts-dir", -ENOENT,
			    "ignored empty entry ''", "not an absolute path");
	expect_never_loaded("::.", -ENOENT, "ignored empty entry ''",
			    "(and 2 more)");
	/* the message names no skipped entry when there was none */
	expect_never_loaded("/nonexistent-ts-dir", -ENOENT, "ts_ctor.so", "");
	assert_null(strstr(textsearch_last_error(), "ignored"));

	assert_int_equal(fchdir(here), 0);
	close(here);
	remove_place(sub);
	assert_int_equal(rmdir(dir), 0);
}

static void test_writable_places_refused(void **unused)
{
	static const struct {
		mode_t dmode, fmode;
		const char *what;
	} cases[] = {
		{ 0775, 0755, "group-writable" },
		{ 0757, 0755, "world-writable" },
		{ 0777, 0755, "world-writable" },
		{ 01777, 0644, "world-writable" }, /* sticky, as /tmp */
		{ 0755, 0775, "group-writable" },
		{ 0755, 0666, "world-writable" },
		{ 0700, 0602, "world-writable" },
	};
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[32], file[64], why[128];

		make_place(dir, cases[i].dmode, cases[i].fmode);
		snprintf(file, sizeof(file), "plugin %s/ts_ctor.so: refused",
			 dir);
		if (cases[i].dmode & 022)
			snprintf(why, sizeof(why), "directory %s is %s", dir,
				 cases[i].what);
		else
			snprintf(why, sizeof(why), "file %s/ts_ctor.so is %s",
				 dir, cases[i].what);
		expect_never_loaded(dir, -ELIBBAD, file, why);
		remove_place(dir);
	}
}

/* A symbolic link is judged by where it leads too: whoever can write the
 * target's directory can replace the plugin. */
static void test_symlink_to_writable_place(void **unused)
{
	char good[32], bad[32], link[64], target[64], why[128];

	(void)unused;
	make_place(bad, 0777, 0755);
	strcpy(good, "/tmp/ts-link.XXXXXX");
	assert_non_null(mkdtemp(good));
	snprintf(link, sizeof(link), "%s/ts_ctor.so", good);
	snprintf(target, sizeof(target), "%s/ts_ctor.so", bad);
	assert_int_equal(symlink(target, link), 0);
	snprintf(why, sizeof(why), "directory %s is world-writable", bad);
	expect_never_loaded(good, -ELIBBAD, link, why);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rmdir(good), 0);
	remove_place(bad);
}

/* Files and directories of another user (not root): only root can make
 * them, and CI runs the tests as root. */
static void test_foreign_owner_refused(void **unused)
{
	char dir[32], file[64], why[128];

	(void)unused;
	if (geteuid() != 0) {
		printf("# not root: cannot give a plugin to another user, "
		       "ownership not tested (CI runs as root)\n");
		skip();
	}
	make_place(dir, 0755, 0755);
	snprintf(file, sizeof(file), "%s/ts_ctor.so", dir);
	assert_int_equal(chown(file, 12345, 12345), 0);
	snprintf(why, sizeof(why), "file %s is owned by uid 12345", file);
	expect_never_loaded(dir, -ELIBBAD, file, why);

	assert_int_equal(chown(file, 0, 0), 0);
	assert_int_equal(chown(dir, 12345, 0), 0);
	snprintf(why, sizeof(why), "directory %s is owned by uid 12345", dir);
	expect_never_loaded(dir, -ELIBBAD, file, why);
	remove_place(dir);
}

/* Last: the same plugin from a trusted place loads, and its constructor
 * leaves the marker, so its absence above means it never ran. */
static void test_constructor_runs_from_trusted_place(void **unused)
{
	const char *orig = getenv("TEXTSEARCH_PLUGIN_PATH");
	char *saved = strdup(orig);
	struct ts_config *conf = NULL;
	struct ts_state st;
	char dir[32];

	(void)unused;
	assert_non_null(saved);
	assert_false(constructor_ran());
	make_place(dir, 0755, 0755);
	setenv("TEXTSEARCH_PLUGIN_PATH", dir, 1);
	assert_int_equal(prepare_err("ctor", TS_AUTOLOAD, GFP_KERNEL, &conf),
			 0);
	assert_true(constructor_ran());
	assert_int_equal(loaded("ctor"), 1);
	assert_int_equal(textsearch_find_continuous(conf, &st, article,
						    sizeof(article) - 1),
			 19);
	textsearch_destroy(conf);
	setenv("TEXTSEARCH_PLUGIN_PATH", saved, 1);
	free(saved);
	remove_place(dir);
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
		cmocka_unit_test(test_relative_entries_skipped),
		cmocka_unit_test(test_writable_places_refused),
		cmocka_unit_test(test_symlink_to_writable_place),
		cmocka_unit_test(test_foreign_owner_refused),
		cmocka_unit_test(test_constructor_runs_from_trusted_place),
	};
	const char *build = getenv("BUILD");
	char so[4096];
	int failed;

	if (!getenv("TEXTSEARCH_PLUGIN_PATH")) {
		fprintf(stderr, "test_plugins: set TEXTSEARCH_PLUGIN_PATH "
				"(tests/run-tests.sh does)\n");
		return 1;
	}
	/* the modes the tests give are the modes files get */
	umask(022);
	snprintf(so, sizeof(so), "%s/test-plugins/ts_ctor.so",
		 build ? build : "build/default");
	if (!realpath(so, ctor_so) || !mkdtemp(marker_dir)) {
		fprintf(stderr,
			"test_plugins: %s: not built? (make check "
			"builds it)\n",
			so);
		return 1;
	}
	snprintf(marker, sizeof(marker), "%s/ran", marker_dir);
	setenv("TS_TEST_CTOR_MARKER", marker, 1);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(marker);
	rmdir(marker_dir);
	return failed;
}
