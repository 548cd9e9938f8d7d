/*
 * ac.c - Aho-Corasick, for sets of patterns.
 *
 * The trie is numbered breadth first, so the states a search visits most
 * (the root and its first levels) come first.  The first of them, as
 * many as fit in 1 MiB (or 4 bytes per state for large sets, up to 16
 * MiB), are a full DFA: a row of transitions each, one per class of bytes
 * (ac_classes(); 4 bytes per transition, the high bit telling whether the
 * target ends a pattern), so a step among them is one load.  The others are compact: the children of
 * a state are consecutive states (their edge bytes in their records),
 * and a byte that has no child follows the failure link until a dense
 * state takes it.  About 21 bytes per trie state and 20 per pattern.
 *
 * The trie is built straight from a breadth-first radix sort of the
 * patterns: each range of the sort whose patterns share a prefix of d
 * bytes is one state, its sub-ranges by byte d its children, so states
 * are numbered in breadth-first order as they are made, without a hash
 * table or per-node child lookups.  Then one pass in that order sets the
 * failure links, the longest pattern ending at each state and the dense
 * rows.
 *
 * Sets of 64 patterns or more also have a prefilter, a bitmap of hashed
 * pattern prefixes that skips the text where no pattern starts (see
 * ac_fhash()); where the patterns are long, a table of how far the text
 * may be skipped leaps over most positions without probing them (see
 * ac_shash()); and TS_OVERLAP resumes with a walk down the trie from the
 * last match's start (ac_anchored()).
 *
 * A search carries only the state (a number) from block to block.  Which
 * occurrence to report, and when it is final, is ts_set_best's rule
 * (internal.h), with the state's depth as the lookahead bound.
 */
#define _DEFAULT_SOURCE /* madvise */
#include "internal.h"
#include "textsearch_stream.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define AC_NONE UINT32_MAX
#define AC_OUT 0x80000000u /* in a transition: the target ends a pattern */
#define AC_MAX_STATES 0x7fffffffu
/* reserved up front at most (1.25 GiB of states); more are grown into */
#define AC_RESERVE_STATES (1u << 26)
/* 1024 rows of 1 KiB: the DFA part stays in L2 */
#define AC_DENSE_MIN ((size_t)1 << 20)
/* and at most 16 MiB of them */
#define AC_DENSE_MAX ((size_t)16 << 20)
/* ranges smaller than this are split by insertion sort, not counting */
#define AC_SMALL_RANGE 32u

struct ac_state {
	uint32_t fail;	/* longest proper suffix that is a state */
	uint32_t first; /* first child; the children are consecutive */
	uint32_t depth;
	uint32_t term;	 /* longest pattern ending here, or AC_NONE */
	uint16_t nchild; /* up to 256 */
	u8 label;	 /* byte on the edge into this state */
};

/* A distinct pattern (after folding): its length, the ids that have it
 * (ascending, in ac->ids) and the next shorter pattern that is a suffix
 * of it, for TS_OVERLAP. */
struct ac_term {
	uint32_t len;
	uint32_t ids;
	uint32_t nids;
	uint32_t next;
};

struct ac {
	uint32_t nstates, ndense, nterms, count;
	u8 fold[256];
	u8 cls[256];	 /* byte class: 0 for bytes in no pattern */
	uint32_t shift;	 /* a dense row has 1 << shift transitions */
	uint32_t *dense; /* ndense rows */
	struct ac_state *state;
	struct ac_term *term;
	uint32_t *ids;
	/* the prefilter (ac_filter_build()): fk bytes hashed, 0 for none */
	uint32_t fk, fshift;
	uint64_t fmask, fcase;
	uint64_t *filter;
	/* the skip table (ac_shash()), NULL for none: 1 << (32 -
	 * sshift) entries, windows of wlen bytes */
	u8 *skip;
	uint32_t wlen, sshift, scase;
	u8 *ddepth; /* the depth of each dense state, 255 for 255 and more */
	unsigned int len0; /* pattern 0, for get_pattern */
	u8 pattern0[];
};

/* Memory for the large tables: in huge pages where the system gives them
 * on request, as a million patterns make a few hundred megabytes that
 * would otherwise take a page fault every 4 KiB. */
static void *ac_alloc(size_t bytes)
{
	const size_t huge = (size_t)2 << 20;
	void *p;

	if (bytes < huge)
		return malloc(bytes);
	if (posix_memalign(&p, huge, bytes))
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
	return p;
}

static inline uint32_t ac_flag(const struct ac *a, uint32_t s)
{
	return a->state[s].term != AC_NONE ? s | AC_OUT : s;
}

/* The child of compact state @s on (folded) byte @c, or AC_NONE. */
static inline uint32_t ac_child(const struct ac *a, uint32_t s, u8 c)
{
	const struct ac_state *st = &a->state[s];
	uint32_t lo = st->first, n = st->nchild, hi;

	if (n <= 8) {
		for (hi = lo + n; lo < hi; lo++)
			if (a->state[lo].label == c)
				return lo;
		return AC_NONE;
	}
	hi = lo + n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a->state[mid].label < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->first + n && a->state[lo].label == c ? lo : AC_NONE;
}

