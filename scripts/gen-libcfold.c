/*
 * gen-libcfold.c - the C library's case mapping as GNU grep -i uses it in
 * a UTF-8 locale (glibc regex: two characters are equal when towupper()
 * maps them to the same character), printed as CaseFolding.txt lines for
 * scripts/gen-casefold.awk; built and run on the build machine (Makefile),
 * so the table is the build machine's glibc, never typed by hand.
 *
 * The key of a character is towupper() of it, except that an ASCII key is
 * given as its lower case: the engine folds ASCII A-Z to a-z by itself, so
 * the keys must agree with that (U+0131 -> I -> i).
 *
 *   gen-libcfold [LOCALE] > libcfold.txt      (default C.UTF-8)
 */
#include <locale.h>
#include <stdio.h>
#include <wctype.h>

static unsigned long key(unsigned long c)
{
	unsigned long u = (unsigned long)towupper((wint_t)c);

	return u >= 'A' && u <= 'Z' ? u + 0x20 : u;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "C.UTF-8";
	unsigned long c, n = 0;

	if (!setlocale(LC_ALL, name) || towupper(0x3b1) != 0x391) {
		fprintf(stderr, "gen-libcfold: no Unicode locale %s\n", name);
		return 1;
	}
	printf("# towupper() in %s, as keys (gen-libcfold.c)\n", name);
	for (c = 0; c < 0x110000; c++) {
		unsigned long k;

		if (c >= 0xD800 && c < 0xE000)
			continue;
		k = key(c);
		/* a key must be its own key, or classes would not be closed */
		if (k >= 0x110000 || key(k) != k) {
			fprintf(stderr,
				"gen-libcfold: U+%04lX: key U+%04lX is not "
				"its own key\n",
				c, k);
			return 1;
		}
		if (k != c) {
			printf("%04lX; C; %04lX; # towupper\n", c, k);
			n++;
		}
	}
	if (fflush(stdout) || n < 1000) {
		fprintf(stderr, "gen-libcfold: %lu mappings\n", n);
		return 1;
	}
	return 0;
}
