/*
 * literal_stream.c - how a single literal pattern streams through find().
 *
 * The stream keeps the longest suffix of the data that is a proper prefix
 * of the pattern: only there can a match still to come begin.  On most
 * data that is nothing, so the next write is searched alone.
 */
#include "internal.h"
#include "literal_stream.h"
#include "textsearch_stream.h"

#include <stdbool.h>

/* Past this many byte comparisons keep the whole tail: always correct for
 * a literal (a found match is decided whatever is kept), and it bounds
 * the cost of a periodic pattern on periodic data. */
#define KEEP_BUDGET(len) (4u * (len) + 64u)

static bool equal_prefix(const u8 *a, const u8 *pattern, unsigned int n,
			 bool icase, unsigned int *budget)
{
	for (unsigned int i = 0; i < n; i++) {
		if (!*budget)
			return false;
		--*budget;
		if (icase ? textsearch_fold(a[i]) !=
				    textsearch_fold(pattern[i]) :
			    a[i] != pattern[i])
			return false;
	}
	return true;
}

static unsigned int literal_keep(struct ts_config *conf, const u8 *tail,
				 unsigned int len)
{
	const u8 *pattern = conf->ops->get_pattern(conf);
	unsigned int plen = conf->ops->get_pattern_len(conf);
	bool icase = ts_plain_folds(conf, pattern, plen);
	unsigned int budget = KEEP_BUDGET(len);
	unsigned int n = len < plen ? len : plen - 1;
	u8 first = icase ? textsearch_fold(pattern[0]) : pattern[0];

	for (; n; n--) {
		u8 c = tail[len - n];

		if ((icase ? textsearch_fold(c) : c) != first)
			continue;
		if (equal_prefix(tail + len - n, pattern, n, icase, &budget))
			return n;
		if (!budget)
			return len;
	}
	return 0;
}

const struct ts_stream_ops ts_literal_stream_ops = {
	.keep = literal_keep,
};

/* ---- the native engine ----------------------------------------------------
 *
 * Through find, a write costs a search's setup, a provider, the window's
 * bookkeeping and a keep: some 40 ns, whatever its size.  This engine
 * scans the write where it lies instead, and carries nothing from one write
 * to the next but a 64-bit word: bit j set when the last j + 1 bytes of the
 * stream are the pattern's first j + 1 (the shift-and state of the pattern
 * over the stream), which is all a match still to come needs of the past.
 *
 * A write of fewer than LIT_SHORT bytes (or fewer than the pattern) goes
 * through the shift-and automaton byte by byte.  A longer one in three
 * steps, in match order: the automaton over its first bytes while the
 * state says a match begun earlier may end there; a vector filter over the
 * starts inside the write, on the pattern's two rarest bytes
 * (rarebyte_choose.h; lit_scan(), lit_scan_permute()), or another pair
 * where the stream's data makes those common (lit_repick(): the one other
 * thing a stream carries), each survivor verified; then the state of its
 * last bytes, from the starts whose bytes are a prefix of the pattern.
 * Verifies are charged to a budget (LIT_WORK per byte scanned): past it,
 * on periodic data, the automaton takes the rest of the write, so a write
 * costs O(len) whatever the data.
 *
 * Two common writes never enter that machinery (lit_next()): a short one
 * in which no match ends, the automaton stepped over all its bytes at
 * once (lit_quick()); and one that no match begun earlier runs into and
 * in which no start passes the filter (lit_small() up to 64 bytes, one
 * vector compared with the table's; lit_first_candidates() up to
 * LIT_FAST_MAX bytes, lit_next_long() past that), whose state is then
 * that of its last m - 1 bytes.
 *
 * AVX-512 BW and VBMI only (masked loads make the ends of a write cheap,
 * byte permutes keep the loads aligned); elsewhere, and for patterns over
 * 64 bytes, rarebyte streams through find.
 */
#include "rarebyte_choose.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LIT_X86 1
#define LIT_TARGET \
	__attribute__((target("avx512f,avx512bw,avx512vbmi,bmi,bmi2")))
#else
#define LIT_X86 0
#define LIT_TARGET
#endif

#define LIT_SHORT 10u
/* the longest write lit_quick() unrolls */
#define LIT_QUICK 16u
/* the most steps of the automaton that cost less than lit_tail_cands() */
#define LIT_TAIL_STEPS 8u
/* the longest write lit_first_candidates() takes, by the table's filter
 * bytes: past it lit_scan(), whose writes move the stream to better ones
 * where the table's are common in the data (lit_repick()).  Raising it
 * would cost that for little: in cache (stop 46) an absent literal's
 * writes of 300 to 512 bytes cost 0.85-0.93 times as much through
 * lit_first_candidates(), those of 768 and 1024 bytes 1.02-1.08 */
#define LIT_FAST_MAX 256u
/* lit_repick(): the unit of struct lit's repick_at (log2, 4 KiB); after
 * how many bytes of the stream it looks again (log2: 32 KiB after a
 * change, 512 KiB after none, 8 MiB at most); over how many starts of a
 * write */
#define LIT_REPICK_UNIT_LOG 12u
#define LIT_REPICK_LOG 15u
#define LIT_REPICK_LOG_KEPT 19u
#define LIT_REPICK_LOG_MAX 23u
#define LIT_SAMPLE 2048u
/* verify bytes allowed per byte scanned, and a slack */
#define LIT_WORK 4u
#define LIT_SLACK 256u
#define LIT_NONE SIZE_MAX
#define LIT_GIVEUP (SIZE_MAX - 1)

enum lit_phase {
	LIT_IDLE, /* the input is new */
	LIT_BITAP,
	LIT_SCAN,
	LIT_DONE,
	LIT_REPICK, /* the input is new: lit_repick() over it first */
};

/* The stream's state; what depends on the pattern only is the config's
 * (struct lit_tab, built once by rarebyte's init), so a stream costs a few
 * words, and opening or resetting one costs nothing. */