/* One step from state @s on data byte @b: the next state, with AC_OUT. */
static uint32_t ac_step(const struct ac *a, uint32_t s, u8 b)
{
	u8 c = a->fold[b];

	while (s >= a->ndense) {
		uint32_t v = ac_child(a, s, c);

		if (v != AC_NONE)
			return ac_flag(a, v);
		s = a->state[s].fail;
	}
	return a->dense[(size_t)s << a->shift | a->cls[b]];
}

/*
 * The prefilter.  Large sets spend their time in the automaton's compact
 * part, one cache miss a byte or more, and much text can start none of
 * the patterns.  A bitmap holds a hash of the first fk bytes of every
 * pattern (fk = the shortest pattern's length, at most 8); a position
 * whose next fk bytes miss the bitmap starts no pattern, and is no
 * "candidate".
 *
 * The automaton's state at position i stands for the text from
 * start = i - depth.  When no position in [start, i) is a candidate,
 * nothing the state remembers can become a match (a match needs a
 * candidate start), so the automaton may restart at the root at the next
 * candidate: the bytes between are skipped with one bitmap probe each.
 * A state of depth fk or more always starts at a candidate, so only
 * shallow states are checked.  With TS_IGNORECASE the hash is taken over
 * the bytes with bit 0x20 set, which merges every pair of letters that
 * fold to one (and a few others: more candidates, never fewer).
 */
#define AC_FILTER_MIN_COUNT 64

static inline uint32_t ac_fhash(const struct ac *a, const u8 *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	v = (v & a->fmask) | a->fcase;
	return (uint32_t)((v * 0x9e3779b97f4a7c15ULL) >> a->fshift);
}

static inline bool ac_candidate(const struct ac *a, const u8 *p)
{
	uint32_t h = ac_fhash(a, p);

	return a->filter[h >> 6] >> (h & 63) & 1;
}

/* The first candidate in [@j, @lim), or @lim: four probes a round, as
 * they do not depend on one another, with one branch for the four. */
static unsigned int ac_scan(const struct ac *a, const u8 *p, unsigned int j,
			    unsigned int lim)
{
	const uint64_t *f = a->filter;

	for (; j + 4 <= lim; j += 4) {
		uint32_t h0 = ac_fhash(a, p + j), h1 = ac_fhash(a, p + j + 1);
		uint32_t h2 = ac_fhash(a, p + j + 2),
			 h3 = ac_fhash(a, p + j + 3);

		if ((f[h0 >> 6] >> (h0 & 63) | f[h1 >> 6] >> (h1 & 63) |
		     f[h2 >> 6] >> (h2 & 63) | f[h3 >> 6] >> (h3 & 63)) &
		    1)
			break;
	}
	for (; j < lim && !ac_candidate(a, p + j); j++)
		;
	return j;
}

/*
 * The skip table, for sets whose shortest pattern is long (w bytes, at
 * least AC_SKIP_MIN_WINDOW): a pattern starting at position j covers the
 * window [j, j + w), whose last three bytes, a trigram, lie at offset w -
 * 3 - k of a pattern starting at j + k.  skip[h] is the least w - 3 - q
 * over the trigrams at offsets q <= w - 3 of every pattern that hash to
 * h, w - 2 for none: so a window whose last trigram hashes to h has no
 * pattern starting in its first skip[h] positions, and they are passed
 * over without a probe.  Where skip[h] is 0 the window's own start is
 * probed (ac_candidate()), then the next.  The idea is Wu and Manber's
 * for multiple patterns (1994).  With TS_IGNORECASE the trigram is
 * hashed with bit 0x20 set in each byte, as the prefilter's bytes are.
 */
#define AC_SKIP_MAX_BITS 20u
/* more trigrams than this would fill the largest table: no table, and
 * no time spent building one */
#define AC_SKIP_MAX_TRIGRAMS ((uint64_t)2 << AC_SKIP_MAX_BITS)
/* The least average leap worth its steps (see ac_scan_skip()); a table
 * whose average skip is below it is dropped, and so are windows too
 * short to give it. */
#define AC_SKIP_LEAP 8u
#define AC_SKIP_MIN_WINDOW (AC_SKIP_LEAP + 2)

static inline uint32_t ac_shash(const struct ac *a, const u8 *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | a->scase;

	return (v * 0x9e3779b1u) >> a->sshift;
}

