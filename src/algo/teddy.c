/*
 * teddy.c - small pattern sets, in the manner of Teddy: a SIMD bucket
 * filter on the first bytes of the patterns, verified exactly.
 *
 * The set is cut into 8 buckets, 16 from TD_FAT_FROM patterns on, the
 * patterns grouped so that few starts pass a bucket that no key of it
 * begins (teddy_group.h; equal keys share a bucket).  The key is the first 3
 * bytes, 4 with 16 buckets, fewer if a pattern is shorter.  For key
 * position j two 16-byte tables give, for the low and the high nibble of a
 * data byte, the buckets that have a pattern whose byte j has that nibble;
 * for a window start p, ANDing lo[j][s[p+j] & 15] & hi[j][s[p+j] >> 4]
 * over j leaves the buckets whose patterns may start at p.  The nibble
 * lookups are pshufb, 16 (SSSE3), 32 (AVX2) or 64 (AVX-512BW) starts at a
 * time (with 16 buckets, a second pair of tables gives buckets 8-15); with
 * AVX-512 VBMI one 128-entry table per key position, indexed by a byte's
 * low 7 bits (vpermt2b), takes the place of both nibble lookups;
 * a start with a bucket left is verified exactly against that
 * bucket's patterns.  TS_IGNORECASE costs nothing in the scan: the tables
 * take both cases of every letter (every byte that folds to the pattern
 * byte), and only the verify folds.
 *
 * Order: starts are settled in ascending order, each once all its
 * occurrences are known (the longest pattern's bytes are in hand, or the
 * stream has ended), so the first start with an occurrence holds the
 * answer; ts_set_offer picks it among that start's occurrences exactly as
 * Aho-Corasick does (ac.c), the longest then lowest id, or with TS_OVERLAP
 * the lowest (end, id) after the last one reported.
 *
 * Blocks: as rarebyte.c, windows are verified inside a block where the
 * longest pattern fits; the starts nearer a block's end than that are
 * carried (at most 2 * (longest - 1) bytes) into the next block, and
 * settled at the end of the stream with what is there.
 *
 * Size: teddy refuses sets of more than TD_MAX_PATTERNS (-EINVAL, with a
 * message): with 8 buckets a larger set lets most starts through the
 * filter, and "ac" is faster there (docs/performance.md).  Memory: about
 * 3.5 KiB of tables plus 64 bytes and the pattern's bytes per pattern.
 * With 1- or 2-byte patterns the
 * filter passes many starts, which is why "auto" takes teddy only for the
 * set sizes and shortest lengths where it measured faster than "ac".
 * Worst case: a candidate verifies every pattern of its buckets, so data
 * that matches long prefixes everywhere costs O(n * total pattern bytes).
 *
 * Dispatch as rarebyte: "teddy" takes the best level the CPU has,
 * "teddy_vbmi", "teddy_avx512", "teddy_avx2", "teddy_ssse3" and
 * "teddy_scalar" pin one (never above the CPU's).  The scalar filter
 * (one 256-entry table per key position) is exact: it passes a subset of
 * every level's candidates, and gives td_walk() their buckets.  The nibble
 * levels pass more than VBMI, whose 7-bit tables are exact in ASCII text
 * and pass a few more in binary data; the verify decides alike.
 */
#include "internal.h"
#include "rarebyte_choose.h"
#include "teddy_group.h"
#include "textsearch_stream.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TD_X86 1
#else
#define TD_X86 0
#endif

#define TD_MAX_PATTERNS 128u
/* the most distinct rare bytes td_first_rare() compares a vector with */
#define TD_RARE_MAX 4u
#define TD_BUCKETS 16u
/* sets larger than this get 16 buckets, smaller ones 8 */
#define TD_FAT_FROM 17u
#define TD_MAXKEY 4u
#define TD_MAXKOFF 32u /* the furthest the key bytes lie from a start */
#define TD_STACK_CARRY 512
/* vectors with a candidate that a collecting scan notes before it walks
 * them */
#define TD_BATCH 8u

enum td_level { TD_SCALAR, TD_SSSE3, TD_AVX2, TD_AVX512, TD_VBMI, TD_NLEVELS };

struct td_pat {
	uint64_t val[2];  /* its first min(16, len) folded bytes */
	uint64_t keep[2]; /* 0xFF for each of those bytes */
	uint64_t orm[2];  /* 0x20 where a data byte matches either case */
	uint32_t off;	  /* of its folded bytes in td->bytes */
	uint32_t len;
	uint32_t id;
};

struct teddy;

/* A stream's short writes, up to TD_QUICK_PATTERNS patterns of up to 32
 * bytes: each pattern's shift-and automaton in a 32-bit lane of a vector
 * (tds_quick()).  Lanes past the set's stay 0. */
#define TD_QUICK_PATTERNS 8u
#define TD_QUICK_LONGEST 32u
#define TD_QUICK_WRITE 16u /* the longest write tds_quick() unrolls */
struct td_quick {
	/* lane i: the bits of pattern i's positions that byte c does not
	 * match, none past the pattern (all for lanes past the set) */
	uint32_t kill[256][TD_QUICK_PATTERNS];
	uint32_t hit[TD_QUICK_PATTERNS];  /* bits len - 1 up: it matched */
	uint32_t live[TD_QUICK_PATTERNS]; /* bits below len - 1 */
	size_t max;			  /* the longest write taken */
	/* tds_next_filter_*() for the set's key width, where
	 * tds_filter_write() takes writes (VBMI and 8 buckets), else NULL */
	int (*filter)(struct ts_config *conf, void *state,
		      const struct ts_stream_input *in, struct ts_match *m);
	/* the same for a write of up to 64 bytes after one it took */
	int (*filter64)(struct ts_config *conf, void *state,
			const struct ts_stream_input *in, struct ts_match *m);
};

/* A start with an occurrence, found ahead of its turn (tds_bulk()):
 * relative to the scan's s, the best occurrence there and its buckets. */
struct td_hit {
	uint32_t q, end, id;
	uint16_t bits;
	bool only; /* the one occurrence at q */
};

/* What a search is looking for, and the best occurrence so far. */
struct td_ctx {
	struct ts_set_best best;
	/* occurrences offered at the last start verified: with TS_OVERLAP,
	 * 1 means the best is the last one there */
	unsigned int offered;
	bool overlap, have_prev;
	uint64_t prev_start;
	unsigned int prev_end, prev_id;
	/* when set, a scan goes on past the starts with an occurrence,
	 * keeping them here, until @maxhits are kept (td_found()) */
	struct td_hit *hits;
	unsigned int nhits, maxhits;
};

/* Settle the starts [from, last] of s (the bytes [from, last + longest)
 * are in s), s[0] at stream offset @sbase; true once one has an
 * occurrence (in ctx->best). */
typedef bool (*td_scan_fn)(const struct teddy *t, const u8 *s, size_t from,
			   size_t last, uint64_t sbase, struct td_ctx *ctx);

struct teddy {
	/* [buckets 0-7 or 8-15][key position][nibble] */
	u8 lo[2][TD_MAXKEY][16] __attribute__((aligned(16)));
	u8 hi[2][TD_MAXKEY][16] __attribute__((aligned(16)));
	/* the VBMI level's: the buckets of byte c in [c & 0x7F] */
	u8 tab7[2][TD_MAXKEY][128];
	/* the buckets of each byte, all 16: the scalar filter */
	uint16_t tab[TD_MAXKEY][256];
	u8 fold[256];
	unsigned int count, keyw, longest, shortest, nbuckets;
	/* the key bytes of a start p are s[p + koff, p + koff + keyw):
	 * koff <= shortest - keyw, chosen where the set's bytes are rare */
	unsigned int koff;
	bool icase;
	/* each bucket holds at most one pattern, of at most 16 bytes:
	 * td_verify_lone() */
	bool lone;
	enum td_level level;
	td_scan_fn scan;
	uint32_t bucket[TD_BUCKETS + 1]; /* bucket b: pat[bucket[b], [b+1]) */
	/* pat[by_byte[i]] for i in [by_first[c], by_first[c + 1]) begin
	 * with folded byte c */
	u8 by_first[257];
	u8 by_byte[TD_MAX_PATTERNS];
	struct td_pat *pat;
	u8 *bytes;    /* the patterns, folded */
	u8 *pattern0; /* pattern 0 as given, for get_pattern */
	unsigned int len0;
	struct td_quick *quick; /* short writes to a stream, or NULL */
	/* td_first_rare(): each pattern's rarest byte (rarebyte_choose.h),
	 * the distinct ones as rarebyte compares them (ORed with rare_or);
	 * rare_n is 0 where there are more than TD_RARE_MAX or the CPU
	 * lacks AVX-512 BW.  rare_back: the furthest one from its start. */
	unsigned int rare_n, rare_back;
	u8 rare_c[TD_RARE_MAX], rare_or[TD_RARE_MAX];
};

/* ---- verification ----------------------------------------------------- */

#define TD_INLINE inline __attribute__((always_inline))

static inline bool td_equal(const struct teddy *t, const u8 *w, const u8 *p,
			    uint32_t len)
{
	uint32_t i;

	if (!t->icase)
		return memcmp(w, p, len) == 0;
	for (i = 0; i < len; i++)
		if (t->fold[w[i]] != p[i])
			return false;
	return true;
}

/* The occurrences at start @q of the patterns in buckets @bits; @avail
 * bytes from s[q] are in hand (all a pattern needs, or the rest of the
 * stream).  With 8 (16) of them, the first 8 (16) bytes of a pattern are
 * checked in one (two) 64-bit compares: a folded letter c is matched by
 * exactly the bytes x with x | 0x20 == c, any other byte by itself only
 * (as in rarebyte.c). */
static TD_INLINE void td_verify(const struct teddy *t, const u8 *s, size_t q,
				size_t avail, unsigned int bits, uint64_t sbase,
				struct td_ctx *ctx)
{
	uint64_t start = sbase + q, w[2] = { 0, 0 };

	ctx->offered = 0;
	if (avail >= 16)
		memcpy(w, s + q, 16);
	else if (avail >= 8)
		memcpy(w, s + q, 8);
	while (bits) {
		unsigned int b = (unsigned int)__builtin_ctz(bits);
		uint32_t i, end = t->bucket[b + 1];

		bits &= bits - 1;
		for (i = t->bucket[b]; i < end; i++) {
			const struct td_pat *p = &t->pat[i];
			uint64_t e = start + p->len;

			if (p->len > avail || e > UINT_MAX)
				continue;
			if (avail >= 16) {
				if (((w[0] | p->orm[0]) & p->keep[0]) !=
					    p->val[0] ||
				    ((w[1] | p->orm[1]) & p->keep[1]) !=
					    p->val[1])
					continue;
				if (p->len > 16 &&
				    !td_equal(t, s + q + 16,
					      t->bytes + p->off + 16,
					      p->len - 16))
					continue;
			} else if (avail >= 8) {
				if (((w[0] | p->orm[0]) & p->keep[0]) !=
				    p->val[0])
					continue;
				if (p->len > 8 &&
				    !td_equal(t, s + q + 8,
					      t->bytes + p->off + 8,
					      p->len - 8))
					continue;
			} else if (!td_equal(t, s + q, t->bytes + p->off,
					     p->len)) {
				continue;
			}
			if (ctx->have_prev && start == ctx->prev_start &&
			    (e < ctx->prev_end ||
			     (e == ctx->prev_end && p->id <= ctx->prev_id)))
				continue; /* reported already */
			ctx->offered++;
			ts_set_offer(&ctx->best, ctx->overlap,
				     (unsigned int)start, (unsigned int)e,
				     p->id);
		}
	}
}

/* td_verify() where t->lone and 16 bytes from s[q] are in hand: the one
 * pattern of bucket @bits compared in two 64-bit steps, without the
 * loops.  True if it occurs (ctx->best).  In such a set a start passes
 * the filter of one bucket at most: each bucket's key bytes are one
 * pattern's (both cases of a letter with TS_IGNORECASE), the tables pass
 * exactly those, and patterns with the same key bytes share a bucket. */
static TD_INLINE bool td_verify_lone(const struct teddy *t, const u8 *s,
				     size_t q, unsigned int bits,
				     uint64_t sbase, struct td_ctx *ctx)
{
	const struct td_pat *p = &t->pat[t->bucket[__builtin_ctz(bits)]];
	uint64_t w[2], start = sbase + q;

	memcpy(w, s + q, 16);
	if ((((w[0] | p->orm[0]) & p->keep[0]) ^ p->val[0]) |
		    (((w[1] | p->orm[1]) & p->keep[1]) ^ p->val[1]) ||
	    start + p->len > UINT_MAX)
		return false;
	ctx->offered = 1;
	ctx->best = (struct ts_set_best){ true, (unsigned int)start,
					  (unsigned int)(start + p->len),
					  p->id };
	return true;
}

/* After the verify of start @q (buckets @bits): whether the scan stops,
 * with ctx->best the first occurrence, or ctx->hits full. */
static inline bool td_found(struct td_ctx *ctx, size_t q, unsigned int bits)
{
	struct td_hit *h;

	if (!ctx->best.have)
		return false;
	if (!ctx->hits)
		return true;
	h = &ctx->hits[ctx->nhits++];
	h->q = (uint32_t)q;
	h->end = ctx->best.end;
	h->id = ctx->best.id;
	h->bits = (uint16_t)bits;
	h->only = ctx->offered == 1;
	ctx->best.have = false;
	return ctx->nhits == ctx->maxhits;
}

/* The verify of start @q (buckets @bits, which VBMI's candidates from
 * bytes 0x80 up may leave 0; the bytes to last + longest in hand), then
 * td_found(). */
static TD_INLINE bool td_try(const struct teddy *t, const u8 *s, size_t q,
			     size_t last, unsigned int bits, uint64_t sbase,
			     struct td_ctx *ctx)
{
	const size_t avail = last + t->longest - q;

	if (t->lone && avail >= 16 && !ctx->have_prev)
		return bits && td_verify_lone(t, s, q, bits, sbase, ctx) &&
		       td_found(ctx, q, bits);
	td_verify(t, s, q, avail, bits, sbase, ctx);
	return td_found(ctx, q, bits);
}

/* The scalar filter on the key bytes at @k. */
static inline unsigned int td_filter_keys(const struct teddy *t, const u8 *k,
					  unsigned int keyw)
{
	unsigned int m = t->tab[0][k[0]];

	if (keyw > 1)
		m &= t->tab[1][k[1]];
	if (keyw > 2)
		m &= t->tab[2][k[2]];
	if (keyw > 3)
		m &= t->tab[3][k[3]];
	return m;
}

/* The scalar filter at start @p (its key bytes, koff + keyw from s[p],
 * readable). */
static inline unsigned int td_filter(const struct teddy *t, const u8 *s,
				     size_t p, unsigned int keyw)
{
	return td_filter_keys(t, s + p + t->koff, keyw);
}

