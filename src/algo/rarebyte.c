/*
 * rarebyte.c - a SIMD literal search: filter on the pattern's rarest bytes
 * (two, or three from RB_THREE_FILTERS_FROM bytes on), verify the survivors
 * exactly.
 *
 * The pattern is prepared once: two positions i1 != i2 (i1 == i2 only for a
 * one-byte pattern) are chosen whose bytes are the least frequent in typical
 * data.  The bulk of every block is then scanned a vector at a time: for W
 * consecutive window starts p the vectors at p + i1 and p + i2 are compared
 * with the two bytes, and only the starts where both agree are verified
 * with a full compare.
 *
 * Why the rarest bytes.  If byte b occurs in the data with frequency f(b),
 * and positions are roughly independent, a window survives the filter with
 * probability about f(c1) * f(c2), and every survivor costs a verify (a
 * call, a compare, a branch the predictor gets wrong).  The first and last
 * bytes are a poor choice in code and text: "pthread_mutex_lock" starts with
 * 'p' and ends with 'k', and every "pthread_" prefix in C source survives a
 * first-byte filter.  Ranking the bytes by a static frequency table ('x' and
 * 'k' here) keeps the survivors close to the real matches.  The two bytes are
 * taken with different values when the pattern has two: equal bytes at two
 * positions are correlated in runs ("aa" in "aaaa"), so the second filter
 * would remove little.  For TS_IGNORECASE a letter is as frequent as its
 * two cases together; the table's larger rank of the two stands for that.
 *
 * Short patterns: one byte is a memchr-like scan (the filter is exact, so
 * there is no verify); for two bytes the filter covers both and is exact
 * too; for three, the filter covers two and the verify settles the third.
 *
 * TS_IGNORECASE stays vectorised.  Every pattern byte is folded first.  A
 * folded byte c that is a lower-case letter (ASCII a-z, ISO-8859-1
 * 0xE0-0xFE but 0xF7) is matched exactly by the data bytes c and c - 0x20,
 * and those are precisely the bytes x with (x | 0x20) == c; any other
 * folded byte (0xF7, 0xFF, 0xDF, digits...) is matched by itself only.  So
 * each filter is one OR with 0x20 or 0 and one compare.  Verification
 * folds whole vectors of data with the range rule (A-Z, 0xC0-0xDE but 0xD7)
 * and compares them with the folded pattern.
 *
 * Runtime dispatch.  The scan exists at four levels, AVX-512BW (64 starts
 * per step, masked loads for the last partial vector), AVX2 (32), SSE2 (16)
 * and portable C; the CPU is probed once (pthread_once, __builtin_cpu_
 * supports) and each x86 level is compiled with a function-level target
 * attribute, so the rest of the library stays baseline.  "rarebyte" takes
 * the best level the CPU has; "rarebyte_avx512", "rarebyte_avx2",
 * "rarebyte_sse2" and "rarebyte_scalar" pin a level (the best one the CPU
 * has at or below it, so never an illegal instruction) for tests and
 * benchmarks.  The level is fixed in the config at prepare time.
 *
 * Blocks.  A vector load is made only when all of it lies inside the
 * current block; windows that straddle a block boundary (at most
 * patlen - 1 starts per boundary) are found in a carry buffer that holds
 * the tail of the old block and the head of the new one, at most
 * 2 * (patlen - 1) bytes, so each boundary copies O(patlen) bytes.  The
 * carry is scanned by the same vector scan (a long pattern in short blocks
 * spends most starts there), or start by start when only a few are left.
 * Data is read only through conf->get_next_block(), always forwards.
 *
 * Short blocks.  In blocks of 64 bytes, what a block costs besides its scan
 * (the provider call, the carry, the scans' setup, masked loads for the
 * starts past the last whole vector) used to be most of the time.  On
 * AVX-512 with VBMI, patterns up to 64 bytes run rb_small_vbmi(): the
 * carry is the previous 64 stream bytes held in a register, and the
 * starts that straddle a boundary are tested together with the block's
 * first 64 by byte permutes of (carry, block), verified in the registers
 * too.  Elsewhere, a block of up to RB_STAGE_MAX bytes is appended to the
 * carry buffer and scanned there once (the buffer is padded so that the
 * scan loads whole vectors).  The provider is resolved once per call
 * (ts_provider_resolve()), so a block costs one indirect call.
 *
 * A third filter byte (rarebyte_choose.h picks it) costs a load and a
 * compare per vector; it pays for long patterns, whose verifies are dear
 * and whose two rarest bytes are often common letters.  Each vector level
 * is compiled twice, with two and with three filters, so the choice costs
 * no branch in the loop.
 *
 * Cost: O(n) for the scan, plus up to O(patlen) per survivor of the
 * filter, which periodic data can make O(n * patlen) ("xkxk...xkxx" in
 * "xkxkxk...": every other start survives and verifies far).  So every
 * verify is charged to a budget that grows with the bytes scanned; once
 * the verifies have cost more than RB_WORK_PER_BYTE compares per scanned
 * byte (plus a slack), the rest of the call is searched by a linear
 * byte-at-a-time automaton (Knuth-Morris-Pratt over the folded pattern),
 * so one call costs O(n + patlen) whatever the data.  The next call starts
 * on the fast path again: its slack is paid at most once per match.
 */
#include "internal.h"
#include "literal_stream.h"
#include "rarebyte_choose.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RB_X86 1
#else
#define RB_X86 0
#endif

enum rb_level { RB_SCALAR, RB_SSE2, RB_AVX2, RB_AVX512, RB_NLEVELS };

#define RB_NONE SIZE_MAX

/* Patterns this long are filtered on three bytes, shorter ones on two. */
#define RB_THREE_FILTERS_FROM 16u

/* A scan that gave up on its budget (the window start is in work->stop). */
#define RB_GIVEUP (SIZE_MAX - 1)
/* A step's answer when nothing is decided yet: scan on. */
#define RB_CONTINUE (SIZE_MAX - 2)

/* Verify compares allowed per byte scanned, and the slack on top of them
 * (the slack also pays for a first verify of a long pattern). */
#define RB_WORK_PER_BYTE 8u
#define RB_WORK_SLACK (64u * 1024u)

/* What one call has spent on verifies, against what it has scanned. */
struct rb_work {
	uint64_t start; /* stream offset where the call began */
	uint64_t sbase; /* stream offset of s[0] in the current scan */
	uint64_t spent; /* pattern bytes charged to verifies */
	uint64_t slack;
	size_t stop; /* RB_GIVEUP: the start not yet verified */
};

struct rb;
/* First start p in [from, n - len] of a full match inside s[0, n), or
 * RB_NONE, or RB_GIVEUP once @work is spent; n >= len and from <= n - len. */
typedef size_t (*rb_scan_fn)(const struct rb *r, const u8 *s, size_t from,
			     size_t n, struct rb_work *work);

/* aligned as the payload is (alloc_ts_config()): the stream table that
 * follows is then on a cache line of its own, as its vectors ask */
