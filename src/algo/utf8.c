/*
 * utf8.c - TS_UTF8: search UTF-8 text by characters, with Unicode simple
 * case folding under TS_IGNORECASE.
 *
 * A pattern is a string of elements: a valid character, which matches a
 * character of the data with the same folding (the same character without
 * TS_IGNORECASE), or an invalid byte, which matches only that byte where
 * it begins no well-formed sequence.  Data is cut into characters the way
 * a decoder that resynchronises after each invalid byte cuts it; since
 * UTF-8 is a prefix code, a pattern matches at most one way at a start.
 *
 * Matching all case variants of a pattern as literals would be exponential
 * in its letters, so a search runs a literal prefilter (an inner config of
 * a built-in algorithm) on a key: the few consecutive elements of each
 * pattern whose variants are fewest, often a run of ASCII letters that one
 * TS_IGNORECASE literal covers.  Each key occurrence is verified exactly,
 * backwards to the pattern's start and forwards to its end.  Verification
 * wants every byte of a candidate in one buffer: a block's interior is
 * verified in place, and the bytes around a block boundary are glued into
 * a small buffer on the stack, so the provider is never asked to go back.
 *
 * The registry uses this engine only when a pattern needs it; a valid
 * pattern without case variants is searched by the plain algorithm, since
 * a valid pattern's bytes can only match on character boundaries.
 */
#include "utf8.h"
#include "textsearch_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Most key variants per pattern: the prefilter's literals. */
#define U8_VARIANTS_MAX 8
/* Most bytes a match and its lookahead may span (the glue buffer holds
 * two such spans). */
#define U8_SPAN_MAX 4096u
/* Key bytes past which a longer key does not filter better. */
#define U8_KEY_BYTES_MAX 32u
/* Most key elements: each counts at least one byte. */
#define U8_KEY_ELEMS_MAX (U8_KEY_BYTES_MAX + 1)
/* Lookbehind kept for a pattern that begins with a continuation byte. */
#define U8_BEHIND 3u

struct u8_elem {
	u32 want; /* folded code point, or the invalid byte */
	bool invalid;
	/* TS_FOLD_LIBC: a byte of an incomplete character ending the
	 * pattern, which matches the same byte even inside a character of
	 * the data, as grep -i does */
	bool partial;
	u8 maxlen;   /* longest byte length of a character it matches */
	u8 variants; /* distinct prefilter literals for it */
};

struct u8_pat {
	struct u8_elem *el;
	unsigned int nel;
	unsigned int key, keyend; /* key elements [key, keyend) */
	unsigned int pmax;	  /* most bytes before the key */
	bool cont_first;	  /* begins with an invalid continuation byte */
	unsigned int tail;	  /* partial bytes at its end (mark_partial) */
	const u8 *bytes;	  /* as given */
	unsigned int len;
};

struct u8_conf {
	struct ts_config *inner; /* the prefilter */
	struct u8_pat *pat;
	unsigned int npat;
	unsigned int *var_pat; /* prefilter id -> pattern */
	unsigned int span;     /* most bytes a start needs to be decided */
	unsigned int pmax;     /* most bytes between a start and its key */
	u8 icase;	       /* U8_FOLD_* */
	bool invalid;	       /* some pattern has an invalid byte */
	bool partial;	       /* some pattern has a tail (mark_partial) */
	int single_literal;    /* 1: the prefilter has one literal */
	void *mem;
};

/* ---- matching --------------------------------------------------------- */

/* Bytes of a search at hand: d[0..n) from the search position on, and the
 * hl bytes before it at hb (fewer at the start of a search). */
struct u8_view {
	const u8 *d;
	unsigned int n;
	const u8 *hb;
	unsigned int hl;
};

static int view_at(const struct u8_view *v, long i)
{
	if (i >= 0)
		return i < (long)v->n ? v->d[i] : -1;
	i += (long)v->hl;
	return i >= 0 ? v->hb[i] : -1;
}