/*
 * ac_scan() with the skip table, over windows that lie in the block's @n
 * bytes; the last few positions one by one.  A step's load says where
 * the next one reads, so steps one after the other wait on each other
 * (some 6 ns a step here).  Most skips are the longest, m = w - 2
 * (94 % of them with tspkt's 1,000 rules), so four steps are taken at
 * once, at j, j + m, j + 2m and j + 3m, as if each before were the
 * longest; the first that is not says where the search is.  Leaps
 * shorter than AC_SKIP_LEAP on average cost more than they save (1,000
 * identifiers of 8 to 20 bytes in Python source: 5-12 % slower than a
 * probe per position); then *@leaping is cleared and the rest of the
 * search probes every position.
 */
#define AC_SKIP_JUDGE 16u /* steps between two looks at the average */

static unsigned int ac_scan_skip(const struct ac *a, const u8 *p,
				 unsigned int j, unsigned int lim,
				 unsigned int n, bool *leaping)
{
	const u8 *skip = a->skip;
	const unsigned int w = a->wlen, m = w - 2, from = j;
	unsigned int steps = 0, judge = AC_SKIP_JUDGE;

	while (j < lim && j + w <= n) {
		unsigned int k;

		if (j + 3 * m < lim && j + 3 * m + w <= n) {
			const u8 *e = p + j + w - 3;
			unsigned int k0 = skip[ac_shash(a, e)],
				     k1 = skip[ac_shash(a, e + m)],
				     k2 = skip[ac_shash(a, e + 2 * m)],
				     k3 = skip[ac_shash(a, e + 3 * m)];

			steps += 4;
			/* no skip exceeds m, so only m itself has all its
			 * bits */
			if ((k0 & k1 & k2 & k3) == m) {
				j += 4 * m;
				goto judge;
			}
			k = k0 != m ? k0 : k1 != m ? k1 : k2 != m ? k2 : k3;
			j += m * (k0 != m ? 0 : k1 != m ? 1 : k2 != m ? 2 : 3);
		} else {
			k = skip[ac_shash(a, p + j + w - 3)];
			steps++;
		}
		if (k)
			j += k;
		else if (ac_candidate(a, p + j))
			return j;
		else
			j++;
judge:
		if (steps >= judge) {
			if (j - from < steps * AC_SKIP_LEAP) {
				*leaping = false;
				break;
			}
			judge = steps + AC_SKIP_JUDGE;
		}
	}
	return ac_scan(a, p, j < lim ? j : lim, lim);
}

static inline uint32_t ac_depth(const struct ac *a, uint32_t s)
{
	return s < a->ndense ? a->ddepth[s] : a->state[s].depth;
}

/*
 * Index in @tm's ids of the first copy after @prev_id (the last id
 * reported at this start and end), or tm->nids if none: ids ascend, and a
 * pattern may have a million copies.
 */
static uint32_t ac_copy_after(const struct ac *a, const struct ac_term *tm,
			      unsigned int prev_id)
{
	uint32_t k = 0, hi = tm->nids;

	while (k < hi) {
		uint32_t mid = k + (hi - k) / 2;

		if (a->ids[tm->ids + mid] <= prev_id)
			k = mid + 1;
		else
			hi = mid;
	}
	return k;
}

/* Offer the occurrences ending at @end in state @s (which ends one). */
static void ac_offer(const struct ac *a, uint32_t s, unsigned int end,
		     bool overlap, struct ts_set_best *best, bool have_prev,
		     unsigned int prev_start, unsigned int prev_end,
		     unsigned int prev_id)
{
	uint32_t t = a->state[s].term;

	if (!overlap) {
		/* the longest first: it starts first */
		ts_set_offer(best, false, end - a->term[t].len, end,
			     a->ids[a->term[t].ids]);
		return;
	}
	/* longest to shortest, so starts ascend: the first that may be
	 * reported is this end's best */
	for (; t != AC_NONE; t = a->term[t].next) {
		const struct ac_term *tm = &a->term[t];
		unsigned int start = end - tm->len;
		uint32_t k = 0;

		if (best->have && start >= best->start)
			return;
		if (have_prev && start == prev_start) {
			if (end < prev_end)
				continue; /* reported before the last */
			if (end == prev_end) {
				k = ac_copy_after(a, tm, prev_id);
				if (k == tm->nids)
					continue;
			}
		}
		ts_set_offer(best, true, start, end, a->ids[tm->ids + k]);
		return;
	}
}

/* What ac_anchored() found at the last match's start. */
enum { AC_AT_FOUND, AC_AT_NONE, AC_AT_UNKNOWN };

/*
 * TS_OVERLAP resumes at the last match's start, where the next occurrence
 * often starts too (a word that several patterns begin): walk the trie
 * down from the root along @p[0, @n) (no failure links, so only patterns
 * starting at @p[0]) for the first occurrence after (@prev_len, @prev_id).
 * AC_AT_NONE when none starts there; AC_AT_UNKNOWN if the walk reached the
 * end of the block still in a pattern's prefix, as the next block is not
 * to be read here.
 */
