/*
 * search.c - the line engine: one file, read in chunks, searched window by
 * window.
 *
 * The input is never loaded whole.  A buffer holds the unfinished last line
 * of the previous read (plus the lines -B may still print) and the next
 * chunk; only complete lines are searched, so a window never splits a line.
 * Every window is far below 4 GiB (textsearch offsets are unsigned int),
 * while file offsets and line numbers are kept here as 64-bit values.
 * What a selected line does (printing, context, -m) is select.c's; a line
 * too long to hold is longline.c's, and goes through the same policy.
 *
 * Literal patterns are one set config, searched over the whole window:
 * lines are found from the matches, never searched one by one.  Per
 * matcher (the set, or each pattern where there is no set), the next match
 * from the current position is cached for the window, so the text is
 * scanned once per window however many lines are printed; the set (or the
 * merge of several configs) gives grep -F's leftmost-longest choice, and
 * -w and -x are grep's tests on top of it.  Matches containing a newline
 * (possible with --hex or --fsm) are ignored: tsgrep matches within
 * lines, like grep.
 *
 * Input that arrives over time (a pipe, a FIFO, `tail -f`) takes the same
 * path: read() returns what is there, the complete lines among it are
 * searched at once and the unfinished one waits in the buffer, so a line's
 * output is written as soon as its newline is read (and flushed then with
 * --line-buffered, or before the next read may wait: read_more()).
 * The library's push-mode stream (textsearch_stream.h) is not used here:
 * it finds matches across writes without holding the bytes, but a line
 * must be held whole to be printed, and -w, -x, -B, --color, the merge of
 * several configs and the window's match cache all look at the bytes
 * around a match in this buffer.  The carry of the unfinished line would
 * stay, with a stream beside it: more code, and a second pass over lines.
 */
#define _GNU_SOURCE /* SEEK_HOLE, memrchr */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "engine.h"

/* A worker's buffer bigger than this is not kept for the next file. */
#define SCRATCH_KEEP ((size_t)4 << 20)

/* ---- searching ---- */

struct block_feed {
	const u8 *base;
	unsigned int len;
	unsigned int block_size;
};

_Static_assert(sizeof(struct block_feed) <= TS_CB_SIZE,
	       "provider state fits cb");

/* --block-size: serve the window in blocks of block_size bytes, so every
 * algorithm really runs its across-blocks code.  @consumed is the stream
 * offset of the first byte wanted. */
static unsigned int block_next(unsigned int consumed, const u8 **dst,
			       struct ts_config *conf, struct ts_state *state)
{
	struct block_feed *feed = (struct block_feed *)(void *)state->cb;
	unsigned int len;

	(void)conf;
	if (consumed >= feed->len)
		return 0;
	len = feed->block_size - consumed % feed->block_size;
	if (len > feed->len - consumed)
		len = feed->len - consumed;
	*dst = feed->base + consumed;
	return len;
}

/* Whether the candidate [@at, @at + @len) of pattern @id is a match when
 * only ASCII letters fold. */
static bool ascii_match(const struct tsg_pattern *pat, unsigned int id,
			const u8 *at, unsigned int len)
{
	const u8 *p;

	if (id >= pat->ascii_n || pat->ascii_lens[id] != len)
		return false;
	p = pat->ascii_pats[id];
	for (unsigned int i = 0; i < len; i++) {
		u8 a = at[i], b = p[i];

		if (a >= 'A' && a <= 'Z')
			a = (u8)(a + 32);
		if (b >= 'A' && b <= 'Z')
			b = (u8)(b + 32);
		if (a != b)
			return false;
	}
	return true;
}

/* The leftmost-longest candidate that ascii_match() accepts, from the
 * every-occurrence order (start, end, id) of a TS_OVERLAP search. */
static unsigned int ascii_filter(const struct tsg_pattern *pat,
				 struct ts_state *state, const u8 *base,
				 unsigned int found, unsigned int *end)
{
	unsigned int best = UINT_MAX;

	for (; found != UINT_MAX; found = textsearch_next(pat->conf, state)) {
		unsigned int len = textsearch_match_len(pat->conf, state);

		if (best != UINT_MAX && found != best)
			break;
		if (ascii_match(pat, textsearch_match_id(state), base + found,
				len) &&
		    (best == UINT_MAX || found + len > *end)) {
			best = found;
			*end = found + len;
		}
	}
	return best;
}

/*
 * -i in a single-byte locale: the text from @from to at least @to folded
 * as the patterns were (cfg->fold, each byte's toupper()), to be searched
 * case-sensitively; a byte stays a byte, so offsets are the same.  The
 * copy is kept by file offset and reaches the window's end, so the many
 * searches of one window (the match cache, -o, --color, -w retries) fold
 * each byte once.  Its room was reserved with the window (fold_reserve()).
 */
