/*
 * bench_utf8.c - TS_UTF8 | TS_IGNORECASE (Unicode simple case folding by
 * characters) against TS_IGNORECASE (ASCII and ISO-8859-1 bytes) and
 * against ripgrep's -i -F.
 *
 * Patterns are cut from the corpus at seeded places (present) or made of
 * random letters (absent), in lower case, 3 to 32 bytes.  Two texts: the
 * bench corpus (ASCII) and a copy with a UTF-8 word (Latin with accents,
 * Greek, Cyrillic, CJK) every few hundred bytes, which is what "mostly
 * ASCII" text looks like.  The library is timed in CPU time of this thread
 * (best of N), ripgrep as a whole process on the corpus file in
 * LC_ALL=C.UTF-8 (median wall time of N runs, its CPU time beside it), so
 * rg's start-up is in its figure: 128 MiB make it small.
 */
#include "bench_utf8.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct u_run {
	struct ts_config *conf;
	const u8 *data;
	size_t len;
};

static unsigned long run_count(void *arg)
{
	struct u_run *r = arg;
	struct ts_state st;
	unsigned long n = 0;
	unsigned int pos;

	for (pos = textsearch_find_continuous(r->conf, &st, r->data,
					      (unsigned int)r->len);
	     pos != UINT_MAX; pos = textsearch_next(r->conf, &st))
		n++;
	return n;
}

static const char *const utf8_words[] = {
	"caf\xc3\xa9",
	"CAF\xc3\x89",
	"\xce\xa3\xce\xbf\xcf\x86\xce\xaf\xce\xb1",
	"\xcf\x83\xce\xbf\xcf\x86\xce\xaf\xce\xb1\xcf\x82",
	"\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
	"stra\xc3\x9f"
	"e",
	"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
	"na\xc3\xafve",
};

/* The corpus with a UTF-8 word over a word every 200 to 600 bytes. */
static u8 *sprinkle(const u8 *corpus, size_t len, uint64_t *seed)
{
	u8 *out = malloc(len);
	size_t at = 0;

	if (!out)
		return NULL;
	memcpy(out, corpus, len);
	for (;;) {
		const char *w;
		size_t wl;

		at += 200 + bench_splitmix64(seed) % 400;
		w = utf8_words[bench_splitmix64(seed) %
			       (sizeof(utf8_words) / sizeof(utf8_words[0]))];
		wl = strlen(w);
		if (at + wl >= len)
			break;
		memcpy(out + at, w, wl);
	}
	return out;
}

struct upat {
	char text[40];
	const char *kind;
};

static void pick(struct upat *p, unsigned int len, int present,
		 const u8 *corpus, size_t n, uint64_t *seed)
{
	unsigned int i, tries;

	p->kind = present ? "present" : "absent";
	for (tries = 0; tries < 100000; tries++) {
		if (present) {
			size_t at = bench_splitmix64(seed) % (n - len);

			for (i = 0; i < len; i++) {
				u8 c = corpus[at + i];

				if ((c < 'a' || c > 'z') && c != ' ')
					break;
				p->text[i] = (char)c;
			}
			if (i < len || p->text[0] == ' ' ||
			    p->text[len - 1] == ' ')
				continue;
		} else {
			for (i = 0; i < len; i++)
				p->text[i] =
					(char)('a' +
					       bench_splitmix64(seed) % 26);
		}
		p->text[len] = '\0';
		return;
	}
	/* no such run of letters: an absent pattern instead */
	p->kind = "absent";
	for (i = 0; i < len; i++)
		p->text[i] = (char)('a' + bench_splitmix64(seed) % 26);
	p->text[len] = '\0';
}

static double time_search(const char *algo, const char *pat, int flags,
			  const u8 *data, size_t len, unsigned long *count,
			  int quick)
{
	struct u_run r = { NULL, data, len };
	double t;

	r.conf = textsearch_prepare(algo, pat, (unsigned int)strlen(pat),
				    GFP_KERNEL, flags);
	if (IS_ERR(r.conf)) {
		printf("  %s: %s\n", pat, textsearch_last_error());
		return -1;
	}
	t = bench_best(run_count, &r, count, quick ? 2 : 5, quick ? 0.05 : 0.5);
	textsearch_destroy(r.conf);
	return t;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* rg -i -F -c over @file: median wall seconds, or -1. */
static double time_rg(const char *pat, const char *file, int quick, double *cpu,
		      unsigned long *count)
{
	char *argv[] = { "rg", "-i",	    "-F",	  "-c",
			 "--", (char *)pat, (char *)file, NULL };
	double w[9], c[9];
	int runs = quick ? 3 : 7, i;
	char out[64];

	for (i = 0; i < runs; i++) {
		w[i] = bench_run_process(argv, out, sizeof(out), &c[i]);
		if (w[i] < 0)
			return -1;
	}
	*count = strtoul(out, NULL, 10);
	qsort(w, (size_t)runs, sizeof(double), cmp_d);
	qsort(c, (size_t)runs, sizeof(double), cmp_d);
	*cpu = c[runs / 2];
	return w[runs / 2];
}

/* Non-ASCII patterns in the mixed text, against rg on the same text
 * (written next to the corpus file); TS_IGNORECASE has no answer to
 * compare with there. */
static int utf8_words_rows(const u8 *mixed, size_t len, const char *file,
			   int have_rg, int quick)
{
	static const char *const words[] = {
		"\xcf\x83\xce\xbf\xcf\x86\xce\xaf\xce\xb1", /* σοφία */
		"\xd0\xbc\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0", /* москва */
		"caf\xc3\xa9",
		"STRASSE",
	};
	char path[4096] = "";
	FILE *fp;
	int wrong = 0;

	if (have_rg) {
		snprintf(path, sizeof(path), "%s.utf8", file);
		fp = fopen(path, "wb");
		if (!fp || fwrite(mixed, 1, len, fp) != len)
			have_rg = 0;
		if (fp && fclose(fp))
			have_rg = 0;
	}
	printf("  UTF-8 patterns in the mixed text:\n");
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		unsigned long c_u8, c_rg = 0;
		double t_u8, t_rg = -1, rg_cpu = 0, gb = (double)len / 1e9;
		char rgcell[32] = "-", vs[32] = "-";

		t_u8 = time_search("auto", words[i], TS_IGNORECASE | TS_UTF8,
				   mixed, len, &c_u8, quick);
		if (t_u8 <= 0) {
			wrong = 1;
			continue;
		}
		if (have_rg) {
			t_rg = time_rg(words[i], path, quick, &rg_cpu, &c_rg);
			if (t_rg > 0) {
				snprintf(rgcell, sizeof(rgcell), "%.2f (%.2f)",
					 gb / t_rg,
					 gb / (rg_cpu > 0 ? rg_cpu : t_rg));
				snprintf(vs, sizeof(vs), "%.2fx %s",
					 rg_cpu / t_u8,
					 t_u8 < rg_cpu ? "met" : "NOT MET");
			}
		}
		printf("  %-34s %-7s %9s %9.2f %6s %9s %9s %14s %s  "
		       "(%lu matches; rg: %lu lines)\n",
		       words[i], "present", "-", gb / t_u8, "-", "-", "-",
		       rgcell, vs, c_u8, c_rg);
	}
	if (*path)
		unlink(path);
	return wrong;
}