static int ac_anchored(const struct ac *a, const u8 *p, unsigned int n,
		       unsigned int prev_len, unsigned int prev_id,
		       unsigned int *len, unsigned int *id)
{
	uint32_t s = 0, d;

	for (d = 0; d < n; d++) {
		const struct ac_state *st;
		uint32_t v, t;

		if (s < a->ndense) {
			v = a->dense[(size_t)s << a->shift | a->cls[p[d]]] &
			    ~AC_OUT;
			if (a->state[v].depth != d + 1)
				return AC_AT_NONE; /* a failure, not a child */
		} else {
			v = ac_child(a, s, a->fold[p[d]]);
			if (v == AC_NONE)
				return AC_AT_NONE;
		}
		s = v;
		st = &a->state[s];
		t = st->term;
		if (t == AC_NONE || a->term[t].len != d + 1 || d + 1 < prev_len)
			continue; /* no pattern is this prefix, or reported */
		{
			const struct ac_term *tm = &a->term[t];
			uint32_t k = 0;

			if (d + 1 == prev_len) {
				k = ac_copy_after(a, tm, prev_id);
				if (k == tm->nids)
					continue;
			}
			*len = d + 1;
			*id = a->ids[tm->ids + k];
			return AC_AT_FOUND;
		}
	}
	return AC_AT_UNKNOWN;
}

static unsigned int ac_find(struct ts_config *conf, struct ts_state *state)
{
	const struct ac *a = ts_config_priv(conf);
	const uint32_t *dense = a->dense, ndense = a->ndense;
	const uint32_t shift = a->shift;
	const u8 *cls = a->cls;
	bool overlap = conf->flags & TS_OVERLAP, have = false;
	bool leaping = a->skip; /* see ac_scan_skip() */
	struct ts_set_best best = { 0 };
	unsigned int consumed = state->offset, prev_end = 0, prev_id = 0;
	unsigned int n, i, from = 0;
	bool have_prev;
	const u8 *block;
	uint32_t s = 0;

	have_prev = overlap && ts_overlap_prev(state, &prev_end, &prev_id);
	n = conf->get_next_block(consumed, &block, conf, state);
	if (have_prev && n) {
		unsigned int len, id;

		switch (ac_anchored(a, block, n, prev_end - consumed, prev_id,
				    &len, &id)) {
		case AC_AT_FOUND:
			state->offset = consumed + len;
			ts_set_match(state, id);
			return consumed;
		case AC_AT_NONE:
			/* all that start there are reported: the automaton
			 * starts afresh one byte on */
			from = 1;
			break;
		}
	}
	if (a->filter)
		goto filtered;
	for (; n; n = conf->get_next_block(consumed, &block, conf, state)) {
		for (i = from; i < n; i++) {
			/* the common step, a dense row, kept inline; the
			 * rest only when a pattern ends or one is pending */
			uint32_t t = s < ndense ? dense[(size_t)s << shift |
							cls[block[i]]] :
						  ac_step(a, s, block[i]);
			/* i + 1 <= n <= UINT_MAX - consumed */
			unsigned int end;

			s = t & ~AC_OUT;
			if (__builtin_expect(!(t & AC_OUT) && !have, 1))
				continue;
			end = consumed + i + 1;
			if (t & AC_OUT) {
				ac_offer(a, s, end, overlap, &best, have_prev,
					 state->offset, prev_end, prev_id);
				have = best.have;
			}
			if (have && ts_set_decided(&best, overlap,
						   end - a->state[s].depth))
				goto found;
		}
		from = 0;
		if (n > UINT_MAX - consumed)
			break; /* stream offsets would wrap */
		consumed += n;
	}
	if (!best.have)
		return UINT_MAX;
	goto found;
filtered:
	/* the loop above, with the prefilter's skips (see ac_fhash()) */
	for (; n; n = conf->get_next_block(consumed, &block, conf, state)) {
		/* positions before lim have 8 bytes to probe; nc: the first
		 * candidate from the state's start on, or lim if none */
		unsigned int lim = n > 7 ? n - 7 : 0, nc = 0;
		const uint32_t fk = a->fk;

		for (i = from; i < n;) {
			uint32_t t = s < ndense ? dense[(size_t)s << shift |
							cls[block[i]]] :
						  ac_step(a, s, block[i]);
			unsigned int end, d;

			s = t & ~AC_OUT;
			i++;
			end = consumed + i;
			if (t & AC_OUT) {
				ac_offer(a, s, end, overlap, &best, have_prev,
					 state->offset, prev_end, prev_id);
				have = best.have;
			}
			d = ac_depth(a, s);
			if (have && ts_set_decided(&best, overlap, end - d))
				goto found;
			if (d >= fk || d > i)
				continue;
			if (nc < i - d)
				nc = leaping ? ac_scan_skip(a, block, i - d,
							    lim, n, &leaping) :
					       ac_scan(a, block, i - d, lim);
			if (nc < i || nc >= n)
				continue;
			/* nothing from the state's start to the next
			 * candidate: restart there */
			s = 0;
			if (have &&
			    ts_set_decided(&best, overlap, consumed + nc))
				goto found;
			i = nc;
		}
		from = 0;
		if (n > UINT_MAX - consumed)
			break;
		consumed += n;
	}
	if (!best.have)
		return UINT_MAX;
found:
	state->offset = best.end;
	ts_set_match(state, best.id);
	return best.start;
}