struct rb {
	alignas(TS_CONFIG_ALIGN) unsigned int len;
	unsigned int i1, i2, i3; /* filter positions in the pattern */
	unsigned int imax;	 /* the largest: loads reach s[p + imax + W) */
	u8 c1, c2, c3;		 /* folded pattern bytes there */
	u8 or1, or2, or3;	 /* 0x20 where the byte is a folding letter */
	bool icase;
	bool exact; /* the filter alone decides (len <= 2) */
	bool three; /* the vector scans use i3 too */
	enum rb_level level;
	rb_scan_fn scan;
	rb_scan_fn pscan; /* the same over the padded carry (RB_PAD) */
	bool small;	  /* short blocks take rb_small_vbmi() */
	u8 fold[256];	  /* identity unless TS_IGNORECASE */
	u8 *folded;	  /* the pattern through fold[] */
	u8 *pattern;	  /* as the caller gave it */
	u8 *orv; /* per pattern byte: 0x20 where it is a folding letter */
	unsigned int *border; /* KMP: longest proper border of folded[0..i] */
	struct lit_tab *stab; /* for streams (literal_stream.h), or NULL */
};

/*
 * Charge a verify of the window at stream offset @at.  False when verifies
 * would cost more than the scan is allowed to this far: the caller then
 * stops and hands the window over to the linear search.
 */
static inline bool rb_charge(const struct rb *r, struct rb_work *w, uint64_t at)
{
	w->spent += r->len;
	return w->spent <= w->slack + RB_WORK_PER_BYTE * (at - w->start);
}

/* ---- verification ------------------------------------------------------- */

static bool rb_verify_scalar(const struct rb *r, const u8 *w)
{
	unsigned int i;

	if (!r->icase)
		return memcmp(w, r->pattern, r->len) == 0;
	for (i = 0; i < r->len; i++)
		if (r->fold[w[i]] != r->folded[i])
			return false;
	return true;
}

enum rb_verdict { RB_NO, RB_YES, RB_BROKE };

/* The window at @w (stream offset @at), the filter included (scalar);
 * RB_BROKE when the budget does not allow its verify. */
static enum rb_verdict rb_match_at(const struct rb *r, const u8 *w,
				   struct rb_work *work, uint64_t at)
{
	if ((u8)(w[r->i1] | r->or1) != r->c1 ||
	    (u8)(w[r->i2] | r->or2) != r->c2 ||
	    (u8)(w[r->i3] | r->or3) != r->c3)
		return RB_NO;
	if (r->exact)
		return RB_YES;
	if (!rb_charge(r, work, at))
		return RB_BROKE;
	return rb_verify_scalar(r, w) ? RB_YES : RB_NO;
}

/* The start @p of @s, settled: p itself when it matches, RB_GIVEUP (with
 * work->stop) when its verify is not affordable, else RB_CONTINUE. */
static inline size_t rb_try_start(const struct rb *r, const u8 *s, size_t p,
				  struct rb_work *work)
{
	switch (rb_match_at(r, s + p, work, work->sbase + p)) {
	case RB_YES:
		return p;
	case RB_BROKE:
		work->stop = p;
		return RB_GIVEUP;
	case RB_NO:
		break;
	}
	return RB_CONTINUE;
}

/* ---- portable scan ------------------------------------------------------ */

static size_t rb_scan_scalar(const struct rb *r, const u8 *s, size_t from,
			     size_t n, struct rb_work *work)
{
	const size_t last = n - r->len;
	size_t p;

	for (p = from; p <= last; p++) {
		if (!r->or1) {
			/* skip to the next occurrence of the rarest byte */
			const u8 *hit =
				memchr(s + p + r->i1, r->c1, last - p + 1);

			if (!hit)
				return RB_NONE;
			p = (size_t)(hit - s) - r->i1;
		}
		size_t q = rb_try_start(r, s, p, work);

		if (q != RB_CONTINUE)
			return q;
	}
	return RB_NONE;
}

/* The same for a handful of starts (a block boundary's carry): no call,
 * no setup. */
static inline size_t rb_scan_few(const struct rb *r, const u8 *s, size_t from,
				 size_t n, struct rb_work *work)
{
	for (size_t p = from; p + r->len <= n; p++) {
		size_t q = rb_try_start(r, s, p, work);

		if (q != RB_CONTINUE)
			return q;
	}
	return RB_NONE;
}

#if RB_X86
/* ---- SSE2 ----------------------------------------------------------------- */

#define RB_TARGET_SSE2 __attribute__((target("sse2")))
#define RB_TARGET_AVX2 __attribute__((target("avx2")))
#define RB_TARGET_AVX512 __attribute__((target("avx512f,avx512bw")))

/* x in [lo, hi] for each unsigned byte: x - lo <= hi - lo, tested as
 * min(x - lo, hi - lo) == x - lo. */
RB_TARGET_SSE2 static inline __m128i rb_in_range16(__m128i x, u8 lo, u8 hi)
{
	__m128i t = _mm_sub_epi8(x, _mm_set1_epi8((char)lo));

	return _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8((char)(hi - lo))),
			      t);
}

/* The TS_IGNORECASE fold of 16 bytes: +0x20 (an OR, bit 5 being clear
 * there) for A-Z and 0xC0-0xDE but 0xD7. */
RB_TARGET_SSE2 static inline __m128i rb_fold16(__m128i x)
{
	__m128i up = _mm_or_si128(
		rb_in_range16(x, 'A', 'Z'),
		_mm_andnot_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)0xD7)),
				 rb_in_range16(x, 0xC0, 0xDE)));

	return _mm_or_si128(x, _mm_and_si128(up, _mm_set1_epi8(0x20)));
}

/* Verify a candidate, 16 bytes at a time; the window lies in the block. */
RB_TARGET_SSE2 static bool rb_verify_sse2(const struct rb *r, const u8 *w)
{
	unsigned int i = 0;

	if (!r->icase)
		return memcmp(w, r->pattern, r->len) == 0;
	for (; i + 16 <= r->len; i += 16) {
		__m128i d =
			rb_fold16(_mm_loadu_si128((const __m128i *)(w + i)));
		__m128i p = _mm_loadu_si128((const __m128i *)(r->folded + i));

		if (_mm_movemask_epi8(_mm_cmpeq_epi8(d, p)) != 0xFFFF)
			return false;
	}
	for (; i < r->len; i++)
		if (r->fold[w[i]] != r->folded[i])
			return false;
	return true;
}

/*
 * Go through the candidate starts base + k for the bits k of @mask; the
 * first that verifies is the answer.  A start past @last cannot hold a
 * whole window: none after it can either (RB_NONE).  Each verify is charged
 * to @work first (RB_GIVEUP when it cannot pay).  Out of line, so the scan
 * loops keep their registers for the filter.
 */
#define RB_DEFINE_WALK(name, target, verify)                              \
	target __attribute__((noinline)) static size_t name(              \
		const struct rb *r, const u8 *s, unsigned long long mask, \
		size_t base, size_t last, struct rb_work *work)           \
	{                                                                 \
		while (mask) {                                            \
			size_t q = base + (size_t)__builtin_ctzll(mask);  \
			if (q > last)                                     \
				return RB_NONE;                           \
			if (r->exact)                                     \
				return q;                                 \
			if (!rb_charge(r, work, work->sbase + q)) {       \
				work->stop = q;                           \
				return RB_GIVEUP;                         \
			}                                                 \
			if (verify(r, s + q))                             \
				return q;                                 \
			mask &= mask - 1;                                 \
		}                                                         \
		return RB_CONTINUE;                                       \
	}