/* Return @call(..., k) with k the constant t->keyw (1 to 4): each key
 * width compiled apart, its loops unrolled and without a branch. */
#define TD_BY_KEYW(call, ...)                        \
	do {                                         \
		switch (t->keyw) {                   \
		case 1:                              \
			return call(__VA_ARGS__, 1); \
		case 2:                              \
			return call(__VA_ARGS__, 2); \
		case 3:                              \
			return call(__VA_ARGS__, 3); \
		default:                             \
			return call(__VA_ARGS__, 4); \
		}                                    \
	} while (0)

static TD_INLINE bool td_scan_scalar_k(const struct teddy *t, const u8 *s,
				       size_t from, size_t last, uint64_t sbase,
				       struct td_ctx *ctx, unsigned int keyw)
{
	const u8 *ks = s + t->koff; /* read once: the verify stores */
	size_t p;

	for (p = from; p <= last; p++) {
		unsigned int m = td_filter_keys(t, ks + p, keyw);

		if (__builtin_expect(m != 0, 0) &&
		    td_try(t, s, p, last, m, sbase, ctx))
			return true;
	}
	return false;
}

static bool td_scan_scalar(const struct teddy *t, const u8 *s, size_t from,
			   size_t last, uint64_t sbase, struct td_ctx *ctx)
{
	TD_BY_KEYW(td_scan_scalar_k, t, s, from, last, sbase, ctx);
}

/* Go through the candidate starts base + 64 i + k for the bits k of
 * @masks[i], i < @nmasks: true once one has an occurrence.  Their buckets
 * come from the scalar filter, not from the scan's vectors: stored for it,
 * they cost the scan more than the filter's few loads (and VBMI's
 * candidates from bytes 0x80 up that the filter turns down cost no
 * verify).  Out of line, so the scan loops keep their registers; one call
 * for a collecting scan's whole batch, as a call per vector cost set 8
 * present 6% (td_collect_*()); and one copy per key width, whose filter
 * then does not branch on it. */
static TD_INLINE bool td_walk_k(const struct teddy *t, const u8 *s, size_t base,
				const uint64_t *masks, unsigned int nmasks,
				size_t last, uint64_t sbase, struct td_ctx *ctx,
				const unsigned int keyw)
{
	const u8 *ks = s + t->koff; /* read once: the verify stores */

	for (unsigned int i = 0; i < nmasks; i++, base += 64) {
		uint64_t mask = masks[i];

		while (mask) {
			size_t q = base + (size_t)__builtin_ctzll(mask);
			unsigned int bits;

			if (q > last)
				return false;
			bits = td_filter_keys(t, ks + q, keyw);
			if (td_try(t, s, q, last, bits, sbase, ctx))
				return true;
			mask &= mask - 1;
		}
	}
	return false;
}

#define TD_WALK(k)                                                            \
	__attribute__((noinline)) static bool td_walk_##k(                    \
		const struct teddy *t, const u8 *s, size_t base,              \
		const uint64_t *masks, unsigned int nmasks, size_t last,      \
		uint64_t sbase, struct td_ctx *ctx)                           \
	{                                                                     \
		return td_walk_k(t, s, base, masks, nmasks, last, sbase, ctx, \
				 k);                                          \
	}
TD_WALK(1)
TD_WALK(2)
TD_WALK(3)
TD_WALK(4)

/* td_walk_*() for key width @keyw, a constant where inlined: the
 * candidates of @nmasks vectors of 64 starts from @base. */
static TD_INLINE bool td_walk(const struct teddy *t, const u8 *s, size_t base,
			      const uint64_t *masks, unsigned int nmasks,
			      size_t last, uint64_t sbase, struct td_ctx *ctx,
			      unsigned int keyw)
{
	switch (keyw) {
	case 1:
		return td_walk_1(t, s, base, masks, nmasks, last, sbase, ctx);
	case 2:
		return td_walk_2(t, s, base, masks, nmasks, last, sbase, ctx);
	case 3:
		return td_walk_3(t, s, base, masks, nmasks, last, sbase, ctx);
	default:
		return td_walk_4(t, s, base, masks, nmasks, last, sbase, ctx);
	}
}

#if TD_X86
#define TD_TARGET_SSSE3 __attribute__((target("ssse3")))
#define TD_TARGET_AVX2 __attribute__((target("avx2")))
#define TD_TARGET_AVX512 __attribute__((target("avx512f,avx512bw")))

/* Key positions 0 to keyw - 1's tables into T0 (T1: buckets 8-15 when
 * fat), by TABS below.  Unrolled: a loop would leave them an array on the
 * stack, copied there and back at every call. */
#define TD_LOAD_TABS(TABS, T0, T1)                                       \
	do {                                                             \
		unsigned int j_;                                         \
                                                                         \
		_Pragma("GCC unroll 4") for (j_ = 0; j_ < keyw; j_++)    \
		{                                                        \
			TABS(T0[2 * j_], T0[2 * j_ + 1], 0, j_);         \
			if (fat)                                         \
				TABS(T1[2 * j_], T1[2 * j_ + 1], 1, j_); \
		}                                                        \
	} while (0)

/*
 * The vector scan: vectors of W starts from p, whose loads reach p + REACH
 * (SSSE3: p + j + 16 for j < keyw; AVX2 and AVX-512: p + 2W) of ks, the
 * key bytes' view of s (ks[p] = s[p + koff]), inside the block while
 * p <= n - REACH, where n = last + longest - koff bytes of ks are in hand;
 * two vectors per step with SSSE3 and AVX2 (one branch for 2W starts).
 * With 16 buckets (fat) a second set of tables gives buckets 8-15.  The
 * starts left after the last whole vector go to TAIL.  TABS loads key
 * position j's tables into T[2 * j] and T[2 * j + 1] (the low and high
 * nibble tables; with VBMI, the two halves of tab7), MASK(s, p, keyw, T)
 * gives the buckets of the W starts from p; inlined with constant keyw and
 * fat, the tables stay in registers.
 */
#define TD_VECTOR_SCAN(W, vec, TABS, MASK, NZ, OR, STEP, REACH, TAIL)          \
	do {                                                                   \
		const size_t n = last + t->longest - t->koff;                  \
		const u8 *ks = s + t->koff;                                    \
		size_t p = from, vend = 0;                                     \
		vec T0[2 * TD_MAXKEY], T1[2 * TD_MAXKEY], a, b;                \
		unsigned int step_;                                            \
		uint64_t m;                                                    \
                                                                               \
		if (n >= (REACH)) {                                            \
			vend = n - (REACH);                                    \
			if (vend > last)                                       \
				vend = last;                                   \
		}                                                              \
		/* the tables anew after each td_walk(): kept across the    \
		 * call, they would be copied to the stack and back */  \
		while (n >= (REACH) && p <= vend) {                            \
			TD_LOAD_TABS(TABS, T0, T1);                            \
			m = 0;                                                 \
			step_ = 2 * (W);                                       \
			for (; STEP == 2 && p + (W) <= vend; p += 2 * (W)) {   \
				a = MASK(ks, p, keyw, T0, fat);                \
				b = MASK(ks, p + (W), keyw, T0, fat);          \
				if (fat) {                                     \
					a = OR(a, MASK(ks, p, keyw, T1, fat)); \
					b = OR(b, MASK(ks, p + (W), keyw, T1,  \
						       fat));                  \
				}                                              \
				m = NZ(a) | NZ(b) << ((W) % 64);               \
				if (__builtin_expect(m != 0, 0))               \
					break;                                 \
			}                                                      \
			if (!m) {                                              \
				step_ = (W);                                   \
				for (; p <= vend; p += (W)) {                  \
					a = MASK(ks, p, keyw, T0, fat);        \
					if (fat)                               \
						a = OR(a, MASK(ks, p, keyw,    \
							       T1, fat));      \
					m = NZ(a);                             \
					if (__builtin_expect(m != 0, 0))       \
						break;                         \
				}                                              \
			}                                                      \
			if (!m)                                                \
				break;                                         \
			if (td_walk(t, s, p, &m, 1, last, sbase, ctx, keyw))   \
				return true;                                   \
			p += step_;                                            \
		}                                                              \
		return p <= last && TAIL;                                      \
	} while (0)

/* ---- SSSE3 ---- */

#define TD_LOADT16(v, tab) v = _mm_load_si128((const __m128i *)(tab))
#define TD_TABS16(vlo, vhi, h, j)             \
	do {                                  \
		TD_LOADT16(vlo, t->lo[h][j]); \
		TD_LOADT16(vhi, t->hi[h][j]); \
	} while (0)
#define TD_NZ16(v)                                                    \
	((uint64_t)(~(unsigned int)_mm_movemask_epi8(                 \
			    _mm_cmpeq_epi8(v, _mm_setzero_si128())) & \
		    0xFFFFu))

TD_TARGET_SSSE3 static TD_INLINE __m128i td_nib16(__m128i d, __m128i lo,
						  __m128i hi)
{
	const __m128i f = _mm_set1_epi8(0x0F);

	return _mm_and_si128(
		_mm_shuffle_epi8(lo, _mm_and_si128(d, f)),
		_mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(d, 4), f)));
}

TD_TARGET_SSSE3 static TD_INLINE __m128i td_mask16(const u8 *s, size_t p,
						   unsigned int keyw,
						   const __m128i *T, bool fat)
{
	(void)fat; /* one set of tables at a time here */
	__m128i m =
		td_nib16(_mm_loadu_si128((const __m128i *)(s + p)), T[0], T[1]);
	unsigned int j;

	for (j = 1; j < keyw; j++)
		m = _mm_and_si128(
			m,
			td_nib16(_mm_loadu_si128((const __m128i *)(s + p + j)),
				 T[2 * j], T[2 * j + 1]));
	return m;
}

TD_TARGET_SSSE3 static TD_INLINE bool
td_scan_ssse3_k(const struct teddy *t, const u8 *s, size_t from, size_t last,
		uint64_t sbase, struct td_ctx *ctx, const bool fat,
		const unsigned int keyw)
{
	TD_VECTOR_SCAN(16, __m128i, TD_TABS16, td_mask16, TD_NZ16, _mm_or_si128,
		       2, keyw + 15,
		       td_scan_scalar_k(t, s, p, last, sbase, ctx, keyw));
}

/* ---- AVX2 ---- */

#define TD_LOADT32(v, tab) \
	v = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)(tab)))
#define TD_TABS32(vlo, vhi, h, j)             \
	do {                                  \
		TD_LOADT32(vlo, t->lo[h][j]); \
		TD_LOADT32(vhi, t->hi[h][j]); \
	} while (0)
#define TD_NZ32(v)                                       \
	((uint64_t)(~(unsigned int)_mm256_movemask_epi8( \
		_mm256_cmpeq_epi8(v, _mm256_setzero_si256()))))

TD_TARGET_AVX2 static TD_INLINE __m256i td_nib32(__m256i d, __m256i lo,
						 __m256i hi)
{
	const __m256i f = _mm256_set1_epi8(0x0F);

	return _mm256_and_si256(
		_mm256_shuffle_epi8(lo, _mm256_and_si256(d, f)),
		_mm256_shuffle_epi8(
			hi, _mm256_and_si256(_mm256_srli_epi16(d, 4), f)));
}

/* As td_mask_avx512 below: the data at p + j from loads at p and p + 32. */
TD_TARGET_AVX2 static TD_INLINE __m256i td_mask32(const u8 *s, size_t p,
						  unsigned int keyw,
						  const __m256i *T, bool fat)
{
	(void)fat; /* one set of tables at a time here */
	__m256i a = _mm256_loadu_si256((const __m256i *)(s + p));
	__m256i x = _mm256_permute2x128_si256(
		a, _mm256_loadu_si256((const __m256i *)(s + p + 32)), 0x21);
	__m256i m = td_nib32(a, T[0], T[1]);

	if (keyw > 1)
		m = _mm256_and_si256(m, td_nib32(_mm256_alignr_epi8(x, a, 1),
						 T[2], T[3]));
	if (keyw > 2)
		m = _mm256_and_si256(m, td_nib32(_mm256_alignr_epi8(x, a, 2),
						 T[4], T[5]));
	if (keyw > 3)
		m = _mm256_and_si256(m, td_nib32(_mm256_alignr_epi8(x, a, 3),
						 T[6], T[7]));
	return m;
}

TD_TARGET_AVX2 static TD_INLINE bool
td_scan_avx2_k(const struct teddy *t, const u8 *s, size_t from, size_t last,
	       uint64_t sbase, struct td_ctx *ctx, const bool fat,
	       const unsigned int keyw)
{
	TD_VECTOR_SCAN(32, __m256i, TD_TABS32, td_mask32, TD_NZ32,
		       _mm256_or_si256, 2, 64,
		       td_scan_scalar_k(t, s, p, last, sbase, ctx, keyw));
}

/* ---- AVX-512BW: one vector per step (64 starts fill the mask) ---- */

#define TD_LOADT64(v, tab) \
	v = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)(tab)))
#define TD_TABS64(vlo, vhi, h, j)             \
	do {                                  \
		TD_LOADT64(vlo, t->lo[h][j]); \
		TD_LOADT64(vhi, t->hi[h][j]); \
	} while (0)
#define TD_NZ64(v) ((uint64_t)_mm512_test_epi8_mask(v, v))

TD_TARGET_AVX512 static TD_INLINE __m512i td_nib64(__m512i d, __m512i lo,
						   __m512i hi)
{
	const __m512i f = _mm512_set1_epi8(0x0F);

	return _mm512_and_si512(
		_mm512_shuffle_epi8(lo, _mm512_and_si512(d, f)),
		_mm512_shuffle_epi8(
			hi, _mm512_and_si512(_mm512_srli_epi16(d, 4), f)));
}

/*
 * The 64-byte levels, AVX-512BW and VBMI, differ in LOOK, the lookup of
 * one key byte's buckets for 64 data bytes, and TABS, its tables.
 *
 * td_mask_*ax: the data at p + j comes from two loads at p and p + 64
 * (so the block must reach p + 128): 64-byte loads at p + 1, p + 2...
 * would each straddle two cache lines, which costs more than the shuffles,
 * and much more when the data streams from memory.  x holds bytes p + 16
 * on, and alignr then shifts each 16-byte lane by j within (x : a).
 *
 * td_tail_*: the starts from p to last where the block ends before
 * p + 128: masked loads (the bytes past the block read as 0, and no start
 * up to last needs them), instead of the scalar filter that short blocks
 * (stream writes) would otherwise take.
 */