static const u8 *folded(struct engine *eng, size_t from, size_t to)
{
	const unsigned char *fold = eng->cfg->fold;
	const unsigned char *src = eng->buf + from;
	unsigned char *dst = eng->scratch->fold;
	uint64_t lo = eng->base + from;
	size_t n, i;

	if (lo >= eng->fold_lo && eng->base + to <= eng->fold_hi)
		return dst + (lo - eng->fold_lo);
	n = (to > eng->rend ? to : eng->rend) - from;
	i = 0;
#ifdef __SSE2__
	/* 16 ASCII bytes at a time where the table folds ASCII as ASCII:
	 * Latin-script text is mostly ASCII, and the lookups a byte at a
	 * time cost more than the search */
	if (eng->cfg->sb_ascii_plain) {
		const __m128i a1 = _mm_set1_epi8('a' - 1 - 128);
		const __m128i z = _mm_set1_epi8('z' - 128);
		const __m128i flip = _mm_set1_epi8((char)0x80);
		const __m128i up = _mm_set1_epi8(0x20);

		while (i + 16 <= n) {
			__m128i v = _mm_loadu_si128((const __m128i *)(src + i));
			__m128i s, lower;

			if (_mm_movemask_epi8(v)) {
				/* a byte past ASCII: these 16 by the table */
				for (size_t k = i + 16; i < k; i++)
					dst[i] = fold[src[i]];
				continue;
			}
			/* a-z: signed compares on bytes moved by 128 */
			s = _mm_xor_si128(v, flip);
			lower = _mm_andnot_si128(_mm_cmpgt_epi8(s, z),
						 _mm_cmpgt_epi8(s, a1));
			v = _mm_sub_epi8(v, _mm_and_si128(lower, up));
			_mm_storeu_si128((__m128i *)(dst + i), v);
			i += 16;
		}
	}
#endif
	for (; i + 4 <= n; i += 4) {
		dst[i] = fold[src[i]];
		dst[i + 1] = fold[src[i + 1]];
		dst[i + 2] = fold[src[i + 2]];
		dst[i + 3] = fold[src[i + 3]];
	}
	for (; i < n; i++)
		dst[i] = fold[src[i]];
	eng->fold_lo = lo;
	eng->fold_hi = lo + n;
	return dst;
}

/* Room to fold the @len bytes the buffer holds (before they are
 * searched, where an allocation failure can still be reported). */