/* Whether d[s], a continuation byte, stands alone rather than inside a
 * character begun by one of the 3 bytes before it.  A search begins on a
 * boundary, so bytes before it that are not at hand cannot cover it. */
static bool is_boundary(const struct u8_view *v, unsigned int s)
{
	for (long k = 1; k <= 3; k++) {
		int c = view_at(v, (long)s - k);
		u8 seq[4];
		unsigned int m = 0;
		u32 cp;

		if (c < 0)
			return true;
		if ((c & 0xC0) == 0x80)
			continue;
		for (long i = 0; i < 4; i++) {
			int b = view_at(v, (long)s - k + i);

			if (b < 0)
				break;
			seq[m++] = (u8)b;
		}
		return ts_utf8_decode(seq, m, &cp) <= (unsigned int)k;
	}
	return true; /* a lead byte covers at most the 3 bytes after it */
}

/* How characters compare: the "icase" of the functions below. */
enum { U8_FOLD_NONE, U8_FOLD_UCS, U8_FOLD_LIBC };

static inline u32 fold_if(u32 cp, int icase)
{
	if (!icase)
		return cp;
	if (cp < 0x80)
		return cp >= 'A' && cp <= 'Z' ? cp + 0x20 : cp;
	return icase == U8_FOLD_LIBC ? ts_libc_fold(cp) : ts_ucs_fold(cp);
}

static unsigned int fold_class(u32 cp, int icase, u32 cls[TS_UCS_CLASS_MAX])
{
	return icase == U8_FOLD_LIBC ? ts_libc_fold_class(cp, cls) :
				       ts_ucs_fold_class(cp, cls);
}

/* Match elements [e, nel) of @p at d[i..n); the end, or -1. */
static long match_forward(const struct u8_pat *p, unsigned int e, const u8 *d,
			  unsigned int n, unsigned int i, int icase)
{
	for (; e < p->nel; e++) {
		const struct u8_elem *el = &p->el[e];
		unsigned int len;
		u32 cp;

		if (i >= n)
			return -1;
		if (d[i] < 0x80) {
			cp = d[i];
			len = 1;
		} else {
			len = ts_utf8_decode(d + i, n - i, &cp);
		}
		if (el->invalid) {
			if ((len && !el->partial) || d[i] != el->want)
				return -1;
			i++;
			continue;
		}
		if (!len || fold_if(cp, icase) != el->want)
			return -1;
		i += len;
	}
	return i;
}

/* Match elements [0, e) of @p, all valid characters, ending at d[j]:
 * their start (not before d[0]), or -1. */
static long match_backward(const struct u8_pat *p, unsigned int e, const u8 *d,
			   unsigned int j, int icase)
{
	while (e--) {
		unsigned int len = 0;
		u32 cp = 0;

		if (!j)
			return -1;
		if (d[j - 1] < 0x80) {
			cp = d[j - 1];
			len = 1;
		} else if ((d[j - 1] & 0xC0) == 0x80) {
			/* a lead byte begins a character wherever it is */
			for (unsigned int l = 2; l <= 4 && l <= j; l++) {
				if ((d[j - l] & 0xC0) == 0x80)
					continue;
				if (ts_utf8_decode(d + j - l, l, &cp) != l)
					return -1;
				len = l;
				break;
			}
		}
		if (!len || fold_if(cp, icase) != p->el[e].want)
			return -1;
		j -= len;
	}
	return j;
}

struct u8_prev {
	bool have;
	unsigned int start, end, id;
};

/* Whether the occurrence sorts after the last one (TS_OVERLAP). */
static bool after_prev(const struct u8_prev *pr, unsigned int start,
		       unsigned int end, unsigned int id)
{
	if (!pr->have || start != pr->start)
		return !pr->have || start > pr->start;
	return end != pr->end ? end > pr->end : id > pr->id;
}

/*
 * Offer every match whose start is in [0, hi) of @v (stream offset @base
 * for v->d[0]); every byte such a match needs is at hand.  True when the
 * best is decided: all later matches start after it.
 */