#define TD_LEVEL64(sfx, target, LOOK, TABS)                                    \
	target static TD_INLINE __m512i td_mask_##sfx##_ax(                    \
		__m512i a, __m512i x, unsigned int keyw, const __m512i *T)     \
	{                                                                      \
		__m512i m = LOOK(a, T[0], T[1]);                               \
                                                                               \
		if (keyw > 1)                                                  \
			m = _mm512_and_si512(m,                                \
					     LOOK(_mm512_alignr_epi8(x, a, 1), \
						  T[2], T[3]));                \
		if (keyw > 2)                                                  \
			m = _mm512_and_si512(m,                                \
					     LOOK(_mm512_alignr_epi8(x, a, 2), \
						  T[4], T[5]));                \
		if (keyw > 3)                                                  \
			m = _mm512_and_si512(m,                                \
					     LOOK(_mm512_alignr_epi8(x, a, 3), \
						  T[6], T[7]));                \
		return m;                                                      \
	}                                                                      \
                                                                               \
	/* The key bytes by loads where 8 buckets leave the shuffle port    \
	 * the bottleneck (3 permutes and 3 shifts per vector: 31% more    \
	 * throughput); by shifts with 16 buckets, whose 8 permutes a      \
	 * vector keep that port busy anyway (loads: 177 -> 202 ns a       \
	 * 1500-byte write of 64 absent literals). */  \
	target static TD_INLINE __m512i td_mask_##sfx(const u8 *s, size_t p,   \
						      unsigned int keyw,       \
						      const __m512i *T,        \
						      const bool fat)          \
	{                                                                      \
		__m512i a = _mm512_loadu_si512((const void *)(s + p)), m;      \
		unsigned int j;                                                \
                                                                               \
		if (fat)                                                       \
			return td_mask_##sfx##_ax(                             \
				a,                                             \
				_mm512_alignr_epi32(                           \
					_mm512_loadu_si512(                    \
						(const void *)(s + p + 64)),   \
					a, 4),                                 \
				keyw, T);                                      \
		m = LOOK(a, T[0], T[1]);                                       \
		_Pragma("GCC unroll 4") for (j = 1; j < keyw; j++)             \
			m = _mm512_and_si512(                                  \
				m, LOOK(_mm512_loadu_si512(                    \
						(const void *)(s + p + j)),    \
					T[2 * j], T[2 * j + 1]));              \
		return m;                                                      \
	}                                                                      \
                                                                               \
	/* the starts from p of bytes [p, n), the bytes past n read as 0 */    \
	target static TD_INLINE void td_load_##sfx(                            \
		const u8 *s, size_t p, size_t n, __m512i *a, __m512i *x)       \
	{                                                                      \
		size_t left = n - p;                                           \
		__mmask64 k0 = left >= 64 ? ~0ull : (1ull << left) - 1;        \
		__mmask64 k1 = left >= 128 ? ~0ull :                           \
			       left <= 64  ? 0 :                               \
					     (1ull << (left - 64)) - 1;         \
                                                                               \
		*a = _mm512_maskz_loadu_epi8(k0, s + p);                       \
		*x = _mm512_alignr_epi32(                                      \
			_mm512_maskz_loadu_epi8(k1, s + p + 64), *a, 4);       \
	}                                                                      \
                                                                               \
	target static TD_INLINE bool td_tail_##sfx(                            \
		const struct teddy *t, const u8 *s, size_t p, size_t last,     \
		uint64_t sbase, struct td_ctx *ctx, unsigned int keyw,         \
		bool fat)                                                      \
	{                                                                      \
		const size_t n = last + t->longest - t->koff;                  \
		__m512i T0[2 * TD_MAXKEY], T1[2 * TD_MAXKEY];                  \
                                                                               \
		for (; p <= last; p += 64) {                                   \
			size_t cnt = last - p + 1;                             \
			__m512i a, x, v;                                       \
			uint64_t m;                                            \
                                                                               \
			TD_LOAD_TABS(TABS, T0, T1);                            \
			td_load_##sfx(s + t->koff, p, n, &a, &x);              \
			v = td_mask_##sfx##_ax(a, x, keyw, T0);                \
			if (fat)                                               \
				v = _mm512_or_si512(                           \
					v,                                     \
					td_mask_##sfx##_ax(a, x, keyw, T1));   \
			m = TD_NZ64(v);                                        \
			if (cnt < 64)                                          \
				m &= (1ull << cnt) - 1;                        \
			if (m &&                                               \
			    td_walk(t, s, p, &m, 1, last, sbase, ctx, keyw))   \
				return true;                                   \
		}                                                              \
		return false;                                                  \
	}                                                                      \
                                                                               \
	/* td_scan_*() when collecting (ctx->hits): the masks of up to       \
	 * TD_BATCH vectors noted, then walked in one td_walk(), so that the \
	 * loop does not branch on each. */ \
	target static TD_INLINE bool td_collect_##sfx##_k(                     \
		const struct teddy *t, const u8 *s, size_t from, size_t last,  \
		uint64_t sbase, struct td_ctx *ctx, const bool fat,            \
		const unsigned int keyw)                                       \
	{                                                                      \
		const size_t n = last + t->longest - t->koff;                  \
		const u8 *ks = s + t->koff;                                    \
		__m512i T0[2 * TD_MAXKEY], T1[2 * TD_MAXKEY], v;               \
		uint64_t mask[TD_BATCH], m;                                    \
		size_t p = from, vend;                                         \
		unsigned int nb;                                               \
                                                                               \
		if (n < 128)                                                   \
			return td_tail_##sfx(t, s, p, last, sbase, ctx, keyw,  \
					     fat);                             \
		vend = n - 128 < last ? n - 128 : last;                        \
		while (p <= vend) {                                            \
			const size_t p0 = p;                                   \
                                                                               \
			TD_LOAD_TABS(TABS, T0, T1);                            \
			m = 0;                                                 \
			for (nb = 0; nb < TD_BATCH && p <= vend;               \
			     nb++, p += 64) {                                  \
				v = td_mask_##sfx(ks, p, keyw, T0, fat);       \
				if (fat)                                       \
					v = _mm512_or_si512(                   \
						v, td_mask_##sfx(ks, p, keyw,  \
								 T1, fat));    \
				mask[nb] = TD_NZ64(v);                         \
				m |= mask[nb];                                 \
			}                                                      \
			if (m && td_walk(t, s, p0, mask, nb, last, sbase, ctx, \
					 keyw))                                \
				return true;                                   \
		}                                                              \
		return p <= last &&                                            \
		       td_tail_##sfx(t, s, p, last, sbase, ctx, keyw, fat);    \
	}                                                                      \
                                                                               \
	target static TD_INLINE bool td_scan_##sfx##_k(                        \
		const struct teddy *t, const u8 *s, size_t from, size_t last,  \
		uint64_t sbase, struct td_ctx *ctx, const bool fat,            \
		const unsigned int keyw)                                       \
	{                                                                      \
		if (ctx->hits)                                                 \
			return td_collect_##sfx##_k(t, s, from, last, sbase,   \
						    ctx, fat, keyw);           \
		TD_VECTOR_SCAN(64, __m512i, TABS, td_mask_##sfx, TD_NZ64,      \
			       _mm512_or_si512, 1, 128,                        \
			       td_tail_##sfx(t, s, p, last, sbase, ctx, keyw,  \
					     fat));                            \
	}                                                                      \
                                                                               \
	target static TD_INLINE size_t td_first_##sfx##_k(                     \
		const struct teddy *t, const u8 *s, size_t from, size_t last,  \
		const bool fat, const unsigned int keyw)                       \
	{                                                                      \
		const size_t n = last + t->longest - t->koff;                  \
		const u8 *ks = s + t->koff;                                    \
		__m512i T0[2 * TD_MAXKEY], T1[2 * TD_MAXKEY], a, x, v;         \
		uint64_t m;                                                    \
		size_t p;                                                      \
                                                                               \
		TD_LOAD_TABS(TABS, T0, T1);                                    \
		for (p = from; p + 128 <= n && p <= last; p += 64) {           \
			v = td_mask_##sfx(ks, p, keyw, T0, fat);               \
			if (fat)                                               \
				v = _mm512_or_si512(v,                         \
						    td_mask_##sfx(ks, p, keyw, \
								  T1, fat));   \
			m = TD_NZ64(v);                                        \
			if (m)                                                 \
				return p + (size_t)__builtin_ctzll(m);         \
		}                                                              \
		for (; p <= last; p += 64) {                                   \
			td_load_##sfx(ks, p, n, &a, &x);                       \
			v = td_mask_##sfx##_ax(a, x, keyw, T0);                \
			if (fat)                                               \
				v = _mm512_or_si512(                           \
					v,                                     \
					td_mask_##sfx##_ax(a, x, keyw, T1));   \
			m = TD_NZ64(v);                                        \
			if (m)                                                 \
				return p + (size_t)__builtin_ctzll(m);         \
		}                                                              \
		return last + 1;                                               \
	}                                                                      \
                                                                               \
	/* The first start from @from to @last that the filter lets         \
	 * through (their windows in hand), else last + 1 (or more): a       \
	 * scan's prefilter, without a verify in its loop to spill the       \
	 * tables around. */  \
	target static __attribute__((noinline)) size_t td_first_##sfx(         \
		const struct teddy *t, const u8 *s, size_t from, size_t last)  \
	{                                                                      \
		if (t->nbuckets > 8)                                           \
			TD_BY_KEYW(td_first_##sfx##_k, t, s, from, last,       \
				   true);                                      \
		TD_BY_KEYW(td_first_##sfx##_k, t, s, from, last, false);       \
	}

TD_LEVEL64(avx512, TD_TARGET_AVX512, td_nib64, TD_TABS64)

/* ---- AVX-512 VBMI: one two-table byte permute per key byte ---- */

/*
 * vpermt2b looks a data byte's low 7 bits up in tab7 (two 64-byte tables)
 * at once: one permute instead of the nibble level's two shuffles, a shift
 * and three ands, and exact for ASCII, where the nibble tables let each
 * key byte of a bucket pair with the others' nibbles.  Bytes c and c ^ 0x80
 * share an entry: a candidate more, now and then, in binary data (zeroing
 * the lanes of bytes from 0x80 on costs a mask per key byte, and took the
 * scan from 32 to 19 GB/s).
 */
#define TD_TARGET_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#define TD_TABS7(vlo, vhi, h, j)                                              \
	do {                                                                  \
		vlo = _mm512_loadu_si512((const void *)t->tab7[h][j]);        \
		vhi = _mm512_loadu_si512((const void *)(t->tab7[h][j] + 64)); \
	} while (0)

TD_TARGET_VBMI static TD_INLINE __m512i td_look7(__m512i d, __m512i lo,
						 __m512i hi)
{
	return _mm512_permutex2var_epi8(lo, d, hi);
}

TD_LEVEL64(vbmi, TD_TARGET_VBMI, td_look7, TD_TABS7)

/* Each level for key widths 1 to 4 and 8 or 16 buckets, without a branch
 * in the loop. */
#define TD_SCAN_FAT(name, target, fat)                                      \
	target static bool name##_##fat(const struct teddy *t, const u8 *s, \
					size_t from, size_t last,           \
					uint64_t sbase, struct td_ctx *ctx) \
	{                                                                   \
		TD_BY_KEYW(name##_k, t, s, from, last, sbase, ctx, fat);    \
	}
#define TD_SCAN_LEVEL(name, target)      \
	TD_SCAN_FAT(name, target, false) \
	TD_SCAN_FAT(name, target, true)
TD_SCAN_LEVEL(td_scan_ssse3, TD_TARGET_SSSE3)
TD_SCAN_LEVEL(td_scan_avx2, TD_TARGET_AVX2)
TD_SCAN_LEVEL(td_scan_avx512, TD_TARGET_AVX512)
TD_SCAN_LEVEL(td_scan_vbmi, TD_TARGET_VBMI)
/* The filter for the up to 64 starts from s[0] when only @left bytes are
 * in hand: a key byte not yet in hand lets every bucket through, as it
 * may still be any byte.  The starts with a bucket left.  By the level's
 * own lookup: VBMI's exact tables pass far fewer of the last starts of a
 * write than the nibbles, with buckets of unlike keys (teddy_group.h). */
#define TD_PARTIAL64(sfx, target, LOOK, TABS)                                 \
	target static uint64_t td_partial64_##sfx(const struct teddy *t,      \
						  const u8 *s, size_t left)   \
	{                                                                     \
		const __m512i ones = _mm512_set1_epi8(-1);                    \
		const bool fat = t->nbuckets > 8;                             \
		__m512i m0 = ones, m1 = ones;                                 \
		unsigned int j;                                               \
                                                                              \
		for (j = 0; j < t->keyw && t->koff + j < left; j++) {         \
			size_t in = left - t->koff - j;                       \
			__mmask64 k = in >= 64 ? ~0ull : (1ull << in) - 1;    \
			__m512i d = _mm512_maskz_loadu_epi8(k,                \
							    s + t->koff + j), \
				lo, hi;                                       \
                                                                              \
			TABS(lo, hi, 0, j);                                   \
			m0 = _mm512_and_si512(                                \
				m0, _mm512_mask_mov_epi8(ones, k,             \
							 LOOK(d, lo, hi)));   \
			if (fat) {                                            \
				TABS(lo, hi, 1, j);                           \
				m1 = _mm512_and_si512(                        \
					m1,                                   \
					_mm512_mask_mov_epi8(                 \
						ones, k, LOOK(d, lo, hi)));   \
			}                                                     \
		}                                                             \
		if (!fat)                                                     \
			m1 = _mm512_setzero_si512();                          \
		return TD_NZ64(_mm512_or_si512(m0, m1));                      \
	}
TD_PARTIAL64(avx512, TD_TARGET_AVX512, td_nib64, TD_TABS64)
TD_PARTIAL64(vbmi, TD_TARGET_VBMI, td_look7, TD_TABS7)
#undef TD_PARTIAL64
#endif /* TD_X86 */

/* ---- dispatch ---------------------------------------------------------- */

static pthread_once_t td_probe_once = PTHREAD_ONCE_INIT;
static enum td_level td_best = TD_SCALAR; /* written once, under the once */

static void td_probe(void)
{
#if TD_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw"))
		td_best = __builtin_cpu_supports("avx512vbmi") ? TD_VBMI :
								 TD_AVX512;
	else if (__builtin_cpu_supports("avx2"))
		td_best = TD_AVX2;
	else if (__builtin_cpu_supports("ssse3"))
		td_best = TD_SSSE3;
#endif
}

/* [level][16 buckets] */
static const td_scan_fn td_scans[TD_NLEVELS][2] = {
	{ td_scan_scalar, td_scan_scalar },
#if TD_X86
	{ td_scan_ssse3_false, td_scan_ssse3_true },
	{ td_scan_avx2_false, td_scan_avx2_true },
	{ td_scan_avx512_false, td_scan_avx512_true },
	{ td_scan_vbmi_false, td_scan_vbmi_true },
#endif
};

static enum td_level td_level_for(enum td_level wanted)
{
	pthread_once(&td_probe_once, td_probe);
	return wanted < td_best ? wanted : td_best;
}

/* ---- the search -------------------------------------------------------- */

/* Settle carried starts [from, to) of @c (@clen bytes, c[0] at @cbase) one
 * by one; true once one has an occurrence. */
static bool td_scan_carry(const struct teddy *t, const u8 *c, size_t from,
			  size_t to, size_t clen, uint64_t cbase,
			  struct td_ctx *ctx)
{
	size_t p;