struct lit {
	const struct lit_tab *t;
	uint64_t state;	    /* the shift-and state after the stream so far */
	uint64_t resume;    /* without TS_OVERLAP no match starts before */
	uint64_t emit_from; /* the automaton reports no start before this */
	size_t pos;	    /* next byte (automaton) or start (scan) */
	size_t stop;	    /* the automaton runs to here */
	/* the filter bytes of the long writes' scan, one of t->pick
	 * (lit_repick(); a pointer, which the scan reaches a load sooner
	 * than an index); the stream offset from which it looks again, in
	 * 2^LIT_REPICK_UNIT_LOG bytes (modulo 2^32: 64 bytes of state in all, a
	 * cache line), and log2 of the bytes it waited last */
	const struct lit_pick *pick;
	uint32_t repick_at;
	unsigned char repick_log;
	bool dense; /* lit_scan() compares both bytes everywhere */
	unsigned char phase, after; /* after: the phase past the automaton */
	bool head; /* the automaton stops once the state is 0 */
};

static bool literal_native(struct ts_config *conf)
{
#if LIT_X86
	unsigned int m = conf->ops->get_pattern_len(conf);

	return m >= 1 && m <= LIT_MAX && rb_stream_table(conf) &&
	       __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vbmi") &&
	       __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
#else
	(void)conf;
	return false;
#endif
}

/* 0 where the CPU or the pattern does not suit the engine: the stream
 * then goes through find (with literal_keep) */
static size_t lit_state_size(struct ts_config *conf)
{
	return literal_native(conf) ? sizeof(struct lit) : 0;
}

void lit_tab_fill(struct lit_tab *t, const u8 *pattern, unsigned int m,
		  int flags)
{
	uint64_t by_value[256];
	unsigned int i;

	if (m > LIT_MAX)
		m = LIT_MAX; /* never streamed here: literal_native() */
	memset(t, 0, sizeof(*t));
	/* as ts_plain_folds(): a TS_UTF8 pattern past ASCII is not folded
	 * by bytes (the UTF-8 engine folds it) */
	t->icase = (flags & TS_IGNORECASE) &&
		   !((flags & TS_UTF8) && !ts_all_ascii(pattern, m));
	t->overlap = flags & TS_OVERLAP;
	t->m = m;
	ts_fill_fold_table(t->fold, t->icase);
	memset(by_value, 0, sizeof(by_value));
	for (i = 0; i < m; i++) {
		t->folded[i] = t->fold[pattern[i]];
		by_value[t->folded[i]] |= 1ull << i;
	}
	/* a byte matches where its folded value is the pattern's */
	for (i = 0; i < 256; i++) {
		t->mask[i] = by_value[t->fold[i]];
		t->kill[i] = ~t->mask[i] & (~0ull >> (64 - m));
	}
	t->hit = ~0ull << (m - 1);
	/* the writes the automaton would take anyway (lit_next()), as far
	 * as a match's bit, shifted on by the bytes after it, stays in the
	 * word (lit_quick()); a longer one costs less through
	 * lit_first_candidates() */
	t->quick_max = (m > LIT_SHORT ? m : LIT_SHORT) - 1;
	if (t->quick_max > 65 - m)
		t->quick_max = 65 - m;
	if (t->quick_max > LIT_QUICK)
		t->quick_max = LIT_QUICK;
	t->quick_tail = m - 1 <= LIT_QUICK;
	{
		unsigned int first[LIT_PICKS];

		t->picks = rb_choose_firsts(t->folded, m, t->icase, first,
					    LIT_PICKS);
		for (i = 0; i < t->picks; i++) {
			struct lit_pick *f = &t->pick[i];

			f->i1 = first[i];
			f->i2 = rb_choose_second(t->folded, m, t->icase, f->i1);
			f->c1 = t->folded[f->i1];
			f->c2 = t->folded[f->i2];
			f->or1 = rb_fold_or(f->c1, t->icase);
			f->or2 = rb_fold_or(f->c2, t->icase);
		}
	}
	t->i3 = m >= 3 ? rb_choose_third(t->folded, m, t->icase, t->pick[0].i1,
					 t->pick[0].i2) :
			 t->pick[0].i1;
	t->c3 = t->folded[t->i3];
	t->or3 = rb_fold_or(t->c3, t->icase);
	t->p0 = t->folded[0];
	t->p1 = t->folded[m > 1 ? 1 : 0];
	t->p2 = t->folded[m > 2 ? 2 : 0];
	t->o0 = rb_fold_or(t->p0, t->icase);
	t->o1 = rb_fold_or(t->p1, t->icase);
	t->o2 = rb_fold_or(t->p2, t->icase);
	{
		const u8 eq[LIT_VECS] = { t->pick[0].c1, t->pick[0].c2, t->p0,
					  t->p1, t->p2 };
		const u8 ors[LIT_VECS] = { t->pick[0].or1, t->pick[0].or2,
					   t->o0, t->o1, t->o2 };

		for (i = 0; i < LIT_VECS; i++) {
			memset(t->vec_eq[i], eq[i], 64);
			memset(t->vec_or[i], ors[i], 64);
		}
	}
#if LIT_X86
	{
		/* the bulk by permutes (lit_scan_permute()) on AMD's
		 * cores, where they were measured faster;
		 * TEXTSEARCH_LITERAL_BULK ("permute" or "split") chooses,
		 * for the tests to take both on any CPU */
		const char *bulk = getenv("TEXTSEARCH_LITERAL_BULK");

		/* libgcc probed the CPU at start-up (as literal_native()
		 * relies on): nothing is written here */
		t->permute = bulk ? !strcmp(bulk, "permute") :
				    __builtin_cpu_is("amd");
	}
#endif
}

static void lit_reset(struct ts_config *conf, void *state)
{
	struct lit *l = state;

	memset(l, 0, sizeof(*l));
	l->t = rb_stream_table(conf);
	l->pick = &l->t->pick[0];
	l->phase = LIT_IDLE;
}

#if LIT_X86
/* Whether the @len bytes at @s (len <= m) are the pattern's first: one
 * masked load, folded in the register for TS_IGNORECASE (A-Z and
 * 0xC0-0xDE but 0xD7 take 0x20, as textsearch_fold()). */