static int fold_reserve(struct engine *eng, size_t len)
{
	struct tsg_scratch *s = eng->scratch;
	unsigned char *fold;
	size_t cap;

	if (!eng->cfg->fold || s->fold_cap >= len)
		return 0;
	cap = s->fold_cap * 2 > len ? s->fold_cap * 2 : len;
	/* the old copy is stale once it moves */
	free(s->fold);
	fold = malloc(cap);
	s->fold = fold;
	s->fold_cap = fold ? cap : 0;
	eng->fold_lo = eng->fold_hi = 0;
	if (!fold) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static size_t find_once(struct engine *eng, const struct tsg_pattern *pat,
			size_t from, size_t to, size_t *end)
{
	struct ts_config *conf = pat->conf;
	unsigned int len = (unsigned int)(to - from);
	const u8 *text = eng->cfg->fold ? folded(eng, from, to) :
					  eng->buf + from;
	struct ts_state state;
	unsigned int found, mend = 0;

	memset(&state, 0, sizeof(state));
	if (eng->cfg->block_size) {
		struct block_feed *feed = (struct block_feed *)(void *)state.cb;

		feed->base = text;
		feed->len = len;
		feed->block_size = (unsigned int)eng->cfg->block_size;
		found = textsearch_find_with(conf, &state, block_next, NULL);
	} else {
		found = textsearch_find_continuous(conf, &state, text, len);
	}
	if (pat->ascii_n) {
		found = ascii_filter(pat, &state, eng->buf + from, found,
				     &mend);
		state.offset = mend;
	}
	if (found == UINT_MAX || found > len)
		return NO_MATCH;
	*end = from + state.offset;
	return from + found;
}

/* First match of pattern @idx at or after @from that stays within a
 * line. */
static size_t find_in_line(struct engine *eng, size_t idx, size_t from,
			   size_t *end)
{
	const struct tsg_pattern *pat = &eng->cfg->pats[idx];
	size_t start, match_end, le;

	if (eng->cfg->pats[idx].anchored) {
		/* try each line start from @from on */
		while (from < eng->rend) {
			if (from && !is_eol(eng, eng->buf[from - 1])) {
				le = line_end(eng, from, eng->rend);
				if (le == eng->rend)
					return NO_MATCH;
				from = le + 1;
				continue;
			}
			le = line_end(eng, from, eng->rend);
			start = find_once(eng, pat, from, le, &match_end);
			if (start != NO_MATCH) {
				*end = match_end;
				return start;
			}
			from = le + 1;
		}
		return NO_MATCH;
	}
	while (from < eng->rend) {
		start = find_once(eng, pat, from, eng->rend, &match_end);
		if (start == NO_MATCH)
			return NO_MATCH;
		/* only a pattern with a newline or NUL can cross a line */
		if (!eng->cfg->eol_in_pats ||
		    line_end(eng, start, match_end) == match_end) {
			*end = match_end;
			return start;
		}
		/* it runs past its line: what a set may still match there
		 * (a shorter pattern at the same start, or a later one) is
		 * found by searching the line alone */
		le = line_end(eng, start, eng->rend);
		start = find_once(eng, pat, start, le, &match_end);
		if (start != NO_MATCH) {
			*end = match_end;
			return start;
		}
		from = le + 1;
	}
	return NO_MATCH;
}

void set_window(struct engine *eng, size_t rend)
{
	size_t i;

	eng->rend = rend;
	for (i = 0; i < eng->cfg->npats; i++)
		eng->cache[i].valid = 0;
}

/* The longest of the leftmost matches: grep -F's choice with several
 * patterns (a set config makes that choice itself). */
static size_t raw_match(struct engine *eng, size_t from, size_t *end)
{
	size_t best = NO_MATCH, best_end = 0, i;
	struct match_cache *cache;

	for (i = 0; i < eng->cfg->npats; i++) {
		cache = &eng->cache[i];
		/* the cached answer holds for any @from in [from, start];
		 * -B context may ask about earlier lines */
		if (!cache->valid || cache->from > from ||
		    (cache->start != NO_MATCH && cache->start < from)) {
			cache->start = find_in_line(eng, i, from, &cache->end);
			cache->from = from;
			cache->valid = 1;
		}
		if (cache->start == NO_MATCH)
			continue;
		if (best == NO_MATCH || cache->start < best ||
		    (cache->start == best && cache->end > best_end)) {
			best = cache->start;
			best_end = cache->end;
		}
	}
	*end = best_end;
	return best;
}

/* The leftmost-longest match wholly inside [from, to) (within one line),
 * uncached: -w's retry of a shorter match at the same start. */
static size_t match_within(struct engine *eng, size_t from, size_t to,
			   size_t *end)
{
	size_t best = NO_MATCH, best_end = 0, start, match_end, i;

	if (to <= from)
		return NO_MATCH;
	for (i = 0; i < eng->cfg->npats; i++) {
		if (eng->cfg->pats[i].anchored && from &&
		    !is_eol(eng, eng->buf[from - 1]))
			continue;
		start = find_once(eng, &eng->cfg->pats[i], from, to,
				  &match_end);
		if (start == NO_MATCH)
			continue;
		if (best == NO_MATCH || start < best ||
		    (start == best && match_end > best_end)) {
			best = start;
			best_end = match_end;
		}
	}
	*end = best_end;
	return best;
}

/* A word constituent for -w, as in grep's C locale: letters, digits,
 * underscore (in a single-byte locale, cfg->sb_word). */
static bool word_byte(unsigned char ch)
{
	return ch == '_' || (unsigned int)((ch | 0x20) - 'a') < 26 ||
	       (unsigned int)(ch - '0') < 10;
}

/* In a UTF-8 locale, as grep: a character that iswalnum() accepts, or
 * the underscore; an invalid byte is none. */
static bool word_char(const unsigned char *p, size_t n)
{
	mbstate_t ms;
	wchar_t wc;

	memset(&ms, 0, sizeof(ms));
	if (mbrtowc(&wc, (const char *)p, n, &ms) != n)
		return false;
	return wc == L'_' || iswalnum((wint_t)wc);
}

/* The character before @pos, if the search that began at @from may look
 * at it: as grep, a search resumed after a match (-o, --color) takes its
 * start for a line start. */
static bool word_before(const struct engine *eng, size_t pos, size_t from)
{
	const unsigned char *b = eng->buf;

	if (pos <= from)
		return false;
	if (eng->cfg->sbcs)
		return eng->cfg->sb_word[b[pos - 1]];
	if (!eng->cfg->utf8 || b[pos - 1] < 0x80)
		return word_byte(b[pos - 1]);
	/* the character that ends at pos begins with a lead byte */
	for (size_t l = 2; l <= 4 && l <= pos - from; l++)
		if ((b[pos - l] & 0xC0) != 0x80)
			return word_char(b + pos - l, l);
	return false;
}

static bool word_at(const struct engine *eng, size_t pos)
{
	const unsigned char *b = eng->buf;
	size_t l;

	if (pos >= eng->rend)
		return false;
	if (eng->cfg->sbcs)
		return eng->cfg->sb_word[b[pos]];
	if (!eng->cfg->utf8 || b[pos] < 0x80)
		return word_byte(b[pos]);
	l = b[pos] >= 0xF0 ? 4 : b[pos] >= 0xE0 ? 3 : 2;
	return l <= eng->rend - pos && word_char(b + pos, l);
}

/*
 * -w, as grep does it: the leftmost start with a match that has no word
 * constituent on either side (the search's start counts as a line edge).  At a start, the longest match is tried,
 * then ever shorter ones (the empty pattern last); then the next start.
 */
static size_t word_match(struct engine *eng, size_t from, size_t *end)
{
	size_t pos = from, start, match_end, stop, p, len, shorter, send;

	while (pos <= eng->rend) {
		start = raw_match(eng, pos, &match_end);
		if (eng->cfg->empty_pat) {
			/* the empty pattern matches at every position */
			stop = start == NO_MATCH ? eng->rend + 1 : start;
			for (p = pos; p < stop; p++) {
				if (!word_before(eng, p, from) &&
				    !word_at(eng, p)) {
					*end = p;
					return p;
				}
			}
		}
		if (start == NO_MATCH)
			return NO_MATCH;
		len = match_end - start;
		while (!word_before(eng, start, from)) {
			if (!word_at(eng, start + len)) {
				*end = start + len;
				return start;
			}
			if (!len)
				break;
			shorter = match_within(eng, start, start + len - 1,
					       &send);
			if (shorter == start)
				len = send - start;
			else if (eng->cfg->empty_pat)
				len = 0;
			else
				break;
		}
		pos = start + 1;
	}
	return NO_MATCH;
}

static bool empty_line_at(const struct engine *eng, size_t pos)
{
	return pos < eng->rend && is_eol(eng, eng->buf[pos]) &&
	       (!pos || is_eol(eng, eng->buf[pos - 1]));
}

/* -x: the first line from @from on that equals a pattern.  The longest
 * match at a line's start is the whole line if any pattern is. */
static size_t line_match(struct engine *eng, size_t from, size_t *end)
{
	size_t pos = from, start, match_end, stop, p, le;

	if (pos && pos < eng->rend && !is_eol(eng, eng->buf[pos - 1]))
		pos = line_end(eng, pos, eng->rend) + 1;
	while (pos < eng->rend) {
		start = raw_match(eng, pos, &match_end);
		if (eng->cfg->empty_pat) {
			stop = start == NO_MATCH ? eng->rend : start;
			for (p = pos; p < stop; p++) {
				if (empty_line_at(eng, p)) {
					*end = p;
					return p;
				}
			}
		}
		if (start == NO_MATCH)
			return NO_MATCH;
		le = line_end(eng, start, eng->rend);
		if (match_end == le &&
		    (!start || is_eol(eng, eng->buf[start - 1]))) {
			*end = le;
			return start;
		}
		pos = le + 1;
	}
	return NO_MATCH;
}

size_t next_match(struct engine *eng, size_t from, size_t *end)
{
	if (eng->cfg->line_x)
		return line_match(eng, from, end);
	if (eng->cfg->word)
		return word_match(eng, from, end);
	return raw_match(eng, from, end);
}

/* ---- line bookkeeping ---- */

/* Newlines are counted 16 bytes at a time: one memchr() per newline costs
 * more than the search itself when lines are short.  Each compare gives -1
 * per newline byte, subtracted into byte lanes; 255 rounds cannot overflow
 * a lane, then psadbw adds the lanes up. */
static uint64_t count_newlines(const unsigned char *p, size_t len)
{
	uint64_t count = 0;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
	const __m128i *at;
	__m128i lanes, bytes, sums;
	size_t rounds, i;

	while (len >= 16) {
		rounds = len / 16 < 255 ? len / 16 : 255;
		lanes = zero;
		for (i = 0; i < rounds; i++, p += 16) {
			at = (const __m128i *)(const void *)p;
			bytes = _mm_loadu_si128(at);
			lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(bytes, nl));
		}
		sums = _mm_sad_epu8(lanes, zero);
		count += (uint64_t)_mm_extract_epi16(sums, 0) +
			 (uint64_t)_mm_extract_epi16(sums, 4);
		len -= rounds * 16;
	}
#endif
	for (; len; p++, len--)
		count += *p == '\n';
	return count;
}

