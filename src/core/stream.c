/*
 * stream.c - push-mode streams (textsearch_stream.h).
 *
 * A stream is a small header and the state of an engine, in one block that
 * textsearch_stream_open() allocates.  An algorithm with ts_stream_ops.next
 * is its own engine; every other algorithm streams through its find(), by
 * the generic engine below.
 *
 * The generic engine searches a window: the history (the last bytes of the
 * stream that may still begin a match, fewer than the longest pattern)
 * followed by the current write, served to find() as two blocks with
 * window offsets (32-bit, so a huge write is taken in chunks).  A match
 * found in the window is decided when no match still to come can sort
 * before it.  Every match to come starts within the last k bytes of the
 * window, k being what ts_stream_ops.keep says of its tail (or all of the
 * tail without it), so a match starting before those is decided: without
 * TS_OVERLAP a later match could only win by starting earlier, or at the
 * same byte and being longer, which would make that byte one of the k;
 * with TS_OVERLAP only by starting earlier.  When the window has no more
 * decided match, the bytes from where the search would resume, or from the
 * last k if that is later, become the next history.
 */
#include "internal.h"
#include "textsearch_stream.h"

#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Data bytes of a write in one window: leaves room below UINT_MAX - 1,
 * which find() reserves, for the history. */
#define WINDOW_DATA_MAX (1u << 30)

enum {
	STREAM_WAITING = 1, /* next() has not yet returned 0 for the input */
	STREAM_ENDED = 2,
};

struct ts_stream {
	struct ts_config *conf;
	const struct ts_stream_ops *engine;
	/* engine->next, one load nearer: next() pays for each load */
	int (*next)(struct ts_config *conf, void *state,
		    const struct ts_stream_input *in, struct ts_match *m);
	uint64_t offset; /* bytes written */
	struct ts_stream_input in;
	/* STREAM_WAITING, STREAM_ENDED: one byte, so that a write tests
	 * both at once, and every store to it forwards to the next load
	 * (a byte stored and a wider load of it stall till the store is
	 * written: on Zen 4 a third of an 8-byte write's cost, stop 44) */
	unsigned char flags;
	size_t size; /* what textsearch_stream_size() said */
	/* a cache line's alignment: an engine's vectors carried from one
	 * write to the next are then stored and loaded whole, never split
	 * across two lines, where the store would not forward to the load */
	alignas(TS_STREAM_ALIGN) unsigned char state[];
};

/* ---- the generic engine ---------------------------------------------------
 */

struct window {
	struct ts_config *conf;
	struct ts_state search;
	uint64_t base;	/* stream offset of window offset 0 */
	const u8 *data; /* the write's bytes in the window */
	unsigned int data_len;
	size_t data_used; /* of the input, before this window's */
	unsigned int hist_len;
	unsigned int cap;    /* longest pattern - 1 */
	unsigned int resume; /* where the search goes on (window offset) */
	bool searching;	     /* search holds a search of this window */
	bool matched;	     /* the last match is in this window */
	unsigned int last_start, last_len, last_id;
	int keep;	     /* cached keep of this window, -1 if not known */
	unsigned int keep_n; /* of how many last bytes it was asked */
	u8 *hist;	     /* cap bytes */
	u8 *scratch;	     /* cap bytes, for a tail that spans both */
};

static unsigned int window_cap(const struct ts_config *conf)
{
	return conf->ts_longest ? conf->ts_longest - 1 : 0;
}

static size_t window_size(struct ts_config *conf)
{
	return sizeof(struct window) + 2 * (size_t)window_cap(conf);
}

static void window_reset(struct ts_config *conf, void *state)
{
	struct window *w = state;

	memset(w, 0, sizeof(*w));
	w->conf = conf;
	w->cap = window_cap(conf);
	w->hist = (u8 *)(w + 1);
	w->scratch = w->hist + w->cap;
	w->keep = -1;
}

static unsigned int window_block(unsigned int consumed, const u8 **dst,
				 struct ts_config *conf, struct ts_state *state)
{
	const struct window *w;

	(void)conf;
	memcpy(&w, state->cb, sizeof(w));
	if (consumed < w->hist_len) {
		*dst = w->hist + consumed;
		return w->hist_len - consumed;
	}
	consumed -= w->hist_len;
	if (consumed >= w->data_len)
		return 0;
	*dst = w->data + consumed;
	return w->data_len - consumed;
}

