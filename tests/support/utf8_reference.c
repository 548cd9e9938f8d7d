/*
 * utf8_reference.c - the naive reference for TS_UTF8, independent of the
 * library: it reads the Unicode Character Database's CaseFolding.txt
 * itself at run time (the library uses the table generated from it at
 * build time), asks the C library's towupper() for TS_FOLD_LIBC, and cuts
 * data into characters with its own decoder (decode by the lead byte, then
 * refuse what does not encode back to the same bytes).
 *
 * UNICODE_CASEFOLDING names the file (default
 * /usr/share/unicode/CaseFolding.txt, Debian's unicode-data).
 */
#include "utf8_reference.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#define NCP 0x110000u

static uint32_t *fold_map; /* code point -> simple folding, once read */

static bool load_casefolding(void)
{
	const char *path = getenv("UNICODE_CASEFOLDING");
	char line[512];
	unsigned int n = 0;
	FILE *fp;

	if (!path)
		path = "/usr/share/unicode/CaseFolding.txt";
	fp = fopen(path, "r");
	if (!fp) {
		fprintf(stderr, "cannot read %s: install unicode-data\n", path);
		return false;
	}
	fold_map = malloc(NCP * sizeof(*fold_map));
	if (!fold_map)
		abort();
	for (uint32_t c = 0; c < NCP; c++)
		fold_map[c] = c;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long src, dst;
		char status;

		if (sscanf(line, "%lx; %c; %lx;", &src, &status, &dst) != 3)
			continue;
		if (status != 'C' && status != 'S')
			continue;
		if (src >= NCP || dst >= NCP)
			break;
		fold_map[src] = (uint32_t)dst;
		n++;
	}
	fclose(fp);
	if (n < 1000) {
		fprintf(stderr, "%s: %u foldings, not CaseFolding.txt?\n", path,
			n);
		return false;
	}
	return true;
}

bool ref_utf8_init(void)
{
	if (!fold_map && !load_casefolding())
		return false;
	/* TS_FOLD_LIBC's reference: the C library itself */
	if (!setlocale(LC_ALL, "C.UTF-8") || towupper(0x3b1) != 0x391) {
		fprintf(stderr, "no C.UTF-8 locale for towupper()\n");
		return false;
	}
	return true;
}

/* ---- reference ---------------------------------------------------------- */

static unsigned int ref_encode(uint32_t cp, u8 *out)
{
	if (cp < 0x80) {
		out[0] = (u8)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (u8)(0xC0 | cp >> 6);
		out[1] = (u8)(0x80 | (cp & 63));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (u8)(0xE0 | cp >> 12);
		out[1] = (u8)(0x80 | (cp >> 6 & 63));
		out[2] = (u8)(0x80 | (cp & 63));
		return 3;
	}
	out[0] = (u8)(0xF0 | cp >> 18);
	out[1] = (u8)(0x80 | (cp >> 12 & 63));
	out[2] = (u8)(0x80 | (cp >> 6 & 63));
	out[3] = (u8)(0x80 | (cp & 63));
	return 4;
}

/* A character of the data or pattern: its bytes and code point, or -1
 * for an invalid byte (then cp holds the byte). */
struct unit {
	unsigned int start, len;
	long cp;
};

/* Decode by the lead byte, then refuse a sequence that does not encode
 * back to itself (overlong), a surrogate or a value past U+10FFFF. */
static unsigned int ref_units(const u8 *s, unsigned int n, struct unit *u)
{
	unsigned int i = 0, k = 0;

	while (i < n) {
		u8 c = s[i];
		unsigned int len = c < 0x80		 ? 1 :
				   c >= 0xF0 && c < 0xF8 ? 4 :
				   c >= 0xE0 && c < 0xF0 ? 3 :
				   c >= 0xC0 && c < 0xE0 ? 2 :
							   0;
		uint32_t cp = len == 1 ? c :
			      len == 2 ? c & 0x1F :
			      len == 3 ? c & 0x0F :
					 c & 0x07;
		bool ok = len > 0 && i + len <= n;
		u8 back[4];

		for (unsigned int j = 1; ok && j < len; j++) {
			if ((s[i + j] & 0xC0) != 0x80)
				ok = false;
			cp = cp << 6 | (s[i + j] & 0x3F);
		}
		if (ok && (cp >= NCP || (cp >= 0xD800 && cp < 0xE000) ||
			   ref_encode(cp, back) != len))
			ok = false;
		u[k].start = i;
		if (ok) {
			u[k].len = len;
			u[k].cp = cp;
		} else {
			u[k].len = 1;
			u[k].cp = -1 - (long)c;
		}
		i += u[k++].len;
	}
	return k;
}

