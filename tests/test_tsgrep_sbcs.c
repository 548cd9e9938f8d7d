/*
 * test_tsgrep_sbcs.c - tsgrep -i against GNU grep -F -i in single-byte
 * locales (KOI8-R, CP1251, ISO-8859-5, ISO-8859-7, ISO-8859-9,
 * ISO-8859-1, ISO-8859-15, ISO-8859-2), byte for byte.
 *
 * The machine has no such locale installed: each is built here with
 * localedef into a folder of the test's own (LOCPATH), and a locale that
 * cannot be built, or that the C library then does not load as a
 * single-byte locale of its charset, fails the test.  Real text in each
 * language (Russian, Ukrainian, Greek with final sigma and accents,
 * Turkish with dotted and dotless i, German, French, Polish, Czech) is
 * written here in UTF-8 and converted to the charset with iconv(3); a
 * line of every byte from 0x80 to 0xFF, each a word, follows, so every
 * byte's folding and word class is compared too, and in the charsets
 * where some bytes are no character (ISO-8859-7's 0xAE, CP1251's 0x98)
 * grep's encoding errors; a line of each byte between two a's gives every
 * byte's word class (-w).  Every pattern is cut from the text: each word,
 * its first byte and two bytes from its second on, each high byte that is
 * a letter, alone, and pairs of words as two -e patterns (a set),
 * searched with -i and -o, -c, -w, -x, -n -b -o and --color=always.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <langinfo.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "child.h"
#include "testsupport.h"

static char tsgrep_path[4096];
static char top[4096], work[4200], capdir[4200], locdir[4300];

struct sample {
	const char *source;  /* localedef -i */
	const char *charset; /* localedef -f, iconv and CODESET */
	const char *text;    /* UTF-8 */
};

static const struct sample samples[] = {
	{ "ru_RU", "KOI8-R",
	  "Москва - столица России. МОСКВА, москва; Ёлка и ёж, ЁЛКА И ЁЖ.\n"
	  "Съешь же ещё этих мягких французских булок, да выпей чаю.\n"
	  "СЪЕШЬ ЖЕ ЕЩЁ ЭТИХ МЯГКИХ ФРАНЦУЗСКИХ БУЛОК, ДА ВЫПЕЙ ЧАЮ.\n"
	  "Жизнь жизнь ЖИЗНЬ; Щука щука ЩУКА; Юла юла ЮЛА, Ять.\n" },
	{ "ru_RU", "CP1251",
	  "Москва - столица России. МОСКВА, москва; Ёлка и ёж, ЁЛКА И ЁЖ.\n"
	  "Съешь же ещё этих мягких французских булок, да выпей чаю.\n"
	  "Ґанок ґанок ҐАНОК; Їжак їжак ЇЖАК; Євген ЄВГЕН; Ірина ІРИНА.\n"
	  "Ўладзімір ўладзімір; Љубав ЉУБАВ; Ђорђе ЂОРЂЕ; Џез џез.\n" },
	{ "ru_RU", "ISO-8859-5",
	  "Москва - столица России. МОСКВА, москва; Ёлка и ёж, ЁЛКА И ЁЖ.\n"
	  "Съешь же ещё этих мягких французских булок, да выпей чаю.\n"
	  "Ђорђе ЂОРЂЕ; Ћуприја ћуприја; Ѕвезда ѕвезда; Їжак їжак.\n" },
	{ "el_GR", "ISO-8859-7",
	  "Σοφία σοφία ΣΟΦΙΑ. Ο λόγος, ΛΟΓΟΣ, λόγοσ και λογος.\n"
	  "Άλφα άλφα ΑΛΦΑ; Ελληνικά, ΕΛΛΗΝΙΚΆ ελληνικα.\n"
	  "Διαλυτικά: ϊ Ϊ ΐ ΰ ϋ Ϋ; Ωμέγα ωμέγα ΩΜΕΓΑ, Ώρα ώρα ΏΡΑ.\n"
	  "Ήλιος ήλιος ΗΛΙΟΣ; Ύπνος ύπνος; Όρος όρος ΌΡΟΣ; ς σ Σ.\n" },
	{ "tr_TR", "ISO-8859-9",
	  "İstanbul ISTANBUL istanbul ıstanbul; Işık IŞIK ışık isik.\n"
	  "Çocuk ÇOCUK çocuk, Ğüç ĞÜÇ ğüç; Şehir ŞEHİR şehir sehir.\n"
	  "iyi İYİ IYI ıyı; Iğdır IĞDIR ığdır; Öğretmen ÖĞRETMEN.\n"
	  "I\ni\nı\nİ\n" },
	{ "de_DE", "ISO-8859-1",
	  "Straße STRASSE straße; Größe GRÖSSE größe, Über über ÜBER.\n"
	  "Ça va, ÇA VA. Élève élève ÉLÈVE; Noël NOËL; maïs MAÏS.\n"
	  "Ñandú ÑANDÚ ñandú; µm µM; ÿ ÿ; Æsir æsir; Øre øre ØRE.\n" },
	{ "fr_FR", "ISO-8859-15",
	  "Cœur cœur CŒUR; L'Haÿ-les-Roses L'HAŸ-LES-ROSES; Œuvre œuvre.\n"
	  "Été été ÉTÉ, 5 € le café CAFÉ; Šárka ŠÁRKA šárka; Žofie ŽOFIE.\n"
	  "Français FRANÇAIS; Noël NOËL; Ève ève.\n" },
	{ "pl_PL", "ISO-8859-2",
	  "Zażółć gęślą jaźń, ZAŻÓŁĆ GĘŚLĄ JAŹŃ, zażółć.\n"
	  "Łódź ŁÓDŹ łódź; Čeština ČEŠTINA čeština; Ďábel ďábel.\n"
	  "Őrség ŐRSÉG őrség; Ťava ťava; Řeka řeka ŘEKA.\n" },
};

