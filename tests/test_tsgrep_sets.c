/*
 * test_tsgrep_sets.c - tsgrep with many patterns (one set config), -w and
 * -x, against GNU grep -F, byte for byte.
 *
 * Pattern files of tens to thousands of patterns from small alphabets (so
 * that they overlap, nest, repeat and are prefixes of one another), words
 * of an English text with their prefixes, repeated -e, the empty pattern,
 * 40 copies of one pattern, and grep's -w retry cases are searched by
 * `grep -F` and by tsgrep with the same options; stdout and the exit
 * status must be identical.  --count-matches is checked against the
 * number of lines `grep -o` prints, and the tsgrep-only options that must
 * not change the output (--algo with a single-pattern algorithm, which
 * searches the patterns one by one, and --block-size) against grep too.
 *
 * Both programs run with LC_ALL=C; -i texts are ASCII only (tsgrep also
 * folds ISO-8859-1 letters, grep -F in the C locale does not).  GNU grep
 * is required: without it the test fails.
 *
 * Environment: BUILD (set by tests/run-tests.sh) locates $BUILD/bin/tsgrep;
 * TS_TEST_SEED repeats a run.  Sanitizer builds (a tsgrep with a sanitizer
 * runtime, or a BUILD folder name containing "san") run a third of the
 * option sets, chosen at random each time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "child.h"
#include "testsupport.h"

#define MAX_ARGS 48

static char tsgrep_path[4096];
static char top[4096];
static char work[4200];
static char capdir[4200];
static struct rng rng;
static unsigned long n_invocations, n_reported;
/* a sanitizer build starts every program several times slower: it runs
 * every third option set (all of them over the runs of the tests) */
static bool sanitized;

/* ---- files ----------------------------------------------------------- */

