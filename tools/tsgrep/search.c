/*
 * search.c - the line engine: one file, read in chunks, searched window by
 * window.
 *
 * The input is never loaded whole.  A buffer holds the unfinished last line
 * of the previous read (plus the lines -B may still print) and the next
 * chunk; only complete lines are searched, so a window never splits a line.
 * Every window is far below 4 GiB (textsearch offsets are unsigned int),
 * while file offsets and line numbers are kept here as 64-bit values.
 *
 * Per pattern, the next match from the current position is cached for the
 * window, so each pattern's text is scanned once per window however many
 * lines are printed; several patterns give grep -F's leftmost-longest
 * choice.  Matches containing a newline (possible with --hex or --fsm)
 * are ignored: tsgrep matches within lines, like grep.
 */
#define _DEFAULT_SOURCE /* SEEK_HOLE */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "tsgrep.h"

#define NONE SIZE_MAX

struct cache {
	size_t s, e; /* next match at or after `from`, NONE if none */
	size_t from;
	int valid;
};

struct eng {
	const struct tsg_cfg *c;
	struct tsg_out *o;
	const char *name;    /* shown before lines, NULL if not */
	const char *label;   /* for messages and --json */
	int fd;
	unsigned char *buf;
	size_t cap, len, pos, rend;
	uint64_t base;       /* file offset of buf[0] */
	size_t lnpos;        /* lnnum is the number of the line at lnpos */
	uint64_t lnnum;
	int have_out;        /* a line of this file was printed */
	uint64_t last_out_end;
	uint64_t last_sel_end; /* end of the last selected line */
	long long pending;   /* after-context lines still to print */
	long long nsel;
	uint64_t nmatch;
	int stop, used, binary, binary_matched, enc_err;
	int maxed; /* -m reached: only after-context is left to print */
	struct cache *cache;
	/* a line longer than LONG_LINE, searched as it streams by (only its
	 * unsearched tail is kept) and re-read with pread() if printed */
	int ll, ll_matched, seekable;
	uint64_t ll_start, ll_lineno, ll_nmatch;
	size_t ll_scan;
	size_t *subs;        /* --json submatch offsets */
	size_t nsubs, capsubs;
	/* a mapped file: buf points into it and moves on instead of
	 * memmove()ing, reads hand out the next slice of the mapping */
	struct tsg_map map;
	int mapped, shrunk;
	size_t map_off;      /* bytes of the mapping given to the engine */
};

static size_t line_end(const struct eng *E, size_t x, size_t hi);

/* ---- searching ---- */

struct blk {
	const u8 *base;
	unsigned int len, bs;
};

/* --block-size: serve the window in blocks of bs bytes, so every algorithm
 * really runs its across-blocks code.  consumed is the stream offset of the
 * first byte wanted. */
static unsigned int blk_next(unsigned int consumed, const u8 **dst,
			     struct ts_config *conf, struct ts_state *state)
{
	struct blk *b = (struct blk *)(void *)state->cb;
	(void)conf;
	if (consumed >= b->len)
		return 0;
	unsigned int n = b->bs - consumed % b->bs;
	if (n > b->len - consumed)
		n = b->len - consumed;
	*dst = b->base + consumed;
	return n;
}

_Static_assert(sizeof(struct blk) <= TS_CB_SIZE, "provider state fits cb");

static size_t find_once(struct eng *E, struct ts_config *conf, size_t from,
			size_t to, size_t *end)
{
	struct ts_state st;
	unsigned int len = (unsigned int)(to - from);
	unsigned int r;
	memset(&st, 0, sizeof(st));
	if (E->c->block_size) {
		struct blk *b = (struct blk *)(void *)st.cb;
		b->base = E->buf + from;
		b->len = len;
		b->bs = (unsigned int)E->c->block_size;
		r = textsearch_find_with(conf, &st, blk_next, NULL);
	} else {
		r = textsearch_find_continuous(conf, &st, E->buf + from, len);
	}
	if (r == UINT_MAX || r > len)
		return NONE;
	*end = from + st.offset;
	return from + r;
}