static inline LIT_TARGET bool lit_prefix(const struct lit *l, __m512i pat,
					 const u8 *s, unsigned int len)
{
	__mmask64 in = _bzhi_u64(~0ull, len);
	__m512i v = _mm512_maskz_loadu_epi8(in, s);

	if (l->t->icase) {
		__mmask64 up =
			_mm512_cmple_epu8_mask(
				_mm512_sub_epi8(v, _mm512_set1_epi8('A')),
				_mm512_set1_epi8(25)) |
			(_mm512_cmple_epu8_mask(
				 _mm512_sub_epi8(v,
						 _mm512_set1_epi8((char)0xC0)),
				 _mm512_set1_epi8(0x1E)) &
			 _mm512_cmpneq_epi8_mask(v,
						 _mm512_set1_epi8((char)0xD7)));

		v = _mm512_mask_add_epi8(v, up, v, _mm512_set1_epi8(0x20));
	}
	return !_mm512_mask_cmpneq_epi8_mask(in, v, pat);
}

/* The survivors @k of the starts p + j: the first that matches, else
 * LIT_NONE, or LIT_GIVEUP (*@stop the start not verified) once the
 * verifies have cost LIT_WORK bytes per byte scanned from @from, plus
 * LIT_SLACK. */
static inline LIT_TARGET size_t lit_check(const struct lit *l, __m512i pat,
					  const u8 *s, size_t p, __mmask64 k,
					  size_t from, size_t *spent,
					  size_t *stop)
{
	while (k) {
		size_t q = p + (size_t)__builtin_ctzll(k);

		*spent += l->t->m;
		if (*spent > LIT_SLACK + LIT_WORK * (q - from)) {
			*stop = q;
			return LIT_GIVEUP;
		}
		/* a third byte first: where a pair of common bytes lets
		 * many through (a short pattern of letters), it costs less
		 * than their verifies */
		if ((u8)(s[q + l->t->i3] | l->t->or3) == l->t->c3 &&
		    lit_prefix(l, pat, s + q, l->t->m))
			return q;
		k &= k - 1;
	}
	return LIT_NONE;
}

const u8 lit_iota[64] = {
	0,  1,	2,  3,	4,  5,	6,  7,	8,  9,	10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};

/* The starts under @in whose filter byte @a is @c (when ORed with @o,
 * where @icase, a constant, for the OR that folds). */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_one(__mmask64 in, __m512i a, __m512i c, __m512i o, bool icase)
{
	if (icase)
		a = _mm512_or_si512(a, o);
	return _mm512_mask_cmpeq_epi8_mask(in, a, c);
}

/* lit_one() of the bytes at @a under @in (lane i: a[i]), loaded under
 * @in: a load need not reach past the lanes a caller may read. */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_one_at(__mmask64 in, const u8 *a, __m512i c, __m512i o, bool icase)
{
	return lit_one(in, _mm512_maskz_loadu_epi8(in, a), c, o, icase);
}

/* The candidates among the starts under @in whose filter bytes are @a
 * and @b (c1, c2 when ORed with o1, o2).  @icase a constant, for the ORs
 * that fold. */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_pair(__mmask64 in, __m512i a, __m512i b, __m512i c1, __m512i c2, __m512i o1,
	 __m512i o2, bool icase)
{
	if (icase) {
		a = _mm512_or_si512(a, o1);
		b = _mm512_or_si512(b, o2);
	}
	return _mm512_mask_cmpeq_epi8_mask(
		_mm512_mask_cmpeq_epi8_mask(in, a, c1), b, c2);
}

/* The candidates by pick @f (c1, c2, o1, o2 its bytes in every lane)
 * among the 64 starts from s[p] under @in, by unaligned loads.  Under @in
 * the bytes past it read as 0, which a filter byte may be. */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_pair_at(const struct lit_pick *f, const u8 *s, size_t p, __mmask64 in,
	    __m512i c1, __m512i c2, __m512i o1, __m512i o2, bool icase)
{
	return lit_pair(in, _mm512_maskz_loadu_epi8(in, s + f->i1 + p),
			_mm512_maskz_loadu_epi8(in, s + f->i2 + p), c1, c2, o1,
			o2, icase);
}

/*
 * lit_scan() where the filter bytes @f let most blocks through (@dense)
 * and byte permutes are cheap (t->permute: AMD's cores, where this was
 * measured faster than lit_scan()'s dense loop, whose unaligned loads
 * straddle two cache lines: Zen 4, stop 44, 1500-byte writes of an
 * 8-byte literal 1.35 times as fast from memory).  The bulk loads each 64
 * bytes once, aligned: the filter bytes of the 64 starts of an aligned
 * block are a byte permute of that block and the next (i1, i2 < 64).
 * The starts before the first aligned block and those too near the end
 * for a whole next block take unaligned and masked loads.
 */
static inline __attribute__((always_inline)) LIT_TARGET size_t
lit_scan_permute(const struct lit *l, const struct lit_pick *f, const u8 *s,
		 size_t from, size_t n, size_t *stop, bool icase)
{
	const struct lit_tab *t = l->t;
	const size_t last = n - t->m;
	const __m512i pat = _mm512_loadu_si512(t->folded);
	const __m512i c1 = _mm512_set1_epi8((char)f->c1);
	const __m512i c2 = _mm512_set1_epi8((char)f->c2);
	const __m512i o1 = _mm512_set1_epi8((char)f->or1);
	const __m512i o2 = _mm512_set1_epi8((char)f->or2);
	size_t p = from, spent = 0, r, mis;
	__mmask64 k;

	if (p > last)
		return LIT_NONE;
	mis = (uintptr_t)(s + p) & 63;
	if (mis && p + 128 + (64 - mis) <= n) {
		/* the starts up to the first aligned block */
		k = lit_pair_at(f, s, p,
				_bzhi_u64(~0ull, (unsigned int)(64 - mis)), c1,
				c2, o1, o2, icase);
		r = lit_check(l, pat, s, p, k, from, &spent, stop);
		if (r != LIT_NONE)
			return r;
		p += 64 - mis;
	}
	if (!((uintptr_t)(s + p) & 63) && p + 128 <= n) {
		const __m512i iota = _mm512_loadu_si512(lit_iota);
		const __m512i x1 =
			_mm512_add_epi8(iota, _mm512_set1_epi8((char)f->i1));
		const __m512i x2 =
			_mm512_add_epi8(iota, _mm512_set1_epi8((char)f->i2));
		__m512i lo = _mm512_load_si512(s + p), hi;

		do {
			hi = _mm512_load_si512(s + p + 64);
			k = lit_pair(~0ull,
				     _mm512_permutex2var_epi8(lo, x1, hi),
				     _mm512_permutex2var_epi8(lo, x2, hi), c1,
				     c2, o1, o2, icase);
			if (k) {
				r = lit_check(l, pat, s, p, k, from, &spent,
					      stop);
				if (r != LIT_NONE)
					return r;
			}
			lo = hi;
			p += 64;
		} while (p + 128 <= n);
	}
	while (p <= last) {
		size_t left = last - p + 1, step = left < 64 ? left : 64;

		k = lit_pair_at(f, s, p, _bzhi_u64(~0ull, (unsigned int)step),
				c1, c2, o1, o2, icase);
		r = lit_check(l, pat, s, p, k, from, &spent, stop);
		if (r != LIT_NONE)
			return r;
		p += step;
	}
	return LIT_NONE;
}