/* In a scan: settle the candidates of @mask, return if one decides. */
#define RB_WALK_MASK(walk, mask, base, last)                            \
	do {                                                            \
		if (mask) {                                             \
			size_t q_ = walk(r, s, mask, base, last, work); \
			if (q_ != RB_CONTINUE)                          \
				return q_;                              \
		}                                                       \
	} while (0)

RB_DEFINE_WALK(rb_walk_sse2, RB_TARGET_SSE2, rb_verify_sse2)

/*
 * The filter's constants, loaded once per scan: the bytes at p + i1 and
 * p + i2 (s1 and s2 point there), ORed with or1 / or2, must equal c1 / c2.
 */
#define RB_FILTER(vec, set1)                                       \
	const u8 *const s1 = s + r->i1, *const s2 = s + r->i2;     \
	const u8 *const s3 = s + r->i3;                            \
	const vec o1 = set1((char)r->or1), k1 = set1((char)r->c1); \
	const vec o2 = set1((char)r->or2), k2 = set1((char)r->c2); \
	const vec o3 = set1((char)r->or3), k3 = set1((char)r->c3)

/* The three filters at window starts p..p+W-1, as a bit mask. */
#define RB_MASK_ARGS(vec)                                                   \
	const u8 *s1, const u8 *s2, const u8 *s3, size_t p, vec o1, vec k1, \
		vec o2, vec k2, vec o3, vec k3, const bool three
#define RB_MASK_PASS(p) s1, s2, s3, p, o1, k1, o2, k2, o3, k3, three
/* Inlined with a constant `three`, so each scan has a two-filter and a
 * three-filter version without a branch in its loop. */
#define RB_INLINE inline __attribute__((always_inline))

RB_TARGET_SSE2 static RB_INLINE unsigned long long
rb_mask16(RB_MASK_ARGS(__m128i))
{
	__m128i a = _mm_loadu_si128((const __m128i *)(s1 + p));
	__m128i b = _mm_loadu_si128((const __m128i *)(s2 + p));
	__m128i m = _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(a, o1), k1),
				  _mm_cmpeq_epi8(_mm_or_si128(b, o2), k2));

	if (three) {
		__m128i c = _mm_loadu_si128((const __m128i *)(s3 + p));

		m = _mm_and_si128(m, _mm_cmpeq_epi8(_mm_or_si128(c, o3), k3));
	}
	return (unsigned int)_mm_movemask_epi8(m);
}

/* Blocks with at least this many starts align the i1 loads first. */
#define RB_ALIGN_FROM 255u

/* On a block of RB_ALIGN_FROM starts or more, the starts before the first
 * whose i1 byte is W-aligned: past them the i1 loads never straddle a
 * cache line, and only the i2 loads may. */
#define RB_ALIGN_HEAD(W, maskfn, walk)                                   \
	do {                                                             \
		size_t head_ = ((W) - ((uintptr_t)(s1 + p) & ((W)-1))) & \
			       ((W)-1);                                  \
                                                                         \
		if (p <= last && last - p >= RB_ALIGN_FROM && head_) {   \
			mask = maskfn(RB_MASK_PASS(p)) &                 \
			       (((unsigned long long)1 << head_) - 1);   \
			RB_WALK_MASK(walk, mask, p, last);               \
			p += head_;                                      \
		}                                                        \
	} while (0)

/*
 * The vector loop of SSE2 and AVX2.  Loads at p + i1 and p + i2 of W bytes
 * fit while p <= vlast = n - imax - W.  Two vectors are tested per step
 * (one branch for 2W starts; 2W <= 64 bits of mask).  Because imax <=
 * len - 1, vlast + W >= n - len + 1 = last + 1: one more vector, loaded at
 * vlast (overlapping starts already seen, which are shifted off), covers
 * every start up to last.  Blocks shorter than imax + W go to the scalar
 * scan; long ones align the i1 loads first (RB_ALIGN_HEAD()).
 */
#define RB_VECTOR_SCAN(W, vec, set1, maskfn, walk)                         \
	do {                                                               \
		const size_t last = n - r->len;                            \
		size_t p = from, vlast;                                    \
		unsigned long long mask;                                   \
		RB_FILTER(vec, set1);                                      \
                                                                           \
		if (n - r->imax < (W))                                     \
			return rb_scan_scalar(r, s, from, n, work);        \
		vlast = n - r->imax - (W);                                 \
		RB_ALIGN_HEAD(W, maskfn, walk);                            \
		for (; p + (W) <= vlast; p += 2 * (W)) {                   \
			mask = maskfn(RB_MASK_PASS(p)) |                   \
			       maskfn(RB_MASK_PASS(p + (W))) << (W);       \
			RB_WALK_MASK(walk, mask, p, last);                 \
		}                                                          \
		for (; p <= vlast; p += (W)) {                             \
			mask = maskfn(RB_MASK_PASS(p));                    \
			RB_WALK_MASK(walk, mask, p, last);                 \
		}                                                          \
		if (p <= last) {                                           \
			mask = maskfn(RB_MASK_PASS(vlast)) >> (p - vlast); \
			RB_WALK_MASK(walk, mask, p, last);                 \
		}                                                          \
		return RB_NONE;                                            \
	} while (0)

RB_TARGET_SSE2 static RB_INLINE size_t rb_scan_sse2(const struct rb *r,
						    const u8 *s, size_t from,
						    size_t n,
						    struct rb_work *work,
						    const bool three)
{
	RB_VECTOR_SCAN(16, __m128i, _mm_set1_epi8, rb_mask16, rb_walk_sse2);
}

/* ---- AVX2 ----------------------------------------------------------------- */

RB_TARGET_AVX2 static inline __m256i rb_in_range32(__m256i x, u8 lo, u8 hi)
{
	__m256i t = _mm256_sub_epi8(x, _mm256_set1_epi8((char)lo));

	return _mm256_cmpeq_epi8(
		_mm256_min_epu8(t, _mm256_set1_epi8((char)(hi - lo))), t);
}

RB_TARGET_AVX2 static inline __m256i rb_fold32(__m256i x)
{
	__m256i up = _mm256_or_si256(
		rb_in_range32(x, 'A', 'Z'),
		_mm256_andnot_si256(
			_mm256_cmpeq_epi8(x, _mm256_set1_epi8((char)0xD7)),
			rb_in_range32(x, 0xC0, 0xDE)));

	return _mm256_or_si256(x, _mm256_and_si256(up, _mm256_set1_epi8(0x20)));
}

RB_TARGET_AVX2 static bool rb_verify_avx2(const struct rb *r, const u8 *w)
{
	unsigned int i = 0;

	if (!r->icase)
		return memcmp(w, r->pattern, r->len) == 0;
	for (; i + 32 <= r->len; i += 32) {
		__m256i d =
			rb_fold32(_mm256_loadu_si256((const __m256i *)(w + i)));
		__m256i p =
			_mm256_loadu_si256((const __m256i *)(r->folded + i));

		if ((unsigned int)_mm256_movemask_epi8(
			    _mm256_cmpeq_epi8(d, p)) != 0xFFFFFFFFu)
			return false;
	}
	for (; i < r->len; i++)
		if (r->fold[w[i]] != r->folded[i])
			return false;
	return true;
}

RB_DEFINE_WALK(rb_walk_avx2, RB_TARGET_AVX2, rb_verify_avx2)