/* First match of pattern i at or after @from that stays within a line. */
static size_t find_in_line(struct eng *E, size_t i, size_t from, size_t *end)
{
	struct ts_config *conf = E->c->pats[i].conf;
	if (E->c->pats[i].anchored) {
		/* try each line start from @from on */
		while (from < E->rend) {
			if (from && E->buf[from - 1] != '\n') {
				const unsigned char *q = memchr(
					E->buf + from, '\n', E->rend - from);
				if (!q)
					return NONE;
				from = (size_t)(q - E->buf) + 1;
				continue;
			}
			size_t le = line_end(E, from, E->rend);
			size_t e, s = find_once(E, conf, from, le, &e);
			if (s != NONE) {
				*end = e;
				return s;
			}
			from = le + 1;
		}
		return NONE;
	}
	while (from < E->rend) {
		size_t e, s = find_once(E, conf, from, E->rend, &e);
		if (s == NONE)
			return NONE;
		if (e <= s || !memchr(E->buf + s, '\n', e - s)) {
			*end = e;
			return s;
		}
		from = s + 1;
	}
	return NONE;
}

/* Leftmost match of any pattern from @p, the longest of those starting
 * there (grep -F's choice with several patterns). */
static size_t next_match(struct eng *E, size_t p, size_t *end)
{
	size_t best = NONE, bend = 0;
	for (size_t i = 0; i < E->c->npats; i++) {
		struct cache *k = &E->cache[i];
		/* the cached answer holds for any p in [from, s]; -B
		 * context may ask about earlier lines */
		if (!k->valid || k->from > p || (k->s != NONE && k->s < p)) {
			k->s = find_in_line(E, i, p, &k->e);
			k->from = p;
			k->valid = 1;
		}
		if (k->s == NONE)
			continue;
		if (best == NONE || k->s < best ||
		    (k->s == best && k->e > bend)) {
			best = k->s;
			bend = k->e;
		}
	}
	*end = bend;
	return best;
}

/* ---- line bookkeeping ---- */

/* Newlines are counted 16 bytes at a time: one memchr() per newline costs
 * more than the search itself when lines are short.  Each compare gives -1
 * per newline byte, subtracted into byte lanes; 255 rounds cannot overflow
 * a lane, then psadbw adds the lanes up. */
static uint64_t count_nl(const unsigned char *p, size_t n)
{
	uint64_t k = 0;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
	while (n >= 16) {
		size_t rounds = n / 16 < 255 ? n / 16 : 255;
		__m128i lanes = zero;
		for (size_t i = 0; i < rounds; i++, p += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
			lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(v, nl));
		}
		__m128i sums = _mm_sad_epu8(lanes, zero);
		k += (uint64_t)_mm_extract_epi16(sums, 0) +
		     (uint64_t)_mm_extract_epi16(sums, 4);
		n -= rounds * 16;
	}
#endif
	for (; n; p++, n--)
		k += *p == '\n';
	return k;
}

static uint64_t lineno_at(struct eng *E, size_t x)
{
	if (x >= E->lnpos) {
		E->lnnum += count_nl(E->buf + E->lnpos, x - E->lnpos);
		E->lnpos = x;
		return E->lnnum;
	}
	return E->lnnum - count_nl(E->buf + x, E->lnpos - x);
}

static size_t line_start(const struct eng *E, size_t x, size_t lo)
{
	while (x > lo && E->buf[x - 1] != '\n')
		x--;
	return x;
}

static size_t line_end(const struct eng *E, size_t x, size_t hi)
{
	const unsigned char *q = memchr(E->buf + x, '\n', hi - x);
	return q ? (size_t)(q - E->buf) : hi;
}

/* ---- printing ---- */

static int in_line(size_t ms, size_t me, size_t le)
{
	return ms != NONE && (ms < le || (ms == le && me == ms));
}

/* The next non-empty match [*ms, *me) of the line ending at @le, searching
 * from *p (which then moves past the match); 0 when there is none.  Empty
 * matches (an empty pattern) select a line but print and count nothing. */