/* How many of the window's last bytes may begin a match still to come. */
static unsigned int window_keep(struct window *w)
{
	unsigned int total = w->hist_len + w->data_len;
	unsigned int n = total < w->cap ? total : w->cap;
	const struct ts_stream_ops *ops = w->conf->ops->stream;
	const u8 *tail;
	unsigned int k;

	/* without TS_OVERLAP no match begins before the end of the last
	 * one: a pattern prefix that starts inside it cannot delay a match */
	if (!(w->conf->flags & TS_OVERLAP) && w->resume > total - n)
		n = total - w->resume;
	if (w->keep >= 0 && w->keep_n == n)
		return (unsigned int)w->keep;
	w->keep_n = n;
	if (!ops || !ops->keep || !n) {
		w->keep = (int)n;
		return n;
	}
	if (w->data_len >= n) {
		tail = w->data + w->data_len - n;
	} else {
		unsigned int from_hist = n - w->data_len;

		memcpy(w->scratch, w->hist + w->hist_len - from_hist,
		       from_hist);
		memcpy(w->scratch + from_hist, w->data, w->data_len);
		tail = w->scratch;
	}
	k = ops->keep(w->conf, tail, n);
	w->keep = (int)(k < n ? k : n);
	return (unsigned int)w->keep;
}

/* Whether the match found at window offset @start can be yielded now. */
static bool window_decided(struct window *w, unsigned int start, bool end)
{
	unsigned int total = w->hist_len + w->data_len;

	if (end || start + w->cap < total)
		return true;
	/* a TS_UTF8 match may hang on bytes after it, which a match that
	 * starts where the kept bytes do has not seen */
	if ((w->conf->flags & TS_OVERLAP) && !ts_utf8_lookahead(w->conf))
		return start <= total - window_keep(w);
	return start < total - window_keep(w);
}

/* Make the bytes from window offset @from the history of the next one. */
static void window_slide(struct window *w, unsigned int from)
{
	unsigned int total = w->hist_len + w->data_len;
	unsigned int n = total - from;

	if (from < w->hist_len) {
		unsigned int old = w->hist_len - from;

		memmove(w->hist, w->hist + from, old);
		memcpy(w->hist + old, w->data, n - old);
	} else {
		memcpy(w->hist, w->data + (from - w->hist_len), n);
	}
	w->hist_len = n;
	w->base += from;
	w->data = NULL;
	w->data_len = 0;
	if (w->matched && w->last_start >= from) {
		w->last_start -= from;
	} else {
		w->matched = false;
		w->resume = w->resume > from ? w->resume - from : 0;
	}
	if (w->matched)
		w->resume = w->last_start;
	w->searching = false;
	w->keep = -1;
}

static unsigned int window_search(struct window *w)
{
	struct ts_state *st = &w->search;

	if (w->searching)
		return textsearch_next(w->conf, st);
	w->searching = true;
	memcpy(st->cb, &w, sizeof(w));
	if (w->matched)
		return ts_find_after(w->conf, st, window_block, w->last_start,
				     w->last_len, w->last_id);
	/* window_slide() started the window where the search resumes */
	return textsearch_find_with(w->conf, st, window_block, NULL);
}

static int window_next(struct ts_config *conf, void *state,
		       const struct ts_stream_input *in, struct ts_match *m)
{
	struct window *w = state;

	(void)conf;
	for (;;) {
		unsigned int total, pos, from, k;

		if (!w->searching) {
			size_t left = in->len - w->data_used;

			w->data = left ? in->data + w->data_used : NULL;
			w->data_len = left < WINDOW_DATA_MAX ?
					      (unsigned int)left :
					      WINDOW_DATA_MAX;
			w->data_used += w->data_len;
		}
		total = w->hist_len + w->data_len;
		pos = window_search(w);
		if (pos != UINT_MAX &&
		    window_decided(w, pos,
				   in->end && w->data_used == in->len)) {
			w->matched = true;
			w->last_start = pos;
			w->last_len = textsearch_match_len(conf, &w->search);
			w->last_id = textsearch_match_id(&w->search);
			w->resume = w->search.offset;
			m->start = w->base + pos;
			m->end = m->start + w->last_len;
			m->id = w->last_id;
			return 1;
		}
		if (in->end && w->data_used == in->len)
			return 0;
		k = window_keep(w);
		from = total - k;
		if (conf->flags & TS_OVERLAP) {
			if (w->matched && w->last_start < from)
				w->matched = false;
		} else if (w->resume > from) {
			from = w->resume;
		}
		/* a match that ended inside a character stays in the window
		 * (the window's room allows for it), so that the search
		 * resumes from it and knows where characters begin there */
		if (!(conf->flags & TS_OVERLAP) && w->matched &&
		    w->last_start < from && total - w->last_start <= w->cap &&
		    ts_utf8_partial(conf))
			from = w->last_start;
		window_slide(w, from);
		if (w->data_used == in->len) {
			w->data_used = 0;
			return 0;
		}
	}
}