	for (p = from; p < to && p + t->koff + t->keyw <= clen; p++) {
		unsigned int m = td_filter(t, c, p, t->keyw);

		if (m) {
			td_verify(t, c, p, clen - p, m, cbase, ctx);
			if (ctx->best.have)
				return true;
		}
	}
	return false;
}

/*
 * Search from state->offset.  pos is the first start not yet settled; want
 * the stream offset of the next block to ask for.  While pos < want the
 * carry holds stream bytes [cbase, want), cbase <= pos, and want - pos <
 * longest (the starts there need more bytes).
 */
static unsigned int td_find(struct ts_config *conf, struct ts_state *state)
{
	const struct teddy *t = ts_config_priv(conf);
	const size_t m = t->longest;
	const size_t cap = 2 * (m - 1);
	uint64_t pos = state->offset, want = pos, cbase = pos, bstart;
	u8 stack[TD_STACK_CARRY], *carry = stack;
	size_t clen = 0;
	unsigned int n, ret = UINT_MAX;
	const u8 *blk;
	struct td_ctx ctx = { .overlap = conf->flags & TS_OVERLAP };

	if (ctx.overlap)
		ctx.have_prev =
			ts_overlap_prev(state, &ctx.prev_end, &ctx.prev_id);
	ctx.prev_start = state->offset;
	if (cap > sizeof(stack)) {
		carry = malloc(cap);
		if (!carry) {
			errno = ENOMEM;
			return UINT_MAX;
		}
	}
	for (;;) {
		if (pos + t->shortest > UINT_MAX || want > UINT_MAX)
			break;
		n = conf->get_next_block((unsigned int)want, &blk, conf, state);
		if (!n)
			break;
		bstart = want;
		if (pos < bstart) {
			/* starts straddling the boundary: at most m - 1
			 * bytes more complete them all, unless the block
			 * is shorter (then all of it is carried) */
			size_t take = n < m - 1 ? n : m - 1, from_c, end_c;

			if (clen + take > cap) {
				size_t dead = (size_t)(pos - cbase);

				memmove(carry, carry + dead, clen - dead);
				clen -= dead;
				cbase = pos;
			}
			memcpy(carry + clen, blk, take);
			clen += take;
			from_c = (size_t)(pos - cbase);
			/* the starts whose longest window is in hand */
			end_c = clen >= m ? clen - m + 1 : 0;
			if (end_c > (size_t)(bstart - cbase))
				end_c = (size_t)(bstart - cbase);
			if (from_c < end_c) {
				if (td_scan_carry(t, carry, from_c, end_c, clen,
						  cbase, &ctx))
					goto match;
				pos = cbase + end_c;
			}
			if (pos < bstart) {
				want = bstart + n; /* all of it carried */
				continue;
			}
			clen = 0;
		}
		pos = bstart;
		if (n >= m) {
			if (t->scan(t, blk, 0, n - m, bstart, &ctx))
				goto match;
			pos = bstart + n - m + 1;
		}
		cbase = pos;
		clen = (size_t)(bstart + n - pos);
		memcpy(carry, blk + (pos - bstart), clen);
		want = bstart + n;
	}
	/* the end of the stream: the starts left, with what there is */
	if (pos < want && td_scan_carry(t, carry, (size_t)(pos - cbase), clen,
					clen, cbase, &ctx))
		goto match;
	goto out;
match:
	state->offset = ctx.best.end;
	ts_set_match(state, ctx.best.id);
	ret = ctx.best.start;
out:
	if (carry != stack)
		free(carry);
	return ret;
}

/* ---- building ---------------------------------------------------------- */

/* The order of patterns in the buckets: by folded key (the bytes
 * [koff, koff + keyw) of @pat), then length. */
struct td_sort {
	const u8 *pat;
	uint32_t len, id;
	unsigned int koff, keyw;
};

static int td_cmp(const void *a, const void *b)
{
	const struct td_sort *x = a, *y = b;
	int c = memcmp(x->pat + x->koff, y->pat + y->koff, x->keyw);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

#if TD_X86
#define TDS_NEXT_FILTER(k)                                                    \
	static int tds_next_filter_##k(struct ts_config *conf, void *state,   \
				       const struct ts_stream_input *in,      \
				       struct ts_match *m);                   \
	static int tds_next_filter64_##k(struct ts_config *conf, void *state, \
					 const struct ts_stream_input *in,    \
					 struct ts_match *m);
TDS_NEXT_FILTER(1)
TDS_NEXT_FILTER(2)
TDS_NEXT_FILTER(3)
TDS_NEXT_FILTER(4)
#undef TDS_NEXT_FILTER
#endif

/* t->quick's tables for the patterns in t->pat (lane i: pat[i]). */
static void td_quick_fill(const struct teddy *t)
{
	struct td_quick *q = t->quick;
	unsigned int i, j, c;

	memset(q->hit, 0, sizeof(q->hit));
	memset(q->live, 0, sizeof(q->live));
	memset(q->kill, 0xFF, sizeof(q->kill));
	q->max = TD_QUICK_WRITE;
	for (i = 0; i < t->count; i++) {
		const struct td_pat *p = &t->pat[i];
		const u8 *pb = t->bytes + p->off;
		uint32_t in = ~0u >> (32 - p->len);

		for (c = 0; c < 256; c++) {
			uint32_t match = 0;

			for (j = 0; j < p->len; j++)
				if (t->fold[c] == pb[j])
					match |= 1u << j;
			q->kill[c][i] = ~match & in;
		}
		q->hit[i] = ~0u << (p->len - 1);
		q->live[i] = ~q->hit[i];
		/* a match's bit, shifted on by the bytes after it, stays
		 * in the lane (tds_quick()) */
		if (q->max > 33 - p->len)
			q->max = 33 - p->len;
	}
	q->filter = q->filter64 = NULL;
#if TD_X86
	if (t->level == TD_VBMI && t->nbuckets == 8) {
		q->filter = t->keyw == 1 ? tds_next_filter_1 :
			    t->keyw == 2 ? tds_next_filter_2 :
			    t->keyw == 3 ? tds_next_filter_3 :
					   tds_next_filter_4;
		q->filter64 = t->keyw == 1 ? tds_next_filter64_1 :
			      t->keyw == 2 ? tds_next_filter64_2 :
			      t->keyw == 3 ? tds_next_filter64_3 :
					     tds_next_filter64_4;
	}
#endif
}

/* Pattern @o into @p, with the masks of its first 16 bytes for
 * td_verify(). */
static void td_place(const struct teddy *t, struct td_pat *p,
		     const struct td_sort *o)
{
	u8 val[16] = { 0 }, keep[16] = { 0 }, orm[16] = { 0 };

	p->off = (uint32_t)(o->pat - t->bytes);
	p->len = o->len;
	p->id = o->id;
	for (unsigned int j = 0; j < 16 && j < p->len; j++) {
		u8 c = o->pat[j];
		bool letter = t->icase && t->fold[c ^ 0x20] == c &&
			      (c ^ 0x20) != c;

		val[j] = c;
		keep[j] = 0xFF;
		orm[j] = letter ? 0x20 : 0;
	}
	memcpy(p->val, val, 16);
	memcpy(p->keep, keep, 16);
	memcpy(p->orm, orm, 16);
}

/* t->rare_*: each pattern's rarest byte, the first of them where bytes
 * are as rare; none where the distinct ones are too many to compare. */
static void td_rare_fill(struct teddy *t, const u8 *const *pats,
			 const unsigned int *lens)
{
	unsigned int i, j, k;

	t->rare_n = t->rare_back = 0;
	for (i = 0; i < t->count; i++) {
		unsigned int at = 0;
		u8 c, o;

		for (j = 1; j < lens[i]; j++)
			if (rb_cost(pats[i][j], t->icase) <
			    rb_cost(pats[i][at], t->icase))
				at = j;
		c = pats[i][at];
		o = rb_fold_or(c, t->icase);
		for (k = 0; k < t->rare_n; k++)
			if (t->rare_c[k] == c && t->rare_or[k] == o)
				break;
		if (k == t->rare_n) {
			if (k == TD_RARE_MAX) {
				t->rare_n = 0;
				return;
			}
			t->rare_c[k] = c;
			t->rare_or[k] = o;
			t->rare_n++;
		}
		if (at > t->rare_back)
			t->rare_back = at;
	}
}

static struct ts_config *td_init_level(const void *const *patterns,
				       const unsigned int *lens,
				       unsigned int count, gfp_t gfp_mask,
				       int flags, enum td_level wanted)
{
	struct ts_config *conf;
	struct teddy *t;
	struct td_sort *order;
	const u8 *pats[TD_MAX_PATTERNS], *keys[TD_MAX_PATTERNS];
	unsigned int group[TD_MAX_PATTERNS];
	struct tg_model model;
	size_t payload, bytes = 0, off = 0;
	unsigned int i, j, b, k, x, longest = 0;
	enum td_level level;
	bool quick;

	if (count > TD_MAX_PATTERNS) {
		ts_fail(-EINVAL,
			"teddy: %u patterns, at most %u (\"ac\" or \"auto\" "
			"take more)",
			count, TD_MAX_PATTERNS);
		return ERR_PTR(-EINVAL);
	}
	for (i = 0; i < count; i++) {
		if (!ts_size_add(bytes, lens[i], &bytes))
			return ERR_PTR(-EINVAL);
		if (lens[i] > longest)
			longest = lens[i];
	}
	level = td_level_for(wanted);
	quick = TD_X86 && level >= TD_AVX2 && count <= TD_QUICK_PATTERNS &&
		longest <= TD_QUICK_LONGEST;
	if (bytes > UINT32_MAX ||
	    !ts_size_add(sizeof(*t), count * sizeof(struct td_pat), &payload) ||
	    !ts_size_add(payload, bytes, &payload) ||
	    !ts_size_add(payload, lens[0], &payload) ||
	    !ts_size_add(payload, quick ? sizeof(struct td_quick) + 63 : 0,
			 &payload))
		return ERR_PTR(-EINVAL);
	order = malloc(count * sizeof(*order));
	if (!order)
		return ERR_PTR(-ENOMEM);
	conf = alloc_ts_config(payload, gfp_mask);
	if (IS_ERR(conf)) {
		free(order);
		return conf;
	}
	t = ts_config_priv(conf);
	t->pat = (struct td_pat *)(t + 1);
	t->bytes = (u8 *)(t->pat + count);
	t->pattern0 = t->bytes + bytes;
	t->len0 = lens[0];
	memcpy(t->pattern0, patterns[0], lens[0]);
	t->count = count;
	t->icase = flags & TS_IGNORECASE;
	ts_fill_fold_table(t->fold, t->icase);
	t->shortest = UINT_MAX;
	for (i = 0; i < count; i++) {
		if (lens[i] > t->longest)
			t->longest = lens[i];
		if (lens[i] < t->shortest)
			t->shortest = lens[i];
	}
	/* 3 key bytes filter small sets well enough; a fourth costs a
	 * quarter more per vector (and registers: 8 tables) and pays only
	 * for larger sets, whose buckets hold more patterns */
	t->keyw = count < TD_FAT_FROM ? 3 : TD_MAXKEY;
	if (t->keyw > t->shortest)
		t->keyw = t->shortest;

	/* the folded patterns; their keys where the set's bytes are rare,
	 * for sets whose keys each get a bucket (larger ones share buckets,
	 * which the grouping, not the offset, decides); then sorted by key
	 * into the buckets */
	for (i = 0; i < count; i++) {
		const u8 *p = patterns[i];
		u8 *dst = t->bytes + off;

		for (j = 0; j < lens[i]; j++)
			dst[j] = t->fold[p[j]];
		pats[i] = dst;
		off += lens[i];
	}
	tg_model_init(&model, t->keyw, t->icase, level < TD_VBMI);
	t->nbuckets = count >= TD_FAT_FROM ? 16 : 8;
	t->koff = count <= t->nbuckets ?
			  tg_key_offset(&model, pats, count,
					t->shortest - t->keyw < TD_MAXKOFF ?
						t->shortest - t->keyw :
						TD_MAXKOFF) :
			  0;
	for (i = 0; i < count; i++)
		order[i] = (struct td_sort){ pats[i], lens[i], i, t->koff,
					     t->keyw };
	qsort(order, count, sizeof(*order), td_cmp);
	for (i = 0; i < count; i++)
		keys[i] = order[i].pat + t->koff;
	if (!tg_group_keys(&model, keys, count, t->nbuckets, group)) {
		free(order);
		free(conf);
		return ERR_PTR(-ENOMEM);
	}
	/* bucket b: group b's patterns, in key order */
	for (b = 0, k = 0; b < TD_BUCKETS; b++) {
		t->bucket[b] = k;
		for (i = 0; i < count; i++)
			if (group[i] == b)
				td_place(t, &t->pat[k++], &order[i]);
	}
	t->bucket[TD_BUCKETS] = count;
	free(order);
	/* by first byte, for td_keep() and td_pending() */
	for (x = 0, i = 0; x < 256; x++) {
		t->by_first[x] = (u8)i;
		for (k = 0; k < count; k++)
			if (t->bytes[t->pat[k].off] == x)
				t->by_byte[i++] = (u8)k;
	}
	t->by_first[256] = (u8)count;
	t->lone = t->longest <= 16;
	for (b = 0; b < t->nbuckets; b++)
		if (t->bucket[b + 1] - t->bucket[b] > 1)
			t->lone = false;

	/* the tables: every byte that folds to the key byte; the scalar
	 * filter's exact (the nibble tables pass more, the more so as a
	 * bucket's keys differ: teddy_group.h) */
	for (j = 0; j < TD_MAXKEY; j++)
		for (x = 0; x < 256; x++)
			t->tab[j][x] = j < t->keyw ? 0 : 0xFFFF;
	for (b = 0; b < t->nbuckets; b++)
		for (i = t->bucket[b]; i < t->bucket[b + 1]; i++)
			for (j = 0; j < t->keyw; j++)
				for (x = 0; x < 256; x++)
					if (t->fold[x] ==
					    t->bytes[t->pat[i].off + t->koff +
						     j]) {
						t->lo[b / 8][j][x & 15] |=
							(u8)(1u << (b % 8));
						t->hi[b / 8][j][x >> 4] |=
							(u8)(1u << (b % 8));
						t->tab7[b / 8][j][x & 0x7F] |=
							(u8)(1u << (b % 8));
						t->tab[j][x] |=
							(uint16_t)(1u << b);
					}
	t->level = level;
	t->scan = td_scans[t->level][t->nbuckets > 8];
	if (level >= TD_AVX512)
		td_rare_fill(t, pats, lens);
	if (quick) {
		uintptr_t at = (uintptr_t)(t->pattern0 + lens[0]);

		t->quick = (struct td_quick *)((at + 63) & ~(uintptr_t)63);
		td_quick_fill(t);
	}
	return conf;
}