int bench_utf8(const u8 *corpus, size_t corpus_len, const char *file, int quick)
{
	static const unsigned int lens[] = { 3, 4, 8, 16, 32 };
	uint64_t seed = 0x75746638ULL;
	u8 *mixed = sprinkle(corpus, corpus_len, &seed);
	int have_rg = file && system("command -v rg >/dev/null 2>&1") == 0;
	double worst = 1e9;
	int wrong = 0;

	if (!mixed)
		return 1;
	printf("\nTS_UTF8 | TS_IGNORECASE (\"auto\", contiguous) against "
	       "TS_IGNORECASE, GB/s\n(CPU time, best of passes); the mixed "
	       "text has a UTF-8 word every ~400 bytes;\nrg -i -F -c on the "
	       "corpus file, LC_ALL=C.UTF-8, median wall (CPU) GB/s; utf8/rg\n"
	       "is rg's CPU time over the library's:\n");
	printf("  %-34s %-7s %9s %9s %6s %9s %9s %14s %s\n", "pattern", "kind",
	       "icase", "utf8", "ratio", "icase-mx", "utf8-mx", "rg",
	       "utf8/rg");
	if (!have_rg)
		printf("  (rg: skipped, %s)\n",
		       file ? "not installed (scripts/install-deps.sh --bench)" :
			      "no corpus file");
	setenv("LC_ALL", "C.UTF-8", 1);
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (int present = 1; present >= 0; present--) {
			struct upat p;
			unsigned long c_ic, c_u8, c_icm, c_u8m, c_rg = 0;
			double t_ic, t_u8, t_icm, t_u8m, t_rg = -1, rg_cpu = 0;
			double gb = (double)corpus_len / 1e9;
			char rgcell[32] = "-", vs[32] = "-";

			pick(&p, lens[li], present, corpus, corpus_len, &seed);
			t_ic = time_search("auto", p.text, TS_IGNORECASE,
					   corpus, corpus_len, &c_ic, quick);
			t_u8 = time_search("auto", p.text,
					   TS_IGNORECASE | TS_UTF8, corpus,
					   corpus_len, &c_u8, quick);
			t_icm = time_search("auto", p.text, TS_IGNORECASE,
					    mixed, corpus_len, &c_icm, quick);
			t_u8m = time_search("auto", p.text,
					    TS_IGNORECASE | TS_UTF8, mixed,
					    corpus_len, &c_u8m, quick);
			if (t_ic <= 0 || t_u8 <= 0 || t_icm <= 0 ||
			    t_u8m <= 0) {
				wrong = 1;
				continue;
			}
			if (c_ic != c_u8) {
				printf("  WRONG: %s: %lu icase, %lu utf8\n",
				       p.text, c_ic, c_u8);
				wrong = 1;
			}
			if (have_rg) {
				t_rg = time_rg(p.text, file, quick, &rg_cpu,
					       &c_rg);
				if (t_rg > 0) {
					snprintf(rgcell, sizeof(rgcell),
						 "%.2f (%.2f)", gb / t_rg,
						 gb / (rg_cpu > 0 ? rg_cpu :
								    t_rg));
					/* CPU against CPU: on a shared
					 * machine wall time charges rg for
					 * others' turns */
					snprintf(vs, sizeof(vs), "%.2fx %s",
						 rg_cpu / t_u8,
						 t_u8 < rg_cpu ? "met" :
								 "NOT MET");
				}
			}
			if (t_ic / t_u8 < worst)
				worst = t_ic / t_u8;
			if (t_icm / t_u8m < worst)
				worst = t_icm / t_u8m;
			printf("  %-34s %-7s %9.2f %9.2f %5.2fx %9.2f %9.2f "
			       "%14s %s\n",
			       p.text, p.kind, gb / t_ic, gb / t_u8,
			       t_ic / t_u8, gb / t_icm, gb / t_u8m, rgcell, vs);
		}
	}
	printf("  target utf8 >= 0.7x icase: worst %.2fx (%s)\n", worst,
	       worst >= 0.7 ? "met" : "NOT MET");
	wrong |= utf8_words_rows(mixed, corpus_len, file, have_rg, quick);
	free(mixed);
	return wrong;
}