/*
 * The first start p >= @from (p <= n - m) of a match inside s[0, n), or
 * LIT_NONE, or LIT_GIVEUP with *@stop (lit_check()), by the filter bytes
 * @f.  Where both bytes are compared everywhere (@dense) and byte
 * permutes are cheap (AMD), lit_scan_permute() instead.
 *
 * The starts go by 128, in blocks whose i1 bytes begin a cache line
 * (the first block may begin before @from, the last end past n - m: their
 * loads are masked to the starts in between).  A block's i1 bytes are
 * loaded aligned and compared with c1 alone, one compare per 64 starts:
 * on most data c1, the rarer byte, is nowhere in them.  Only where it is
 * are the i2 bytes loaded, unaligned, and compared with c2.  Measured on
 * Intel in cache (docs/performance.md, stop 38): twice the throughput of
 * both bytes compared everywhere, where a load that straddles two cache
 * lines (the i2 bytes') cost as much as the compares; and no slower
 * where c1 is in almost every block.  On Zen 4 (stop 44) 1.4 to 1.5
 * times the throughput of the permutes, in cache.
 *
 * But where c1 is in half the blocks or more (@dense, lit_repick()),
 * both bytes are compared everywhere, the i2 bytes loaded whole: the
 * same in cache, and from memory up to 1.7 times the throughput
 * (docs/performance.md, stop 40), since no load then waits on c1's
 * compare or on a branch that the predictor loses.
 */
static inline __attribute__((always_inline)) LIT_TARGET size_t
lit_scan(const struct lit *l, const struct lit_pick *f, const u8 *s,
	 size_t from, size_t n, size_t *stop, bool icase, bool dense)
{
	const struct lit_tab *t = l->t;
	const ptrdiff_t last = (ptrdiff_t)(n - t->m), first = (ptrdiff_t)from;
	const __m512i c1 = _mm512_set1_epi8((char)f->c1);
	const __m512i c2 = _mm512_set1_epi8((char)f->c2);
	const __m512i o1 = _mm512_set1_epi8((char)f->or1);
	const __m512i o2 = _mm512_set1_epi8((char)f->or2);
	const __m512i pat = _mm512_loadu_si512(t->folded);
	size_t spent = 0, r;
	ptrdiff_t q, x;
	__mmask64 k, k2, in, in2;

/* The survivors k and k2 of the block of starts q to q + 127 verified;
 * returns from lit_scan() at a match. */
#define LIT_CHECK()                                                         \
	do {                                                                \
		r = lit_check(l, pat, s, (size_t)q, k, from, &spent, stop); \
		if (r != LIT_NONE)                                          \
			return r;                                           \
		r = lit_check(l, pat, s, (size_t)q + 64, k2, from, &spent,  \
			      stop);                                        \
		if (r != LIT_NONE)                                          \
			return r;                                           \
	} while (0)

/* The block of starts q to q + 127 at a = s + q, its c1 lanes in k and
 * k2: the i2 bytes loaded under them (which may be all that lies within
 * the write in the first and last blocks) and compared with c2, then the
 * survivors verified. */
#define LIT_BLOCK(a)                                                  \
	do {                                                          \
		k = lit_one_at(k, (a) + f->i2, c2, o2, icase);        \
		k2 = lit_one_at(k2, (a) + 64 + f->i2, c2, o2, icase); \
		LIT_CHECK();                                          \
	} while (0)

/* The block of q's first x starts (1 <= x <= 128) under @in and @in2,
 * its c1 bytes loaded under them: its candidates, as LIT_BLOCK(). */
#define LIT_PART(x)                                                       \
	do {                                                              \
		const u8 *a_ = (const u8 *)((uintptr_t)s + (uintptr_t)q); \
		const unsigned int x_ = (unsigned int)(x);                \
                                                                          \
		in &= _bzhi_u64(~0ull, x_);                               \
		in2 = x_ > 64 ? _bzhi_u64(~0ull, x_ - 64) : 0;            \
		k = lit_one_at(in, a_ + f->i1, c1, o1, icase);            \
		k2 = lit_one_at(in2, a_ + 64 + f->i1, c1, o1, icase);     \
		if (k | k2)                                               \
			LIT_BLOCK(a_);                                    \
	} while (0)

	if (first > last)
		return LIT_NONE;
	/* the first block, from the cache line before @from's i1 byte:
	 * its starts from @from, and to n - m where the write ends in it
	 * (s + q may lie before s: only masked loads go there) */
	x = (ptrdiff_t)(((uintptr_t)s + from + f->i1) & 63);
	q = first - x;
	in = ~0ull << x;
	x = last - q + 1;
	LIT_PART(x < 128 ? x : 128);
	/* the whole blocks, loaded aligned */
	for (q += 128; q + 127 <= last; q += 128) {
		const u8 *a = s + q;

		k = lit_one(~0ull, _mm512_load_si512(a + f->i1), c1, o1, icase);
		k2 = lit_one(~0ull, _mm512_load_si512(a + 64 + f->i1), c1, o1,
			     icase);
		if (dense) {
			k = lit_one(k, _mm512_loadu_si512(a + f->i2), c2, o2,
				    icase);
			k2 = lit_one(k2, _mm512_loadu_si512(a + 64 + f->i2), c2,
				     o2, icase);
			if (__builtin_expect(k | k2, 0))
				LIT_CHECK();
		} else if (__builtin_expect(k | k2, 0)) {
			/* a whole block's i2 bytes lie in the write: loaded
			 * whole, they need not wait on c1's compare as
			 * LIT_BLOCK()'s masked loads do (a 1500-byte write
			 * where c1 is in half the blocks: 1 ns less) */
			k = lit_one(k, _mm512_loadu_si512(a + f->i2), c2, o2,
				    icase);
			k2 = lit_one(k2, _mm512_loadu_si512(a + 64 + f->i2), c2,
				     o2, icase);
			LIT_CHECK();
		}
	}
	/* the last block, to n - m */
	if (q <= last) {
		in = ~0ull;
		LIT_PART(last - q + 1);
	}
#undef LIT_PART
#undef LIT_BLOCK
#undef LIT_CHECK
	return LIT_NONE;
}