static bool scan(const struct u8_conf *u, const struct u8_view *v,
		 unsigned int hi, unsigned int base, bool overlap,
		 const struct u8_prev *pr, struct ts_set_best *best)
{
	struct ts_state ist;
	unsigned int kp;

	for (kp = textsearch_find_continuous(u->inner, &ist, v->d, v->n);
	     kp != UINT_MAX; kp = textsearch_next(u->inner, &ist)) {
		unsigned int earliest = kp > u->pmax ? kp - u->pmax : 0;
		unsigned int id = u->var_pat[textsearch_match_id(&ist)];
		const struct u8_pat *p = &u->pat[id];
		long s, end;

		if (earliest >= hi ||
		    (best->have && base + earliest > best->start))
			break;
		s = p->key ? match_backward(p, p->key, v->d, kp, u->icase) :
			     (long)kp;
		if (s < 0 || (unsigned int)s >= hi)
			continue;
		if (p->cont_first && !is_boundary(v, (unsigned int)s))
			continue;
		end = match_forward(p, p->key, v->d, v->n, kp, u->icase);
		if (end < 0)
			continue;
		if (overlap && !after_prev(pr, base + (unsigned int)s,
					   base + (unsigned int)end, id))
			continue;
		ts_set_offer(best, overlap, base + (unsigned int)s,
			     base + (unsigned int)end, id);
		/* one pattern matches at most one way at a start, and its
		 * later key occurrences begin after kp (with one literal) or
		 * at it: when none of them can start a match before s, this
		 * one is decided without searching on */
		if (u->npat == 1 &&
		    (long)s <= (long)kp + u->single_literal - (long)u->pmax)
			return true;
	}
	/* every match starting before hi has been offered */
	return best->have;
}

/* The U8_BEHIND bytes before v->d[at] into hb (hl of them known). */
static void keep_behind(const struct u8_view *v, unsigned int at, u8 *hb,
			unsigned int *hl)
{
	u8 tmp[U8_BEHIND];
	unsigned int n = 0;

	for (long k = U8_BEHIND; k >= 1; k--) {
		int c = view_at(v, (long)at - k);

		if (c >= 0)
			tmp[n++] = (u8)c;
	}
	memcpy(hb + U8_BEHIND - n, tmp, n);
	*hl = n;
}

