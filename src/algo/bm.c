/*
 * bm.c - Boyer-Moore, with the bad-character and the (strong) good-suffix
 * rules.
 *
 * A window of patlen bytes is compared right to left; on a mismatch it moves
 * right by the larger of the two rules' shifts, so most of the data is never
 * looked at and get_next_block() is asked straight for the next window,
 * skipping whatever lies between.
 *
 * Unlike the kernel's ts_bm, matches that straddle block boundaries are
 * found: when the current window runs past the end of a block, the bytes of
 * that block the window (or any later one) may still need are copied into a
 * carry buffer, at most patlen - 1 bytes per boundary, and windows are then
 * compared partly from the carry and partly from the new block.  The carry
 * lives in find()'s stack frame for short patterns and on the heap for long
 * ones; the config itself is only read during a search.
 */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bm {
	unsigned int len;
	unsigned int bad[256]; /* 1 + last index of each (folded) byte, or 0 */
	u8 fold[256];	       /* identity unless TS_IGNORECASE */
	unsigned int *good;    /* good[j]: shift after a mismatch at pat[j] */
	u8 *folded;	       /* the pattern through fold[] */
	u8 *pattern;	       /* as the caller gave it */
};

/* Carry bytes kept on the stack; longer patterns allocate. */
#define BM_STACK_CARRY 512

/*
 * Per-search state, on find()'s stack.  The current block holds stream bytes
 * [bstart, bend); the carry holds [cbase, cbase + clen), which ends at bstart
 * whenever a window straddles the two.  Offsets are 64-bit so that window
 * arithmetic never wraps; the stream itself ends at UINT_MAX.
 */
struct bm_scan {
	const u8 *blk;
	uint64_t bstart, bend;
	u8 *carry;
	uint64_t cbase;
	size_t clen, cap;
	bool heap;
	u8 stack[BM_STACK_CARRY];
};

/*
 * About to leave the current block while the window at @pos still reaches
 * past its end: keep the bytes from max(pos, bstart) to bend, which the
 * window or a later one may need (later windows start at or after @pos).
 * They number at most len - 1, because pos + len > bend.
 *
 * The carry has room for 2 * (len - 1) bytes and is compacted (the bytes
 * before @pos dropped) only when full, so each byte is moved at most about
 * once more after being copied.  false if the carry cannot be allocated.
 */
static bool bm_carry_keep(struct bm_scan *s, unsigned int len, uint64_t pos)
{
	const u8 *src = s->blk;
	size_t add, dead;

	if (pos >= s->bstart) {
		/* the window starts in this block: the old carry is dead */
		src = s->blk + (pos - s->bstart);
		s->cbase = pos;
		s->clen = 0;
	}
	add = (size_t)(s->bend - (s->cbase + s->clen));

	if (!s->cap) {
		size_t cap;

		if (!ts_size_mul((size_t)len - 1, 2, &cap))
			return false;
		if (cap > sizeof(s->stack)) {
			s->carry = malloc(cap);
			if (!s->carry)
				return false;
			s->heap = true;
		}
		s->cap = cap;
	}
	if (s->clen + add > s->cap) {
		dead = (size_t)(pos - s->cbase);
		memmove(s->carry, s->carry + dead, s->clen - dead);
		s->clen -= dead;
		s->cbase = pos;
	}
	memcpy(s->carry + s->clen, src, add);
	s->clen += add;
	return true;
}

/*
 * Search from state->offset.  Returns the stream offset of the first match
 * and sets state->offset to its end, or UINT_MAX.  If the carry for a long
 * pattern cannot be allocated, the search gives up: UINT_MAX with errno set
 * to ENOMEM.
 */
static unsigned int bm_find(struct ts_config *conf, struct ts_state *state)
{
	const struct bm *b = ts_config_priv(conf);
	const unsigned int m = b->len;
	struct bm_scan s;
	uint64_t pos = state->offset, end;
	unsigned int ret = UINT_MAX;
	struct ts_provider pv;

	ts_provider_resolve(conf, state, &pv);
	s.blk = NULL;
	s.bstart = s.bend = pos;
	s.carry = s.stack;
	s.cbase = pos;
	s.clen = 0;
	s.cap = 0;
	s.heap = false;

	for (;;) {
		const u8 *head, *tail;
		unsigned int j, k, shift, bc;
		u8 c;

		end = pos + m;
		if (end > UINT_MAX)
			break; /* the match could not be reported */

		if (end > s.bend) {
			/* the window needs more data than we hold */
			uint64_t want;
			unsigned int n;

			if (pos < s.bend) {
				if (!bm_carry_keep(&s, m, pos)) {
					errno = ENOMEM;
					break;
				}
				want = s.bend;
			} else {
				/* nothing held is needed: jump ahead */
				s.cbase = pos;
				s.clen = 0;
				want = pos;
			}
			/* want < end <= UINT_MAX: fits, never goes back */
			n = ts_provider_next(&pv, (unsigned int)want, &s.blk,
					     state);
			if (!n)
				break;
			/* 64-bit: a provider claiming bytes past UINT_MAX
			 * cannot wrap bend, and end <= UINT_MAX above keeps
			 * them out of any window */
			s.bstart = want;
			s.bend = want + n;
			continue;
		}

		/*
		 * Window bytes [0, k) are in the carry (from head), bytes
		 * [k, m) in the block (tail[j - k]).
		 */
		if (pos >= s.bstart) {
			k = 0;
			head = NULL;
			tail = s.blk + (pos - s.bstart);
		} else {
			k = (unsigned int)(s.bstart - pos);
			head = s.carry + (pos - s.cbase);
			tail = s.blk;
		}
		j = m;
		while (j > k && b->fold[tail[j - 1 - k]] == b->folded[j - 1])
			j--;
		if (j == k)
			while (j && b->fold[head[j - 1]] == b->folded[j - 1])
				j--;
		if (!j) {
			state->offset = (unsigned int)end;
			ret = (unsigned int)pos;
			break;
		}

		/* mismatch at pattern index j - 1 */
		j--;
		c = b->fold[j < k ? head[j] : tail[j - k]];
		bc = j + 1 > b->bad[c] ? j + 1 - b->bad[c] : 0;
		shift = b->good[j] > bc ? b->good[j] : bc;
		pos += shift;
	}

	if (s.heap)
		free(s.carry);
	return ret;
}