#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

/* Each run is two processes, and the test runs under the sanitizers
 * too: the option sets are few and chosen to overlap little (--color
 * shows which lines are selected and where the matches are, -n -b -o
 * each match's place). */
static const char *const option_sets[][6] = {
	{ "-i", "-n", "-b", "-o", NULL },
	{ "-i", "-w", "-o", NULL },
	{ "-i", "-c", NULL },
	{ "-i", "-x", NULL },
	{ "-i", "--color=always", NULL },
	{ "-i", "-w", "-c", NULL },
	{ "-i", "-w", "-b", "-o", NULL },
};

/* Words of the text are searched with the first NWORD option sets; the
 * pieces of words and pairs of words with the first two; single bytes
 * with the first; the word line with WORDLINE_OPTS. */
#define NWORD 6
#define BYTE_OPTS 0
#define WORDLINE_OPTS 6

#define NOPTS (sizeof(option_sets) / sizeof(option_sets[0]))

static unsigned long n_runs, n_diffs;

static void run(const char *prog, const char *const *opts,
		const char *const *pats, size_t npats, const char *file,
		struct child_result *res)
{
	char *argv[16];
	int n = 0;

	argv[n++] = (char *)prog;
	argv[n++] = "-F";
	for (int i = 0; opts[i]; i++)
		argv[n++] = (char *)opts[i];
	for (size_t i = 0; i < npats; i++) {
		argv[n++] = "-e";
		argv[n++] = (char *)pats[i];
	}
	argv[n++] = "--";
	argv[n++] = (char *)file;
	argv[n] = NULL;
	struct child_spec spec = { argv, work, capdir, NULL, NULL };

	assert_int_equal(child_run(&spec, res), 0);
}

/* The same messages but for the program's name. */
static bool same_err(const struct child_result *g, const struct child_result *t)
{
	const char *a = g->err, *b = t->err;

	while (*a || *b) {
		if (!strncmp(a, "grep:", 5) && !strncmp(b, "tsgrep:", 7)) {
			a += 5;
			b += 7;
		} else if (*a++ != *b++) {
			return false;
		}
	}
	return true;
}