static unsigned int u8_find(struct ts_config *conf, struct ts_state *state)
{
	const struct u8_conf *u = ts_config_priv(conf);
	const bool overlap = conf->flags & TS_OVERLAP;
	const unsigned int span = u->span, need = 2 * u->span - 1;
	/* [0, U8_BEHIND): lookbehind, right-aligned; then glued data */
	u8 glue[U8_BEHIND + 2 * U8_SPAN_MAX];
	u8 *g = glue + U8_BEHIND;
	struct ts_set_best best = { 0 };
	struct u8_prev pr = { 0 };
	struct ts_provider pv;
	unsigned int pos = state->offset, lb0, lbn, glen, hl = 0, hi;
	const u8 *lb;
	bool ended = false;

	ts_provider_resolve(conf, state, &pv);
	if (overlap && ts_overlap_prev(state, &pr.end, &pr.id)) {
		pr.have = true;
		pr.start = pos;
	} else if (!overlap && ts_last_match(state, &lb0, &lbn) && lb0 == pos &&
		   lbn < u->npat && u->pat[lbn].tail) {
		/* the last match ended inside a character, on bytes that
		 * are its pattern's own: they are the lookbehind that
		 * tells a continuation byte at pos is not a boundary */
		const struct u8_pat *mp = &u->pat[lbn];

		hl = mp->tail;
		memcpy(glue + U8_BEHIND - hl, mp->bytes + mp->len - hl, hl);
	}
	lbn = ts_provider_next(&pv, pos, &lb, state);
	lb0 = pos;
	if (!lbn)
		return UINT_MAX;
	for (;;) {
		/* the last block holds pos: verify its interior in place */
		unsigned int off = pos - lb0, bn = lbn - off;
		struct u8_view v;

		if (bn >= span) {
			v = (struct u8_view){ lb + off, bn,
					      glue + U8_BEHIND - hl, hl };
			hi = bn - span + 1;
			if (scan(u, &v, hi, pos, overlap, &pr, &best))
				goto found;
			keep_behind(&v, hi, glue, &hl);
			pos += hi;
			off += hi;
			bn -= hi;
		}
		/* glue what is left of it to the blocks that follow */
		memcpy(g, lb + off, bn);
		glen = bn;
		for (;;) {
			unsigned int gend = pos + glen;

			while (glen < need) {
				unsigned int n, take;
				const u8 *next;

				if (gend - lb0 < lbn) {
					n = lbn - (gend - lb0);
					take = n < need - glen ? n :
								 need - glen;
					memcpy(g + glen, lb + (gend - lb0),
					       take);
					glen += take;
					gend += take;
					continue;
				}
				if (ended)
					break;
				n = ts_provider_next(&pv, gend, &next, state);
				if (!n) {
					ended = true;
					break;
				}
				lb = next;
				lb0 = gend;
				lbn = n;
			}
			hi = glen < need ? glen : glen - span + 1;
			v = (struct u8_view){ g, glen, glue + U8_BEHIND - hl,
					      hl };
			if (hi && scan(u, &v, hi, pos, overlap, &pr, &best))
				goto found;
			if (glen < need)
				return UINT_MAX; /* the data ended */
			keep_behind(&v, hi, glue, &hl);
			pos += hi;
			if (pos >= lb0)
				break; /* back to the last block */
			/* the last block begins later: glue on */
			memmove(g, g + hi, glen - hi);
			glen -= hi;
		}
	}
found:
	state->offset = best.end;
	ts_set_match(state, best.id);
	return best.start;
}

/* ---- streams -------------------------------------------------------- */

/*
 * Keep what may begin a match: the last span - 1 bytes for valid
 * patterns, whose matches found in a window are matches whatever follows.
 * A match ending in an invalid byte is one only if no sequence begins
 * there, which bytes still to come may change: keep all span bytes then
 * (TS_OVERLAP decides a match that starts where the kept bytes do), from a
 * character boundary (a search of the next window takes its first byte
 * for one).
 */
static unsigned int u8_keep(struct ts_config *conf, const u8 *tail,
			    unsigned int len)
{
	const struct u8_conf *u = ts_config_priv(conf);
	unsigned int want = u->invalid ? u->span : u->span - 1;
	unsigned int k = want < len ? want : len;
	unsigned int e = len - k;

	if (!u->invalid || !e)
		return k;
	/* conf->ts_longest leaves U8_BEHIND bytes before e (or the window
	 * begins on a boundary); a lead byte covering e is one before it */
	for (unsigned int b = 1; b <= U8_BEHIND && b <= e; b++) {
		u32 cp;

		if ((tail[e - b] & 0xC0) == 0x80)
			continue;
		if (ts_utf8_decode(tail + e - b, len - (e - b), &cp) > b)
			return k + b;
		break;
	}
	return k;
}

bool ts_utf8_lookahead(const struct ts_config *conf)
{
	const struct u8_conf *u = ts_config_priv((struct ts_config *)conf);

	return conf->ops == &ts_utf8_ops && u->invalid;
}

bool ts_utf8_partial(const struct ts_config *conf)
{
	const struct u8_conf *u = ts_config_priv((struct ts_config *)conf);

	return conf->ops == &ts_utf8_ops && u->partial;
}

static const struct ts_stream_ops u8_stream_ops = {
	.keep = u8_keep,
};

/* ---- preparing ------------------------------------------------------- */

/* Whether two literals are the same to the prefilter. */
static bool same_literal(const u8 *a, unsigned int an, const u8 *b,
			 unsigned int bn, bool icase)
{
	if (an != bn)
		return false;
	for (unsigned int i = 0; i < an; i++)
		if (icase ? textsearch_fold(a[i]) != textsearch_fold(b[i]) :
			    a[i] != b[i])
			return false;
	return true;
}