static int next_line_match(struct eng *E, size_t *p, size_t le, size_t *ms,
			   size_t *me)
{
	while (*p <= le) {
		*ms = next_match(E, *p, me);
		if (!in_line(*ms, *me, le))
			return 0;
		if (*me != *ms) {
			*p = *me;
			return 1;
		}
		*p = *ms + 1;
	}
	return 0;
}

static void print_match_text(struct eng *E, size_t s, size_t e, int sel)
{
	const struct tsg_cfg *c = E->c;
	const char *sgr = sel ? c->colors.ms : c->colors.mc;
	if (c->color && *sgr) {
		out_sgr_start(c, E->o, sgr);
		out_put(E->o, E->buf + s, e - s);
		out_sgr_end(c, E->o, sgr);
	} else {
		out_put(E->o, E->buf + s, e - s);
	}
}

/* grep's prline: a selected (':') or context ('-') line.  Returns 0 when
 * it was withheld because of an encoding error (GNU grep then reports the
 * file as binary at its end), without counting it as output. */
static int print_line(struct eng *E, size_t ls, size_t le, size_t nx,
		      char sep)
{
	const struct tsg_cfg *c = E->c;
	int selected = sep == ':';
	int matching = selected ^ c->invert;
	int check = c->utf8 && c->binary != TSG_BIN_TEXT;
	uint64_t ln = c->line_num ? lineno_at(E, ls) : 0;

	if (c->only) {
		/* -o prints each match with its own head; lines that do not
		 * match print nothing. */
		if (matching) {
			size_t p = ls, ms, me;

			while (next_line_match(E, &p, le, &ms, &me)) {
				if (check && !utf8_valid(E->buf + ms, me - ms)) {
					E->enc_err = 1;
					return 0;
				}
				out_head(c, E->o, E->name, ln, E->base + ms,
					 sep);
				print_match_text(E, ms, me, selected);
				out_putc(E->o, '\n');
				out_eol(c, E->o);
			}
		}
		E->have_out = 1;
		E->last_out_end = E->base + nx;
		return 1;
	}

	if (check && !utf8_valid(E->buf + ls, le - ls)) {
		E->enc_err = 1;
		return 0;
	}
	out_head(c, E->o, E->name, ln, E->base + ls, sep);
	const char *sgr = selected ? c->colors.ms : c->colors.mc;
	if (c->color && matching && *sgr && c->npats) {
		size_t p = ls;
		while (p <= le) {
			size_t me, ms = next_match(E, p, &me);
			if (!in_line(ms, me, le))
				break;
			if (me == ms) {
				/* empty matches color nothing */
				if (ms == le)
					break;
				out_put(E->o, E->buf + p, ms + 1 - p);
				p = ms + 1;
				continue;
			}
			out_put(E->o, E->buf + p, ms - p);
			print_match_text(E, ms, me, selected);
			p = me;
		}
		out_put(E->o, E->buf + p, le - p);
	} else {
		out_put(E->o, E->buf + ls, le - ls);
	}
	/* grep ends every output line with a newline, even the last line of
	 * a file that has none */
	out_putc(E->o, '\n');
	out_eol(c, E->o);
	E->have_out = 1;
	E->last_out_end = E->base + nx;
	return 1;
}

/* Lowest buffer position that -B may still print from. */
static size_t context_floor(const struct eng *E)
{
	if (E->have_out && E->last_out_end >= E->base)
		return (size_t)(E->last_out_end - E->base);
	return 0;
}

/* Lines of [a, b) that are not selected: after-context, if pending. */
static void context_lines(struct eng *E, size_t a, size_t b)
{
	while (a < b && E->pending > 0 && !E->binary && !E->stop) {
		size_t le = line_end(E, a, b);
		size_t nx = le < b ? le + 1 : b;
		/* grep retries a withheld line for every pending context
		 * line: the rest of the context is lost with it */
		if (!print_line(E, a, le, nx, '-'))
			E->pending = 1;
		E->pending--;
		a = nx;
	}
}