static void compare(const char *locale, const char *file,
		    const char *const *opts, const char *const *pats,
		    size_t npats)
{
	struct child_result g, t;

	run("grep", opts, pats, npats, file, &g);
	run(tsgrep_path, opts, pats, npats, file, &t);
	n_runs++;
	assert_false(child_sanitizer_report(t.err));
	if (g.status != t.status || g.outlen != t.outlen ||
	    memcmp(g.out, t.out, g.outlen) || !same_err(&g, &t)) {
		n_diffs++;
		printf("# LC_ALL=%s tsgrep -F", locale);
		for (int i = 0; opts[i]; i++)
			printf(" %s", opts[i]);
		for (size_t i = 0; i < npats; i++)
			printf(" -e '%s'", pats[i]);
		printf(" %s: grep status %d, %zu bytes; tsgrep status %d, "
		       "%zu bytes\n#   grep:   %.*s\n#   tsgrep: %.*s\n"
		       "#   grep stderr: %s\n#   tsgrep stderr: %s\n",
		       file, g.status, g.outlen, t.status, t.outlen,
		       (int)g.outlen, g.out, (int)t.outlen, t.out, g.err,
		       t.err);
	}
	child_result_free(&g);
	child_result_free(&t);
}

/* A word with the first NWORD option sets, a piece of one (or a pair of
 * words) with the first two. */
static void compare_all(const char *locale, const char *file,
			const char *const *pats, size_t npats, bool piece)
{
	for (size_t o = 0; o < (piece ? 2 : NWORD); o++)
		compare(locale, file, option_sets[o], pats, npats);
}

/* @text (UTF-8) in @charset; every character must have its byte. */
static char *convert(const char *text, const char *charset, size_t *outlen)
{
	iconv_t cd = iconv_open(charset, "UTF-8");
	size_t inleft = strlen(text), cap = inleft + 1, outleft = cap;
	char *in = (char *)text, *out = malloc(cap), *o = out;

	if (cd == (iconv_t)-1) {
		printf("# iconv_open(%s): %s\n", charset, strerror(errno));
		free(out);
		return NULL;
	}
	assert_non_null(out);
	if (iconv(cd, &in, &inleft, &o, &outleft) == (size_t)-1 || inleft) {
		printf("# %s: cannot convert at \"%.20s\": %s\n", charset, in,
		       strerror(errno));
		iconv_close(cd);
		free(out);
		return NULL;
	}
	iconv_close(cd);
	*outlen = (size_t)(o - out);
	out[*outlen] = '\0';
	return out;
}

/* Build @source.@charset into locdir and check that the C library loads
 * it as a single-byte locale of that charset. */
static bool build_locale(const char *source, const char *charset, char *name,
			 size_t cap)
{
	char path[4500];
	struct child_result res;
	bool ok;

	snprintf(name, cap, "%s.%s", source, charset);
	snprintf(path, sizeof(path), "%s/%s", locdir, name);
	char *argv[] = {
		"localedef", "-i", (char *)source, "-f", (char *)charset,
		path,	     NULL
	};
	struct child_spec spec = { argv, NULL, capdir, NULL, NULL };

	if (child_run(&spec, &res)) {
		printf("# localedef cannot be run\n");
		return false;
	}
	if (res.status)
		printf("# localedef -i %s -f %s: status %d: %s", source,
		       charset, res.status, res.err);
	child_result_free(&res);
	if (!setlocale(LC_CTYPE, name)) {
		printf("# locale %s (LOCPATH=%s) does not load\n", name,
		       locdir);
		return false;
	}
	ok = MB_CUR_MAX == 1 && !strcmp(nl_langinfo(CODESET), charset);
	if (!ok)
		printf("# locale %s: MB_CUR_MAX %zu, CODESET %s\n", name,
		       (size_t)MB_CUR_MAX, nl_langinfo(CODESET));
	setlocale(LC_CTYPE, "C");
	return ok;
}

static bool word_sep(unsigned char c)
{
	return c == ' ' || c == ',' || c == '.' || c == ';' || c == ':' ||
	       c == '\n';
}

/* Every word of the converted text with its pieces (each once), then
 * pairs of neighbouring words as a set of two. */