/* The distinct prefilter literals of element @el (at most
 * TS_UCS_CLASS_MAX), each up to 4 bytes at lit[i]; how many. */
static unsigned int elem_literals(const struct u8_elem *el, int icase,
				  u8 lit[TS_UCS_CLASS_MAX][4],
				  u8 litlen[TS_UCS_CLASS_MAX])
{
	u32 cls[TS_UCS_CLASS_MAX];
	unsigned int n = 0, c;

	if (el->invalid) {
		lit[0][0] = (u8)el->want;
		litlen[0] = 1;
		return 1;
	}
	c = icase ? fold_class(el->want, icase, cls) : (cls[0] = el->want, 1);
	for (unsigned int i = 0; i < c; i++) {
		u8 b[4];
		unsigned int bl = ts_utf8_encode(cls[i], b), j;

		for (j = 0; j < n; j++)
			if (same_literal(lit[j], litlen[j], b, bl, icase))
				break;
		if (j == n) {
			memcpy(lit[n], b, bl);
			litlen[n++] = (u8)bl;
		}
	}
	return n;
}

/* Decode @len bytes into elements (el may be NULL to count them). */
static unsigned int parse(const u8 *s, unsigned int len, int icase,
			  struct u8_elem *el)
{
	unsigned int i = 0, n = 0;

	while (i < len) {
		u32 cp, cls[TS_UCS_CLASS_MAX];
		unsigned int l = ts_utf8_decode(s + i, len - i, &cp);

		if (el) {
			struct u8_elem *e = &el[n];
			u8 lit[TS_UCS_CLASS_MAX][4], litlen[TS_UCS_CLASS_MAX];

			e->invalid = l == 0;
			e->partial = false;
			e->want = l ? fold_if(cp, icase) : s[i];
			e->maxlen = l ? (u8)l : 1;
			if (l && icase) {
				unsigned int c = fold_class(cp, icase, cls);
				u8 tmp[4];

				for (unsigned int j = 0; j < c; j++) {
					unsigned int bl =
						ts_utf8_encode(cls[j], tmp);

					if (bl > e->maxlen)
						e->maxlen = (u8)bl;
				}
			}
			e->variants = (u8)elem_literals(e, icase, lit, litlen);
		}
		i += l ? l : 1;
		n++;
	}
	return n;
}

/* What the plain algorithms can do for pattern elements: 2 when they are
 * ASCII whose case variants are ASCII too (TS_IGNORECASE folds exactly
 * those, and an ASCII byte is a whole character), 1 when they are valid
 * characters without case variants (their bytes match only on
 * boundaries), 3 when both, 0 when only this engine can search them. */
static int plain_kind(const struct u8_elem *el, unsigned int n, int icase)
{
	bool cased = false, wide = false;

	for (unsigned int i = 0; i < n; i++) {
		u32 cls[TS_UCS_CLASS_MAX];
		unsigned int c;

		if (el[i].invalid)
			return 0;
		c = icase ? fold_class(el[i].want, icase, cls) : 1;
		wide = wide || el[i].want >= 0x80;
		if (c > 2 || (c == 2 && (cls[0] >= 0x80 || cls[1] >= 0x80)))
			return 0;
		cased = cased || c == 2;
	}
	/* TS_IGNORECASE would fold the lead bytes of wide characters */
	if (cased)
		return wide ? 0 : 2;
	return wide ? 1 : 3; /* 3: ASCII without letters, fine either way */
}

/*
 * TS_FOLD_LIBC: mark the bytes of an incomplete character that ends the
 * pattern (a lead byte and fewer continuation bytes than it announces,
 * each where a well-formed sequence could have it), which grep -i matches
 * as bytes, inside a character of the data too.  They were parsed as one
 * invalid element each.
 */