static const struct ts_stream_ops window_engine = {
	.state_size = window_size,
	.reset = window_reset,
	.next = window_next,
};

/* ---- the interface ---------------------------------------------------------
 */

static const struct ts_stream_ops *engine_of(const struct ts_config *conf)
{
	const struct ts_stream_ops *ops = conf->ops->stream;

	/* an engine may decline a config by a state size of 0 */
	if (ops && ops->next && ops->state_size &&
	    ops->state_size((struct ts_config *)conf))
		return ops;
	return &window_engine;
}

size_t textsearch_stream_size(const struct ts_config *conf)
{
	struct ts_config *c = (struct ts_config *)conf;
	size_t size;

	if (IS_ERR_OR_NULL(conf) || !conf->ops)
		return 0;
	size = engine_of(conf)->state_size ? engine_of(conf)->state_size(c) : 0;
	if (!ts_size_add(size, sizeof(struct ts_stream), &size) ||
	    !ts_size_add(size, TS_STREAM_ALIGN - 1, &size))
		return 0;
	return size & ~(size_t)(TS_STREAM_ALIGN - 1);
}

struct ts_stream *textsearch_stream_open(struct ts_config *conf, gfp_t gfp_mask)
{
	struct ts_stream *s;
	size_t size;

	if (IS_ERR_OR_NULL(conf) || !conf->ops) {
		errno = EINVAL;
		return ERR_PTR(ts_fail(-EINVAL, "textsearch_stream_open: "
						"no config"));
	}
	if (gfp_mask != GFP_KERNEL && gfp_mask != GFP_ATOMIC) {
		errno = EINVAL;
		return ERR_PTR(ts_fail(-EINVAL,
				       "textsearch_stream_open: gfp_mask must "
				       "be GFP_KERNEL or GFP_ATOMIC"));
	}
	size = textsearch_stream_size(conf);
	/* a multiple of the alignment, as aligned_alloc() asks */
	s = size ? aligned_alloc(TS_STREAM_ALIGN, size) : NULL;
	if (!s) {
		errno = ENOMEM;
		return ERR_PTR(ts_fail(-ENOMEM, "textsearch_stream_open: "
						"out of memory"));
	}
	s->conf = conf;
	s->engine = engine_of(conf);
	s->next = s->engine->next;
	s->size = size;
	textsearch_stream_reset(s);
	ts_clear_error();
	return s;
}

void textsearch_stream_reset(struct ts_stream *s)
{
	s->offset = 0;
	s->flags = 0;
	memset(&s->in, 0, sizeof(s->in));
	if (s->engine->reset)
		s->engine->reset(s->conf, s->state);
}

int textsearch_stream_write(struct ts_stream *s, const void *data, size_t len)
{
	uint64_t offset;

	if (IS_ERR_OR_NULL(s))
		return -EINVAL;
	if (s->flags)
		return s->flags & STREAM_WAITING ? -EBUSY : -EINVAL;
	if (!len)
		return 0;
	if (!data)
		return -EINVAL;
	offset = s->offset;
	if (len > UINT64_MAX - offset)
		return -EOVERFLOW;
	s->in.data = data;
	s->in.len = len;
	s->in.offset = offset;
	s->offset = offset + len;
	s->flags = STREAM_WAITING;
	return 0;
}

int textsearch_stream_next(struct ts_stream *s, struct ts_match *m)
{
	int ret;

	if (IS_ERR_OR_NULL(s) || !m)
		return -EINVAL;
	if (!(s->flags & STREAM_WAITING))
		return 0;
	ret = s->next(s->conf, s->state, &s->in, m);
	if (ret <= 0) /* s->in is read only while waiting */
		s->flags &= (unsigned char)~STREAM_WAITING;
	return ret;
}

int textsearch_stream_end(struct ts_stream *s)
{
	if (IS_ERR_OR_NULL(s))
		return -EINVAL;
	if (s->flags & STREAM_WAITING)
		return -EBUSY;
	if (s->flags & STREAM_ENDED)
		return 0;
	s->in.data = NULL;
	s->in.len = 0;
	s->in.offset = s->offset;
	s->in.end = 1;
	s->flags = STREAM_ENDED | STREAM_WAITING;
	return 0;
}

uint64_t textsearch_stream_offset(const struct ts_stream *s)
{
	return s->offset;
}

void textsearch_stream_free(struct ts_stream *s)
{
	if (!IS_ERR_OR_NULL(s))
		free(s);
}