/*
 * suff[i] = length of the longest common suffix of pat[0..i] and pat.
 * Read backwards, this is the Z-function of the reversed pattern
 * (suff[m-1-x] = Z[x]), computed in O(m) with the usual box [l, r) of the
 * rightmost stretch already known to repeat the pattern's end.
 */
static void bm_suffixes(const u8 *pat, unsigned int m, unsigned int *suff)
{
	unsigned int x, z, l = 0, r = 0;

#define RP(i) pat[m - 1 - (i)] /* the reversed pattern */
	suff[m - 1] = m;
	for (x = 1; x < m; x++) {
		z = 0;
		if (x < r) {
			z = suff[m - 1 - (x - l)];
			if (z > r - x)
				z = r - x;
		}
		while (x + z < m && RP(z) == RP(x + z))
			z++;
		if (x + z > r) {
			l = x;
			r = x + z;
		}
		suff[m - 1 - x] = z;
	}
#undef RP
}

/*
 * good[j]: after pat[j+1..m-1] matched and pat[j] did not, the smallest
 * shift s > 0 that lines up again everything known about the text:
 *   (a) pat[i - s] == pat[i] for every matched i (j < i < m, i - s >= 0),
 *   (b) and, the strong rule, pat[j - s] != pat[j] when j - s >= 0.
 * Two kinds of s qualify:
 *   1. s <= j: the matched suffix recurs ending at i = m-1-s, preceded by
 *      a different byte, i.e. suff[i] == m-1-j exactly.  So each i < m-1
 *      offers s = m-1-i to j = m-1-suff[i]; scanning i upwards leaves the
 *      smallest s.
 *   2. s > j: only a prefix of the pattern overlaps the matched suffix, so
 *      pat[0..m-1-s] must be a border of the pattern (suff[i] == i+1 for
 *      i = m-1-s); the widest border gives the smallest s, for all j < s.
 * A kind-1 shift is always smaller than a kind-2 one, so it overrides; s = m
 * (no overlap) is always valid.
 */
static void bm_good_suffix(const unsigned int *suff, unsigned int m,
			   unsigned int *good)
{
	unsigned int i, j;

	for (j = 0; j < m; j++)
		good[j] = m;
	/* kind 2: borders widest first (i from m-2 down), j only grows */
	for (i = m - 1, j = 0; i-- > 0;)
		if (suff[i] == i + 1)
			for (; j < m - 1 - i; j++)
				good[j] = m - 1 - i;
	/* kind 1 */
	for (i = 0; i + 1 < m; i++)
		good[m - 1 - suff[i]] = m - 1 - i;
}

static struct ts_config *bm_init(const void *pattern, unsigned int len,
				 gfp_t gfp_mask, int flags)
{
	struct ts_config *conf;
	struct bm *b;
	unsigned int *suff;
	size_t table, payload;
	unsigned int i;

	if (!len)
		return ERR_PTR(-EINVAL);
	/* payload = struct + good-suffix table + two copies of the pattern */
	if (!ts_size_mul(len, sizeof(unsigned int), &table) ||
	    !ts_size_add(sizeof(*b), table, &payload) ||
	    !ts_size_add(payload, len, &payload) ||
	    !ts_size_add(payload, len, &payload))
		return ERR_PTR(-EINVAL);
	/* scratch for the suffix lengths, only needed while building */
	suff = malloc(table);
	if (!suff)
		return ERR_PTR(-ENOMEM);
	conf = alloc_ts_config(payload, gfp_mask);
	if (IS_ERR(conf)) {
		free(suff);
		return conf;
	}
	b = ts_config_priv(conf);
	b->len = len;
	b->good = (unsigned int *)(b + 1);
	b->folded = (u8 *)(b->good + len);
	b->pattern = b->folded + len;
	ts_fill_fold_table(b->fold, flags & TS_IGNORECASE);
	memcpy(b->pattern, pattern, len);
	for (i = 0; i < len; i++) {
		b->folded[i] = b->fold[b->pattern[i]];
		/* the shift puts the last occurrence of a byte under it */
		b->bad[b->folded[i]] = i + 1;
	}
	bm_suffixes(b->folded, len, suff);
	bm_good_suffix(suff, len, b->good);
	free(suff);
	return conf;
}

static void *bm_get_pattern(struct ts_config *conf)
{
	return ((struct bm *)ts_config_priv(conf))->pattern;
}

static unsigned int bm_get_pattern_len(struct ts_config *conf)
{
	return ((struct bm *)ts_config_priv(conf))->len;
}

struct ts_ops ts_bm_ops = {
	.name = "bm",
	.init = bm_init,
	.find = bm_find,
	.get_pattern = bm_get_pattern,
	.get_pattern_len = bm_get_pattern_len,
	.stream = &ts_literal_stream_ops,
};