static void mark_partial(const u8 *s, unsigned int len, struct u8_pat *p)
{
	for (unsigned int t = 1; t <= 3 && t <= len && t <= p->nel; t++) {
		const u8 *b = s + len - t;
		u8 seq[4] = { 0 };
		u32 cp;

		if (b[0] < 0xC2 || b[0] > 0xF4)
			continue;
		/* complete it with the smallest continuation bytes the lead
		 * allows: a well-formed result means a proper prefix */
		memcpy(seq, b, t);
		for (unsigned int k = t; k < 4; k++)
			seq[k] = k == 1 && b[0] == 0xE0 ? 0xA0 :
				 k == 1 && b[0] == 0xF0 ? 0x90 :
							  0x80;
		if (ts_utf8_decode(seq, 4, &cp) > t) {
			for (unsigned int k = 0; k < t; k++)
				p->el[p->nel - 1 - k].partial = true;
			p->tail = t;
			return;
		}
	}
}

/*
 * Choose @p's key: consecutive elements after valid ones only, at most
 * U8_VARIANTS_MAX variants.  A candidate costs about variants / 16^bytes
 * (a letter of text is one of some 16 common ones), and several literals
 * take a slower prefilter (a set's) than one: score 4 per byte, up to 6
 * bytes, less log2 of the variants, less 5 for a set (a set prefilter is
 * much slower than one literal: "iong" keys on "ong", not i, I and ı).
 */
static void choose_key(struct u8_pat *p)
{
	long best_score = -1000000;
	unsigned int j, k;

	p->key = 0;
	p->keyend = 1;
	for (j = 0; j < p->nel; j++) {
		unsigned int prod = 1, bytes = 0;

		if (j && p->el[j - 1].invalid)
			break;
		for (k = j; k < p->nel && bytes < U8_KEY_BYTES_MAX; k++) {
			long score;

			prod *= p->el[k].variants;
			if (prod > U8_VARIANTS_MAX)
				break;
			/* the shortest variant filters: count its bytes */
			bytes += p->el[k].invalid     ? 1 :
				 p->el[k].want < 0x80 ? 1 :
							2;
			score = 4 * (long)(bytes < 6 ? bytes : 6) -
				(prod > 1 ? 5 : 0) - (prod >= 2) - (prod >= 4) -
				(prod >= 8);
			if (score > best_score ||
			    (score == best_score &&
			     bytes > p->keyend - p->key)) {
				best_score = score;
				p->key = j;
				p->keyend = k + 1;
			}
		}
	}
	p->pmax = 0;
	for (j = 0; j < p->key; j++)
		p->pmax += p->el[j].maxlen;
}

/* Append the variants of @p's key to lits/lens (count in *n). */
static void expand_key(const struct u8_pat *p, int icase, u8 *buf, size_t *used,
		       const void **lits, unsigned int *lens, unsigned int *n,
		       unsigned int *var_pat, unsigned int id)
{
	u8 lit[U8_KEY_ELEMS_MAX][TS_UCS_CLASS_MAX][4];
	u8 litlen[U8_KEY_ELEMS_MAX][TS_UCS_CLASS_MAX];
	unsigned int cnt[U8_KEY_ELEMS_MAX], nk = p->keyend - p->key;
	unsigned int total = 1, v, e;

	for (e = 0; e < nk; e++) {
		cnt[e] = elem_literals(&p->el[p->key + e], icase, lit[e],
				       litlen[e]);
		total *= cnt[e];
	}
	for (v = 0; v < total; v++) {
		unsigned int rest = v, len = 0;
		u8 *out = buf + *used;

		for (e = 0; e < nk; e++) {
			unsigned int c = rest % cnt[e];

			rest /= cnt[e];
			memcpy(out + len, lit[e][c], litlen[e][c]);
			len += litlen[e][c];
		}
		lits[*n] = out;
		lens[*n] = len;
		var_pat[*n] = id;
		++*n;
		*used += len;
	}
}

static void u8_free(struct u8_conf *u)
{
	if (u->inner && !IS_ERR(u->inner))
		textsearch_destroy(u->inner);
	u->inner = NULL;
	free(u->mem);
	u->mem = NULL;
}

