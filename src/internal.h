/*
 * internal.h - declarations shared inside libtextsearch; never installed.
 */
#ifndef TS_INTERNAL_H
#define TS_INTERNAL_H

#include "textsearch.h"

#include <stdbool.h>
#include <stddef.h>

#define TS_HIDDEN __attribute__((visibility("hidden")))

/* Built-in algorithms, registered on first use of the registry. */
extern struct ts_ops ts_kmp_ops TS_HIDDEN;
extern struct ts_ops ts_bm_ops TS_HIDDEN;
extern struct ts_ops ts_fsm_ops TS_HIDDEN;
/* rarebyte (SIMD) at the best level the CPU has, and pinned to a level */
extern struct ts_ops ts_rarebyte_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_avx512_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_avx2_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_sse2_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_scalar_ops TS_HIDDEN;
/* Aho-Corasick, for pattern sets (ac.c) */
extern struct ts_ops ts_ac_ops TS_HIDDEN;
/* Teddy-like SIMD bucket filter, for small sets (teddy.c), at the best
 * level the CPU has and pinned to a level */
extern struct ts_ops ts_teddy_ops TS_HIDDEN;
extern struct ts_ops ts_teddy_vbmi_ops TS_HIDDEN;
extern struct ts_ops ts_teddy_avx512_ops TS_HIDDEN;
extern struct ts_ops ts_teddy_avx2_ops TS_HIDDEN;
extern struct ts_ops ts_teddy_ssse3_ops TS_HIDDEN;
extern struct ts_ops ts_teddy_scalar_ops TS_HIDDEN;

/* TS_UTF8 (utf8.c): the engine a config gets when its patterns need it,
 * never registered. */
extern struct ts_ops ts_utf8_ops TS_HIDDEN;

/*
 * A TS_UTF8 config for @count patterns, its prefilter made with @algo
 * (@set_algo: which can take a set; else sets go to "auto"); its
 * conf->ts_longest in *@longest.  NULL when the patterns need no engine,
 * unless @force: the plain algorithm with the flags in *@plain_flags
 * finds exactly their matches (valid UTF-8 without case variants, or
 * ASCII whose variants are ASCII, under TS_IGNORECASE).  An error pointer
 * on failure.
 */
struct ts_config *ts_utf8_prepare(const char *algo, bool set_algo,
				  const void *const *patterns,
				  const unsigned int *lens, unsigned int count,
				  gfp_t gfp_mask, int flags, bool force,
				  unsigned int *longest,
				  int *plain_flags) TS_HIDDEN;

/* Whether a match of this config may depend on the bytes after it (a
 * TS_UTF8 pattern with an invalid byte that may begin a sequence): the
 * stream then decides a match only once they are seen. */
bool ts_utf8_lookahead(const struct ts_config *conf) TS_HIDDEN;

/* Whether a match of this config may end inside a character (TS_FOLD_LIBC,
 * a pattern ending in an incomplete one): the search after it must then
 * resume from it (ts_find_after()) to know where characters begin. */
bool ts_utf8_partial(const struct ts_config *conf) TS_HIDDEN;

/* Whether the algorithm of a plain (not the engine's) config folds bytes:
 * a TS_UTF8 config keeps the caller's flags, but ts_utf8_prepare() gives
 * the algorithm TS_IGNORECASE only for ASCII patterns; code that reads
 * conf->flags beside the algorithm (native stream engines) asks here. */
static inline bool ts_all_ascii(const u8 *pattern, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++)
		if (pattern[i] >= 0x80)
			return false;
	return true;
}

static inline bool ts_plain_folds(const struct ts_config *conf,
				  const u8 *pattern, unsigned int len)
{
	if (!(conf->flags & TS_IGNORECASE))
		return false;
	return !(conf->flags & TS_UTF8) || ts_all_ascii(pattern, len);
}

/* Streaming of single literal patterns through find (literal_stream.c),
 * for kmp, bm and rarebyte. */
struct ts_stream_ops;
extern const struct ts_stream_ops ts_literal_stream_ops TS_HIDDEN;
/* The same, plus a native engine (its own vector scan of each write in
 * place) for "rarebyte": where the CPU lacks AVX-512 BW and VBMI or the
 * pattern is longer than 64 bytes its state_size() is 0, and the stream
 * goes through find instead. */
extern const struct ts_stream_ops ts_rarebyte_stream_ops TS_HIDDEN;

/* The provider textsearch_prepare() installs in every config: it forwards
 * to the provider recorded in the search's state (search.c). */
unsigned int ts_dispatch_next_block(unsigned int consumed, const u8 **dst,
				    struct ts_config *conf,
				    struct ts_state *state) TS_HIDDEN;

/*
 * The provider a search's blocks come from, resolved once per find() so
 * that a block costs one indirect call instead of two (the dispatcher,
 * then the provider): what ts_dispatch_next_block() would forward to, or
 * conf->get_next_block itself when the caller set that the kernel's way.
 * Calling it is the same as calling conf->get_next_block().
 */
struct ts_provider {
	ts_get_next_block_fn fn;
	struct ts_config *conf; /* the config handed to fn */
};

void ts_provider_resolve(struct ts_config *conf, struct ts_state *state,
			 struct ts_provider *pv) TS_HIDDEN;

static inline unsigned int ts_provider_next(const struct ts_provider *pv,
					    unsigned int consumed,
					    const u8 **dst,
					    struct ts_state *state)
{
	return pv->fn(consumed, dst, pv->conf, state);
}