#define TD_INIT(suffix, lvl)                                                   \
	static struct ts_config *td_init_set_##suffix(                         \
		const void *const *patterns, const unsigned int *lens,         \
		unsigned int count, gfp_t gfp_mask, int flags)                 \
	{                                                                      \
		return td_init_level(patterns, lens, count, gfp_mask, flags,   \
				     lvl);                                     \
	}                                                                      \
	static struct ts_config *td_init_##suffix(const void *pattern,         \
						  unsigned int len,            \
						  gfp_t gfp_mask, int flags)   \
	{                                                                      \
		return td_init_level(&pattern, &len, 1, gfp_mask, flags, lvl); \
	}
TD_INIT(best, TD_VBMI)
TD_INIT(vbmi, TD_VBMI)
TD_INIT(avx512, TD_AVX512)
TD_INIT(avx2, TD_AVX2)
TD_INIT(ssse3, TD_SSSE3)
TD_INIT(scalar, TD_SCALAR)

static void *td_get_pattern(struct ts_config *conf)
{
	return ((struct teddy *)ts_config_priv(conf))->pattern0;
}

static unsigned int td_get_pattern_len(struct ts_config *conf)
{
	return ((struct teddy *)ts_config_priv(conf))->len0;
}

/*
 * For streams: the longest suffix of @tail that is a proper prefix of a
 * pattern, as only there can a match still to come begin.  Past a budget
 * of comparisons (periodic patterns on periodic data) the whole tail is
 * kept, which only makes a match wait longer, never wrong.
 */
static unsigned int td_keep(struct ts_config *conf, const u8 *tail,
			    unsigned int len)
{
	const struct teddy *t = ts_config_priv(conf);
	unsigned int budget = 8 * len + 256;

	for (unsigned int n = len; n; n--) {
		const u8 *s = tail + len - n;
		u8 c = t->fold[s[0]];

		for (unsigned int i = t->by_first[c]; i < t->by_first[c + 1];
		     i++) {
			const struct td_pat *p = &t->pat[t->by_byte[i]];
			const u8 *q = t->bytes + p->off;
			unsigned int j = 1;

			if (p->len <= n)
				continue;
			while (j < n && t->fold[s[j]] == q[j])
				j++;
			if (j == n)
				return n;
			if (budget < j)
				return len;
			budget -= j;
		}
	}
	return 0;
}

#if TD_X86
/* The bytes under @in of @v that are one of the set's @n rare bytes. */
static TD_INLINE TD_TARGET_AVX512 __mmask64 td_rare_in(__m512i v, __mmask64 in,
						       const __m512i *c,
						       const __m512i *o,
						       const unsigned int n,
						       const bool icase)
{
	__mmask64 m = 0;

	for (unsigned int i = 0; i < n; i++)
		m |= _mm512_mask_cmpeq_epi8_mask(
			in, icase ? _mm512_or_si512(v, o[i]) : v, c[i]);
	return m;
}

/*
 * A prefilter by the patterns' rare bytes (t->rare_n of them, @n), for
 * tds_rare_skip(): the first byte from s[from] that is one of them, less
 * t->rare_back, or @to where none is among the rare bytes of the starts
 * before @to.  No start before that can match: each of its patterns'
 * rare bytes lies before the byte found.  Where the set's rare bytes are
 * rare in the data, that is one or two compares per 64 bytes, loaded
 * aligned, one branch per 128: a fraction of what the bucket filter
 * costs (docs/performance.md, stop 38).  The bytes read, up to
 * to - 1 + rare_back, are in hand: each start before @to has its longest
 * window there.
 */
static TD_INLINE TD_TARGET_AVX512 size_t td_first_rare_n(const struct teddy *t,
							 const u8 *s,
							 size_t from, size_t to,
							 const unsigned int n,
							 const bool icase)
{
	const ptrdiff_t lo = (ptrdiff_t)from,
			hi = (ptrdiff_t)(to - 1 + t->rare_back) + 1;
	__m512i c[TD_RARE_MAX], o[TD_RARE_MAX];
	ptrdiff_t b = lo - (ptrdiff_t)(((uintptr_t)s + from) & 63), at;
	__mmask64 m, m2;

	for (unsigned int i = 0; i < n; i++) {
		c[i] = _mm512_set1_epi8((char)t->rare_c[i]);
		o[i] = _mm512_set1_epi8((char)t->rare_or[i]);
	}
	for (;; b += 128) {
		/* s + b, where b may be below @from: loads there are masked */
		const u8 *a = (const u8 *)((uintptr_t)s + (uintptr_t)b);

		if (__builtin_expect(b >= lo && b + 128 <= hi, 1)) {
			m = td_rare_in(_mm512_load_si512(a), ~0ull, c, o, n,
				       icase);
			m2 = td_rare_in(_mm512_load_si512(a + 64), ~0ull, c, o,
					n, icase);
		} else {
			__mmask64 in = ts_lanes_in(b, lo, hi),
				  in2 = ts_lanes_in(b + 64, lo, hi);

			m = td_rare_in(_mm512_maskz_loadu_epi8(in, a), in, c, o,
				       n, icase);
			m2 = td_rare_in(_mm512_maskz_loadu_epi8(in2, a + 64),
					in2, c, o, n, icase);
		}
		if (__builtin_expect(m | m2, 0)) {
			at = m ? b + __builtin_ctzll(m) :
				 b + 64 + __builtin_ctzll(m2);
			at -= (ptrdiff_t)t->rare_back;
			return at > lo ? (size_t)at : from;
		}
		if (b + 128 >= hi)
			return to;
	}
}

TD_TARGET_AVX512 static size_t td_first_rare(const struct teddy *t, const u8 *s,
					     size_t from, size_t to)
{
#define TD_RARE_CASE(k)                                                      \
	case k:                                                              \
		return t->icase ? td_first_rare_n(t, s, from, to, k, true) : \
				  td_first_rare_n(t, s, from, to, k, false)
	switch (t->rare_n) {
		TD_RARE_CASE(1);
		TD_RARE_CASE(2);
		TD_RARE_CASE(3);
	default:
		TD_RARE_CASE(4);
	}
#undef TD_RARE_CASE
}
#endif

/* ---- the native stream engine ---------------------------------------------
 *
 * Through find, a write costs a search's setup, a provider, the window's
 * bookkeeping and a keep.  This engine scans each write where it lies, with
 * the same scan as find, and carries across writes only the bytes that may
 * still begin a match (at most longest - 1, as td_keep says) and the last
 * match.  A write of at least longest - 1 bytes goes in three regions, in
 * match order: the starts in the carried bytes (their windows completed by
 * the write's first bytes, copied behind them), the starts whose windows
 * lie in the write, then its last longest - 1 starts, whose occurrences
 * are final only before what td_keep keeps.  A shorter write is appended
 * to the carried bytes and searched there as one region.
 *
 * Sets of up to 8 patterns of up to 32 bytes (t->quick) have a faster way
 * for the writes in which no match ends: each pattern's shift-and
 * automaton in a lane of a vector, stepped over a write of up to 16 bytes
 * at once (tds_quick()), over longer writes around the scan
 * (tds_long_write()); the carried bytes are copied to a small ring and
 * only put back into buf when the long way needs them (tds_unlazy()).
 * Such a write costs some 4 ns, where the long way's copies and phases
 * cost 20 to 30.  With VBMI and 8 buckets, a write of 17 bytes to 4 KiB
 * after such writes needs no automata at all (tds_filter_write()): the
 * filter over the carried starts and the write's, the write's last bytes
 * kept as one vector; only the last shortest - 1 starts stay open.
 *
 * Where the patterns' rarest bytes are at most TD_RARE_MAX distinct ones
 * (AVX-512 BW), a write's bulk is first searched for them alone
 * (tds_rare_skip()): the starts before the first, often all of them, need
 * no bucket filter.
 */

/* starts per call of the scan, so that positions fit its 32-bit offsets */
#define TDS_CHUNK (1u << 30)
/* Matches found per scan of a write's bulk: each next() then costs a
 * look at the next one, not a scan's setup. */
#define TDS_HITS 16u

enum tds_phase { TDS_IDLE, TDS_HEAD, TDS_BULK, TDS_TAIL, TDS_SHORT, TDS_END };

struct tds {
	uint64_t hbase;		       /* stream offset of buf[0] */
	uint64_t resume;	       /* no start before this is searched */
	uint64_t kstart;	       /* occurrences to come start from here */
	uint64_t prev_start, prev_end; /* the last match, with TS_OVERLAP */
	unsigned int prev_id;
	bool have_prev;
	unsigned char phase;
	/* the last collecting scan kept two matches or more: a filtered
	 * write's first candidate goes to that scan (tds_next_filter_cand_*();
	 * in the padding here, as a byte before the ring moves its vectors
	 * across more cache lines) */
	bool dense;
	size_t hlen; /* carried bytes in buf */
	size_t blen; /* with the write's bytes appended */
	/* With t->quick: the automata's states complemented (as tds_step()
	 * takes them), when @dvalid.  While @lazy the carried bytes are not
	 * in buf but the last ones of @ring, ending at stream offset @qend:
	 * stream byte o at ring[o % 64] and ring[o % 64 + 64] (tds_ring()),
	 * with a write's slack past them. */
	alignas(32) uint32_t nd[TD_QUICK_PATTERNS];
	uint64_t qend;
	bool dvalid, lazy;
	u8 ring[128 + TD_QUICK_WRITE];
	/* After tds_filter_write() (lazy, !dvalid): the stream's last 64
	 * bytes, the carried ones the last shortest - 1 (a whole aligned
	 * vector stored and loaded, which the store forwards to the next
	 * write's load, where the ring's masked stores would make it wait) */
	alignas(64) u8 tail[64];
	/* In TDS_BULK: the starts with an occurrence that one scan found
	 * ahead of their turn, hits[hit_next, hit_count) relative to stream
	 * offset hit_base; the write's starts before @hit_done are settled
	 * by them. */
	struct td_hit hits[TDS_HITS];
	unsigned int hit_next, hit_count;
	uint64_t hit_base, hit_done;
	/* tds_rare_skip() calls to go without td_first_rare() */
	unsigned int rare_rest;
	u8 buf[]; /* longest - 1 carried, then tds_room() */
};

/* A write of up to this many bytes is appended to the carried bytes and
 * searched there in one pass: two scans and their setup would cost more
 * than the copy. */
#define TDS_SHORT_WRITE 256u

/* room in buf after the carried bytes */
static size_t tds_room(const struct teddy *t)
{
	return t->longest - 1 > TDS_SHORT_WRITE ? t->longest - 1 :
						  TDS_SHORT_WRITE;
}

static size_t tds_size(struct ts_config *conf)
{
	const struct teddy *t = ts_config_priv(conf);

	return sizeof(struct tds) + (t->longest - 1) + tds_room(t);
}

static void tds_reset(struct ts_config *conf, void *state)
{
	struct tds *st = state;

	(void)conf;
	memset(st, 0, sizeof(*st));
}

/* Set up @ctx for a search of region @r (r[0] at @rbase) from @from: the
 * last match is in it if it started there (TS_OVERLAP). */
static void tds_ctx(const struct tds *st, struct td_ctx *ctx, uint64_t rbase,
		    size_t from)
{
	ctx->best.have = false;
	ctx->have_prev = st->have_prev && st->prev_start == rbase + from;
	ctx->prev_start = 0;
	if (ctx->have_prev) {
		ctx->prev_end = (unsigned int)(st->prev_end - st->prev_start);
		ctx->prev_id = st->prev_id;
	}
}

/* td_first_rare() stopping this near @from says that the set's rare
 * bytes are common in the stream's data: the next TDS_RARE_REST calls of
 * tds_rare_skip() go without it (which would cost a write of 1500 bytes
 * some 4 ns and skip nothing). */
#define TDS_RARE_NEAR 256u
#define TDS_RARE_REST 16u

/* The first start from @from to @to (exclusive) of @s, whose windows are
 * in hand, at which a match may begin by the set's rare bytes (@from
 * where they are not asked), else @to. */
static size_t tds_rare_skip(const struct teddy *t, struct tds *st, const u8 *s,
			    size_t from, size_t to)
{
#if TD_X86
	size_t at;

	if (!t->rare_n)
		return from;
	if (st->rare_rest) {
		st->rare_rest--;
		return from;
	}
	at = td_first_rare(t, s, from, to);
	if (at < to && at - from < TDS_RARE_NEAR)
		st->rare_rest = TDS_RARE_REST;
	return at;
#else
	(void)t, (void)st, (void)s, (void)to;
	return from;
#endif
}

/*
 * The first start from @from to @to (exclusive) of region @r (@n bytes,
 * r[0] at stream offset @rbase) with an occurrence, with what the region
 * holds: true and *@at, with ctx->best relative to it.
 */
static bool tds_find(const struct teddy *t, const struct tds *st,
		     struct td_ctx *ctx, const u8 *r, uint64_t rbase,
		     size_t from, size_t to, size_t n, uint64_t *at)
{
	while (from < to) {
		const u8 *s = r + from;
		size_t cnt = to - from, avail = n - from, full;
		bool found;

		if (cnt > TDS_CHUNK)
			cnt = TDS_CHUNK;
		tds_ctx(st, ctx, rbase, from);
		/* the starts whose longest window is in the region */
		full = avail >= t->longest ? avail - t->longest + 1 : 0;
		if (full > cnt)
			full = cnt;
		found = full && t->scan(t, s, 0, full - 1, 0, ctx);
		if (!found && full < cnt)
			found = td_scan_carry(t, s, full, cnt, avail, 0, ctx);
		if (found) {
			*at = rbase + from;
			return true;
		}
		from += cnt;
	}
	return false;
}

/* Up to TDS_HITS of the starts [from, last] of @s (stream offset @sbase
 * of s[0], their windows in hand) with an occurrence, into st->hits;
 * their number. */
static unsigned int tds_collect(const struct teddy *t, struct tds *st,
				bool overlap, const u8 *s, uint64_t sbase,
				size_t from, size_t last)
{
	struct td_ctx ctx = { .overlap = overlap,
			      .hits = st->hits,
			      .maxhits = TDS_HITS };

	if (t->scan(t, s, from, last, 0, &ctx))
		last = st->hits[ctx.nhits - 1].q; /* full */
	st->hit_base = sbase;
	st->hit_next = 0;
	st->hit_count = ctx.nhits;
	st->hit_done = sbase + last + 1;
	return ctx.nhits;
}

/*
 * tds_find() for the bulk of a write (@r, @n bytes at stream offset
 * @rbase, starts to @to with their windows in hand), through st->hits:
 * a scan keeps up to TDS_HITS starts with an occurrence, and the next
 * calls take them from there.  A start met again after a match there
 * (more occurrences to come, with TS_OVERLAP) is verified anew.
 */