/* ---- building ------------------------------------------------------- */

/* A range of the sort: item[lo, hi) share their first @depth bytes, which
 * spell state @state. */
struct ac_range {
	uint32_t lo, hi, state;
};

/* A pattern in the sort: its pointer and length travel with its id, so
 * that reading its next byte costs one cache miss, not three. */
struct ac_item {
	const u8 *pat;
	uint32_t len;
	uint32_t id;
};

struct ac_build {
	struct ac *a;
	struct ac_item *item, *tmp;
	uint16_t *key, *tmpkey;
	uint32_t cap; /* states allocated */
};

/* The sort key of @it at @depth: 0 once it has ended, else 1 + its
 * folded byte, so that shorter patterns come first. */
static inline uint16_t ac_key(const struct ac_build *b,
			      const struct ac_item *it, uint32_t depth)
{
	if (it->len == depth)
		return 0;
	return (uint16_t)(1u + b->a->fold[it->pat[depth]]);
}

/* A new state under @parent on byte @c; AC_NONE when out of memory. */
static uint32_t ac_new_state(struct ac_build *b, uint32_t parent, u8 c,
			     uint32_t depth)
{
	struct ac *a = b->a;
	uint32_t v = a->nstates;

	if (v == b->cap) {
		uint32_t cap;
		struct ac_state *st;

		if (b->cap >= AC_MAX_STATES)
			return AC_NONE;
		cap = b->cap > AC_MAX_STATES / 2 ? AC_MAX_STATES : b->cap * 2;
		st = realloc(a->state, (size_t)cap * sizeof(*st));
		if (!st)
			return AC_NONE;
		a->state = st;
		b->cap = cap;
	}
	a->nstates++;
	a->state[v] = (struct ac_state){ .fail = 0,
					 .first = 0,
					 .depth = depth,
					 .term = AC_NONE,
					 .nchild = 0,
					 .label = c };
	if (parent != AC_NONE) {
		if (!a->state[parent].nchild)
			a->state[parent].first = v;
		a->state[parent].nchild++;
	}
	return v;
}

/* Order item[lo, hi) stably by key at @depth; the keys in b->key[lo, hi). */
static void ac_order(struct ac_build *b, uint32_t lo, uint32_t hi,
		     uint32_t depth)
{
	uint32_t i, j;

	for (i = lo; i < hi; i++) {
		if (i + 16 < hi && b->item[i + 16].len > depth)
			__builtin_prefetch(b->item[i + 16].pat + depth);
		b->key[i] = ac_key(b, &b->item[i], depth);
	}
	if (hi - lo < AC_SMALL_RANGE) {
		for (i = lo + 1; i < hi; i++) {
			struct ac_item it = b->item[i];
			uint16_t k = b->key[i];

			for (j = i; j > lo && b->key[j - 1] > k; j--) {
				b->item[j] = b->item[j - 1];
				b->key[j] = b->key[j - 1];
			}
			b->item[j] = it;
			b->key[j] = k;
		}
	} else {
		uint32_t at[258] = { 0 };

		for (i = lo; i < hi; i++)
			at[b->key[i] + 1]++;
		for (i = 1; i < 258; i++)
			at[i] += at[i - 1];
		for (i = lo; i < hi; i++) {
			j = lo + at[b->key[i]]++;
			b->tmp[j] = b->item[i];
			b->tmpkey[j] = b->key[i];
		}
		memcpy(b->item + lo, b->tmp + lo, (hi - lo) * sizeof(*b->item));
		memcpy(b->key + lo, b->tmpkey + lo,
		       (hi - lo) * sizeof(*b->key));
	}
}