static uint64_t matches_in_line(struct eng *E, size_t ls, size_t le)
{
	uint64_t k = 0;
	size_t p = ls, ms, me;
	if (!E->c->npats)
		return E->c->match_all ? 1 : 0;
	while (next_line_match(E, &p, le, &ms, &me))
		k++;
	if (!k && E->c->match_all)
		k = 1;
	return k;
}

static void json_line(struct eng *E, size_t ls, size_t le, size_t nx)
{
	const struct tsg_cfg *c = E->c;
	E->nsubs = 0;
	size_t p = ls, ms, me;
	while (!c->invert && c->npats &&
	       next_line_match(E, &p, le, &ms, &me)) {
		if (E->nsubs + 2 > E->capsubs) {
			size_t cap = E->capsubs ? E->capsubs * 2 : 16;
			size_t *v = realloc(E->subs, cap * sizeof(*v));
			if (!v)
				break;
			E->subs = v;
			E->capsubs = cap;
		}
		E->subs[E->nsubs++] = ms - ls;
		E->subs[E->nsubs++] = me - ls;
	}
	/* "lines" keeps the newline, as ripgrep's does */
	json_match(E->o, E->label, lineno_at(E, ls), E->base + ls,
		   E->buf + ls, nx - ls, E->subs, E->nsubs / 2);
	out_eol(c, E->o);
}

/* -v: whether the line at @nx is selected too (grep prints such runs of
 * lines with one call). */
static int run_goes_on(struct eng *E, size_t nx)
{
	const struct tsg_cfg *c = E->c;
	if (nx >= E->rend || c->match_all)
		return 0;
	if (c->max_count >= 0 && E->nsel >= c->max_count)
		return 0;
	size_t le = line_end(E, nx, E->rend);
	size_t me, ms = next_match(E, nx, &me);
	return !in_line(ms, me, le);
}

/* See the quirk in select_line(). */
static void rewind_context(struct eng *E, size_t ls)
{
	size_t q;
	if (E->have_out) {
		if (E->last_out_end < E->base)
			return;
		q = (size_t)(E->last_out_end - E->base);
	} else {
		if (E->base)
			return;
		q = 0;
		E->have_out = 1; /* grep's lastout = bufbeg */
		E->last_out_end = 0;
	}
	for (long long k = E->c->after; k > 0 && q < ls; k--) {
		size_t qe = line_end(E, q, ls);
		if (!print_line(E, q, qe, qe + 1, '-'))
			break;
		q = qe + 1;
	}
}

/* A selected line: grep's prtext for one line, with -B context before it
 * and the group separator. */
static void select_line(struct eng *E, size_t ls, size_t le, size_t nx)
{
	const struct tsg_cfg *c = E->c;
	E->nsel++;
	if (c->quiet || c->list != TSG_LIST_NONE) {
		E->stop = 1;
		return;
	}
	if (c->count) {
		if (c->count_matches || c->stats)
			E->nmatch += matches_in_line(E, ls, le);
		goto max;
	}
	if (c->stats)
		E->nmatch += matches_in_line(E, ls, le);
	if (E->binary) {
		/* grep stops at the first match in a binary file and reports
		 * it at the end instead of printing it */
		E->used = 1;
		E->binary_matched = 1;
		E->stop = 1;
		return;
	}
	if (c->json) {
		json_line(E, ls, le, nx);
		goto max;
	}
	size_t g = ls, lo = context_floor(E);
	for (long long k = 0; k < c->before && g > lo; k++)
		g = line_start(E, g - 1, lo);
	/* with -v, grep prints a run of selected lines as one group: no
	 * separator inside it, even after a withheld line */
	int in_run = c->invert && E->used && E->base + ls == E->last_sel_end &&
		     nx > le; /* grep reads a last line without newline
				 apart: it starts a new group */
	if ((c->before >= 0 || c->after >= 0) && !in_run) {
		if (!E->used)
			order_lead_sep(E->o, c);
		else if (!E->have_out || E->base + g != E->last_out_end)
			out_group_sep(c, E->o);
	}
	while (g < ls) {
		size_t gle = line_end(E, g, ls);
		print_line(E, g, gle, gle + 1, '-');
		g = gle + 1;
	}
	/* a withheld line (encoding error) takes its after-context with
	 * it, as in grep */
	E->last_sel_end = E->base + nx;
	if (print_line(E, ls, le, nx, ':')) {
		E->pending = c->after > 0 ? c->after : 0;
	} else {
		/* GNU grep 3.8 quirk, reproduced for byte-identical output:
		 * the after-context of a withheld line restarts where the
		 * last printed line ended (the start of the file if none),
		 * up to the withheld line, unless a -v run goes on */
		if (c->after > 0 && !(c->invert && run_goes_on(E, nx)))
			rewind_context(E, ls);
		E->pending = 0;
	}
	E->used = 1;
	if (c->max_count >= 0 && E->nsel >= c->max_count) {
		/* as grep: the after-context of the last line still comes,
		 * every line of it as context */
		if (E->pending > 0)
			E->maxed = 1;
		else
			E->stop = 1;
	}
	return;
max:
	if (c->max_count >= 0 && E->nsel >= c->max_count)
		E->stop = 1;
}