static bool tds_bulk(const struct teddy *t, struct tds *st, struct td_ctx *ctx,
		     const u8 *r, uint64_t rbase, size_t from, size_t to,
		     size_t n, uint64_t *at)
{
	for (;;) {
		size_t cnt, q;

		while (st->hit_next < st->hit_count) {
			const struct td_hit *h = &st->hits[st->hit_next];

			if (st->hit_base + h->q < st->resume) {
				st->hit_next++;
				continue;
			}
			*at = st->hit_base + h->q;
			if (h->only) {
				ctx->best = (struct ts_set_best){ true, 0,
								  h->end - h->q,
								  h->id };
				ctx->offered = 1;
				return true;
			}
			q = (size_t)(*at - rbase);
			tds_ctx(st, ctx, *at, 0);
			td_verify(t, r + q, 0, n - q, h->bits, 0, ctx);
			if (ctx->best.have)
				return true;
			st->hit_next++;
		}
		if (st->hit_done > rbase + from)
			from = (size_t)(st->hit_done - rbase);
		if (from < to)
			from = tds_rare_skip(t, st, r, from, to);
		if (from >= to)
			return false;
		cnt = to - from < TDS_CHUNK ? to - from : TDS_CHUNK;
		tds_collect(t, st, ctx->overlap, r + from, rbase + from, 0,
			    cnt - 1);
	}
}

/* Up to this many starts, td_prefilter() asks the scalar filter */
#define TD_PREFILTER_SCALAR 8u

/* The first start from @from to @to (exclusive) of @s, whose windows are
 * in hand, that the filter lets through, else @to (below AVX-512, @from
 * where there are more than TD_PREFILTER_SCALAR).  A region without a
 * candidate then costs no scan's setup. */
static size_t td_prefilter(const struct teddy *t, const u8 *s, size_t from,
			   size_t to)
{
	/* a few starts (the carried ones, mostly) cost less one by one
	 * than a vector's tables and masks */
	if (to - from <= TD_PREFILTER_SCALAR) {
		for (; from < to; from++)
			if (td_filter(t, s, from, t->keyw))
				break;
		return from;
	}
#if TD_X86
	if (t->level == TD_VBMI)
		from = td_first_vbmi(t, s, from, to - 1);
	else if (t->level == TD_AVX512)
		from = td_first_avx512(t, s, from, to - 1);
#endif
	return from < to ? from : to;
}

/* Whether a pattern longer than the @avail bytes from s[q] begins with
 * them: then a match may still begin at q. */
static bool td_pending(const struct teddy *t, const u8 *s, size_t q,
		       size_t avail)
{
	unsigned int c = t->fold[s[q]], i;
	size_t j;

	for (i = t->by_first[c]; i < t->by_first[c + 1]; i++) {
		const struct td_pat *p = &t->pat[t->by_byte[i]];
		const u8 *b = t->bytes + p->off;

		if (p->len <= avail)
			continue;
		/* a few bytes, mostly unequal at the second: no memcmp */
		for (j = 1; j < avail && t->fold[s[q + j]] == b[j]; j++)
			;
		if (j == avail)
			return true;
	}
	return false;
}

/* The scalar filter at start @q when only the @left bytes from s[q] are
 * in hand (a key byte not yet in hand lets every bucket through). */
static unsigned int td_filter_partial(const struct teddy *t, const u8 *s,
				      size_t q, size_t left)
{
	unsigned int bits = 0xFFFF, j;

	for (j = 0; j < t->keyw && t->koff + j < left; j++)
		bits &= t->tab[j][s[q + t->koff + j]];
	return bits;
}

/* The candidates among the up to 64 starts from s[0], @left bytes in
 * hand.  Their buckets are td_filter_partial()'s: the vector's bytes,
 * stored for them, would be read back before the store could forward. */
static uint64_t td_partial(const struct teddy *t, const u8 *s, size_t left)
{
	uint64_t m = 0;
	unsigned int k;

#if TD_X86
	/* a few starts (short writes) cost less one by one */
	if (t->level >= TD_AVX512 && left > 3)
		return t->level == TD_VBMI ? td_partial64_vbmi(t, s, left) :
					     td_partial64_avx512(t, s, left);
#endif
	for (k = 0; k < 64 && k < left; k++)
		if (td_filter_partial(t, s, k, left - k))
			m |= 1ull << k;
	return m;
}

/*
 * The starts [0, @to) of @s, @n bytes in hand (s[0] at @sbase), some of
 * whose windows run past the bytes in hand: true with ctx->best if the
 * first start that has an occurrence comes before any start where a
 * match may still begin (or at it, with TS_OVERLAP, as its occurrences
 * in hand end before any to come); else false, *@pend being that start
 * (or @to).  This is td_keep and the scan of the last starts in one pass,
 * over the filter's candidates only.
 */
static bool td_scan_partial(const struct teddy *t, const u8 *s, size_t to,
			    size_t n, uint64_t sbase, struct td_ctx *ctx,
			    size_t *pend)
{
	size_t base;

	for (base = 0; base < to; base += 64) {
		uint64_t m = td_partial(t, s + base, n - base);

		if (to - base < 64)
			m &= (1ull << (to - base)) - 1;
		while (m) {
			size_t q = base + (size_t)__builtin_ctzll(m);

			m &= m - 1;
			/* none of the patterns fits in fewer bytes */
			if (n - q >= t->shortest)
				td_verify(t, s, q, n - q,
					  td_filter_partial(t, s, q, n - q),
					  sbase, ctx);
			if (q + t->longest > n && td_pending(t, s, q, n - q)) {
				*pend = q;
				ctx->offered = UINT_MAX; /* more may come */
				return ctx->best.have && ctx->overlap;
			}
			if (ctx->best.have)
				return true;
		}
	}
	*pend = to;
	return false;
}

/* Carry the bytes of @r (from stream offset @rbase, @n bytes) from where
 * the next search begins. */
static void tds_carry(struct tds *st, const u8 *r, uint64_t rbase, size_t n)
{
	uint64_t from = st->resume > st->kstart ? st->resume : st->kstart;

	if (st->have_prev && st->prev_start != from)
		st->have_prev = false;
	st->resume = from;
	st->hlen = (size_t)(rbase + n - from);
	memmove(st->buf, r + (from - rbase), st->hlen);
	st->hbase = from;
	st->phase = TDS_IDLE;
	st->dvalid = false;
}

#if TD_X86
/* st->nd from the carried bytes (the starts before them begin nothing):
 * false if an occurrence lies in them, as one may wait there on a longer
 * pattern to be decided, which only the long way settles. */
TD_TARGET_AVX2 static bool tds_quick_state(const struct teddy *t,
					   struct tds *st)
{
	const struct td_quick *q = t->quick;
	const __m256i live = _mm256_loadu_si256((const void *)q->live);
	const __m256i one = _mm256_set1_epi32(1);
	__m256i d = _mm256_setzero_si256(), seen = d;

	for (size_t i = 0; i < st->hlen; i++) {
		d = _mm256_andnot_si256(
			_mm256_loadu_si256((const void *)q->kill[st->buf[i]]),
			_mm256_or_si256(_mm256_slli_epi32(d, 1), one));
		seen = _mm256_or_si256(seen, d);
		d = _mm256_and_si256(d, live);
	}
	if (!_mm256_testz_si256(seen, _mm256_loadu_si256((const void *)q->hit)))
		return false;
	_mm256_storeu_si256((void *)st->nd,
			    _mm256_andnot_si256(d, _mm256_set1_epi32(-1)));
	st->dvalid = true;
	return true;
}

/* The first and the last @w bytes of the @n at @src (w <= n <= 2w) to
 * @d1 and to @d2, from one load of each: two copies that may overlap. */
static TD_INLINE void tds_copy_ends(u8 *d1, u8 *d2, const u8 *src, size_t n,
				    size_t w)
{
	u8 head[8], tail[8];

	memcpy(head, src, w);
	memcpy(tail, src + n - w, w);
	memcpy(d1, head, w);
	memcpy(d1 + n - w, tail, w);
	memcpy(d2, head, w);
	memcpy(d2 + n - w, tail, w);
}

/* @n bytes, 1 to 16, from @src to @d1 and to @d2, by copies of fixed
 * sizes. */
static TD_INLINE void tds_copy16x2(u8 *d1, u8 *d2, const u8 *src, size_t n)
{
	if (n >= 8)
		tds_copy_ends(d1, d2, src, n, 8);
	else if (n >= 4)
		tds_copy_ends(d1, d2, src, n, 4);
	else if (n >= 2)
		tds_copy_ends(d1, d2, src, n, 2);
	else
		*d1 = *d2 = *src;
}

/*
 * The automata of all the patterns over the @n bytes (0 to 16, n + the
 * longest <= 33) that end at @e, from their complemented states @nd, the
 * bytes taken at once rather than one after the other.  As in
 * literal_stream.c's lit_quick(), after n bytes
 *
 *   ~d_n = (~d << n) | OR_j kill[s[j]] << (n - 1 - j)
 *
 * lane by lane; a bit of q->hit missing from ~d_n says that a match ended.
 */
TD_TARGET_AVX2 static TD_INLINE __m256i tds_step(const struct td_quick *q,
						 __m256i nd, const u8 *e,
						 size_t n)
{
	__m256i a = _mm256_sll_epi32(nd, _mm_cvtsi64_si128((long long)n));
	__m256i b = _mm256_setzero_si256();

	/* unrolled, shifts by constants, two chains of ORs for the ports */
	switch (n) {
#define TDS_TERM(i, acc)                                                      \
	case i:                                                               \
		acc = _mm256_or_si256(                                        \
			acc, _mm256_slli_epi32(                               \
				     _mm256_loadu_si256(                      \
					     (const void *)q->kill[e[-(i)]]), \
				     (i)-1));                                 \
		__attribute__((fallthrough));
		TDS_TERM(16, b)
		TDS_TERM(15, a)
		TDS_TERM(14, b)
		TDS_TERM(13, a)
		TDS_TERM(12, b)
		TDS_TERM(11, a)
		TDS_TERM(10, b)
		TDS_TERM(9, a)
		TDS_TERM(8, b)
		TDS_TERM(7, a)
		TDS_TERM(6, b)
		TDS_TERM(5, a)
		TDS_TERM(4, b)
		TDS_TERM(3, a)
		TDS_TERM(2, b)
		TDS_TERM(1, a)
#undef TDS_TERM
	default:
		break;
	}
	return _mm256_or_si256(a, b);
}

/* Whether @nd (tds_step()) holds a match's end. */
TD_TARGET_AVX2 static TD_INLINE bool tds_hit(const struct td_quick *q,
					     __m256i nd)
{
	return !_mm256_testc_si256(nd,
				   _mm256_loadu_si256((const void *)q->hit));
}

/* The @n bytes (1 to 16) at stream offset @at into the ring. */
static TD_INLINE void tds_ring(struct tds *st, const u8 *s, uint64_t at,
			       size_t n)
{
	size_t r = (size_t)(at % 64);

	tds_copy16x2(st->ring + r, st->ring + r + 64, s, n);
}

/* A write of 1 to q->max bytes in which no match ends, in a few cycles:
 * the automata (st->dvalid) step over it and its bytes go to the ring;
 * false (nothing changed) where a match ends. */
TD_TARGET_AVX2 static TD_INLINE bool tds_quick(const struct teddy *t,
					       struct tds *st,
					       const struct ts_stream_input *in)
{
	const struct td_quick *q = t->quick;
	const size_t n = in->len;
	__m256i nd;

	nd = tds_step(q, _mm256_loadu_si256((const void *)st->nd),
		      (const u8 *)in->data + n, n);
	if (tds_hit(q, nd))
		return false;
	_mm256_storeu_si256((void *)st->nd, nd);
	if (!st->lazy) {
		/* the carried bytes into the ring first */
		for (size_t i = 0; i < st->hlen; i++) {
			size_t r = (size_t)((st->hbase + i) % 64);

			st->ring[r] = st->ring[r + 64] = st->buf[i];
		}
		st->lazy = true;
	}
	tds_ring(st, in->data, in->offset, n);
	st->qend = in->offset + n;
	return true;
}

/* The last T = longest - 1 bytes of write @in, whose other starts are
 * settled: true if no match ends in them, the state then the automata
 * and those bytes, in the ring. */
TD_TARGET_AVX2 static TD_INLINE bool
tds_quick_tail(const struct teddy *t, struct tds *st,
	       const struct ts_stream_input *in)
{
	const struct td_quick *q = t->quick;
	const size_t n = in->len, T = t->longest - 1;
	__m256i nd =
		tds_step(q, _mm256_set1_epi32(-1), (const u8 *)in->data + n, T);

	if (tds_hit(q, nd))
		return false;
	_mm256_storeu_si256((void *)st->nd, nd);
	if (T)
		tds_ring(st, (const u8 *)in->data + n - T, in->offset + n - T,
			 T);
	st->qend = in->offset + n;
	st->lazy = st->dvalid = true;
	return true;
}

/* A write's bulk with all its matches returned: true if its last starts
 * hold none, the state then as after a write without a match. */
TD_TARGET_AVX2 static bool tds_bulk_done(const struct teddy *t, struct tds *st,
					 const struct ts_stream_input *in)
{
	const size_t cap = t->longest - 1;
	const uint64_t to = in->offset + in->len - cap;

	if (st->phase != TDS_BULK || !t->quick || cap > t->quick->max ||
	    st->hit_next < st->hit_count || st->hit_done < to ||
	    st->resume > to || !tds_quick_tail(t, st, in))
		return false;
	st->phase = TDS_IDLE;
	return true;
}

/* The long way to go on from start @from of write @in, the starts before
 * it settled: nothing carried, the automata and the ring dropped. */
static void tds_from(struct tds *st, const struct ts_stream_input *in,
		     size_t from)
{
	st->hlen = 0;
	st->hbase = st->kstart = in->offset;
	st->resume = in->offset + from;
	st->have_prev = false;
	st->lazy = false;
	st->dvalid = false;
}

/*
 * A longer write (patterns of up to 17 bytes, T = longest - 1): the
 * starts in the carried bytes are settled by its first T bytes
 * (tds_step()), those whose windows lie in it by the scan, its last T
 * by tds_step() again.  True when no match ends in it: the state is
 * then the automata and its last T bytes, in the ring.  Else false, with
 * the carried bytes dropped and the long way to go on from the first
 * start that may have an occurrence: in TDS_BULK, if the scan found
 * matches, with them in st->hits.
 */
TD_TARGET_AVX2 static __attribute__((noinline)) bool
tds_long_write(const struct ts_config *conf, const struct teddy *t,
	       struct tds *st, const struct ts_stream_input *in)
{
	const struct td_quick *q = t->quick;
	const size_t n = in->len, T = t->longest - 1;
	const u8 *s = in->data;
	const __m256i none = _mm256_set1_epi32(-1); /* ~0: no automaton on */
	__m256i nd;
	size_t from;