/* Build the trie level by level.  0 or -ENOMEM. */
static int ac_build_trie(struct ac_build *b)
{
	struct ac *a = b->a;
	struct ac_range *cur, *next, *swap;
	uint32_t ncur = 1, nnext, depth, r, i, j;
	int err = 0;

	cur = ac_alloc((size_t)b->a->count * sizeof(*cur));
	next = ac_alloc((size_t)b->a->count * sizeof(*next));
	if (!cur || !next) {
		err = -ENOMEM;
		goto out;
	}
	cur[0] = (struct ac_range){ 0, a->count,
				    ac_new_state(b, AC_NONE, 0, 0) };
	for (depth = 0; ncur; depth++) {
		for (r = 0, nnext = 0; r < ncur; r++) {
			uint32_t lo = cur[r].lo, hi = cur[r].hi;
			uint32_t st = cur[r].state;

			/* most ranges hold one pattern: fetch the byte the
			 * range some way ahead will read, as the reads of
			 * one level are spread over all the patterns */
			if (r + 16 < ncur) {
				const struct ac_item *it =
					&b->item[cur[r + 16].lo];

				if (it->len > depth)
					__builtin_prefetch(it->pat + depth);
			}
			if (r + 32 < ncur)
				__builtin_prefetch(&b->item[cur[r + 32].lo]);

			ac_order(b, lo, hi, depth);
			for (i = lo; i < hi && b->key[i] == 0; i++)
				;
			if (i > lo) {
				/* patterns ending here: ids ascend, as the
				 * sort is stable */
				a->state[st].term = a->nterms;
				a->term[a->nterms++] =
					(struct ac_term){ .len = depth,
							  .ids = lo,
							  .nids = i - lo,
							  .next = AC_NONE };
			}
			for (; i < hi; i = j) {
				uint32_t v;

				for (j = i + 1;
				     j < hi && b->key[j] == b->key[i]; j++)
					;
				v = ac_new_state(b, st, (u8)(b->key[i] - 1),
						 depth + 1);
				if (v == AC_NONE) {
					err = -ENOMEM;
					goto out;
				}
				next[nnext++] = (struct ac_range){ i, j, v };
			}
		}
		swap = cur;
		cur = next;
		next = swap;
		ncur = nnext;
	}
out:
	free(cur);
	free(next);
	return err;
}

/* Byte classes: one per byte some pattern has (after folding), and class
 * 0 for all the bytes none has, so that a dense row is as long as the
 * patterns' alphabet (rounded up to a power of two), not 256: 128 bytes
 * for text in letters, and many more rows fit in the cache. */
static void ac_classes(struct ac *a)
{
	bool present[256] = { false };
	u8 id[256];
	uint32_t v, c, n = 0, next;

	for (v = 1; v < a->nstates; v++)
		present[a->state[v].label] = true;
	for (c = 0; c < 256; c++)
		n += present[c];
	next = n < 256 ? 1 : 0;
	for (c = 0; c < 256; c++)
		if (present[c])
			id[c] = (u8)next++;
	for (c = 0; c < 256; c++)
		a->cls[c] = present[a->fold[c]] ? id[a->fold[c]] : 0;
	for (a->shift = 0; (1u << a->shift) < next; a->shift++)
		;
}

/* Failure links, output links and dense rows, in breadth-first order:
 * everything a state needs comes from shallower states. */
static int ac_link(struct ac *a)
{
	size_t budget, rowsize = sizeof(*a->dense) << a->shift;
	uint32_t u;

	/* 1 MiB of rows, or for large automata 4 bytes per state (at most
	 * 16 MiB), so that the wide shallow states all have one */
	budget = (size_t)a->nstates * 4;
	budget = budget < AC_DENSE_MIN ? AC_DENSE_MIN :
		 budget > AC_DENSE_MAX ? AC_DENSE_MAX :
					 budget;
	a->ndense = budget / rowsize < a->nstates ?
			    (uint32_t)(budget / rowsize) :
			    a->nstates;
	a->dense = ac_alloc((size_t)a->ndense * rowsize);
	if (!a->dense)
		return -ENOMEM;
	for (u = 0; u < a->nstates; u++) {
		struct ac_state *su = &a->state[u];

		/* the failure states that the states ahead will visit are
		 * anywhere in the automaton: ask for them early, the state
		 * first, then (once it has come) its children or row */
		if (u + 16 < a->nstates)
			__builtin_prefetch(&a->state[a->state[u + 16].fail]);
		if (u + 8 < a->nstates) {
			const struct ac_state *sp = &a->state[u + 8];
			uint32_t f = sp->fail;

			if (f < a->ndense)
				__builtin_prefetch(
					a->dense +
					((size_t)f << a->shift |
					 a->cls[a->state[sp->first].label]));
			else
				__builtin_prefetch(
					&a->state[a->state[f].first]);
		}
		uint32_t v, end = su->first + su->nchild;

		for (v = su->first; v < end; v++) {
			struct ac_state *sv = &a->state[v];
			uint32_t f = 0, own = sv->term, ft = AC_NONE;

			if (u != 0) {
				/* goto(fail(u), label): dense rows already
				 * fold the failure chain in, and say whether
				 * the target ends a pattern, which spares
				 * reading it when it does not */
				for (f = su->fail;;) {
					uint32_t w;

					if (f < a->ndense) {
						f = a->dense[(size_t)f
								     << a->shift |
							     a->cls[sv->label]];
						break;
					}
					w = ac_child(a, f, sv->label);
					if (w != AC_NONE) {
						f = ac_flag(a, w);
						break;
					}
					f = a->state[f].fail;
				}
				if (f & AC_OUT) {
					f &= ~AC_OUT;
					ft = a->state[f].term;
				}
			}
			sv->fail = f;
			if (own != AC_NONE)
				a->term[own].next = ft;
			else
				sv->term = ft;
		}
		if (u < a->ndense) {
			/* the failure state's row, with this state's own
			 * children over it (their labels' classes take in
			 * every byte that folds to them) */
			uint32_t *row = a->dense + ((size_t)u << a->shift);

			if (u)
				memcpy(row,
				       a->dense +
					       ((size_t)su->fail << a->shift),
				       sizeof(*row) << a->shift);
			else
				memset(row, 0, sizeof(*row) << a->shift);
			for (v = su->first; v < end; v++) {
				u8 l = a->state[v].label;

				row[a->cls[l]] = ac_flag(a, v);
			}
		}
	}
	return 0;
}