/* lit_scan() by the stream's filter bytes (lit_repick()), with their
 * fold, if they are letters under TS_IGNORECASE, as a constant; @dense a
 * constant too (dense on AMD: lit_scan_permute()). */
static inline __attribute__((always_inline)) LIT_TARGET size_t
lit_scan_any(const struct lit *l, const u8 *s, size_t from, size_t n,
	     size_t *stop, bool dense)
{
	const struct lit_pick *f = l->pick;

	if (dense && l->t->permute)
		return f->or1 | f->or2 ?
			       lit_scan_permute(l, f, s, from, n, stop, true) :
			       lit_scan_permute(l, f, s, from, n, stop, false);
	return f->or1 | f->or2 ? lit_scan(l, f, s, from, n, stop, true, dense) :
				 lit_scan(l, f, s, from, n, stop, false, dense);
}

/* The bytes of @v equal to the table's byte @which, ORed first where
 * @icase (a constant). */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_vec_eq(const struct lit_tab *t, unsigned int which, __m512i v, bool icase)
{
	if (icase)
		v = _mm512_or_si512(v, _mm512_load_si512(t->vec_or[which]));
	return _mm512_cmpeq_epi8_mask(v, _mm512_load_si512(t->vec_eq[which]));
}

/* The positions from @from of the @len bytes in @v (zero past them,
 * len >= 2) that hold the pattern's first three bytes, as far as the
 * bytes reach.  Two bytes would let a common pair through (a pattern
 * that begins "th") in most tails, each a branch the predictor loses. */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_prefix3(const struct lit_tab *t, __m512i v, unsigned int from,
	    unsigned int len, bool icase)
{
	__mmask64 k = lit_vec_eq(t, LIT_VEC_P0, v, icase) &
		      _bzhi_u64(~0ull, len) & ~_bzhi_u64(~0ull, from);

	k &= (lit_vec_eq(t, LIT_VEC_P1, v, icase) >> 1) |
	     ~_bzhi_u64(~0ull, len - 1);
	k &= (lit_vec_eq(t, LIT_VEC_P2, v, icase) >> 2) |
	     ~_bzhi_u64(~0ull, len - 2);
	return k;
}

/* The starts among the @len bytes at @tail (LIT_TAIL_STEPS <= len < 64)
 * that may begin a match still to come, by the pattern's first three
 * bytes. */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_tail_cands(const struct lit_tab *t, const u8 *tail, unsigned int len)
{
	const __m512i v = _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, len), tail);

	return lit_prefix3(t, v, 0, len, true);
}

/* The shift-and state after s[0, n), n >= m - 1: from the last m - 1
 * bytes, the starts whose bytes are a prefix of the pattern. */
static inline __attribute__((always_inline)) LIT_TARGET uint64_t
lit_tail(const struct lit *l, const u8 *s, size_t n)
{
	const unsigned int t = l->t->m - 1;
	const u8 *tail = s + n - t;
	__mmask64 k;
	__m512i pat;
	uint64_t state = 0;

	if (!t)
		return 0;
	k = lit_tail_cands(l->t, tail, t);
	pat = _mm512_loadu_si512(l->t->folded);
	while (k) {
		unsigned int at = (unsigned int)__builtin_ctzll(k);
		unsigned int len = t - at;

		if (lit_prefix(l, pat, tail + at, len))
			state |= 1ull << (len - 1);
		k &= k - 1;
	}
	return state;
}
#endif

static int lit_emit(struct lit *l, uint64_t start, struct ts_match *m)
{
	m->start = start;
	m->end = start + l->t->m;
	m->id = 0;
	if (!l->t->overlap)
		l->resume = m->end;
	return 1;
}

/* The automaton over s[l->pos, l->stop): 1 and *@m at a match to report,
 * else 0 with l->state up to date. */
static int lit_bitap(struct lit *l, const struct ts_stream_input *in,
		     struct ts_match *m)
{
	const uint64_t top = 1ull << (l->t->m - 1);
	const uint64_t *mask = l->t->mask;
	const u8 *s = in->data;
	const size_t stop = l->stop;
	uint64_t d = l->state;
	size_t i = l->pos;

	if (!l->head) {
		/* most short writes hold no match: one pass without a
		 * branch per byte, then the exact one only if one ends */
		uint64_t e = d, seen = 0;

		for (size_t j = i; j < stop; j++) {
			e = ((e << 1) | 1) & mask[s[j]];
			seen |= e;
		}
		if (!(seen & top)) {
			l->state = e;
			return 0;
		}
	}
	for (; i < stop; i++) {
		d = ((d << 1) | 1) & mask[s[i]];
		if (d & top) {
			uint64_t start = in->offset + i + 1 - l->t->m;

			if (start >= l->emit_from &&
			    (l->t->overlap || start >= l->resume)) {
				l->state = d;
				l->pos = i + 1;
				return lit_emit(l, start, m);
			}
		}
		if (l->head && !d)
			break;
	}
	l->state = d;
	return 0;
}