	nd = _mm256_loadu_si256((const void *)st->nd); /* st->dvalid */
	if (!_mm256_testc_si256(nd, none) &&
	    tds_hit(q, tds_step(q, nd, s + T, T)))
		return false;
	from = tds_rare_skip(t, st, s, 0, n - t->longest + 1);
	if (from <= n - t->longest)
		from = td_prefilter(t, s, from, n - t->longest + 1);
	if (from <= n - t->longest &&
	    tds_collect(t, st, conf->flags & TS_OVERLAP, s, in->offset, from,
			n - t->longest)) {
		/* the bulk's matches, found */
		from = st->hits[0].q;
		st->phase = TDS_BULK;
	} else {
		if (tds_quick_tail(t, st, in))
			return true;
		from = n - T;
	}
	tds_from(st, in, from);
	return false;
}

/* Writes of up to this many bytes go through tds_filter_write(); longer
 * ones keep the automata and the collecting scan, which find their
 * matches in one pass.  At 1500 bytes the filter costs the bench's sets
 * of 2 and 8 patterns 5-9% less (stop 42), at 64 KiB the same. */
#define TDS_FILTER_MAX 4096u
/* and from this many on, tds_rare_skip() first */
#define TDS_FILTER_RARE 512u

/* 0 to 127: byte permutes' index vectors, loaded from lane k on */
static const u8 tds_lanes[128] = {
	0,   1,	  2,   3,   4,	 5,   6,   7,	8,   9,	  10,  11,  12,
	13,  14,  15,  16,  17,	 18,  19,  20,	21,  22,  23,  24,  25,
	26,  27,  28,  29,  30,	 31,  32,  33,	34,  35,  36,  37,  38,
	39,  40,  41,  42,  43,	 44,  45,  46,	47,  48,  49,  50,  51,
	52,  53,  54,  55,  56,	 57,  58,  59,	60,  61,  62,  63,  64,
	65,  66,  67,  68,  69,	 70,  71,  72,	73,  74,  75,  76,  77,
	78,  79,  80,  81,  82,	 83,  84,  85,	86,  87,  88,  89,  90,
	91,  92,  93,  94,  95,	 96,  97,  98,	99,  100, 101, 102, 103,
	104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116,
	117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
};

/* The lowest @n bits of a mask (all from 64 on). */
static TD_INLINE uint64_t tds_low(size_t n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* The first of the starts of @s (@n bytes) in @cand (bit i for start
 * @base + i; modulo: @base may be "negative", the bits below it clear)
 * where a pattern occurs, or may with bytes still to come; else
 * SIZE_MAX. */
static TD_INLINE size_t tds_may_occur(const struct teddy *t, const u8 *s,
				      size_t base, uint64_t cand, size_t n)
{
	while (cand) {
		size_t q = base + (size_t)__builtin_ctzll(cand);
		unsigned int bits = td_filter(t, s, q, t->keyw);
		struct td_ctx ctx = { .overlap = false };

		cand &= cand - 1;
		if (!bits)
			continue; /* VBMI's, from a byte of 0x80 up */
		/* a longer pattern may begin with the bytes in hand */
		if (q + t->longest > n && td_pending(t, s, q, n - q))
			return q;
		if (t->lone && n - q >= 16) {
			if (td_verify_lone(t, s, q, bits, 0, &ctx))
				return q;
			continue;
		}
		td_verify(t, s, q, n - q, bits, 0, &ctx);
		if (ctx.best.have)
			return q;
	}
	return SIZE_MAX;
}

/* The buckets of the 64 starts from s[p] by key width @keyw (the tables
 * in @tab), their key bytes loaded with @k: a mask per key byte's load. */
#define TDS_LOOK(s, p, keyw, tab, k)                                         \
	({                                                                   \
		__m512i m_ = _mm512_set1_epi8(-1);                           \
                                                                             \
		_Pragma("GCC unroll 4") for (unsigned int j_ = 0; j_ < keyw; \
					     j_++)                           \
			m_ = _mm512_and_si512(                               \
				m_, td_look7(_mm512_maskz_loadu_epi8(        \
						     k(j_), s + p + j_),     \
					     tab[2 * j_], tab[2 * j_ + 1])); \
		m_;                                                          \
	})

/* What tds_filter_write() returns where it does not give the start of
 * the write from which a pattern may occur */
#define TDS_FW_DONE SIZE_MAX	      /* none does: the write is taken */
#define TDS_FW_CARRIED (SIZE_MAX - 1) /* a carried start passed: nothing done */

TD_TARGET_VBMI static TD_INLINE void
tds_tables(const struct teddy *t, __m512i *tab, const unsigned int keyw)
{
	_Pragma("GCC unroll 4") for (unsigned int j = 0; j < keyw; j++)
		TD_TABS7(tab[2 * j], tab[2 * j + 1], 0, j);
}

/* The stream's last 64 bytes before the write @in: from the ring after
 * the automata (the bytes before the carried ones there are older, and
 * only ever let more through the filter), else from st->tail. */
TD_TARGET_VBMI static TD_INLINE __m512i
tds_last64(const struct tds *st, const struct ts_stream_input *in)
{
	return _mm512_loadu_si512(
		st->dvalid ?
			(const void *)(st->ring + (size_t)(in->offset % 64)) :
			(const void *)st->tail);
}

/* The starts that pass the filter (its tables in @tab, tds_tables())
 * among the h carried ones and the write's first 64 - h (bit i: start
 * i - h of the write, the carried ones below 0), to the write's
 * shortest - 1 last.  The caller loads the tables once for this and
 * tds_next_cands() (256-byte writes 0.5 ns less than a load in each). */
TD_TARGET_VBMI static TD_INLINE uint64_t
tds_head_cands(const struct teddy *t, const struct tds *st,
	       const struct ts_stream_input *in, size_t h, const __m512i *tab,
	       const unsigned int keyw)
{
	const size_t n = in->len;
	__m512i last, data, m = _mm512_set1_epi8(-1);

	last = tds_last64(st, in);
	data = _mm512_maskz_loadu_epi8(tds_low(n), in->data);
	_Pragma("GCC unroll 4") for (unsigned int j = 0; j < keyw; j++)
		m = _mm512_and_si512(
			m, td_look7(_mm512_permutex2var_epi8(
					    last,
					    _mm512_loadu_si512((
						    const void *)(tds_lanes +
								  64 - h +
								  t->koff + j)),
					    data),
				    tab[2 * j], tab[2 * j + 1]));
	return TD_NZ64(m) &
	       tds_low(h + n >= t->shortest ? h + n - t->shortest + 1 : 0);
}

/* The first vector of 64 starts of @s (@n bytes) from @p, to the
 * shortest - 1 last, with a start that passes the filter (@tab): its
 * first start q, and those starts in *@cand (bit i: start q + i); else
 * SIZE_MAX.  The key bytes loaded where they lie, in whole vectors: the
 * last one ends at the last start whose window is in hand, its lanes
 * before @p (taken already) masked, so that no load needs a mask unless
 * the write has fewer than 64 such starts.  No call in the loop, which
 * would take the tables out of the registers. */
TD_TARGET_VBMI static TD_INLINE size_t tds_next_cands(const struct teddy *t,
						      const u8 *s, size_t p,
						      size_t n, uint64_t *cand,
						      const __m512i *tab,
						      const unsigned int keyw)
{
	const u8 *ks = s + t->koff;
	size_t last, end;
	uint64_t c, taken = 0;

	if (n < t->shortest || p > n - t->shortest)
		return SIZE_MAX;
	last = n - t->shortest; /* the last start whose window is in hand */
	if (last < 63) {
#define TDS_IN(j) tds_low(n - p - t->koff - (j))
		c = TD_NZ64(TDS_LOOK(ks, p, keyw, tab, TDS_IN)) &
		    tds_low(last - p + 1);
#undef TDS_IN
		*cand = c;
		return c ? p : SIZE_MAX;
	}
	end = last - 63; /* the last vector's first start */
	for (;; p += 64) {
		if (p > end) {
			taken = tds_low(p - end);
			p = end;
		}
#define TDS_ALL(j) (~0ull)
		c = TD_NZ64(TDS_LOOK(ks, p, keyw, tab, TDS_ALL)) & ~taken;
#undef TDS_ALL
		if (c) {
			*cand = c;
			return p;
		}
		if (p == end)
			return SIZE_MAX;
	}
}

/* The end of a write that tds_filter_write() took, no pattern occurring in
 * it: the state becomes the stream's last 64 bytes in st->tail (the old
 * ones' last 64 - n, then the write), its last shortest - 1 starts open,
 * without the automata. */
TD_TARGET_VBMI static TD_INLINE void
tds_filter_done(struct tds *st, const struct ts_stream_input *in)
{
	const size_t n = in->len;
	const u8 *s = in->data;
	__m512i last;

	if (n >= 64)
		last = _mm512_loadu_si512((const void *)(s + n - 64));
	else
		last = _mm512_permutex2var_epi8(
			tds_last64(st, in),
			_mm512_loadu_si512((const void *)(tds_lanes + n)),
			_mm512_maskz_loadu_epi8(tds_low(n), s));
	_mm512_storeu_si512((void *)st->tail, last);
	st->qend = in->offset + n;
	st->dvalid = false;
}

/* The starts still open before write @in: longest - 1 after the
 * automata, as a longer pattern may have begun there, else (after
 * tds_filter_write()) shortest - 1. */
static TD_INLINE size_t tds_open_starts(const struct teddy *t,
					const struct tds *st)
{
	return st->dvalid ? t->longest - 1 : t->shortest - 1;
}

/*
 * A write while the carried bytes are in the ring (after the automata)
 * or in st->tail (after this).  Where no pattern occurs in it, the state
 * then becomes the stream's last 64 bytes in st->tail and its last
 * shortest - 1 starts (whose bytes are not all in hand) open, without the
 * automata (!dvalid).  Else nothing changes, and the first start of the
 * write where a pattern may occur is returned, if the carried ones had
 * none (tds_next_from() goes on from there).  The starts
 * filtered: the h carried ones still open (tds_open_starts()) and those
 * of the write whose shortest window is in hand; those that pass,
 * verified where their windows are in the write.  One vector takes the
 * carried starts and the write's first 64 - h, key byte j's lanes the
 * bytes from 64 - h + j on of the last 64 bytes and the write's first 64
 * (a two-source permute); the rest are read in place.  Where the automata
 * cost two steps of 16 table loads, this costs a vector.  Where @from is
 * not 0, the head and the write's starts before @from passed none (the
 * pass without the verifies, tds_next_filter_k(), found that).
 */
TD_TARGET_VBMI static TD_INLINE size_t tds_filter_write_k(
	const struct teddy *t, struct tds *st, const struct ts_stream_input *in,
	const unsigned int keyw, const bool rare, size_t from)
{
	const size_t n = in->len;
	const size_t h = tds_open_starts(t, st);
	const u8 *s = in->data;
	__m512i tab[2 * TD_MAXKEY];
	uint64_t cand = 0;
	size_t p = 64 - h, q;

	/* @rare (a longer write, a set with few rare bytes): the starts
	 * whose rare bytes are all in the write by those bytes alone
	 * (tds_rare_skip()), before the tables are loaded, which the call
	 * would spill */
	if (from)
		p = from;
	else if (rare && p + t->rare_back < n)
		p = tds_rare_skip(t, st, s, p, n - t->rare_back);
	tds_tables(t, tab, keyw);
	if (!from) {
		cand = tds_head_cands(t, st, in, h, tab, keyw);
		if (cand & tds_low(h))
			return TDS_FW_CARRIED;
		if (cand && (q = tds_may_occur(t, s, (size_t)0 - h,
					       cand >> h << h, n)) != SIZE_MAX)
			return q;
	}
	for (; (p = tds_next_cands(t, s, p, n, &cand, tab, keyw)) != SIZE_MAX;
	     p += 64)
		if ((q = tds_may_occur(t, s, p, cand, n)) != SIZE_MAX)
			return q;
	tds_filter_done(st, in);
	return TDS_FW_DONE;
}

/* The carried bytes back into buf: those from the longest prefix of a
 * pattern that the stream ends with, as tds_carry() keeps them (without
 * the automata, after tds_filter_write(), the last shortest - 1). */
static void tds_unlazy(const struct teddy *t, struct tds *st)
{
	uint64_t from;
	size_t len;

	if (st->dvalid) {
		uint32_t any = 0;

		/* bit j: a prefix of j + 1 bytes (none past a pattern's
		 * own, as no match ended) */
		for (unsigned int i = 0; i < TD_QUICK_PATTERNS; i++)
			any |= ~st->nd[i] & t->quick->live[i];
		len = any ? 32 - (size_t)__builtin_clz(any) : 0;
		memcpy(st->buf, st->ring + (size_t)(st->qend % 64) + 64 - len,
		       len);
	} else {
		len = t->shortest - 1;
		memcpy(st->buf, st->tail + 64 - len, len);
	}
	from = st->qend - len;
	if (st->have_prev && st->prev_start != from)
		st->have_prev = false;
	st->resume = st->kstart = st->hbase = from;
	st->hlen = len;
	st->lazy = false;
}
#endif

/* Return the match [@start, @end) of pattern @id, and go on after it:
 * with TS_OVERLAP, at its start again unless it was the @last there. */
static TD_INLINE void tds_report(struct tds *st, bool overlap,
				 struct ts_match *m, uint64_t start,
				 uint64_t end, unsigned int id, bool last)
{
	m->start = start;
	m->end = end;
	m->id = id;
	if (!overlap) {
		st->resume = end;
	} else if (last) {
		st->have_prev = false;
		st->resume = start + 1;
	} else {
		st->have_prev = true;
		st->prev_start = start;
		st->prev_end = end;
		st->prev_id = id;
		st->resume = start;
	}
}

static __attribute__((noinline)) int
tds_next_slow(struct ts_config *conf, void *state,
	      const struct ts_stream_input *in, struct ts_match *m)
{
	const struct teddy *t = ts_config_priv(conf);
	struct tds *st = state;
	const size_t cap = t->longest - 1;
	const bool overlap = conf->flags & TS_OVERLAP;
	struct td_ctx ctx = { .overlap = overlap };

	for (;;) {
		const u8 *r;
		uint64_t rbase, at;
		size_t lo = 0, to, n, first, pend;
		bool found;

		switch (st->phase) {
		case TDS_IDLE:
			if (in->end) {
				st->phase = TDS_END;
			} else if (in->len > tds_room(t)) {
				memcpy(st->buf + st->hlen, in->data, cap);
				st->blen = st->hlen + cap;
				st->phase = st->hlen ? TDS_HEAD : TDS_BULK;
				st->hit_next = st->hit_count = 0;
				st->hit_done = 0;
			} else {
				memcpy(st->buf + st->hlen, in->data, in->len);
				st->blen = st->hlen + in->len;
				st->phase = TDS_SHORT;
			}
			continue;
		case TDS_HEAD:
			r = st->buf, rbase = st->hbase, n = st->blen;
			to = st->hlen;
			break;
		case TDS_BULK:
			r = in->data, rbase = in->offset, n = in->len;
			to = in->len - cap;
			break;
		case TDS_TAIL:
			r = in->data, rbase = in->offset, n = in->len;
			lo = in->len - cap, to = in->len;
			break;
		case TDS_SHORT:
			r = st->buf, rbase = st->hbase, n = st->blen;
			to = st->blen;
			break;
		default: /* TDS_END */
			r = st->buf, rbase = st->hbase, n = st->hlen;
			to = st->hlen;
			break;
		}
		first = st->resume > rbase ? (size_t)(st->resume - rbase) : 0;
		if (first < lo)
			first = lo;
		pend = to;
		/* the carried starts: a few, not worth a scan's setup */
		if (st->phase == TDS_HEAD && first < to)
			first = td_prefilter(t, r, first, to);
		if (first >= to) {
			found = false;
		} else if (st->phase == TDS_TAIL || st->phase == TDS_SHORT) {
			/* windows past the bytes in hand: what is decided */
			tds_ctx(st, &ctx, rbase, first);
			found = td_scan_partial(t, r + first, to - first,
						n - first, 0, &ctx, &pend);
			pend += first;
			at = rbase + first;
		} else if (st->phase == TDS_BULK) {
			found = tds_bulk(t, st, &ctx, r, rbase, first, to, n,
					 &at);
		} else {
			found = tds_find(t, st, &ctx, r, rbase, first, to, n,
					 &at);
		}
		if (found) {
			tds_report(st, overlap, m, at + ctx.best.start,
				   at + ctx.best.end, ctx.best.id,
				   ctx.offered == 1);
			return 1;
		}
		/* nothing more decided in this region */
		switch (st->phase) {
		case TDS_HEAD:
			st->phase = TDS_BULK;
			continue;
		case TDS_BULK:
#if TD_X86
			if (tds_bulk_done(t, st, in))
				return 0;
#endif
			st->phase = TDS_TAIL;
			continue;
		case TDS_TAIL:
		case TDS_SHORT:
			st->kstart = rbase + pend;
			tds_carry(st, r, rbase, n);
			return 0;
		default:
			st->hlen = 0;
			st->phase = TDS_IDLE;
			st->dvalid = false;
			return 0;
		}
	}
}

/* The bulk's next match where a scan found it already and it is the only
 * occurrence at its start: true, at the cost of a few loads. */
static TD_INLINE bool tds_next_hit(const struct ts_config *conf, struct tds *st,
				   struct ts_match *m)
{
	const struct td_hit *h;
	uint64_t at;

	if (st->phase != TDS_BULK || st->hit_next == st->hit_count)
		return false;
	h = &st->hits[st->hit_next];
	at = st->hit_base + h->q;
	if (!h->only || at < st->resume)
		return false;
	st->hit_next++;
	tds_report(st, conf->flags & TS_OVERLAP, m, at, st->hit_base + h->end,
		   h->id, true);
	return true;
}

#if TD_X86
/* After tds_filter_write(): the long way from start @q of write @in, the
 * starts before it settled, as tds_long_write() goes on from its
 * prefilter's first candidate.  Its collecting scan's matches set
 * st->dense; where it keeps none, the write ends as after the matches of
 * a bulk (tds_bulk_done()) unless its last starts hold one. */
static __attribute__((noinline)) int
tds_next_from(struct ts_config *conf, struct tds *st,
	      const struct ts_stream_input *in, size_t q, struct ts_match *m)
{
	const struct teddy *t = ts_config_priv(conf);

	tds_from(st, in, q);
	if (q + t->longest <= in->len) {
		const unsigned int hits =
			tds_collect(t, st, conf->flags & TS_OVERLAP, in->data,
				    in->offset, q, in->len - t->longest);

		st->dense = hits >= 2;
		st->phase = TDS_BULK;
		if (hits) {
			st->resume = in->offset + st->hits[0].q;
			if (tds_next_hit(conf, st, m))
				return 1;
		} else if (tds_bulk_done(t, st, in)) {
			return 0; /* the scan's starts held none */
		} else {
			/* as it was: the filter takes writes in TDS_IDLE */
			st->phase = TDS_IDLE;
		}
	}
	return tds_next_slow(conf, st, in, m);
}

/* tds_next_quick() for what tds_quick() does not take. */
TD_TARGET_AVX2 static __attribute__((noinline)) int
tds_next_rest(struct ts_config *conf, void *state,
	      const struct ts_stream_input *in, struct ts_match *m)
{
	const struct teddy *t = ts_config_priv(conf);
	struct tds *st = state;

	if (st->lazy && !st->dvalid)
		tds_unlazy(t, st); /* tds_filter_write() declined */
	if (st->phase == TDS_IDLE && !in->end &&
	    (st->dvalid || tds_quick_state(t, st))) {
		if (in->len - 1 < t->quick->max) {
			if (tds_quick(t, st, in))
				return 0;
		} else if (t->longest - 1 <= t->quick->max &&
			   in->len <= TDS_CHUNK) {
			if (tds_long_write(conf, t, st, in))
				return 0;
			/* its scan's first match, if it kept one (else
			 * tds_next_quick() asked already) */
			if (tds_next_hit(conf, st, m))
				return 1;
		}
	}
	if (tds_bulk_done(t, st, in))
		return 0;
	if (st->lazy)
		tds_unlazy(t, st);
	return tds_next_slow(conf, state, in, m);
}

/* tds_next_quick() for a write that tds_filter_write() did not take:
 * from its start @at, or the long way. */
static __attribute__((noinline)) int
tds_next_filtered(struct ts_config *conf, struct tds *st,
		  const struct ts_stream_input *in, size_t at,
		  struct ts_match *m)
{
	if (at == TDS_FW_CARRIED)
		return tds_next_rest(conf, st, in, m);
	return tds_next_from(conf, st, in, at, m);
}

/* tds_next_filtered(), unless tds_filter_write() took the whole write
 * (TDS_FW_DONE), which needs no call. */
static TD_INLINE int tds_next_unless_done(struct ts_config *conf,
					  struct tds *st,
					  const struct ts_stream_input *in,
					  size_t at, struct ts_match *m)
{
	if (at == TDS_FW_DONE)
		return 0;
	return tds_next_filtered(conf, st, in, at, m);
}

/*
 * tds_next() for a write that tds_filter_write() may take, for each key
 * width (t->quick->filter).  Most writes end in a first pass that
 * verifies nothing: the head (the carried starts and the write's first
 * 64 - h), then the write's other vectors in place.  A start of the write
 * that passes sends it, from the vector where it lies, to the pass that
 * verifies (tds_filter_write()), apart (whose spills a write without a
 * candidate then does not pay); a carried one goes to the long way.
 * Where the stream's last collecting scan kept two matches or more
 * (st->dense), tds_next_filter_cand_*() sends it instead straight to
 * that scan (tds_next_from()), which finds a write's matches in one pass
 * rather than after the pass that verifies and its setup (set 8 present,
 * 1500-byte writes in cache: 0.90-0.93 times the time); where few
 * candidates are matches the scan's setup costs more (256-byte writes:
 * 1.15-1.23 times the time).  It is a function of its own, as the check
 * in either of the others cost them registers (an absent set's writes
 * 1.03-1.06 times the time).  A longer write of a set with few rare bytes
 * goes to the pass that verifies at once, which searches for those bytes
 * first.  A write of up to 64 bytes after one the filter took has the
 * head alone (t->quick->filter64), in a function without the other
 * vectors' loop, whose registers cost the others a frame (64-byte writes
 * 0.5 ns).
 */
/* The head of a filtered write, in the two functions below (their t, h,
 * tab and cand): a carried start that passes goes the long way, one of
 * the write's to @cand_at(k, 0). */
#define TDS_FILTER_HEAD(k, cand_at)                               \
	do {                                                      \
		tds_tables(t, tab, k);                            \
		cand = tds_head_cands(t, state, in, h, tab, k);   \
		if (cand & tds_low(h))                            \
			return tds_next_rest(conf, state, in, m); \
		if (cand)                                         \
			return cand_at(k, 0);                     \
	} while (0)
#define TDS_CAND_AT(k, p) tds_next_filter_cand_##k(conf, state, in, m, p)
#define TDS_VERIFY_AT(k, p) \
	tds_next_filter_verify_##k(conf, state, in, m, false, p)
#define TDS_NEXT_FILTER(k)                                                     \
	TD_TARGET_VBMI static                                                  \
		__attribute__((noinline)) int tds_next_filter_verify_##k(      \
			struct ts_config *conf, void *state,                   \
			const struct ts_stream_input *in, struct ts_match *m,  \
			const bool rare, size_t from)                          \
	{                                                                      \
		return tds_next_unless_done(                                   \
			conf, state, in,                                       \
			tds_filter_write_k(ts_config_priv(conf), state, in, k, \
					   rare, from),                        \
			m);                                                    \
	}                                                                      \
	TD_TARGET_VBMI static                                                  \
		__attribute__((noinline)) int tds_next_filter_cand_##k(        \
			struct ts_config *conf, void *state,                   \
			const struct ts_stream_input *in, struct ts_match *m,  \
			size_t from)                                           \
	{                                                                      \
		if (((struct tds *)state)->dense)                              \
			return tds_next_from(conf, state, in, from, m);        \
		return TDS_VERIFY_AT(k, from);                                 \
	}                                                                      \
	TD_TARGET_VBMI static int tds_next_filter_##k(                         \
		struct ts_config *conf, void *state,                           \
		const struct ts_stream_input *in, struct ts_match *m)          \
	{                                                                      \
		const struct teddy *t = ts_config_priv(conf);                  \
		const size_t h = tds_open_starts(t, state);                    \
		__m512i tab[2 * TD_MAXKEY];                                    \
		uint64_t cand;                                                 \
		size_t p_;                                                     \
                                                                               \
		if (in->len > TDS_FILTER_RARE && t->rare_n)                    \
			return tds_next_filter_verify_##k(conf, state, in, m,  \
							  true, 0);            \
		TDS_FILTER_HEAD(k, TDS_CAND_AT);                               \
		/* the write's other vectors, if it has any */                 \
		p_ = tds_next_cands(t, in->data, 64 - h, in->len, &cand, tab,  \
				    k);                                        \
		if (p_ != SIZE_MAX)                                            \
			return TDS_CAND_AT(k, p_);                             \
		tds_filter_done(state, in);                                    \
		return 0;                                                      \
	}                                                                      \
	TD_TARGET_VBMI static int tds_next_filter64_##k(                       \
		struct ts_config *conf, void *state,                           \
		const struct ts_stream_input *in, struct ts_match *m)          \
	{                                                                      \
		const struct teddy *t = ts_config_priv(conf);                  \
		const size_t h = tds_open_starts(t, state);                    \
		__m512i tab[2 * TD_MAXKEY];                                    \
		uint64_t cand;                                                 \
                                                                               \
		TDS_FILTER_HEAD(k, TDS_VERIFY_AT);                             \
		tds_filter_done(state, in);                                    \
		return 0;                                                      \
	}