/* Search the complete lines in [p, rend). */
static void process(struct eng *E, size_t p, size_t rend)
{
	const struct tsg_cfg *c = E->c;
	E->rend = rend;
	for (size_t i = 0; i < c->npats; i++)
		E->cache[i].valid = 0;
	while (p < rend && !E->stop && !E->maxed) {
		size_t me = 0, ms;
		if (c->match_all)
			ms = p;
		else
			ms = next_match(E, p, &me);
		if (ms != NONE && ms >= rend && (ms > rend || me != ms ||
						 E->buf[rend - 1] == '\n'))
			ms = NONE;
		size_t mls = ms == NONE ? rend : line_start(E, ms, p);
		/* lines [p, mls) do not match */
		if (c->invert) {
			while (p < mls && !E->stop && !E->maxed) {
				size_t le = line_end(E, p, mls);
				size_t nx = le < mls ? le + 1 : mls;
				select_line(E, p, le, nx);
				p = nx;
			}
		} else {
			context_lines(E, p, mls);
		}
		if (ms == NONE || E->stop || E->maxed)
			break;
		size_t le = line_end(E, ms, rend);
		size_t nx = le < rend ? le + 1 : rend;
		if (c->invert)
			context_lines(E, mls, nx);
		else
			select_line(E, mls, le, nx);
		p = nx;
	}
	if (E->maxed && !E->stop) {
		context_lines(E, p, rend);
		if (E->pending <= 0)
			E->stop = 1;
	}
}

#define LONG_LINE (1024 * 1024)

/* Whether a long line must be held whole to print it. */
static int long_line_ok(const struct eng *E)
{
	const struct tsg_cfg *c = E->c;
	if (!c->max_pat_len || (!c->npats && !c->match_all))
		return 0;
	for (size_t i = 0; i < c->npats; i++)
		if (c->pats[i].anchored)
			return 0;
	int printing = !c->quiet && c->list == TSG_LIST_NONE && !c->count;
	/* -B may print a long line before a later match: keep it whole */
	if (printing && c->before > 0)
		return 0;
	/* a re-read long line is printed without match colors: keep it */
	if (printing && c->color && !c->only)
		return 0;
	if (printing && (c->json || ((!c->only || c->invert ||
				       c->before > 0 || c->after > 0) &&
				      !E->seekable)))
		return 0;
	return 1;
}

/* Search the part of the long line in [ll_scan, limit_end): matches must
 * start before @limit so that every candidate is wholly in the buffer. */