RB_TARGET_AVX2 static RB_INLINE unsigned long long
rb_mask32(RB_MASK_ARGS(__m256i))
{
	__m256i a = _mm256_loadu_si256((const __m256i *)(s1 + p));
	__m256i b = _mm256_loadu_si256((const __m256i *)(s2 + p));
	__m256i m =
		_mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(a, o1), k1),
				 _mm256_cmpeq_epi8(_mm256_or_si256(b, o2), k2));

	if (three) {
		__m256i c = _mm256_loadu_si256((const __m256i *)(s3 + p));

		m = _mm256_and_si256(
			m, _mm256_cmpeq_epi8(_mm256_or_si256(c, o3), k3));
	}
	return (unsigned int)_mm256_movemask_epi8(m);
}

RB_TARGET_AVX2 static RB_INLINE size_t rb_scan_avx2(const struct rb *r,
						    const u8 *s, size_t from,
						    size_t n,
						    struct rb_work *work,
						    const bool three)
{
	RB_VECTOR_SCAN(32, __m256i, _mm256_set1_epi8, rb_mask32, rb_walk_avx2);
}

/* ---- AVX-512BW ------------------------------------------------------------ */

/* Bytes in [lo, hi], as a mask: unsigned compares exist here. */
RB_TARGET_AVX512 static inline __mmask64 rb_in_range64(__m512i x, u8 lo, u8 hi)
{
	__m512i t = _mm512_sub_epi8(x, _mm512_set1_epi8((char)lo));

	return _mm512_cmple_epu8_mask(t, _mm512_set1_epi8((char)(hi - lo)));
}

RB_TARGET_AVX512 static inline __m512i rb_fold64(__m512i x)
{
	__mmask64 up =
		rb_in_range64(x, 'A', 'Z') |
		(rb_in_range64(x, 0xC0, 0xDE) &
		 ~_mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8((char)0xD7)));

	return _mm512_mask_add_epi8(x, up, x, _mm512_set1_epi8(0x20));
}

/* Verify with masked loads: no byte outside the window is touched. */
RB_TARGET_AVX512 static bool rb_verify_avx512(const struct rb *r, const u8 *w)
{
	unsigned int i;

	if (!r->icase)
		return memcmp(w, r->pattern, r->len) == 0;
	for (i = 0; i < r->len; i += 64) {
		unsigned int left = r->len - i;
		__mmask64 k = left >= 64 ? ~(__mmask64)0 :
					   (((__mmask64)1 << left) - 1);
		__m512i d = rb_fold64(_mm512_maskz_loadu_epi8(k, w + i));
		__m512i p = _mm512_maskz_loadu_epi8(k, r->folded + i);

		if (_mm512_mask_cmpneq_epi8_mask(k, d, p))
			return false;
	}
	return true;
}

RB_DEFINE_WALK(rb_walk_avx512, RB_TARGET_AVX512, rb_verify_avx512)

/* Filter mask of the 64 starts from p (both loads inside the block). */
RB_TARGET_AVX512 static RB_INLINE unsigned long long
rb_mask64(RB_MASK_ARGS(__m512i))
{
	__m512i a = _mm512_loadu_si512((const void *)(s1 + p));
	__m512i b = _mm512_loadu_si512((const void *)(s2 + p));
	unsigned long long m =
		_mm512_cmpeq_epi8_mask(_mm512_or_si512(a, o1), k1) &
		_mm512_cmpeq_epi8_mask(_mm512_or_si512(b, o2), k2);

	if (three) {
		__m512i c = _mm512_loadu_si512((const void *)(s3 + p));

		m &= _mm512_cmpeq_epi8_mask(_mm512_or_si512(c, o3), k3);
	}
	return m;
}

/*
 * 64 starts per vector, two vectors per step (one branch for 128 starts),
 * with plain loads while all the windows' filter bytes lie in the block
 * (p + 63 <= last, so p + imax + 64 <= n).  The cnt < 64 starts left take
 * the block's last whole vector when it starts at or before p (a masked
 * load costs several plain ones on some CPUs), else masked loads of cnt
 * bytes at p + i1 and p + i2, whose last byte is at
 * most last + imax <= n - 1: inside the block, so short blocks need no
 * scalar path either.
 */
RB_TARGET_AVX512 static RB_INLINE size_t rb_scan_avx512(const struct rb *r,
							const u8 *s,
							size_t from, size_t n,
							struct rb_work *work,
							const bool three)
{
	const size_t last = n - r->len;
	unsigned long long mask, mask2;
	size_t p = from;
	RB_FILTER(__m512i, _mm512_set1_epi8);

	RB_ALIGN_HEAD(64, rb_mask64, rb_walk_avx512);
	for (; p <= last && last - p >= 127; p += 128) {
		mask = rb_mask64(RB_MASK_PASS(p));
		mask2 = rb_mask64(RB_MASK_PASS(p + 64));
		if (mask | mask2) {
			RB_WALK_MASK(rb_walk_avx512, mask, p, last);
			RB_WALK_MASK(rb_walk_avx512, mask2, p + 64, last);
		}
	}
	for (; p <= last && last - p >= 63; p += 64) {
		mask = rb_mask64(RB_MASK_PASS(p));
		RB_WALK_MASK(rb_walk_avx512, mask, p, last);
	}
	if (p <= last && n - r->imax >= 64 && n - r->imax - 64 <= p) {
		/* the last whole vector in the block, from a start at or
		 * before p (those before p are shifted off): plain loads
		 * cost less than masked ones */
		size_t vlast = n - r->imax - 64;

		mask = rb_mask64(RB_MASK_PASS(vlast)) >> (p - vlast);
		RB_WALK_MASK(rb_walk_avx512, mask, p, last);
	} else if (p <= last) {
		__mmask64 k = ((__mmask64)1 << (last - p + 1)) - 1;
		__m512i a = _mm512_maskz_loadu_epi8(k, s1 + p);
		__m512i b = _mm512_maskz_loadu_epi8(k, s2 + p);

		mask = _mm512_mask_cmpeq_epi8_mask(k, _mm512_or_si512(a, o1),
						   k1) &
		       _mm512_mask_cmpeq_epi8_mask(k, _mm512_or_si512(b, o2),
						   k2);
		if (three) {
			__m512i c = _mm512_maskz_loadu_epi8(k, s3 + p);

			mask &= _mm512_mask_cmpeq_epi8_mask(
				k, _mm512_or_si512(c, o3), k3);
		}
		RB_WALK_MASK(rb_walk_avx512, mask, p, last);
	}
	return RB_NONE;
}
/*
 * Scans of the carry, whose buffer has RB_PAD readable bytes past its
 * data: whole vectors are loaded at every step (a load at p reaches
 * s[p + imax + W - 1] <= s[n + W - 2]), and the bits of starts past last
 * are dropped, so a carry of any length takes one or two vectors, with no
 * scalar head or tail: this is what a short block costs.
 */
#define RB_PADDED_SCAN(W, vec, set1, maskfn, walk)                \
	do {                                                      \
		const size_t last = n - r->len;                   \
		unsigned long long mask;                          \
		RB_FILTER(vec, set1);                             \
                                                                  \
		for (size_t p = from; p <= last; p += (W)) {      \
			mask = maskfn(RB_MASK_PASS(p));           \
			if (last - p < (W)-1)                     \
				mask &= (2ull << (last - p)) - 1; \
			RB_WALK_MASK(walk, mask, p, last);        \
		}                                                 \
		return RB_NONE;                                   \
	} while (0)