TDS_NEXT_FILTER(1)
TDS_NEXT_FILTER(2)
TDS_NEXT_FILTER(3)
TDS_NEXT_FILTER(4)
#undef TDS_NEXT_FILTER
#undef TDS_FILTER_HEAD
#undef TDS_CAND_AT
#undef TDS_VERIFY_AT

/* tds_next() where t->quick is set, for the writes that neither
 * tds_next_short() nor the filter's one jump takes: a longer write with
 * the automata at hand goes to the filter where it has at least
 * shortest - 1 bytes (the carried starts' shortest windows then end in
 * it); the rest, a match to yield or the end, the long way. */
TD_TARGET_AVX2 static __attribute__((noinline)) int
tds_next_quick(struct ts_config *conf, void *state,
	       const struct ts_stream_input *in, struct ts_match *m)
{
	const struct teddy *t = ts_config_priv(conf);
	struct tds *st = state;

	if (st->phase == TDS_IDLE && !in->end && st->dvalid && st->lazy &&
	    t->quick->filter && in->len <= TDS_FILTER_MAX &&
	    in->len >= t->shortest - 1 && in->len - 1 >= t->quick->max)
		return t->quick->filter(conf, state, in, m);
	if (tds_next_hit(conf, st, m))
		return 1;
	return tds_next_rest(conf, state, in, m);
}

/* tds_next() for a write of 1 to t->quick->max bytes with the automata
 * at hand (in TDS_IDLE): tds_quick() without tds_next_quick()'s frame
 * (8- and 16-byte writes 0.4 ns less), else the long way. */
TD_TARGET_AVX2 static int tds_next_short(struct ts_config *conf, void *state,
					 const struct ts_stream_input *in,
					 struct ts_match *m)
{
	if (tds_quick(ts_config_priv(conf), state, in))
		return 0;
	return tds_next_rest(conf, state, in, m);
}
#endif

/* A stream in writes of 17 bytes to 4 KiB goes from write to write
 * through tds_filter_write(), without the automata: a write after one it
 * took goes from here to the filter in one jump, and a short write with
 * the automata at hand to tds_next_short(), without tds_next_quick()'s
 * checks and frame between (some tenths of a ns a write); the others go
 * there. */
static int tds_next(struct ts_config *conf, void *state,
		    const struct ts_stream_input *in, struct ts_match *m)
{
#if TD_X86
	const struct teddy *t = ts_config_priv(conf);
	const struct tds *st = state;

	if (t->quick) {
		if (st->phase == TDS_IDLE && !in->end) {
			if (!st->dvalid) {
				if (st->lazy && in->len <= TDS_FILTER_MAX &&
				    t->quick->filter)
					return (in->len <= 64 ?
							t->quick->filter64 :
							t->quick->filter)(
						conf, state, in, m);
			} else if (in->len - 1 < t->quick->max) {
				return tds_next_short(conf, state, in, m);
			}
		}
		return tds_next_quick(conf, state, in, m);
	}
#endif
	if (tds_next_hit(conf, state, m))
		return 1;
	return tds_next_slow(conf, state, in, m);
}

static const struct ts_stream_ops td_stream_ops = {
	.state_size = tds_size,
	.reset = tds_reset,
	.next = tds_next,
	.keep = td_keep,
};

#define TD_OPS(var, str, suffix)                       \
	struct ts_ops var = {                          \
		.name = str,                           \
		.init = td_init_##suffix,              \
		.find = td_find,                       \
		.get_pattern = td_get_pattern,         \
		.get_pattern_len = td_get_pattern_len, \
		.init_set = td_init_set_##suffix,      \
		.stream = &td_stream_ops,              \
	}
TD_OPS(ts_teddy_ops, "teddy", best);
TD_OPS(ts_teddy_vbmi_ops, "teddy_vbmi", vbmi);
TD_OPS(ts_teddy_avx512_ops, "teddy_avx512", avx512);
TD_OPS(ts_teddy_avx2_ops, "teddy_avx2", avx2);
TD_OPS(ts_teddy_ssse3_ops, "teddy_ssse3", ssse3);
TD_OPS(ts_teddy_scalar_ops, "teddy_scalar", scalar);