uint64_t lineno_at(struct engine *eng, size_t pos)
{
	if (pos >= eng->lnpos) {
		eng->lnnum +=
			count_newlines(eng->buf + eng->lnpos, pos - eng->lnpos);
		eng->lnpos = pos;
		return eng->lnnum;
	}
	return eng->lnnum - count_newlines(eng->buf + pos, eng->lnpos - pos);
}

size_t line_start(const struct engine *eng, size_t pos, size_t lo)
{
	const unsigned char *nl;

	if (!eng->binary) {
		/* one call per selected line: a byte loop back to the line's
		 * start cost as much as the search of the line */
		nl = pos > lo ? memrchr(eng->buf + lo, '\n', pos - lo) : NULL;
		return nl ? (size_t)(nl - eng->buf) + 1 : lo;
	}
	while (pos > lo && !is_eol(eng, eng->buf[pos - 1]))
		pos--;
	return pos;
}

/* The first newline or NUL in [p, p + len), or NULL: a binary file's
 * lines end at either, and its NULs are not rewritten (a mapped file's
 * pages stay shared with the page cache). */
static const unsigned char *find_nl_or_nul(const unsigned char *p, size_t len)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
	__m128i bytes;
	int mask;

	for (; len >= 16; p += 16, len -= 16) {
		bytes = _mm_loadu_si128((const __m128i *)(const void *)p);
		mask = _mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(bytes, nl),
				     _mm_cmpeq_epi8(bytes, zero)));
		if (mask)
			return p + __builtin_ctz((unsigned int)mask);
	}