RB_TARGET_SSE2 static RB_INLINE size_t rb_pscan_sse2(const struct rb *r,
						     const u8 *s, size_t from,
						     size_t n,
						     struct rb_work *work,
						     const bool three)
{
	RB_PADDED_SCAN(16, __m128i, _mm_set1_epi8, rb_mask16, rb_walk_sse2);
}

RB_TARGET_AVX2 static RB_INLINE size_t rb_pscan_avx2(const struct rb *r,
						     const u8 *s, size_t from,
						     size_t n,
						     struct rb_work *work,
						     const bool three)
{
	RB_PADDED_SCAN(32, __m256i, _mm256_set1_epi8, rb_mask32, rb_walk_avx2);
}

RB_TARGET_AVX512 static RB_INLINE size_t rb_pscan_avx512(const struct rb *r,
							 const u8 *s,
							 size_t from, size_t n,
							 struct rb_work *work,
							 const bool three)
{
	RB_PADDED_SCAN(64, __m512i, _mm512_set1_epi8, rb_mask64,
		       rb_walk_avx512);
}

/* Each level with two and with three filters. */
#define RB_SCAN_VERSIONS(level, target)                                  \
	target static size_t level##_f2(const struct rb *r, const u8 *s, \
					size_t from, size_t n,           \
					struct rb_work *work)            \
	{                                                                \
		return level(r, s, from, n, work, false);                \
	}                                                                \
	target static size_t level##_f3(const struct rb *r, const u8 *s, \
					size_t from, size_t n,           \
					struct rb_work *work)            \
	{                                                                \
		return level(r, s, from, n, work, true);                 \
	}
RB_SCAN_VERSIONS(rb_scan_sse2, RB_TARGET_SSE2)
RB_SCAN_VERSIONS(rb_scan_avx2, RB_TARGET_AVX2)
RB_SCAN_VERSIONS(rb_scan_avx512, RB_TARGET_AVX512)
RB_SCAN_VERSIONS(rb_pscan_sse2, RB_TARGET_SSE2)
RB_SCAN_VERSIONS(rb_pscan_avx2, RB_TARGET_AVX2)
RB_SCAN_VERSIONS(rb_pscan_avx512, RB_TARGET_AVX512)
#endif /* RB_X86 */

/* ---- dispatch ------------------------------------------------------------ */

static pthread_once_t rb_probe_once = PTHREAD_ONCE_INIT;
static enum rb_level rb_best =
	RB_SCALAR;   /* written once, under rb_probe_once */
static bool rb_vbmi; /* the same: AVX-512 VBMI byte permutes */

static void rb_probe(void)
{
#if RB_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw")) {
		rb_best = RB_AVX512;
		rb_vbmi = __builtin_cpu_supports("avx512vbmi");
	} else if (__builtin_cpu_supports("avx2"))
		rb_best = RB_AVX2;
	else if (__builtin_cpu_supports("sse2"))
		rb_best = RB_SSE2;
#endif
}

/* [level][three filters] */
static const rb_scan_fn rb_scans[RB_NLEVELS][2] = {
	{ rb_scan_scalar, rb_scan_scalar },
#if RB_X86
	{ rb_scan_sse2_f2, rb_scan_sse2_f3 },
	{ rb_scan_avx2_f2, rb_scan_avx2_f3 },
	{ rb_scan_avx512_f2, rb_scan_avx512_f3 },
#endif
};

/* The scans of the padded carry, [level][three filters] */
static const rb_scan_fn rb_pscans[RB_NLEVELS][2] = {
	{ rb_scan_scalar, rb_scan_scalar },
#if RB_X86
	{ rb_pscan_sse2_f2, rb_pscan_sse2_f3 },
	{ rb_pscan_avx2_f2, rb_pscan_avx2_f3 },
	{ rb_pscan_avx512_f2, rb_pscan_avx512_f3 },
#endif
};

/* The level to use when @wanted is asked for: never one the CPU lacks. */
static enum rb_level rb_level_for(enum rb_level wanted)
{
	pthread_once(&rb_probe_once, rb_probe);
	return wanted < rb_best ? wanted : rb_best;
}

/* ---- the search --------------------------------------------------------- */

/* Carry bytes kept on the stack; longer patterns allocate. */
#define RB_STACK_CARRY 1024
/* Readable bytes past the carry's data, so its scans load whole vectors
 * (the widest is 64 bytes). */
#define RB_PAD 64u
/* Blocks this short are appended whole to the carry and scanned there
 * once, with the windows that straddle their start: one scan per block
 * instead of two (the carry's, then the block's). */
#define RB_STAGE_MAX 64u
/* Carried starts up to this many are checked by the scalar scan. */
#define RB_SCALAR_CARRY 4u

/*
 * The linear search that takes over when verifies cost too much: a
 * Knuth-Morris-Pratt automaton over the folded pattern, fed first the
 * bytes already in hand (@held, @nheld pieces, the first of them starting
 * at window start @at), then blocks from stream offset @want on.  Every
 * byte is looked at once, so the call stays O(n + patlen).
 */
struct rb_piece {
	const u8 *p;
	size_t n;
};

static unsigned int
rb_find_linear(struct ts_config *conf, const struct ts_provider *pv,
	       struct ts_state *state, const struct rb_piece *held,
	       unsigned int nheld, uint64_t at, uint64_t want)
{
	const struct rb *r = ts_config_priv(conf);
	const unsigned int m = r->len;
	struct rb_piece cur;
	unsigned int j = 0, k = 0, n;
	uint64_t end = at; /* stream offset of the next byte fed */
	const u8 *blk;

	for (;;) {
		if (k < nheld) {
			cur = held[k++];
		} else {
			if (want > UINT_MAX - 1)
				return UINT_MAX;
			n = ts_provider_next(pv, (unsigned int)want, &blk,
					     state);
			if (!n)
				return UINT_MAX;
			cur.p = blk;
			cur.n = n;
			want += n;
		}
		for (size_t i = 0; i < cur.n; i++) {
			u8 c = r->fold[cur.p[i]];

			while (j && r->folded[j] != c)
				j = r->border[j - 1];
			if (r->folded[j] == c && ++j == m) {
				uint64_t found = end + i + 1 - m;

				if (found + m > UINT_MAX)
					return UINT_MAX;
				state->offset = (unsigned int)(found + m);
				return (unsigned int)found;
			}
		}
		end += cur.n;
	}
}

#if RB_X86
/*
 * The block loop on AVX-512 with VBMI, for patterns up to 64 bytes, where
 * what a block costs besides its scan matters most (short blocks).
 * Register A holds the 64 stream bytes before the block (those before pos
 * are never looked at), B the block's first 64 (or fewer).  The window
 * starts bstart - (len - 1) + j, j in [0, 64), are every start that
 * straddles the boundary and the first ones inside the block; their
 * filter bytes at offset i are lanes 64 - (len - 1) + i + j of the 128
 * bytes (A, B), so one two-register byte permute per filter tests them
 * all.  Nothing is copied to memory and loaded again (a load right after
 * the store it needs would wait for it), and no scan is called for a
 * block of up to 64 bytes; a longer one is scanned in place from the
 * first start not yet tested.  A block of 64 bytes or more is loaded with
 * plain loads, since a masked load costs several plain ones on some CPUs.
 */