/*
 * Begin a search as textsearch_find_with() does (no finish), but resume as
 * textsearch_next() would after the match [@start, @start + @len) of
 * pattern @id: past its end, or with TS_OVERLAP after it in match order.
 * Streams use it to go on with a search over a window that moved.
 */
unsigned int ts_find_after(struct ts_config *conf, struct ts_state *state,
			   ts_get_next_block_fn get_next_block,
			   unsigned int start, unsigned int len,
			   unsigned int id) TS_HIDDEN;

/* The end and id of the match the search in @state last returned, if it
 * did: an engine resuming after it may need what it matched. */
bool ts_last_match(const struct ts_state *state, unsigned int *end,
		   unsigned int *id) TS_HIDDEN;

/* Record a description of the error about to be returned, for
 * textsearch_last_error(); returns @err so callers can `return ts_fail(...)`. */
int ts_fail(int err, const char *fmt, ...) TS_HIDDEN
	__attribute__((format(printf, 2, 3)));
void ts_clear_error(void) TS_HIDDEN;

/* The methods every algorithm must have: textsearch_register() and the
 * plugin loader both insist on them. */
static inline bool ts_ops_has_methods(const struct ts_ops *ops)
{
	return ops->init && ops->find && ops->get_pattern &&
	       ops->get_pattern_len;
}

/* A plugin loaded and checked: its ops, ready to be registered, and the
 * object to unload if they are not. */
struct ts_plugin_loaded {
	struct ts_ops *ops;
	void *handle;
};

/* Find ts_<name>.so (@name already validated) in a trusted place, load it
 * and check its descriptor and ops.  0 and *@out filled, -ENOENT if no
 * plugin file exists, -ELIBBAD if one was refused. */
int ts_plugin_load(const char *name, struct ts_plugin_loaded *out) TS_HIDDEN;
/* Drop a loaded plugin whose ops were not registered. */
void ts_plugin_unload(struct ts_plugin_loaded *plugin) TS_HIDDEN;

/* Overflow-checked size arithmetic: false if the result does not fit. */
static inline bool ts_size_add(size_t a, size_t b, size_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

static inline bool ts_size_mul(size_t a, size_t b, size_t *product)
{
	return !__builtin_mul_overflow(a, b, product);
}

/* The lanes j of a vector of 64 bytes (or starts) from @b that lie in
 * [@lo, @hi): bit j set when lo <= b + j < hi.  For the masked loads at
 * the ends of an aligned scan. */
static inline unsigned long long ts_lanes_in(ptrdiff_t b, ptrdiff_t lo,
					     ptrdiff_t hi)
{
	ptrdiff_t from = lo - b, to = hi - b;

	if (from < 0)
		from = 0;
	if (to > 64)
		to = 64;
	if (from >= to)
		return 0;
	return (~0ull >> (64 - to)) & (~0ull << from);
}

/* 256-entry TS_IGNORECASE folding table (identity when !ignorecase);
 * src/algo/fold.c. */
void ts_fill_fold_table(u8 table[256], bool ignorecase) TS_HIDDEN;

/*
 * Pattern sets.  A set algorithm is a ts_ops with init_set; the registry
 * refuses the others in textsearch_prepare_set().  Its find() follows the
 * find() contract (start returned, state->offset set to the end) and also:
 *
 *  - calls ts_set_match() with the id (index in the set) of the match;
 *  - without TS_OVERLAP returns the leftmost-longest match from
 *    state->offset (smallest start, then longest, then smallest id): it
 *    may have to read up to the longest pattern past a match's end to know
 *    that no longer one starts there, and next() resumes at the end;
 *  - with TS_OVERLAP, next() hands it state->offset = the last match's
 *    start, and ts_overlap_prev() tells the last end and id: it returns
 *    the first occurrence ordered after that one by (start, end, id);
 *  - never asks the provider to go back within a call.  Across calls the
 *    core may go back by up to conf->ts_longest bytes (the reader keeps
 *    that much history).
 *
 * A candidate is final once no occurrence still to come can sort before
 * it: every occurrence ending after @end starts at or after @end minus the
 * length of the longest pattern prefix that ends at @end (for an automaton,
 * its state's depth).  ts_set_best keeps the candidate and that rule, so
 * that every set algorithm (Aho-Corasick, a SIMD prefilter verifying
 * exactly) orders matches the same way.
 */
struct ts_set_best {
	bool have;
	unsigned int start, end, id;
};

/* Offer the occurrence [@start, @end) of pattern @id; true if it is now the
 * best.  Without TS_OVERLAP the leftmost, then longest, then lowest id
 * wins; with it the lowest (start, end, id). */
static inline bool ts_set_offer(struct ts_set_best *b, bool overlap,
				unsigned int start, unsigned int end,
				unsigned int id)
{
	if (b->have) {
		if (start != b->start) {
			if (start > b->start)
				return false;
		} else if (end != b->end) {
			if (overlap ? end > b->end : end < b->end)
				return false;
		} else if (id >= b->id) {
			return false;
		}
	}
	b->have = true;
	b->start = start;
	b->end = end;
	b->id = id;
	return true;
}

/* Whether the best is final, when every occurrence still to come starts
 * at or after @earliest_start. */
static inline bool ts_set_decided(const struct ts_set_best *b, bool overlap,
				  unsigned int earliest_start)
{
	/* with TS_OVERLAP an equal start sorts after (it ends later);
	 * without, it would be longer and win */
	return b->have && (overlap ? earliest_start >= b->start :
				     earliest_start > b->start);
}

#endif