struct ts_config *ts_utf8_prepare(const char *algo, bool set_algo,
				  const void *const *patterns,
				  const unsigned int *lens, unsigned int count,
				  gfp_t gfp_mask, int flags, bool force,
				  unsigned int *longest, int *plain_flags)
{
	const int icase = !(flags & TS_IGNORECASE) ? U8_FOLD_NONE :
			  (flags & TS_FOLD_LIBC)   ? U8_FOLD_LIBC :
						     U8_FOLD_UCS;
	size_t nel = 0, bytes = 0, size, off;
	unsigned int i, nvar = 0;
	struct ts_config *conf;
	struct u8_conf *u;
	unsigned int kinds = 0;
	int kind;
	const void **lits;
	unsigned int *litlens;
	u8 *litbuf;
	size_t litused = 0;
	int inner_flags = TS_OVERLAP | (icase ? TS_IGNORECASE : 0);

	for (i = 0; i < count; i++) {
		nel += parse(patterns[i], lens[i], icase, NULL);
		bytes += lens[i];
	}
	/* elements, patterns, copies of them, then the prefilter's
	 * literals: at most U8_VARIANTS_MAX per pattern, of at most
	 * U8_KEY_BYTES_MAX + 4 characters of 4 bytes */
	size = nel * sizeof(struct u8_elem) + count * sizeof(struct u8_pat) +
	       bytes +
	       (size_t)count * U8_VARIANTS_MAX *
		       (sizeof(void *) + 2 * sizeof(unsigned int) +
			4 * U8_KEY_ELEMS_MAX);
	conf = alloc_ts_config(sizeof(*u), gfp_mask);
	if (IS_ERR(conf))
		return conf;
	u = ts_config_priv(conf);
	u->mem = malloc(size);
	if (!u->mem) {
		free(conf);
		return ERR_PTR(-ENOMEM);
	}
	u->icase = icase;
	u->npat = count;
	u->pat = (struct u8_pat *)u->mem;
	off = count * sizeof(struct u8_pat);
	for (i = 0; i < count; i++) {
		struct u8_pat *p = &u->pat[i];

		p->el = (struct u8_elem *)((char *)u->mem + off);
		p->nel = parse(patterns[i], lens[i], icase, p->el);
		p->tail = 0;
		if (flags & TS_FOLD_LIBC)
			mark_partial(patterns[i], lens[i], p);
		off += p->nel * sizeof(struct u8_elem);
		kinds |= 1u << plain_kind(p->el, p->nel, icase);
	}
	/* one flag set for all: folded, or not at all */
	kind = (kinds & 1) || (kinds & 6) == 6 ? 0 : (kinds & 4) ? 2 : 1;
	if (kind && !force) {
		u8_free(u);
		free(conf);
		/* the plain algorithm will do */
		*plain_flags = flags & ~(TS_UTF8 | TS_FOLD_LIBC |
					 (kind == 1 ? TS_IGNORECASE : 0));
		return NULL;
	}
	lits = (const void **)((char *)u->mem + off);
	off += (size_t)count * U8_VARIANTS_MAX * sizeof(void *);
	litlens = (unsigned int *)((char *)u->mem + off);
	off += (size_t)count * U8_VARIANTS_MAX * sizeof(unsigned int);
	u->var_pat = (unsigned int *)((char *)u->mem + off);
	off += (size_t)count * U8_VARIANTS_MAX * sizeof(unsigned int);
	litbuf = (u8 *)u->mem + off;
	off += (size_t)count * U8_VARIANTS_MAX * 4 * U8_KEY_ELEMS_MAX;
	for (i = 0; i < count; i++) {
		struct u8_pat *p = &u->pat[i];
		unsigned int span = 0;
		bool inv = false;

		p->bytes = (u8 *)u->mem + off;
		memcpy((u8 *)u->mem + off, patterns[i], lens[i]);
		off += lens[i];
		p->len = lens[i];
		p->cont_first = p->el[0].invalid &&
				(p->el[0].want & 0xC0) == 0x80;
		for (unsigned int e = 0; e < p->nel; e++) {
			span += p->el[e].maxlen;
			inv = inv || p->el[e].invalid;
		}
		/* an invalid byte is one where no sequence begins, which the
		 * 3 bytes after it tell */
		if (inv)
			span += 3;
		u->invalid = u->invalid || inv;
		u->partial = u->partial || p->tail;
		if (span > u->span)
			u->span = span;
		choose_key(p);
		if (p->pmax > u->pmax)
			u->pmax = p->pmax;
		expand_key(p, icase, litbuf, &litused, lits, litlens, &nvar,
			   u->var_pat, i);
	}
	if (u->span > U8_SPAN_MAX) {
		u8_free(u);
		free(conf);
		return ERR_PTR(ts_fail(-EINVAL,
				       "a TS_UTF8 match may span at most %u "
				       "bytes",
				       U8_SPAN_MAX));
	}
	/* the prefilter: the algorithm asked for when it can take the
	 * literals, else the automatic choice */
	u->single_literal = nvar == 1;
	if (nvar == 1)
		u->inner = textsearch_prepare(algo, lits[0], litlens[0],
					      gfp_mask, inner_flags);
	else
		u->inner = textsearch_prepare_set(set_algo ? algo : "auto",
						  lits, litlens, nvar, gfp_mask,
						  inner_flags);
	/* the variants may be more literals than the algorithm named takes
	 * (teddy: 128) though the patterns are not: then "auto" takes them */
	if (IS_ERR(u->inner) && PTR_ERR(u->inner) == -EINVAL && nvar > count &&
	    set_algo && strcmp(algo, "auto") != 0) {
		struct ts_config *probe = textsearch_prepare_set(
			algo, patterns, lens, count, gfp_mask, inner_flags);

		if (!IS_ERR(probe)) {
			textsearch_destroy(probe);
			u->inner = textsearch_prepare_set("auto", lits, litlens,
							  nvar, gfp_mask,
							  inner_flags);
		}
	}
	if (IS_ERR(u->inner)) {
		int err = (int)PTR_ERR(u->inner);

		u->inner = NULL;
		u8_free(u);
		free(conf);
		return ERR_PTR(err);
	}
	/* streams keep longest - 1 bytes at most (u8_keep), and after a
	 * match that ends inside a character that match too (stream.c) */
	*longest = u->span + (u->invalid ? 1 + U8_BEHIND : 0) +
		   (u->partial ? u->span + U8_BEHIND : 0);
	return conf;
}