/* The prefilter's bitmap and the dense states' depths, for sets of at
 * least AC_FILTER_MIN_COUNT patterns of 2 bytes or more (@minlen: the
 * shortest's length).  0 or -ENOMEM. */
static int ac_filter_build(struct ac *a, const void *const *patterns,
			   uint32_t minlen, bool ignorecase)
{
	uint32_t i, bits = 16;
	u8 m[8] = { 0 }, c[8] = { 0 };

	if (a->count < AC_FILTER_MIN_COUNT || minlen < 2)
		return 0;
	a->fk = minlen < 8 ? minlen : 8;
	memset(m, 0xff, a->fk);
	if (ignorecase)
		memset(c, 0x20, a->fk);
	memcpy(&a->fmask, m, sizeof(m));
	memcpy(&a->fcase, c, sizeof(c));
	/* 32 bits a pattern (a 3% chance that a random position passes with
	 * a million patterns), from 8 KiB up to 16 MiB */
	while (bits < 27 && ((uint64_t)1 << bits) < (uint64_t)a->count * 32)
		bits++;
	a->fshift = 64 - bits;
	a->filter = ac_alloc(((size_t)1 << bits) / 8);
	a->ddepth = ac_alloc(a->ndense ? a->ndense : 1);
	if (!a->filter || !a->ddepth)
		return -ENOMEM;
	memset(a->filter, 0, ((size_t)1 << bits) / 8);
	/* in rounds of 64: hash them and ask for their words, then set the
	 * bits, so that the cache misses of a round overlap */
	for (i = 0; i < a->count; i += 64) {
		uint32_t h[64], j,
			round = a->count - i < 64 ? a->count - i : 64;

		for (j = 0; j < round; j++) {
			u8 buf[8] = { 0 };

			memcpy(buf, patterns[i + j], a->fk);
			h[j] = ac_fhash(a, buf);
			__builtin_prefetch(&a->filter[h[j] >> 6], 1);
		}
		for (j = 0; j < round; j++)
			a->filter[h[j] >> 6] |= (uint64_t)1 << (h[j] & 63);
	}
	for (i = 0; i < a->ndense; i++)
		a->ddepth[i] = a->state[i].depth < 255 ? (u8)a->state[i].depth :
							 255;
	return 0;
}

/* The skip table (see ac_shash()), for a set with the prefilter, whose
 * shortest pattern is at least AC_SKIP_MIN_WINDOW bytes; none where it
 * would skip too little.  0 or -ENOMEM. */
static int ac_skip_build(struct ac *a, const void *const *patterns,
			 uint32_t minlen, bool ignorecase)
{
	uint32_t i, q, bits = 12, w;
	uint64_t sum = 0;
	size_t size;

	if (minlen < AC_SKIP_MIN_WINDOW)
		return 0;
	w = minlen < 255 ? minlen : 255; /* skips fit a byte */
	if ((uint64_t)a->count * (w - 2) > AC_SKIP_MAX_TRIGRAMS)
		return 0;
	/* four entries a trigram, from 4 KiB up to 1 MiB */
	while (bits < AC_SKIP_MAX_BITS &&
	       ((uint64_t)1 << bits) < (uint64_t)a->count * (w - 2) * 4)
		bits++;
	size = (size_t)1 << bits;
	a->skip = ac_alloc(size);
	if (!a->skip)
		return -ENOMEM;
	a->wlen = w;
	a->sshift = 32 - bits;
	a->scase = ignorecase ? 0x202020u : 0;
	memset(a->skip, (int)(w - 2), size);
	for (i = 0; i < a->count; i++)
		for (q = 0; q + 3 <= w; q++) {
			u8 *k = &a->skip[ac_shash(a,
						  (const u8 *)patterns[i] + q)];

			if (*k > w - 3 - q)
				*k = (u8)(w - 3 - q);
		}
	for (i = 0; i < size; i++)
		sum += a->skip[i];
	if (sum < AC_SKIP_LEAP * (uint64_t)size) {
		free(a->skip);
		a->skip = NULL;
	}
	return 0;
}

static void ac_free(struct ac *a)
{
	free(a->skip);
	free(a->filter);
	free(a->ddepth);
	free(a->dense);
	free(a->state);
	free(a->term);
	free(a->ids);
}