#endif
	for (; len; p++, len--)
		if (*p == '\n' || !*p)
			return p;
	return NULL;
}

size_t line_end(const struct engine *eng, size_t from, size_t hi)
{
	const unsigned char *nl;

	if (eng->binary)
		nl = find_nl_or_nul(eng->buf + from, hi - from);
	else
		nl = memchr(eng->buf + from, '\n', hi - from);
	return nl ? (size_t)(nl - eng->buf) : hi;
}

/* Search the complete lines in [pos, rend). */
static void process(struct engine *eng, size_t pos, size_t rend)
{
	const struct tsg_cfg *cfg = eng->cfg;
	size_t ms, me, mls, le, next;

	set_window(eng, rend);
	while (pos < rend && !eng->stop && !eng->maxed) {
		me = 0;
		if (cfg->match_all)
			ms = pos;
		else
			ms = next_match(eng, pos, &me);
		if (ms != NO_MATCH && ms >= rend &&
		    (ms > rend || me != ms || is_eol(eng, eng->buf[rend - 1])))
			ms = NO_MATCH;
		mls = ms == NO_MATCH ? rend : line_start(eng, ms, pos);
		/* lines [pos, mls) do not match */
		if (cfg->invert) {
			while (pos < mls && !eng->stop && !eng->maxed) {
				le = line_end(eng, pos, mls);
				next = le < mls ? le + 1 : mls;
				select_line(eng, pos, le, next);
				pos = next;
			}
		} else {
			context_lines(eng, pos, mls);
		}
		if (ms == NO_MATCH || eng->stop || eng->maxed)
			break;
		le = line_end(eng, ms, rend);
		next = le < rend ? le + 1 : rend;
		if (cfg->invert)
			context_lines(eng, mls, next);
		else
			select_line(eng, mls, le, next);
		pos = next;
	}
	if (eng->maxed && !eng->stop) {
		context_lines(eng, pos, rend);
		if (eng->pending <= 0)
			eng->stop = 1;
	}
}

/* GNU grep treats a file with a hole as binary before reading it.  (Where
 * SEEK_HOLE is not declared, as with this build's feature macros, no hole
 * is seen: the file's zeros make it binary when they are read.) */
static int has_hole(int fd, const struct stat *st, int at_start)
{
#ifdef SEEK_HOLE
	off_t cur, hole;

	if (!st || !S_ISREG(st->st_mode))
		return 0;
	cur = at_start ? 0 : lseek(fd, 0, SEEK_CUR);
	if (cur < 0)
		return 0;
	hole = lseek(fd, cur, SEEK_HOLE);
	(void)!lseek(fd, cur, SEEK_SET);
	return hole >= 0 && hole < st->st_size;
#else
	(void)fd;
	(void)st;
	(void)at_start;
	return 0;
#endif
}

/*
 * The end of a mapped file is read, not mapped: the mapping holds the file
 * as it was when it was opened, and grep reads on to the end of what is
 * there, lines appended meanwhile included.  The bytes the engine still
 * holds move to a buffer of its own; reading goes on from the mapping's
 * last slice, in the same chunks, so reads fall where they would have.
 */
