/*
 * test_tsgrep_utf8.c - tsgrep -i against GNU grep -F -i on UTF-8 text,
 * byte for byte, in the C.UTF-8 and C locales.
 *
 * The text has lines in several scripts: Latin with accents, Greek with
 * final sigma, Cyrillic, Turkish, German with ß, CJK, emoji, and bytes
 * that are not UTF-8.  Every pattern is cut from the text: each word, and
 * pieces of words at character boundaries in several cases, then searched
 * with -i alone and with -o, -c, -w, -b -o and --color=always.
 *
 * grep 3.8 folds by the C library's towupper(), not by Unicode simple
 * case folding, and so does tsgrep (TS_FOLD_LIBC): a line holds the
 * characters where the two differ (I i ı İ, the Kelvin, Angstrom and Ohm
 * signs with K, Å, Ω, ß and ẞ, ϴ with Θ θ ϑ), each a word, so each is a
 * pattern and is searched against all the others.  Left out: U+1C80 to
 * U+1C88 (old Cyrillic letter forms), which grep selects lines by
 * differently from how it prints -o parts (tsgrep(1), BUGS).  The line of
 * bytes that are not UTF-8 is searched, and patterns with such bytes are
 * listed apart (invalid_patterns): grep -i matches an incomplete
 * character that ends a pattern inside a character of the text, other
 * invalid bytes only where they stand alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
#include "testsupport.h"

static char tsgrep_path[4096];
static char top[4096], work[4200], capdir[4200];

static const char text[] =
	"Caf\xc3\xa9 au lait, CAF\xc3\x89 NOIR, caf\xc3\xa9-cr\xc3\xa8me\n"
	"\xc3\x89t\xc3\xa9 na\xc3\xafve \xc3\x89T\xc3\x89 NA\xc3\x8f"
	"VE "
	"\xc3\xa0 la cr\xc3\xa8me br\xc3\xbbl\xc3\xa9"
	"e\n"
	"\xce\xa3\xce\xbf\xcf\x86\xce\xaf\xce\xb1 \xcf\x83\xce\xbf\xcf\x86"
	"\xce\xaf\xce\xb1 \xce\xbb\xcf\x8c\xce\xb3\xce\xbf\xcf\x82 "
	"\xce\x9b\xce\x8c\xce\x93\xce\x9f\xce\xa3 \xce\xbb\xcf\x8c\xce\xb3"
	"\xce\xbf\xcf\x83\n"
	"\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0 \xd0\xbc\xd0\xbe"
	"\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0 \xd0\x9c\xd0\x9e\xd0\xa1\xd0\x9a"
	"\xd0\x92\xd0\x90, \xd0\x96\xd0\xb8\xd0\xb7\xd0\xbd\xd1\x8c\n"
	"\xc4\xb0stanbul \xc4\xb1spanak \xc5\x9f"
	"ehir \xc5\x9e"
	"EH\xc4\xb0R "
	"\xc3\xa7"
	"ocuk \xc3\x87OCUK \xc4\x9f\xc3\xbc\xc3\xa7 "
	"\xc4\x9e\xc3\x9c\xc3\x87\n"
	"Stra\xc3\x9f"
	"e STRASSE stra\xc3\x9f"
	"e Gr\xc3\xb6\xc3\x9f"
	"e "
	"GR\xc3\x96\xc3\x9f"
	"E \xc3\xbc"
	"ber \xc3\x9c"
	"BER\n"
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xe4\xb8\xad\xe6\x96\x87 "
	"\xe3\xa9\x80 \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4\n"
	"emoji \xf0\x9f\x98\x80 \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
	"\xf0\x90\x90\x80\xf0\x90\x90\xa8 Deseret\n"
	/* where towupper() and Unicode simple folding differ, a line
	 * each so that lines are selected apart */
	"Kelvin \xe2\x84\xaa"
	"elvin\n\xe2\x84\xaa\nK k KELVIN\n\xe2\x84\xab\n"
	"\xc3\x85 \xc3\xa5ngstr\xc3\xb6m\n\xe2\x84\xa6\n\xce\xa9 \xcf\x89\n"
	"\xcf\xb4\n\xce\x98 \xce\xb8 \xcf\x91\n\xe1\xba\x9e\n\xc3\x9f\n"
	"I\ni\n\xc4\xb1\n\xc4\xb0\n\xc4\xb1s\xc4\xb1k I\xc5\x9eIK\n"
	"bad \xc3 bytes \xe9t\xe9 \xff\xfe caf\xc3\n";