#define RB_SMALL_MAXLEN 64u
/* Patterns this short test every byte in the block loop, not a filter. */
#define RB_SMALL_ALL 4u
#define RB_TARGET_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

enum rb_small_end {
	RB_SMALL_END,
	RB_SMALL_FOUND,
	RB_SMALL_GIVEUP,
	RB_SMALL_BLOCK
};

struct rb_small {
	uint64_t pos, want; /* in: as in rb_find(), with the carry */
	uint64_t cbase;
	size_t clen;
	u8 *carry;
	const u8 *blk; /* the first block, of n bytes at want; */
	/* RB_SMALL_BLOCK: a block handed back (carry in the buffer) */
	unsigned int n;
	uint64_t found; /* RB_SMALL_FOUND: the match's start */
	/* RB_SMALL_GIVEUP (in a block's in-place scan): the bytes from
	 * window start at, to want */
	uint64_t at;
	const u8 *held;
	size_t nheld;
	u8 buf[64]; /* A on the way in from the carry, and out */
};

/* Whether the loop takes a block of @n bytes (measured: for one byte the
 * plain scan wins past one vector, for two past 256 bytes). */
static inline bool rb_small_takes(unsigned int m, unsigned int n)
{
	return m > 2 || n <= (m == 1 ? 64u : 256u);
}

RB_TARGET_VBMI static enum rb_small_end
rb_small_vbmi(const struct rb *r, const struct ts_provider *pv,
	      struct ts_state *state, struct rb_small *c, struct rb_work *work)
{
	const unsigned int m = r->len;
	const __m512i iota = _mm512_loadu_si512((const void *)lit_iota);
	const __m512i x0 =
		_mm512_add_epi8(iota, _mm512_set1_epi8((char)(64 - (m - 1))));
	const __m512i x1 = _mm512_add_epi8(x0, _mm512_set1_epi8((char)r->i1));
	const __m512i x2 = _mm512_add_epi8(x0, _mm512_set1_epi8((char)r->i2));
	const __m512i x3 = _mm512_add_epi8(x0, _mm512_set1_epi8((char)r->i3));
	const __m512i o1 = _mm512_set1_epi8((char)r->or1);
	const __m512i k1 = _mm512_set1_epi8((char)r->c1);
	const __m512i o2 = _mm512_set1_epi8((char)r->or2);
	const __m512i k2 = _mm512_set1_epi8((char)r->c2);
	const __m512i o3 = _mm512_set1_epi8((char)r->or3);
	const __m512i k3 = _mm512_set1_epi8((char)r->c3);
	const bool three = r->three;
	__m512i xa[RB_SMALL_ALL], oa[RB_SMALL_ALL], ka[RB_SMALL_ALL];
	uint64_t pos = c->pos, want = c->want, bstart;
	const u8 *blk = c->blk;
	unsigned int n = c->n;
	size_t keep = (size_t)(want - pos);
	__m512i a, b;

	for (unsigned int i = 0; i < m && i < RB_SMALL_ALL; i++) {
		xa[i] = _mm512_add_epi8(x0, _mm512_set1_epi8((char)i));
		oa[i] = _mm512_set1_epi8((char)r->orv[i]);
		ka[i] = _mm512_set1_epi8((char)r->folded[i]);
	}
	/* A from the carry: bytes [pos, want) end at lane 63 */
	memset(c->buf, 0, 64);
	memcpy(c->buf + 64 - keep, c->carry + (pos - c->cbase), keep);
	a = _mm512_loadu_si512((const void *)c->buf);
	for (;;) {
		/* lanes of B, and of the starts j it completes */
		__mmask64 kn = n >= 64 ? ~(__mmask64)0 :
					 (((__mmask64)1 << n) - 1);
		/* starts before pos are settled */
		unsigned int jlo = (unsigned int)(pos - (want - (m - 1)));
		unsigned long long mask;

		bstart = want;
		b = n >= 64 ? _mm512_loadu_si512((const void *)blk) :
			      _mm512_maskz_loadu_epi8(kn, blk);
		if (m <= RB_SMALL_ALL) {
			/* every byte, without a branch on the filter's
			 * survivors (frequent for so short a pattern) */
			mask = kn & (~0ull << jlo);
			for (unsigned int i = 0; i < m; i++)
				mask &= _mm512_cmpeq_epi8_mask(
					_mm512_or_si512(_mm512_permutex2var_epi8(
								a, xa[i], b),
							oa[i]),
					ka[i]);
			goto verified;
		}
		mask = _mm512_cmpeq_epi8_mask(
			       _mm512_or_si512(
				       _mm512_permutex2var_epi8(a, x1, b), o1),
			       k1) &
		       _mm512_cmpeq_epi8_mask(
			       _mm512_or_si512(
				       _mm512_permutex2var_epi8(a, x2, b), o2),
			       k2) &
		       kn & (~0ull << jlo);
		if (three && mask)
			mask &= _mm512_cmpeq_epi8_mask(
				_mm512_or_si512(
					_mm512_permutex2var_epi8(a, x3, b), o3),
				k3);
		/* the survivors, verified in the registers: every pattern
		 * byte by the same OR-and-compare as the filter, which is
		 * exact for TS_IGNORECASE too; O(len) vector steps for 64
		 * starts, so no verify budget is needed here */
		for (unsigned int i = 0; mask && i < m; i++)
			mask &= _mm512_cmpeq_epi8_mask(
				_mm512_or_si512(
					_mm512_permutex2var_epi8(
						a,
						_mm512_add_epi8(
							x0, _mm512_set1_epi8(
								    (char)i)),
						b),
					_mm512_set1_epi8((char)r->orv[i])),
				_mm512_set1_epi8((char)r->folded[i]));
verified:
		if (mask) {
			c->found = bstart - (m - 1) +
				   (uint64_t)__builtin_ctzll(mask);
			return RB_SMALL_FOUND;
		}
		if (n > 64) {
			/* the starts from 65 - m on lie in the block */
			size_t q;

			work->sbase = bstart;
			q = r->scan(r, blk, 65 - m, n, work);
			if (q == RB_GIVEUP) {
				c->at = bstart + work->stop;
				c->held = blk + work->stop;
				c->nheld = n - work->stop;
				c->want = bstart + n;
				return RB_SMALL_GIVEUP;
			}
			if (q != RB_NONE) {
				c->found = bstart + q;
				return RB_SMALL_FOUND;
			}
		}
		/* A: the last 64 bytes of (A, block) */
		if (n >= 64)
			a = _mm512_loadu_si512((const void *)(blk + n - 64));
		else
			a = _mm512_permutex2var_epi8(
				a,
				_mm512_add_epi8(iota,
						_mm512_set1_epi8((char)n)),
				b);
		want = bstart + n;
		if (want + 1 > pos + m)
			pos = want + 1 - m;
		/* a match from pos must end by UINT_MAX (want < pos + m) */
		if (pos + m > UINT_MAX)
			return RB_SMALL_END;
		n = ts_provider_next(pv, (unsigned int)want, &blk, state);
		if (!n)
			return RB_SMALL_END;
		if (!rb_small_takes(m, n)) {
			/* a one- or two-byte pattern has little or no carry
			 * to pay the permutes in a long block: hand it back */
			keep = (size_t)(want - pos);
			_mm512_storeu_si512((void *)c->buf, a);
			memcpy(c->carry, c->buf + 64 - keep, keep);
			c->cbase = pos;
			c->clen = keep;
			c->pos = pos;
			c->want = want;
			c->blk = blk;
			c->n = n;
			return RB_SMALL_BLOCK;
		}
	}
}
#else
#define RB_SMALL_MAXLEN 0u
#endif