/*
 * The automaton's state after the @n bytes at @s (1 <= n <= t->quick_max)
 * from state @d, the bytes taken all at once rather than one after the
 * other.  A step is d = ((d << 1) | 1) & mask[c]; after n of them, bit b
 * is set when bit b - n of d was (or b < n) and each s[j] matches pattern
 * byte b - (n - 1 - j) where that is one.  In complement that is an OR of
 * terms that do not wait on each other:
 *
 *   ~d_n = (~d << n) | OR_j kill[s[j]] << (n - 1 - j).
 *
 * kill has no bits past the pattern's, so a match ending at s[j] leaves
 * bit m - 1 + (n - 1 - j) set (at most m + n - 2 <= 63, which quick_max
 * keeps): any bit in t->hit says that a match ended in the write.
 */
static inline __attribute__((always_inline)) uint64_t
lit_quick(const struct lit_tab *t, uint64_t d, const u8 *s, size_t n)
{
	const u8 *e = s + n;
	uint64_t a = ~d << n, b = 0;

	/* unrolled, shifts by constants, two chains of ORs for the ports */
	switch (n) {
#define LIT_TERM(i, acc)                            \
	case i:                                     \
		acc |= t->kill[e[-(i)]] << ((i)-1); \
		__attribute__((fallthrough));
		LIT_TERM(16, b)
		LIT_TERM(15, a)
		LIT_TERM(14, b)
		LIT_TERM(13, a)
		LIT_TERM(12, b)
		LIT_TERM(11, a)
		LIT_TERM(10, b)
		LIT_TERM(9, a)
		LIT_TERM(8, b)
		LIT_TERM(7, a)
		LIT_TERM(6, b)
		LIT_TERM(5, a)
		LIT_TERM(4, b)
		LIT_TERM(3, a)
		LIT_TERM(2, b)
		LIT_TERM(1, a)
#undef LIT_TERM
	default:
		break;
	}
	return ~(a | b);
}

#if LIT_X86
/* The state after s[0, n), n >= m - 1, where no match begun before s
 * runs past it: the automaton over the last m - 1 bytes where that is
 * unrolled, else lit_tail(). */
static inline __attribute__((always_inline)) LIT_TARGET uint64_t
lit_tail_state(const struct lit *l, const u8 *s, size_t n)
{
	const struct lit_tab *t = l->t;

	if (!t->quick_tail)
		return lit_tail(l, s, n);
	/* most tails hold no candidate start: three compares then cost
	 * less than the automaton's m - 1 steps, when those are many */
	if (t->m > LIT_TAIL_STEPS &&
	    !lit_tail_cands(t, s + n - (t->m - 1), t->m - 1))
		return 0;
	return lit_quick(t, 0, s + n - (t->m - 1), t->m - 1);
}
#endif

#if LIT_X86
/*
 * Whether another pick of filter bytes would cost write s[0, n) less.
 * The table's rarest byte can be common in some data (a 'k' in most
 * 128-byte blocks of a text): lit_scan() then takes the second compare
 * and its unaligned loads in most blocks, where another of the pattern's
 * bytes would let few through.  Each pick is tried on the write's first
 * LIT_SAMPLE starts, 128 at a time, as lit_scan() takes them, and costed
 * in blocks: those where its c1 occurs, those on the less likely side
 * of that branch (the predictor's misses, which from memory cost the
 * most: they stop the loads ahead), and the starts that pass its pair
 * (each a verify).  The stream takes the cheapest, if it costs under 2/3
 * of its own, and its own more than a block in four; where its c1 is in
 * half the blocks or more, lit_scan() then compares both bytes
 * everywhere (which costs a block each, in cache as much as the
 * branch's misses, and from memory less).  lit_next_long()
 * asks for a look on the write after it (LIT_REPICK): after the stream's
 * first long write, then 2^LIT_REPICK_LOG bytes of the stream after a
 * change, else 2^LIT_REPICK_LOG_KEPT or twice as many as the last time:
 * a look costs a few writes' worth, and data seldom changes its bytes.
 */
static LIT_TARGET __attribute__((noinline)) void
lit_repick(struct lit *l, const u8 *s, size_t n, uint64_t end)
{
	const struct lit_tab *t = l->t;
	const size_t starts = n >= t->m ? n - t->m + 1 : 0;
	const size_t len = starts < LIT_SAMPLE ? starts : LIT_SAMPLE;
	const unsigned int had = (unsigned int)(l->pick - t->pick);
	unsigned int cost[LIT_PICKS], hits[LIT_PICKS],
		blocks = (unsigned int)(len / 128), best = had, i;

	if (!blocks)
		return; /* a short write: look at the next long one */
	for (i = 0; i < t->picks; i++) {
		const struct lit_pick *f = &t->pick[i];
		const __m512i c1 = _mm512_set1_epi8((char)f->c1);
		const __m512i o1 = _mm512_set1_epi8((char)f->or1);
		const __m512i c2 = _mm512_set1_epi8((char)f->c2);
		const __m512i o2 = _mm512_set1_epi8((char)f->or2);
		unsigned int hit = 0, pass = 0;

		for (size_t p = 0; p + 128 <= len; p += 128) {
			__mmask64 k = lit_one(~0ull,
					      _mm512_loadu_si512(s + p + f->i1),
					      c1, o1, true);
			__mmask64 k2 = lit_one(
				~0ull, _mm512_loadu_si512(s + p + 64 + f->i1),
				c1, o1, true);

			/* no branch: half of them would be missed */
			hit += (k | k2) != 0;
			k = lit_one(k, _mm512_loadu_si512(s + p + f->i2), c2,
				    o2, true);
			k2 = lit_one(k2, _mm512_loadu_si512(s + p + 64 + f->i2),
				     c2, o2, true);
			pass += (unsigned int)(__builtin_popcountll(k) +
					       __builtin_popcountll(k2));
		}
		cost[i] = (hit < blocks - hit ? 2 * hit : blocks) + pass;
		hits[i] = hit;
	}
	/* where its own pick costs little, a cheaper one gains little */
	for (i = 0; cost[had] * 4 > blocks && i < t->picks; i++)
		if (cost[i] * 3 < cost[best] * 2)
			best = i;
	if (best != had)
		l->repick_log = LIT_REPICK_LOG;
	else if (l->repick_log < LIT_REPICK_LOG_KEPT)
		l->repick_log = LIT_REPICK_LOG_KEPT;
	else if (l->repick_log < LIT_REPICK_LOG_MAX)
		l->repick_log++;
	l->repick_at = (uint32_t)((end + (1ull << l->repick_log)) >>
				  LIT_REPICK_UNIT_LOG);
	l->pick = &t->pick[best];
	l->dense = 2 * hits[best] >= blocks;
}