static int leave_mapping(struct engine *eng)
{
	size_t cap = eng->len + eng->cfg->chunk;
	unsigned char *buf;

	if (cap >= UINT_MAX - 1) {
		errno = EFBIG;
		return -1;
	}
	buf = eng->scratch->cap >= cap ? eng->scratch->buf : NULL;
	if (!buf) {
		buf = malloc(cap);
		if (!buf) {
			errno = ENOMEM;
			return -1;
		}
		free(eng->scratch->buf);
		eng->scratch->buf = buf;
	} else {
		cap = eng->scratch->cap;
	}
	memcpy(buf, eng->buf, eng->len);
	if (lseek(eng->fd, (off_t)eng->map_off, SEEK_SET) < 0) {
		free(buf);
		return -1;
	}
	tsg_map_close(&eng->map);
	eng->buf = buf;
	eng->cap = cap;
	eng->scratch->cap = cap;
	eng->mapped = 0;
	return 0;
}

/* Drop what no longer matters: everything before the unfinished line,
 * except the lines -B may still print. */
static void drop_searched(struct engine *eng)
{
	const struct tsg_cfg *cfg = eng->cfg;
	size_t keep = eng->pos, lo;
	long long count;

	if (cfg->before > 0 && !eng->binary && !eng->long_line.active) {
		lo = context_floor(eng);
		for (count = 0; count < cfg->before && keep > lo; count++)
			keep = line_start(eng, keep - 1, lo);
	}
	/* line numbers are counted only for output that shows them: a count
	 * of every newline would cost more than the search itself */
	if (eng->lnpos < keep) {
		if (cfg->line_num || cfg->json)
			lineno_at(eng, keep);
		else
			eng->lnpos = keep;
	}
	if (!keep)
		return;
	if (eng->mapped)
		eng->buf += keep;
	else
		memmove(eng->buf, eng->buf + keep, eng->len - keep);
	eng->len -= keep;
	eng->pos -= keep;
	eng->lnpos -= keep;
	eng->base += keep;
	if (eng->long_line.active)
		eng->long_line.scan -= keep;
}

/* The next slice of a mapped file, the size reads have: a NUL makes the
 * rest of the file binary from the read that holds it, as in grep. */
static int map_more(struct engine *eng, size_t *got)
{
	size_t len = eng->map.size - eng->map_off;

	if (len > eng->cfg->chunk)
		len = eng->cfg->chunk;
	/* the same limit on an unfinished line as for reads */
	if (len && eng->len + len >= UINT_MAX - 1) {
		errno = EFBIG;
		return -1;
	}
	tsg_map_drop_before(&eng->map, eng->buf);
	eng->map_off += len;
	*got = len;
	return 0;
}

static int read_more(struct engine *eng, size_t *got)
{
	const struct tsg_cfg *cfg = eng->cfg;
	unsigned char *buf;
	size_t cap;
	ssize_t len;

	drop_searched(eng);
	/* a binary file is read too: its search costs no more than a text
	 * file's (on a 320 MiB pack, reads took a third of the CPU time
	 * the mapping took) */
	if (eng->mapped &&
	    (eng->binary || eng->map.size - eng->map_off < cfg->chunk) &&
	    leave_mapping(eng))
		return -1;
	if (eng->mapped)
		return map_more(eng, got);
	if (eng->cap - eng->len < cfg->chunk) {
		cap = eng->len + cfg->chunk;
		/* one line beyond what a window may hold (textsearch offsets
		 * are 32-bit) cannot be searched */
		if (cap >= UINT_MAX - 1) {
			errno = EFBIG;
			return -1;
		}
		if (cap < eng->cap * 2 && eng->cap * 2 < UINT_MAX - 1)
			cap = eng->cap * 2;
		buf = realloc(eng->buf, cap);
		if (!buf) {
			errno = ENOMEM;
			return -1;
		}
		eng->buf = buf;
		eng->cap = cap;
		eng->scratch->buf = buf;
		eng->scratch->cap = cap;
	}
	/* the reader of our output must not wait for what we hold while we
	 * wait for input */
	if (!eng->regular && eng->out->direct)
		out_flush_stdout();
	do
		len = read(eng->fd, eng->buf + eng->len, cfg->chunk);
	while (len < 0 && errno == EINTR);
	if (len < 0)
		return -1;
	*got = (size_t)len;
	return 0;
}

/* The @got bytes just read (at eng->len): a NUL makes the rest of the file
 * binary.  False when that ends the file (--binary-files=without-match). */
static bool check_binary(struct engine *eng, size_t got)
{
	const struct tsg_cfg *cfg = eng->cfg;

	if (cfg->binary != TSG_BIN_TEXT && !eng->binary &&
	    memchr(eng->buf + eng->len, '\0', got)) {
		/* grep decides per buffer: lines already printed stay, the
		 * rest of the file is binary, where a NUL ends a line too
		 * (is_eol()) */
		eng->binary = 1;
		eng->binary_from = eng->base + eng->len;
		if (cfg->binary == TSG_BIN_WITHOUT_MATCH) {
			eng->nsel = 0;
			return false;
		}
	}
	return true;
}