/* Not among them: a lead byte whose characters have case variants with
 * another lead byte (0xCE: Σ is CE A3, σ CF 83), which grep -i also finds
 * as the first byte of the variants (tsgrep(1), BUGS). */
static const char *const invalid_patterns[] = {
	"caf\xc3",  "CAF\xc3",	    "\xc3",	 "\xe3\xa9",   "\xe3",
	"\xa9",	    "\xa9\x80",	    "\xe9t\xe9", "\xc9T\xe9",  "\xff\xfe",
	"\xf0\x9f", "\xf0\x9f\x98", "x\xa9",	 "\xc3 bytes",
};

static const char *const option_sets[][4] = {
	{ "-i", NULL },
	{ "-i", "-o", NULL },
	{ "-i", "-c", NULL },
	{ "-i", "-w", NULL },
	{ "-i", "-b", "-o", NULL },
	{ "-i", "--color=always", NULL },
	{ "-i", "-w", "-o", NULL },
};

static unsigned long n_runs, n_diffs;

static void run(const char *prog, const char *const *opts, const char *pat,
		struct child_result *res)
{
	char *argv[12];
	int n = 0;

	argv[n++] = (char *)prog;
	argv[n++] = "-F";
	for (int i = 0; opts[i]; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "--";
	argv[n++] = (char *)pat;
	argv[n++] = "text";
	argv[n] = NULL;
	struct child_spec spec = { argv, work, capdir, NULL, NULL };

	assert_int_equal(child_run(&spec, res), 0);
}

static void compare(const char *locale, const char *const *opts,
		    const char *pat)
{
	struct child_result g, t;

	run("grep", opts, pat, &g);
	run(tsgrep_path, opts, pat, &t);
	n_runs++;
	assert_false(child_sanitizer_report(t.err));
	if (g.status != t.status || g.outlen != t.outlen ||
	    memcmp(g.out, t.out, g.outlen)) {
		n_diffs++;
		printf("# LC_ALL=%s tsgrep -F", locale);
		for (int i = 0; opts[i]; i++)
			printf(" %s", opts[i]);
		printf(" '%s': grep status %d, %zu bytes; tsgrep status %d, "
		       "%zu bytes\n#   grep:   %.*s#   tsgrep: %.*s",
		       pat, g.status, g.outlen, t.status, t.outlen,
		       (int)g.outlen, g.out, (int)t.outlen, t.out);
	}
	child_result_free(&g);
	child_result_free(&t);
}

/* Length of the UTF-8 sequence a lead byte announces (1 for others). */
static size_t utf8_len(unsigned char c)
{
	return c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

/* Whether @s holds only whole UTF-8 characters (the text has no overlong
 * forms or surrogates, so the lead bytes tell).  tsgrep matches an invalid
 * byte only where it stands alone; grep -F also inside a character at the
 * end of a pattern (tsgrep(1)): such patterns are not compared. */
static bool valid_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t l = c < 0x80  ? 1 :
			   c >= 0xF8 ? 0 :
			   c >= 0xF0 ? 4 :
			   c >= 0xE0 ? 3 :
			   c >= 0xC2 ? 2 :
				       0;

		if (!l || i + l > n)
			return false;
		for (size_t k = 1; k < l; k++)
			if (((unsigned char)s[i + k] & 0xC0) != 0x80)
				return false;
		i += l;
	}
	return true;
}