#endif

/* only ever called where literal_native() said yes */
LIT_TARGET static __attribute__((noinline)) int
lit_next_slow(struct ts_config *conf, void *state,
	      const struct ts_stream_input *in, struct ts_match *m)
{
	struct lit *l = state;
	const size_t n = in->len;

	(void)conf;
#if LIT_X86
	if (l->phase == LIT_REPICK) {
		l->phase = LIT_IDLE;
		lit_repick(l, in->data, n, in->offset + n);
	}
#endif
	if (in->end || !n)
		return 0; /* a literal never waits on the end */
	switch (l->phase) {
	case LIT_IDLE:
		l->pos = 0;
		l->emit_from = 0;
		if (n < LIT_SHORT || n < l->t->m) {
			l->stop = n;
			l->head = false;
			l->after = LIT_DONE;
		} else if (l->state) {
			l->stop = l->t->m - 1;
			l->head = true;
			l->after = LIT_SCAN;
		} else {
			goto scan;
		}
		l->phase = LIT_BITAP;
		/* fall through */
	case LIT_BITAP:
		if (lit_bitap(l, in, m))
			return 1;
		l->pos = 0;
		if (l->after != LIT_SCAN)
			break;
		/* fall through */
	case LIT_SCAN:
scan : {
#if LIT_X86
	size_t from = l->pos, q, stop = 0;

	l->phase = LIT_SCAN;
	if (!l->t->overlap && l->resume > in->offset &&
	    l->resume - in->offset > from)
		from = (size_t)(l->resume - in->offset);
	if (from + l->t->m > n)
		q = LIT_NONE;
	else
		q = l->dense ? lit_scan_any(l, in->data, from, n, &stop, true) :
			       lit_scan_any(l, in->data, from, n, &stop, false);
	if (q == LIT_GIVEUP) {
		/* the automaton takes the rest, reporting only the
			 * starts not yet settled */
		l->phase = LIT_BITAP;
		l->state = 0;
		l->pos = stop >= l->t->m - 1 ? stop - (l->t->m - 1) : 0;
		l->emit_from = in->offset + stop;
		l->stop = n;
		l->head = false;
		l->after = LIT_DONE;
		if (lit_bitap(l, in, m))
			return 1;
		break;
	}
	if (q != LIT_NONE) {
		l->pos = q + 1;
		return lit_emit(l, in->offset + q, m);
	}
	l->state = lit_tail_state(l, in->data, n);
#endif
	break;
}
	default:
		break;
	}
	l->phase = LIT_IDLE;
	return 0;
}

#if LIT_X86
/* The long way over write @in from its start @p, the starts before it
 * settled (by a filter or a scan that found a candidate there). */
static inline __attribute__((always_inline)) int
lit_next_from(struct ts_config *conf, struct lit *l,
	      const struct ts_stream_input *in, size_t p, struct ts_match *m)
{
	l->phase = LIT_SCAN;
	l->pos = p;
	return lit_next_slow(conf, l, in, m);
}

/* The first of the starts 0, 64, 128, ... of a write of @n bytes
 * (n >= m) from which 64 starts hold a candidate of the filter, or @n
 * when none does.  128 starts at a time, by their c1 bytes alone, c2's
 * loaded only under c1's lanes: most blocks lack c1, and then cost a
 * load per 64 starts, not two (256-byte writes of an absent literal in
 * cache: 0.81 times the time).  Unaligned loads: a short write is in the
 * cache. */
static inline __attribute__((always_inline)) LIT_TARGET size_t
lit_first_candidates(const struct lit_tab *t, const u8 *s, size_t n, bool icase)
{
	const struct lit_pick *f = &t->pick[0];
	const size_t starts = n - t->m + 1;
	const __m512i c1 = _mm512_load_si512(t->vec_eq[LIT_VEC_C1]),
		      c2 = _mm512_load_si512(t->vec_eq[LIT_VEC_C2]),
		      o1 = _mm512_load_si512(t->vec_or[LIT_VEC_C1]),
		      o2 = _mm512_load_si512(t->vec_or[LIT_VEC_C2]);

	for (size_t p = 0; p < starts; p += 128) {
		const size_t left = starts - p;
		/* constant but in the last block: a mask computed from the
		 * length delays the loads under it (256 bytes: 1.1 times
		 * the time) */
		__mmask64 in = left >= 64 ?
				       ~0ull :
				       _bzhi_u64(~0ull, (unsigned int)left);
		__mmask64 in2 =
			left >= 128 ?
				~0ull :
			left > 64 ?
				_bzhi_u64(~0ull, (unsigned int)(left - 64)) :
				0;
		__mmask64 k = lit_one_at(in, s + f->i1 + p, c1, o1, icase);
		__mmask64 k2 =
			lit_one_at(in2, s + f->i1 + p + 64, c1, o1, icase);

		if (!(k | k2))
			continue;
		if (lit_one_at(k, s + f->i2 + p, c2, o2, icase))
			return p;
		if (lit_one_at(k2, s + f->i2 + p + 64, c2, o2, icase))
			return p + 64;
	}
	return n;
}
#endif

#if LIT_X86
/* A write of m to 64 bytes that no match begun earlier runs into, its
 * bytes loaded once: the starts that pass pick[0]'s pair (*@cand), and
 * the last m - 1 that may begin a match still to come, as
 * lit_tail_cands() finds them (the return).  Shifting the compares'
 * masks rather than loading from each filter byte's offset saves the
 * loads, and a second pass over the tail. */