static struct ts_config *ac_init_set(const void *const *patterns,
				     const unsigned int *lens,
				     unsigned int count, gfp_t gfp_mask,
				     int flags)
{
	struct ts_config *conf;
	struct ac_build b = { 0 };
	struct ac *a;
	size_t payload, total;
	uint32_t i, minlen = UINT32_MAX;
	int err = -ENOMEM;

	if (!ts_size_add(sizeof(*a), lens[0], &payload))
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(payload, gfp_mask);
	if (IS_ERR(conf))
		return conf;
	a = ts_config_priv(conf);
	a->count = count;
	a->len0 = lens[0];
	memcpy(a->pattern0, patterns[0], lens[0]);
	ts_fill_fold_table(a->fold, flags & TS_IGNORECASE);

	b.a = a;
	/* a state per pattern byte at most: reserved, not touched, so
	 * only the states made take memory, and nothing is copied */
	for (i = 0, total = 1; i < count && total < AC_MAX_STATES; i++)
		total += lens[i];
	for (i = 0; i < count; i++)
		if (lens[i] < minlen)
			minlen = lens[i];
	b.cap = total < AC_RESERVE_STATES ? (uint32_t)total : AC_RESERVE_STATES;
	b.item = ac_alloc((size_t)count * sizeof(*b.item));
	b.tmp = ac_alloc((size_t)count * sizeof(*b.tmp));
	b.key = ac_alloc((size_t)count * sizeof(*b.key));
	b.tmpkey = ac_alloc((size_t)count * sizeof(*b.tmpkey));
	a->term = ac_alloc((size_t)count * sizeof(*a->term));
	a->state = ac_alloc((size_t)b.cap * sizeof(*a->state));
	a->ids = ac_alloc((size_t)count * sizeof(*a->ids));
	if (!b.item || !b.tmp || !b.key || !b.tmpkey || !a->term || !a->state ||
	    !a->ids)
		goto fail;
	for (i = 0; i < count; i++)
		b.item[i] = (struct ac_item){ patterns[i], lens[i], i };

	err = ac_build_trie(&b);
	if (!err) {
		ac_classes(a);
		err = ac_link(a);
	}
	if (!err)
		err = ac_filter_build(a, patterns, minlen,
				      flags & TS_IGNORECASE);
	if (!err && a->filter)
		err = ac_skip_build(a, patterns, minlen, flags & TS_IGNORECASE);
	if (err)
		goto fail;
	for (i = 0; i < count; i++)
		a->ids[i] = b.item[i].id;
	free(b.item);
	free(b.tmp);
	free(b.key);
	free(b.tmpkey);
	/* give back what the guesses left over (shrinking never fails in
	 * practice; keep the old block if it does) */
	{
		void *p = realloc(a->state, a->nstates * sizeof(*a->state));

		if (p)
			a->state = p;
		p = realloc(a->term, a->nterms * sizeof(*a->term));
		if (p)
			a->term = p;
	}
	return conf;
fail:
	free(b.item);
	free(b.tmp);
	free(b.key);
	free(b.tmpkey);
	ac_free(a);
	free(conf);
	return ERR_PTR(err);
}

static struct ts_config *ac_init(const void *pattern, unsigned int len,
				 gfp_t gfp_mask, int flags)
{
	return ac_init_set(&pattern, &len, 1, gfp_mask, flags);
}

static void ac_destroy(struct ts_config *conf)
{
	ac_free(ts_config_priv(conf));
}

static void *ac_get_pattern(struct ts_config *conf)
{
	return ((struct ac *)ts_config_priv(conf))->pattern0;
}

static unsigned int ac_get_pattern_len(struct ts_config *conf)
{
	return ((struct ac *)ts_config_priv(conf))->len0;
}

/*
 * For streams: a match still to come can begin only where a suffix of the
 * data is a proper prefix of a pattern, that is at a state on @tail's
 * failure chain that has children; the deepest such state tells how many
 * bytes to keep.
 */
static unsigned int ac_keep(struct ts_config *conf, const u8 *tail,
			    unsigned int len)
{
	const struct ac *a = ts_config_priv(conf);
	uint32_t s = 0;

	for (unsigned int i = 0; i < len; i++)
		s = ac_step(a, s, tail[i]) & ~AC_OUT;
	while (s && !a->state[s].nchild)
		s = a->state[s].fail;
	return s ? a->state[s].depth : 0;
}

static const struct ts_stream_ops ac_stream_ops = {
	.keep = ac_keep,
};

struct ts_ops ts_ac_ops = {
	.name = "ac",
	.init = ac_init,
	.find = ac_find,
	.destroy = ac_destroy,
	.get_pattern = ac_get_pattern,
	.get_pattern_len = ac_get_pattern_len,
	.init_set = ac_init_set,
	.stream = &ac_stream_ops,
};
