/*
 * test_tsgrep_cli.c - tsgrep against GNU grep -F, byte for byte.
 *
 * Random corpora (no trailing newline, CRLF, empty lines, NUL bytes, a line
 * over 1 MiB, empty files, many files, a tree for -r, stdin through a pipe)
 * are searched with many option combinations by `grep -F` and by tsgrep;
 * stdout and the exit status must be identical, and stderr must be empty
 * for both or for neither (its wording names the program, so only its
 * presence is compared).  The tsgrep-only options that must not change the
 * output (--block-size, --algo, -j) are run against grep's output as well.
 * Then: bad invocations (exit 2, a message, no signal), byte offsets and
 * line numbers past 4 GiB in a sparse file, and peak memory while a
 * generated gigabyte goes through a pipe.
 *
 * Both programs run with LC_ALL=C and without GREP_COLOR(S), so that
 * neither locale nor the caller's colors play a part.  grep -r lists a
 * directory in readdir order and tsgrep in sorted order, so -r outputs are
 * compared as sorted lines.
 *
 * Environment: BUILD (set by tests/run-tests.sh) locates $BUILD/bin/tsgrep;
 * TS_TEST_SEED repeats a run; TSGREP_TEST_ITER sets the invocations per
 * option combination (default 12); TSGREP_TEST_BIG_MB the size of the
 * memory test (default 1024); TSGREP_TEST_NO_4G=1 skips the sparse 4 GiB
 * file.  Sanitizer builds (a tsgrep with a sanitizer runtime in it, a BUILD
 * folder name containing "san", or TSGREP_TEST_SANITIZED set) start every
 * program several times slower, so
 * they run 3 invocations per combination, half the variants and -r runs,
 * 128 MiB for the memory test (with a looser bound: the sanitizer's own
 * memory), and skip the 4 GiB file unless TSGREP_TEST_4G=1; the counts
 * printed say what ran.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <locale.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "testsupport.h"

/* realpath() is XSI, not in the POSIX level the test build asks for */
char *realpath(const char *restrict path, char *restrict resolved);

#define MAX_ARGS 64

/* ---- where things are -------------------------------------------------- */

static char tsgrep_path[4096];
static char top[4096];	  /* temporary folder */
static char work[4200];	  /* children run here: the corpora */
static char capdir[4200]; /* captured stdout/stderr, outside the corpora */
static bool sanitized;
static struct rng rng;

/* ---- differences --------------------------------------------------------- */

/* Totals over all tests, printed by test_summary; each test asserts its
 * own differences. */
static unsigned long n_invocations, n_combos, n_diffs;

/* The end of a test: the differences it found fail it, and only it. */
static void assert_no_diffs(unsigned long diffs)
{
	n_diffs += diffs;
	assert_int_equal(diffs, 0);
}

/* ---- running a program --------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	char *buf = test_read_file(path, len);

	if (!buf)
		fail_msg("read %s: %s", path, strerror(errno));
	return buf;
}

/*
 * Run @argv in @cwd (relative to work; NULL: work) with stdin from @feed
 * (through a pipe) or /dev/null.
 */
static void run_prog(char *const argv[], const char *cwd, child_feed_fn feed,
		     void *ctx, struct child_result *r)
{
	char where[4400];
	const struct child_spec spec = { .argv = argv,
					 .cwd = where,
					 .capdir = capdir,
					 .feed = feed,
					 .feed_ctx = ctx };

	snprintf(where, sizeof(where), "%s%s%s", work, cwd ? "/" : "",
		 cwd ? cwd : "");
	if (child_run(&spec, r))
		fail_msg("run %s: %s", argv[0], strerror(errno));
}

/* ---- files ----------------------------------------------------------------- */