static void search_text(const char *locale, const char *file, const char *t,
			size_t len)
{
	char seen[256][40];
	size_t nseen = 0, at = 0;
	char prev[40] = "";

	while (at < len) {
		size_t w = 0;
		char word[40], piece[3][40];

		while (at + w < len && !word_sep((unsigned char)t[at + w]))
			w++;
		if (!w) {
			at++;
			continue;
		}
		if (w >= sizeof(word))
			w = sizeof(word) - 1;
		memcpy(word, t + at, w);
		word[w] = '\0';
		at += w;
		/* the byte line's words are searched apart */
		if (w == 1 && (unsigned char)word[0] >= 0x80)
			continue;
		snprintf(piece[0], sizeof(piece[0]), "%s", word);
		snprintf(piece[1], sizeof(piece[1]), "%.1s", word);
		snprintf(piece[2], sizeof(piece[2]), "%.2s", word + 1);
		for (int k = 0; k < 3; k++) {
			const char *pat = piece[k];
			size_t s;

			if (!*pat)
				continue;
			for (s = 0; s < nseen; s++)
				if (!strcmp(seen[s], pat))
					break;
			if (s < nseen)
				continue;
			if (nseen < 256)
				memcpy(seen[nseen++], pat, strlen(pat) + 1);
			compare_all(locale, file, &pat, 1, k);
		}
		if (*prev) {
			const char *two[2] = { prev, word };

			compare_all(locale, file, two, 2, true);
		}
		snprintf(prev, sizeof(prev), "%s", word);
	}
}

/* Each high byte that is a letter there (the others fold to themselves:
 * they are searched as pieces of words, and the byte line holds them),
 * alone: its fold class, the offsets of the bytes it matches (-b -o);
 * and every byte's word class at once: "a" with -w -b -o over the word
 * line, where each byte stands between two a's. */
static void search_bytes(const char *locale, const char *file)
{
	const char *a = "a";
	bool letter[256];

	assert_non_null(setlocale(LC_CTYPE, locale));
	for (int b = 0; b < 256; b++)
		letter[b] = isalpha(b);
	setlocale(LC_CTYPE, "C");
	for (int b = 0x80; b <= 0xFF; b++) {
		char pat[2] = { (char)b, '\0' };
		const char *p = pat;

		if (letter[b])
			compare(locale, file, option_sets[BYTE_OPTS], &p, 1);
	}
	compare(locale, file, option_sets[WORDLINE_OPTS], &a, 1);
}

static void test_locales(void **unused)
{
	(void)unused;
	for (size_t s = 0; s < NSAMPLES; s++) {
		const struct sample *sm = &samples[s];
		char name[64], file[128], path[4500];
		unsigned long before = n_diffs;
		size_t len = 0;
		char *t;
		FILE *fp;

		/* a locale that cannot be built fails the test */
		assert_true(build_locale(sm->source, sm->charset, name,
					 sizeof(name)));
		t = convert(sm->text, sm->charset, &len);
		assert_non_null(t);
		snprintf(file, sizeof(file), "text-%s", sm->charset);
		snprintf(path, sizeof(path), "%s/%s", work, file);
		fp = fopen(path, "wb");
		assert_non_null(fp);
		assert_int_equal(fwrite(t, 1, len, fp), len);
		for (int b = 0x80; b <= 0xFF; b++)
			fprintf(fp, "%c%c", b, b == 0xFF ? '\n' : ' ');
		for (int b = 0x80; b <= 0xFF; b++)
			fprintf(fp, "a%ca%c", b, b == 0xFF ? '\n' : ' ');
		assert_int_equal(fclose(fp), 0);

		setenv("LC_ALL", name, 1);
		search_text(name, file, t, len);
		search_bytes(name, file);
		printf("# %s: %lu differences\n", name, n_diffs - before);
		free(t);
	}
	printf("# tsgrep_sbcs: %lu runs against grep, %lu differences\n",
	       n_runs, n_diffs);
	assert_int_equal(n_diffs, 0);
	assert_true(n_runs > 1200);
}

static int setup(void **unused)
{
	(void)unused;
	if (!test_program_path("tsgrep", tsgrep_path, sizeof(tsgrep_path)))
		return -1;
	if (!test_grep_setup("tsgrep-sbcs", top, sizeof(top), work, capdir,
			     sizeof(work)))
		return -1;
	snprintf(locdir, sizeof(locdir), "%s/locales", top);
	if (mkdir(locdir, 0700))
		return -1;
	/* grep's messages untranslated, as tsgrep's are: their stderr is
	 * compared too ("binary file matches" after an encoding error) */
	if (setenv("LANGUAGE", "en", 1))
		return -1;
	/* grep, tsgrep and this process find the locales there */
	return setenv("LOCPATH", locdir, 1);
}

static int teardown(void **unused)
{
	(void)unused;
	unsetenv("LOCPATH");
	unsetenv("LANGUAGE");
	test_remove_tree(top);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locales),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