static void long_scan(struct eng *E, size_t limit, size_t data_end)
{
	const struct tsg_cfg *c = E->c;
	int printing = !c->quiet && c->list == TSG_LIST_NONE && !c->count;
	int all = (printing && c->only && !c->invert) || c->count_matches ||
		  c->stats;
	if (c->match_all)
		E->ll_matched = 1;
	if (E->ll_matched && !all) {
		E->ll_scan = limit > E->ll_scan ? limit : E->ll_scan;
		return;
	}
	E->rend = data_end;
	for (size_t i = 0; i < c->npats; i++)
		E->cache[i].valid = 0;
	size_t p = E->ll_scan;
	while (p < limit && !E->stop) {
		size_t me, ms = next_match(E, p, &me);
		if (ms == NONE || ms >= limit)
			break;
		if (me == ms) {
			p = ms + 1;
			continue;
		}
		E->ll_matched = 1;
		E->ll_nmatch++;
		if (printing && c->only && !c->invert && !E->binary) {
			out_head(c, E->o, E->name, E->ll_lineno,
				 E->base + ms, ':');
			print_match_text(E, ms, me, 1);
			out_putc(E->o, '\n');
			out_eol(c, E->o);
		}
		if (!all) {
			p = limit;
			break;
		}
		p = me;
	}
	E->ll_scan = p > limit ? p : limit;
}

/* Print the long line [start, end) of the file again, read with pread. */
static void print_long(struct eng *E, uint64_t start, uint64_t end, char sep)
{
	const struct tsg_cfg *c = E->c;
	unsigned char tmp[65536];
	out_head(c, E->o, E->name, E->ll_lineno, start, sep);
	while (start < end) {
		size_t want = end - start > sizeof(tmp) ? sizeof(tmp)
							: (size_t)(end - start);
		ssize_t n = pread(E->fd, tmp, want, (off_t)start);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		out_put(E->o, tmp, (size_t)n);
		start += (uint64_t)n;
	}
	out_putc(E->o, '\n');
	out_eol(c, E->o);
}

/* The long line ends at buffer position @le (its newline or EOF). */
static void long_finish(struct eng *E, size_t le, size_t nx)
{
	const struct tsg_cfg *c = E->c;
	long_scan(E, le, le);
	E->ll = 0;
	/* after -m, only after-context is left: every line is context */
	int selected = (E->ll_matched ^ c->invert) && !E->maxed;
	uint64_t end = E->base + le;
	if (selected) {
		E->nsel++;
		if (c->quiet || c->list != TSG_LIST_NONE) {
			E->stop = 1;
			return;
		}
		if (c->count) {
			if (c->count_matches || c->stats)
				E->nmatch += E->ll_nmatch;
		} else if (E->binary) {
			E->used = 1;
			E->binary_matched = 1;
			E->stop = 1;
			return;
		} else {
			if (c->stats)
				E->nmatch += E->ll_nmatch;
			if (c->before >= 0 || c->after >= 0) {
				if (!E->used)
					order_lead_sep(E->o, c);
				else if (!E->have_out ||
					 E->ll_start != E->last_out_end)
					out_group_sep(c, E->o);
			}
			if (!c->only)
				print_long(E, E->ll_start, end, ':');
			E->have_out = 1;
			E->last_out_end = E->base + nx;
			E->pending = c->after > 0 ? c->after : 0;
			E->used = 1;
		}
		/* as in select_line(): the after-context still comes */
		if (c->max_count >= 0 && E->nsel >= c->max_count) {
			if (E->pending > 0)
				E->maxed = 1;
			else
				E->stop = 1;
		}
	} else if (E->pending > 0 && !E->binary) {
		if (!c->only)
			print_long(E, E->ll_start, end, '-');
		E->have_out = 1;
		E->last_out_end = E->base + nx;
		E->pending--;
	}
	if (E->maxed && E->pending <= 0)
		E->stop = 1;
}