/* The end of the complete lines, after @got more bytes came (0: the end of
 * the file, where the last line ends without a newline). */
static size_t window_end(const struct engine *eng, size_t got)
{
	size_t rend = eng->len;

	if (!got)
		return rend;
	while (rend > eng->len - got && !is_eol(eng, eng->buf[rend - 1]))
		rend--;
	if (rend == eng->len - got)
		rend = eng->pos; /* no complete line yet */
	return rend < eng->pos ? eng->pos : rend;
}

/* A line too long to hold: begun, going on, or ending in this window. */
static void feed_long_line(struct engine *eng, size_t rend, size_t got)
{
	size_t le, next;

	if (eng->long_line.active && (rend > eng->pos || !got)) {
		le = line_end(eng, eng->pos, eng->len);
		next = le < eng->len ? le + 1 : eng->len;
		long_line_finish(eng, le, next);
		eng->pos = next;
	} else if (eng->long_line.active) {
		long_line_continue(eng);
	} else if (rend == eng->pos && eng->len - eng->pos > LONG_LINE &&
		   long_line_ok(eng)) {
		long_line_begin(eng);
	}
}

/* A range starts at its first line: the lines before, and the one that
 * crosses its start, are the range before's.  Is the byte before it a
 * line end (NUL only in a file binary by then)? */
static int range_begin(struct engine *eng, int fd)
{
	const struct tsg_range *range = eng->range;
	unsigned char prev;

	eng->base = range->start;
	eng->binary = range->binary;
	if (lseek(fd, (off_t)range->start, SEEK_SET) < 0)
		return -1;
	if (!range->start)
		return 0;
	if (pread(fd, &prev, 1, (off_t)range->start - 1) != 1)
		return -1;
	eng->skipping = !is_eol(eng, prev);
	return 0;
}

/* The unfinished line at the range's start, as it is read: true once it
 * ended and the range's first line begins. */
static bool skip_crossing_line(struct engine *eng)
{
	size_t le = line_end(eng, eng->pos, eng->len);

	eng->pos = le < eng->len ? le + 1 : eng->len;
	eng->lnpos = eng->pos;
	eng->skipping = le == eng->len;
	return !eng->skipping;
}

/* The window [pos, *rend) cut to the range's lines: true if it holds
 * the range's last line (the next range's first starts at *rend). */
static bool range_clip(struct engine *eng, size_t *rend)
{
	uint64_t limit = eng->range->limit;
	/* a long line's unsearched tail is all the buffer keeps of it */
	uint64_t line = eng->long_line.active ? eng->long_line.start :
						eng->base + eng->pos;
	size_t from, le;

	if (line >= limit) {
		*rend = eng->pos;
		return true;
	}
	if (eng->base + *rend < limit)
		return false;
	/* the line that holds byte limit - 1 is the last */
	from = limit - 1 > eng->base + eng->pos ?
		       (size_t)(limit - 1 - eng->base) :
		       eng->pos;
	le = line_end(eng, from, *rend);
	if (le == *rend)
		return false; /* a long line, going on past limit */
	*rend = le + 1;
	return true;
}

/* What the whole file's output needs to know of the range. */
static void report_range(struct engine *eng)
{
	struct tsg_range *range = eng->range;

	range->binary_after = eng->binary && (range->binary ||
					      eng->binary_from < range->limit);
	range->binary_matched = eng->binary_matched || eng->enc_err;
	range->stopped = eng->stop;
	range->nmatch = eng->nmatch;
	range->newlines = 0;
	if ((eng->cfg->line_num || eng->cfg->json) && !eng->skipping)
		range->newlines = lineno_at(eng, eng->pos) - 1;
}

/* Of @got bytes read at eng->len, those in the range, for --stats. */
static uint64_t range_bytes(const struct engine *eng, size_t got)
{
	uint64_t from = eng->base + eng->len, to = from + got;

	if (to > eng->range->limit)
		to = eng->range->limit;
	return to > from ? to - from : 0;
}

long long search_fd(const struct tsg_cfg *cfg, struct tsg_out *out,
		    const struct tsg_input *in, struct tsg_scratch *scratch,
		    struct tsg_file_stats *stats)
{
	const char *name = in->name;
	struct engine eng;
	long long ret = 0;
	size_t got, rend;
	bool last = false;
	/* a range counts its own bytes, unless the file ends in it */
	uint64_t bytes_read = 0, bytes_in_range = 0;