/* Move @len carry bytes down from @src to @dst < @src, 16 at a time (the
 * carry's padding takes the overshoot): a call to memmove would cost more
 * than the few bytes a boundary keeps. */
static inline void rb_move_down(u8 *dst, const u8 *src, size_t len)
{
	for (size_t i = 0; i < len; i += 16) {
		u8 t[16];

		memcpy(t, src + i, 16);
		memcpy(dst + i, t, 16);
	}
}

/*
 * Search from state->offset.  pos is the first window start not yet ruled
 * out; want the stream offset of the next block to ask for.  The carry
 * holds stream bytes [cbase, want) with cbase <= pos and, while pos <
 * want, want - pos < len (fewer than a window: that is why more is
 * needed).  Returns the match start and sets state->offset to its end, or
 * UINT_MAX (with errno ENOMEM if a long pattern's carry could not be
 * allocated).
 */
static unsigned int rb_find(struct ts_config *conf, struct ts_state *state)
{
	const struct rb *r = ts_config_priv(conf);
	const size_t m = r->len;
	/* a boundary's carry: up to m - 1 bytes on each side */
	const size_t cap = 2 * ((size_t)m - 1);
	/* a short block staged after up to m - 1 bytes of carry */
	const size_t stage = (size_t)m - 1 + RB_STAGE_MAX;
	const size_t size = (cap > stage ? cap : stage) + RB_PAD;
	uint64_t pos = state->offset, want = pos, cbase = pos, bstart, found;
	u8 stack[RB_STACK_CARRY], *carry = stack;
	size_t clen = 0, off;
	unsigned int n, ret = UINT_MAX;
	const u8 *blk;
	struct rb_work work = {
		.start = pos,
		.slack = RB_WORK_SLACK + 4 * (uint64_t)m,
	};
	struct rb_piece held[2];
#if RB_X86
	struct rb_small sm;
#endif
	struct ts_provider pv;

	ts_provider_resolve(conf, state, &pv);

	if (size > sizeof(stack)) {
		carry = malloc(size);
		if (!carry) {
			errno = ENOMEM;
			return UINT_MAX;
		}
	}
	/* the padding is loaded by the padded scans, never looked at: keep
	 * it defined (the VBMI loop never runs them; a call per match makes
	 * the memset show) */
	if (!r->small)
		memset(carry, 0, size);
	for (;;) {
		/* a match starting at pos or later must end by UINT_MAX; and
		 * want < pos + m, so want fits in the provider's argument */
		if (pos + m > UINT_MAX)
			break;
		n = ts_provider_next(&pv, (unsigned int)want, &blk, state);
		if (!n)
			break;
		bstart = want;
#if RB_X86
		if (r->small && rb_small_takes(m, n)) {
			sm.pos = pos;
			sm.want = want;
			sm.cbase = cbase;
			sm.clen = clen;
			sm.carry = carry;
			sm.blk = blk;
			sm.n = n;
			switch (rb_small_vbmi(r, &pv, state, &sm, &work)) {
			case RB_SMALL_FOUND:
				found = sm.found;
				if (found + m > UINT_MAX)
					goto out;
				goto match;
			case RB_SMALL_GIVEUP:
				held[0].p = sm.held;
				held[0].n = sm.nheld;
				ret = rb_find_linear(conf, &pv, state, held, 1,
						     sm.at, sm.want);
				goto out;
			case RB_SMALL_END:
				goto out;
			case RB_SMALL_BLOCK:
				break;
			}
			pos = sm.pos;
			want = sm.want;
			cbase = sm.cbase;
			clen = sm.clen;
			blk = sm.blk;
			n = sm.n;
			bstart = want;
		}
#endif

		if (n <= RB_STAGE_MAX) {
			/* a short block: append it whole to the carry and
			 * scan every start from pos in one go */
			size_t dead = (size_t)(pos - cbase), from_c, q;

			if (clen + n > stage) {
				rb_move_down(carry, carry + dead, clen - dead);
				clen -= dead;
				cbase = pos;
			}
			memcpy(carry + clen, blk, n);
			clen += n;
			want = bstart + n;
			from_c = (size_t)(pos - cbase);
			if (clen >= m && from_c <= clen - m) {
				work.sbase = cbase;
				q = r->pscan(r, carry, from_c, clen, &work);
				if (q == RB_GIVEUP) {
					held[0].p = carry + work.stop;
					held[0].n = clen - work.stop;
					ret = rb_find_linear(conf, &pv, state,
							     held, 1,
							     cbase + work.stop,
							     want);
					goto out;
				}
				if (q != RB_NONE) {
					found = cbase + q;
					if (found + m > UINT_MAX)
						goto out;
					goto match;
				}
				pos = cbase + clen - m + 1;
			}
			/* keep [pos, want): fewer than m bytes */
			dead = (size_t)(pos - cbase);
			if (dead) {
				rb_move_down(carry, carry + dead, clen - dead);
				clen -= dead;
				cbase = pos;
			}
			continue;
		}

		if (pos < bstart) {
			/* windows from pos straddle the boundary: append at
			 * most m - 1 bytes, which completes all of them unless
			 * the block is shorter; the carry is then scanned like
			 * a block, for the starts before bstart */
			size_t take = n < m - 1 ? n : m - 1, from_c, end_c, q;
			uint64_t next = pos;

			if (clen + take > cap) {
				size_t dead = (size_t)(pos - cbase);

				rb_move_down(carry, carry + dead, clen - dead);
				clen -= dead;
				cbase = pos;
			}
			memcpy(carry + clen, blk, take);
			clen += take;
			from_c = (size_t)(pos - cbase);
			end_c = (size_t)(bstart - cbase) - 1 + m;
			if (end_c > clen)
				end_c = clen;
			if (end_c >= m && from_c <= end_c - m) {
				/* a few starts: a vector scan's setup would
				 * cost more than checking them one by one */
				work.sbase = cbase;
				q = end_c - m - from_c < RB_SCALAR_CARRY ?
					    rb_scan_few(r, carry, from_c, end_c,
							&work) :
					    r->pscan(r, carry, from_c, end_c,
						     &work);
				if (q == RB_GIVEUP) {
					/* the carry from the start not yet
					 * verified, then the rest of this
					 * block */
					held[0].p = carry + work.stop;
					held[0].n = clen - work.stop;
					held[1].p = blk + take;
					held[1].n = n - take;
					ret = rb_find_linear(conf, &pv, state,
							     held, 2,
							     cbase + work.stop,
							     bstart + n);
					goto out;
				}
				if (q != RB_NONE) {
					found = cbase + q;
					if (found + m > UINT_MAX)
						goto out;
					goto match;
				}
				next = cbase + end_c - m + 1;
			}
			if (next < bstart) {
				/* take == n: the whole block is in the carry */
				pos = next;
				want = bstart + n;
				continue;
			}
			clen = 0;
		}
		/* here pos == bstart: scan the windows inside the block */
		pos = bstart;
		off = 0;
		if (n >= m) {
			size_t q;

			work.sbase = bstart;
			q = r->scan(r, blk, 0, n, &work);
			if (q == RB_GIVEUP) {
				held[0].p = blk + work.stop;
				held[0].n = n - work.stop;
				ret = rb_find_linear(conf, &pv, state, held, 1,
						     bstart + work.stop,
						     bstart + n);
				goto out;
			}
			if (q != RB_NONE) {
				found = bstart + q;
				if (found + m > UINT_MAX)
					break;
				goto match;
			}
			off = n - m + 1;
		}
		/* starts [off, n) need the next block: keep them (< m) */
		pos = bstart + off;
		cbase = pos;
		clen = n - off;
		memcpy(carry, blk + off, clen);
		want = bstart + n;
	}
	goto out;
match:
	state->offset = (unsigned int)(found + m);
	ret = (unsigned int)found;
out:
	if (carry != stack)
		free(carry);
	return ret;
}