/* GNU grep treats a file with a hole as binary before reading it. */
static int has_hole(int fd)
{
#ifdef SEEK_HOLE
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	off_t cur = lseek(fd, 0, SEEK_CUR);
	if (cur < 0)
		return 0;
	off_t h = lseek(fd, cur, SEEK_HOLE);
	int hole = h >= 0 && h < st.st_size;
	(void)!lseek(fd, cur, SEEK_SET);
	return hole;
#else
	(void)fd;
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
static int leave_mapping(struct eng *E)
{
	size_t cap = E->len + E->c->chunk;
	unsigned char *b;

	if (cap >= UINT_MAX - 1) {
		errno = EFBIG;
		return -1;
	}
	b = malloc(cap);
	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(b, E->buf, E->len);
	if (lseek(E->fd, (off_t)E->map_off, SEEK_SET) < 0) {
		free(b);
		return -1;
	}
	tsg_map_close(&E->map);
	E->buf = b;
	E->cap = cap;
	E->mapped = 0;
	return 0;
}

static int read_more(struct eng *E, size_t *got)
{
	const struct tsg_cfg *c = E->c;
	/* Drop what no longer matters: everything before the unfinished
	 * line, except the lines -B may still print. */
	size_t keep = E->pos;
	if (c->before > 0 && !E->binary && !E->ll) {
		size_t lo = context_floor(E);
		for (long long k = 0; k < c->before && keep > lo; k++)
			keep = line_start(E, keep - 1, lo);
	}
	/* line numbers are counted only for output that shows them: a count
	 * of every newline would cost more than the search itself */
	if (E->lnpos < keep) {
		if (c->line_num || c->json)
			lineno_at(E, keep);
		else
			E->lnpos = keep;
	}
	if (keep) {
		if (E->mapped)
			E->buf += keep;
		else
			memmove(E->buf, E->buf + keep, E->len - keep);
		E->len -= keep;
		E->pos -= keep;
		E->lnpos -= keep;
		E->base += keep;
		if (E->ll)
			E->ll_scan -= keep;
	}
	if (E->mapped && E->map.size - E->map_off < c->chunk &&
	    leave_mapping(E))
		return -1;
	if (E->mapped) {
		/* slices of the size reads have: a NUL makes the rest of
		 * the file binary from the read that holds it, as in grep */
		size_t got_map = E->map.size - E->map_off;
		if (got_map > c->chunk)
			got_map = c->chunk;
		/* the same limit on an unfinished line as for reads */
		if (got_map && E->len + got_map >= UINT_MAX - 1) {
			errno = EFBIG;
			return -1;
		}
		tsg_map_drop_before(&E->map, E->buf);
		E->map_off += got_map;
		*got = got_map;
		return 0;
	}
	if (E->cap - E->len < c->chunk) {
		size_t cap = E->len + c->chunk;
		/* one line beyond what a window may hold (textsearch offsets
		 * are 32-bit) cannot be searched */
		if (cap >= UINT_MAX - 1) {
			errno = EFBIG;
			return -1;
		}
		if (cap < E->cap * 2 && E->cap * 2 < UINT_MAX - 1)
			cap = E->cap * 2;
		unsigned char *b = realloc(E->buf, cap);
		if (!b) {
			errno = ENOMEM;
			return -1;
		}
		E->buf = b;
		E->cap = cap;
	}
	for (;;) {
		ssize_t n = read(E->fd, E->buf + E->len, c->chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		*got = (size_t)n;
		return 0;
	}
}

long long search_fd(const struct tsg_cfg *c, struct tsg_out *o, int fd,
		    const char *name, int show_name,
		    struct tsg_file_stats *st)
{
	struct eng E;
	memset(&E, 0, sizeof(E));
	E.c = c;
	E.o = o;
	E.fd = fd;
	E.label = name;
	E.name = show_name ? name : NULL;
	E.lnnum = 1;
	E.cache = calloc(c->npats ? c->npats : 1, sizeof(*E.cache));
	long long ret = 0;
	if (!E.cache) {
		out_error(o, TSG_PROG ": out of memory\n");
		return -1;
	}
	{
		struct stat sst;
		E.seekable = !fstat(fd, &sst) && S_ISREG(sst.st_mode) &&
			     lseek(fd, 0, SEEK_CUR) >= 0;
	}
	if (c->binary != TSG_BIN_TEXT && has_hole(fd))
		E.binary = 1;
	else if (tsg_map_open(&E.map, fd)) {
		E.mapped = 1;
		E.buf = E.map.base;
	}
	if ((E.binary && c->binary == TSG_BIN_WITHOUT_MATCH) ||
	    c->max_count == 0)
		goto done; /* grep -m 0 reads nothing */

	for (;;) {
		size_t got = 0;
		if (order_quit_before(o))
			break; /* -q matched in an earlier file */
		if (read_more(&E, &got)) {
			if (!c->no_messages)
				out_error(o, TSG_PROG ": %s: %s\n", name,
					  strerror(errno));
			ret = -1;
			break;
		}
		unsigned char *fresh = E.buf + E.len;
		st->bytes += got;
		if (c->binary != TSG_BIN_TEXT && !E.binary &&
		    memchr(fresh, '\0', got)) {
			/* grep decides per buffer: lines already printed
			 * stay, the rest of the file is binary */
			E.binary = 1;
			if (c->binary == TSG_BIN_WITHOUT_MATCH) {
				E.nsel = 0;
				break;
			}
		}
		if (E.binary) {
			/* like grep, a NUL ends a line in a binary file */
			for (unsigned char *q = fresh;
			     (q = memchr(q, '\0', got - (size_t)(q - fresh)));
			     q++)
				*q = '\n';
		}
		E.len += got;
		size_t rend;
		if (!got) {
			rend = E.len;
		} else {
			rend = E.len;
			while (rend > E.len - got && E.buf[rend - 1] != '\n')
				rend--;
			if (rend == E.len - got)
				rend = E.pos; /* no complete line yet */
			if (rend < E.pos)
				rend = E.pos;
		}
		if (E.ll && (rend > E.pos || !got)) {
			/* the long line ends in this window */
			size_t le = line_end(&E, E.pos, E.len);
			size_t nx = le < E.len ? le + 1 : E.len;
			long_finish(&E, le, nx);
			E.pos = nx;
			if (E.stop)
				break;
		} else if (E.ll) {
			size_t L = c->max_pat_len;
			size_t limit = E.len - E.ll_scan >= L ? E.len - (L - 1)
							      : E.ll_scan;
			long_scan(&E, limit, E.len);
			E.pos = E.ll_scan;
		} else if (rend == E.pos && E.len - E.pos > LONG_LINE &&
			   long_line_ok(&E)) {
			E.ll = 1;
			E.ll_matched = 0;
			E.ll_nmatch = 0;
			E.ll_start = E.base + E.pos;
			E.ll_lineno = c->line_num ? lineno_at(&E, E.pos) : 0;
			E.ll_scan = E.pos;
			size_t L = c->max_pat_len;
			size_t limit = E.len - E.ll_scan >= L ? E.len - (L - 1)
							      : E.ll_scan;
			long_scan(&E, limit, E.len);
			E.pos = E.ll_scan;
		}
		if (rend > E.pos) {
			process(&E, E.pos, rend);
			E.pos = rend;
		}
		/* also once the rest is read: copying the mapped tail may
		 * have met a lost page */
		if (E.map.size && tsg_map_shrunk(&E.map)) {
			E.shrunk = 1; /* what it read of the lost pages is zeros */
			if (!c->no_messages)
				out_error(o, TSG_PROG ": %s: file shrank while "
					  "being read\n", name);
			ret = -1;
			break;
		}
		if (!got || E.stop)
			break;
	}
done:
	if (ret == 0)
		ret = E.nsel;
	if (!c->count && !c->quiet && c->list == TSG_LIST_NONE &&
	    (E.binary_matched || E.enc_err) && !E.shrunk)
		out_error(o, TSG_PROG ": %s: binary file matches\n", name);
	if (c->count) {
		if (c->list == TSG_LIST_NONE) {
			if (E.name) {
				out_filename(c, o, E.name);
				if (c->null_after_name)
					out_putc(o, '\0');
				else
					out_sep(c, o, ':');
			}
			char b[24];
			int n = snprintf(b, sizeof(b), "%llu\n",
					 c->count_matches ?
					 (unsigned long long)E.nmatch :
					 (unsigned long long)E.nsel);
			out_put(o, b, (size_t)n);
			out_eol(c, o);
		}
	}
	o->used = E.used;
	st->lines += (uint64_t)E.nsel;
	st->matches += c->count_matches || c->stats ? E.nmatch : 0;
	free(E.cache);
	free(E.subs);
	if (!E.mapped)
		free(E.buf);
	tsg_map_close(&E.map);
	return ret;
}