static void write_file(const char *rel, const void *data, size_t len)
{
	char path[4400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", work, rel);
	f = fopen(path, "wb");
	if (!f)
		fail_msg("create %s: %s", path, strerror(errno));
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *rel)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/%s", work, rel);
	if (mkdir(path, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

/* Words with overlaps (ab/abc/b), case variants, and a Latin-1 letter. */
static const char *const words[] = {
	"foo",	  "bar", "Foo",	   "FOO", "baz", "ab", "abc",	  "b",
	"needle", "x",	 "foobar", "a-b", "--",	 "\t", "caf\xe9", "CAF\xc9",
};

/*
 * Random text.  @eol: 0 "\n", 1 "\r\n", 2 mixed; @empty: percent of empty
 * lines; @trail: end with a line end.
 */
static void gen_text(struct test_buf *b, unsigned int lines, int eol,
		     unsigned int empty, bool trail)
{
	unsigned int i, w, nw;

	for (i = 0; i < lines; i++) {
		if (rng_below(&rng, 100) >= empty) {
			nw = 1 + rng_below(&rng, 12);
			for (w = 0; w < nw; w++) {
				test_buf_adds(
					b,
					words[rng_below(
						&rng, sizeof(words) /
							      sizeof(*words))]);
				if (rng_below(&rng, 3))
					test_buf_adds(b, " ");
			}
		}
		if (i + 1 == lines && !trail)
			break;
		if (eol == 1 || (eol == 2 && rng_below(&rng, 2)))
			test_buf_adds(b, "\r\n");
		else
			test_buf_adds(b, "\n");
	}
}

#define NTEXT 8
static const char *const text_files[NTEXT] = {
	"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7",
};
static const char *const other_files[] = {
	"bin0", "bin1", "empty", "long", "nl-only",
};
static struct test_buf corpus[NTEXT]; /* text files, for picking patterns */

static void make_corpora(void)
{
	struct test_buf b = { 0 };
	char name[64];
	unsigned int i;

	/* text: various line ends, lengths and endings */
	for (i = 0; i < NTEXT; i++) {
		gen_text(&corpus[i], 5 + rng_below(&rng, 60), (int)(i % 3),
			 i == 2 ? 40 : 8, i % 4 != 0);
		write_file(text_files[i], corpus[i].p, corpus[i].len);
	}
	/* binary: NUL bytes with matches before and after */
	gen_text(&b, 20, 0, 5, true);
	test_buf_add(&b, "foo\0bar\n", 8);
	gen_text(&b, 20, 0, 5, false);
	write_file("bin0", b.p, b.len);
	b.len = 0;
	test_buf_add(&b, "\0\0\0", 3);
	gen_text(&b, 10, 1, 5, true);
	write_file("bin1", b.p, b.len);
	write_file("empty", "", 0);
	write_file("nl-only", "\n\n\n", 3);
	/* a line over 1 MiB with matches inside, between short lines */
	b.len = 0;
	gen_text(&b, 5, 0, 0, true);
	while (b.len < (1u << 20) + 300000) {
		test_buf_adds(&b, rng_below(&rng, 50) ? "xyzzy " : "needle ");
		if (!rng_below(&rng, 997))
			test_buf_adds(&b, "foo");
	}
	test_buf_adds(&b, "\n");
	gen_text(&b, 5, 0, 0, false);
	write_file("long", b.p, b.len);

	/* files tsgrep maps instead of reading (4 MiB or more): text with a
	 * NUL past the first reads (binary from the read holding it on),
	 * and text with a 1.5 MiB line.  Not both in one file: after a line
	 * longer than a read, grep's reads no longer fall where tsgrep's do,
	 * so the lines printed before "binary file matches" may differ. */
	b.len = 0;
	while (b.len < (5u << 20))
		gen_text(&b, 2000, 0, 8, true);
	memcpy(b.p + (4u << 20) + 77, "\0", 1);
	write_file("bigbin", b.p, b.len);
	b.len = 0;
	while (b.len < (5u << 20)) {
		gen_text(&b, 2000, 0, 8, true);
		if (b.len > (2u << 20) && b.len < (3u << 20)) {
			while (b.len < (3u << 20) + 500000)
				test_buf_adds(&b, rng_below(&rng, 50) ?
							  "xyzzy " :
							  "needle ");
			test_buf_adds(&b, "\n");
		}
	}
	write_file("big", b.p, b.len);

	/* many small files */
	make_dir("many");
	for (i = 0; i < 60; i++) {
		b.len = 0;
		gen_text(&b, rng_below(&rng, 6), 0, 10, rng_below(&rng, 2));
		snprintf(name, sizeof(name), "many/f%02u", i);
		write_file(name, b.p, b.len);
	}
	/* a tree for -r */
	make_dir("tree");
	make_dir("tree/sub");
	make_dir("tree/sub/deeper");
	make_dir("tree/sub2");
	make_dir("tree/emptydir");
	for (i = 0; i < 12; i++) {
		static const char *const dirs[] = {
			"tree",
			"tree/sub",
			"tree/sub/deeper",
			"tree/sub2",
		};

		b.len = 0;
		gen_text(&b, rng_below(&rng, 15), (int)(i % 3), 10, i % 2);
		if (i % 5 == 4)
			test_buf_add(&b, "foo\0", 4);
		snprintf(name, sizeof(name), "%s/file%u.txt", dirs[i % 4], i);
		write_file(name, b.p, b.len);
	}
	write_file("tree/sub/empty", "", 0);
	free(b.p);
}

/* A pattern: a piece of a text file, a word, or something absent. */
static char *pick_pattern(void)
{
	unsigned int kind = rng_below(&rng, 10);
	char *p;

	if (kind < 5) {
		const struct test_buf *c = &corpus[rng_below(&rng, NTEXT)];
		size_t at, n, k;

		if (c->len == 0)
			return strdup("foo");
		at = rng_below(&rng, (uint32_t)c->len);
		n = 1 + rng_below(&rng, 6);
		p = calloc(n + 1, 1);
		assert_non_null(p);
		for (k = 0; k < n && at + k < c->len; k++) {
			char ch = c->p[at + k];

			if (ch == '\n' || ch == '\0')
				break;
			/* only ASCII, so -i never meets the Latin-1 folding
			 * that tsgrep documents as a difference */
			p[k] = (unsigned char)ch >= 0x80 ? 'o' : ch;
		}
		if (k == 0)
			p[k++] = 'b';
		p[k] = '\0';
		return p;
	}
	if (kind < 8) {
		const char *w = words[rng_below(&rng, 14)];

		return strdup(w);
	}
	if (kind == 8)
		return strdup("zzq");
	return strdup("fOo");
}

/* ---- comparing --------------------------------------------------------- */

struct inv {
	char *argv[MAX_ARGS]; /* options and operands, no program */
	int argc;
	char *owned[MAX_ARGS];
	int nowned;
	bool is_pattern[MAX_ARGS]; /* argv[i] is a pattern (for --fsm) */
	bool pattern_file;	   /* -f given */
	const char *cwd;
	const char *stdin_data;
	size_t stdin_len;
	bool use_stdin;
	bool sort;
};

static void inv_add(struct inv *v, const char *a)
{
	assert_true(v->argc < MAX_ARGS - 8);
	v->argv[v->argc++] = (char *)a;
}

static void inv_own(struct inv *v, char *a)
{
	v->owned[v->nowned++] = a;
	inv_add(v, a);
}

static void inv_pattern(struct inv *v, char *a)
{
	v->is_pattern[v->argc] = true;
	inv_own(v, a);
}

/*
 * A literal spelled in tsgrep's fsm syntax, so that the fsm algorithm can
 * be run on the literal searches: metacharacters and other punctuation
 * escaped, control bytes as \xHH.  NULL if the fsm cannot say it (the
 * empty pattern).
 */
static char *fsm_literal(const char *lit)
{
	const unsigned char *s = (const unsigned char *)lit;
	char *out = malloc(4 * strlen(lit) + 1), *o = out;

	assert_non_null(out);
	if (!*s) {
		free(out);
		return NULL;
	}
	for (; *s; s++) {
		if (*s < 0x20 || *s == 0x7f)
			o += sprintf(o, "\\x%02x", *s);
		else if (*s < 0x80 && strchr("\\.[]?*+^{}$()|", *s))
			*o++ = '\\', *o++ = (char)*s;
		else
			*o++ = (char)*s;
	}
	*o = '\0';
	return out;
}

static void inv_free(struct inv *v)
{
	int i;

	for (i = 0; i < v->nowned; i++)
		free(v->owned[i]);
	v->nowned = 0;
	v->argc = 0;
}

/* A shell-quoted command line, for messages. */
static void show_cmd(char *out, size_t cap, const char *prog, char *const *argv,
		     int argc, const struct inv *v)
{
	size_t n = (size_t)snprintf(out, cap, "%s", prog);
	int i;

	for (i = 0; i < argc && n < cap; i++) {
		const unsigned char *s = (const unsigned char *)argv[i];

		n += (size_t)snprintf(out + n, cap - n, " '");
		for (; *s && n + 8 < cap; s++) {
			if (*s == '\'')
				n += (size_t)snprintf(out + n, cap - n,
						      "'\\''");
			else if (*s < 0x20 || *s >= 0x7f)
				n += (size_t)snprintf(out + n, cap - n,
						      "'$'\\x%02x''", *s);
			else
				out[n++] = (char)*s;
		}
		if (n + 2 < cap)
			out[n++] = '\'', out[n] = '\0';
	}
	if (v->use_stdin && n < cap)
		snprintf(out + n, cap - n, " < (pipe, %zu bytes)",
			 v->stdin_len);
	if (v->cwd && n < cap)
		snprintf(out + strlen(out), cap - strlen(out), " (in %s)",
			 v->cwd);
}

struct line {
	const char *p;
	size_t len;
};

/* Lines may hold NUL bytes (-a on binary files): compare them as bytes. */
static int cmp_lines(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Sort the lines of @s in place (for -r); a last line without '\n' stays
 * without one, wherever it sorts to. */
static void sort_lines(char *s, size_t len)
{
	struct line *line = NULL;
	size_t n = 0, cap = 0, i, o = 0;
	char *copy, *p;

	if (len == 0)
		return;
	copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, s, len);
	for (p = copy; p < copy + len;) {
		char *e = memchr(p, '\n', (size_t)(copy + len - p));

		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			line = realloc(line, cap * sizeof(*line));
			assert_non_null(line);
		}
		line[n].p = p;
		line[n++].len = e ? (size_t)(e - p) : (size_t)(copy + len - p);
		if (!e)
			break;
		p = e + 1;
	}
	qsort(line, n, sizeof(*line), cmp_lines);
	for (i = 0; i < n; i++) {
		memcpy(s + o, line[i].p, line[i].len);
		o += line[i].len;
		if (o < len)
			s[o++] = '\n';
	}
	free(line);
	free(copy);
}

static void show_bytes(const char *what, const char *s, size_t len, size_t at)
{
	size_t from = at > 60 ? at - 60 : 0, to = at + 60 < len ? at + 60 : len;
	size_t i;

	printf("#     %s (%zu bytes) near %zu: \"", what, len, at);
	for (i = from; i < to; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			printf("\\n");
		else if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	printf("\"\n");
}

static unsigned long n_reported;

/*
 * Run grep -F and tsgrep (with @extra options first) on @v; true if they
 * agree.  Differences are printed (the first 40); the caller counts them.
 */
static bool compare(const char *combo, struct inv *v, const char *const *extra)
{
	char *gargv[MAX_ARGS + 4], *targv[MAX_ARGS + 8], cmd[2048];
	char gs[64], ts[64];
	struct child_mem_feed gf = { v->stdin_data, v->stdin_len, false };
	struct child_mem_feed tf = gf;
	struct child_result g, t;
	const char *why = NULL;
	size_t at = 0;
	int i, n = 0, m = 0;

	char *fsm_pat[MAX_ARGS] = { 0 };
	bool fsm = extra && !strcmp(extra[0], "--fsm");

	gargv[n++] = "grep";
	gargv[n++] = "-F";
	targv[m++] = tsgrep_path;
	for (i = 0; extra && extra[i]; i++)
		targv[m++] = (char *)extra[i];
	for (i = 0; i < v->argc; i++) {
		gargv[n++] = v->argv[i];
		targv[m++] = v->argv[i];
		if (fsm && v->is_pattern[i]) {
			fsm_pat[i] = fsm_literal(v->argv[i]);
			if (!fsm_pat[i])
				return true; /* not expressible: not run */
			targv[m - 1] = fsm_pat[i];
		}
	}
	gargv[n] = NULL;
	targv[m] = NULL;

	run_prog(gargv, v->cwd, v->use_stdin ? child_feed_mem : NULL, &gf, &g);
	run_prog(targv, v->cwd, v->use_stdin ? child_feed_mem : NULL, &tf, &t);
	n_invocations++;
	if (v->sort) {
		sort_lines(g.out, g.outlen);
		sort_lines(t.out, t.outlen);
	}
	child_status_text(g.status, gs, sizeof(gs));
	if (!child_status_text(t.status, ts, sizeof(ts)))
		why = "tsgrep died of a signal";
	else if (strcmp(gs, ts))
		why = "exit status";
	else if (g.outlen != t.outlen || memcmp(g.out, t.out, g.outlen))
		why = "stdout";
	else if (!g.errlen != !t.errlen)
		why = g.errlen ? "stderr: grep wrote a message, tsgrep none" :
				 "stderr: tsgrep wrote a message, grep none";
	if (why) {
		if (n_reported++ < 40) {
			show_cmd(cmd, sizeof(cmd), "tsgrep", targv + 1, m - 1,
				 v);
			printf("# DIFFERENCE [%s]: %s\n#   %s\n", combo, why,
			       cmd);
			printf("#   grep: %s, %zu bytes out, %zu err; tsgrep: "
			       "%s, %zu bytes out, %zu err\n",
			       gs, g.outlen, g.errlen, ts, t.outlen, t.errlen);
			while (at < g.outlen && at < t.outlen &&
			       g.out[at] == t.out[at])
				at++;
			if (!strcmp(why, "stdout")) {
				show_bytes("grep  ", g.out, g.outlen, at);
				show_bytes("tsgrep", t.out, t.outlen, at);
			}
			if (t.errlen)
				show_bytes("tsgrep stderr", t.err, t.errlen, 0);
		}
	}
	child_result_free(&g);
	child_result_free(&t);
	for (i = 0; i < v->argc; i++)
		free(fsm_pat[i]);
	return why == NULL;
}

/* ---- the option combinations ------------------------------------------ */

static const char *const combos[] = {
	"",
	"-i",
	"-v",
	"-c",
	"-o",
	"-b",
	"-n",
	"-l",
	"-L",
	"-H",
	"-h",
	"-q",
	"-s",
	"-a",
	"-vc",
	"-on",
	"-bo",
	"-ob -n",
	"-lv",
	"-Lv",
	"-in",
	"-ic",
	"-io",
	"-iv",
	"-vn",
	"-cv -i",
	"-Hc",
	"-hn",
	"-nb",
	"-A 1",
	"-B 2",
	"-C 1",
	"-A 3 -B 1",
	"-n -A 1",
	"-C 2 -n -b",
	"-v -C 1",
	"-c -A 2",
	"-o -C 1",
	"-h -B 1",
	"-A 0",
	"-C 5 -i",
	"-a -n",
	"-a -o -b",
	"-a -v -c",
	"-a -C 1",
	"--color=always",
	"--color=always -n -H",
	"--color=always -o -b",
	"--color=always -C 1 -n",
	"--color=always -v",
	"--color=always -i -A 1",
	"--color=always -c",
	"--color=always -l",
	"--color=never -n",
	"-q -v",
	"-l -c",
	"-L -c",
	"-s -n",
};
#define NCOMBOS (sizeof(combos) / sizeof(*combos))

/*
 * tsgrep-only options that must leave the output unchanged.  "--fsm" runs
 * the fsm algorithm on the same literals, spelled in the fsm syntax
 * (tsgrep's --algo fsm takes token arrays, not literals).
 */
static const char *const variants[][3] = {
	{ "--block-size", "1", NULL }, { "--block-size", "2", NULL },
	{ "--block-size", "7", NULL }, { "--block-size", "4096", NULL },
	{ "--algo", "kmp", NULL },     { "--algo", "bm", NULL },
	{ "--algo", "shiftor", NULL }, { "--fsm", NULL, NULL },
	{ "-j", "3", NULL },
};
#define NVARIANTS (sizeof(variants) / sizeof(*variants))

static void split_opts(struct inv *v, const char *opts)
{
	char *copy = strdup(opts), *save = NULL, *tok;

	assert_non_null(copy);
	for (tok = strtok_r(copy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save))
		inv_own(v, strdup(tok));
	free(copy);
}

static void add_patterns(struct inv *v, int *pattern_file_no)
{
	unsigned int how = rng_below(&rng, 10), k, n;
	char *p;

	if (how < 5) {
		/* positional; "--" first when it looks like an option */
		p = pick_pattern();
		if (p[0] == '-' || rng_below(&rng, 8) == 0)
			inv_add(v, "--");
		inv_pattern(v, p);
		return;
	}
	if (how < 8) {
		n = 2 + rng_below(&rng, 2);
		for (k = 0; k < n; k++) {
			inv_add(v, "-e");
			inv_pattern(v, pick_pattern());
		}
		return;
	}
	{
		/* -f: a file of patterns, sometimes with a CRLF-free
		 * duplicate; never an empty line (that matches all, and is
		 * tested on its own) */
		struct test_buf b = { 0 };
		char name[64];

		n = 1 + rng_below(&rng, 3);
		for (k = 0; k < n; k++) {
			p = pick_pattern();
			test_buf_adds(&b, p);
			test_buf_adds(&b, "\n");
			free(p);
		}
		snprintf(name, sizeof(name), "pats%d", (*pattern_file_no)++);
		write_file(name, b.p, b.len);
		free(b.p);
		inv_add(v, "-f");
		inv_own(v, strdup(name));
		v->pattern_file = true;
	}
}

static void add_inputs(struct inv *v)
{
	unsigned int how = rng_below(&rng, 12), k, n;

	if (how < 4) {
		inv_add(v, text_files[rng_below(&rng, NTEXT)]);
	} else if (how < 7) {
		n = 2 + rng_below(&rng, 4);
		for (k = 0; k < n; k++) {
			unsigned int f = rng_below(&rng, NTEXT + 5);

			inv_add(v, f < NTEXT ? text_files[f] :
					       other_files[f - NTEXT]);
		}
	} else if (how < 8) {
		inv_add(v, other_files[rng_below(&rng, 5)]);
	} else if (how < 10) {
		const struct test_buf *c = &corpus[rng_below(&rng, NTEXT)];

		v->use_stdin = true;
		v->stdin_data = c->p;
		v->stdin_len = c->len;
		if (how == 9) {
			inv_add(v, "t4");
			inv_add(v, "-");
		}
	} else if (how == 10) {
		inv_add(v, "long");
	} else {
		for (k = 0; k < 60; k += 1 + rng_below(&rng, 3)) {
			static char names[60][16];

			snprintf(names[k], sizeof(names[k]), "many/f%02u", k);
			inv_add(v, names[k]);
		}
	}
}

static unsigned long iterations(void)
{
	const char *env = getenv("TSGREP_TEST_ITER");

	if (env)
		return strtoul(env, NULL, 0);
	return sanitized ? 3 : 12;
}

static void test_option_combinations(void **st)
{
	unsigned long iter = iterations(), i, before = n_invocations;
	unsigned long diffs = 0;
	int pf = 0;
	size_t c, k;

	(void)st;
	for (c = 0; c < NCOMBOS; c++) {
		n_combos++;
		for (i = 0; i < iter; i++) {
			struct inv v = { 0 };

			split_opts(&v, combos[c]);
			add_patterns(&v, &pf);
			add_inputs(&v);
			if (!compare(combos[c], &v, NULL))
				diffs++;
			/* a tsgrep-only option on every other run */
			if (i % 2 == 0) {
				k = rng_below(&rng, NVARIANTS);
				/* the fsm has no case folding, and -f
				 * files hold literals */
				if (!(!strcmp(variants[k][0], "--fsm") &&
				      (strstr(combos[c], "-i") ||
				       v.pattern_file)) &&
				    !compare(combos[c], &v, variants[k]))
					diffs++;
			}
			inv_free(&v);
		}
	}
	printf("# option combinations: %zu, invocations: %lu\n", NCOMBOS,
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* Every variant over the inputs most likely to break them. */
static void test_variants_exhaustive(void **st)
{
	static const char *const opts[] = { "-n -b",   "-o -b", "-c",
					    "-C 1 -n", "-v -n", "-i -o -n" };
	static const char *const inputs[] = { "long", "t1", "bin0", "t0" };
	unsigned long before = n_invocations, diffs = 0;
	/* sanitizer builds: half the inputs and options */
	size_t o, k, f, nin = sanitized ? 2 : 4;
	size_t nopt = sizeof(opts) / sizeof(*opts) / (sanitized ? 2 : 1);

	(void)st;
	for (o = 0; o < nopt; o++) {
		char combo[64];

		snprintf(combo, sizeof(combo), "variants %s", opts[o]);
		n_combos++;
		for (f = 0; f < nin; f++)
			for (k = 0; k < NVARIANTS; k++) {
				struct inv v = { 0 };

				if (strstr(opts[o], "-i") &&
				    !strcmp(variants[k][0], "--fsm"))
					continue;
				split_opts(&v, opts[o]);
				inv_add(&v, "-e");
				inv_pattern(&v, strdup("needle"));
				inv_add(&v, "-e");
				inv_pattern(&v, strdup("foo"));
				inv_add(&v, inputs[f]);
				if (!compare(combo, &v, variants[k]))
					diffs++;
				inv_free(&v);
			}
	}
	printf("# variants (--block-size 1/2/7/4096, --algo kmp/bm/shiftor, "
	       "--fsm, -j 3): %lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

static void test_recursive(void **st)
{
	static const char *const opts[] = {
		"-r",
		"-rn",
		"-rc",
		"-rl",
		"-rL",
		"-rh",
		"-r -o -b",
		"-ri",
		"-r -H",
		"-rv -c",
		"-r -a -n",
		"-rs",
		"-r --color=always",
	};
	unsigned long before = n_invocations, diffs = 0;
	size_t o, k;

	(void)st;
	for (o = 0; o < sizeof(opts) / sizeof(*opts); o++) {
		char combo[64];

		snprintf(combo, sizeof(combo), "%s (tree)", opts[o]);
		n_combos++;
		for (k = 0; k < 4; k += sanitized ? 2 : 1) {
			struct inv v = { 0 };

			split_opts(&v, opts[o]);
			inv_own(&v, pick_pattern());
			v.sort = true;
			if (k == 0)
				inv_add(&v, "tree");
			else if (k == 1)
				inv_add(&v, "tree/sub"), inv_add(&v, "t0");
			else if (k == 2)
				v.cwd = "tree"; /* no operand: "." unnamed */
			else
				inv_add(&v, "tree/"), inv_add(&v, "many");
			if (!compare(combo, &v, NULL))
				diffs++;
			inv_free(&v);
		}
	}
	printf("# -r: %lu invocations\n", n_invocations - before);
	assert_no_diffs(diffs);
}

/* Files of 4 MiB or more are mapped, not read: the same output as grep. */
static void test_mapped_files(void **st)
{
	static const char *const opts[] = {
		"-c",	 "-n",	    "-o -b", "-v -c", "-C 2 -n",
		"-i -c", "-m 5 -n", "-a -n", "-l",    "-c",
	};
	static const char *const inputs[] = { "big", "bigbin" };
	unsigned long before = n_invocations, diffs = 0;
	size_t o, f, k;

	(void)st;
	for (o = 0; o < sizeof(opts) / sizeof(*opts); o++) {
		char combo[64];

		snprintf(combo, sizeof(combo), "%s (mapped)", opts[o]);
		n_combos++;
		for (f = 0; f < 2; f++)
			for (k = 0; k < 3; k++) {
				struct inv v = { 0 };

				split_opts(&v, opts[o]);
				if (k == 2)
					inv_own(&v, pick_pattern());
				else
					inv_add(&v, k ? "foo" : "needle");
				inv_add(&v, inputs[f]);
				/* the last: both files, by two workers */
				if (o + 1 == sizeof(opts) / sizeof(*opts))
					inv_add(&v, inputs[!f]);
				if (!compare(
					    combo, &v,
					    o + 1 == sizeof(opts) / sizeof(*opts) ?
						    variants[NVARIANTS - 1] :
						    NULL))
					diffs++;
				inv_free(&v);
			}
	}
	printf("# mapped files (4 MiB or more): %lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/*
 * Start @argv with its stdout on a pipe the test reads (through *@out_fd,
 * so the test decides when the child may write on) and its stderr in
 * @errp; the child's pid.
 */
static pid_t start_piped(char *const argv[], const char *errp, int *out_fd)
{
	int out[2];
	pid_t pid;

	assert_int_equal(pipe(out), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (e < 0 || dup2(out[1], 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	*out_fd = out[0];
	return pid;
}

/*
 * A mapped file that shrinks under tsgrep: its output pipe is left full so
 * tsgrep stops early in the file, the file is cut to 1 MiB, then the pipe
 * is drained.  tsgrep must report the file, exit 2 and not die of SIGBUS.
 */
static void test_mapped_file_shrinks(void **st)
{
	char path[4400], *argv[] = { tsgrep_path, "-n", "e", path, NULL };
	char errp[4400], buf[65536];
	int out_fd, status;
	size_t errlen, total = 0;
	unsigned long diffs = 0;
	struct test_buf b = { 0 };
	ssize_t n;
	pid_t pid;
	char *err;

	(void)st;
	snprintf(path, sizeof(path), "%s/shrinks", work);
	snprintf(errp, sizeof(errp), "%s/shrinks.err", capdir);
	while (b.len < (16u << 20))
		test_buf_adds(&b, "every line here matches the pattern e\n");
	write_file("shrinks", b.p, b.len);
	free(b.p);
	pid = start_piped(argv, errp, &out_fd);
	/* the first bytes: tsgrep has mapped the file and is searching */
	n = read(out_fd, buf, 1);
	assert_true(n == 1);
	/* the pipe fills and tsgrep blocks writing */
	nanosleep(&(struct timespec){ .tv_nsec = 200000000 }, NULL);
	assert_int_equal(truncate(path, 1 << 20), 0);
	while ((n = read(out_fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		total += (size_t)n;
	}
	close(out_fd);
	while (waitpid(pid, &status, 0) < 0)
		assert_int_equal(errno, EINTR);
	err = slurp(errp, &errlen);
	n_invocations++;
	printf("# a mapped 16 MiB file cut to 1 MiB while searched: %zu bytes "
	       "out, %s %d, stderr \"%.100s\"\n",
	       total + 1, WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
	       err);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 2 ||
	    !strstr(err, "shrinks: file shrank while being read")) {
		printf("# DIFFERENCE [mapped]: a shrinking file was not "
		       "reported\n");
		diffs++;
	}
	free(err);
	assert_no_diffs(diffs);
}

/*
 * A mapped file that grows while tsgrep reads it: as grep, tsgrep must read
 * on to the end of what is there when it gets there.  No timing is
 * involved: every line of the 8 MiB file matches and is printed, so tsgrep
 * cannot get further ahead of this reader than the pipe and its own
 * buffers hold (well under 2 MiB); after the first byte has been read the
 * file is mapped at its first size, and the lines appended then are far
 * ahead of tsgrep.  The last line is unfinished when the file is mapped
 * and completed by the append.  The result must be grep's on the grown
 * file.
 */
static void test_mapped_file_grows(void **st)
{
	char path[4400], *argv[] = { tsgrep_path, "-n", "needle", path, NULL };
	char *gargv[] = { "grep", "-F", "-n", "needle", "grows", NULL };
	static const char more[] = " and its end\nappended needle one\n"
				   "appended, no match\nappended needle, last";
	char errp[4400], buf[65536], ts[64], gs[64];
	int out_fd, status, fd;
	size_t errlen;
	unsigned long diffs = 0;
	struct test_buf b = { 0 }, got = { 0 };
	struct child_result g;
	ssize_t n;
	pid_t pid;
	char *err;

	(void)st;
	snprintf(path, sizeof(path), "%s/grows", work);
	snprintf(errp, sizeof(errp), "%s/grows.err", capdir);
	while (b.len < (8u << 20))
		test_buf_adds(&b, "a needle in every line of the first part\n");
	test_buf_adds(&b, "an unfinished needle line");
	write_file("grows", b.p, b.len);
	free(b.p);
	pid = start_piped(argv, errp, &out_fd);
	/* the first byte: tsgrep has mapped the file at its first size */
	n = read(out_fd, buf, 1);
	assert_true(n == 1);
	test_buf_add(&got, buf, 1);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, more, sizeof(more) - 1),
			 (ssize_t)sizeof(more) - 1);
	assert_int_equal(close(fd), 0);
	while ((n = read(out_fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		test_buf_add(&got, buf, (size_t)n);
	}
	close(out_fd);
	while (waitpid(pid, &status, 0) < 0)
		assert_int_equal(errno, EINTR);
	err = slurp(errp, &errlen);
	run_prog(gargv, NULL, NULL, NULL, &g);
	n_invocations++;
	child_status_text(status, ts, sizeof(ts));
	child_status_text(g.status, gs, sizeof(gs));
	printf("# a mapped 8 MiB file grown while searched: tsgrep %s, %zu "
	       "bytes out; grep on the grown file %s, %zu bytes\n",
	       ts, got.len, gs, g.outlen);
	if (strcmp(ts, gs) || got.len != g.outlen ||
	    memcmp(got.p, g.out, g.outlen) || errlen) {
		size_t at = 0;

		while (at < g.outlen && at < got.len && g.out[at] == got.p[at])
			at++;
		printf("# DIFFERENCE [mapped]: the lines appended to a mapped "
		       "file were not searched as grep searches them, stderr "
		       "\"%.100s\"\n",
		       err);
		show_bytes("grep  ", g.out, g.outlen, at);
		show_bytes("tsgrep", got.p, got.len, at);
		diffs++;
	}
	child_result_free(&g);
	free(got.p);
	free(err);
	assert_no_diffs(diffs);
}

/* ---- binary files, trees, buffered output -------------------------------- */

/* Pack-like bytes: random, NULs among them (compressed data looks so),
 * with lines holding "needle" and "foo" now and then. */
static void gen_packlike(struct test_buf *b, size_t size)
{
	char chunk[4096];
	size_t i;

	test_buf_add(b, "PACK\0\0\0\2", 8);
	while (b->len < size) {
		for (i = 0; i < sizeof(chunk); i++)
			chunk[i] = (char)rng_below(&rng, 256);
		test_buf_add(b, chunk, sizeof(chunk));
		if (!rng_below(&rng, 8))
			test_buf_adds(b, "\na needle and foo\n");
		if (!rng_below(&rng, 16))
			test_buf_adds(b, "foofoo needle");
	}
}

static struct test_buf binfile[4];
static const char *const binnames[4] = { "binpage", "binrand", "binlate",
					 "binsmall" };

/*
 * The binary files of test_binary_files: each is searched alone (4 MiB
 * or more: mapped, then read once it turns binary), beside another file
 * (read), and from a pipe.
 *  binpage: text with NULs at both sides of a page boundary past 4 MiB,
 *           and "needle" across the next one;
 *  binrand: 6 MiB of pack-like bytes, NULs everywhere;
 *  binlate: text whose only NUL is in its last, read, slice;
 *  binsmall: pack-like bytes under a read's size.
 */
static void make_binaries(void)
{
	size_t at;

	if (binfile[0].len)
		return;
	while (binfile[0].len < (5u << 20))
		gen_text(&binfile[0], 2000, 0, 8, true);
	at = (4u << 20) + 3 * 4096;
	binfile[0].p[at - 1] = '\0';
	binfile[0].p[at] = '\0';
	memcpy(binfile[0].p + at + 4096 - 3, "needle", 6);
	gen_packlike(&binfile[1], 6u << 20);
	while (binfile[2].len < (4u << 20) + 200000)
		gen_text(&binfile[2], 2000, 0, 8, true);
	binfile[2].p[binfile[2].len - 1000] = '\0';
	gen_packlike(&binfile[3], 50000);
	for (at = 0; at < 4; at++)
		write_file(binnames[at], binfile[at].p, binfile[at].len);
}

static void test_binary_files(void **st)
{
	static const char *const opts[] = {
		"",	    "-c",	"-o",	 "-a -c",
		"-a -o -b", "-c -v",	"-n",	 "-l",
		"-L",	    "-m 3 -c",	"-I -c", "--binary-files=without-match",
		"-v",	    "-b -o -a", "-c -i", "-q",
	};
	unsigned long before = n_invocations, diffs = 0;
	size_t o, f, how;

	(void)st;
	make_binaries();
	for (o = 0; o < sizeof(opts) / sizeof(*opts); o++) {
		char combo[80];

		snprintf(combo, sizeof(combo), "%s (binary)", opts[o]);
		n_combos++;
		for (f = 0; f < 4; f++)
			for (how = 0; how < 3; how += sanitized ? 2 : 1) {
				struct inv v = { 0 };

				/* a pipe's reads split where grep's may not:
				 * only files binary from their first bytes
				 * (a documented difference) */
				if (how == 2 && (f == 0 || f == 2))
					continue;
				split_opts(&v, opts[o]);
				inv_own(&v, strdup(f == 1 && how ? "foo" :
								   "needle"));
				if (how == 2) {
					/* a pipe: read, never mapped */
					v.use_stdin = true;
					v.stdin_data = binfile[f].p;
					v.stdin_len = binfile[f].len;
				} else {
					inv_add(&v, binnames[f]);
					/* two files: read, by two workers */
					if (how == 1)
						inv_add(&v,
							binnames[(f + 1) % 4]);
				}
				if (!compare(combo, &v,
					     how == 1 ?
						     variants[NVARIANTS - 1] :
						     NULL))
					diffs++;
				inv_free(&v);
			}
	}
	printf("# binary files (mapped, read, piped; -z is not supported): "
	       "%lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* Minor page faults of @argv (run in work with no input or output): the
 * growth of the waited children's count. */
static long child_minflt(char *const argv[])
{
	struct rusage before, after;
	int status;
	pid_t pid;

	assert_int_equal(getrusage(RUSAGE_CHILDREN, &before), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(null, 2) < 0 || chdir(work))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		assert_int_equal(errno, EINTR);
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &after), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
	return after.ru_minflt - before.ru_minflt;
}

/*
 * A binary file's pages are never written: its NULs end lines where they
 * are.  Rewriting them in a private mapping copied every page (a fault
 * each); the 6 MiB pack-like file may now cost no more than a quarter of
 * that over what the 5 MiB text file "big" costs (both searched alone, so
 * both mapped at first; sanitizers fault on their shadow memory alike).
 */
static void test_binary_not_copied(void **st)
{
	char *bin[] = { tsgrep_path, "-c", "needle", "binrand", NULL };
	char *text[] = { tsgrep_path, "-c", "needle", "big", NULL };
	long pages, base, faults;

	(void)st;
	make_binaries();
	pages = (long)(binfile[1].len / 4096);
	base = child_minflt(text);
	faults = child_minflt(bin);
	n_invocations += 2;
	printf("# page faults: %ld on a %ld-page binary file, %ld on a 5 MiB "
	       "text file\n",
	       faults, pages, base);
	assert_true(faults - base < pages / 4);
}

static int cmp_dirent(const void *a, const void *b)
{
	return strcmp((*(const struct dirent *const *)a)->d_name,
		      (*(const struct dirent *const *)b)->d_name);
}

/* The files under @rel in tsgrep -r's order: depth first, sorted by
 * name (byte order); regular files only. */
static void expected_order(const char *rel, struct test_buf *out)
{
	char path[8800], child[4400];
	struct dirent **names;
	struct stat sb;
	int n, i;

	snprintf(path, sizeof(path), "%s/%s", work, rel);
	n = scandir(path, &names, NULL, NULL);
	assert_true(n >= 0);
	qsort(names, (size_t)n, sizeof(*names), cmp_dirent);
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, "..")) {
			snprintf(child, sizeof(child), "%s/%s", rel, name);
			snprintf(path, sizeof(path), "%s/%s", work, child);
			assert_int_equal(lstat(path, &sb), 0);
			if (S_ISDIR(sb.st_mode)) {
				expected_order(child, out);
			} else if (S_ISREG(sb.st_mode)) {
				test_buf_adds(out, child);
				test_buf_adds(out, "\n");
			}
		}
		free(names[i]);
	}
	free(names);
}

/*
 * A tree read while it is searched (the walk feeds the workers): -l lists
 * its files in sorted depth-first order, and -r output is the same with
 * -j 1 to 4 (and grep's, as sorted lines).  Names that sort differently
 * as bytes and in a locale, a deep chain, empty folders, a symbolic link
 * and a FIFO (both skipped by -r).
 */
static void test_tree_order(void **st)
{
	static const char *const dirs[] = {
		"otree",       "otree/a",
		"otree/a-b",   "otree/a.b",
		"otree/B",     "otree/_x",
		"otree/a/a",   "otree/\xc3\xa9t\xc3\xa9",
		"otree/empty",
	};
	static const char *const opts[] = { "-r -n", "-r -c", "-r -o -b",
					    "-r -l", "-r -L", "-r -h -C 1" };
	char name[256], path[4400], jobs[8];
	struct test_buf expect = { 0 }, b = { 0 };
	unsigned long before = n_invocations, diffs = 0;
	size_t d, o, i, len;
	int j;

	(void)st;
	for (d = 0; d < sizeof(dirs) / sizeof(*dirs); d++)
		make_dir(dirs[d]);
	/* a chain of 40 folders */
	len = (size_t)snprintf(name, sizeof(name), "otree/deep");
	for (i = 0; i < 40; i++) {
		make_dir(name);
		snprintf(path, sizeof(path), "%s/f", name);
		b.len = 0;
		gen_text(&b, 3, 0, 0, true);
		test_buf_adds(&b, "needle\n");
		write_file(path, b.p, b.len);
		len += (size_t)snprintf(name + len, sizeof(name) - len, "/d");
	}
	for (i = 0; i < 300; i++) {
		static const char *const stems[] = { "f",  "F",	 "f-",
						     "f.", "f_", "\xc3\xa9" };

		snprintf(name, sizeof(name), "%s/%s%zu",
			 dirs[i % (sizeof(dirs) / sizeof(*dirs) - 1)],
			 stems[i % 6], i * 7919 % 1000);
		b.len = 0;
		gen_text(&b, rng_below(&rng, 20), 0, 10, i % 3);
		if (i % 7)
			test_buf_adds(&b, "a needle here\n");
		if (i % 50 == 3)
			test_buf_add(&b, "needle\0bin\n", 11);
		write_file(name, b.p, b.len);
	}
	snprintf(path, sizeof(path), "%s/otree/link", work);
	assert_int_equal(symlink("a", path), 0);
	snprintf(path, sizeof(path), "%s/otree/fifo", work);
	assert_int_equal(mkfifo(path, 0644), 0);
	expected_order("otree", &expect);

	for (j = 1; j <= 4; j++) {
		char *argv[] = { tsgrep_path, "-j",   jobs,    "-r",
				 "-L",	      "zzqq", "otree", NULL };
		struct child_result r;

		snprintf(jobs, sizeof(jobs), "%d", j);
		run_prog(argv, NULL, NULL, NULL, &r);
		n_invocations++;
		if (r.outlen != expect.len ||
		    memcmp(r.out, expect.p, r.outlen)) {
			printf("# DIFFERENCE [tree order]: tsgrep -j %d -r -L "
			       "zzqq otree: not in sorted depth-first order\n",
			       j);
			show_bytes("expected", expect.p, expect.len, 0);
			show_bytes("tsgrep  ", r.out, r.outlen, 0);
			diffs++;
		}
		child_result_free(&r);
	}
	for (o = 0; o < sizeof(opts) / sizeof(*opts); o++) {
		struct child_result first = { 0 };
		char combo[64];

		snprintf(combo, sizeof(combo), "%s (ordered tree)", opts[o]);
		n_combos++;
		for (j = 1; j <= 4; j++) {
			const char *extra[] = { "-j", jobs, NULL };
			char *targv[16] = { tsgrep_path, "-j", jobs };
			struct inv v = { 0 };
			struct child_result r;
			int n = 3, k;

			snprintf(jobs, sizeof(jobs), "%d", j);
			split_opts(&v, opts[o]);
			inv_add(&v, "needle");
			inv_add(&v, "otree");
			v.sort = true;
			if (!compare(combo, &v, extra))
				diffs++;
			/* and byte for byte the same as -j 1 */
			for (k = 0; k < v.argc; k++)
				targv[n++] = v.argv[k];
			targv[n] = NULL;
			run_prog(targv, NULL, NULL, NULL, &r);
			n_invocations++;
			if (j == 1) {
				first = r;
			} else {
				if (r.outlen != first.outlen ||
				    memcmp(r.out, first.out, r.outlen)) {
					printf("# DIFFERENCE [tree order]: "
					       "tsgrep -j %d %s differs from "
					       "-j 1\n",
					       j, opts[o]);
					diffs++;
				}
				child_result_free(&r);
			}
			inv_free(&v);
		}
		child_result_free(&first);
	}
	free(expect.p);
	free(b.p);
	printf("# ordered tree (-j 1 to 4): %lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* Read what @fd has within @ms milliseconds into @b. */
static void read_for(int fd, struct test_buf *b, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char chunk[4096];
	ssize_t n;

	while (poll(&pfd, 1, ms) > 0) {
		n = read(fd, chunk, sizeof(chunk));
		if (n <= 0)
			break;
		test_buf_add(b, chunk, (size_t)n);
		ms = 50; /* the rest of what is there */
	}
}

/*
 * Output is buffered across files (written when the buffer is full, at
 * the end, before a message), yet a reader of tsgrep's output never waits
 * for a line tsgrep holds while tsgrep itself waits for input: each
 * selected line of a pipe arrives before the next input is written, with
 * or without --line-buffered.  Then the order of stdout and stderr in one
 * file is grep's around a missing file.
 */
static void test_buffered_output(void **st)
{
	static const char *const lines[] = { "a needle\n", "no\n",
					     "needle two\n", "x" };
	unsigned long diffs = 0;
	int lb;

	(void)st;
	for (lb = 0; lb < 2; lb++) {
		char *argv[] = { tsgrep_path, lb ? "--line-buffered" : "-n",
				 "needle", NULL };
		int in[2], out[2], status;
		struct test_buf got = { 0 };
		size_t i;
		pid_t pid;

		assert_int_equal(pipe(in), 0);
		assert_int_equal(pipe(out), 0);
		fflush(stdout);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
				_exit(126);
			close(in[1]);
			close(out[0]);
			execv(argv[0], argv);
			_exit(127);
		}
		close(in[0]);
		close(out[1]);
		for (i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
			size_t had = got.len;

			assert_int_equal(write(in[1], lines[i],
					       strlen(lines[i])),
					 (ssize_t)strlen(lines[i]));
			if (!strstr(lines[i], "needle"))
				continue;
			/* tsgrep now waits for input: the line is out */
			read_for(out[0], &got, 10000);
			if (got.len == had) {
				printf("# DIFFERENCE [buffering]: %s: \"%.*s\" "
				       "was not written before tsgrep waited "
				       "for more input\n",
				       argv[1], (int)strlen(lines[i]) - 1,
				       lines[i]);
				diffs++;
			}
		}
		close(in[1]);
		read_for(out[0], &got, 10000);
		close(out[0]);
		while (waitpid(pid, &status, 0) < 0)
			assert_int_equal(errno, EINTR);
		n_invocations++;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
		    strcmp(got.p ? got.p : "",
			   lb ? "a needle\nneedle two\n" :
				"1:a needle\n3:needle two\n")) {
			printf("# DIFFERENCE [buffering]: %s: status %d, "
			       "output \"%.100s\"\n",
			       argv[1], status, got.p ? got.p : "");
			diffs++;
		}
		free(got.p);
	}
	{
		/* stdout and stderr into one file: grep's order */
		char tcmd[4400], *cmd[2] = { "grep -F -c foo t0 missing t1 "
					     "many 2>&1",
					     tcmd };
		struct child_result g, t;
		char *a, *b;
		size_t i;

		snprintf(tcmd, sizeof(tcmd),
			 "'%s' -c foo t0 missing t1 many 2>&1 | "
			 "sed 's/^tsgrep:/grep:/'",
			 tsgrep_path);
		for (i = 0; i < 2; i++) {
			char *argv[] = { "sh", "-c", cmd[i], NULL };

			run_prog(argv, NULL, NULL, NULL, i ? &t : &g);
		}
		n_invocations += 2;
		a = g.out;
		b = t.out;
		if (strcmp(a, b)) {
			printf("# DIFFERENCE [buffering]: stdout and stderr "
			       "interleave differently:\n#   grep "
			       "\"%.200s\"\n#   tsgrep \"%.200s\"\n",
			       a, b);
			diffs++;
		}
		child_result_free(&g);
		child_result_free(&t);
	}
	printf("# buffered output: pipes with and without --line-buffered, "
	       "stdout and stderr in order\n");
	assert_no_diffs(diffs);
}

/* Fixed cases: edge patterns, errors that grep also has. */
static void test_fixed_cases(void **st)
{
	static const char *const cases[][12] = {
		/* the empty pattern matches every line */
		{ "", "t0", NULL },
		{ "-c", "", "t1", "t2", NULL },
		{ "-v", "", "t0", NULL },
		{ "-o", "", "t0", NULL },
		{ "-n", "-e", "", "-e", "foo", "t2", NULL },
		{ "-e", "foo", "-e", "foo", "t0", NULL },
		{ "-o", "-e", "ab", "-e", "abc", "-e", "b", "t3", "t4", NULL },
		{ "-o", "-i", "-e", "FOOBAR", "-e", "foo", "t5", NULL },
		{ "-c", "\r", "t1", NULL },
		{ "-n", "o\r", "t1", "t2", NULL },
		{ "-b", "-o", "needle", "long", NULL },
		{ "-c", "xyzzy", "long", NULL },
		{ "-n", "foo", "long", NULL },
		{ "-C", "1", "-n", "foo", "long", NULL },
		/* -m stops at a long line: its after-context still comes */
		{ "-m", "1", "-A", "2", "xyzzy", "long", NULL },
		{ "-m", "2", "-A", "3", "-n", "needle", "long", NULL },
		{ "-c", "", "empty", "nl-only", NULL },
		{ "-L", "", "empty", "nl-only", NULL },
		{ "-n", "", "nl-only", NULL },
		/* a missing file among good ones: others still searched */
		{ "foo", "t0", "missing", "t1", NULL },
		{ "-s", "foo", "t0", "missing", "t1", NULL },
		{ "-q", "foo", "missing", "t0", NULL },
		{ "-q", "zzq", "missing", "t0", NULL },
		{ "-l", "foo", "missing", "t0", NULL },
		{ "-c", "foo", "nodir/x", NULL },
		/* a directory without -r */
		{ "foo", "tree", NULL },
		{ "foo", "t0", "tree", "t1", NULL },
		{ "-s", "foo", "tree", "t0", NULL },
		{ "-c", "foo", "tree", NULL },
		{ "-L", "foo", "tree", "t0", NULL },
		{ "-vc", "-H", "foo", "tree", NULL },
		/* usage errors */
		{ NULL },
		{ "-e", NULL },
		{ "-f", "missing", "t0", NULL },
		/* no pattern at all: nothing matches */
		{ "-f", "empty", "t0", NULL },
		{ "-v", "-f", "empty", "t0", NULL },
		{ "-f", "nl-only", "-c", "t0", NULL },
		{ "-A", "x", "foo", "t0", NULL },
		{ "-C", "-1", "foo", "t0", NULL },
		{ "--bogus-option", "foo", "t0", NULL },
		{ "-y", "foo", "t0", NULL },
		/* "--" ends options; "-" is stdin */
		{ "--", "-b", "t0", NULL },
		{ "-e", "--", "t0", NULL },
		{ "-H", "foo", "-", NULL },
		{ "-c", "foo", "-", "t0", "-", NULL },
	};
	unsigned long before = n_invocations, diffs = 0;
	size_t c;
	int i;

	(void)st;
	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		struct inv v = { 0 };
		char combo[128];

		for (i = 0; cases[c][i]; i++)
			inv_add(&v, cases[c][i]);
		v.use_stdin = true; /* "-" reads t3's text */
		v.stdin_data = corpus[3].p;
		v.stdin_len = corpus[3].len;
		/* named by its arguments in the messages */
		snprintf(combo, sizeof(combo), "fixed:");
		for (i = 0; cases[c][i]; i++)
			snprintf(combo + strlen(combo),
				 sizeof(combo) - strlen(combo), " %s",
				 cases[c][i]);
		n_combos++;
		if (!compare(combo, &v, NULL))
			diffs++;
		inv_free(&v);
	}
	printf("# fixed cases: %lu invocations\n", n_invocations - before);
	assert_no_diffs(diffs);
}

/*
 * -m, -A, -B, -C and -NUM take what grep 3.8 takes, with its meaning: a
 * count too big for the type is unlimited, and so is a negative -m (a
 * negative context is an error); a sign and leading blanks are allowed,
 * anything after the digits is not.  More than 21 digits of -NUM is an
 * error in grep (its digit buffer), 21 are not.  With -v, grep 3.8 selects
 * no line under a negative -m (a documented difference): tsgrep's -v -m -1
 * is checked against grep -v without -m.
 */
static void test_count_arguments(void **st)
{
	static const char *const cases[][6] = {
		{ "-m", "99999999999999999999", NULL },
		{ "-m", "9223372036854775808", NULL },
		{ "-m", "9223372036854775807", NULL },
		{ "-m", "-1", NULL },
		{ "-m", "-5", "-c", NULL },
		{ "-m", "-99999999999999999999", NULL },
		{ "-m", "-0", NULL },
		{ "-m", "+2", NULL },
		{ "-m", " 2", NULL },
		{ "-m", "00", NULL },
		{ "-m", "2x", NULL },
		{ "-m", "0x3", NULL },
		{ "-m", "", NULL },
		{ "-m", "-", NULL },
		{ "-m", "2 ", NULL },
		{ "--max-count=99999999999999999999", NULL },
		{ "--max-count=-1", "-A", "1", NULL },
		{ "--max-count", "-3", NULL },
		{ "-m-1", "-c", NULL },
		{ "-A", "99999999999999999999", NULL },
		{ "-B", "99999999999999999999", NULL },
		{ "-C", "99999999999999999999", NULL },
		{ "-A", "9223372036854775808", "-B", "1", NULL },
		{ "-A", "+1", NULL },
		{ "-B", " 1", NULL },
		{ "-A", "-1", NULL },
		{ "-B", "-99999999999999999999", NULL },
		{ "-C", "1x", NULL },
		{ "-C", "", NULL },
		{ "--context=99999999999999999999", NULL },
		{ "--context=-1", NULL },
		{ "--after-context=99999999999999999999", NULL },
		{ "--before-context=99999999999999999999", NULL },
		{ "-999999999999999999999", NULL },
		{ "-9999999999999999999999", NULL },
		{ "-000000000000000000000000000000002", NULL },
		{ "-m", "99999999999999999999", "-A", "99999999999999999999",
		  NULL },
	};
	static const char *const files[] = { "t0", "t2" };
	unsigned long before = n_invocations, diffs = 0;
	size_t c, f;
	int i;

	(void)st;
	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		n_combos++;
		for (f = 0; f < sizeof(files) / sizeof(*files); f++) {
			struct inv v = { 0 };
			char combo[128];

			snprintf(combo, sizeof(combo), "counts:");
			for (i = 0; cases[c][i]; i++) {
				inv_add(&v, cases[c][i]);
				snprintf(combo + strlen(combo),
					 sizeof(combo) - strlen(combo), " %s",
					 cases[c][i]);
			}
			inv_add(&v, "-n");
			inv_add(&v, "-e");
			inv_add(&v, "foo");
			inv_add(&v, files[f]);
			if (!compare(combo, &v, NULL))
				diffs++;
			inv_free(&v);
		}
	}
	for (f = 0; f < sizeof(files) / sizeof(*files); f++) {
		char *gargv[] = { "grep",	    "-F", "-v", "-n", "foo",
				  (char *)files[f], NULL };
		char *targv[] = {
			tsgrep_path,	  "-v", "-m", "-1", "-n", "foo",
			(char *)files[f], NULL
		};
		struct child_result g, t;

		run_prog(gargv, NULL, NULL, NULL, &g);
		run_prog(targv, NULL, NULL, NULL, &t);
		n_invocations++;
		if (g.status != t.status || g.outlen != t.outlen ||
		    memcmp(g.out, t.out, g.outlen)) {
			printf("# DIFFERENCE [counts: -v -m -1]: tsgrep -v -m "
			       "-1 -n foo %s: %zu bytes, status %d; grep -v "
			       "-n: %zu, %d\n",
			       files[f], t.outlen, t.status, g.outlen,
			       g.status);
			diffs++;
		}
		child_result_free(&g);
		child_result_free(&t);
	}
	printf("# -m and context counts: %lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* tsgrep's own options given bad values: exit 2, a message, no output. */
static void test_bad_tsgrep_options(void **st)
{
	static const char *const cases[][8] = {
		{ "--algo", "nosuchalgo", "foo", "t0", NULL },
		{ "--algo", "", "foo", "t0", NULL },
		{ "--hex", "|0|", "t0", NULL },
		{ "--hex", "|zz|", "t0", NULL },
		{ "--hex", "|0d 0a", "t0", NULL },
		{ "--hex", "", "t0", NULL },
		{ "--fsm", "a**", "t0", NULL },
		{ "--fsm", "[:nosuch:]", "t0", NULL },
		{ "--fsm", "\\q", "t0", NULL },
		{ "--fsm", "", "t0", NULL },
		{ "--block-size", "0", "foo", "t0", NULL },
		{ "--block-size", "x", "foo", "t0", NULL },
		{ "-j", "0", "foo", "t0", NULL },
		{ "-j", "many", "foo", "t0", NULL },
		/* GNU grep 3.8 prints its --help and exits 0 here; an
		 * error is what the user needs (a deliberate difference) */
		{ "--color=sometimes", "foo", "t0", NULL },
	};
	unsigned long diffs = 0;
	size_t c;
	int i;

	(void)st;
	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		char *argv[12];
		struct child_result r;

		argv[0] = tsgrep_path;
		for (i = 0; cases[c][i]; i++)
			argv[i + 1] = (char *)cases[c][i];
		argv[i + 1] = NULL;
		run_prog(argv, NULL, NULL, NULL, &r);
		n_invocations++;
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 2 ||
		    r.errlen == 0 || r.outlen != 0) {
			char s[64];

			child_status_text(r.status, s, sizeof(s));
			printf("# DIFFERENCE [bad option]: tsgrep %s %s: %s, "
			       "%zu bytes out, %zu err (want exit 2, a "
			       "message, no output)\n",
			       cases[c][0], cases[c][1], s, r.outlen, r.errlen);
			diffs++;
		}
		child_result_free(&r);
	}
	printf("# bad tsgrep options: %zu cases\n",
	       sizeof(cases) / sizeof(*cases));
	assert_no_diffs(diffs);
}

/* --hex and --fsm find what the equivalent literal finds. */
static void test_hex_fsm_equivalence(void **st)
{
	static const char *const cases[][3] = {
		/* tsgrep option, its pattern, the literal for grep */
		{ "--hex", "fo|6f|", "foo" },
		{ "--hex", "|0d|", "\r" },
		{ "--hex", "|6e 65 65|dle", "needle" },
		{ "--fsm", "needle", "needle" },
		{ "--fsm", "a\\-b", "a-b" },
		{ "--fsm", "\\x46oo", "Foo" },
	};
	static const char *const opts[] = { "-n", "-c", "-o -b", "-v -n" };
	unsigned long before = n_invocations, diffs = 0;
	size_t c, o;

	(void)st;
	n_combos++;
	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++)
		for (o = 0; o < sizeof(opts) / sizeof(*opts); o++) {
			const char *extra[] = { cases[c][0], cases[c][1],
						NULL };
			struct child_result g, t;
			char *gargv[16], *targv[16];
			int n = 0, m = 0;
			char *copy = strdup(opts[o]), *save = NULL, *tok;

			gargv[n++] = "grep";
			gargv[n++] = "-F";
			targv[m++] = tsgrep_path;
			for (tok = strtok_r(copy, " ", &save); tok;
			     tok = strtok_r(NULL, " ", &save))
				gargv[n++] = tok, targv[m++] = tok;
			gargv[n++] = "-e";
			gargv[n++] = (char *)cases[c][2];
			targv[m++] = (char *)extra[0];
			targv[m++] = (char *)extra[1];
			gargv[n++] = "t0", targv[m++] = "t0";
			gargv[n++] = "t1", targv[m++] = "t1";
			gargv[n++] = "long", targv[m++] = "long";
			gargv[n] = targv[m] = NULL;
			run_prog(gargv, NULL, NULL, NULL, &g);
			run_prog(targv, NULL, NULL, NULL, &t);
			n_invocations++;
			if (g.status != t.status || g.outlen != t.outlen ||
			    memcmp(g.out, t.out, g.outlen)) {
				printf("# DIFFERENCE [%s]: tsgrep %s %s '%s' "
				       "vs grep -F -e (the literal): %zu vs "
				       "%zu bytes, status %d vs %d\n",
				       cases[c][0], opts[o], cases[c][0],
				       cases[c][1], t.outlen, g.outlen,
				       t.status, g.status);
				diffs++;
			}
			child_result_free(&g);
			child_result_free(&t);
			free(copy);
		}
	printf("# --hex/--fsm against the equivalent literal: %lu "
	       "invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* --count-matches counts what grep -F -o prints: one match per line. */
static void test_count_matches(void **st)
{
	static const char *const pats[][4] = {
		{ "-e", "foo", NULL },	     { "-e", "b", NULL },
		{ "-e", "ab", "-e", "abc" }, { "-i", "-e", "FOO", NULL },
		{ "-e", "needle", NULL },
	};
	static const char *const files[] = { "t0", "t1",   "t2",
					     "t6", "long", "empty" };
	unsigned long before = n_invocations, diffs = 0;
	size_t p, f;

	(void)st;
	n_combos++;
	for (p = 0; p < sizeof(pats) / sizeof(*pats); p++)
		for (f = 0; f < sizeof(files) / sizeof(*files); f++) {
			char *gargv[12] = { "grep", "-F", "-o" };
			char *targv[12] = { tsgrep_path, "--count-matches" };
			unsigned long lines = 0;
			int n = 3, m = 2, i;
			char want[32];
			struct child_result g, t;
			size_t k;

			for (i = 0; i < 4 && pats[p][i]; i++)
				gargv[n++] = targv[m++] = (char *)pats[p][i];
			gargv[n++] = targv[m++] = (char *)files[f];
			gargv[n] = targv[m] = NULL;
			run_prog(gargv, NULL, NULL, NULL, &g);
			run_prog(targv, NULL, NULL, NULL, &t);
			n_invocations++;
			for (k = 0; k < g.outlen; k++)
				lines += g.out[k] == '\n';
			snprintf(want, sizeof(want), "%lu\n", lines);
			if (strcmp(t.out, want) || g.status != t.status) {
				printf("# DIFFERENCE [--count-matches]: %s %s "
				       "%s: tsgrep \"%.20s\" status %d, grep -o "
				       "gives %lu lines, status %d\n",
				       pats[p][0], pats[p][1], files[f], t.out,
				       t.status, lines, g.status);
				diffs++;
			}
			child_result_free(&g);
			child_result_free(&t);
		}
	printf("# --count-matches against grep -F -o: %lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* The number after "@key": in @s (a JSON line), or -1. */
static long long json_num(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/*
 * --json: one object per selected line, with the line number and offset
 * grep -n -b gives and the match offsets grep -o -b gives.  Checked as
 * "path:line:offset" and "path:offset" lists built from both sides.
 */
static void test_json(void **st)
{
	static const char *const cases[][6] = {
		{ "-e", "foo", "t0", "t1", NULL },
		{ "-e", "ab", "-e", "abc", "t4", NULL },
		{ "-e", "needle", "long", "t2", NULL },
		{ "-i", "-e", "FOO", "t5", "t6", NULL },
	};
	unsigned long before = n_invocations, diffs = 0;
	size_t c;

	(void)st;
	n_combos++;
	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		char *nb[12] = { "grep", "-F", "-H", "-n", "-b" };
		char *ob[12] = { "grep", "-F", "-H", "-o", "-b" };
		char *js[12] = { tsgrep_path, "--json" };
		struct test_buf lines = { 0 }, subs = { 0 }, glines = { 0 };
		struct test_buf gsubs = { 0 };
		struct child_result g1, g2, t;
		int n = 5, m = 2, i;
		char *line, *save = NULL, *p;

		for (i = 0; cases[c][i]; i++)
			nb[n] = ob[n] = (char *)cases[c][i], n++,
			js[m++] = (char *)cases[c][i];
		nb[n] = ob[n] = js[m] = NULL;
		run_prog(nb, NULL, NULL, NULL, &g1);
		run_prog(ob, NULL, NULL, NULL, &g2);
		run_prog(js, NULL, NULL, NULL, &t);
		n_invocations++;
		/* grep: "path:line:offset:text" -> "path:line:offset" */
		for (line = strtok_r(g1.out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *a = strchr(line, ':'), *b2, *c3;

			b2 = a ? strchr(a + 1, ':') : NULL;
			c3 = b2 ? strchr(b2 + 1, ':') : NULL;
			if (c3) {
				test_buf_add(&glines, line,
					     (size_t)(c3 - line));
				test_buf_adds(&glines, "\n");
			}
		}
		save = NULL;
		for (line = strtok_r(g2.out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *a = strchr(line, ':'), *b2;

			b2 = a ? strchr(a + 1, ':') : NULL;
			if (b2) {
				test_buf_add(&gsubs, line, (size_t)(b2 - line));
				test_buf_adds(&gsubs, "\n");
			}
		}
		save = NULL;
		for (line = strtok_r(t.out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			long long ln = json_num(line, "\"line_number\":");
			long long off = json_num(line, "\"absolute_offset\":");
			const char *path =
				strstr(line, "\"path\":{\"text\":\"");
			char tmp[512];
			size_t plen;

			if (strncmp(line, "{\"type\":\"match\"", 15) ||
			    line[strlen(line) - 1] != '}' || !path) {
				test_buf_adds(&lines, "(not a match object)\n");
				continue;
			}
			path += 16;
			plen = strcspn(path, "\"");
			snprintf(tmp, sizeof(tmp), "%.*s:%lld:%lld\n",
				 (int)plen, path, ln, off);
			test_buf_adds(&lines, tmp);
			for (p = strstr(line, "\"submatches\":");
			     p && (p = strstr(p, "\"start\":")); p++) {
				snprintf(tmp, sizeof(tmp), "%.*s:%lld\n",
					 (int)plen, path,
					 off + strtoll(p + 8, NULL, 10));
				test_buf_adds(&subs, tmp);
			}
		}
		if (!lines.p || !glines.p || strcmp(lines.p, glines.p) ||
		    !subs.p || !gsubs.p || strcmp(subs.p, gsubs.p) ||
		    t.status != g1.status) {
			printf("# DIFFERENCE [--json]: case %zu (%s %s ...): "
			       "lines %s, matches %s, status %d vs %d\n",
			       c + 1, cases[c][0], cases[c][1],
			       lines.p && glines.p &&
					       !strcmp(lines.p, glines.p) ?
				       "agree" :
				       "differ",
			       subs.p && gsubs.p && !strcmp(subs.p, gsubs.p) ?
				       "agree" :
				       "differ",
			       t.status, g1.status);
			diffs++;
		}
		free(lines.p);
		free(subs.p);
		free(glines.p);
		free(gsubs.p);
		child_result_free(&g1);
		child_result_free(&g2);
		child_result_free(&t);
	}
	printf("# --json against grep -n -b and -o -b: %lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* Messages name the file and the problem; --stats reports on stderr. */
static void test_messages(void **st)
{
	static const char *const cases[][6] = {
		/* arguments..., then the words the message must hold */
		{ "foo", "tree", NULL, "tree", "directory" },
		{ "foo", "nosuchfile", NULL, "nosuchfile", "No such file" },
		{ "foo", "t0", "nodir/x", NULL, "nodir/x" },
		{ "--algo", "nosuchalgo", "foo", "t0", NULL, "nosuchalgo" },
		{ "--hex", "ab|0|", "t0", NULL, "position" },
		{ "--fsm", "ab**", "t0", NULL, "position 4" },
	};
	unsigned long diffs = 0;
	size_t c;
	int i;

	(void)st;
	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		char *argv[8] = { tsgrep_path };
		struct child_result r;

		for (i = 0; cases[c][i]; i++)
			argv[i + 1] = (char *)cases[c][i];
		argv[i + 1] = NULL;
		run_prog(argv, NULL, NULL, NULL, &r);
		n_invocations++;
		for (i++; i < 6 && cases[c][i]; i++)
			if (!strstr(r.err, cases[c][i])) {
				printf("# DIFFERENCE [messages]: tsgrep %s %s "
				       "%s: stderr \"%.200s\" lacks \"%s\"\n",
				       cases[c][0], cases[c][1],
				       cases[c][2] ? cases[c][2] : "", r.err,
				       cases[c][i]);
				diffs++;
			}
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 2) {
			printf("# DIFFERENCE [messages]: tsgrep %s %s: status "
			       "%d, want exit 2\n",
			       cases[c][0], cases[c][1], r.status);
			diffs++;
		}
		child_result_free(&r);
	}
	{
		char *argv[] = { tsgrep_path, "--stats", "-c", "foo",
				 "t0",	      "t1",	 NULL };
		struct child_result r;

		run_prog(argv, NULL, NULL, NULL, &r);
		n_invocations++;
		if (!strstr(r.err, "bytes searched") ||
		    !strstr(r.err, "2 files searched") ||
		    !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
			printf("# DIFFERENCE [--stats]: stderr \"%.200s\", "
			       "status %d\n",
			       r.err, r.status);
			diffs++;
		}
		child_result_free(&r);
	}
	printf("# messages and --stats: %zu cases\n",
	       sizeof(cases) / sizeof(*cases) + 1);
	assert_no_diffs(diffs);
}

/*
 * The same comparisons in a UTF-8 locale, where both programs treat lines
 * with invalid UTF-8 (the Latin-1 words of the corpora) as binary.
 */
static void test_utf8_locale(void **st)
{
	static const char *const opts[] = {
		"",	 "-n",	  "-c", "-o -b", "-v -n",
		"-i -n", "-a -n", "-l", "-C 1",	 "--color=always -n"
	};
	unsigned long before = n_invocations, diffs = 0, i;
	size_t o;

	(void)st;
	if (!setlocale(LC_ALL, "C.UTF-8")) {
		printf("# UTF-8 locale: not run, C.UTF-8 is not installed\n");
		return;
	}
	setlocale(LC_ALL, "C");
	setenv("LC_ALL", "C.UTF-8", 1);
	for (o = 0; o < sizeof(opts) / sizeof(*opts); o++) {
		char combo[64];

		snprintf(combo, sizeof(combo), "C.UTF-8 %s", opts[o]);
		n_combos++;
		for (i = 0; i < (sanitized ? 2u : 4u); i++) {
			struct inv v = { 0 };
			int pf = 1000 + (int)(o * 10 + i);

			split_opts(&v, opts[o]);
			add_patterns(&v, &pf);
			add_inputs(&v);
			if (!compare(combo, &v, NULL))
				diffs++;
			inv_free(&v);
		}
	}
	setenv("LC_ALL", "C", 1);
	printf("# UTF-8 locale: %lu invocations\n", n_invocations - before);
	assert_no_diffs(diffs);
}

/*
 * -i in the C locale folds ASCII letters only, as grep -F -i: 'CAFÉ' in
 * ISO-8859-1 bytes must not select 'café' (TS_IGNORECASE alone would),
 * and tsgrep must select exactly what grep does.
 */
static void test_latin1_folding(void **st)
{
	static const char *const files[] = { "t0", "t1", "t5", "t6", "t7" };
	unsigned long before = n_invocations, diffs = 0;
	size_t f;

	(void)st;
	n_combos++;
	for (f = 0; f < sizeof(files) / sizeof(*files); f++) {
		char *gargv[] = { "grep",	    "-F", "-n", "-i", "CAF\xc9",
				  (char *)files[f], NULL };
		char *targv[] = { tsgrep_path,	    "-n", "-i", "CAF\xc9",
				  (char *)files[f], NULL };
		struct child_result g, t;

		run_prog(gargv, NULL, NULL, NULL, &g);
		run_prog(targv, NULL, NULL, NULL, &t);
		n_invocations++;
		if (g.status != t.status || g.outlen != t.outlen ||
		    memcmp(g.out, t.out, g.outlen)) {
			printf("# DIFFERENCE [latin-1 -i]: tsgrep -n -i "
			       "'CAF\\xc9' %s: %zu bytes, status %d; grep -i "
			       "'CAF\\xc9': %zu, %d\n",
			       files[f], t.outlen, t.status, g.outlen,
			       g.status);
			diffs++;
		}
		child_result_free(&g);
		child_result_free(&t);
	}
	printf("# -i on ISO-8859-1 letters in the C locale (ASCII only, as "
	       "grep): %lu invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/*
 * fsm patterns with a head other than "skip anything" are anchored to the
 * start of each line (tsgrep(1), FSM PATTERNS): compared with the regex
 * grep that selects the same lines.  A {head}'s skipped bytes are not part
 * of the match, so -o is compared only for ^.
 */
static void test_fsm_anchors(void **st)
{
	static const char *const cases[][4] = {
		/* fsm, grep mode, regex, options */
		{ "^foo", "-G", "^foo", "-n" },
		{ "^foo", "-G", "^foo", "-c" },
		{ "^foo", "-G", "^foo", "-o -b" },
		{ "^a\\-b", "-G", "^a-b", "-n" },
		{ "{ }foo", "-E", "^ *foo", "-n" },
		{ "{\\s}foo", "-E", "^[[:space:]]*foo", "-c" },
		{ "{[:upper:]}oo", "-E", "^[[:upper:]]*oo", "-n" },
		{ "^[:alpha:]+ ", "-E", "^[[:alpha:]]+ ", "-n" },
		{ "^x", "-G", "^x", "-v -c" },
	};
	/* ASCII only: grep's classes in the C locale leave out the Latin-1
	 * letters that the kernel's table (and so the fsm) includes */
	static const char *const inputs[] = { "anchors", "ascii0", "ascii1",
					      "ascii2" };
	unsigned long before = n_invocations, diffs = 0;
	size_t c, f;
	/* a file where the lines after a non-matching one must be found */
	static const char anchors[] = "foo\nxfoo\nfoo\n  foo\nfoo \n\n a-b\n"
				      "a-b\nFOOoo\nQoo\n";

	(void)st;
	write_file("anchors", anchors, sizeof(anchors) - 1);
	for (f = 0; f < 3; f++) {
		struct test_buf b = { 0 };
		char name[16];
		size_t k;

		gen_text(&b, 40, (int)f, 10, f != 1);
		for (k = 0; k < b.len; k++)
			if ((unsigned char)b.p[k] >= 0x80)
				b.p[k] = 'e';
		snprintf(name, sizeof(name), "ascii%zu", f);
		write_file(name, b.p, b.len);
		free(b.p);
	}
	n_combos++;
	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++)
		for (f = 0; f < sizeof(inputs) / sizeof(*inputs);
		     f += sanitized ? 2 : 1) {
			char *gargv[16], *targv[16], cmd[512];
			char *copy = strdup(cases[c][3]), *save = NULL, *tok;
			struct child_result g, t;
			int n = 0, m = 0;

			gargv[n++] = "grep";
			gargv[n++] = (char *)cases[c][1];
			targv[m++] = tsgrep_path;
			targv[m++] = "--fsm";
			for (tok = strtok_r(copy, " ", &save); tok;
			     tok = strtok_r(NULL, " ", &save))
				gargv[n++] = tok, targv[m++] = tok;
			gargv[n++] = "-e";
			gargv[n++] = (char *)cases[c][2];
			targv[m++] = "-e";
			targv[m++] = (char *)cases[c][0];
			gargv[n++] = targv[m++] = (char *)inputs[f];
			gargv[n] = targv[m] = NULL;
			run_prog(gargv, NULL, NULL, NULL, &g);
			run_prog(targv, NULL, NULL, NULL, &t);
			n_invocations++;
			if (g.status != t.status || g.outlen != t.outlen ||
			    memcmp(g.out, t.out, g.outlen)) {
				snprintf(cmd, sizeof(cmd),
					 "tsgrep --fsm %s "
					 "'%s' %s vs grep %s %s '%s'",
					 cases[c][3], cases[c][0], inputs[f],
					 cases[c][1], cases[c][3], cases[c][2]);
				printf("# DIFFERENCE [fsm anchor %s]: %s: %zu "
				       "vs %zu bytes, status %d vs %d\n",
				       cases[c][0], cmd, t.outlen, g.outlen,
				       t.status, g.status);
				diffs++;
			}
			child_result_free(&g);
			child_result_free(&t);
			free(copy);
		}
	printf("# fsm anchors and heads against grep -G/-E: %lu "
	       "invocations\n",
	       n_invocations - before);
	assert_no_diffs(diffs);
}

/* ---- past 4 GiB -------------------------------------------------------- */

/*
 * A sparse file of 4 GiB + 4 MiB: four text lines, two of them past 4 GiB,
 * and holes (NUL bytes) cut into 64 MiB lines by single '\n' bytes, so no
 * line is longer than tsgrep buffers (see the documented differences about
 * lines of 4 GiB).  The expected -n and -b values are counted here from
 * the bytes written, not taken from grep (which needs minutes and gigabytes
 * on this file).
 */
static void test_offsets_past_4gib(void **st)
{
	static const char *const lines[] = {
		"first needle here\n",	"second line\n",
		"needle at 4G+\n",	"not this one\n",
		"needle again, last\n",
	};
	const uint64_t at[] = {
		0,
		18,
		(4ull << 30) + 1000,
		(4ull << 30) + 1014,
		(4ull << 30) + (3u << 20) + 7,
	};
	const uint64_t size = (4ull << 30) + (4u << 20), step = 64u << 20;
	uint64_t nl[128], off;
	unsigned long long ln[5];
	unsigned long diffs = 0;
	size_t nnl = 0, i, k;
	char path[4400], want[512] = "", *argv[12];
	struct child_result r;
	int fd;

	(void)st;
	if (getenv("TSGREP_TEST_NO_4G") ||
	    (sanitized && !getenv("TSGREP_TEST_4G"))) {
		printf("# offsets past 4 GiB: not run (%s)\n",
		       sanitized ? "sanitizer build; TSGREP_TEST_4G=1 runs "
				   "it" :
				   "TSGREP_TEST_NO_4G");
		return;
	}
	snprintf(path, sizeof(path), "%s/sparse", work);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	if (ftruncate(fd, (off_t)size)) {
		printf("# offsets past 4 GiB: not run, cannot make a sparse "
		       "file: %s\n",
		       strerror(errno));
		close(fd);
		return;
	}
	/* the line ends: those of the text lines, one written before each
	 * far line, and one written every 64 MiB of hole */
	for (i = 0; i < 5; i++) {
		size_t n = strlen(lines[i]);

		assert_int_equal(pwrite(fd, lines[i], n, (off_t)at[i]),
				 (ssize_t)n);
		nl[nnl++] = at[i] + n - 1;
	}
	nl[nnl++] = at[2] - 1;
	nl[nnl++] = at[4] - 1;
	for (off = step; off < size; off += step)
		nl[nnl++] = off;
	for (k = 5; k < nnl; k++)
		assert_int_equal(pwrite(fd, "\n", 1, (off_t)nl[k]), 1);
	close(fd);

	for (i = 0; i < 5; i++) {
		size_t w = strlen(want);

		/* the number of a line: 1 + the line ends before it */
		ln[i] = 1;
		for (k = 0; k < nnl; k++)
			ln[i] += nl[k] < at[i];
		if (i != 1) /* "second line" is not selected */
			snprintf(want + w, sizeof(want) - w, "%llu:%llu:%s",
				 ln[i], (unsigned long long)at[i], lines[i]);
	}
	argv[0] = tsgrep_path;
	argv[1] = "-a";
	argv[2] = "-n";
	argv[3] = "-b";
	argv[4] = "-e";
	argv[5] = "needle";
	argv[6] = "-e";
	argv[7] = "not this";
	argv[8] = "sparse";
	argv[9] = NULL;
	run_prog(argv, NULL, NULL, NULL, &r);
	n_invocations++;
	if (r.outlen != strlen(want) || memcmp(r.out, want, r.outlen)) {
		printf("# DIFFERENCE [4 GiB]: tsgrep -a -n -b on the sparse "
		       "file:\n# want \"%s\"\n# got %zu bytes \"%.*s\", "
		       "status %d, stderr \"%.*s\"\n",
		       want, r.outlen, (int)(r.outlen > 300 ? 300 : r.outlen),
		       r.out, r.status, (int)(r.errlen > 300 ? 300 : r.errlen),
		       r.err);
		diffs++;
	} else {
		printf("# offsets past 4 GiB: tsgrep -a -n -b on a %llu-byte "
		       "sparse file: as computed (last: line %llu at byte "
		       "%llu), peak RSS %ld KiB\n",
		       (unsigned long long)size, ln[4],
		       (unsigned long long)at[4], r.maxrss_kb);
	}
	child_result_free(&r);
	unlink(path);
	assert_no_diffs(diffs);
}

/* ---- bounded memory ------------------------------------------------------ */

struct gen_feed {
	uint64_t left;
	char block[1 << 16];
	unsigned long matches;
};

static size_t gen_feed(void *ctx, const char **p)
{
	struct gen_feed *g = ctx;
	size_t n = sizeof(g->block);

	if (g->left == 0)
		return 0;
	if (n > g->left)
		n = (size_t)g->left;
	g->left -= n;
	*p = g->block;
	return n;
}

static void test_bounded_memory(void **st)
{
	const char *env = getenv("TSGREP_TEST_BIG_MB");
	unsigned long mb = env ? strtoul(env, NULL, 0) : sanitized ? 128 : 1024;
	long bound_kb = sanitized ? 512 * 1024 : 64 * 1024;
	struct gen_feed *g = calloc(1, sizeof(*g));
	char *argv[] = { tsgrep_path, "-c", "needle", NULL };
	char want[64];
	unsigned long diffs = 0;
	size_t i, l;
	struct child_result r;

	(void)st;
	assert_non_null(g);
	/* one 64 KiB block of 64-byte lines, one of which matches, repeated:
	 * the count is known without keeping anything */
	for (i = 0; i < sizeof(g->block); i += 64) {
		memset(g->block + i, 'x', 63);
		for (l = 0; l < 63; l += 9)
			g->block[i + l] = ' ';
		g->block[i + 63] = '\n';
	}
	memcpy(g->block + 640 + 10, "needle", 6);
	g->left = (uint64_t)mb << 20;
	run_prog(argv, NULL, gen_feed, g, &r);
	n_invocations++;
	snprintf(want, sizeof(want), "%lu\n", mb * 16);
	printf("# bounded memory: %lu MiB through a pipe, tsgrep -c: %.*s "
	       "(want %lu), peak RSS %ld KiB (bound %ld KiB)\n",
	       mb, (int)(r.outlen ? r.outlen - 1 : 0), r.out, mb * 16,
	       r.maxrss_kb, bound_kb);
	if (strcmp(r.out, want) || r.maxrss_kb > bound_kb) {
		printf("# DIFFERENCE [memory]: count or RSS wrong\n");
		diffs++;
	}
	child_result_free(&r);

	/* the same bytes as one line (no line end at all): -c needs no part
	 * of a long line kept, so memory must stay bounded here too */
	memset(g->block, 'y', sizeof(g->block));
	memcpy(g->block + 640 + 10, "needle", 6);
	g->left = (uint64_t)mb << 20;
	run_prog(argv, NULL, gen_feed, g, &r);
	n_invocations++;
	printf("# bounded memory: one line of %lu MiB through a pipe, tsgrep "
	       "-c: %.*s (want 1), peak RSS %ld KiB (bound %ld KiB)\n",
	       mb, (int)(r.outlen ? r.outlen - 1 : 0), r.out, r.maxrss_kb,
	       bound_kb);
	if (strcmp(r.out, "1\n") || r.maxrss_kb > bound_kb) {
		printf("# DIFFERENCE [memory]: long line: count or RSS wrong, "
		       "stderr \"%.200s\"\n",
		       r.err);
		diffs++;
	}
	child_result_free(&r);
	free(g);
	assert_no_diffs(diffs);
}

/*
 * Differences that are not compared run by run, listed so that they stay
 * in sight (each is in tsgrep(1), DIFFERENCES FROM GREP).
 */
static const char *const documented_differences[] = {
	"lines of 4 GiB or more where tsgrep must hold the whole line (-B, "
	"--color without -o, --json, ^ and {head} fsm patterns, printing "
	"lines of a pipe): grep searches them (holding the line in memory), "
	"tsgrep reports the file (EFBIG) and exits 2; not run here: it "
	"takes a 4 GiB line and minutes",
	"--color=INVALID: grep 3.8 prints its help and exits 0, tsgrep exits "
	"2 with a message (checked in test_bad_tsgrep_options)",
	"-r: grep lists directories in readdir order, tsgrep sorted by name "
	"(compared as sorted lines)",
	"-i in a UTF-8 locale: both fold by towupper() (TS_FOLD_LIBC), but "
	"grep selects lines with U+1C80-U+1C88 apart from their letters and "
	"prints them with -o; and grep -i finds a pattern's last lone lead "
	"byte as the lead byte of its characters' case variants too "
	"(tests/test_tsgrep_utf8.c compares the rest)",
	"-v with a negative -m: grep 3.8 selects no line (yet prints "
	"context, and -q succeeds), tsgrep takes it as no limit, as grep's "
	"manual says (checked in test_count_arguments)",
	"a NUL after a line longer than a 96 KiB read: grep and tsgrep no "
	"longer read at the same offsets, so the lines printed before "
	"\"binary file matches\" may differ (not compared: the test's "
	"binary files have no such line)",
	NULL,
};

static void test_summary(void **st)
{
	const char *const *d;

	(void)st;
	for (d = documented_differences; *d; d++)
		printf("# known difference (documented): %s\n", *d);
	printf("# tsgrep vs grep -F: %lu invocations compared, %lu option "
	       "combinations, %lu differences (each failed its own test)\n",
	       n_invocations, n_combos, n_diffs);
}

/* ---- setup ------------------------------------------------------------- */

/*
 * --algo shiftor autoloads the plugin from TEXTSEARCH_PLUGIN_PATH, whose
 * relative entries the library ignores; run-tests.sh sets it absolute, but
 * the test may be run by hand with a relative one, so make every entry
 * absolute (and default to $BUILD/plugins).
 */
static void absolute_plugin_path(const char *build)
{
	const char *env = getenv("TEXTSEARCH_PLUGIN_PATH");
	char *copy, *save = NULL, *dir, out[8192] = "", abs[4096], def[4200];

	snprintf(def, sizeof(def), "%s/plugins", build);
	copy = strdup(env && *env ? env : def);
	assert_non_null(copy);
	for (dir = strtok_r(copy, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save))
		if (realpath(dir, abs))
			snprintf(out + strlen(out), sizeof(out) - strlen(out),
				 "%s%s", *out ? ":" : "", abs);
	free(copy);
	setenv("TEXTSEARCH_PLUGIN_PATH", out, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_option_combinations),
		cmocka_unit_test(test_variants_exhaustive),
		cmocka_unit_test(test_recursive),
		cmocka_unit_test(test_mapped_files),
		cmocka_unit_test(test_mapped_file_shrinks),
		cmocka_unit_test(test_mapped_file_grows),
		cmocka_unit_test(test_binary_files),
		cmocka_unit_test(test_binary_not_copied),
		cmocka_unit_test(test_tree_order),
		cmocka_unit_test(test_buffered_output),
		cmocka_unit_test(test_fixed_cases),
		cmocka_unit_test(test_count_arguments),
		cmocka_unit_test(test_bad_tsgrep_options),
		cmocka_unit_test(test_hex_fsm_equivalence),
		cmocka_unit_test(test_fsm_anchors),
		cmocka_unit_test(test_latin1_folding),
		cmocka_unit_test(test_utf8_locale),
		cmocka_unit_test(test_count_matches),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_offsets_past_4gib),
		cmocka_unit_test(test_bounded_memory),
		cmocka_unit_test(test_summary),
	};
	const char *build = getenv("BUILD");
	int ret;

	if (!build)
		build = "build/default";
	if (!test_have_gnu_grep()) {
		printf("not ok: GNU grep not found; tsgrep is compared "
		       "against it\n");
		return 1;
	}
	/* make check builds every tool first: a missing tsgrep is a failure */
	if (!test_program_path("tsgrep", tsgrep_path, sizeof(tsgrep_path))) {
		printf("not ok: tsgrep not found in %s/bin: %s\n", build,
		       strerror(errno));
		return 1;
	}
	/* build/san-address-undefined, build/san-thread, and private
	 * folders named like build/x-asan: sanitized, so smaller sizes */
	sanitized = strstr(build, "san") != NULL ||
		    getenv("TSGREP_TEST_SANITIZED") != NULL ||
		    test_binary_is_sanitized(tsgrep_path);
	absolute_plugin_path(build);
	printf("# tsgrep: %s%s\n", tsgrep_path,
	       sanitized ? " (sanitizer build: smaller sizes)" : "");
	if (!test_grep_setup("tsgrep-cli", top, sizeof(top), work, capdir,
			     sizeof(work))) {
		printf("not ok: test folders: %s\n", strerror(errno));
		return 1;
	}
	rng.s = test_seed("tsgrep cli", 20261203);
	make_corpora();

	ret = cmocka_run_group_tests(tests, NULL, NULL);
	if (test_remove_tree(top))
		printf("# could not remove %s\n", top);
	return ret;
}