static struct ts_config *u8_init(const void *pattern, unsigned int len,
				 gfp_t gfp_mask, int flags)
{
	unsigned int longest;
	int plain;

	return ts_utf8_prepare("auto", true, &pattern, &len, 1, gfp_mask, flags,
			       true, &longest, &plain);
}

static struct ts_config *u8_init_set(const void *const *patterns,
				     const unsigned int *lens,
				     unsigned int count, gfp_t gfp_mask,
				     int flags)
{
	unsigned int longest;
	int plain;

	return ts_utf8_prepare("auto", true, patterns, lens, count, gfp_mask,
			       flags, true, &longest, &plain);
}

static void u8_destroy(struct ts_config *conf)
{
	u8_free(ts_config_priv(conf));
}

static void *u8_get_pattern(struct ts_config *conf)
{
	const struct u8_conf *u = ts_config_priv(conf);

	return (void *)u->pat[0].bytes;
}

static unsigned int u8_get_pattern_len(struct ts_config *conf)
{
	const struct u8_conf *u = ts_config_priv(conf);

	return u->pat[0].len;
}

struct ts_ops ts_utf8_ops = {
	.name = "utf8",
	.init = u8_init,
	.find = u8_find,
	.destroy = u8_destroy,
	.get_pattern = u8_get_pattern,
	.get_pattern_len = u8_get_pattern_len,
	.init_set = u8_init_set,
	.stream = &u8_stream_ops,
	.owner = THIS_MODULE,
};