static long ref_key(long cp, int icase)
{
	if (cp < 0 || !icase)
		return cp;
	return icase == REF_FOLD_LIBC ? (long)towupper((wint_t)cp) :
					(long)fold_map[cp];
}

/* Every match of the set in @data in find/next order (as ref_set_matches
 * in tests/support, but by characters). */
/* The bytes of an incomplete character ending @s: the longest t < 4 for
 * which some byte after them makes a well-formed character of the first
 * one (tried one by one), or 0. */
static unsigned int partial_tail(const u8 *s, unsigned int len)
{
	unsigned int best = 0;

	for (unsigned int t = 1; t <= 3 && t <= len; t++) {
		u8 seq[4];
		struct unit u[4];

		memcpy(seq, s + len - t, t);
		for (unsigned int x = 0x80; x <= 0xBF; x++) {
			seq[t] = (u8)x;
			for (unsigned int k = t + 1; k < 4; k++)
				seq[k] = 0x80;
			for (unsigned int m = t + 1; m <= 4; m++)
				if (ref_units(seq, m, u) == 1 && u[0].cp >= 0)
					best = t;
		}
	}
	return best;
}

struct ref_match *ref_utf8_matches(const u8 *const *pats,
				   const unsigned int *lens, unsigned int count,
				   int icase, bool partial, const u8 *data,
				   unsigned int dlen, bool overlap,
				   unsigned int *nout)
{
	struct unit *du = malloc((dlen + 1) * sizeof(*du));
	struct ref_match *all = NULL, *out;
	unsigned int nd, nall = 0, cap = 0, n = 0, next = 0;

	if (!du)
		abort();
	nd = ref_units(data, dlen, du);
	for (unsigned int p = 0; p < count; p++) {
		struct unit pu[400];
		unsigned int np = ref_units(pats[p], lens[p], pu);
		unsigned int t = partial ? partial_tail(pats[p], lens[p]) : 0;

		/* the whole units, then t bytes compared as bytes */
		np -= t;
		for (unsigned int k = 0; k + np <= nd; k++) {
			unsigned int j, at;

			if (t && k + np >= nd)
				break;
			for (j = 0; j < np; j++)
				if (ref_key(du[k + j].cp, icase) !=
				    ref_key(pu[j].cp, icase))
					break;
			if (j < np)
				continue;
			at = k + np < nd ? du[k + np].start : dlen;
			if (t && (at + t > dlen ||
				  memcmp(data + at, pats[p] + lens[p] - t, t)))
				continue;
			if (nall == cap) {
				cap = cap ? 2 * cap : 16;
				all = realloc(all, cap * sizeof(*all));
				if (!all)
					abort();
			}
			all[nall].start = du[k].start;
			all[nall].end = t ? at + t : at;
			all[nall++].id = p;
		}
	}
	free(du);
	/* order by (start, end, id) */
	for (unsigned int i = 1; i < nall; i++)
		for (unsigned int j = i; j > 0; j--) {
			struct ref_match *a = &all[j - 1], *b = &all[j], t;

			if (a->start < b->start ||
			    (a->start == b->start &&
			     (a->end < b->end ||
			      (a->end == b->end && a->id < b->id))))
				break;
			t = *a;
			*a = *b;
			*b = t;
		}
	out = malloc((nall + 1) * sizeof(*out));
	if (!out)
		abort();
	for (unsigned int i = 0; i < nall; i++) {
		if (overlap) {
			out[n++] = all[i];
			continue;
		}
		if (all[i].start < next)
			continue;
		/* leftmost-longest, then lowest id */
		unsigned int best = i;

		for (unsigned int j = i + 1;
		     j < nall && all[j].start == all[i].start; j++)
			if (all[j].end > all[best].end)
				best = j;
		out[n++] = all[best];
		next = all[best].end;
	}
	free(all);
	*nout = n;
	return out;
}