/* Patterns cut from the text: every word, its first character, and two
 * characters from its second on (the text's bytes, cut at what the lead
 * bytes announce, so invalid bytes make pieces of their own). */
static void for_each_pattern(void (*fn)(const char *pat, void *ctx), void *ctx)
{
	const char *p = text;

	while (*p) {
		size_t w = strcspn(p, " ,\n");

		if (w && valid_utf8(p, w)) {
			char buf[128];
			size_t at = 0;

			memcpy(buf, p, w);
			buf[w] = '\0';
			fn(buf, ctx);
			/* a piece from the second character on, two long */
			at = utf8_len((unsigned char)p[0]);
			if (at < w) {
				size_t l = utf8_len((unsigned char)p[at]);

				if (at + l < w)
					l += utf8_len((unsigned char)p[at + l]);
				if (at + l <= w) {
					memcpy(buf, p + at, l);
					buf[l] = '\0';
					fn(buf, ctx);
				}
			}
			/* the first character alone */
			if (utf8_len((unsigned char)p[0]) <= w) {
				size_t l = utf8_len((unsigned char)p[0]);

				memcpy(buf, p, l);
				buf[l] = '\0';
				fn(buf, ctx);
			}
		}
		p += w;
		while (*p == ' ' || *p == ',' || *p == '\n')
			p++;
	}
}

struct each_ctx {
	const char *locale;
};

static void each_pattern(const char *pat, void *arg)
{
	struct each_ctx *c = arg;

	for (size_t o = 0; o < sizeof(option_sets) / sizeof(option_sets[0]);
	     o++)
		compare(c->locale, option_sets[o], pat);
}

static void test_scripts(void **unused)
{
	static const char *const locales[] = { "C.UTF-8", "C" };

	(void)unused;
	for (size_t l = 0; l < 2; l++) {
		struct each_ctx c = { locales[l] };
		unsigned long before = n_diffs;

		setenv("LC_ALL", locales[l], 1);
		for_each_pattern(each_pattern, &c);
		/* the examples, in both cases */
		each_pattern("\xcf\x83\xce\xbf\xcf\x86\xce\xaf\xce\xb1", &c);
		each_pattern("\xd0\xbc\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
			     &c);
		each_pattern("caf\xc3\xa9", &c);
		each_pattern("CAF\xc3\x89", &c);
		each_pattern("\xc3\xa9", &c);
		each_pattern("\xcf\x82", &c);
		each_pattern("\xce\xa3", &c);
		/* patterns with bytes that are not UTF-8: an incomplete
		 * character at the end matches inside one of the text (é's
		 * first byte in café), other invalid bytes only alone */
		for (size_t k = 0;
		     k < sizeof(invalid_patterns) / sizeof(invalid_patterns[0]);
		     k++)
			each_pattern(invalid_patterns[k], &c);
		printf("# %s: %lu differences\n", locales[l], n_diffs - before);
	}
	printf("# tsgrep_utf8: %lu runs against grep, %lu differences\n",
	       n_runs, n_diffs);
	assert_int_equal(n_diffs, 0);
	assert_true(n_runs > 500);
}

static int setup(void **unused)
{
	(void)unused;
	if (!test_program_path("tsgrep", tsgrep_path, sizeof(tsgrep_path)))
		return -1;
	if (!test_grep_setup("tsgrep-utf8", top, sizeof(top), work, capdir,
			     sizeof(work)))
		return -1;
	char path[4300];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/text", work);
	fp = fopen(path, "wb");
	if (!fp || fwrite(text, 1, sizeof(text) - 1, fp) != sizeof(text) - 1)
		return -1;
	return fclose(fp) ? -1 : 0;
}

static int teardown(void **unused)
{
	(void)unused;
	test_remove_tree(top);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scripts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