	memset(&eng, 0, sizeof(eng));
	eng.cfg = cfg;
	eng.out = out;
	eng.fd = in->fd;
	eng.label = name;
	eng.name = in->show_name ? name : NULL;
	eng.lnnum = 1;
	eng.scratch = scratch;
	if (!scratch->cache) {
		scratch->cache = calloc(cfg->npats ? cfg->npats : 1,
					sizeof(*scratch->cache));
		if (!scratch->cache) {
			out_error(out, TSG_PROG ": out of memory\n");
			return -1;
		}
	}
	eng.cache = scratch->cache;
	eng.regular = in->st && S_ISREG(in->st->st_mode);
	eng.seekable = eng.regular &&
		       (in->at_start || lseek(in->fd, 0, SEEK_CUR) >= 0);
	eng.range = in->range;
	if (eng.range) {
		/* read, never mapped; the caller saw no hole */
		if (range_begin(&eng, in->fd)) {
			if (!cfg->no_messages)
				out_error(out, TSG_PROG ": %s: %s\n", name,
					  strerror(errno));
			ret = -1;
			goto done;
		}
	} else if (cfg->binary != TSG_BIN_TEXT &&
		   has_hole(in->fd, in->st, in->at_start)) {
		eng.binary = 1;
	} else if (cfg->map_files &&
		   tsg_map_open(&eng.map, in->fd, in->st, in->at_start)) {
		eng.mapped = 1;
		eng.buf = eng.map.base;
	}
	if (!eng.mapped) {
		eng.buf = scratch->buf;
		eng.cap = scratch->cap;
	}
	if ((eng.binary && cfg->binary == TSG_BIN_WITHOUT_MATCH) ||
	    cfg->max_count == 0)
		goto done; /* grep -m 0 reads nothing */

	for (;;) {
		got = 0;
		if (order_quit_before(out))
			break; /* -q matched in an earlier file */
		if (read_more(&eng, &got) ||
		    fold_reserve(&eng, eng.len + got)) {
			if (!cfg->no_messages)
				out_error(out, TSG_PROG ": %s: %s\n", name,
					  strerror(errno));
			ret = -1;
			break;
		}
		bytes_read += got;
		if (eng.range)
			bytes_in_range += range_bytes(&eng, got);
		if (!check_binary(&eng, got))
			break;
		eng.len += got;
		if (eng.skipping && !skip_crossing_line(&eng)) {
			if (!got)
				break;
			continue;
		}
		rend = window_end(&eng, got);
		if (eng.range) {
			last = range_clip(&eng, &rend);
			/* the next range's long line is not begun */
			if (last && rend <= eng.pos && !eng.long_line.active)
				break;
		}
		feed_long_line(&eng, rend, got);
		if (eng.stop)
			break;
		if (rend > eng.pos) {
			process(&eng, eng.pos, rend);
			eng.pos = rend;
		}
		if (last)
			break;
		/* also once the rest is read: copying the mapped tail may
		 * have met a lost page */
		if (eng.map.size && tsg_map_shrunk(&eng.map)) {
			/* what it read of the lost pages is zeros */
			eng.shrunk = 1;
			if (!cfg->no_messages)
				out_error(out,
					  TSG_PROG ": %s: file shrank "
						   "while being read\n",
					  name);
			ret = -1;
			break;
		}
		if (!got || eng.stop)
			break;
	}
done:
	if (ret == 0)
		ret = eng.nsel;
	stats->bytes += eng.range && !eng.stop ? bytes_in_range : bytes_read;
	if (eng.range) {
		report_range(&eng);
	} else {
		if (!cfg->count && !cfg->quiet && cfg->list == TSG_LIST_NONE &&
		    (eng.binary_matched || eng.enc_err) && !eng.shrunk)
			out_binary_matches(out, name);
		if (cfg->count && cfg->list == TSG_LIST_NONE)
			out_count(cfg, out, eng.name,
				  cfg->count_matches ? eng.nmatch :
						       (uint64_t)eng.nsel);
	}
	out->used = eng.used;
	stats->lines += (uint64_t)eng.nsel;
	stats->matches += cfg->count_matches || cfg->stats ? eng.nmatch : 0;
	free(eng.subs);
	/* a buffer grown for a long line is not kept for every file after */
	if (scratch->cap > SCRATCH_KEEP) {
		free(scratch->buf);
		scratch->buf = NULL;
		scratch->cap = 0;
	}
	if (scratch->fold_cap > SCRATCH_KEEP) {
		free(scratch->fold);
		scratch->fold = NULL;
		scratch->fold_cap = 0;
	}
	tsg_map_close(&eng.map);
	return ret;
}

void tsg_scratch_free(struct tsg_scratch *s)
{
	free(s->buf);
	free(s->cache);
	free(s->fold);
	*s = TSG_SCRATCH_INIT;
}