/* ---- setup -------------------------------------------------------------- */

/* Set the filter from the positions rarebyte_choose.h picks. */
static void rb_choose(struct rb *r)
{
	const unsigned int m = r->len;

	rb_choose_positions(r->folded, m, r->icase, &r->i1, &r->i2);
	/* A third filter costs a load and a compare per vector; it pays
	 * where verifies are dear, in long patterns (measured on the bench
	 * corpus: a loss up to 8 bytes, a gain of up to 3x from 16). */
	r->three = m >= RB_THREE_FILTERS_FROM;
	r->i3 = r->three ?
			rb_choose_third(r->folded, m, r->icase, r->i1, r->i2) :
			r->i2;
	r->imax = r->i1 > r->i2 ? r->i1 : r->i2;
	if (r->i3 > r->imax)
		r->imax = r->i3;
	r->c1 = r->folded[r->i1];
	r->c2 = r->folded[r->i2];
	r->c3 = r->folded[r->i3];
	r->or1 = rb_fold_or(r->c1, r->icase);
	r->or2 = rb_fold_or(r->c2, r->icase);
	r->or3 = rb_fold_or(r->c3, r->icase);
	/* one byte: i1 == i2 covers it; two: i1 and i2 are 0 and 1 */
	r->exact = m <= 2;
}

/* border[i]: the length of the longest proper prefix of folded[0..i] that
 * is also its suffix (the linear search's fallback table). */
static void rb_fill_borders(struct rb *r)
{
	unsigned int i, k = 0;

	r->border[0] = 0;
	for (i = 1; i < r->len; i++) {
		while (k && r->folded[i] != r->folded[k])
			k = r->border[k - 1];
		if (r->folded[i] == r->folded[k])
			k++;
		r->border[i] = k;
	}
}

static struct ts_config *rb_init_level(const void *pattern, unsigned int len,
				       gfp_t gfp_mask, int flags,
				       enum rb_level wanted)
{
	struct ts_config *conf;
	struct rb *r;
	size_t payload, cap, border;
	unsigned int i;

	if (!len)
		return ERR_PTR(-EINVAL);
	/* payload = struct + the border table + two copies of the pattern;
	 * the carry's size must be computable too */
	/* the stream table first, right after the struct (8-byte words) */
	if (!ts_size_mul(len, sizeof(*r->border), &border) ||
	    !ts_size_add(sizeof(*r),
			 len <= LIT_MAX ? sizeof(struct lit_tab) : 0,
			 &payload) ||
	    !ts_size_add(payload, border, &payload) ||
	    !ts_size_add(payload, len, &payload) ||
	    !ts_size_add(payload, len, &payload) ||
	    !ts_size_add(payload, len, &payload) ||
	    !ts_size_mul((size_t)len - 1, 2, &cap))
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(payload, gfp_mask);
	if (IS_ERR(conf))
		return conf;
	r = ts_config_priv(conf);
	r->len = len;
	r->icase = flags & TS_IGNORECASE;
	/* then the unsigned ints, for alignment */
	r->stab = len <= LIT_MAX ? (struct lit_tab *)(r + 1) : NULL;
	r->border = r->stab ? (unsigned int *)(r->stab + 1) :
			      (unsigned int *)(r + 1);
	r->folded = (u8 *)(r->border + len);
	r->pattern = r->folded + len;
	r->orv = r->pattern + len;
	ts_fill_fold_table(r->fold, r->icase);
	memcpy(r->pattern, pattern, len);
	for (i = 0; i < len; i++) {
		r->folded[i] = r->fold[r->pattern[i]];
		r->orv[i] = rb_fold_or(r->folded[i], r->icase);
	}
	rb_fill_borders(r);
	rb_choose(r);
	if (r->stab)
		lit_tab_fill(r->stab, r->pattern, len, flags);
	r->level = rb_level_for(wanted);
	r->scan = rb_scans[r->level][r->three];
	r->pscan = rb_pscans[r->level][r->three];
	r->small = r->level == RB_AVX512 && rb_vbmi && len <= RB_SMALL_MAXLEN;
	return conf;
}

#define RB_INIT(suffix, lvl)                                                 \
	static struct ts_config *rb_init_##suffix(const void *pattern,       \
						  unsigned int len,          \
						  gfp_t gfp_mask, int flags) \
	{                                                                    \
		return rb_init_level(pattern, len, gfp_mask, flags, lvl);    \
	}
RB_INIT(best, RB_AVX512)
RB_INIT(avx512, RB_AVX512)
RB_INIT(avx2, RB_AVX2)
RB_INIT(sse2, RB_SSE2)
RB_INIT(scalar, RB_SCALAR)

const struct lit_tab *rb_stream_table(struct ts_config *conf)
{
	return ((struct rb *)ts_config_priv(conf))->stab;
}

static void *rb_get_pattern(struct ts_config *conf)
{
	return ((struct rb *)ts_config_priv(conf))->pattern;
}

static unsigned int rb_get_pattern_len(struct ts_config *conf)
{
	return ((struct rb *)ts_config_priv(conf))->len;
}

/* "rarebyte" streams with its own engine (literal_stream.c); the pinned
 * levels stream through their find, which is what they are there to test. */
#define RB_OPS(var, str, suffix, streaming)            \
	struct ts_ops var = {                          \
		.name = str,                           \
		.init = rb_init_##suffix,              \
		.find = rb_find,                       \
		.get_pattern = rb_get_pattern,         \
		.get_pattern_len = rb_get_pattern_len, \
		.stream = &streaming,                  \
	}
RB_OPS(ts_rarebyte_ops, "rarebyte", best, ts_rarebyte_stream_ops);
RB_OPS(ts_rarebyte_avx512_ops, "rarebyte_avx512", avx512,
       ts_literal_stream_ops);
RB_OPS(ts_rarebyte_avx2_ops, "rarebyte_avx2", avx2, ts_literal_stream_ops);
RB_OPS(ts_rarebyte_sse2_ops, "rarebyte_sse2", sse2, ts_literal_stream_ops);
RB_OPS(ts_rarebyte_scalar_ops, "rarebyte_scalar", scalar,
       ts_literal_stream_ops);