static void write_file(const char *rel, const void *data, size_t len)
{
	char path[4400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", work, rel);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* A random string of @min to @max bytes from @alphabet. */
static void rand_str(struct test_buf *b, const char *alphabet, unsigned int min,
		     unsigned int max)
{
	unsigned int n = min + rng_below(&rng, max - min + 1), i;
	size_t na = strlen(alphabet);

	for (i = 0; i < n; i++)
		test_buf_add(b, &alphabet[rng_below(&rng, (uint32_t)na)], 1);
}

/* @lines random lines over @alphabet, some empty, the last one with or
 * without its newline. */
static void rand_text(struct test_buf *b, const char *alphabet,
		      unsigned int lines, unsigned int maxlen)
{
	unsigned int i;

	for (i = 0; i < lines; i++) {
		if (rng_below(&rng, 10))
			rand_str(b, alphabet, 1, maxlen);
		if (i + 1 < lines || rng_below(&rng, 2))
			test_buf_adds(b, "\n");
	}
}

/* ---- running both ------------------------------------------------------ */

static void run(char *const argv[], struct child_result *r)
{
	const struct child_spec spec = { .argv = argv,
					 .cwd = work,
					 .capdir = capdir };

	if (child_run(&spec, r))
		fail_msg("run %s: %s", argv[0], strerror(errno));
}

static void show(const char *what, const char *s, size_t len)
{
	printf("#   %s (%zu bytes): \"", what, len);
	for (size_t i = 0; i < len && i < 200; i++)
		printf(s[i] >= 32 && s[i] < 127 ? "%c" : "\\x%02x",
		       (unsigned char)s[i]);
	printf("%s\"\n", len > 200 ? "..." : "");
}

/* @opts (space-separated) then @args, by grep -F and by tsgrep (with
 * @extra first): true if stdout and exit status are the same. */
static bool compare(const char *opts, char *const *args, const char *extra)
{
	char *gargv[MAX_ARGS], *targv[MAX_ARGS], optcopy[256], *save = NULL;
	char extracopy[64], *tok;
	struct child_result g, t;
	char gs[64], ts[64];
	const char *why = NULL;
	int n = 0, m = 0, i;

	gargv[n++] = "grep";
	gargv[n++] = "-F";
	targv[m++] = tsgrep_path;
	if (extra) {
		snprintf(extracopy, sizeof(extracopy), "%s", extra);
		targv[m++] = extracopy;
	}
	snprintf(optcopy, sizeof(optcopy), "%s", opts);
	for (tok = strtok_r(optcopy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		gargv[n++] = tok;
		targv[m++] = tok;
	}
	for (i = 0; args[i]; i++) {
		assert_true(n < MAX_ARGS - 1 && m < MAX_ARGS - 1);
		gargv[n++] = args[i];
		targv[m++] = args[i];
	}
	gargv[n] = NULL;
	targv[m] = NULL;
	run(gargv, &g);
	run(targv, &t);
	n_invocations++;
	child_status_text(g.status, gs, sizeof(gs));
	if (!child_status_text(t.status, ts, sizeof(ts)))
		why = "tsgrep died of a signal";
	else if (strcmp(gs, ts))
		why = "exit status";
	else if (g.outlen != t.outlen || memcmp(g.out, t.out, g.outlen))
		why = "stdout";
	if (why && n_reported++ < 30) {
		printf("# DIFFERENCE (%s): tsgrep%s%s %s", why,
		       extra ? " " : "", extra ? extra : "", opts);
		for (i = 0; args[i]; i++)
			printf(" '%s'", args[i]);
		printf("\n#   grep: %s, tsgrep: %s\n", gs, ts);
		show("grep  ", g.out, g.outlen);
		show("tsgrep", t.out, t.outlen);
		if (t.errlen)
			show("tsgrep stderr", t.err, t.errlen);
	}
	child_result_free(&g);
	child_result_free(&t);
	return why == NULL;
}

/* tsgrep --count-matches against the lines grep -o prints (one file, no
 * empty pattern). */
static bool compare_count_matches(const char *opts, char *const *args)
{
	char *gargv[MAX_ARGS], *targv[MAX_ARGS], optcopy[256], *save = NULL;
	struct child_result g, t;
	unsigned long lines = 0;
	char want[32], *tok;
	int n = 0, m = 0, i;
	bool ok;

	gargv[n++] = "grep";
	gargv[n++] = "-F";
	gargv[n++] = "-o";
	targv[m++] = tsgrep_path;
	targv[m++] = "--count-matches";
	snprintf(optcopy, sizeof(optcopy), "%s", opts);
	for (tok = strtok_r(optcopy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		gargv[n++] = tok;
		targv[m++] = tok;
	}
	for (i = 0; args[i]; i++) {
		gargv[n++] = args[i];
		targv[m++] = args[i];
	}
	gargv[n] = NULL;
	targv[m] = NULL;
	run(gargv, &g);
	run(targv, &t);
	n_invocations++;
	for (size_t k = 0; k < g.outlen; k++)
		lines += g.out[k] == '\n';
	snprintf(want, sizeof(want), "%lu\n", lines);
	ok = t.outlen == strlen(want) && !memcmp(t.out, want, t.outlen);
	if (!ok && n_reported++ < 30) {
		printf("# DIFFERENCE: tsgrep --count-matches %s", opts);
		for (i = 0; args[i]; i++)
			printf(" '%s'", args[i]);
		printf("\n");
		show("grep -o lines", want, strlen(want));
		show("tsgrep", t.out, t.outlen);
	}
	child_result_free(&g);
	child_result_free(&t);
	return ok;
}

/* Option sets every pattern source is run with. */
static const char *const combos[] = {
	"",
	"-o",
	"-c",
	"-v",
	"-n -b",
	"-o -b -n",
	"-w",
	"-w -o",
	"-w -c",
	"-w -v",
	"-w -o -b",
	"-x",
	"-x -c",
	"-x -v",
	"-x -o",
	"-i",
	"-i -o",
	"-i -w -o",
	"-i -x",
	"-v -c",
	"-l",
	"-L",
	"--color=always",
	"-w --color=always",
	"-x -n",
	"-v -w -c",
	"-o -i -c",
};
#define NCOMBO (sizeof(combos) / sizeof(*combos))

/* Every combination on @args; --count-matches too unless @has_empty.
 * Returns the differences. */
static unsigned long compare_all(char *const *args, bool has_empty)
{
	unsigned long diffs = 0;
	size_t c;

	for (c = sanitized ? rng_below(&rng, 3) : 0; c < NCOMBO;
	     c += sanitized ? 3 : 1)
		diffs += !compare(combos[c], args, NULL);
	if (!has_empty) {
		diffs += !compare_count_matches("", args);
		diffs += !compare_count_matches("-w", args);
		diffs += !compare_count_matches("-i", args);
	}
	return diffs;
}

/* A pattern file of @n patterns over @alphabet (lengths 1 to @maxlen),
 * with an empty line among them if @empty. */
static void make_patterns(const char *rel, unsigned int n, const char *alphabet,
			  unsigned int maxlen, bool empty)
{
	struct test_buf b = { 0 };
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (empty && i == n / 2)
			test_buf_adds(&b, "\n");
		rand_str(&b, alphabet, 1, maxlen);
		test_buf_adds(&b, "\n");
	}
	write_file(rel, b.p, b.len);
	free(b.p);
}

/* ---- tests ------------------------------------------------------------- */

/* Hundreds to thousands of patterns from small alphabets: they overlap,
 * nest, repeat, and are prefixes of each other. */
static void test_many_small_alphabet(void **st)
{
	static const unsigned int counts[] = { 2, 30, 300, 3000 };
	char *args[] = { "-f", "pats", "text", NULL };
	unsigned long diffs = 0;
	struct test_buf text = { 0 };
	size_t i, round;

	(void)st;
	for (round = 0; round < 2; round++) {
		text.len = 0;
		rand_text(&text, "abcAB _.\t", 60, 40);
		write_file("text", text.p, text.len);
		for (i = 0; i < sizeof(counts) / sizeof(*counts); i++) {
			make_patterns("pats", counts[i],
				      round == 1 ? "ab" : "abcAB_ ", 6, false);
			diffs += compare_all(args, false);
			make_patterns("pats", counts[i], "abcA_ ", 4, true);
			diffs += compare_all(args, true);
		}
	}
	free(text.p);
	assert_int_equal(diffs, 0);
}

/* An English text (written for this test) and its words as patterns,
 * with prefixes and absent words among them. */
static const char prose[] =
	"The keeper of the lighthouse wrote every evening in a small book:\n"
	"the wind, the ships that passed, the colour of the water at dusk.\n"
	"Some nights nothing passed at all, and he wrote that down as well,\n"
	"because a record with gaps in it is a record nobody can trust.\n"
	"\n"
	"In winter the island was cut off for weeks; the supply boat could\n"
	"not land, and the keeper_s lamp oil ran low.  He kept the light\n"
	"burning anyway, trimming the wick to a thin blue flame, and wrote:\n"
	"light kept, oil low, no ships, wind north-east, sea heavy.\n"
	"Lighthouses are built where land ends and danger begins; keepers\n"
	"keep them lit so that others may pass without ever knowing them.\n";

static void test_real_words(void **st)
{
	char *args[] = { "-f", "pats", "text", NULL };
	struct test_buf pats = { 0 }, text = { 0 }, word = { 0 };
	unsigned long diffs = 0;
	size_t i;
	int copies;

	(void)st;
	for (copies = 0; copies < 20; copies++)
		test_buf_adds(&text, prose);
	write_file("text", text.p, text.len);
	/* every word, its prefixes of 1-3 letters, its case variant */
	for (i = 0; i < sizeof(prose); i++) {
		char ch = prose[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    ch == '_' || ch == '-') {
			test_buf_add(&word, &ch, 1);
			continue;
		}
		if (word.len) {
			test_buf_add(&pats, word.p, word.len);
			test_buf_adds(&pats, "\n");
			test_buf_add(&pats, word.p, word.len > 3 ? 3 : 1);
			test_buf_adds(&pats, "\n");
			word.p[0] = (char)(word.p[0] ^ 0x20);
			test_buf_add(&pats, word.p, word.len);
			test_buf_adds(&pats, "\n");
			word.len = 0;
		}
	}
	test_buf_adds(&pats,
		      "absentword\nzebra crossing\nlight kept, oil low\n");
	write_file("pats", pats.p, pats.len);
	diffs += compare_all(args, false);
	/* whole lines of the text as patterns, for -x */
	write_file("pats", prose, sizeof(prose) - 1);
	diffs += compare_all(args, true);
	free(pats.p);
	free(text.p);
	free(word.p);
	assert_int_equal(diffs, 0);
}

/* Repeated -e (and newlines inside one -e), duplicates, prefixes. */
static void test_repeated_e(void **st)
{
	static const char *const sets[][6] = {
		{ "foo", "foobar", NULL },
		{ "ab", "abc", "b", "bc", "abcd", NULL },
		{ "a", "a", "a", NULL },
		{ "xyz", "y", "zz", "x\nyz", NULL },
		{ "the", "he", "e", "then", "there", NULL },
	};
	char *args[16];
	unsigned long diffs = 0;
	struct test_buf text = { 0 };
	size_t s, k;
	int n, round;

	(void)st;
	for (round = 0; round < 4; round++) {
		text.len = 0;
		rand_text(&text, "abcdxyzfoobarthen _.", 40, 30);
		write_file("text", text.p, text.len);
		for (s = 0; s < sizeof(sets) / sizeof(*sets); s++) {
			n = 0;
			for (k = 0; sets[s][k]; k++) {
				args[n++] = "-e";
				args[n++] = (char *)sets[s][k];
			}
			args[n++] = "text";
			args[n] = NULL;
			diffs += compare_all(args, false);
		}
	}
	free(text.p);
	assert_int_equal(diffs, 0);
}

/* grep's -w retries and the fixed cases the brief of -w names. */
static void test_word_cases(void **st)
{
	static const char text[] = "foobarx foo\n"
				   "aab ab\n"
				   "foobar\n"
				   "xfoo foox foo_ _foo foo.\n"
				   "ab_ab ab-ab\n"
				   "abab ab\n"
				   "\n"
				   " \n"
				   "foo\n"
				   "foobar foo";
	char *a1[] = { "-e", "foo", "-e", "foobar", "text", NULL };
	char *a2[] = { "-e", "ab", "text", NULL };
	char *a3[] = { "-e", "ab", "-e", "abab", "-e", "b", "text", NULL };
	char *a4[] = { "-e", "foo", "-e", "", "text", NULL };
	char *a5[] = { "-e", "", "text", NULL };
	char *a6[] = {
		"-e", "foobar", "-e", "foo", "-e", "foobar", "text", NULL
	};
	unsigned long diffs = 0;

	(void)st;
	write_file("text", text, sizeof(text) - 1);
	diffs += compare_all(a1, false);
	diffs += compare_all(a2, false);
	diffs += compare_all(a3, false);
	diffs += compare_all(a4, true);
	diffs += compare_all(a5, true);
	diffs += compare_all(a6, false);
	assert_int_equal(diffs, 0);
}

/* The empty pattern: every line with plain -F; with -w and -x where grep
 * finds an empty match; grep's early exit with -v; no pattern at all. */
static void test_empty_pattern(void **st)
{
	static const char text[] = "one\n\n two \n_\n.\nthree";
	char *a1[] = { "-e", "", "text", NULL };
	char *a2[] = { "-e", "", "-e", "", "text", NULL };
	char *a3[] = { "-f", "pats", "text", NULL };
	char *a4[] = { "-f", "/dev/null", "text", NULL };
	char *a5[] = { "-f", "/dev/null", "-e", "", "text", NULL };
	unsigned long diffs = 0;

	(void)st;
	write_file("text", text, sizeof(text) - 1);
	/* an empty line among patterns */
	write_file("pats", "two\n\nthr\n", 9);
	diffs += compare_all(a1, true);
	diffs += compare_all(a2, true);
	diffs += compare_all(a3, true);
	diffs += compare_all(a4, true);
	diffs += compare_all(a5, true);
	/* an empty file gives no pattern, a lone newline one empty one */
	write_file("pats", "\n", 1);
	diffs += compare_all(a3, true);
	assert_int_equal(diffs, 0);
}

/* 40 copies of one pattern (ripgrep once found nothing with them). */
static void test_forty_copies(void **st)
{
	static const char text[] = "hay needle hay\nneedleneedle\nno\nneedle\n";
	char *args[] = { "-f", "pats", "text", NULL };
	struct test_buf pats = { 0 };
	unsigned long diffs = 0;
	int i;

	(void)st;
	for (i = 0; i < 40; i++)
		test_buf_adds(&pats, "needle\n");
	write_file("pats", pats.p, pats.len);
	write_file("text", text, sizeof(text) - 1);
	diffs += compare_all(args, false);
	free(pats.p);
	assert_int_equal(diffs, 0);
}

/* --algo with a single-pattern algorithm searches the patterns one by
 * one, a set algorithm as one set, and --block-size serves the window in
 * blocks: the output is grep's in every case. */
static void test_algorithms(void **st)
{
	static const char *const extras[] = { "--algo=bm", "--algo=kmp",
					      "--algo=ac", "--algo=auto",
					      "--block-size=7" };
	static const char *const opts[] = { "",	  "-o",	   "-w -o",
					    "-x", "-c -v", "-i -o" };
	char *args[] = { "-f", "pats", "text", NULL };
	unsigned long diffs = 0;
	struct test_buf text = { 0 };
	size_t e, o;

	(void)st;
	rand_text(&text, "abcAB _", 80, 30);
	write_file("text", text.p, text.len);
	make_patterns("pats", 200, "abcA_ ", 5, false);
	for (e = 0; e < sizeof(extras) / sizeof(*extras); e++)
		for (o = 0; o < sizeof(opts) / sizeof(*opts); o++)
			diffs += !compare(opts[o], args, extras[e]);
	free(text.p);
	assert_int_equal(diffs, 0);
}

/* --json submatches are the leftmost-longest matches, as -o prints. */
static void test_json_submatches(void **st)
{
	char *argv[] = { tsgrep_path, "--json", "-e",  "ab",   "-e",
			 "abc",	      "-e",	"cab", "text", NULL };
	char *wargv[] = { tsgrep_path, "--json", "-w",	  "-e", "foo",
			  "-e",	       "foobar", "text2", NULL };
	struct child_result r;

	(void)st;
	write_file("text", "xabcab\n", 7);
	run(argv, &r);
	if (!strstr(r.out,
		    "\"submatches\":[{\"match\":{\"text\":\"abc\"},"
		    "\"start\":1,\"end\":4},{\"match\":{\"text\":\"ab\"},"
		    "\"start\":4,\"end\":6}]"))
		fail_msg("json: %s", r.out);
	child_result_free(&r);
	write_file("text2", "foobarx foo\n", 12);
	run(wargv, &r);
	if (!strstr(r.out, "\"submatches\":[{\"match\":{\"text\":\"foo\"},"
			   "\"start\":8,\"end\":11}]"))
		fail_msg("json -w: %s", r.out);
	child_result_free(&r);
}

static void test_summary(void **st)
{
	(void)st;
	printf("# tsgrep sets vs grep -F: %lu invocations compared\n",
	       n_invocations);
	printf("# known difference (documented): -x with -w under -o or "
	       "--color: grep 3.8 prints the line's newline inside the "
	       "match, tsgrep takes -x alone (not compared)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_word_cases),
		cmocka_unit_test(test_empty_pattern),
		cmocka_unit_test(test_forty_copies),
		cmocka_unit_test(test_repeated_e),
		cmocka_unit_test(test_real_words),
		cmocka_unit_test(test_many_small_alphabet),
		cmocka_unit_test(test_algorithms),
		cmocka_unit_test(test_json_submatches),
		cmocka_unit_test(test_summary),
	};
	const char *build;
	int ret;

	if (!test_have_gnu_grep()) {
		printf("not ok: GNU grep not found; tsgrep is compared "
		       "against it\n");
		return 1;
	}
	if (!test_program_path("tsgrep", tsgrep_path, sizeof(tsgrep_path))) {
		printf("not ok: tsgrep not found: %s\n", strerror(errno));
		return 1;
	}
	build = getenv("BUILD");
	sanitized = (build && strstr(build, "san")) ||
		    test_binary_is_sanitized(tsgrep_path);
	if (sanitized)
		printf("# sanitizer build: a third of the option sets\n");
	if (!test_grep_setup("tsgrep-sets", top, sizeof(top), work, capdir,
			     sizeof(work))) {
		printf("not ok: test folders: %s\n", strerror(errno));
		return 1;
	}
	rng.s = test_seed("tsgrep sets", 20261203);

	ret = cmocka_run_group_tests(tests, NULL, NULL);
	if (test_remove_tree(top))
		printf("# could not remove %s\n", top);
	return ret;
}