static inline __attribute__((always_inline)) LIT_TARGET __mmask64
lit_small(const struct lit_tab *t, const u8 *s, size_t n, __mmask64 *cand,
	  bool icase)
{
	const unsigned int len = (unsigned int)n, starts = len - t->m + 1;
	const __m512i v = _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, len), s);

	*cand = (lit_vec_eq(t, LIT_VEC_C1, v, icase) >> t->pick[0].i1) &
		(lit_vec_eq(t, LIT_VEC_C2, v, icase) >> t->pick[0].i2) &
		_bzhi_u64(~0ull, starts);
	return lit_prefix3(t, v, starts, len, icase);
}

/* lit_next() for a write of more than LIT_FAST_MAX bytes that no match
 * begun earlier runs into: lit_scan() over it whole, the phases of
 * lit_next_slow() only where it holds a match (apart, so that lit_next()
 * needs no frame for the short writes). */
static inline __attribute__((always_inline)) LIT_TARGET int
lit_next_long_k(struct ts_config *conf, void *state,
		const struct ts_stream_input *in, struct ts_match *m,
		bool dense)
{
	struct lit *l = state;
	size_t stop, q;

	q = lit_scan_any(l, in->data, 0, in->len, &stop, dense);
	if (q == LIT_NONE) {
		l->state = lit_tail_state(l, in->data, in->len);
		/* now and then, whether another pick would do better, on
		 * the next write (a call here would cost every write
		 * registers, a count in the scan a chain through memory) */
		if ((int32_t)((uint32_t)(in->offset >> LIT_REPICK_UNIT_LOG) -
			      l->repick_at) >= 0)
			l->phase = LIT_REPICK;
		return 0;
	}
	/* the long way finds that match again at once, or gives up again
	 * where it did */
	return lit_next_from(conf, l, in, q == LIT_GIVEUP ? 0 : q, m);
}

/* lit_next_long_k() for each scan, apart: the dense one's code in the
 * same function cost the other's loop 2-4% (registers, in cache). */
static LIT_TARGET __attribute__((noinline)) int
lit_next_long(struct ts_config *conf, void *state,
	      const struct ts_stream_input *in, struct ts_match *m)
{
	return lit_next_long_k(conf, state, in, m, false);
}

static LIT_TARGET __attribute__((noinline)) int
lit_next_dense(struct ts_config *conf, void *state,
	       const struct ts_stream_input *in, struct ts_match *m)
{
	return lit_next_long_k(conf, state, in, m, true);
}
#endif

#if LIT_X86
/* The state after write @in, which no match begun earlier runs into and
 * in which none begins: that of its last m - 1 bytes, apart, as few
 * writes have a start there that may begin one. */
static LIT_TARGET __attribute__((noinline)) int
lit_next_tail(struct lit *l, const struct ts_stream_input *in)
{
	l->state = lit_tail_state(l, in->data, in->len);
	return 0;
}

/* lit_next() for a write of m to 64 bytes that no match begun earlier
 * runs into: the stream's state stays 0 where no start passes the filter
 * and none in the tail may begin a match, else the long way goes on from
 * the first candidate. */
static LIT_TARGET __attribute__((noinline)) int
lit_next_small(struct ts_config *conf, void *state,
	       const struct ts_stream_input *in, struct ts_match *m)
{
	struct lit *l = state;
	const struct lit_tab *t = l->t;
	__mmask64 cand,
		tails = t->icase ?
				lit_small(t, in->data, in->len, &cand, true) :
				lit_small(t, in->data, in->len, &cand, false);

	if (!cand)
		return tails ? lit_next_tail(l, in) : 0;
	return lit_next_from(conf, l, in, (size_t)__builtin_ctzll(cand), m);
}

/* lit_next() for a write of 65 to LIT_FAST_MAX bytes that no match begun
 * earlier runs into: where no start is a candidate the state is that of
 * the last m - 1 bytes alone, else the long way goes on from the first
 * candidates. */
static LIT_TARGET __attribute__((noinline)) int
lit_next_mid(struct ts_config *conf, void *state,
	     const struct ts_stream_input *in, struct ts_match *m)
{
	struct lit *l = state;
	const struct lit_tab *t = l->t;
	const size_t n = in->len;
	size_t p = t->pick[0].or1 | t->pick[0].or2 ?
			   lit_first_candidates(t, in->data, n, true) :
			   lit_first_candidates(t, in->data, n, false);

	if (p == n)
		return lit_next_tail(l, in);
	return lit_next_from(conf, l, in, p, m);
}
#endif

/* only ever called where literal_native() said yes */
LIT_TARGET static int lit_next(struct ts_config *conf, void *state,
			       const struct ts_stream_input *in,
			       struct ts_match *m)
{
	struct lit *l = state;
	const struct lit_tab *t = l->t;
	const size_t n = in->len;

	/* Two common writes take a few cycles here, the rest go the long
	 * way.  A short one in which no match ends: the state is all it
	 * changes. */
	if (l->phase != LIT_IDLE || in->end)
		return lit_next_slow(conf, state, in, m);
	if (n - 1 < t->quick_max) {
		uint64_t d = lit_quick(t, l->state, in->data, n);

		if (!(d & t->hit)) {
			l->state = d;
			return 0;
		}
	}
#if LIT_X86
	else if (!l->state && n >= t->m) {
		/* none of them needs a frame here (each its own) */
		if (n <= 64)
			return lit_next_small(conf, state, in, m);
		if (n <= LIT_FAST_MAX)
			return lit_next_mid(conf, state, in, m);
		/* the stream's first long write (repick_log is 0 until a
		 * look): its filter bytes picked on it before its scan,
		 * not after, or a stream whose c1 is common scans it
		 * sparse (65536-byte writes in cache: 1.4 times as long) */
		if (__builtin_expect(!l->repick_log, 0))
			l->phase = LIT_REPICK;
		else
			return l->dense ? lit_next_dense(conf, state, in, m) :
					  lit_next_long(conf, state, in, m);
	}
#endif
	return lit_next_slow(conf, state, in, m);
}

const struct ts_stream_ops ts_rarebyte_stream_ops = {
	.state_size = lit_state_size,
	.reset = lit_reset,
	.next = lit_next,
	.keep = literal_keep,
};
